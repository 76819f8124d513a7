"""generate_workout (docs/contracts.md §12 (workouts)): validation before storage, the artifact, persistence."""

from __future__ import annotations

import json
import re
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from datasources_app.catalog import MUSCLES
from datasources_app.models import Location, Preference
from datasources_app.selectors import get_current_workout
from datasources_app.services import set_current_location
from datasources_app.sources import fetch_and_format
from datasources_app.workouts import StoredWorkout
from tests.datasources_app.factories import PreferenceFactory
from tests.tools_app.workout_support import (
    Trainee,
    bodyweight_exercise,
    duration_exercise,
    full_workout,
    generate,
    hold_exercise,
    intervals_exercise,
    make_trainee,
    once,
    reps_exercise,
)
from tools_app.registry import get_tool, tool_specs
from tools_app.types import ToolContext
from tools_app.workout_tools import current_workout_record

pytestmark = pytest.mark.django_db


@pytest.fixture
def trainee() -> Trainee:
    return make_trainee()


def problems_of(result: Any) -> list[str]:
    assert not result.success, result.formatted
    problems: list[str] = result.data["problems"]
    return problems


def only_problem(result: Any) -> str:
    problems = problems_of(result)
    assert len(problems) == 1, problems
    return problems[0]


@pytest.mark.parametrize(
    ("name", "start", "done"),
    [
        ("generate_workout", "Creating your workout...", "Workout ready"),
        ("swap_exercise", "Finding alternative...", "Exercise swapped"),
        ("adjust_exercise", "Adjusting exercise...", "Exercise updated"),
        ("remove_exercise", "Removing exercise...", "Exercise removed"),
        ("log_workout", "Saving your workout...", "Workout logged"),
    ],
)
def test_status_messages_follow_the_seed_table(name: str, start: str, done: str) -> None:
    """docs/contracts.md §11.2 (observations and status messages) status messages for the workout tools."""
    tool = get_tool(name)
    assert (tool.status_start, tool.status_done) == (start, done)


def test_schema_shows_only_the_canonical_field_names() -> None:
    """The model is shown seed 000's names; seed 001's spellings are accepted but not advertised."""
    (spec,) = tool_specs(["generate_workout"])
    exercise = spec["input_schema"]["properties"]["workout"]["properties"]["exercises"]["items"]
    props = exercise["properties"]
    assert {"exercise_name", "exercise_type", "muscles_utilized", "goals_addressed"} <= set(props)
    assert not {"name", "type", "muscles", "goals", "load"} & set(props)
    assert props["muscles_utilized"]["items"]["properties"]["muscle"]["enum"] == list(MUSCLES)
    assert set(props["goals_addressed"]["items"]["properties"]) == {"goal", "share"}
    assert props["exercise_type"]["enum"] == ["reps", "hold", "duration", "intervals"]
    assert "$defs" not in str(spec) and "$ref" not in str(spec)


def test_valid_workout_becomes_an_exercise_list_artifact(trainee: Trainee) -> None:
    """A valid workout gets an art_ id, the seed artifact shape, ex_ ids and canonical field names."""
    result = generate(trainee)
    assert result.success, result.formatted
    artifact = result.artifact
    assert artifact is not None
    assert re.fullmatch(r"art_[0-9a-f]{12}", artifact["artifact_id"])
    assert result.artifact_id == artifact["artifact_id"]
    assert set(artifact) == {
        "artifact_id",
        "type",
        "schema_version",
        "title",
        "summary",
        "auto_start",
        "payload",
    }
    assert (artifact["type"], artifact["schema_version"], artifact["auto_start"]) == (
        "exercise_list",
        "1.0",
        False,
    )
    assert artifact["title"] == artifact["payload"]["title"] == "Home Push & Core"
    exercises = artifact["payload"]["exercises"]
    assert [exercise["order"] for exercise in exercises] == [1, 2, 3, 4, 5]
    assert len({exercise["id"] for exercise in exercises}) == 5
    assert all(re.fullmatch(r"ex_[0-9a-f]{6}", exercise["id"]) for exercise in exercises)
    first = exercises[0]
    assert first["exercise_name"] == "Dumbbell Bench Press"
    assert first["exercise_slug"] == "dumbbell-bench-press"
    assert first["exercise_type"] == "reps"
    assert first["muscles_utilized"][0] == {"muscle": "Chest", "share": 0.7}
    assert first["goals_addressed"][0] == {"goal": "strength", "share": 0.6}
    assert (first["sets"], first["reps"], first["load_each"], first["load_unit"]) == (
        3,
        [10, 10, 8],
        [20, 20, 22.5],
        "kg",
    )
    assert exercises[1]["equipment"] == [] and "load_unit" not in exercises[1]
    assert exercises[3]["distance_unit"] == "km" and "sets" not in exercises[3]
    summary = artifact["summary"]
    assert summary["exercise_count"] == 5
    assert summary["muscles_targeted"][0] == "Chest"
    assert set(summary["primary_goals"]) <= {"strength", "hypertrophy", "stability", "cardio", "endurance"}
    assert summary["estimated_duration_min"] > 20
    assert result.data == {
        "artifact_id": artifact["artifact_id"],
        "exercise_count": 5,
        "summary": summary,
        "warnings": [],
    }


