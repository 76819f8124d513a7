"""manage.py seed_demo: the demo user's data (and optional history), created once and left alone afterwards."""

from __future__ import annotations

import datetime as dt
from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from datasources_app import selectors, services
from datasources_app.catalog import canonical_muscle
from datasources_app.demo import DEMO_USER_ID
from datasources_app.demo_history import demo_workouts
from datasources_app.models import (
    Exercise,
    Location,
    Preference,
    UserProfile,
    UserSettings,
    WorkoutLog,
    WorkoutLogEntry,
)

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


def test_seed_demo_adds_goals_and_the_no_burpees_preference() -> None:
    """Category goals 40/30/20/10, muscle goals summing to 1 and one permanent "no burpees" preference."""
    _seed()
    categories = {goal.category: goal.weight for goal in selectors.list_category_goals(user_id=DEMO_USER_ID)}
    assert categories == pytest.approx(
        {"strength": 0.4, "hypertrophy": 0.3, "endurance": 0.2, "mobility": 0.1}
    )
    muscles = selectors.list_muscle_goals(user_id=DEMO_USER_ID)
    assert len(muscles) >= 3 and sum(goal.weight for goal in muscles) == pytest.approx(1.0)
    [preference] = selectors.active_preferences(user_id=DEMO_USER_ID)
    assert (preference.preference_type, preference.exclude_exercises) == ("permanent", ["burpee"])
    assert not WorkoutLog.objects.filter(user_id=DEMO_USER_ID).exists()


def test_seed_demo_keeps_changed_goals_unless_reset() -> None:
    """Goals the user changed survive a plain run; --reset restores them and the preference."""
    _seed()
    services.set_category_goals(user_id=DEMO_USER_ID, goals={"cardio": 1})
    Preference.objects.filter(user_id=DEMO_USER_ID).delete()
    assert "category goals: exist, unchanged" in _seed()
    assert [goal.category for goal in selectors.list_category_goals(user_id=DEMO_USER_ID)] == ["cardio"]
    output = _seed("--reset")
    assert "category goals: reset" in output
    assert len(selectors.list_category_goals(user_id=DEMO_USER_ID)) == 4
    assert Preference.objects.filter(user_id=DEMO_USER_ID).count() == 1


def test_seed_demo_history_is_reproducible_and_added_once() -> None:
    """--history-days logs workouts once per training day; a rerun adds none; --reset regenerates the same."""
    output = _seed("--history-days", "28")
    logs = WorkoutLog.objects.filter(user_id=DEMO_USER_ID)
    count = logs.count()
    assert f"history: {count} workouts added over 28 days" in output
    today = selectors.local_today(user_id=DEMO_USER_ID)
    tz = selectors.user_timezone(user_id=DEMO_USER_ID)
    assert count == len(demo_workouts(days=28, today=today, tz=tz)) > 0
    first = _history_snapshot()
    assert "history: 0 workouts added" in _seed("--history-days", "28")
    assert logs.count() == count
    _seed("--reset", "--history-days", "28")
    assert _history_snapshot() == first


def test_seed_demo_rejects_negative_history_days() -> None:
    """A negative day count is a usage error."""
    with pytest.raises(CommandError, match="--history-days"):
        _seed("--history-days", "-1")


def _history_snapshot() -> list[tuple[Any, ...]]:
    return list(
        WorkoutLogEntry.objects.filter(log__user_id=DEMO_USER_ID)
        .order_by("completed_at", "order")
        .values_list("log__title", "completed_at", "exercise_name", "actual_reps", "actual_load_each", "rpe")
    )


def test_demo_workouts_follow_the_weekly_template() -> None:
    """Generated sessions fall on Mon/Wed/Fri/Sat, carry valid shares, and are identical for the same dates."""
    today = dt.date(2024, 6, 1)
    workouts = demo_workouts(days=90, today=today, tz=dt.UTC)
    assert workouts == demo_workouts(days=90, today=today, tz=dt.UTC)
    assert {workout.day.weekday() for workout in workouts} == {0, 2, 4, 5}
    assert 40 <= len(workouts) <= 52  # 52 planned sessions in these 13 weeks, about 15% missed
    assert all(today - dt.timedelta(days=90) <= workout.day < today for workout in workouts)
    for workout in workouts:
        for entry in workout.entries:
            assert sum(item["share"] for item in entry["muscles"]) == pytest.approx(1.0)
            assert sum(item["share"] for item in entry["goals"]) == pytest.approx(1.0)
            assert all(canonical_muscle(item["muscle"]) == item["muscle"] for item in entry["muscles"])
