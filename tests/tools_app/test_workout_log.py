"""log_workout (docs/contracts.md §12.6 (workout tools)): targets and actuals recorded apart, the current workout cleared."""

from __future__ import annotations

from typing import Any

import pytest

from datasources_app.models import WorkoutLog, WorkoutLogEntry
from datasources_app.selectors import get_current_workout
from tests.tools_app.workout_support import (
    Trainee,
    full_workout,
    generate,
    make_trainee,
    reps_exercise,
    told,
    upper_body_workout,
)
from tools_app.types import ToolContext
from tools_app.workout_tools import workout_exercises

pytestmark = pytest.mark.django_db


@pytest.fixture
def trainee() -> Trainee:
    return make_trainee()


@pytest.fixture
def exercises(trainee: Trainee) -> list[dict[str, Any]]:
    artifact = generate(trainee).artifact
    assert artifact is not None
    return workout_exercises(artifact)


def entries_of(log: WorkoutLog) -> list[WorkoutLogEntry]:
    return list(log.entries.order_by("order"))


def test_log_records_targets_beside_actuals_and_clears_the_workout(
    trainee: Trainee, exercises: list[dict[str, Any]]
) -> None:
    """Each completed exercise is stored with its planned and actual values; the workout is cleared."""
    completed = [
        {
            "exercise_id": exercises[0]["id"],
            "sets": 3,
            "reps": [10, 9, 7],
            "load_each": [20, 20, 20],
            "rpe": 8,
        },
        {"exercise_id": "3", "hold_sec": [30, 40, 45]},
        {"exercise_id": exercises[3]["id"], "duration_min": 22, "distance": 4.2},
        {"exercise_id": 5, "skipped": True, "notes": "ran out of time"},
    ]
    result = trainee.run("log_workout", {"completed_exercises": completed, "workout_notes": "Felt strong"})
    assert result.success, result.formatted
    log = WorkoutLog.objects.get(user_id=trainee.user_id)
    assert result.data == {
        "logged_count": 4,
        "total_in_workout": 5,
        "skipped_count": 1,
        "already_logged_count": 0,
        "log_id": str(log.id),
        "artifact_id": log.artifact_id,
        "title": "Home Push & Core",
    }
    assert (log.title, log.notes, log.session_id) == ("Home Push & Core", "Felt strong", trainee.session.id)
    assert log.artifact_id.startswith("art_")
    press, plank, run, climber = entries_of(log)
    assert (press.exercise_name, press.exercise_slug, press.exercise_type, press.order) == (
        "Dumbbell Bench Press",
        "dumbbell-bench-press",
        "reps",
        1,
    )
    assert (press.target_sets, press.target_reps, press.target_load_each, press.target_rest_sec) == (
        3,
        [10, 10, 8],
        [20, 20, 22.5],
        90,
    )
    assert (press.actual_sets, press.actual_reps, press.actual_load_each, press.rpe) == (
        3,
        [10, 9, 7],
        [20, 20, 20],
        8,
    )
    assert press.load_unit == "kg"
    assert press.muscles[0] == {"muscle": "Chest", "share": 0.7}
    assert press.goals[0] == {"goal": "strength", "share": 0.6}
    assert (plank.target_hold_sec, plank.actual_hold_sec, plank.actual_sets) == (
        [30, 45, 60],
        [30, 40, 45],
        3,
    )
    assert (run.target_duration_min, run.actual_duration_min, run.actual_distance, run.distance_unit) == (
        20,
        22,
        4.2,
        "km",
    )
    assert climber.skipped and climber.actual_rounds is None and climber.target_rounds == 8
    assert climber.notes == "ran out of time"
    assert get_current_workout(user_id=trainee.user_id) is None
    assert result.raw_formatted == (
        f"Workout logged: 'Home Push & Core' ({log.artifact_id}, for today). "
        "Logged 3 exercises (Dumbbell Bench Press, Plank, Outdoor Run). Skipped: Mountain Climber. "
        "Not given, so not logged: Push-Up. The current workout is cleared.\n"
        "Tell the user: Logged 3 exercises, and Mountain Climber as skipped. Nice work! Next time I'll build on these "
        "numbers."
    )
    assert result.status_message == "Workout logged"


