"""A swap at the lifter's level and "last time" words that match the numbers (the 2026-11-28 model trial with Alex,
82 kg, intermediate, at the Gym): "the bench is taken" gave an 8 kg kettlebell press for a 52.5 kg bench, a draft
said "Up from 65 kg × 6 last time" beside 60 kg × 10, curls done 10/10/8 were quoted as "25 kg × 8" and given
3×12 @ 25 kg again, and the curl came before the pulldown."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

import pytest
from django.utils import timezone

from datasources_app.services import record_workout_log
from datasources_app.workouts import is_main
from tests.tools_app.test_coach_loads import alex, line
from tests.tools_app.workout_support import Trainee
from tools_app.calendar_tools import next_monday
from tools_app.plan_builder import build_plan
from tools_app.plan_drafting import draft_week_workouts, week_training_days
from tools_app.workout_coaching import mechanic_of
from tools_app.workout_validation import find_catalog_match

pytestmark = pytest.mark.django_db

BENCH = {
    "order": 1,
    "exercise_name": "Barbell Bench Press",
    "exercise_type": "reps",
    "sets": 4,
    "reps": [6, 6, 6, 6],
    "load_each": [52.5] * 4,
    "load_unit": "kg",
    "rest_sec": 120,
    "muscles_utilized": [
        {"muscle": "Chest", "share": 0.7},
        {"muscle": "Shoulders", "share": 0.15},
        {"muscle": "Triceps", "share": 0.15},
    ],
    "goals_addressed": [{"goal": "strength", "share": 1.0}],
    "reasoning": "Main chest lift.",
    "equipment": ["barbell", "bench", "squat_rack"],
}


def swap_bench(trainee: Trainee, args: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """The exercise swap_exercise puts in place of a barbell bench press 4×6 @ 52.5 kg, and the tool's text."""
    made = trainee.run("generate_workout", {"workout": {"title": "Upper", "exercises": [BENCH]}})
    assert made.success, made.raw_formatted
    result = trainee.run("swap_exercise", {"exercise_id": "1", **args})
    assert result.success and result.artifact is not None, result.raw_formatted
    return result.artifact["payload"]["exercises"][0], result.raw_formatted


def test_the_bench_taken_gives_a_machine_press_near_the_bench_load() -> None:
    """ "The bench is taken" at the Gym: a chest press machine at about the bench's load (not an 8 kg kettlebell
    floor press picked by its name's alphabet), said where its load comes from."""
    new, text = swap_bench(alex("Gym"), {"avoid_equipment": ["bench"]})
    assert line(new) == "Machine Chest Press 3×8 @ 40 kg", text
    assert "Set from the Barbell Bench Press's 52.5 kg × 6." in new["reasoning"]


@pytest.mark.parametrize(
    ("name", "prescribed"),
    [
        ("Dumbbell Bench Press", "Dumbbell Bench Press 3×8 @ 20 kg each hand"),
        # Two bells, pressed in turn: each hand holds one, as heavy as a dumbbell pair's would be for its implement.
        ("Alternating Kettlebell Floor Press", "Alternating Kettlebell Floor Press 3×8 @ 16 kg each hand"),
    ],
)
def test_a_named_replacement_takes_the_replaced_lifts_load_scaled_for_its_implement(
    name: str, prescribed: str
) -> None:
    """A named press in place of the 52.5 kg bench starts from that load on its own implement, "each hand" for a
    pair of dumbbells or kettlebells, not a first-time guess (the kettlebell press was 3×8 @ 8 kg, one bell said)."""
    new, _ = swap_bench(alex("Gym"), {"replacement_name": name})
    assert line(new) == prescribed


def log(user_id: uuid.UUID, name: str, *, target: int, done: list[int], load: float) -> None:
    """One logged exercise two days ago: `done` reps per set at `load` kg, `target` reps planned."""
    record_workout_log(
        user_id=user_id,
        entries=[
            {
                "exercise_name": name,
                "target_reps": [target] * len(done),
                "actual_sets": len(done),
                "actual_reps": done,
                "actual_load_each": [load] * len(done),
                "load_unit": "kg",
            }
        ],
        completed_at=timezone.now() - dt.timedelta(days=2),
    )


def test_curls_short_of_their_reps_are_quoted_as_done_and_lightened_to_reach_them() -> None:
    """Curls done 10, 10, 8 of 12 at 25 kg: last time is quoted set by set (not "25 kg × 8") and the next 3×12 is
    a load the 8-rep set says reaches 12 (22.5 kg), not 25 kg again."""
    trainee = alex("Gym")
    log(trainee.user_id, "Barbell Curl", target=12, done=[10, 10, 8], load=25)
    made = trainee.run(
        "generate_workout",
        {"workout": {"title": "Arms", "exercises": [BENCH | {"exercise_name": "Push-Up", "equipment": []}]}},
    )
    assert made.success, made.raw_formatted
    result = trainee.run("swap_exercise", {"exercise_id": "1", "replacement_name": "Barbell Curl"})
    assert result.success and result.artifact is not None, result.raw_formatted
    curl = result.artifact["payload"]["exercises"][0]
    assert line(curl) == "Barbell Curl 3×12 @ 22.5 kg"
    assert "25 kg × 10, 10, 8 last time; 22.5 kg for 12 reps." in curl["reasoning"]


def test_a_plan_days_lighter_load_for_more_reps_is_not_called_up() -> None:
    """Bench 65 kg × 6 last time, the plan's day 3×10: 60 kg for the 10 reps, said as what happened ("65 kg × 6 last
    time; 60 kg for 10 reps."), never "Up from 65 kg × 6" beside a lighter load."""
    trainee = alex("Gym")
    log(trainee.user_id, "Barbell Bench Press", target=6, done=[6, 6, 6], load=65)
    start = next_monday(timezone.localdate() + dt.timedelta(days=1))
    plan_week = build_plan(goal="build muscle", weeks=4, days_per_week=3, start_date=start)["weeks"][0]
    days = [
        day | {"prescription": "Barbell Bench Press 3×10, Lat Pulldown 3×10"} for day in plan_week["days"]
    ]
    drafted = draft_week_workouts(
        user_id=trainee.user_id,
        week=plan_week | {"days": days},
        days=week_training_days(plan_week | {"days": days}, None),
        location_id=trainee.gym.id,
    )
    benches = [
        exercise
        for day in drafted
        for exercise in day["draft"]["exercises"]
        if exercise["exercise_name"] == "Barbell Bench Press"
    ]
    assert benches
    for bench in benches:
        assert line(bench) == "Barbell Bench Press 3×10 @ 60 kg"
        assert "65 kg × 6 last time; 60 kg for 10 reps." in bench["reasoning"]
        assert "Up from" not in bench["reasoning"]


def test_an_upper_body_draft_puts_its_compound_lifts_before_its_isolation_work() -> None:
    """Gym upper body, 45 min: the pulldown, rows and presses come before the curl (the draft had Barbell Curl
    before Lat Pulldown)."""
    result = alex("Gym").run("draft_workout", {"focus": ["upper body"], "minutes": 45})
    assert result.success and result.artifact is not None, result.raw_formatted
    main = [e for e in result.artifact["payload"]["exercises"] if is_main(e)]
    kinds = []
    for exercise in main:
        match = find_catalog_match(exercise["exercise_name"])
        assert match is not None
        kinds.append(mechanic_of(match.mechanic, match.movement_pattern))
    assert "isolation" in kinds and "compound" in kinds
    assert kinds == sorted(kinds, key=lambda kind: kind != "compound"), [e["exercise_name"] for e in main]
