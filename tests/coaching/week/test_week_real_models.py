"""The week chain answered by a model that spells things its own way (issue 23, "Real models"): weekday
names in any obvious spelling pass first time, a wrong answer is retried with what was expected and what was
got, a failure after the retries reaches the calendar, the plan, the session and the trainer's data without
disturbing the next turn, injuries hold for plans and weeks, a moved day is prepared on its new date, and a
plan can be made for another location."""

from __future__ import annotations

import json
from datetime import date, timedelta
from typing import Any

import pytest

from datasources_app.models import Location, Preparation, ScheduledWorkout
from datasources_app.services import update_scheduled_workout
from datasources_app.workouts import Workout
from sessions_app.models import AgentSessionEvent, AgentTurn, EventType
from sessions_app.services import create_session
from tests.coaching.week.conftest import Coached, prepared, request_input, slugs, tools_of
from tests.coaching.week.test_week_guardrails import PLAN, barbell_squat, good
from tools_app.registry import execute_tool
from tools_app.types import ToolContext
from tools_app.workout_validation import validate_workout
from trainer_agent.agents.subagents import run_subagent
from trainer_agent.frames import frame_kind, turn_frames
from trainer_agent.llm.scripted import StructuredRequest

FULL_NAMES = {
    "Mon": "Monday",
    "Tue": "Tuesday",
    "Wed": "Wednesday",
    "Thu": "Thursday",
    "Fri": "Friday",
    "Sat": "Saturday",
    "Sun": "Sunday",
}
REJECTED = "Your previous answer was rejected"


def retries(provider: Any, schema: str) -> list[StructuredRequest]:
    return [r for r in provider.json_requests if r.schema_name == schema and REJECTED in r.user]


@pytest.mark.django_db
@pytest.mark.parametrize(
    "spell", [lambda day: FULL_NAMES[day], lambda day: day.lower(), lambda day: FULL_NAMES[day].upper()]
)
def test_weekdays_in_any_spelling_pass_first_time(
    coached: Coached, subagents_on_model: Any, spell: Any
) -> None:
    """The microcycle (and the plan) answered with 'Monday', 'mon' or 'MONDAY': no retry, the week is ready."""
    answer = good(coached.user_id)

    def spelled(request: StructuredRequest) -> dict[str, Any]:
        data = answer(request)
        if request.schema_name == "microcycle":
            for day in data["days"]:
                day["weekday"] = spell(day["weekday"])
        if request.schema_name == "fitness_plan":
            data["weekdays"] = [spell(day) for day in data["weekdays"]]
            for week in data["weeks"]:
                for day in week["days"]:
                    day["weekday"] = spell(day["weekday"])
        return data

    with subagents_on_model(spelled) as provider:
        coached.say(PLAN)
    assert [r for r in provider.json_requests if REJECTED in r.user] == []
    week = coached.week(1)
    assert len(week) == 3
    for item in week:
        prepared(item)
    assert coached.plan().plan["weekdays"] == ["Mon", "Wed", "Fri"]


@pytest.mark.django_db
def test_the_prompt_says_what_the_checks_accept(coached: Coached, subagents_on_model: Any) -> None:
    """The microcycle is given the week's calendar with dates and the user's facts; the schema it is sent
    accepts the weekday spellings the prompt allows."""
    with subagents_on_model(good(coached.user_id)) as provider:
        coached.say(PLAN)
    request = next(r for r in provider.json_requests if r.schema_name == "microcycle")
    data = request_input(request)
    assert [day["weekday"] for day in data["calendar"]] == ["Mon", "Wed", "Fri"]
    assert "input.calendar" in request.system and "Monday to Sunday" in request.system
    facts = request.user.split('"user": ', 1)[1]
    for fact in ("today", "injuries", "knee", "preferences", "recent_training", "equipment", "Home"):
        assert fact in facts, fact