def test_formatted_result_lists_exercises_and_demands_delivery(trainee: Trainee) -> None:
    """The observation lists each exercise with its id and ends with the seed's IMPORTANT reminder."""
    result = generate(trainee)
    artifact_id = result.data["artifact_id"]
    exercise_id = result.artifact["payload"]["exercises"][0]["id"]  # type: ignore[index]
    assert (
        f"{exercise_id}: Dumbbell Bench Press (reps) [order: 1] - 3×10/10/8 @ 20/20/22.5kg each hand"
        in result.raw_formatted
    )
    assert "Plank (hold) [order: 3] - 3×30/45/60s" in result.raw_formatted
    assert result.raw_formatted.endswith(
        f"IMPORTANT: You MUST now call message_notify_user with artifact_id={artifact_id} to deliver this workout."
    )
    assert result.formatted.startswith('<tool_result name="generate_workout">')
    assert result.status_message == "Workout ready"


def test_valid_workout_is_persisted_as_the_current_workout(trainee: Trainee) -> None:
    """The artifact is stored in the database for the user, with the session that made it."""
    result = generate(trainee)
    current = get_current_workout(user_id=trainee.user_id)
    assert current is not None
    assert current.workout == current_workout_record(result.artifact)  # type: ignore[arg-type]
    assert current.artifact_id == result.data["artifact_id"]
    assert current.session_id == trainee.session.id


def test_the_current_workout_data_source_shows_the_generated_workout(trainee: Trainee) -> None:
    """The stored record is what the current_workout_session source reads: title, artifact id, exercises."""
    result = generate(trainee)
    text = fetch_and_format(user_id=trainee.user_id, source="current_workout_session").text
    assert f'title="Home Push & Core" artifact_id="{result.data["artifact_id"]}"' in text
    assert "Progress: 0/5" in text and "Mountain Climber" in text


def test_a_second_workout_replaces_the_first(trainee: Trainee) -> None:
    """Only the newest workout is current."""
    generate(trainee)
    second = generate(trainee, full_workout(title="Second"))
    current = get_current_workout(user_id=trainee.user_id)
    assert current is not None and current.artifact_id == second.data["artifact_id"]


def test_exercises_are_stored_in_order_whatever_the_list_order(trainee: Trainee) -> None:
    """Orders decide the stored sequence."""
    workout = {"title": "Mixed", "exercises": [hold_exercise(2), reps_exercise(1)]}
    result = generate(trainee, workout)
    names = [exercise["exercise_name"] for exercise in result.artifact["payload"]["exercises"]]  # type: ignore[index]
    assert names == ["Dumbbell Bench Press", "Plank"]


def test_missing_title_and_summary_are_computed(trainee: Trainee) -> None:
    """Without title or summary, both are derived from the exercises."""
    result = generate(trainee, {"exercises": [reps_exercise(1)]})
    artifact = result.artifact
    assert artifact is not None
    assert artifact["title"] == "Chest & Triceps workout"
    assert artifact["summary"]["muscles_targeted"] == ["Chest", "Triceps", "Shoulders"]
    assert artifact["summary"]["primary_goals"] == ["strength", "hypertrophy"]


