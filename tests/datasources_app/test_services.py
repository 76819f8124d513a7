"""Writes to the user's locations."""

from __future__ import annotations

import uuid

import pytest

from datasources_app import services
from datasources_app.models import Location
from tests.datasources_app.factories import LocationFactory

pytestmark = pytest.mark.django_db


def test_set_current_location_moves_the_flag() -> None:
    """Switching makes the target the only current location of the user, leaving other users alone."""
    user_id = uuid.uuid4()
    home = LocationFactory.create(user_id=user_id, name="Home", is_current=True)
    gym = LocationFactory.create(user_id=user_id, name="Gym")
    other = LocationFactory.create(is_current=True)

    services.set_current_location(user_id=user_id, location_id=gym.id)

    assert list(Location.objects.filter(user_id=user_id, is_current=True)) == [gym]
    home.refresh_from_db()
    other.refresh_from_db()
    assert not home.is_current and other.is_current


def test_set_current_location_refuses_another_users_location() -> None:
    """A user cannot make someone else's location current."""
    foreign = LocationFactory.create()
    with pytest.raises(Location.DoesNotExist):
        services.set_current_location(user_id=uuid.uuid4(), location_id=foreign.id)


def test_create_location_with_equipment_and_current_flag() -> None:
    """create_location attaches equipment by slug and can make the location current."""
    user_id = uuid.uuid4()
    LocationFactory.create(user_id=user_id, is_current=True)
    location = services.create_location(
        user_id=user_id,
        name="Park",
        equipment_slugs=["pull_up_bar"],
        available_weights_kg={},
        make_current=True,
    )
    assert location.is_current
    assert [item.slug for item in location.equipment.all()] == ["pull_up_bar"]
    assert Location.objects.filter(user_id=user_id, is_current=True).count() == 1


def test_create_location_rejects_unknown_equipment() -> None:
    """Unknown equipment slugs raise and create nothing."""
    user_id = uuid.uuid4()
    with pytest.raises(services.UnknownEquipmentError, match="hoverboard"):
        services.create_location(user_id=user_id, name="Moon", equipment_slugs=["hoverboard", "bench"])
    assert not Location.objects.filter(user_id=user_id).exists()
