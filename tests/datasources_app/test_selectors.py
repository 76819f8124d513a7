"""Reads of the user's data and the catalogue."""

from __future__ import annotations

import uuid

import pytest

from datasources_app import selectors
from datasources_app.models import Exercise
from tests.datasources_app.factories import (
    ExerciseFactory,
    LocationFactory,
    UserProfileFactory,
    UserSettingsFactory,
)

pytestmark = pytest.mark.django_db


def test_get_profile_returns_the_users_profile_or_none() -> None:
    """Profiles are found by user_id; an unknown user has none."""
    profile = UserProfileFactory.create()
    assert selectors.get_profile(user_id=profile.user_id) == profile
    assert selectors.get_profile(user_id=uuid.uuid4()) is None


def test_get_settings_falls_back_to_unsaved_defaults() -> None:
    """Without a row the user gets kg / km / UTC, and nothing is written."""
    user_id = uuid.uuid4()
    defaults = selectors.get_settings(user_id=user_id)
    assert (defaults.weight_unit, defaults.distance_unit, defaults.timezone) == ("kg", "km", "UTC")
    assert defaults.pk is None
    saved = UserSettingsFactory.create(weight_unit="lb", distance_unit="mi")
    assert selectors.get_settings(user_id=saved.user_id) == saved


def test_list_locations_puts_the_current_one_first_with_equipment() -> None:
    """Only the user's locations, current first then by name, equipment prefetched."""
    user_id = uuid.uuid4()
    LocationFactory.create(user_id=user_id, name="Alpha")
    LocationFactory.create(user_id=user_id, name="Zulu", is_current=True, equipment=["barbell", "bench"])
    LocationFactory.create(name="Someone else's")
    locations = selectors.list_locations(user_id=user_id)
    assert [location.name for location in locations] == ["Zulu", "Alpha"]
    assert "equipment" in locations[0]._prefetched_objects_cache  # type: ignore[attr-defined]
    assert sorted(item.slug for item in locations[0].equipment.all()) == ["barbell", "bench"]


def test_current_location_and_available_equipment() -> None:
    """Equipment comes from the current location only and always includes bodyweight."""
    user_id = uuid.uuid4()
    assert selectors.current_location(user_id=user_id) is None
    assert selectors.available_equipment_slugs(user_id=user_id) == {"bodyweight"}
    LocationFactory.create(user_id=user_id, name="Gym", equipment=["barbell", "squat_rack"])
    home = LocationFactory.create(user_id=user_id, name="Home", is_current=True, equipment=["dumbbells"])
    assert selectors.current_location(user_id=user_id) == home
    assert selectors.available_equipment_slugs(user_id=user_id) == {"bodyweight", "dumbbells"}


def test_search_by_available_equipment_keeps_only_doable_exercises() -> None:
    """An exercise is returned only when all its equipment is available; bodyweight ones always are."""
    results = selectors.search_exercises(equipment={"dumbbells", "bench"}, limit=1000)
    slugs = {exercise.slug for exercise in results}
    assert {"dumbbell-bench-press", "push-up", "dumbbell-curl"} <= slugs
    assert not slugs & {"barbell-bench-press", "pull-up", "lat-pulldown"}
    for exercise in results:
        assert {item.slug for item in exercise.equipment.all()} <= {"dumbbells", "bench"}


def test_search_by_muscle_matches_primary_and_tells_back_from_lower_back() -> None:
    """muscles= matches primary muscles; "Back" does not match "Lower Back" exercises."""
    back = selectors.search_exercises(muscles=["Back"], limit=1000)
    assert back and all("Back" in exercise.primary_muscles for exercise in back)
    assert "deadlift" not in {exercise.slug for exercise in back}
    lower_back = {
        exercise.slug for exercise in selectors.search_exercises(muscles=["Lower Back"], limit=1000)
    }
    assert "deadlift" in lower_back


def test_search_with_secondary_muscles_widens_the_match() -> None:
    """include_secondary also matches exercises that only assist the muscle."""
    primary_only = {e.slug for e in selectors.search_exercises(muscles=["Triceps"], limit=1000)}
    widened = {
        e.slug for e in selectors.search_exercises(muscles=["Triceps"], include_secondary=True, limit=1000)
    }
    assert "barbell-bench-press" in widened - primary_only


def test_search_combines_type_exclusions_and_limit() -> None:
    """Type filter, excluded slugs and the limit all apply, results ordered by name."""
    holds = selectors.search_exercises(exercise_type="hold", exclude_slugs=["plank"], limit=5)
    assert len(holds) == 5
    assert all(exercise.exercise_type == "hold" for exercise in holds)
    assert "plank" not in {exercise.slug for exercise in holds}
    assert [exercise.name for exercise in holds] == sorted(exercise.name for exercise in holds)
    assert selectors.search_exercises(muscles=[]) == []


@pytest.mark.parametrize(
    ("spelling", "slug"),
    [
        ("Push-Up", "push-up"),
        ("push ups", "push-up"),
        ("PUSHUPS", "push-up"),
        ("pull-ups", "pull-up"),
        ("Bench Press", "barbell-bench-press"),
        ("dumbbell flyes", "dumbbell-fly"),
        ("Skull Crushers", "ez-bar-skull-crusher"),
        ("RDL", "romanian-deadlift"),
        ("lat pull-down", "lat-pulldown"),
    ],
)
def test_find_exercise_by_name_tolerates_spelling(spelling: str, slug: str) -> None:
    """Names and aliases are matched ignoring case, hyphens, spacing and plurals."""
    found = selectors.find_exercise_by_name(name=spelling)
    assert found is not None and found.slug == slug


def test_find_exercise_by_name_returns_none_for_unknown_names() -> None:
    """Unknown or empty names find nothing."""
    assert selectors.find_exercise_by_name(name="Underwater Basket Weaving") is None
    assert selectors.find_exercise_by_name(name=" - ") is None


def test_find_exercise_by_name_finds_factory_made_exercises() -> None:
    """Exercises added outside the fixture are found too."""
    made = ExerciseFactory.create(name="Zercher Carry", equipment=["barbell"])
    assert selectors.find_exercise_by_name(name="zercher carries") == made
    assert Exercise.objects.get(pk=made.pk).equipment.get().slug == "barbell"