def test_given_summary_is_kept(trainee: Trainee) -> None:
    """A summary from the model is used as given."""
    summary = {"estimated_duration_min": 35, "primary_goals": ["strength"], "muscles_targeted": ["Chest"]}
    result = generate(trainee, full_workout(summary=summary, auto_start=True))
    assert result.artifact is not None
    assert result.artifact["summary"] == {"exercise_count": 5, **summary}
    assert result.artifact["auto_start"] is True


def test_equipment_is_inferred_from_the_catalogue_when_omitted(trainee: Trainee) -> None:
    """A known exercise without an equipment list takes the catalogue's."""
    exercise = reps_exercise(1, exercise_name="Dumbbell Lateral Raise")
    del exercise["equipment"]
    result = generate(trainee, {"exercises": [exercise]})
    stored = result.artifact["payload"]["exercises"][0]  # type: ignore[index]
    assert stored["equipment"] == ["dumbbells"]
    assert stored["exercise_slug"] == "dumbbell-lateral-raise"


def test_seed_001_spellings_are_normalised(trainee: Trainee) -> None:
    """name/type/muscles/goals/{name, share}, a scalar load and top-level exercises are accepted."""
    exercise = {
        "name": "Dumbbell Bench Press",
        "type": "Reps",
        "order": 1,
        "sets": 3,
        "reps": [10, 10, 10],
        "load": 20,
        "load_unit": "kgs",
        "rest_sec": 90,
        "muscles": [{"name": "chest", "share": 0.8}, {"name": "lower_back", "share": 0.2}],
        "goals": [{"name": "Strength", "share": 1.0}],
        "reasoning": "Seed 001 style.",
        "equipment": ["Dumbbell", "bench"],
    }
    result = trainee.run("generate_workout", {"exercises": [exercise]})
    assert result.success, result.formatted
    stored = result.artifact["payload"]["exercises"][0]  # type: ignore[index]
    assert stored["exercise_name"] == "Dumbbell Bench Press"
    assert stored["exercise_type"] == "reps"
    assert stored["load_each"] == [20, 20, 20] and stored["load_unit"] == "kg"
    assert stored["muscles_utilized"] == [
        {"muscle": "Chest", "share": 0.8},
        {"muscle": "Lower Back", "share": 0.2},
    ]
    assert stored["goals_addressed"] == [{"goal": "strength", "share": 1.0}]
    assert stored["equipment"] == ["dumbbells", "bench"]
    assert not {"name", "type", "muscles", "goals", "load"} & set(stored)


def test_single_numbers_for_per_set_fields_are_spread_over_the_sets(trainee: Trainee) -> None:
    """reps: 10 with 3 sets means [10, 10, 10]; the same for hold_sec and load_each."""
    workout = {"exercises": [reps_exercise(1, reps=10, load_each=20), hold_exercise(2, hold_sec=30)]}
    result = generate(trainee, workout)
    assert result.success, result.formatted
    press, plank = result.artifact["payload"]["exercises"]  # type: ignore[index]
    assert (press["reps"], press["load_each"], plank["hold_sec"]) == (
        [10, 10, 10],
        [20, 20, 20],
        [30, 30, 30],
    )


def test_pounds_spelled_lbs_are_accepted_for_a_user_in_pounds(db: None) -> None:
    """'lbs' is the seed 001 spelling of lb; a user who trains in lb may use it."""
    trainee = make_trainee(weight_unit="lb")
    result = generate(trainee, {"exercises": [reps_exercise(1, load_unit="lbs", load_each=[45, 45, 50])]})
    assert result.success, result.formatted
    assert result.artifact["payload"]["exercises"][0]["load_unit"] == "lb"  # type: ignore[index]


def test_load_without_unit_takes_the_users_unit(db: None) -> None:
    """load_each without load_unit is read in the user's unit."""
    trainee = make_trainee(weight_unit="lb")
    exercise = reps_exercise(1)
    del exercise["load_unit"]
    result = generate(trainee, {"exercises": [exercise]})
    assert result.artifact["payload"]["exercises"][0]["load_unit"] == "lb"  # type: ignore[index]


