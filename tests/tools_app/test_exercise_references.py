"""The workout tools take an exercise in the user's own words (tools_app/exercise_references.py): ids and
order numbers as before, positions, whole or partial names and equipment; words that match several exercises
or none fail with the candidates and their ids, and nothing changes."""

from __future__ import annotations

from typing import Any

import pytest

from datasources_app.models import WorkoutLogEntry
from datasources_app.selectors import get_current_workout
from tests.tools_app.workout_support import (
    Trainee,
    generate,
    hold_exercise,
    make_trainee,
    upper_body_workout,
)
from tools_app.types import ToolResult
from tools_app.workout_tools import workout_exercises

pytestmark = pytest.mark.django_db

NAMES = [
    "Jumping Jack",
    "Dumbbell Bench Press",
    "Seated Dumbbell Shoulder Press",
    "Dumbbell Biceps Curl",
    "Band Pull-Apart",
    "Push-Up",
]


@pytest.fixture
def trainee() -> Trainee:
    return make_trainee()


@pytest.fixture
def exercises(trainee: Trainee) -> list[dict[str, Any]]:
    result = generate(trainee, upper_body_workout())
    assert result.success and result.artifact is not None, result.formatted
    found = workout_exercises(result.artifact)
    assert [e["exercise_name"] for e in found] == NAMES
    return found


def remove(trainee: Trainee, reference: Any) -> ToolResult:
    return trainee.run("remove_exercise", {"exercise_id": reference})


def names_now(trainee: Trainee) -> list[str]:
    current = get_current_workout(user_id=trainee.user_id)
    assert current is not None
    return [e["exercise_name"] for e in workout_exercises(current.workout)]


@pytest.mark.parametrize(
    ("reference", "removed"),
    [
        ("2", "Dumbbell Bench Press"),
        (2, "Dumbbell Bench Press"),
        ("#4", "Dumbbell Biceps Curl"),
        # In words a position counts the main exercises (the warm-up's only when named), as the last one does.
        ("the first one", "Dumbbell Bench Press"),
        ("the first exercise", "Dumbbell Bench Press"),
        ("the 2nd exercise", "Seated Dumbbell Shoulder Press"),
        ("the first warm-up exercise", "Jumping Jack"),
        ("exercise 3", "Seated Dumbbell Shoulder Press"),
        ("the last one", "Push-Up"),
        ("the dumbbell bench press", "Dumbbell Bench Press"),
        ("the curls", "Dumbbell Biceps Curl"),
        ("bench", "Dumbbell Bench Press"),
        ("push-ups", "Push-Up"),
        ("the shoulder press", "Seated Dumbbell Shoulder Press"),
        ("seated press", "Seated Dumbbell Shoulder Press"),
        ("the band one", "Band Pull-Apart"),
    ],
)
def test_a_reference_in_words_names_one_exercise(
    trainee: Trainee, exercises: list[dict[str, Any]], reference: Any, removed: str
) -> None:
    """Order numbers, positions, whole and partial names, and equipment each pick the one exercise meant."""
    result = remove(trainee, reference)

    assert result.success, result.formatted
    assert result.data["removed_exercise"]["exercise_name"] == removed
    assert names_now(trainee) == [name for name in NAMES if name != removed]


def test_an_id_still_names_its_exercise(trainee: Trainee, exercises: list[dict[str, Any]]) -> None:
    """An id works as before, whatever its words would match."""
    result = trainee.run("swap_exercise", {"exercise_id": exercises[3]["id"]})

    assert result.success, result.formatted
    assert result.data["old_exercise"]["exercise_name"] == "Dumbbell Biceps Curl"


def test_words_matching_several_exercises_fail_listing_them_and_change_nothing(
    trainee: Trainee, exercises: list[dict[str, Any]]
) -> None:
    """ "press" matches both presses: the error lists them with ids for the model to pick or ask."""
    bench, shoulder = exercises[1], exercises[2]

    result = trainee.run("adjust_exercise", {"exercise_id": "press", "change": "harder"})

    assert not result.success
    assert result.data["error"] == (
        f"Which exercise? 'press' matches 2: {bench['id']} (2. Dumbbell Bench Press), {shoulder['id']} "
        "(3. Seated Dumbbell Shoulder Press). Call again with one id, or ask the user which one."
    )
    assert names_now(trainee) == NAMES
    current = get_current_workout(user_id=trainee.user_id)
    assert current is not None and current.workout["exercises"] == exercises


def test_equipment_words_count_less_than_the_words_of_a_name(
    trainee: Trainee, exercises: list[dict[str, Any]]
) -> None:
    """ "the dumbbell one" is no name: it means the dumbbell exercises, three of them here, so it asks."""
    result = remove(trainee, "the dumbbell one")

    assert not result.success
    assert result.data["error"].startswith("Which exercise? 'the dumbbell one' matches 3: ")
    for exercise in exercises[1:4]:
        assert f"{exercise['id']} ({exercise['order']}. {exercise['exercise_name']})" in result.data["error"]


