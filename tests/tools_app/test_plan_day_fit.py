"""A plan day is fitted once, by the fitter drafts use: its finishers and cardio take their minutes before the lifts
are chosen (the 2026-11-28 review: a 30-minute day ending with core work drew lifts, gave them a warm-up and notes,
then dropped two of them to fit), so what the day's notes name is what it holds."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

import pytest
from django.utils import timezone

from datasources_app.demo import DEMO_USER_ID
from datasources_app.models import Location
from datasources_app.services import seed_demo_user
from datasources_app.workouts import Workout, is_main
from tools_app.calendar_tools import next_monday
from tools_app.plan_builder import build_plan, session_extras
from tools_app.plan_drafting import draft_week_workouts
from tools_app.training_facts import load_facts, plan_name_match
from tools_app.workout_drafting import balance_pattern
from tools_app.workout_fit import fits_minutes
from tools_app.workout_tools import estimate_duration_min
from tools_app.workout_validation import validate_workout

pytestmark = pytest.mark.django_db


def demo_week(*, minutes: int, place: str, extra: str | None) -> list[dict[str, Any]]:
    """The demo user's (mild left knee) first week of a 3-day 'get stronger' plan at `place`, its days of `minutes`,
    with `extra` added to every session."""
    seed_demo_user()
    location = Location.objects.get(user_id=DEMO_USER_ID, name=place)
    start = next_monday(timezone.localdate() + dt.timedelta(days=1))
    extras = session_extras([extra] if extra else [])
    week = build_plan(goal="get stronger", weeks=4, days_per_week=3, start_date=start, extras=extras)[
        "weeks"
    ][0]
    days = [day | {"duration_minutes": minutes} for day in week["days"]]
    drafted = draft_week_workouts(
        user_id=DEMO_USER_ID, week=week | {"days": days}, days=days, location_id=location.id
    )
    for day in drafted:
        problems = validate_workout(
            Workout.model_validate(day["draft"]), user_id=DEMO_USER_ID, location_id=location.id
        )
        assert problems == [], problems
    return drafted


def main_names(day: dict[str, Any]) -> list[str]:
    return [str(e["exercise_name"]) for e in day["draft"]["exercises"] if is_main(e)]


# What a day's notes say of exercises by name: 'I kept the knee work (Lying Leg Curl) moderate …', 'for Bird Dog,
# kneel on a cushion …'.
_NAMED_IN_NOTES = (
    re.compile(r"^I kept the knee work \((.+?)\) moderate"),
    re.compile(r"^for (.+?), kneel on a cushion"),
)


def named_in_notes(day: dict[str, Any]) -> list[str]:
    return [
        name
        for note in day["draft_notes"]
        for pattern in _NAMED_IN_NOTES
        if (match := pattern.match(note))
        for name in re.split(r", | and ", match[1])
    ]


@pytest.mark.parametrize("place", ["Home", "Gym"])
def test_a_30_minute_day_with_core_work_fits_and_its_notes_name_only_what_it_holds(place: str) -> None:
    """Each 30-minute day ends with the plan's plank and dead bugs and reads 27-31 min; every exercise its notes
    name (the knee work kept moderate, the kneeling moves padded) is in the day: the Gym's third day said "I kept
    the knee work (Lying Leg Curl) moderate" of a leg curl the second fit had dropped."""
    for day in demo_week(minutes=30, place=place, extra="core work at the end"):
        names = main_names(day)
        assert names[-2:] == ["Plank", "Dead Bug"], names
        estimate = estimate_duration_min(day["draft"]["exercises"])
        assert fits_minutes(estimate, 30), (day["session"], estimate, names)
        assert set(named_in_notes(day)) <= {str(e["exercise_name"]) for e in day["draft"]["exercises"]}, (
            day["session"],
            names,
            day["draft_notes"],
        )


def test_a_45_minute_home_day_with_core_work_pads_no_move_it_left_out() -> None:
    """At Home the 45-minute third day's notes said "for Bird Dog, kneel on a cushion" of a bird dog dropped to fit;
    now no lift repeats the core finisher's kind of work, and each day fits its 45 minutes."""
    seed_demo_user()
    facts = load_facts(user_id=DEMO_USER_ID, location_id=None)
    core = {
        balance_pattern(candidate)
        for name in ("plank", "dead bug")
        if (candidate := plan_name_match(name, facts)[0])
    }
    by_name = {candidate.name: candidate for candidate in facts.catalog}
    for day in demo_week(minutes=45, place="Home", extra="core work at the end"):
        names = main_names(day)
        lifts = names[: names.index("Plank")]
        assert not [name for name in lifts if balance_pattern(by_name[name]) in core], names
        assert set(named_in_notes(day)) <= {str(e["exercise_name"]) for e in day["draft"]["exercises"]}, day[
            "draft_notes"
        ]
        assert fits_minutes(estimate_duration_min(day["draft"]["exercises"]), 45), names


@pytest.mark.parametrize("extra", [None, "a cardio finisher"])
def test_a_45_minute_gym_day_fits_and_names_only_what_it_holds(extra: str | None) -> None:
    """The Gym's 45-minute days, with or without a cardio finisher, read 42-46 min and their notes name no lift the
    day left out (the third said "I kept the knee work (Lying Leg Curl) moderate" of a dropped leg curl)."""
    for day in demo_week(minutes=45, place="Gym", extra=extra):
        assert fits_minutes(estimate_duration_min(day["draft"]["exercises"]), 45), main_names(day)
        assert set(named_in_notes(day)) <= {str(e["exercise_name"]) for e in day["draft"]["exercises"]}, day[
            "draft_notes"
        ]
