"""The model can answer "What's on Thursday?": the initializer loads the day's workout into the context."""

from __future__ import annotations

import datetime as dt
import json
import uuid

import pytest

from datasources_app.selectors import local_today
from datasources_app.services import schedule_workout
from tests.trainer_agent.agent.scripting import events_of, idle, notify, scripted_claude, serving
from trainer_agent.agents.definitions import selection_schema
from trainer_agent.initializer import today_text
from trainer_agent.offline.structured import answer_json
from trainer_agent.turns import run_turn

pytestmark = pytest.mark.django_db

MODEL = "claude-haiku-4-5"


def offline_choice(message: str, *, today: dt.date = dt.date(2025, 11, 13)) -> dict[str, int | None]:
    """The offline model's selection for `message` with nothing loaded: source → days_back."""
    request = {"user_message": message, "today": today_text(today), "loaded_sources": []}
    answer = answer_json(
        user=json.dumps(request), json_schema=selection_schema(), schema_name="knowledge_selection"
    ).data
    return {item["source"]: item["days_back"] for item in answer["append_knowledge"]}


def test_whats_on_thursday_puts_thursdays_exercises_in_the_request(demo_user: uuid.UUID) -> None:
    """The offline model reads a weekday as a calendar question; the model's first request holds that day's
    date, title and exercises, and the user data says which day today is."""
    today = local_today(user_id=demo_user)
    thursday = today + dt.timedelta(days=(3 - today.weekday()) % 7 or 7)
    squat = {"exercise_name": "Goblet Squat", "exercise_type": "reps", "order": 1, "sets": 3}
    schedule_workout(
        user_id=demo_user,
        scheduled_date=thursday,
        title="Lower Body",
        workout={"title": "Lower Body", "exercises": [{**squat, "reps": [10] * 3, "load_each": [16] * 3}]},
    )
    transport = scripted_claude(notify("Lower body on Thursday."), idle())
    with serving(MODEL, transport):
        result = run_turn(user_id=demo_user, message="What's on Thursday?", model=MODEL)
    assert [k["source"] for k in events_of(result.session_id, "knowledge")] == [
        "scheduled_workouts",
        "workout_plans",
    ]
    request = json.dumps(transport.bodies[0], ensure_ascii=False)
    assert f"{thursday:%a} {thursday.day} {thursday:%b} Lower Body [scheduled]" in request
    assert "  - Goblet Squat 3×10 @ 16kg" in request
    assert f"Date: {today:%A} {today.day} {today:%B %Y}" in request


@pytest.mark.parametrize(
    "message",
    [
        "What's on Thursday?",
        "anything tomorrow?",
        "what do I have this week",
        "plans for the weekend",
        "today?",
    ],
)
def test_day_words_load_the_schedule(message: str) -> None:
    """Weekday names, today, tomorrow, this week and the weekend are calendar questions."""
    assert "scheduled_workouts" in offline_choice(message)


@pytest.mark.parametrize(
    ("message", "days"),
    [("How was my training this week?", 4), ("my progress this month", 13), ("stats for the last week", 7)],
)
def test_this_week_counts_from_monday(message: str, days: int) -> None:
    """On Thursday 13 November "this week" is the 4 days since Monday, "this month" the 13 since the 1st."""
    assert offline_choice(message, today=dt.date(2025, 11, 13))["workout_history"] == days