def test_words_matching_no_exercise_fail_listing_the_workout(
    trainee: Trainee, exercises: list[dict[str, Any]]
) -> None:
    """ "the deadlift" names nothing here: the error lists every exercise with its id."""
    result = trainee.run("swap_exercise", {"exercise_id": "the deadlift"})

    assert not result.success
    error = result.data["error"]
    assert error.startswith("Exercise 'the deadlift' is not in the current workout. Exercises: ")
    assert all(f"{e['id']} ({e['order']}. {e['exercise_name']})" in error for e in exercises)
    assert error.endswith("Call again with one id, or ask the user which one.")
    assert names_now(trainee) == NAMES


def test_logged_sets_on_the_first_one_count_from_after_the_warm_up(
    trainee: Trainee, exercises: list[dict[str, Any]]
) -> None:
    """ "3x10 at 20 kg on the first one" is the bench press: sets are done for the main exercises."""
    result = trainee.run(
        "log_completed_exercise",
        {"exercise_id": "the first one", "sets": 3, "reps": [10, 10, 10], "load_each": [20, 20, 20]},
    )

    assert result.success, result.formatted
    (entry,) = WorkoutLogEntry.objects.filter(log__user_id=trainee.user_id)
    assert (entry.exercise_name, entry.actual_reps) == ("Dumbbell Bench Press", [10, 10, 10])


def test_log_workout_reads_each_exercise_in_words_and_the_rest_as_planned(
    trainee: Trainee, exercises: list[dict[str, Any]]
) -> None:
    """log_workout's items take the user's words too ("the curls" skipped, "bench" with its reps), and
    others_as_planned logs every exercise not listed as done to plan."""
    completed = [{"exercise_id": "the curls", "skipped": True}, {"exercise_id": "bench", "reps": [8, 8, 8]}]

    result = trainee.run("log_workout", {"completed_exercises": completed, "others_as_planned": True})

    assert result.success, result.formatted
    entries = {e.exercise_name: e for e in WorkoutLogEntry.objects.filter(log__user_id=trainee.user_id)}
    assert sorted(entries) == sorted(NAMES)
    assert entries["Dumbbell Biceps Curl"].skipped
    assert entries["Dumbbell Bench Press"].actual_reps == [8, 8, 8]
    planned = exercises[2]
    assert entries[planned["exercise_name"]].actual_load_each == planned["load_each"]
    assert not entries[planned["exercise_name"]].skipped


def test_without_others_as_planned_only_the_listed_exercises_are_logged(
    trainee: Trainee, exercises: list[dict[str, Any]]
) -> None:
    """Exercises not listed are not logged unless others_as_planned says they were done."""
    result = trainee.run("log_workout", {"completed_exercises": [{"exercise_id": "the curls"}]})

    assert result.success, result.formatted
    assert [e.exercise_name for e in WorkoutLogEntry.objects.filter(log__user_id=trainee.user_id)] == [
        "Dumbbell Biceps Curl"
    ]


def test_parts_joined_by_and_are_read_one_by_one(trainee: Trainee, exercises: list[dict[str, Any]]) -> None:
    """ "the curls and the push-ups" names two exercises (the whole name "Push-Up" does not hide the curls);
    "exercises 2 and 4" two positions: the error lists both."""
    for reference, orders in (("the curls and the push-ups", (4, 6)), ("exercises 2 and 4", (2, 4))):
        result = remove(trainee, reference)

        assert not result.success
        assert result.data["error"].startswith(f"Which exercise? '{reference}' matches 2: ")
        for order in orders:
            exercise = exercises[order - 1]
            assert f"{exercise['id']} ({order}. {exercise['exercise_name']})" in result.data["error"]
    assert names_now(trainee) == NAMES


def test_log_workout_lists_an_ambiguous_item_and_logs_nothing(
    trainee: Trainee, exercises: list[dict[str, Any]]
) -> None:
    """An item whose words match two exercises is a problem naming them; nothing is logged."""
    result = trainee.run("log_workout", {"completed_exercises": [{"exercise_id": "press"}]})

    assert not result.success
    (problem,) = result.data["problems"]
    assert problem.startswith("completed exercise 1: Which exercise? 'press' matches 2: ")
    assert not WorkoutLogEntry.objects.filter(log__user_id=trainee.user_id).exists()


@pytest.mark.parametrize(
    ("reference", "removed"),
    [
        ("the last one", "Push-Up"),
        ("drop the last exercise", "Push-Up"),
        ("the last stretch", "Chest Stretch"),
        ("the last warm-up exercise", "Jumping Jack"),
        ("the last one, the cool-down", "Chest Stretch"),
        # A position in words counts what the words name: the stretch, not the first lift (from the last read).
        ("the first stretch", "Chest Stretch"),
        ("the first one", "Dumbbell Bench Press"),
    ],
)
def test_the_last_one_is_the_last_main_exercise_not_the_cool_downs_stretch(
    trainee: Trainee, reference: str, removed: str
) -> None:
    """With a cool-down at the end, "the last one" is the last exercise trained (two model trials read it so, and
    one removed the stretch by it); words that name the stretch or the cool-down still reach the last entry."""
    workout = upper_body_workout()
    stretch = hold_exercise(7, exercise_name="Chest Stretch", sets=1, hold_sec=[30], rest_sec=0)
    stretch["group"] = {"id": "g_cool", "type": "cooldown", "position": 1}
    workout["exercises"].append(stretch)
    assert generate(trainee, workout).success
    result = remove(trainee, reference)
    assert result.success, result.formatted
    assert result.data["removed_exercise"]["exercise_name"] == removed
