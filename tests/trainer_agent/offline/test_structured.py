"""The offline model's structured answers (`complete_json`) come from the request alone: no user data is read,
so each test builds the request a caller would send and checks the answer a user (or the caller) would see."""

from __future__ import annotations

import json
from typing import Any

import pytest

from trainer_agent.agents.definitions import selection_schema
from trainer_agent.agents.subagents import FitnessPlan, Microcycle, WorkoutMessage
from trainer_agent.llm.providers import get_structured_provider
from trainer_agent.llm.types import LLMError
from trainer_agent.offline.structured import answer_json

WEEK: dict[str, Any] = {
    "week": 2,
    "phase": "build",
    "deload": False,
    "target_rpe": 7.5,
    "volume_factor": 1.05,
    "days": [
        {"date": "2026-03-09", "weekday": "Mon", "title": "Full Body A (week 2)", "session": "Full Body A"},
        {"date": "2026-03-11", "weekday": "Wed", "title": "Full Body B (week 2)", "session": "Full Body B"},
        {"date": "2026-03-13", "weekday": "Fri", "title": "Full Body C (week 2)", "session": "Full Body C"},
    ],
}
ROW = {
    "order": 1,
    "exercise_name": "Dumbbell Row",
    "exercise_type": "reps",
    "sets": 3,
    "reps": [10, 10, 10],
    "load_each": [16.0, 16.0, 16.0],
    "load_unit": "kg",
    "rest_sec": 90,
    "muscles_utilized": [{"muscle": "Back", "share": 1.0}],
    "goals_addressed": [{"goal": "strength", "share": 1.0}],
    "reasoning": "A staple pull.",
}