@pytest.mark.django_db
def test_a_refused_week_layout_still_prepares_the_days_and_staff_see_it(
    coached: Coached, subagents_on_model: Any
) -> None:
    """The microcycle is wrong twice: each day is still prepared (from its drafted workout), the plan's week is
    ready, staff see a non-fatal error event naming the sub-agent, and the next chat turn (and its stream) is
    normal."""
    answer = good(coached.user_id)

    def wrong_week(request: StructuredRequest) -> dict[str, Any]:
        data = answer(request)
        if request.schema_name == "microcycle":
            data["days"] = [day for day in data["days"] if day["weekday"] != "Wed"]
        return data

    with subagents_on_model(wrong_week) as provider:
        coached.say(PLAN)
    retry = retries(provider, "microcycle")
    assert len(retry) == 1
    assert "expected Mon" in retry[0].user and "missing Wed" in retry[0].user

    week = coached.week(1)
    assert all(item.preparation == Preparation.READY for item in week), [i.preparation_error for i in week]
    assert coached.plan().plan["weeks"][0]["preparation"]["status"] == "ready"

    errors = AgentSessionEvent.objects.filter(session=coached.session, event_type=EventType.ERROR)
    assert [(e.data["purpose"], e.data["fatal"], e.data["week"]) for e in errors] == [
        ("subagent:microcycle", False, 1)
    ]

    result = coached.say("Give me a quick 20 minute upper body workout")
    assert result.status == "completed"
    assert "draft_workout" in tools_of(result)
    turn = AgentTurn.objects.filter(session_id=result.session_id).order_by("-start_sequence").first()
    assert turn is not None
    kinds = [frame_kind(frame) for frame in turn_frames(turn)]
    assert kinds[-1] == "done" and "error" not in kinds
    assert "draft_workout" in [frame.get("type") for frame in turn_frames(turn)]


@pytest.mark.django_db
def test_a_plan_naming_a_squat_for_a_bad_knee_is_retried(coached: Coached, subagents_on_model: Any) -> None:
    """The demo user's knee: a plan prescribing goblet squats is rejected and retried with the reason."""
    answer = good(coached.user_id)

    def squats_once(request: StructuredRequest) -> dict[str, Any]:
        data = answer(request)
        if request.schema_name == "fitness_plan" and not retries(provider, "fitness_plan"):
            data["weeks"][0]["days"][0]["prescription"] = "Goblet squats 3x10, box squats 3x8, push-ups 3x12"
        return data

    with subagents_on_model(squats_once) as provider:
        coached.say(PLAN)
    retry = retries(provider, "fitness_plan")
    assert len(retry) == 1
    assert "'Goblet squats' is unsafe for the user's knee" in retry[0].user
    assert "squat" not in str(coached.plan().plan["weeks"][0]["days"][0]["prescription"]).lower()


@pytest.mark.django_db
def test_a_week_naming_a_lunge_for_a_bad_knee_is_retried(coached: Coached, subagents_on_model: Any) -> None:
    """A microcycle whose Monday workout lists reverse lunges is rejected for the knee, then corrected."""
    answer = good(coached.user_id)

    def lunges_once(request: StructuredRequest) -> dict[str, Any]:
        data = answer(request)
        if request.schema_name == "microcycle" and not retries(provider, "microcycle"):
            monday = data["days"][0]
            monday["markdown"] = str(monday["markdown"]).replace(
                "## Main Workout", "## Main Workout\n1. Reverse Lunge — 3x10 @ 10kg, rest 60s", 1
            )
        return data

    with subagents_on_model(lunges_once) as provider:
        coached.say(PLAN)
    retry = retries(provider, "microcycle")
    assert len(retry) == 1 and "'Reverse Lunge' is unsafe for the user's knee" in retry[0].user
    for item in coached.week(1):
        assert all("lunge" not in slug for slug in slugs(prepared(item)))


@pytest.mark.django_db
def test_a_moved_day_is_prepared_on_its_new_date(coached: Coached) -> None:
    """Wednesday's session moved to Thursday on the calendar: preparing the week again lays Thursday out."""
    coached.say(PLAN)
    _, wednesday, _ = coached.week(1)
    thursday = wednesday.scheduled_date + timedelta(days=1)
    update_scheduled_workout(
        user_id=coached.user_id, scheduled_workout_id=wednesday.pk, scheduled_date=thursday
    )
    result = coached.say("Please prepare week 1 again")
    assert "prepare_week" in tools_of(result)
    moved = ScheduledWorkout.objects.get(pk=wednesday.pk)
    assert moved.scheduled_date == thursday
    assert prepared(moved)["exercises"]
    for item in coached.week(1):
        prepared(item)
    assert not ScheduledWorkout.objects.filter(
        plan=coached.plan(), scheduled_date=wednesday.scheduled_date
    ).exists()