def test_a_superset_is_accepted_and_kept(trainee: Trainee) -> None:
    """Grouped exercises next to each other with positions 1..k are valid and stored with their group."""
    first = once(
        reps_exercise(
            1, group={"id": "ss-1", "type": "superset", "position": 1, "name": "Finisher", "rounds": 3}
        )
    )
    second = once(bodyweight_exercise(2, group={"id": "ss-1", "type": "Superset", "position": 2}))
    result = generate(trainee, {"exercises": [first, second]})
    assert result.success, result.formatted
    stored = result.artifact["payload"]["exercises"]  # type: ignore[index]
    assert stored[0]["group"] == {
        "id": "ss-1",
        "type": "superset",
        "position": 1,
        "name": "Finisher",
        "rounds": 3,
    }
    assert stored[1]["group"] == {"id": "ss-1", "type": "superset", "position": 2}
    assert (
        "{superset ss-1 #1, 3 rounds}" in result.raw_formatted
        and "{superset ss-1 #2}" in result.raw_formatted
    )


def test_one_shot_preferences_are_consumed_by_a_generated_workout(trainee: Trainee) -> None:
    """delete_after_use preferences are deleted once a workout is created, permanent ones stay."""
    PreferenceFactory.create(user_id=trainee.user_id, delete_after_use=True, preference_type="temporary")
    kept = PreferenceFactory.create(user_id=trainee.user_id)
    generate(trainee)
    assert list(Preference.objects.filter(user_id=trainee.user_id)) == [kept]


def test_override_receives_the_new_workout_too(trainee: Trainee) -> None:
    """With a current-workout override, the new workout replaces the override as well as the stored one."""
    ctx = ToolContext(
        user_id=trainee.user_id, session=trainee.session, current_workout_override={"exercises": []}
    )
    trainee.ctx = ctx
    result = generate(trainee)
    assert ctx.current_workout_override == current_workout_record(result.artifact)  # type: ignore[arg-type]
    assert get_current_workout(user_id=trainee.user_id) is not None


# --- Failures ------------------------------------------------------------------------------------------------------


def assert_nothing_stored(trainee: Trainee) -> None:
    assert get_current_workout(user_id=trainee.user_id) is None


def test_invalid_workout_lists_every_problem_and_stores_nothing(trainee: Trainee) -> None:
    """All problems come back at once, each naming its exercise, and nothing is stored or consumed."""
    one_shot = PreferenceFactory.create(
        user_id=trainee.user_id, delete_after_use=True, preference_type="temporary"
    )
    workout = full_workout()
    workout["exercises"][0].update(exercise_name="Barbell Row", load_unit="lb", equipment=["barbell"])
    workout["exercises"][1]["muscles_utilized"][0]["muscle"] = "Wings"
    workout["exercises"][2]["exercise_type"] = "sprint"
    workout["exercises"][4]["goals_addressed"][0]["share"] = 0.2
    result = generate(trainee, workout)
    problems = problems_of(result)
    assert problems == [
        "exercise 1 'Barbell Row': needs barbell, which is not available at Home "
        "(available: bench, bodyweight, dumbbells, resistance_bands)",
        f"exercise 2 'Push-Up': unknown muscle 'Wings' (valid: {', '.join(MUSCLES)})",
        "exercise 3 'Plank': exercise_type 'sprint' is not one of reps, hold, duration, intervals",
        "exercise 5 'Mountain Climber': goal shares sum to 0.50, not 1.0 (±0.01)",
    ]
    assert result.formatted.startswith('<tool_error name="generate_workout">\nThe workout was not created.')
    assert result.artifact is None and result.status_message == "Something went wrong"
    assert_nothing_stored(trainee)
    assert Preference.objects.filter(pk=one_shot.pk).exists()


@pytest.mark.parametrize(
    ("exercise", "field", "missing"),
    [
        (reps_exercise(1), "reps", "missing reps (a reps exercise needs sets, reps, rest_sec)"),
        (reps_exercise(1), "rest_sec", "missing rest_sec (a reps exercise needs sets, reps, rest_sec)"),
        (hold_exercise(1), "hold_sec", "missing hold_sec (a hold exercise needs sets, hold_sec, rest_sec)"),
        (hold_exercise(1), "sets", "missing sets (a hold exercise needs sets, hold_sec, rest_sec)"),
        (
            duration_exercise(1),
            "duration_min",
            "missing duration_min (a duration exercise needs duration_min)",
        ),
        (
            intervals_exercise(1),
            "work_sec",
            "missing work_sec (a intervals exercise needs rounds, work_sec, rest_sec)",
        ),
    ],
)
def test_each_type_requires_its_fields(
    trainee: Trainee, exercise: dict[str, Any], field: str, missing: str
) -> None:
    """The required fields per exercise type of docs/contracts.md §12.2 (exercise types)."""
    del exercise[field]
    problem = only_problem(generate(trainee, {"exercises": [exercise]}))
    assert problem == f"exercise 1 '{exercise['exercise_name']}': {missing}"


