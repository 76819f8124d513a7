"""A plan week's drafted workouts (`plan_drafting.draft_week_workouts`, what the week chain's sub-agents start
from): what each day's draft holds and what its notes say."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from django.utils import timezone

from datasources_app.services import set_current_location
from tests.tools_app.workout_support import Trainee, make_trainee
from tools_app.calendar_tools import next_monday
from tools_app.plan_builder import build_plan
from tools_app.plan_drafting import draft_week_workouts, week_training_days

pytestmark = pytest.mark.django_db


@pytest.fixture
def trainee() -> Trainee:
    trainee = make_trainee()
    set_current_location(user_id=trainee.user_id, location_id=trainee.gym.id)
    return trainee


def drafted_week(
    trainee: Trainee, goal: str, *, week: int = 1, days: int = 3, prescription: str | None = None
) -> list[dict[str, Any]]:
    """The plan week's days with their drafts at the Gym (each day's prescription replaced when given, as a
    model's plan would word it)."""
    start = next_monday(timezone.localdate() + dt.timedelta(days=1))
    plan = build_plan(goal=goal, weeks=6, days_per_week=days, start_date=start)
    plan_week = plan["weeks"][week - 1]
    if prescription is not None:
        plan_week["days"] = [day | {"prescription": prescription} for day in plan_week["days"]]
    return draft_week_workouts(
        user_id=trainee.user_id,
        week=plan_week,
        days=week_training_days(plan_week, None),
        location_id=trainee.gym.id,
    )


def test_a_varied_session_says_so_in_a_plain_sentence(trainee: Trainee) -> None:
    """The week's later full-body sessions vary the main lifts, and the note says that, not "no earlier this
    week, as you asked" (nobody asked)."""
    week = drafted_week(trainee, "build strength")
    later = [note for day in week[1:] for note in day["draft_notes"]]
    assert "I picked different main lifts from the ones earlier this week, for variety" in later
    assert not any("earlier this week, as you asked" in note for note in later)


def main_reps(day: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        exercise
        for exercise in day["draft"]["exercises"]
        if (exercise.get("group") or {}).get("type") not in ("warmup", "cooldown")
        and exercise["exercise_type"] == "reps"
    ]


@pytest.mark.parametrize(
    ("prescription", "sets", "reps", "rpe"),
    [
        (None, 4, 5, "7"),  # the plan builder's 'main lifts 4×5 @ 70% 1RM, RPE 7; accessories 3×8-10'
        ("4x6 main lifts at RPE 7.5, 3x8-10 accessories; knee pain at 3/10 or lower", 4, 6, "7.5"),
    ],
)
def test_a_strength_days_draft_follows_its_prescription(
    trainee: Trainee, prescription: str | None, sets: int, reps: int, rpe: str
) -> None:
    """The day's main lifts get the plan's sets and reps (with a load), every main exercise its target RPE, and
    the notes say the draft follows the plan."""
    for day in drafted_week(trainee, "build strength", prescription=prescription):
        lifts = [exercise for exercise in main_reps(day) if exercise.get("load_each")]
        assert lifts, day["draft"]
        assert {(exercise["sets"], tuple(exercise["reps"])) for exercise in lifts} == {(sets, (reps,) * sets)}
        assert all(f"RPE {rpe}" in exercise["notes"] for exercise in main_reps(day))
        assert any("I followed the plan's sets, reps and effort" in note for note in day["draft_notes"])


def test_a_hypertrophy_days_draft_keeps_the_plans_sets_and_rep_range(trainee: Trainee) -> None:
    """'5-6 exercises × 3 sets of 8-12 reps': each main exercise has 3 sets of 8 to 12 reps."""
    for day in drafted_week(trainee, "build muscle"):
        for exercise in main_reps(day):
            assert exercise["sets"] == 3 and all(8 <= reps <= 12 for reps in exercise["reps"]), exercise
