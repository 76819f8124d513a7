"""Loads a coach would prescribe (the 2026-11-27 model trials with Alex, 82 kg, intermediate, no history): a first
compound lift starts at a load he surely manages, a fly is a fraction of the press beside it, and harder/easier
moves a heavy lift enough to feel."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from datasources_app.models import Location
from datasources_app.services import seed_demo_user, set_current_location, upsert_profile
from sessions_app.services import create_session
from tests.tools_app.workout_support import Trainee, reps_exercise, told
from tools_app.types import ToolContext

pytestmark = pytest.mark.django_db


def alex(where: str, *, sound_knee: bool = False) -> Trainee:
    """The demo user (82 kg intermediate male, mild left knee, nothing logged) at his Home or his Gym; with a
    `sound_knee`, his knee work is loaded as anyone's (the knee's own rules: test_knee_rules)."""
    user_id = uuid.uuid4()
    seed_demo_user(user_id=user_id)
    if sound_knee:
        upsert_profile(user_id=user_id, injuries="", limitations=[])
    home = Location.objects.get(user_id=user_id, name="Home")
    gym = Location.objects.get(user_id=user_id, name="Gym")
    set_current_location(user_id=user_id, location_id=(gym if where == "Gym" else home).id)
    session = create_session(user_id=user_id)
    return Trainee(user_id, session, ToolContext(user_id=user_id, session=session), home, gym)


def line(exercise: dict[str, Any]) -> str:
    """'Trap Bar Deadlift 3×8 @ 85 kg', as the user reads a prescription."""
    each = " each hand" if exercise.get("implements") == 2 else ""
    return (
        f"{exercise['exercise_name']} {exercise['sets']}×{exercise['reps'][0]} @ "
        f"{exercise['load_each'][0]:g} {exercise['load_unit']}{each}"
    )


def swapped_in(trainee: Trainee, name: str) -> dict[str, Any]:
    """The exercise `name` as swap_exercise prescribes it in place of the first one of a small workout."""
    workout = {"title": "Session", "exercises": [reps_exercise(1, exercise_name="Push-Up", load_each=None)]}
    made = trainee.run("generate_workout", {"workout": workout})
    assert made.success, made.raw_formatted
    result = trainee.run("swap_exercise", {"exercise_id": "1", "replacement_name": name})
    assert result.success and result.artifact is not None, result.raw_formatted
    return next(e for e in result.artifact["payload"]["exercises"] if e["exercise_name"] == name)


@pytest.mark.parametrize(
    ("name", "first_time"),
    [
        ("Barbell Box Squat", "Barbell Box Squat 3×8 @ 65 kg"),  # was 82.5 kg, his body weight
        ("Trap Bar Deadlift", "Trap Bar Deadlift 3×8 @ 85 kg"),  # was 107.5 kg
        ("Barbell Bench Press", "Barbell Bench Press 3×8 @ 50 kg"),  # was 62.5 kg
    ],
)
def test_a_first_compound_lift_starts_at_a_load_he_surely_manages(name: str, first_time: str) -> None:
    """With no history of the lift, the first sets are about four fifths of what an intermediate lifts for them,
    and the prescription says to add weight if they feel easy."""
    exercise = swapped_in(alex("Gym", sound_knee=True), name)
    assert line(exercise) == first_time
    assert "First time: start here and add weight if the last reps feel easy." in exercise["reasoning"]


def test_fewer_reps_take_a_heavier_first_load_than_more_reps() -> None:
    """A strength draft's first two lifts (sets of 6) start heavier than the same lift for sets of 8, never the
    same load whatever the reps."""
    trainee = alex("Gym")
    result = trainee.run("draft_workout", {"focus": ["legs"], "minutes": 45})
    assert result.success and result.artifact is not None, result.raw_formatted
    drafted = {e["exercise_name"]: e for e in result.artifact["payload"]["exercises"] if e.get("load_each")}
    first = next(e for e in drafted.values() if e["reps"][0] == 6 and e["load_unit"] == "kg")
    for_eight = swapped_in(alex("Gym"), str(first["exercise_name"]))
    assert for_eight["reps"][0] == 8
    assert first["load_each"][0] > for_eight["load_each"][0], (line(first), line(for_eight))
    assert all(e["load_each"][0] <= 85 for e in drafted.values()), [line(e) for e in drafted.values()]


def test_an_incline_fly_is_a_fraction_of_the_dumbbell_press() -> None:
    """An incline fly (which the catalogue calls compound) is prescribed as isolation work: 12 reps at a third
    of the dumbbell press's weight, not the press's 25 kg each hand for 8."""
    trainee = alex("Home")
    fly = swapped_in(trainee, "Incline Dumbbell Fly")
    press = swapped_in(alex("Home"), "Dumbbell Bench Press")
    assert line(fly) == "Incline Dumbbell Fly 3×12 @ 7.5 kg each hand"
    assert line(press) == "Dumbbell Bench Press 3×8 @ 20 kg each hand"


def squat(load: float) -> dict[str, Any]:
    return reps_exercise(
        1,
        exercise_name="Barbell Box Squat",
        sets=3,
        reps=[5, 5, 5],
        load_each=[load] * 3,
        equipment=["barbell", "bench", "squat_rack"],
        muscles_utilized=[{"muscle": "Quadriceps", "share": 0.7}, {"muscle": "Glutes", "share": 0.3}],
    )


@pytest.mark.parametrize(
    ("change", "load", "moved"),
    [
        ("easier", 100, "Barbell Box Squat: 100→92.5 kg"),  # was 97.5 kg: 2.5 %, barely felt
        ("harder", 100, "Barbell Box Squat: 100→107.5 kg"),
        ("easier", 82.5, "Barbell Box Squat: 82.5→77.5 kg"),
        # A light bar: one pair of small plates is already 6 %.
        ("harder", 40, "Barbell Box Squat: 40→42.5 kg"),
        # Never below the empty bar, nor under 4 reps: a set fewer, said as such.
        ("easier", 20, "Barbell Box Squat: 3→2 sets (only one set fewer, the same reps and weight"),
    ],
)
def test_harder_or_easier_moves_a_barbell_lift_enough_to_feel(change: str, load: float, moved: str) -> None:
    """Harder/easier moves a barbell lift about 7.5 % (to whole plates), only the weight."""
    trainee = alex("Gym", sound_knee=True)
    made = trainee.run("generate_workout", {"workout": {"title": "Legs", "exercises": [squat(load)]}})
    assert made.success, made.raw_formatted
    result = trainee.run("adjust_exercise", {"exercise_id": "1", "change": change})
    assert result.success, result.raw_formatted
    assert moved in told(result), told(result)


@pytest.mark.parametrize(("change", "moved"), [("harder", "20→22.5"), ("easier", "20→17.5")])
def test_harder_or_easier_moves_dumbbells_one_pair(change: str, moved: str) -> None:
    """Dumbbells move to the next pair on hand (20 → 22.5 kg is already 12 %), not further."""
    trainee = alex("Home")
    press = reps_exercise(1, reps=[8, 8, 8], load_each=[20, 20, 20], implements=2)
    made = trainee.run("generate_workout", {"workout": {"title": "Chest", "exercises": [press]}})
    assert made.success, made.raw_formatted
    result = trainee.run("adjust_exercise", {"exercise_id": "1", "change": change})
    assert f"Dumbbell Bench Press: {moved} kg each hand" in told(result), told(result)