def test_per_set_lists_must_match_the_set_count(trainee: Trainee) -> None:
    """reps, load_each and hold_sec hold one value per set."""
    result = generate(
        trainee,
        {"exercises": [reps_exercise(1, sets=4), hold_exercise(2, hold_sec=[30])]},
    )
    assert problems_of(result) == [
        "exercise 1 'Dumbbell Bench Press': reps has 3 values for 4 sets (one per set)",
        "exercise 1 'Dumbbell Bench Press': load_each has 3 values for 4 sets (one per set)",
        "exercise 2 'Plank': hold_sec has 1 values for 3 sets (one per set)",
    ]


def test_numbers_must_be_positive(trainee: Trainee) -> None:
    """Counts and durations must be positive, rests and loads non-negative."""
    result = generate(
        trainee,
        {
            "exercises": [
                reps_exercise(1, sets=0, reps=[], rest_sec=-5, load_each=[-1]),
                duration_exercise(2, duration_min=0),
                intervals_exercise(3, rounds=0),
            ]
        },
    )
    problems = problems_of(result)
    assert "exercise 1 'Dumbbell Bench Press': sets must be ≥ 1, got 0" in problems
    assert "exercise 1 'Dumbbell Bench Press': rest_sec must be ≥ 0, got -5" in problems
    assert "exercise 1 'Dumbbell Bench Press': load_each values must be ≥ 0, got [-1]" in problems
    assert (
        "exercise 1 'Dumbbell Bench Press': missing reps (a reps exercise needs sets, reps, rest_sec)"
        in problems
    )
    assert "exercise 2 'Outdoor Run': duration_min must be > 0, got 0.0" in problems
    assert "exercise 3 'Mountain Climber': rounds must be ≥ 1, got 0" in problems


def test_orders_must_be_unique_and_contiguous(trainee: Trainee) -> None:
    """Orders run 1..N: a repeat and a gap are both named."""
    result = generate(trainee, {"exercises": [reps_exercise(1), bodyweight_exercise(1), hold_exercise(4)]})
    assert problems_of(result) == [
        "exercise 3 'Plank': order 4 is outside 1..3 (orders run 1..N without gaps)",
        "exercise 1 'Dumbbell Bench Press' and exercise 2 'Push-Up' share order 1 (each order is used once)",
    ]


def test_group_rules(trainee: Trainee) -> None:
    """Groups need a known type, adjacent members, positions 1..k, header on the first, enough members."""
    workout = {
        "exercises": [
            once(reps_exercise(1, group={"id": "c1", "type": "circuit", "position": 1, "rounds": 3})),
            hold_exercise(2),
            once(
                bodyweight_exercise(
                    3, group={"id": "c1", "type": "circuit", "position": 2, "name": "Late name"}
                )
            ),
            intervals_exercise(4, group={"id": "x", "type": "tornado", "position": 2}),
            duration_exercise(5, group={"id": "s", "type": "superset", "position": 1, "rounds": 2}),
        ]
    }
    assert problems_of(generate(trainee, workout)) == [
        "exercise 1 'Dumbbell Bench Press': group 'c1' is split; its exercises must be next to each other (orders 1, 3)",
        "exercise 3 'Push-Up': group name and rounds belong on the group's first exercise only",
        "exercise 4 'Mountain Climber': group type 'tornado' is not one of circuit, superset, giant_set, warmup, cooldown, sequence",
        "exercise 4 'Mountain Climber': group 'x' positions must run 1..1 in exercise order, got 2",
        "exercise 5 'Outdoor Run': a superset group needs at least 2 exercises, 's' has 1",
    ]