def test_omitted_actuals_count_as_done_as_planned(trainee: Trainee, exercises: list[dict[str, Any]]) -> None:
    """An exercise given by id alone is logged with the planned values as actuals."""
    trainee.run("log_workout", {"completed_exercises": [{"exercise_id": "1"}]})
    (entry,) = WorkoutLogEntry.objects.filter(log__user_id=trainee.user_id)
    assert (entry.actual_sets, entry.actual_reps, entry.actual_load_each) == (3, [10, 10, 8], [20, 20, 22.5])


def test_an_unplanned_exercise_can_be_logged_by_name(
    trainee: Trainee, exercises: list[dict[str, Any]]
) -> None:
    """A name not in the workout is logged as an extra exercise after the planned ones."""
    completed = [{"exercise_name": "Plank"}, {"name": "Burpee", "sets": 2, "reps": [10, 10]}]
    result = trainee.run("log_workout", {"completed_exercises": completed})
    assert result.success, result.formatted
    plank, burpee = entries_of(WorkoutLog.objects.get(user_id=trainee.user_id))
    assert (plank.order, plank.target_hold_sec) == (3, [30, 45, 60])
    assert (burpee.order, burpee.exercise_slug, burpee.exercise_type) == (6, "burpee", "reps")
    assert (burpee.target_sets, burpee.actual_sets, burpee.actual_reps) == (None, 2, [10, 10])


def test_an_unplanned_exercise_is_counted_beside_the_plan_not_in_it(
    trainee: Trainee, exercises: list[dict[str, Any]]
) -> None:
    """The knee trial read "Logged 8 of 7 exercises": the whole plan done and a box squat the plan did not have."""
    args = {
        "completed_exercises": [{"name": "Burpee", "sets": 2, "reps": [10, 10]}],
        "others_as_planned": True,
    }
    result = trainee.run("log_workout", args)
    assert result.success, result.formatted
    assert result.raw_formatted.split(". ", 1)[1].startswith(
        "Logged 6 exercises (Dumbbell Bench Press, Push-Up, Plank, Outdoor Run, Mountain Climber, Burpee). "
        "Not in the plan: Burpee."
    ), result.raw_formatted


def test_a_logged_workout_with_a_warm_up_and_a_skip_gives_the_model_the_count_it_tells_the_user(
    trainee: Trainee,
) -> None:
    """A trial read "Logged 9 of the workout's 9 exercises (1 skipped)" beside "Tell the user: Logged 5 exercises,
    plus the warm-up": the result now says the user's count once (the exercises trained, named; the warm-up
    beside them; the skip apart), the same count the user is told."""
    assert generate(trainee, upper_body_workout()).success
    result = trainee.run(
        "log_workout",
        {"completed_exercises": [{"exercise_id": "3", "skipped": True}], "others_as_planned": True},
    )
    assert result.success, result.formatted
    assert [line.split("). ", 1)[-1] for line in result.raw_formatted.splitlines()] == [
        "Logged 4 exercises (Dumbbell Bench Press, Dumbbell Biceps Curl, Band Pull-Apart, Push-Up), plus the "
        "warm-up. Skipped: Seated Dumbbell Shoulder Press. The current workout is cleared.",
        "Tell the user: Logged 4 exercises, plus the warm-up, and Seated Dumbbell Shoulder Press as skipped. Nice "
        "work! Next time I'll build on these numbers.",
    ]


def test_seed_001_spellings_are_accepted(trainee: Trainee, exercises: list[dict[str, Any]]) -> None:
    """exercise_order, a scalar load, `exercises` and `notes` are normalised."""
    args = {"exercises": [{"exercise_order": 1, "sets": 3, "load": 25}], "notes": "ok"}
    result = trainee.run("log_workout", args)
    assert result.success, result.formatted
    (entry,) = WorkoutLogEntry.objects.filter(log__user_id=trainee.user_id)
    assert entry.actual_load_each == [25, 25, 25] and entry.log.notes == "ok"


