"""The user data XML's plain-SQL reads give what the ORM selectors give, and are fresh on every build."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from django.utils import timezone

from datasources_app import formatters, selectors, sources
from datasources_app.catalog import EQUIPMENT_SLUGS
from datasources_app.formatters import Units
from datasources_app.models import Location, UserProfile, UserSettings
from tests.datasources_app.factories import (
    EquipmentFactory,
    LocationFactory,
    UserProfileFactory,
    UserSettingsFactory,
)

pytestmark = pytest.mark.django_db


def _orm_xml(user_id: uuid.UUID) -> str:
    """The block as the ORM selectors (with their equipment prefetch) and the formatter make it."""
    settings = selectors.get_settings(user_id=user_id)
    tz = selectors.timezone_named(settings.timezone)
    return formatters.user_data_xml(
        profile=selectors.get_profile(user_id=user_id),
        settings=settings,
        locations=selectors.list_locations(user_id=user_id),
        units=Units.from_settings(settings, tz),
        today=timezone.now().astimezone(tz).date(),
    )


def _full_user() -> uuid.UUID:
    """Profile, settings in pounds, a current location and three others, with and without equipment."""
    user_id = uuid.uuid4()
    UserSettingsFactory.create(user_id=user_id, weight_unit="lb", distance_unit="mi", timezone="Europe/Paris")
    UserProfileFactory.create(
        user_id=user_id,
        display_name="Zoë",
        sex="male",
        birth_year=1988,
        height_cm=181.5,
        weight_kg=82.25,
        body_fat_pct=17.5,
        experience_level="advanced",
        injuries="Left  knee,\n  old ACL",
        limitations=["knee", "lower back"],
    )
    slugs = sorted(EQUIPMENT_SLUGS)
    odd = EquipmentFactory.create(slug="test_same_name_a", name="Band", category="accessories")
    twin = EquipmentFactory.create(slug="test_same_name_b", name="Band", category="accessories")
    LocationFactory.create(
        user_id=user_id,
        name="Home",
        is_current=True,
        equipment=[*slugs[:6], odd],
        available_weights_kg={slugs[0]: [20, 2.5, 10], slugs[1]: []},
    )
    LocationFactory.create(user_id=user_id, name="gym", equipment=[*slugs, twin])
    LocationFactory.create(user_id=user_id, name="Park", equipment=[])
    LocationFactory.create(user_id=user_id, name="Äpfel Hotel", equipment=slugs[3:5])
    return user_id


def _equipment(location: Location) -> list[tuple[str, str, str]]:
    return [(item.slug, item.name, item.category) for item in formatters.location_equipment(location)]


def _fields(instance: UserProfile | UserSettings | None, names: list[str]) -> dict[str, Any] | None:
    return None if instance is None else {name: getattr(instance, name) for name in names}


@pytest.mark.parametrize("kind", ["full", "none"])
def test_the_user_data_xml_equals_the_orm_formatters(kind: str) -> None:
    """For a user with everything and for a user with nothing, the block is byte for byte the ORM-made one."""
    user_id = _full_user() if kind == "full" else uuid.uuid4()
    xml = sources.build_user_data_xml(user_id=user_id)
    assert xml == _orm_xml(user_id)
    if kind == "full":
        assert "Weight: lb" in xml and "Home" in xml and "<other_locations>" in xml


def test_user_data_sources_equal_the_orm_selectors() -> None:
    """Same profile and settings values, same locations in the same order, same equipment in the same order."""
    user_id = _full_user()
    read = selectors.user_data_sources(user_id=user_id)

    profile_fields = [field.attname for field in UserProfile._meta.concrete_fields]
    settings_fields = [field.attname for field in UserSettings._meta.concrete_fields]
    assert _fields(read.profile, profile_fields) == _fields(
        selectors.get_profile(user_id=user_id), profile_fields
    )
    assert _fields(read.settings, settings_fields) == _fields(
        selectors.get_settings(user_id=user_id), settings_fields
    )
    orm_locations = selectors.list_locations(user_id=user_id)
    assert [(loc.pk, loc.name, loc.is_current, loc.available_weights_kg) for loc in read.locations] == [
        (loc.pk, loc.name, loc.is_current, loc.available_weights_kg) for loc in orm_locations
    ]
    assert [_equipment(loc) for loc in read.locations] == [_equipment(loc) for loc in orm_locations]


def test_user_data_sources_of_a_user_without_data_are_the_defaults() -> None:
    user_id = uuid.uuid4()
    read = selectors.user_data_sources(user_id=user_id)
    assert read.profile is None and read.locations == []
    assert read.settings.pk is None
    assert (read.settings.user_id, read.settings.weight_unit, read.settings.distance_unit) == (
        user_id,
        "kg",
        "km",
    )
    assert read.settings.timezone == "UTC"


def test_the_user_data_xml_is_read_fresh_on_every_build() -> None:
    """Seed 000 §4.4/§12.2: a change to the profile, settings or equipment shows in the very next build."""
    user_id = _full_user()
    before = sources.build_user_data_xml(user_id=user_id)

    UserProfile.objects.filter(user_id=user_id).update(weight_kg=90.0)
    UserSettings.objects.filter(user_id=user_id).update(weight_unit="kg")
    home = Location.objects.get(user_id=user_id, name="Home")
    home.equipment.clear()

    after = sources.build_user_data_xml(user_id=user_id)
    assert after != before
    assert "Weight: 90kg" in after
    assert "<current_location>\nLocation: Home\nEquipment: none (bodyweight only)" in after
    assert after == _orm_xml(user_id)