def test_a_circuit_counts_its_rounds_once_and_a_member_with_its_own_sets_is_refused(trainee: Trainee) -> None:
    """A circuit's rounds say how many times it is done; members given sets of their own, or a circuit without
    rounds, are refused with exactly what to send instead."""
    workout = {
        "exercises": [
            reps_exercise(1, group={"id": "c1", "type": "circuit", "position": 1}),
            hold_exercise(2, group={"id": "c1", "type": "circuit", "position": 2}),
            intervals_exercise(3, group={"id": "c1", "type": "circuit", "position": 3}),
        ]
    }
    assert problems_of(generate(trainee, workout)) == [
        "exercise 1 'Dumbbell Bench Press': circuit 'c1' needs rounds on its first exercise's group (how many "
        "times the whole circuit is done)",
        "exercise 1 'Dumbbell Bench Press': in circuit 'c1' the group's rounds (N) count the rounds and each "
        "member is done once per round, so send sets: 1, reps: [10], load_each with one value (not sets: 3)",
        "exercise 2 'Plank': in circuit 'c1' the group's rounds (N) count the rounds and each member is done once "
        "per round, so send sets: 1, hold_sec: [30] (not sets: 3)",
        "exercise 3 'Mountain Climber': in circuit 'c1' the group's rounds (N) count the rounds, so send this "
        "exercise's rounds: 1 (not 8) and put the count in the group's rounds",
    ]

    workout["exercises"][0]["group"]["rounds"] = 3
    workout["exercises"] = [once(exercise) for exercise in workout["exercises"][:2]]
    result = generate(trainee, workout)
    assert result.success, result.formatted
    assert "{circuit c1 #1, 3 rounds}" in result.raw_formatted and "{circuit c1 #2}" in result.raw_formatted
    assert result.raw_formatted.count("3 rounds") == 1


def test_shares_must_sum_to_one(trainee: Trainee) -> None:
    """Muscle and goal shares each sum to 1 ± 0.01; within tolerance passes."""
    close = reps_exercise(1)
    close["muscles_utilized"][0]["share"] = 0.705
    off = bodyweight_exercise(2)
    off["muscles_utilized"][0]["share"] = 0.5
    assert problems_of(generate(trainee, {"exercises": [close, off]})) == [
        "exercise 2 'Push-Up': muscle shares sum to 0.80, not 1.0 (±0.01)"
    ]


def test_muscles_and_goals_must_not_be_empty(trainee: Trainee) -> None:
    """Every exercise names at least one muscle and one goal (docs/contracts.md §12.4 (muscles, goals, shares))."""
    result = generate(trainee, {"exercises": [reps_exercise(1, muscles_utilized=[], goals_addressed=[])]})
    assert problems_of(result) == [
        "exercise 1 'Dumbbell Bench Press': muscles_utilized is empty (list the muscles worked, shares summing to 1)",
        "exercise 1 'Dumbbell Bench Press': goals_addressed is empty (list the goals served, shares summing to 1)",
    ]


def test_a_distance_in_miles_is_stored_in_the_users_km(trainee: Trainee) -> None:
    """A user who measures in km given 4 miles gets 6.44 km, and the observation says so."""
    result = generate(trainee, {"exercises": [duration_exercise(1, distance_unit="miles")]})
    assert result.success, result.formatted
    (run,) = result.artifact["payload"]["exercises"] if result.artifact else []
    assert (run["distance"], run["distance_unit"]) == (6.44, "km")
    assert "Converted to the user's units: Outdoor Run: 4 mi → 6.44 km." in result.raw_formatted


def test_catalogue_equipment_is_required_for_known_exercises(trainee: Trainee) -> None:
    """A catalogue exercise needs its catalogue equipment even when the model lists none."""
    problem = only_problem(
        generate(trainee, {"exercises": [reps_exercise(1, exercise_name="Barbell Back Squat", equipment=[])]})
    )
    assert problem.startswith(
        "exercise 1 'Barbell Back Squat': needs barbell, squat_rack, which are not available"
    )


def test_equipment_at_another_location_is_fine_after_switching(trainee: Trainee) -> None:
    """Availability follows the current location."""
    exercise = reps_exercise(1, exercise_name="Barbell Back Squat", equipment=["barbell", "squat_rack"])
    assert not generate(trainee, {"exercises": [exercise]}).success
    set_current_location(user_id=trainee.user_id, location_id=trainee.gym.id)
    assert generate(trainee, {"exercises": [exercise]}).success