def subagent(schema_name: str, input: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    request = json.dumps({"input": input, "user": {"today": "2026-03-05 (Thu)", "weight_unit": "kg"}})
    data: dict[str, Any] = answer_json(user=request, json_schema=schema, schema_name=schema_name).data
    return data


def training_day(day: dict[str, Any], *, draft: dict[str, Any] | None) -> dict[str, Any]:
    return day | {
        "focus": ["Full body"],
        "duration_minutes": 45,
        "prescription": "3×8-10 @ RPE 7.5",
        "draft": draft,
    }


def test_a_week_with_three_training_days_has_three_on_their_dates() -> None:
    """Three training days in the input: three training days out, on those dates, the rest of the week rest."""
    days = [training_day(day, draft={"title": "x", "exercises": [ROW]}) for day in WEEK["days"]]
    input = {"week": 2, "plan": {"weeks": [WEEK]}, "workouts": True, "training_days": days}
    cycle = Microcycle.model_validate(subagent("microcycle", input, Microcycle.model_json_schema()))
    training = [
        (day.weekday, day.date.isoformat() if day.date else None) for day in cycle.days if not day.rest
    ]
    assert training == [("Mon", "2026-03-09"), ("Wed", "2026-03-11"), ("Fri", "2026-03-13")]
    assert cycle.days_per_week == 3 and len(cycle.days) == 7
    monday = cycle.days[0].markdown or ""
    assert "## Main Workout" in monday and "Dumbbell Row — 3x10 @ 16kg, rest 90s" in monday


def test_a_moved_session_is_trained_on_its_new_day() -> None:
    """The training days as laid out (Wednesday's session moved to Thursday) win over the plan week's days."""
    moved = [training_day(WEEK["days"][0], draft=None), training_day(WEEK["days"][1], draft=None)]
    moved[1] |= {"date": "2026-03-12", "weekday": "Thu"}
    input = {"week": 2, "plan": {"weeks": [WEEK]}, "training_days": moved}
    cycle = Microcycle.model_validate(subagent("microcycle", input, Microcycle.model_json_schema()))
    assert [(day.weekday, day.session) for day in cycle.days if not day.rest] == [
        ("Mon", "Full Body A"),
        ("Thu", "Full Body B"),
    ]


def test_the_plan_is_the_drafted_one() -> None:
    """fitness_plan answers with the plan the request drafted; without a draft it cannot answer."""
    schema = FitnessPlan.model_json_schema()
    draft = {"goal": "get stronger", "weeks": [WEEK]}
    assert subagent("fitness_plan", {"weeks": 1, "draft": draft}, schema) == draft
    with pytest.raises(LLMError) as caught:
        subagent("fitness_plan", {"weeks": 1}, schema)
    assert caught.value.kind == "invalid_response"


def test_the_structure_is_the_days_draft_titled_as_on_the_calendar() -> None:
    """With a draft the day's workout is that draft under the calendar's title; without, the markdown's lines."""
    draft = {"title": "Full Body Strength", "exercises": [ROW]}
    input = {
        "markdown": "# Monday\n1. Goblet Squat — 3x8 @ 20kg, rest 90s",
        "title": "Full Body A",
        "draft": draft,
    }
    assert subagent("workout_structure", input, {}) == {"title": "Full Body A", "exercises": [ROW]}
    read = subagent("workout_structure", input | {"draft": None}, {})
    (squat,) = read["exercises"]
    assert (squat["exercise_name"], squat["sets"], squat["load_each"], squat["rest_sec"]) == (
        "Goblet Squat",
        3,
        [20.0] * 3,
        90,
    )


def test_the_message_fits_the_schemas_limit() -> None:
    """The message is the given lines under the workout's title, cut to the schema's maxLength."""
    lines = [
        f"{number}. Exercise number {number}: 3×10 @ 20kg each hand (rest 90s)" for number in range(1, 80)
    ]
    input = {"workout": {"title": "Full Body A"}, "lines": lines}
    message = subagent("workout_message", input, WorkoutMessage.model_json_schema())["message"]
    assert message.splitlines()[0] == "🏋️ Full Body A" and len(message) <= 1600
    assert "1. Exercise number 1: 3×10 @ 20kg each hand (rest 90s)" in message and "…and" in message


def selection(
    message: str, loaded: list[dict[str, Any]], schema: dict[str, Any] | None = None
) -> dict[str, Any]:
    request = json.dumps({"user_message": message, "today": "Thursday 2025-11-13", "loaded_sources": loaded})
    data: dict[str, Any] = answer_json(
        user=request, json_schema=schema or selection_schema(), schema_name="knowledge_selection"
    ).data
    return data


def test_a_workout_request_selects_goals_preferences_and_two_weeks_of_history() -> None:
    """ "Give me a workout": goals, preferences and 14 days of history, each not in context yet."""
    chosen = selection("Give me a workout", [])
    assert [(item["source"], item["reason"], item["days_back"]) for item in chosen["append_knowledge"]] == [
        ("category_goals", "not_in_context", None),
        ("muscle_goals", "not_in_context", None),
        ("active_preferences", "not_in_context", None),
        ("workout_history", "not_in_context", 14),
    ]


@pytest.mark.parametrize("message", ["What's my first workout?", "when is my next session"])
def test_a_question_about_the_planned_workouts_reads_the_calendar(message: str) -> None:
    """ "What's my first workout?" after a plan is made asks about the calendar: the scheduled workouts and the
    plans are loaded (a trial's model had to fetch them itself)."""
    chosen = [item["source"] for item in selection(message, [])["append_knowledge"]]
    assert "scheduled_workouts" in chosen and "workout_plans" in chosen


@pytest.mark.parametrize(
    "message",
    ["Add my current workout to Monday as well", "put this workout on Saturday", "Is that one hard?"],
)
def test_a_message_about_the_current_workout_loads_it(message: str) -> None:
    """ "My current workout", "this workout", "that one" name the current workout: it is loaded, with the
    artifact_id schedule_workout takes (a trial's model had to fetch it itself in a new conversation)."""
    chosen = [item["source"] for item in selection(message, [])["append_knowledge"]]
    assert "current_workout_session" in chosen


def test_what_is_loaded_is_relied_on_or_widened() -> None:
    """History already loaded for 14 days is widened for "last month"; goals already loaded are relied on."""
    loaded = [
        {"source": "workout_history", "params": {"days_back": 14}},
        {"source": "category_goals", "params": {}},
    ]
    chosen = selection("How did I do last month?", loaded)
    assert {"source": "workout_history", "reason": "expand_range", "days_back": 30} in chosen[
        "append_knowledge"
    ]
    assert chosen["use_existing"] == ["category_goals"]


def test_only_the_sources_the_schema_allows_are_chosen() -> None:
    """The allowed source names come from the schema's enum, not from a list the model knows by heart."""
    schema = selection_schema()
    items = schema["properties"]["append_knowledge"]["items"]["properties"]
    items["source"]["enum"] = ["scheduled_workouts"]
    chosen = selection("Give me a workout for Thursday", [], schema)
    assert [item["source"] for item in chosen["append_knowledge"]] == ["scheduled_workouts"]


def test_the_offline_provider_answers_structured_calls_at_no_cost() -> None:
    """The provider registered for model "offline" answers complete_json with zero tokens, like today's runs."""
    request = json.dumps({"user_message": "hello", "today": "Thursday 2025-11-13", "loaded_sources": []})
    result = get_structured_provider("offline").complete_json(
        model="offline",
        system="",
        user=request,
        json_schema=selection_schema(),
        schema_name="knowledge_selection",
    )
    assert result.data["append_knowledge"] == [] and result.usage.total_tokens == 0
    with pytest.raises(LLMError):
        answer_json(user="{}", json_schema={}, schema_name="horoscope")
