"""log_completed_exercise, mark_exercise_complete and undo_logged_exercise (docs/contracts.md §11.5 (tool list))."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from datasources_app.models import CurrentWorkout, UserSettings, WorkoutLog, WorkoutLogEntry
from tests.datasources_app.factories import WorkoutLogEntryFactory
from tests.tools_app.workout_support import Trainee, generate, make_trainee, told
from tools_app.registry import execute_tool, get_tool
from tools_app.types import ToolContext
from tools_app.workout_tools import workout_exercises

pytestmark = pytest.mark.django_db


@pytest.fixture
def trainee() -> Trainee:
    return make_trainee()


@pytest.fixture
def planned(trainee: Trainee) -> list[dict[str, Any]]:
    """The current workout's exercises: 1 DB bench 3×[10,10,8] @ [20,20,22.5] kg, 2 push-up, 3 plank,
    4 outdoor run, 5 mountain climber intervals."""
    artifact = generate(trainee).artifact
    assert artifact is not None
    return workout_exercises(artifact)


def stored_exercises(trainee: Trainee) -> list[dict[str, Any]]:
    return workout_exercises(CurrentWorkout.objects.get(user_id=trainee.user_id).workout)


@pytest.mark.parametrize(
    ("name", "start", "done", "observation"),
    [
        ("log_completed_exercise", "Logging your exercise...", "Exercise logged", "summary"),
        ("mark_exercise_complete", "Marking exercise done...", "Exercise completed", "summary"),
        ("undo_logged_exercise", "Undoing that log...", "Log entry removed", "confirmation"),
    ],
)
def test_logging_tools_metadata(name: str, start: str, done: str, observation: str) -> None:
    """Status messages and observation sizes as in docs/contracts.md §11.2 (observations and status messages)."""
    tool = get_tool(name)
    assert (tool.status_start, tool.status_done, tool.category, tool.observation) == (
        start,
        done,
        "logging",
        observation,
    )


def test_mark_complete_logs_targets_as_actuals_and_persists_the_flag(
    trainee: Trainee, planned: list[dict[str, Any]]
) -> None:
    """The planned values become target and actual; the stored workout marks the exercise done in place."""
    artifact_id = CurrentWorkout.objects.get(user_id=trainee.user_id).artifact_id
    result = trainee.run("mark_exercise_complete", {"exercise_id": planned[0]["id"]})
    assert result.success, result.formatted
    entry = WorkoutLogEntry.objects.get(log__user_id=trainee.user_id)
    assert (entry.target_sets, entry.target_reps, entry.target_load_each) == (3, [10, 10, 8], [20, 20, 22.5])
    assert (entry.actual_sets, entry.actual_reps, entry.actual_load_each) == (3, [10, 10, 8], [20, 20, 22.5])
    assert (entry.exercise_slug, entry.load_unit, entry.target_rest_sec) == ("dumbbell-bench-press", "kg", 90)
    assert entry.muscles[0] == {"muscle": "Chest", "share": 0.7}
    assert entry.log.session_id == trainee.session.id
    current = CurrentWorkout.objects.get(user_id=trainee.user_id)
    assert current.artifact_id == artifact_id
    first = stored_exercises(trainee)[0]
    assert (first["completed"], first["log_entry_id"]) == (True, str(entry.id))
    assert result.raw_formatted == (
        "logged: Dumbbell Bench Press 3×10/10/8 @ 20/20/22.5kg each hand (marked done in the current workout "
        f"'Home Push & Core' ({artifact_id}, for today)); entry id={entry.id}\nStill open in Home Push & Core: "
        "Push-Up, Plank, Outdoor Run, Mountain Climber. If the user says they have finished the workout, "
        "log_workout records it now (what they did of these, or skipped); do not ask for the rest.\n"
        "Tell the user: Logged Dumbbell Bench Press 3×10/10/8 @ 20/20/22.5kg each hand. "
        "Nice work! Tell me when you've finished the rest and I'll log the workout."
    )


def test_mark_complete_takes_actual_values_in_seed_001_spelling(
    trainee: Trainee, planned: list[dict[str, Any]]
) -> None:
    """actual_* fields (scalar reps expanded per set) override the plan; rpe and notes are kept."""
    result = trainee.run(
        "mark_exercise_complete",
        {
            "exercise_id": 1,
            "actual_sets": 3,
            "actual_reps": 8,
            "actual_load_kg": 22,
            "rpe": 9,
            "notes": "hard",
        },
    )
    assert result.success, result.formatted
    entry = WorkoutLogEntry.objects.get(log__user_id=trainee.user_id)
    assert (entry.actual_reps, entry.actual_load_each, entry.rpe, entry.notes) == (
        [8, 8, 8],
        [22, 22, 22],
        9,
        "hard",
    )
    assert entry.target_reps == [10, 10, 8]
    assert "(target 3×10/10/8 @ 20/20/22.5kg) RPE 9" in result.raw_formatted


def test_mark_complete_twice_fails(trainee: Trainee, planned: list[dict[str, Any]]) -> None:
    """An exercise already ticked off is not logged again."""
    assert trainee.run("mark_exercise_complete", {"exercise_id": planned[2]["id"]}).success
    again = trainee.run("mark_exercise_complete", {"exercise_id": planned[2]["id"]})
    assert not again.success and "already logged" in again.data["error"]
    assert WorkoutLogEntry.objects.filter(log__user_id=trainee.user_id).count() == 1


def test_mark_complete_unknown_exercise_fails_listing_the_workout(
    trainee: Trainee, planned: list[dict[str, Any]]
) -> None:
    """An id that is not in the current workout fails with the ids that are."""
    result = trainee.run("mark_exercise_complete", {"exercise_id": "ex_nope"})
    assert not result.success
    assert "not in the current workout" in result.data["error"] and planned[0]["id"] in result.data["error"]


def test_mark_complete_without_a_workout_fails(trainee: Trainee) -> None:
    """Without a current workout there is nothing to tick off."""
    result = trainee.run("mark_exercise_complete", {"exercise_id": "1"})
    assert not result.success and "No active workout" in result.data["error"]
    assert not WorkoutLog.objects.filter(user_id=trainee.user_id).exists()


def test_mark_complete_updates_an_override_workout_only(
    trainee: Trainee, planned: list[dict[str, Any]]
) -> None:
    """With ToolContext.current_workout_override, the override is updated and the stored workout is not."""
    override = {"title": "Sub-agent workout", "exercises": [dict(planned[1])]}
    ctx = ToolContext(user_id=trainee.user_id, session=trainee.session, current_workout_override=override)
    result = execute_tool("mark_exercise_complete", {"exercise_id": planned[1]["id"]}, ctx)
    assert result.success, result.formatted
    assert ctx.current_workout_override is not None
    assert ctx.current_workout_override["exercises"][0]["completed"] is True
    assert not any(exercise.get("completed") for exercise in stored_exercises(trainee))


def test_log_completed_exercise_of_the_workout_by_id_and_by_name(
    trainee: Trainee, planned: list[dict[str, Any]]
) -> None:
    """exercise_id or a unique name of a workout exercise use its plan as target and tick it off."""
    by_id = trainee.run("log_completed_exercise", {"exercise_id": planned[3]["id"], "duration_min": 25})
    assert by_id.success, by_id.formatted
    by_name = trainee.run("log_completed_exercise", {"exercise_name": "plank", "hold_sec": [40, 40, 40]})
    assert by_name.success, by_name.formatted
    run = WorkoutLogEntry.objects.get(exercise_name="Outdoor Run")
    assert (run.target_duration_min, run.actual_duration_min, run.actual_distance) == (20, 25, 4)
    plank = WorkoutLogEntry.objects.get(exercise_name="Plank")
    assert (plank.target_hold_sec, plank.actual_hold_sec, plank.actual_sets) == (
        [30, 45, 60],
        [40, 40, 40],
        3,
    )
    done = [exercise["exercise_name"] for exercise in stored_exercises(trainee) if exercise.get("completed")]
    assert done == ["Plank", "Outdoor Run"]
    # Both entries land in one log of this session for today.
    assert WorkoutLog.objects.filter(user_id=trainee.user_id).count() == 1


def test_log_unplanned_catalogue_exercise_takes_muscles_from_the_catalogue(trainee: Trainee) -> None:
    """An exercise outside any workout is matched to the catalogue (name, slug, type, muscles, goal)."""
    result = trainee.run(
        "log_completed_exercise", {"exercise_name": "goblet squats", "reps": [12, 12], "load_each": [16, 16]}
    )
    assert result.success, result.formatted
    entry = WorkoutLogEntry.objects.get(log__user_id=trainee.user_id)
    assert (entry.exercise_name, entry.exercise_slug, entry.exercise_type) == (
        "Goblet Squat",
        "goblet-squat",
        "reps",
    )
    assert entry.muscles[0] == {"muscle": "Quadriceps", "share": 0.7}
    assert entry.goals == [{"goal": "strength", "share": 1.0}]
    assert (entry.target_reps, entry.actual_sets, entry.actual_reps) == ([], 2, [12, 12])
    assert result.data["log_entry_id"] == str(entry.id)


def test_log_seed_001_spelling_with_load_in_kg_for_a_pound_user(db: None) -> None:
    """Seed 001's strength type, scalar reps and load_kg are accepted; the load is stored in the user's lb."""
    trainee = make_trainee(weight_unit="lb")
    result = trainee.run(
        "log_completed_exercise",
        {
            "exercise_name": "Barbell Back Squat",
            "exercise_type": "strength",
            "sets": 3,
            "reps": 5,
            "load_kg": 100,
        },
    )
    assert result.success, result.formatted
    entry = WorkoutLogEntry.objects.get(log__user_id=trainee.user_id)
    assert (entry.exercise_type, entry.actual_reps, entry.actual_load_each, entry.load_unit) == (
        "reps",
        [5, 5, 5],
        [220, 220, 220],
        "lb",
    )
    assert "3×5 @ 220lb" in result.raw_formatted and "(converted 100 kg → 220 lb)" in result.raw_formatted
    assert told(result) == (
        "Logged Barbell Back Squat 3×5 @ 220lb (converted 100 kg → 220 lb). Nice work!"
    )  # no current workout: no "rest" to ask for


def test_loads_in_another_unit_are_converted_to_the_plans_unit(
    trainee: Trainee, planned: list[dict[str, Any]]
) -> None:
    """Actual loads given in lb against a kg plan are stored converted to kg."""
    result = trainee.run(
        "log_completed_exercise",
        {"exercise_id": planned[0]["id"], "load_each": [44.1, 44.1, 44.1], "load_unit": "lbs"},
    )
    assert result.success, result.formatted
    entry = WorkoutLogEntry.objects.get(log__user_id=trainee.user_id)
    assert entry.load_unit == "kg" and entry.actual_load_each == [20.0, 20.0, 20.0]


def test_log_unknown_exercise_with_own_muscles(trainee: Trainee) -> None:
    """A non-catalogue exercise keeps the given muscles (normalised) and goals."""
    result = trainee.run(
        "log_completed_exercise",
        {
            "exercise_name": "Sandbag carry",
            "exercise_type": "duration",
            "duration_min": 10,
            "muscles_utilized": [{"muscle": "forearms", "share": 1}, {"muscle": "Trapezius", "share": 1}],
            "goals_addressed": [{"goal": "Strength", "share": 1}],
        },
    )
    assert result.success, result.formatted
    entry = WorkoutLogEntry.objects.get(log__user_id=trainee.user_id)
    assert entry.muscles == [{"muscle": "Forearms", "share": 0.5}, {"muscle": "Trapezius", "share": 0.5}]
    assert entry.goals == [{"goal": "strength", "share": 1.0}]


def test_log_unknown_exercise_with_muscle_names(trainee: Trainee) -> None:
    """The advertised form: muscle names only, shared equally; the goals stay empty."""
    result = trainee.run(
        "log_completed_exercise",
        {
            "exercise_name": "Towel Row",
            "exercise_type": "reps",
            "reps": [12, 12],
            "muscles": ["back", "Biceps"],
        },
    )
    assert result.success, result.formatted
    entry = WorkoutLogEntry.objects.get(log__user_id=trainee.user_id)
    assert entry.muscles == [{"muscle": "Back", "share": 0.5}, {"muscle": "Biceps", "share": 0.5}]
    assert (entry.actual_sets, entry.actual_reps) == (2, [12, 12])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"sets": 3}, "Give exercise_id"),
        ({"exercise_name": "Mystery", "reps": [5], "muscles": ["Wings"]}, "Unknown muscles: Wings"),
        ({"exercise_name": "Goblet Squat"}, "Nothing to log for Goblet Squat (reps): give reps"),
        ({"exercise_name": "Mystery", "exercise_type": "hold"}, "give hold_sec"),
        (
            {"exercise_name": "Mystery", "reps": [5], "muscles_utilized": [{"muscle": "Wings", "share": 1}]},
            "Unknown muscles: Wings",
        ),
        ({"exercise_id": "ex_missing", "reps": [5]}, "No active workout"),
    ],
)
def test_log_completed_exercise_failures(trainee: Trainee, args: dict[str, Any], message: str) -> None:
    """No exercise, nothing done, an unknown muscle or an id without a workout fail; nothing is stored."""
    result = trainee.run("log_completed_exercise", args)
    assert not result.success
    assert message in result.data["error"]
    assert not WorkoutLog.objects.filter(user_id=trainee.user_id).exists()


def test_rpe_outside_1_to_10_is_refused(trainee: Trainee) -> None:
    """rpe is validated by the schema."""
    result = trainee.run("log_completed_exercise", {"exercise_name": "Goblet Squat", "reps": [5], "rpe": 11})
    assert not result.success and "rpe" in result.data["error"]


def test_undo_by_entry_id_reopens_the_workout_exercise(
    trainee: Trainee, planned: list[dict[str, Any]]
) -> None:
    """Undo deletes the entry (and its now empty log) and clears the exercise's completed flag."""
    logged = trainee.run("mark_exercise_complete", {"exercise_id": planned[0]["id"]})
    entry_id = logged.data["log_entry_id"]
    result = trainee.run("undo_logged_exercise", {"exercise_id": entry_id})
    assert result.success and result.raw_formatted == "removed (Dumbbell Bench Press)"
    assert result.data["workout_exercise_id"] == planned[0]["id"]
    assert not WorkoutLog.objects.filter(user_id=trainee.user_id).exists()
    assert "completed" not in stored_exercises(trainee)[0]


