"""manage.py seed_demo: the demo user's data, created once and left alone afterwards."""

from __future__ import annotations

from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command

from datasources_app import selectors
from datasources_app.demo import DEMO_USER_ID
from datasources_app.models import Exercise, Location, UserProfile, UserSettings

pytestmark = pytest.mark.django_db


def _seed(*args: str) -> str:
    out = StringIO()
    call_command("seed_demo", *args, stdout=out)
    return out.getvalue()


def _snapshot() -> dict[str, Any]:
    return {
        "profile": list(UserProfile.objects.filter(user_id=DEMO_USER_ID).values()),
        "settings": list(UserSettings.objects.filter(user_id=DEMO_USER_ID).values()),
        "locations": list(Location.objects.filter(user_id=DEMO_USER_ID).order_by("name").values()),
        "location_equipment": sorted(
            Location.equipment.through.objects.filter(location__user_id=DEMO_USER_ID).values_list(
                "location__name", "equipment__slug"
            )
        ),
        "exercises": list(Exercise.objects.order_by("slug").values()),
    }


def test_seed_demo_creates_the_demo_user() -> None:
    """Profile, settings and two locations, Home current with its home equipment."""
    output = _seed()
    assert "profile: created" in output
    profile = selectors.get_profile(user_id=DEMO_USER_ID)
    assert profile is not None and profile.display_name == "Alex" and profile.weight_kg == 82.0
    settings = selectors.get_settings(user_id=DEMO_USER_ID)
    assert (settings.pk is not None, settings.weight_unit, settings.timezone) == (True, "kg", "Europe/London")
    locations = selectors.list_locations(user_id=DEMO_USER_ID)
    assert [(location.name, location.is_current) for location in locations] == [
        ("Home", True),
        ("Gym", False),
    ]
    assert selectors.available_equipment_slugs(user_id=DEMO_USER_ID) == {
        "bodyweight",
        "dumbbells",
        "bench",
        "resistance_bands",
    }
    gym = {item.slug for item in locations[1].equipment.all()}
    assert {"barbell", "squat_rack", "cable_machine", "leg_press_machine", "pull_up_bar", "treadmill"} <= gym


def test_seed_demo_twice_changes_nothing() -> None:
    """A second run reports everything unchanged and leaves every row as it was."""
    _seed()
    before = _snapshot()
    output = _seed()
    assert _snapshot() == before
    assert "created" not in output and "exists, unchanged" in output


def test_seed_demo_keeps_user_changes_unless_reset() -> None:
    """Changes made since seeding survive a plain run; --reset restores the demo data and Home."""
    _seed()
    UserProfile.objects.filter(user_id=DEMO_USER_ID).update(weight_kg=79.5)
    gym = Location.objects.get(user_id=DEMO_USER_ID, name="Gym")
    Location.objects.filter(user_id=DEMO_USER_ID).update(is_current=False)
    Location.objects.filter(pk=gym.pk).update(is_current=True)

    _seed()
    assert UserProfile.objects.get(user_id=DEMO_USER_ID).weight_kg == 79.5
    assert selectors.current_location(user_id=DEMO_USER_ID) == gym

    output = _seed("--reset")
    assert "profile: reset" in output
    assert UserProfile.objects.get(user_id=DEMO_USER_ID).weight_kg == 82.0
    current = selectors.current_location(user_id=DEMO_USER_ID)
    assert current is not None and current.name == "Home"
