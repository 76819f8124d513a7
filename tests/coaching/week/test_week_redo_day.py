"""A day the week chain could not prepare: the user hears of it at their next turn, and the coach prepares that
day again on its own (its own two model calls; the week's other days untouched)."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import pytest

from datasources_app.models import Preparation, ScheduledWorkout
from datasources_app.sources import fetch_and_format
from sessions_app.models import AgentSessionEvent, EventType
from tests.coaching.week.conftest import SUBAGENT_MODEL, Coached, prepared, request_input
from tests.coaching.week.test_week_guardrails import PLAN, barbell_squat, good
from trainer_agent.agents.week import day_failure_reason
from trainer_agent.llm.providers import override_provider
from trainer_agent.llm.scripted import ScriptedProvider, StructuredRequest, tool_response

pytestmark = pytest.mark.django_db

Answer = Callable[[StructuredRequest], dict[str, Any]]


def monday_fails(user_id: uuid.UUID) -> Answer:
    """Valid answers, except Monday's workout: a barbell squat at Home, every time (so it fails its retry too)."""
    answer = good(user_id)

    def serve(request: StructuredRequest) -> dict[str, Any]:
        data = request_input(request)
        if request.schema_name == "workout_structure" and "Full Body A" in str(data.get("title")):
            return barbell_squat(str(data["title"]))
        return answer(request)

    return serve


def snapshot(items: list[ScheduledWorkout]) -> list[tuple[Any, ...]]:
    return [(item.pk, item.workout, item.message, item.preparation, item.updated_at) for item in items]


def schedule_knowledge(coached: Coached) -> list[str]:
    """The schedule texts loaded into the session's context, in order."""
    events = AgentSessionEvent.objects.filter(
        session=coached.session, event_type=EventType.KNOWLEDGE, data__source="scheduled_workouts"
    ).order_by("sequence_number")
    return [str(event.data["data"]) for event in events]


def redo(coached: Coached, arguments: dict[str, Any]) -> tuple[Any, ScriptedProvider]:
    """A trainer model's turn that calls prepare_week with `arguments`; the sub-agents answer validly."""
    script = ScriptedProvider(
        [
            tool_response("prepare_week", arguments),
            tool_response("message_notify_user", {"message": "On it: Monday is being prepared again."}),
            tool_response("idle", {"reason": "done"}),
        ],
        json_steps=[good(coached.user_id)] * 20,
    )
    with override_provider(SUBAGENT_MODEL, script):
        result = coached.say("Can you fix Monday's workout?", model=SUBAGENT_MODEL)
    return result, script


@pytest.fixture
def monday_failed(coached: Coached, subagents_on_model: Any) -> Coached:
    """Week 1 prepared with Monday's workout refused twice (a barbell at Home): Monday failed, the rest ready."""
    with subagents_on_model(monday_fails(coached.user_id)):
        coached.say(PLAN)
    monday, *others = coached.week(1)
    assert monday.preparation == Preparation.FAILED
    assert monday.preparation_error.startswith("the workout came out with Barbell Back Squat"), (
        monday.preparation_error
    )
    for item in others:
        prepared(item)
    return coached


def test_the_next_turn_shows_the_coach_the_failed_day_whatever_the_user_says(monday_failed: Coached) -> None:
    """The chain ran after the turn that asked had ended: at the user's next message, even small talk, the
    schedule (with Monday's failure and its reason) is loaded for the coach; once shown, not again."""
    coached = monday_failed
    before = len(schedule_knowledge(coached))
    coached.say("thanks!")
    loaded = schedule_knowledge(coached)
    assert len(loaded) == before + 1
    assert "preparation failed: the workout came out with Barbell Back Squat, but " in loaded[-1], loaded[-1]
    assert "not prepared: tell the user which day and why, and offer to prepare it again" in loaded[-1]
    coached.say("cool")
    assert len(schedule_knowledge(coached)) == before + 1


def test_redoing_the_failed_day_costs_only_its_calls_and_leaves_the_others(monday_failed: Coached) -> None:
    """prepare_week(workout_id=Monday): Monday is prepared from the week's stored layout with its own structure
    and message calls (no microcycle), Wednesday and Friday keep their workouts untouched, the week is ready."""
    coached = monday_failed
    monday, *others = coached.week(1)
    untouched = snapshot(others)
    result, script = redo(coached, {"workout_id": str(monday.pk)})
    call = result.actions[0]
    assert call.tool == "prepare_week" and call.result["success"] is True, call.result
    assert [day["workout_id"] for day in call.result["data"]["week_preparation"]["days"]] == [str(monday.pk)]
    assert "It shows up in your schedule as soon as it's ready." in call.result["formatted"]
    assert [request.schema_name for request in script.json_requests] == [
        "workout_structure",
        "workout_message",
    ]
    monday, *others = coached.week(1)
    prepared(monday)
    assert snapshot(others) == untouched
    assert coached.plan().plan["weeks"][0]["preparation"]["status"] == "ready"