def test_undo_by_workout_exercise_id_and_log_entry_id_alias(
    trainee: Trainee, planned: list[dict[str, Any]]
) -> None:
    """The workout's exercise id finds its log entry; `log_entry_id` is accepted as the argument name."""
    trainee.run("mark_exercise_complete", {"exercise_id": planned[0]["id"]})
    second = trainee.run("mark_exercise_complete", {"exercise_id": planned[1]["id"]})
    assert trainee.run("undo_logged_exercise", {"exercise_id": planned[0]["id"]}).success
    assert trainee.run("undo_logged_exercise", {"log_entry_id": second.data["log_entry_id"]}).success
    assert not WorkoutLogEntry.objects.filter(log__user_id=trainee.user_id).exists()


@pytest.mark.parametrize("which", ["unknown", "other user", "not logged"])
def test_undo_unknown_or_foreign_entry_fails(
    trainee: Trainee, planned: list[dict[str, Any]], which: str
) -> None:
    """Only the user's own entries can be removed; the failure lists what they logged recently."""
    own = trainee.run("log_completed_exercise", {"exercise_name": "Goblet Squat", "reps": [5]}).data[
        "log_entry_id"
    ]
    foreign = WorkoutLogEntryFactory.create()
    reference = {"unknown": str(uuid.uuid4()), "other user": str(foreign.id), "not logged": planned[4]["id"]}[
        which
    ]
    result = trainee.run("undo_logged_exercise", {"exercise_id": reference})
    assert not result.success
    assert "No logged exercise" in result.data["error"] and own in result.data["error"]
    assert WorkoutLogEntry.objects.filter(id=foreign.id).exists()


