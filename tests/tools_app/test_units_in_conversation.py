"""Units in conversation (issue 23): set_units changes the settings, set_preference will not store a unit
change, and loads or distances given in the other unit are converted to the user's, saying so."""

from __future__ import annotations

import uuid

import pytest
from pytest_django import Settings

from datasources_app.models import Preference, WorkoutLogEntry
from datasources_app.selectors import get_current_workout
from sessions_app.services import create_session
from tests.tools_app.workout_support import Trainee, make_trainee, reps_exercise, told
from tests.trainer_agent.api.support import JWT_SECRET, make_user
from tools_app.preference_tools import is_unit_change
from tools_app.registry import execute_tool
from tools_app.types import ToolContext

pytestmark = pytest.mark.django_db


@pytest.fixture
def trainee() -> Trainee:
    return make_trainee()


def dumbbell_press(**overrides: object) -> dict[str, object]:
    """Dumbbell Bench Press, 3×10 at 60 lb each hand (the trainee's Home has dumbbells and a bench)."""
    fields: dict[str, object] = {"reps": [10, 10, 10], "load_each": [60, 60, 60], "load_unit": "lb"}
    return reps_exercise(1, **{**fields, **overrides})


# --- set_units ---------------------------------------------------------------------------------------------
def test_set_units_changes_the_settings_the_api_returns(settings: Settings) -> None:
    """'Use pounds from now on' → set_units {weight: lb}: the observation says what changed, GET /user-settings shows lb."""
    settings.SUPABASE_JWT_SECRET = JWT_SECRET
    settings.SUPABASE_PUBLIC_URL = ""
    user = make_user()
    ctx = ToolContext(user_id=user.user_id, session=create_session(user_id=user.user_id))
    result = execute_tool("set_units", {"weight": "lb"}, ctx)
    assert result.success, result.formatted
    assert result.raw_formatted == (
        "Units: weight kg → lb; distance stays km.\n"
        "Tell the user: Done: I'll use pounds for weights from now on, in your workouts and your logs."
    )
    response = user.get("/user-settings")
    assert response.status_code == 200
    assert response.json()["weight_unit"] == "lb" and response.json()["distance_unit"] == "km"


def test_set_units_both_spelled_out_and_an_unchanged_one(trainee: Trainee) -> None:
    """'pounds' and 'miles' are accepted; a unit already set is reported as such."""
    result = trainee.run("set_units", {"weight": "pounds", "distance": "km"})
    assert result.success, result.formatted
    assert result.raw_formatted.splitlines()[0] == "Units: weight kg → lb; distance was already km."
    assert told(result) == (
        "Done: I'll use pounds for weights and kilometres for distances from now on, in your workouts and your logs."
    )
    assert result.data == {"weight_unit": "lb", "distance_unit": "km"}


def test_set_units_needs_a_unit(trainee: Trainee) -> None:
    """No unit, or one that is neither of the pair, fails naming what to give."""
    empty = trainee.run("set_units", {})
    assert not empty.success and empty.data["error"] == "Give weight (kg or lb) and/or distance (km or mi)."
    wrong = trainee.run("set_units", {"weight": "stone"})
    assert not wrong.success and "weight" in wrong.data["error"] and '"kg", "lb"' in wrong.data["error"]


# --- set_preference refuses unit changes -------------------------------------------------------------------
def test_a_unit_change_is_not_saved_as_a_preference(trainee: Trainee) -> None:
    """'Use pounds from now on' as a preference fails, pointing at set_units; nothing is stored."""
    result = trainee.run(
        "set_preference", {"description": "Use pounds from now on", "guidance": "Give all loads in lb"}
    )
    assert not result.success
    assert "Use set_units" in result.data["error"]
    assert not Preference.objects.filter(user_id=trainee.user_id).exists()


def test_a_preference_that_only_mentions_a_distance_is_saved(trainee: Trainee) -> None:
    """'No running over 5 km' is a preference about distance, not units: it is saved."""
    result = trainee.run(
        "set_preference", {"description": "No running over 5 km", "guidance": "Keep runs short, under 5 km"}
    )
    assert result.success, result.formatted


@pytest.mark.parametrize(
    ("text", "unit_change"),
    [
        ("Use pounds from now on", True),
        ("I prefer kilos", True),
        ("Show weights in lb", True),
        ("Switch to miles for runs", True),
        ("Imperial units please", True),
        ("No running over 5 km", False),
        ("Only has 20 kg dumbbells at home", False),
        ("Training for a 10 mile race in March", False),
        ("Hates burpees", False),
    ],
)
def test_unit_change_wording(text: str, unit_change: bool) -> None:
    """Unit wording without a number before it, asked for as a unit, is a unit change; a distance is not."""
    assert is_unit_change(text) is unit_change