def test_asking_for_the_week_again_prepares_only_the_days_not_ready(monday_failed: Coached) -> None:
    """A model that asks for the whole week again (prepare_week(week=1)) after Monday failed gets Monday alone
    prepared again; the ready days are kept and listed as kept."""
    coached = monday_failed
    monday, *others = coached.week(1)
    untouched = snapshot(others)
    result, script = redo(coached, {"week": 1})
    preparation = result.actions[0].result["data"]["week_preparation"]
    assert [day["workout_id"] for day in preparation["days"]] == [str(monday.pk)]
    assert [day["workout_id"] for day in preparation["kept"]] == [str(item.pk) for item in others]
    assert "Kept as they are (already ready)" in result.actions[0].result["formatted"]
    assert [request.schema_name for request in script.json_requests] == [
        "workout_structure",
        "workout_message",
    ]
    prepared(coached.week(1)[0])
    assert snapshot(coached.week(1)[1:]) == untouched


def test_a_failed_day_moved_to_another_date_is_laid_out_again(monday_failed: Coached) -> None:
    """Moved to Tuesday, the day is prepared again from a draft made for its new date (its own two calls, no
    layout of the week again), the other days still untouched."""
    coached = monday_failed
    monday, *others = coached.week(1)
    untouched = snapshot(others)
    ScheduledWorkout.objects.filter(pk=monday.pk).update(
        scheduled_date=monday.scheduled_date + (others[0].scheduled_date - monday.scheduled_date) / 2
    )
    result, script = redo(coached, {"workout_id": str(monday.pk)})
    assert result.actions[0].result["success"] is True, result.actions[0].result
    assert [request.schema_name for request in script.json_requests] == [
        "workout_structure",
        "workout_message",
    ]
    prepared(coached.week(1)[0])
    assert snapshot(coached.week(1)[1:]) == untouched


def test_a_failed_days_reason_is_one_plain_sentence_and_staff_keep_the_detail(monday_failed: Coached) -> None:
    """The reason stored on the failed day (what the schedule shows and the coach passes on) names the exercise
    and why in plain words, not the validator's text; the session's error event keeps that text for staff."""
    monday = monday_failed.week(1)[0]
    reason = monday.preparation_error
    assert reason.startswith("the workout came out with Barbell Back Squat, "), reason
    assert not any(word in reason for word in ("exercise 1", "available:", "(", "unsafe for the user")), (
        reason
    )
    assert len(reason) < 200, reason
    errors = AgentSessionEvent.objects.filter(
        session=monday_failed.session, event_type=EventType.ERROR, data__scheduled_workout_id=str(monday.pk)
    )
    assert any("exercise 1 'Barbell Back Squat'" in str(event.data["message"]) for event in errors), [
        event.data for event in errors
    ]


def test_a_day_refused_for_the_knee_says_which_exercise_in_plain_words() -> None:
    """The validator's injury text (the rule, its source, the advice) becomes 'it came out with Walking Lunge,
    which isn't a good idea for your knee' on the day."""
    problem = (
        "exercise 5 'Walking Lunge': unsafe for the user's knee (injury: left knee, mild): a lunge loads the knee "
        "through deep flexion; prefer box squats to parallel or above, hinges and hamstring curls"
    )
    assert day_failure_reason("workout_structure", [problem]) == (
        "the workout came out with Walking Lunge, which isn't a good idea for your knee"
    )


def test_the_failed_weeks_reason_says_the_failure_once(monday_failed: Coached) -> None:
    """The plans the coach reads said "week 1 preparation partly failed: 1 of 3 days could not be prepared: This
    day's workout could not be prepared: …": now the week says how many days and why, once; the day's line says
    it failed and why, and the line under it what to offer."""
    coached = monday_failed
    plans = fetch_and_format(user_id=coached.user_id, source="workout_plans", params={}).text
    (week,) = [line.strip() for line in plans.splitlines() if "preparation partly failed" in line]
    assert week == (
        "week 1 preparation partly failed: 1 of 3 days, because the workout came out with Barbell Back Squat, "
        f"but {coached.week(1)[0].preparation_error.split(', but ', 1)[1]}"
    )
    schedule = fetch_and_format(
        user_id=coached.user_id, source="scheduled_workouts", params={"days_ahead": 14}
    )
    for text in (plans, schedule.text):
        assert "could not be prepared" not in text and "Ask the coach" not in text, text