def test_settings_unit_is_the_default_load_unit(db: None) -> None:
    """Without load_unit, loads of an unplanned exercise are in the user's unit."""
    trainee = make_trainee()
    UserSettings.objects.filter(user_id=trainee.user_id).update(weight_unit="lb")
    trainee.run("log_completed_exercise", {"exercise_name": "Goblet Squat", "reps": [8], "load_each": [35]})
    assert WorkoutLogEntry.objects.get(log__user_id=trainee.user_id).load_unit == "lb"


def test_log_workout_does_not_log_an_exercise_marked_complete_earlier(
    trainee: Trainee, planned: list[dict[str, Any]]
) -> None:
    """Finishing the workout with log_workout leaves exercises already logged during it alone (no double entry)."""
    assert trainee.run("mark_exercise_complete", {"exercise_id": planned[0]["id"]}).success
    result = trainee.run(
        "log_workout",
        {"completed_exercises": [{"exercise_id": planned[0]["id"]}, {"exercise_id": planned[1]["id"]}]},
    )
    assert result.success, result.formatted
    names = list(
        WorkoutLogEntry.objects.filter(log__user_id=trainee.user_id).values_list("exercise_name", flat=True)
    )
    assert sorted(names) == sorted([planned[0]["exercise_name"], planned[1]["exercise_name"]])
    assert result.data["already_logged_count"] == 1 and result.data["logged_count"] == 1
    assert result.raw_formatted.split(". ", 1)[1].startswith(
        f"Logged 2 exercises ({planned[1]['exercise_name']}, {planned[0]['exercise_name']} logged earlier)."
    ), result.raw_formatted
    assert told(result) == (
        f"Logged 2 exercises (with {planned[0]['exercise_name']} from earlier, in the same workout). Nice work! "
        "Next time I'll build on these numbers."
    )
    assert not CurrentWorkout.objects.filter(user_id=trainee.user_id).exists()


