"""The schedule the coach reads (and tells the user) gives a prepared plan day the length of its workout, not the
plan's minutes for the day (the 2026-11-28 trial: "Fri 4 Dec Full Body C (60min)" for a 53-minute workout)."""

from __future__ import annotations

import pytest

from datasources_app.models import ScheduledWorkout
from tests.coaching.week.conftest import Coached, prepared
from tools_app.workout_tools import estimate_duration_min


@pytest.mark.django_db
def test_a_prepared_day_reads_its_workouts_minutes(coached: Coached) -> None:
    """Every prepared day of week 1 says the minutes its workout takes; a day still to prepare keeps the plan's."""
    coached.say("Make me a 4-week strength plan, 3 days a week")
    week = coached.week(1)
    lengths = [
        (item.title, item.duration_minutes, estimate_duration_min(prepared(item)["exercises"]))
        for item in week
    ]
    assert all(stored == estimate for _, stored, estimate in lengths), lengths
    later = ScheduledWorkout.objects.filter(plan=coached.plan(), workout__isnull=True).first()
    assert later is not None and later.duration_minutes, later
