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


def drafted_week(trainee: Trainee, goal: str, *, week: int = 1, days: int = 3) -> list[dict[str, Any]]:
    start = next_monday(timezone.localdate() + dt.timedelta(days=1))
    plan = build_plan(goal=goal, weeks=6, days_per_week=days, start_date=start)
    plan_week = plan["weeks"][week - 1]
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