def current_workout_lines(trainee: Trainee) -> list[str]:
    """The current workout's exercise lines as the model reads them (fetch_data current_workout_session)."""
    result = trainee.run("fetch_data", {"sources": ["current_workout_session"]})
    assert result.success, result.formatted
    return [line for line in result.raw_formatted.splitlines() if line[:1] in "✓○"]


def test_the_current_workout_shows_what_was_logged_beside_the_plan(
    trainee: Trainee, planned: list[dict[str, Any]]
) -> None:
    """After 3×8 @ 25 kg was logged where 3×10/10/8 @ 20/20/22.5 kg was planned, the current workout reads
    what was done, the plan beside it; an exercise logged as planned reads the plan once."""
    logged = {"exercise_id": planned[0]["id"], "reps": [8, 8, 8], "load_each": [25, 25, 25], "rpe": 8}
    assert trainee.run("log_completed_exercise", logged).success
    assert trainee.run("mark_exercise_complete", {"exercise_id": planned[2]["id"]}).success
    press, push_up, plank, *_ = current_workout_lines(trainee)
    assert press == (
        "✓ 1. Dumbbell Bench Press (reps) 3×8 @ 25kg each hand (planned 3×10/10/8 @ 20/20/22.5kg each hand) RPE 8"
    )
    assert push_up == "○ 2. Push-Up (reps) 3×15/12/10"
    assert plank == "✓ 3. Plank (hold) 3×30/45/60s"


