"""Database constraints on the user's data."""

from __future__ import annotations

import uuid

import pytest
from django.db import IntegrityError, transaction

from tests.datasources_app.factories import LocationFactory, UserProfileFactory, UserSettingsFactory

pytestmark = pytest.mark.django_db


def test_second_current_location_is_refused() -> None:
    """The database allows at most one current location per user."""
    user_id = uuid.uuid4()
    LocationFactory.create(user_id=user_id, name="Home", is_current=True)
    with pytest.raises(IntegrityError), transaction.atomic():
        LocationFactory.create(user_id=user_id, name="Gym", is_current=True)


def test_each_user_may_have_one_current_location() -> None:
    """The one-current rule is per user, and non-current locations are unlimited."""
    first, second = uuid.uuid4(), uuid.uuid4()
    LocationFactory.create(user_id=first, is_current=True)
    LocationFactory.create(user_id=second, is_current=True)
    LocationFactory.create(user_id=first)
    LocationFactory.create(user_id=first)


def test_location_names_are_unique_per_user_ignoring_case() -> None:
    """A user cannot have "Home" and "home"; another user can have their own "Home"."""
    user_id = uuid.uuid4()
    LocationFactory.create(user_id=user_id, name="Home")
    LocationFactory.create(user_id=uuid.uuid4(), name="Home")
    with pytest.raises(IntegrityError), transaction.atomic():
        LocationFactory.create(user_id=user_id, name="home")


def test_one_profile_and_one_settings_row_per_user() -> None:
    """Profile and settings are unique per user_id."""
    profile = UserProfileFactory.create()
    settings = UserSettingsFactory.create()
    with pytest.raises(IntegrityError), transaction.atomic():
        UserProfileFactory.create(user_id=profile.user_id)
    with pytest.raises(IntegrityError), transaction.atomic():
        UserSettingsFactory.create(user_id=settings.user_id)