def test_without_a_current_workout_logging_fails(trainee: Trainee) -> None:
    """'No active workout' and nothing is stored."""
    result = trainee.run("log_workout", {"completed_exercises": [{"exercise_id": "1"}]})
    assert not result.success
    assert result.data["error"] == "No active workout: create one with generate_workout first."
    assert not WorkoutLog.objects.filter(user_id=trainee.user_id).exists()


def test_bad_references_fail_with_every_problem_and_keep_the_workout(
    trainee: Trainee, exercises: list[dict[str, Any]]
) -> None:
    """Unknown ids, repeats and items without id or name are all listed; nothing is logged or cleared."""
    completed = [
        {"exercise_id": "ex_gone00"},
        {"exercise_id": "1"},
        {"exercise_id": exercises[0]["id"]},
        {"sets": 3},
    ]
    result = trainee.run("log_workout", {"completed_exercises": completed})
    assert not result.success
    assert result.data["problems"] == [
        "completed exercise 1: 'ex_gone00' is not in the current workout",
        f"completed exercise 3: {exercises[0]['id']} was already given as completed exercise 2",
        "completed exercise 4: give exercise_id or exercise_name",
    ]
    assert not WorkoutLog.objects.filter(user_id=trainee.user_id).exists()
    assert get_current_workout(user_id=trainee.user_id) is not None


def test_rpe_outside_one_to_ten_is_an_argument_error(
    trainee: Trainee, exercises: list[dict[str, Any]]
) -> None:
    """RPE is validated with the arguments, naming the field."""
    result = trainee.run("log_workout", {"completed_exercises": [{"exercise_id": "1", "rpe": 11}]})
    assert not result.success
    assert result.data["error"].startswith("Invalid arguments for log_workout: completed_exercises.0.rpe:")


@pytest.mark.parametrize(
    "args", [{"others_as_planned": True}, {"completed_exercises": [], "others_as_planned": True}]
)
def test_the_whole_workout_as_planned_needs_no_list(
    trainee: Trainee, exercises: list[dict[str, Any]], args: dict[str, Any]
) -> None:
    """'I did the whole workout as planned': others_as_planned alone logs every exercise at its plan."""
    result = trainee.run("log_workout", args)
    assert result.success, result.formatted
    assert result.data["logged_count"] == result.data["total_in_workout"] == 5
    press, *_ = entries_of(WorkoutLog.objects.get(user_id=trainee.user_id))
    assert (press.actual_reps, press.actual_load_each) == ([10, 10, 8], [20, 20, 22.5])
    assert get_current_workout(user_id=trainee.user_id) is None


@pytest.mark.parametrize("args", [{}, {"completed_exercises": []}, {"others_as_planned": False}])
def test_nothing_to_log_is_refused_saying_what_to_send(
    trainee: Trainee, exercises: list[dict[str, Any]], args: dict[str, Any]
) -> None:
    """No exercise listed and not as planned: refused, naming both ways to log; the workout stays."""
    result = trainee.run("log_workout", args)
    assert not result.success
    assert result.data["error"] == (
        "Nothing was logged: list the exercises done or skipped in completed_exercises, or set "
        "others_as_planned to true when the whole workout was done as planned."
    )
    assert not WorkoutLog.objects.filter(user_id=trainee.user_id).exists()
    assert get_current_workout(user_id=trainee.user_id) is not None


