"""The week chain on a model (scripted at the provider boundary) with deliberately bad outputs: the same
validation as generate_workout refuses them, retries carry the problems, and a day that stays bad says why
while the other days are prepared. Plus the turn-level guard: a model asking for a week the plan lacks."""

from __future__ import annotations

import uuid
from datetime import date, timedelta
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from datasources_app.models import Preparation, ScheduledWorkout
from tests.coaching.week.conftest import (
    Coached,
    prepared,
    reply_of,
    request_input,
    tools_of,
)
from trainer_agent.agents.callbacks import AgentRun, callback_registry
from trainer_agent.llm.providers import override_provider
from trainer_agent.llm.scripted import ScriptedProvider, StructuredRequest, tool_response
from trainer_agent.offline.structured import answer_json

PLAN = "Make me a 12-week strength plan, 3 days a week"


def good(user_id: uuid.UUID) -> Any:
    """A model that answers every sub-agent as the offline model does, from the request alone (valid output)."""

    def answer(request: StructuredRequest) -> dict[str, Any]:
        return answer_json(
            user=request.user, json_schema=request.json_schema, schema_name=request.schema_name
        ).data

    return answer


def barbell_squat(title: str) -> dict[str, Any]:
    return {
        "title": title,
        "exercises": [
            {
                "order": 1,
                "exercise_name": "Barbell Back Squat",
                "exercise_type": "reps",
                "sets": 4,
                "reps": [5, 5, 5, 5],
                "load_each": [60, 60, 60, 60],
                "load_unit": "kg",
                "rest_sec": 150,
                "muscles_utilized": [
                    {"muscle": "Quadriceps", "share": 0.6},
                    {"muscle": "Glutes", "share": 0.4},
                ],
                "goals_addressed": [{"goal": "strength", "share": 1.0}],
                "reasoning": "Heavy squat.",
            }
        ],
    }


@pytest.mark.django_db
def test_a_barbell_at_home_is_refused_and_only_that_day_fails(
    coached: Coached, subagents_on_model: Any
) -> None:
    """The model puts a barbell squat in Monday's workout twice: Monday fails naming the equipment; the
    other days are prepared; nothing with a barbell is stored."""
    answer = good(coached.user_id)

    def bad_monday(request: StructuredRequest) -> dict[str, Any]:
        data = request_input(request)
        if request.schema_name == "workout_structure" and "Full Body A" in str(data.get("title")):
            return barbell_squat(str(data["title"]))
        return answer(request)

    with subagents_on_model(bad_monday) as provider:
        coached.say(PLAN)
    monday, *others = coached.week(1)
    assert monday.preparation == Preparation.FAILED
    assert "barbell" in monday.preparation_error.lower()
    assert not monday.workout and not monday.message
    for item in others:
        prepared(item)
    retries = [r for r in provider.json_requests if "Your previous answer was rejected" in r.user]
    assert len(retries) == 1 and "barbell" in retries[0].user.lower()


@pytest.mark.django_db
def test_pounds_for_a_kg_user_are_stored_in_kg(coached: Coached, subagents_on_model: Any) -> None:
    """A workout in lb for a user in kg is accepted and stored converted to kg (units are the user's)."""
    answer = good(coached.user_id)
    seen: list[str] = []

    def pounds_once(request: StructuredRequest) -> dict[str, Any]:
        data = answer(request)
        if request.schema_name == "workout_structure" and not seen:
            seen.append(request.user)
            for exercise in data["exercises"]:
                if exercise.get("load_each"):
                    exercise["load_unit"] = "lb"
        return data

    with subagents_on_model(pounds_once) as provider:
        coached.say(PLAN)
    for item in coached.week(1):
        workout = prepared(item)
        assert {e.get("load_unit") for e in workout["exercises"] if e.get("load_each")} == {"kg"}
    assert not any("Your previous answer was rejected" in r.user for r in provider.json_requests)


@pytest.mark.django_db
def test_a_message_over_1600_characters_is_never_stored(coached: Coached, subagents_on_model: Any) -> None:
    """The model's SMS is too long twice for one day: that day fails citing the limit; no stored message
    anywhere is longer than 1,600 characters."""
    answer = good(coached.user_id)

    def long_for_friday(request: StructuredRequest) -> dict[str, Any]:
        data = request_input(request)
        if request.schema_name == "workout_message" and "Full Body C" in str(data.get("title")):
            return {"message": "Let's go! " * 200}
        return answer(request)

    with subagents_on_model(long_for_friday):
        coached.say(PLAN)
    *others, friday = coached.week(1)
    assert friday.preparation == Preparation.FAILED
    assert "1600" in friday.preparation_error
    assert all(len(item.message) <= 1600 for item in ScheduledWorkout.objects.all())
    for item in others:
        prepared(item)


