"""The user's current workout (persisted per user) and their preferences."""

from __future__ import annotations

import datetime as dt
import uuid

import pytest
from django.utils import timezone

from datasources_app import selectors, services
from datasources_app.models import CurrentWorkout, Preference
from tests.datasources_app.factories import CurrentWorkoutFactory, PreferenceFactory, sample_workout

pytestmark = pytest.mark.django_db


def test_save_current_workout_upserts_one_row_per_user() -> None:
    """Saving twice keeps one row per user holding the latest workout and artifact id."""
    user_id = uuid.uuid4()
    session_id = uuid.uuid4()
    services.save_current_workout(user_id=user_id, workout=sample_workout("A"), artifact_id="art_1")
    services.save_current_workout(
        user_id=user_id, workout=sample_workout("B"), artifact_id="art_2", session_id=session_id
    )
    current = selectors.get_current_workout(user_id=user_id)
    assert current is not None
    assert (current.workout["title"], current.artifact_id, current.session_id) == ("B", "art_2", session_id)
    assert CurrentWorkout.objects.filter(user_id=user_id).count() == 1


def test_current_workout_is_read_back_from_the_database() -> None:
    """A fresh query (as another worker would make) sees the saved workout's exercises."""
    user_id = uuid.uuid4()
    services.save_current_workout(user_id=user_id, workout=sample_workout(), artifact_id="art_x")
    row = CurrentWorkout.objects.get(user_id=user_id)
    assert row.workout["exercises"][0]["exercise_name"] == "Push-Up"


def test_get_current_workout_is_none_without_one() -> None:
    """Users without a current workout get None, not another user's."""
    CurrentWorkoutFactory.create()
    assert selectors.get_current_workout(user_id=uuid.uuid4()) is None


def test_update_current_workout_keeps_the_artifact_id() -> None:
    """Updating replaces the workout and keeps artifact and session; no workout raises DoesNotExist."""
    current = CurrentWorkoutFactory.create(artifact_id="art_keep")
    changed = {**current.workout, "title": "Changed"}
    services.update_current_workout(user_id=current.user_id, workout=changed)
    current.refresh_from_db()
    assert (current.workout["title"], current.artifact_id) == ("Changed", "art_keep")
    with pytest.raises(CurrentWorkout.DoesNotExist):
        services.update_current_workout(user_id=uuid.uuid4(), workout=changed)


def test_clear_current_workout_reports_whether_there_was_one() -> None:
    """Clearing deletes only the user's workout and returns False the second time."""
    mine = CurrentWorkoutFactory.create()
    other = CurrentWorkoutFactory.create()
    assert services.clear_current_workout(user_id=mine.user_id) is True
    assert services.clear_current_workout(user_id=mine.user_id) is False
    assert CurrentWorkout.objects.filter(pk=other.pk).exists()


def test_create_preference_stores_structured_exclusions() -> None:
    """Type, category, guidance and trimmed exclusion lists are stored as given."""
    user_id = uuid.uuid4()
    preference = services.create_preference(
        user_id=user_id,
        preference_type="permanent",
        description="No burpees ever",
        guidance="Never program burpees; use squat thrusts instead.",
        category="Exercise",
        exclude_exercises=["burpee", " "],
        exclude_equipment=["barbell"],
    )
    preference.refresh_from_db()
    assert preference.category == "exercise"
    assert preference.exclude_exercises == ["burpee"]
    assert preference.exclude_equipment == ["barbell"]
    assert not preference.delete_after_use and preference.expires_at is None


@pytest.mark.parametrize(
    ("preference_type", "description", "message"),
    [("forever", "x", "preference_type must be one of"), ("temporary", "  ", "description")],
)
def test_create_preference_rejects_bad_input(preference_type: str, description: str, message: str) -> None:
    """An unknown type or an empty description raises ValueError naming the problem."""
    with pytest.raises(ValueError, match=message):
        services.create_preference(
            user_id=uuid.uuid4(), preference_type=preference_type, description=description
        )


def test_active_preferences_excludes_expired_and_orders_newest_first() -> None:
    """Expired preferences are left out; the rest come newest first; other users' are not included."""
    user_id = uuid.uuid4()
    now = timezone.now()
    old = PreferenceFactory.create(user_id=user_id)
    Preference.objects.filter(pk=old.pk).update(created_at=now - dt.timedelta(days=3))
    expired = PreferenceFactory.create(user_id=user_id, expires_at=now - dt.timedelta(minutes=1))
    later = PreferenceFactory.create(
        user_id=user_id, preference_type="temporary", expires_at=now + dt.timedelta(hours=2)
    )
    PreferenceFactory.create()

    active = selectors.active_preferences(user_id=user_id, now=now)
    assert active == [later, old]
    assert expired not in active
    assert selectors.active_preferences(user_id=user_id, now=now + dt.timedelta(hours=3)) == [old]


def test_delete_preference_only_deletes_own() -> None:
    """A user cannot delete another user's preference; their own is deleted once."""
    mine = PreferenceFactory.create()
    theirs = PreferenceFactory.create()
    assert services.delete_preference(user_id=mine.user_id, preference_id=theirs.id) is False
    assert services.delete_preference(user_id=mine.user_id, preference_id=mine.id) is True
    assert services.delete_preference(user_id=mine.user_id, preference_id=mine.id) is False
    assert Preference.objects.filter(pk=theirs.pk).exists()


def test_consume_preferences_after_use_deletes_one_shot_ones() -> None:
    """Only the user's delete_after_use preferences are deleted, and counted."""
    user_id = uuid.uuid4()
    keep = PreferenceFactory.create(user_id=user_id)
    PreferenceFactory.create(user_id=user_id, delete_after_use=True, preference_type="temporary")
    PreferenceFactory.create(user_id=user_id, delete_after_use=True, preference_type="temporary")
    other = PreferenceFactory.create(delete_after_use=True)
    assert services.consume_preferences_after_use(user_id=user_id) == 2
    assert list(Preference.objects.filter(user_id=user_id)) == [keep]
    assert Preference.objects.filter(pk=other.pk).exists()