def test_logging_an_override_workout_clears_only_the_override(
    trainee: Trainee, exercises: list[dict[str, Any]]
) -> None:
    """With an override, the log is recorded and the override cleared; the stored workout stays."""
    stored = get_current_workout(user_id=trainee.user_id)
    assert stored is not None
    ctx = ToolContext(
        user_id=trainee.user_id, session=trainee.session, current_workout_override=dict(stored.workout)
    )
    trainee.ctx = ctx
    result = trainee.run("log_workout", {"completed_exercises": [{"exercise_id": "2"}]})
    assert result.success, result.formatted
    assert ctx.current_workout_override is None
    assert get_current_workout(user_id=trainee.user_id) is not None
    assert WorkoutLog.objects.filter(user_id=trainee.user_id).count() == 1


HOME_DUMBBELLS = {"dumbbells": [5, 7.5, 10, 12.5, 15, 17.5, 20, 22.5, 25]}
BEYOND_HOME = (
    "The 27.5 kg logged for Dumbbell Bench Press is more than the heaviest dumbbells listed at Home (25 kg): "
    "new workouts there stop at 25 kg until the user adds heavier ones to Home in the app (no tool changes a "
    "location's equipment)."
)


def test_a_load_heavier_than_the_home_lists_is_logged_and_said(
    trainee: Trainee, exercises: list[dict[str, Any]]
) -> None:
    """27.5 kg dumbbells at a home whose dumbbells stop at 25 kg: logged as the user said, and the model is told
    in one sentence so it can ask about the equipment."""
    trainee.home.available_weights_kg = HOME_DUMBBELLS
    trainee.home.save()
    done = {"exercise_id": "1", "reps": [8, 8, 8], "load_each": [27.5, 27.5, 27.5]}
    result = trainee.run("log_workout", {"completed_exercises": [done], "others_as_planned": True})
    assert result.success, result.formatted
    assert WorkoutLogEntry.objects.get(exercise_name="Dumbbell Bench Press").actual_load_each == [27.5] * 3
    assert result.raw_formatted.splitlines()[0].endswith(f"The current workout is cleared. {BEYOND_HOME}")
    assert BEYOND_HOME not in told(result)


def test_loads_within_what_the_home_lists_say_nothing_of_it(
    trainee: Trainee, exercises: list[dict[str, Any]]
) -> None:
    """25 kg, the heaviest pair at home, and an unplanned bodyweight exercise: no equipment sentence."""
    trainee.home.available_weights_kg = HOME_DUMBBELLS
    trainee.home.save()
    done = [{"exercise_id": "1", "load_each": [25, 25, 25]}, {"exercise_name": "Burpee", "reps": [10]}]
    result = trainee.run("log_workout", {"completed_exercises": done, "others_as_planned": True})
    assert result.success, result.formatted
    assert "heaviest" not in result.raw_formatted


def test_a_pound_load_is_compared_in_pounds(db: None) -> None:
    """60 lb where the home's dumbbells stop at 25 kg (55 lb): said in the user's unit."""
    trainee = make_trainee(weight_unit="lb")
    trainee.home.available_weights_kg = HOME_DUMBBELLS
    trainee.home.save()
    generate(trainee, full_workout(exercises=[reps_exercise(load_each=[45, 45, 50], load_unit="lb")]))
    result = trainee.run(
        "log_workout", {"completed_exercises": [{"exercise_id": "1", "load_each": [60] * 3}]}
    )
    assert result.success, result.formatted
    assert (
        "The 60 lb logged for Dumbbell Bench Press is more than the heaviest dumbbells listed at Home (55 lb): "
        "new workouts there stop at 55 lb until the user adds heavier ones to Home in the app"
    ) in result.raw_formatted


def test_a_load_done_as_planned_is_not_news(trainee: Trainee) -> None:
    """A workout planned at 30 kg (made for another location) logged as planned at Home says nothing of it:
    only a load the user reports is theirs to confirm."""
    generate(trainee, full_workout(exercises=[reps_exercise(load_each=[30, 30, 30])]))
    trainee.home.available_weights_kg = HOME_DUMBBELLS
    trainee.home.save()
    result = trainee.run("log_workout", {"others_as_planned": True})
    assert result.success, result.formatted
    assert "heaviest" not in result.raw_formatted