# --- conversion in the workout and logging tools -----------------------------------------------------------
def test_generate_workout_converts_pounds_for_a_kg_user(trainee: Trainee) -> None:
    """60 lb for a kg user: the workout the user sees is in kg (27 kg to 0.5), and the observation says so."""
    result = trainee.run("generate_workout", {"workout": {"exercises": [dumbbell_press()]}})
    assert result.success, result.formatted
    assert "Converted to the user's units: Dumbbell Bench Press: 60 lb → 27 kg." in result.raw_formatted
    assert result.artifact is not None
    (exercise,) = result.artifact["payload"]["exercises"]
    assert (exercise["load_each"], exercise["load_unit"]) == ([27.0, 27.0, 27.0], "kg")
    current = get_current_workout(user_id=trainee.user_id)
    assert current is not None
    stored = current.workout["exercises"][0]
    assert (stored["load_each"], stored["load_unit"]) == ([27.0, 27.0, 27.0], "kg")


def test_after_set_units_a_kg_load_is_shown_in_pounds(trainee: Trainee) -> None:
    """The user switched to lb: a workout written in kg is stored in whole pounds."""
    assert trainee.run("set_units", {"weight": "lb"}).success
    result = trainee.run(
        "generate_workout",
        {"workout": {"exercises": [dumbbell_press(load_each=[20, 20, 22.5], load_unit="kg")]}},
    )
    assert result.success, result.formatted
    assert result.artifact is not None
    (exercise,) = result.artifact["payload"]["exercises"]
    assert (exercise["load_each"], exercise["load_unit"]) == ([44.0, 44.0, 50.0], "lb")
    assert "Dumbbell Bench Press: 20/22.5 kg → 44/50 lb" in result.raw_formatted


def test_log_completed_exercise_in_pounds_is_stored_in_kg(trainee: Trainee) -> None:
    """'I did 3×10 at 60 lb' for a kg user: stored as 27 kg, and the observation shows the conversion."""
    result = trainee.run(
        "log_completed_exercise",
        {
            "exercise_name": "Dumbbell Bench Press",
            "sets": 3,
            "reps": [10, 10, 10],
            "load_each": [60] * 3,
            "load_unit": "lb",
        },
    )
    assert result.success, result.formatted
    entry = WorkoutLogEntry.objects.get(log__user_id=trainee.user_id)
    assert (entry.actual_load_each, entry.load_unit) == ([27.0, 27.0, 27.0], "kg")
    assert "(converted 60 lb → 27 kg)" in result.raw_formatted


def test_log_workout_accepts_pounds_for_a_kg_plan(trainee: Trainee) -> None:
    """log_workout with load_unit lb against a kg workout: the log holds kg, the observation says so."""
    generated = trainee.run("generate_workout", {"workout": {"exercises": [dumbbell_press(load_unit="kg")]}})
    assert generated.success, generated.formatted
    result = trainee.run(
        "log_workout",
        {"completed_exercises": [{"exercise_id": "1", "load_each": [50, 50, 55], "load_unit": "lb"}]},
    )
    assert result.success, result.formatted
    entry = WorkoutLogEntry.objects.get(log__user_id=trainee.user_id)
    assert (entry.actual_load_each, entry.load_unit) == ([22.5, 22.5, 25.0], "kg")
    assert (
        "Converted to the user's units: Dumbbell Bench Press: 50/55 lb → 22.5/25 kg." in result.raw_formatted
    )


# --- strict arguments on real tools ------------------------------------------------------------------------
def test_an_unknown_field_of_a_workout_exercise_is_named(trainee: Trainee) -> None:
    """generate_workout with 'tempo' on an exercise fails naming workout.exercises.0.tempo; nothing is stored."""
    result = trainee.run("generate_workout", {"workout": {"exercises": [dumbbell_press(tempo="3-1-1")]}})
    assert not result.success
    error = result.data["error"]
    assert error.startswith(
        "Invalid arguments for generate_workout: workout.exercises.0: unknown field(s) tempo"
    )
    assert "accepted: exercise_name, exercise_type, muscles_utilized" in error
    assert get_current_workout(user_id=trainee.user_id) is None


def test_an_unknown_top_level_argument_of_a_real_tool_is_named(trainee: Trainee) -> None:
    """set_units {weight, units: 'imperial'} fails naming 'units'; the settings are unchanged."""
    result = trainee.run("set_units", {"weight": "lb", "units": "imperial"})
    assert not result.success
    assert result.data["error"] == (
        "Invalid arguments for set_units: unknown argument(s) units (accepted: weight, distance)"
    )
    assert trainee.run("set_units", {"distance": "km"}).raw_formatted.startswith("Units: weight stays kg")


def test_a_user_without_settings_can_set_units() -> None:
    """set_units creates the settings row for a user who never saved any."""
    user_id = uuid.uuid4()
    ctx = ToolContext(user_id=user_id, session=create_session(user_id=user_id))
    result = execute_tool("set_units", {"distance": "mi"}, ctx)
    assert (
        result.success and result.raw_formatted.splitlines()[0] == "Units: weight stays kg; distance km → mi."
    )
    assert told(result) == "Done: I'll use miles for distances from now on, in your workouts and your logs."
