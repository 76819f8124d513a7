"""A scripted model that hands the user what it must not (a squat for a knee injury, a barbell at home,
pounds for a kg user, a disliked exercise, a copied prescription): the tools refuse it with a message that
says what to change, the model's corrected call goes through, and what the user ends up with is safe."""

from __future__ import annotations

from typing import Any

import pytest

from datasources_app.services import create_preference, upsert_profile
from tests.coaching.guard.conftest import (
    DemoUser,
    assert_prescription_fits,
    changed_ids,
    current,
    failed_results,
    pattern_of,
    run_scripted,
    unsafe_for,
    untouched,
)
from tests.tools_app.workout_support import make_trainee, reps_exercise

pytestmark = pytest.mark.django_db

NOTIFY = ("message_notify_user", {"message": "Here you go."})
IDLE = ("idle", {"reason": "done"})


def exercise(name: str, muscles: dict[str, float], order: int = 1, **fields: Any) -> dict[str, Any]:
    values: dict[str, Any] = {
        "exercise_name": name,
        "muscles_utilized": [{"muscle": m, "share": s} for m, s in muscles.items()],
        "reasoning": f"{name} for the session.",
        "equipment": None,
    }
    return reps_exercise(order, **{**values, **fields})


SQUAT = exercise(
    "Dumbbell Squat",
    {"Quadriceps": 0.7, "Glutes": 0.3},
    sets=4,
    reps=[6] * 4,
    load_each=[25] * 4,
    rest_sec=120,
)
BRIDGE = exercise(
    "Single-Leg Glute Bridge", {"Glutes": 0.7, "Hamstrings": 0.3}, load_each=None, load_unit=None
)
RDL = exercise("Dumbbell Romanian Deadlift", {"Hamstrings": 0.7, "Glutes": 0.3}, order=2)
BENCH = exercise("Dumbbell Bench Press", {"Chest": 0.7, "Triceps": 0.2, "Shoulders": 0.1})
FLY = exercise(
    "Dumbbell Fly", {"Chest": 0.8, "Shoulders": 0.2}, order=2, reps=[12] * 3, load_each=[10] * 3, rest_sec=60
)