def test_without_a_current_location_only_bodyweight_is_possible(trainee: Trainee) -> None:
    """No current location: equipment problems say so; bodyweight exercises still pass."""
    Location.objects.filter(user_id=trainee.user_id).update(is_current=False)
    problem = only_problem(generate(trainee, {"exercises": [reps_exercise(1)]}))
    assert problem == (
        "exercise 1 'Dumbbell Bench Press': needs dumbbells, bench, which are not available "
        "(no current location is set, so only bodyweight exercises are possible)"
    )
    assert generate(trainee, {"exercises": [bodyweight_exercise(1)]}).success


@pytest.mark.parametrize("excluded", ["push-up", "Push Ups", "PUSH-UP"])
def test_excluded_exercises_are_refused(trainee: Trainee, excluded: str) -> None:
    """An active preference excluding an exercise by name or slug refuses it."""
    PreferenceFactory.create(
        user_id=trainee.user_id, description="No push-ups, sore wrist", exclude_exercises=[excluded]
    )
    problem = only_problem(generate(trainee, {"exercises": [bodyweight_exercise(1)]}))
    assert problem == "exercise 1 'Push-Up': excluded by the user's preference 'No push-ups, sore wrist'"


def test_excluded_exercise_matched_through_catalogue_alias(trainee: Trainee) -> None:
    """Excluding a catalogue exercise also excludes it under its alias."""
    PreferenceFactory.create(
        user_id=trainee.user_id, description="No rows", exclude_exercises=["bent-over-dumbbell-row"]
    )
    exercise = reps_exercise(1, exercise_name="Bent Over Two-Dumbbell Row", equipment=["dumbbells"])
    problem = only_problem(generate(trainee, {"exercises": [exercise]}))
    assert problem == "exercise 1 'Bent Over Two-Dumbbell Row': excluded by the user's preference 'No rows'"


def test_excluded_equipment_is_refused(trainee: Trainee) -> None:
    """An active preference excluding equipment refuses exercises that use it."""
    PreferenceFactory.create(
        user_id=trainee.user_id, description="No bench today", exclude_equipment=["bench"]
    )
    problem = only_problem(generate(trainee, {"exercises": [reps_exercise(1)]}))
    assert (
        problem
        == "exercise 1 'Dumbbell Bench Press': uses bench, excluded by the user's preference 'No bench today'"
    )


def test_expired_preferences_are_ignored(trainee: Trainee) -> None:
    """A preference past its expiry no longer restricts workouts."""
    PreferenceFactory.create(
        user_id=trainee.user_id,
        preference_type="temporary",
        exclude_exercises=["Push-Up"],
        expires_at=timezone.now() - timedelta(hours=1),
    )
    assert generate(trainee, {"exercises": [bodyweight_exercise(1)]}).success


def test_structurally_invalid_arguments_name_the_field(trainee: Trainee) -> None:
    """Shape errors (no exercises, wrong JSON types) come back from argument validation, naming the field."""
    result = trainee.run("generate_workout", {"workout": {"exercises": []}})
    assert not result.success
    assert result.data["error"].startswith("Invalid arguments for generate_workout: workout.exercises:")
    result = trainee.run("generate_workout", {"workout": {"exercises": [reps_exercise(1, sets="three")]}})
    assert "workout.exercises.0.sets" in result.data["error"]
    assert_nothing_stored(trainee)


def test_the_typed_workout_reads_and_writes_the_stored_json_unchanged(trainee: Trainee) -> None:
    """What the tools store reads into StoredWorkout and writes back key for key, in the same order (the tools
    edit the typed model, the stored JSON stays what it was)."""
    result = generate(
        trainee,
        {
            "exercises": [
                {
                    **reps_exercise(1),
                    "sets": 1,
                    "reps": [10],
                    "load_each": [20],
                    "group": {"id": "s1", "type": "superset", "position": 1, "rounds": 3},
                },
                {
                    **bodyweight_exercise(2),
                    "sets": 1,
                    "reps": [15],
                    "group": {"id": "s1", "type": "superset", "position": 2},
                },
                hold_exercise(3),
                duration_exercise(4),
                intervals_exercise(5),
            ]
        },
    )
    assert result.success, result.formatted
    assert result.artifact is not None
    record = current_workout_record(result.artifact)
    stored = StoredWorkout.model_validate(record)
    assert stored.to_record() == record
    assert json.dumps(stored.to_record()) == json.dumps(record), "same keys in the same order"
    from_artifact = StoredWorkout.model_validate(result.artifact)
    assert [exercise.to_json() for exercise in from_artifact.exercises] == record["exercises"]
