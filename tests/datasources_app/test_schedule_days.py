"""What each day on the calendar holds, as the model reads it (the `scheduled_workouts` and `workout_plans`
sources), and that "What's on Thursday?" loads it."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

import pytest

from datasources_app import sources
from datasources_app.models import Preparation
from tests.datasources_app.factories import (
    ScheduledWorkoutFactory,
    UserSettingsFactory,
    WorkoutPlanFactory,
)
from tests.support.clock import freeze_now

pytestmark = pytest.mark.django_db

# Monday 10 November 2025, 09:00 in London.
MONDAY = dt.datetime(2025, 11, 10, 9, 0, tzinfo=dt.UTC)


def _exercise(name: str, **fields: Any) -> dict[str, Any]:
    return {"exercise_name": name, "exercise_type": "reps", "order": 1, **fields}


def _workout(*exercises: dict[str, Any]) -> dict[str, Any]:
    return {"title": "Session", "exercises": list(exercises)}


def _text(user_id: uuid.UUID, source: str, params: dict[str, Any] | None = None) -> str:
    return sources.fetch_and_format(user_id=user_id, source=source, params=params).text


@pytest.fixture
def week(monkeypatch: pytest.MonkeyPatch) -> uuid.UUID:
    """A plan week of a London user: Monday done, Tuesday ready, Wednesday failed, Thursday pending, Friday
    scheduled by hand, the Sunday after next beyond a 7-day window."""
    freeze_now(monkeypatch, MONDAY)
    user_id = uuid.uuid4()
    UserSettingsFactory.create(user_id=user_id, timezone="Europe/London")
    plan = WorkoutPlanFactory.create(user_id=user_id, name="Base")
    ScheduledWorkoutFactory.create(
        user_id=user_id, plan=plan, scheduled_date=dt.date(2025, 11, 10), title="Push", status="completed"
    )
    ScheduledWorkoutFactory.create(
        user_id=user_id,
        plan=plan,
        scheduled_date=dt.date(2025, 11, 11),
        scheduled_time=dt.time(18, 0),
        title="Lower Body",
        duration_minutes=45,
        preparation=Preparation.READY,
        workout=_workout(
            _exercise("Goblet Squat", sets=3, reps=[10, 10, 10], load_each=[16, 16, 16], load_unit="kg"),
            _exercise(
                "Dumbbell Romanian Deadlift",
                sets=3,
                reps=[10, 10, 10],
                load_each=[12, 12, 12],
                load_unit="kg",
                implements=2,
            ),
            {"exercise_name": "Plank", "exercise_type": "hold", "sets": 3, "hold_sec": [45, 45, 45]},
        ),
        message="🏋️ Lower Body\n1. Goblet Squat: 3×10 @ 16kg\n2. Dumbbell Romanian Deadlift: 3×10 @ 12kg each hand"
        "\n3. Plank: 3×45s\n💪 Reply when done!",
    )
    ScheduledWorkoutFactory.create(
        user_id=user_id,
        plan=plan,
        scheduled_date=dt.date(2025, 11, 12),
        title="Upper Body",
        preparation=Preparation.FAILED,
        preparation_error="The week's layout has no session on this day.",
    )
    ScheduledWorkoutFactory.create(
        user_id=user_id,
        plan=plan,
        scheduled_date=dt.date(2025, 11, 13),
        title="Full Body",
        preparation=Preparation.PENDING,
    )
    ScheduledWorkoutFactory.create(
        user_id=user_id,
        scheduled_date=dt.date(2025, 11, 14),
        title="Easy run",
        notes="Keep it conversational",
    )
    ScheduledWorkoutFactory.create(user_id=user_id, scheduled_date=dt.date(2025, 11, 23), title="Later")
    return user_id


def test_each_day_says_its_date_status_exercises_and_message(week: uuid.UUID) -> None:
    """Per day: weekday and date (today/tomorrow marked), title, status with the failure reason, one line per
    exercise with its prescription (a dumbbell pair per hand), the message on one line, and under a failed day
    what the coach should do about it."""
    lines = [
        line.split(" id=")[0] for line in _text(week, "scheduled_workouts", {"days_ahead": 7}).splitlines()
    ]
    assert lines == [
        '<schedule days_ahead="7">',
        "Mon 10 Nov (today) Push [completed] plan: Base",
        "Tue 11 Nov (tomorrow) 18:00 Lower Body (45min) [scheduled, workout ready] plan: Base",
        "  - Goblet Squat 3×10 @ 16kg",
        "  - Dumbbell Romanian Deadlift 3×10 @ 12kg each hand",
        "  - Plank 3×45s",
        "  message: 🏋️ Lower Body / 1. Goblet Squat: 3×10 @ 16kg / 2. Dumbbell Romanian Deadlift: 3×10 @ 12kg "
        "each hand / 3. Plank: 3×45s / 💪 Reply when done!",
        "Wed 12 Nov Upper Body [scheduled, preparation failed: The week's layout has no session on this day.] "
        "plan: Base",
        "  not prepared: tell the user which day and why, and offer to prepare it again (prepare_week for its "
        "week redoes only the days not ready; the others are kept)",
        "Thu 13 Nov Full Body [scheduled, workout being prepared] plan: Base",
        "Fri 14 Nov Easy run [scheduled] — Keep it conversational",
        "</schedule>",
    ]


def test_the_schedule_is_in_the_users_units(week: uuid.UUID) -> None:
    """Loads stored in kg read in pounds for a user who chose lb."""
    from datasources_app.models import UserSettings

    UserSettings.objects.filter(user_id=week).update(weight_unit="lb")
    assert "  - Goblet Squat 3×10 @ 35lb" in _text(week, "scheduled_workouts", {"days_ahead": 7})


def test_a_long_week_stays_compact(monkeypatch: pytest.MonkeyPatch) -> None:
    """Seven prepared days of eight exercises with full-length messages: one line per exercise, the messages cut
    to one line each, the whole week under 8,000 characters (about 2,000 tokens)."""
    freeze_now(monkeypatch, MONDAY)
    user_id = uuid.uuid4()
    exercise = _exercise(
        "Dumbbell Bulgarian Split Squat", sets=4, reps=[8, 8, 8, 8], load_each=[20] * 4, implements=2
    )
    for offset in range(7):
        ScheduledWorkoutFactory.create(
            user_id=user_id,
            scheduled_date=dt.date(2025, 11, 10) + dt.timedelta(days=offset),
            title="Strength",
            preparation=Preparation.READY,
            workout=_workout(*[exercise] * 8),
            message="\n".join(["🏋️ Strength", *[f"{n}. Bulgarian Split Squat 4×8 @ 20kg" for n in range(40)]])[
                :1600
            ],
        )
    text = _text(user_id, "scheduled_workouts", {"days_ahead": 7})
    assert text.count("  - Dumbbell Bulgarian Split Squat 4×8 @ 20kg each hand") == 56
    assert text.count("  message: ") == 7 and all(
        len(line) <= 320 for line in text.splitlines() if line.startswith("  message: ")
    )
    assert len(text) < 8000, len(text)


def test_an_active_plan_shows_this_week_and_the_next(monkeypatch: pytest.MonkeyPatch) -> None:
    """The plan source lists the current and the next week's sessions with their dates and says how many follow."""
    freeze_now(monkeypatch, dt.datetime(2025, 11, 18, 9, 0, tzinfo=dt.UTC))  # Tuesday of week 2
    user_id = uuid.uuid4()
    weeks = [
        {
            "week": number,
            "phase": "build",
            "target_rpe": 7,
            "days": [
                {
                    "day": 1,
                    "date": str(dt.date(2025, 11, 10) + dt.timedelta(weeks=number - 1)),
                    "title": "Push",
                    "duration_minutes": 60,
                },
                {
                    "day": 2,
                    "date": str(dt.date(2025, 11, 12) + dt.timedelta(weeks=number - 1)),
                    "title": "Pull",
                },
            ],
        }
        for number in range(1, 5)
    ]
    plan = WorkoutPlanFactory.create(user_id=user_id, name="Base", goal="", plan={"weeks": weeks})
    assert _text(user_id, "workout_plans").splitlines()[1:] == [
        f"- Base [active] 4 weeks from Tue 18 Nov 2025, 8 planned days id={plan.id}",
        "  Week 2 (build, RPE 7): Mon 17 Nov Push (60min), Wed 19 Nov Pull",
        "  Week 3 (build, RPE 7): Mon 24 Nov Push (60min), Wed 26 Nov Pull",
        "  … 1 more week",
        "</workout_plans>",
    ]