@pytest.mark.django_db
def test_a_week_moved_off_the_plans_days_is_retried_with_the_dates(
    coached: Coached, subagents_on_model: Any
) -> None:
    """The microcycle first puts the sessions on other days: the retry lists the plan's days, and the
    corrected week lands on the calendar."""
    answer = good(coached.user_id)
    moved: list[bool] = []

    def shifted_once(request: StructuredRequest) -> dict[str, Any]:
        data = answer(request)
        if request.schema_name == "microcycle" and not moved:
            moved.append(True)
            days = data["days"]
            monday = date.fromisoformat(str(days[0]["date"]))
            data["days"] = [*days[1:], days[0]]
            for offset, (day, weekday) in enumerate(
                zip(data["days"], ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"), strict=True)
            ):
                day["weekday"] = weekday
                if day.get("date"):
                    day["date"] = (monday + timedelta(days=offset)).isoformat()
        return data

    with subagents_on_model(shifted_once) as provider:
        coached.say(PLAN)
    retry = next(r for r in provider.json_requests if "Your previous answer was rejected" in r.user)
    assert "training days must be week 1's sessions on the calendar: expected Mon" in retry.user
    for item in coached.week(1):
        prepared(item)


@pytest.mark.django_db
def test_a_week_that_cannot_be_laid_out_is_prepared_from_its_drafts(
    coached: Coached, subagents_on_model: Any
) -> None:
    """Two bad microcycles: no day fails for the layout, each is prepared from its drafted workout written out."""
    answer = good(coached.user_id)

    def no_week(request: StructuredRequest) -> dict[str, Any]:
        if request.schema_name == "microcycle":
            return {"week": 1, "deload": False, "days_per_week": 3, "target_rpe": 7, "days": []}
        return answer(request)

    with subagents_on_model(no_week):
        result = coached.say(PLAN)
    assert result.status == "completed"
    week = coached.week(1)
    assert week and all(item.preparation == Preparation.READY for item in week), [
        item.preparation_error for item in week
    ]
    assert all(str((item.preparation_layout or {}).get("markdown", "")).startswith("# ") for item in week)


@pytest.mark.django_db
def test_callbacks_fire_around_each_run_with_the_day(coached: Coached) -> None:
    """A callback scoped to workout_message hears the three runs of the week, each with its day's id."""
    heard: list[AgentRun] = []
    callback_registry.register("test.week_spy", heard.append, when="always", agents=("workout_message",))
    try:
        coached.say(PLAN)
    finally:
        callback_registry.unregister("test.week_spy")
    assert [run.agent_id for run in heard] == ["workout_message"] * 3
    assert all(run.success for run in heard)
    assert {run.context["scheduled_workout_id"] for run in heard} == {item.pk for item in coached.week(1)}


@pytest.mark.django_db
def test_a_model_asking_for_a_week_the_plan_lacks_is_told_how_many_it_has(coached: Coached) -> None:
    """The trainer model calls prepare_week for week 13: refused with the plan's length; then week 2 works."""
    coached.say(PLAN)
    model = "claude-sonnet-4-5"
    script = ScriptedProvider(
        [
            tool_response("prepare_week", {"week": 13}),
            tool_response("prepare_week", {"week": 2}),
            tool_response("message_notify_user", {"message": "Week 2 is on its way."}),
            tool_response("idle", {"reason": "done"}),
        ]
    )
    with override_provider(model, script):
        result = coached.say("Get next week ready", model=model)
    first, second = result.actions[0], result.actions[1]
    assert first.tool == second.tool == "prepare_week"
    assert first.result["success"] is False and "12 weeks" in str(first.result)
    assert second.result["success"] is True
    assert reply_of(result) == "Week 2 is on its way."
    for item in coached.week(2):
        prepared(item)


@pytest.mark.django_db
def test_a_week_already_being_prepared_is_not_started_twice(coached: Coached) -> None:
    """Asking again while the week is pending is refused; a request lost for over 10 minutes is redone."""
    coached.say(PLAN)
    week_two = coached.week(2)
    ScheduledWorkout.objects.filter(pk__in=[item.pk for item in week_two]).update(
        preparation=Preparation.PENDING, updated_at=timezone.now()
    )
    result = coached.say("prepare week 2")
    assert result.actions[0].tool == "prepare_week" and result.actions[0].result["success"] is False
    assert "already being prepared" in str(result.actions[0].result)
    ScheduledWorkout.objects.filter(pk__in=[item.pk for item in week_two]).update(
        updated_at=timezone.now() - timedelta(minutes=11)
    )
    result = coached.say("prepare week 2")
    assert result.actions[0].result["success"] is True
    for item in coached.week(2):
        prepared(item)


@pytest.mark.django_db
def test_staff_see_the_message_in_the_admin(coached: Coached, admin_client: Client) -> None:
    """The scheduled workout's admin page shows the day's message and its length; the list filters by state."""
    coached.say(PLAN)
    item = coached.week(1)[0]
    page = admin_client.get(reverse("admin:datasources_app_scheduledworkout_change", args=[item.pk]))
    assert page.status_code == 200
    body = page.content.decode()
    assert item.message.splitlines()[1].strip().split(":")[0] in body
    assert f"{len(item.message)} of 1,600 characters" in body
    listing = admin_client.get(
        reverse("admin:datasources_app_scheduledworkout_changelist"), {"preparation": "ready"}
    )
    assert listing.status_code == 200 and item.title in listing.content.decode()
    assert tools_of(coached.say("thanks"))  # the conversation goes on


@pytest.mark.django_db
def test_a_crash_in_the_chain_leaves_no_day_pending(coached: Coached, subagents_on_model: Any) -> None:
    """An unexpected error inside the chain (not a model error) ends the task, and the week's days say they
    failed instead of waiting forever; the conversation carries on."""
    answer = good(coached.user_id)

    def crash_on_structure(request: StructuredRequest) -> dict[str, Any]:
        if request.schema_name == "workout_structure":
            raise RuntimeError("bug in the chain")
        return answer(request)

    with subagents_on_model(crash_on_structure):
        result = coached.say(PLAN)
    assert result.status == "completed"
    week = coached.week(1)
    assert week and all(item.preparation == Preparation.FAILED for item in week)
    # The day being structured is failed by the week.day_failed callback (a plain reason the user can be told:
    # the crash itself is in the logs, `week.failed`); the chain's guard fails the rest.
    assert week[0].preparation_error == "the workout did not come out right", week[0].preparation_error
    assert all(item.preparation_error == "something went wrong on our side" for item in week[1:])
    assert coached.say("thanks").status == "completed"