def generate(*exercises: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    return ("generate_workout", {"workout": {"title": "Session", "exercises": list(exercises)}})


def with_order(item: dict[str, Any], order: int) -> dict[str, Any]:
    return {**item, "order": order}


def test_a_squat_for_the_knee_is_refused_and_the_safe_retry_is_kept(demo: DemoUser) -> None:
    result = run_scripted(demo.user_id, "leg day", generate(SQUAT, RDL), generate(BRIDGE, RDL), NOTIFY, IDLE)
    errors = failed_results(result, "generate_workout")
    assert len(errors) == 1 and "knee" in errors[0] and "Dumbbell Squat" in errors[0]
    names = [e["exercise_name"] for e in current(demo.user_id)]
    assert names == ["Single-Leg Glute Bridge", "Dumbbell Romanian Deadlift"]


def test_a_renamed_squat_is_still_a_squat(demo: DemoUser) -> None:
    sneaky = {**SQUAT, "exercise_name": "Heel-Elevated Tempo Squat", "equipment": ["dumbbells"]}
    result = run_scripted(demo.user_id, "leg day", generate(sneaky), NOTIFY, IDLE)
    assert "knee" in failed_results(result, "generate_workout")[0]
    assert current(demo.user_id) == []


def test_the_refusal_names_safe_options_that_then_pass(demo: DemoUser) -> None:
    first = run_scripted(demo.user_id, "leg day", generate(SQUAT), NOTIFY, IDLE)
    error = failed_results(first, "generate_workout")[0]
    options = error.split("safe options here for these muscles: ")[1].split("\n")[0].split(", ")
    retry = exercise(
        options[0], {"Glutes": 0.7, "Hamstrings": 0.3}, load_each=None, load_unit=None, equipment=None
    )
    second = run_scripted(demo.user_id, "leg day", generate(retry), NOTIFY, IDLE)
    assert failed_results(second, "generate_workout") == []
    assert unsafe_for("knee", current(demo.user_id), user_id=demo.user_id) == []


def test_a_barbell_at_home_is_refused(demo: DemoUser) -> None:
    barbell = exercise("Barbell Bench Press", {"Chest": 0.7, "Triceps": 0.3}, equipment=["barbell", "bench"])
    result = run_scripted(demo.user_id, "chest", generate(barbell), generate(BENCH), NOTIFY, IDLE)
    errors = failed_results(result, "generate_workout")
    assert len(errors) == 1 and "barbell" in errors[0] and "Home" in errors[0]
    assert [e["exercise_name"] for e in current(demo.user_id)] == ["Dumbbell Bench Press"]


def test_pounds_for_a_kg_user_are_converted_to_kg(demo: DemoUser) -> None:
    pounds = {**BENCH, "load_each": [45, 45, 50], "load_unit": "lb"}
    result = run_scripted(demo.user_id, "chest", generate(pounds), NOTIFY, IDLE)
    assert failed_results(result, "generate_workout") == []
    (stored,) = current(demo.user_id)
    assert (stored["load_each"], stored["load_unit"]) == ([20.5, 20.5, 22.5], "kg")


def test_a_disliked_exercise_and_its_variations_are_refused(demo: DemoUser) -> None:
    burpee = exercise("Burpee", {"Quadriceps": 0.5, "Chest": 0.5}, load_each=None, load_unit=None)
    result = run_scripted(demo.user_id, "hiit", generate(BENCH, with_order(burpee, 2)), NOTIFY, IDLE)
    assert "No burpees" in failed_results(result, "generate_workout")[0]
    create_preference(
        user_id=demo.user_id,
        preference_type="permanent",
        description="I hate push-ups",
        exclude_exercises=["Push-Up"],
    )
    wide = exercise("Wide-Grip Push-Up", {"Chest": 0.7, "Triceps": 0.3}, load_each=None, load_unit=None)
    result = run_scripted(demo.user_id, "chest", generate(wide), NOTIFY, IDLE)
    assert "I hate push-ups" in failed_results(result, "generate_workout")[0]


def test_swapping_into_a_lunge_for_the_knee_is_refused_and_nothing_changes(demo: DemoUser) -> None:
    run_scripted(demo.user_id, "legs", generate(BRIDGE, RDL), NOTIFY, IDLE)
    before = current(demo.user_id)
    lunge = {**SQUAT, "exercise_name": "Dumbbell Lunge"}
    lunge.pop("order")
    result = run_scripted(
        demo.user_id, "swap 1", ("swap_exercise", {"exercise_id": "1", "new_exercise": lunge}), NOTIFY, IDLE
    )
    assert "knee" in failed_results(result, "swap_exercise")[0]
    assert current(demo.user_id) == before


def test_a_swap_without_a_replacement_gets_one_of_the_same_pattern_prescribed_afresh(demo: DemoUser) -> None:
    run_scripted(demo.user_id, "chest", generate(BENCH, FLY), NOTIFY, IDLE)
    before = current(demo.user_id)
    run_scripted(demo.user_id, "swap the fly", ("swap_exercise", {"exercise_id": "2"}), NOTIFY, IDLE)
    after = current(demo.user_id)
    gone = changed_ids(before, after)
    assert len(gone) == 1
    untouched(before, after, gone)
    new = after[1]
    assert new["exercise_name"] != "Dumbbell Fly" and pattern_of(new)[0] == "chest_fly"
    assert new["muscles_utilized"][0]["muscle"] == "Chest"
    assert_prescription_fits(new)


def test_a_copied_heavy_prescription_is_re_derived_for_the_new_exercise() -> None:
    """The issue's Dumbbell Squat → Dumbbell Calf Raise 3x6 @ 25 kg, rest 120 s."""
    trainee = make_trainee()
    run_scripted(trainee.user_id, "legs", generate(SQUAT), NOTIFY, IDLE)
    calf = {
        **SQUAT,
        "exercise_name": "Dumbbell Calf Raise",
        "muscles_utilized": [{"muscle": "Calves", "share": 1.0}],
    }
    calf.pop("order")
    run_scripted(
        trainee.user_id, "swap", ("swap_exercise", {"exercise_id": "1", "new_exercise": calf}), NOTIFY, IDLE
    )
    (new,) = current(trainee.user_id)
    assert new["exercise_name"] == "Dumbbell Calf Raise"
    assert (new["sets"], new["reps"][0], new["rest_sec"], new["load_each"][0]) != (4, 6, 120, 25)
    assert new["rest_sec"] < 120 and new["load_each"][0] < 25
    assert_prescription_fits(new)


def test_harder_says_what_changed_and_a_pound_adjustment_is_converted(demo: DemoUser) -> None:
    run_scripted(demo.user_id, "chest", generate(BENCH, FLY), NOTIFY, IDLE)
    result = run_scripted(
        demo.user_id, "harder", ("adjust_exercise", {"exercise_id": "2", "change": "harder"}), NOTIFY, IDLE
    )
    adjusted = next(a for a in result.actions if a.tool == "adjust_exercise")
    summary = adjusted.result["data"]["change_summary"]
    assert summary == "Dumbbell Fly: 10→12.5 kg each hand"  # one lever: the load, the sets stay
    assert "(only the weight: the same sets and reps)" in adjusted.result["formatted"]
    heavier = run_scripted(
        demo.user_id,
        "heavier",
        ("adjust_exercise", {"exercise_id": "1", "load_each": [50, 50, 50], "load_unit": "lb"}),
        NOTIFY,
        IDLE,
    )
    assert failed_results(heavier, "adjust_exercise") == []
    assert (current(demo.user_id)[0]["load_each"], current(demo.user_id)[0]["load_unit"]) == (
        [22.5] * 3,
        "kg",
    )


def test_an_injury_told_as_a_preference_protects_against_a_deadlift_at_the_gym(demo: DemoUser) -> None:
    upsert_profile(user_id=demo.user_id, injuries="", limitations=[])
    create_preference(
        user_id=demo.user_id, preference_type="permanent", description="My lower back is sore, go easy on it"
    )
    demo.at("Gym")
    deadlift = exercise(
        "Deadlift",
        {"Hamstrings": 0.5, "Glutes": 0.3, "Lower Back": 0.2},
        equipment=["barbell"],
        load_each=[60] * 3,
    )
    result = run_scripted(demo.user_id, "pull day", generate(deadlift), NOTIFY, IDLE)
    error = failed_results(result, "generate_workout")[0]
    assert "lower back" in error and "hinge" in error
    assert current(demo.user_id) == []