def test_an_undone_log_leaves_the_plan_to_read(trainee: Trainee, planned: list[dict[str, Any]]) -> None:
    """Undoing the entry reopens the exercise, and its line reads the plan again."""
    logged = {"exercise_id": planned[0]["id"], "reps": [8, 8, 8], "load_each": [25, 25, 25]}
    assert trainee.run("log_completed_exercise", logged).success
    assert trainee.run("undo_logged_exercise", {"exercise_id": planned[0]["id"]}).success
    assert current_workout_lines(trainee)[0] == (
        "○ 1. Dumbbell Bench Press (reps) 3×10/10/8 @ 20/20/22.5kg each hand"
    )


def test_another_users_log_entry_is_never_read_into_the_workout(
    trainee: Trainee, planned: list[dict[str, Any]]
) -> None:
    """A workout (e.g. sent by a client) pointing at someone else's log entry reads its plan, not their sets."""
    other = make_trainee()
    generate(other)
    logged = {"exercise_id": "1", "reps": [5, 5, 5], "load_each": [40, 40, 40]}
    assert other.run("log_completed_exercise", logged).success
    foreign = stored_exercises(other)[0]["log_entry_id"]
    current = CurrentWorkout.objects.get(user_id=trainee.user_id)
    current.workout["exercises"][0] |= {"completed": True, "log_entry_id": foreign}
    current.save()
    assert current_workout_lines(trainee)[0] == (
        "✓ 1. Dumbbell Bench Press (reps) 3×10/10/8 @ 20/20/22.5kg each hand"
    )


@pytest.mark.parametrize("tool", ["log_completed_exercise", "mark_exercise_complete"])
def test_a_set_heavier_than_the_home_lists_is_logged_and_said(
    trainee: Trainee, planned: list[dict[str, Any]], tool: str
) -> None:
    """Sets logged during the workout at 27.5 kg, above the home's 25 kg dumbbells: logged, and the model
    is told that new workouts there stop at 25 kg until the user adds heavier dumbbells in the app."""
    trainee.home.available_weights_kg = {"dumbbells": [10, 15, 20, 22.5, 25]}
    trainee.home.save()
    result = trainee.run(tool, {"exercise_id": planned[0]["id"], "load_each": [27.5, 27.5, 27.5]})
    assert result.success, result.formatted
    assert result.raw_formatted.splitlines()[1] == (
        "The 27.5 kg logged for Dumbbell Bench Press is more than the heaviest dumbbells listed at Home (25 kg): "
        "new workouts there stop at 25 kg until the user adds heavier ones to Home in the app (no tool changes a "
        "location's equipment)."
    )


def test_an_unplanned_exercise_is_compared_with_its_catalogue_equipment(trainee: Trainee) -> None:
    """Hammer curls at 30 kg with no workout: the catalogue says they take dumbbells, the home's stop at 25 kg."""
    trainee.home.available_weights_kg = {"dumbbells": [10, 15, 20, 25]}
    trainee.home.save()
    args = {"exercise_name": "Hammer Curl", "sets": 3, "reps": [10], "load_each": [30]}
    result = trainee.run("log_completed_exercise", args)
    assert result.success, result.formatted
    assert "The 30 kg logged for Hammer Curl is more than the heaviest dumbbells listed at Home (25 kg)" in (
        result.raw_formatted
    )