@pytest.mark.django_db
def test_the_offline_week_follows_the_calendar(coached: Coached) -> None:
    """The offline microcycle puts each calendar session on its (moved) date, with the plan's session."""
    coached.say(PLAN)
    plan = coached.plan().plan
    days = plan["weeks"][0]["days"]
    calendar = [
        {"date": days[0]["date"], "weekday": "Mon", "title": days[0]["title"], "status": "scheduled"},
        {"date": days[1]["date"], "weekday": "Wed", "title": days[1]["title"], "status": "cancelled"},
        {
            "date": (date.fromisoformat(days[1]["date"]) + timedelta(days=1)).isoformat(),
            "weekday": "Thu",
            "title": days[1]["title"],
            "status": "scheduled",
        },
    ]
    cycle = run_subagent(
        "microcycle", input={"week": 1, "plan": plan, "calendar": calendar}, user_id=coached.user_id
    ).output
    training = [(day.weekday, day.session) for day in cycle.days if not day.rest]
    assert training == [("Mon", days[0]["session"]), ("Thu", days[1]["session"])]
    assert cycle.days_per_week == 2


def _tool(coached: Coached, name: str, args: dict[str, Any]) -> Any:
    session = create_session(user_id=coached.user_id)
    return execute_tool(name, args, ToolContext(user_id=coached.user_id, session=session))


@pytest.mark.django_db
def test_create_workout_plan_for_another_location(coached: Coached) -> None:
    """At Home, a plan for the Gym: it records the Gym and its week is written for the Gym; an unknown location
    is refused naming the user's locations."""
    gym = Location.objects.get(user_id=coached.user_id, name="Gym")
    with coached.capture(execute=True):
        result = _tool(
            coached, "create_workout_plan", {"name": "Gym block", "goal": "get stronger", "location": "gym"}
        )
    assert result.success, result.formatted
    assert coached.plan().plan["location"] == {"id": str(gym.id), "name": "Gym"}
    assert "for Gym" in result.formatted
    for item in coached.week(1):
        assert item.preparation == Preparation.READY, item.preparation_error
    # Every sub-agent of the week wrote for (and was checked against) the Gym, not the current Home.
    prompts = [
        str(event.data["prompt"])
        for event in AgentSessionEvent.objects.filter(event_type=EventType.LLM_REQUEST)
        if str(event.data.get("purpose", "")).startswith("subagent:")
    ]
    assert len(prompts) == 1 + 1 + 3 + 3
    assert all(f'"location_id": "{gym.id}"' in prompt for prompt in prompts)

    refused = _tool(
        coached, "create_workout_plan", {"name": "X", "goal": "get stronger", "location": "Beach"}
    )
    assert not refused.success
    assert all(word in refused.formatted for word in ("Beach", "Gym", "Home"))


@pytest.mark.django_db
def test_a_plan_location_is_checked_even_when_the_user_is_elsewhere(
    coached: Coached,
) -> None:
    """A Gym plan's day with a barbell squat is valid for the Gym although the user is at Home."""
    gym = Location.objects.get(user_id=coached.user_id, name="Gym")
    workout = Workout.model_validate(barbell_squat("Gym day"))
    at_home = validate_workout(workout, user_id=coached.user_id)
    at_gym = validate_workout(workout, user_id=coached.user_id, location_id=gym.id)
    assert any("barbell" in problem for problem in at_home)
    assert not any("barbell" in problem for problem in at_gym)


@pytest.mark.django_db
def test_a_full_week_with_its_workouts_fits_the_microcycles_output_budget(
    coached: Coached, subagents_on_model: Any
) -> None:
    """A 6-day week asks the microcycle for 7 days and 6 markdown workouts in one answer. The offline model
    writes each day's drafted workout as bare lines; a model adds cues and notes (a trial's model, given 2,048
    tokens, wrote terse markdown to fit 3 days): twice the offline answer, at a pessimistic 3 characters a
    token, fits the max_tokens the model is given."""
    with subagents_on_model(good(coached.user_id)) as provider:
        coached.say("Make me a 4-week plan to build muscle, 6 days a week")
    request = next(r for r in provider.json_requests if r.schema_name == "microcycle")
    answer = good(coached.user_id)(request)
    assert sum(1 for day in answer["days"] if day.get("markdown")) == 6
    assert 2 * len(json.dumps(answer, ensure_ascii=False)) / 3 < request.max_tokens
