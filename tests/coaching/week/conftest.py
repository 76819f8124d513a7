"""Fixtures for the week conversations: the demo user, turns whose background work runs when they commit,
and readers for the plan's prepared days."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from datasources_app.demo import DEMO_USER_ID
from datasources_app.models import Location, Preparation, ScheduledWorkout, WorkoutPlan
from datasources_app.selectors import find_exercise_by_name
from datasources_app.services import seed_demo_user, set_current_location, upsert_settings
from datasources_app.workouts import Workout
from sessions_app.models import AgentSession
from tools_app.workout_validation import validate_workout
from trainer_agent.llm.scripted import StructuredRequest
from trainer_agent.loop import TurnResult
from trainer_agent.turns import run_turn

SUBAGENT_MODEL = "claude-haiku-4-5"


@dataclass
class Coached:
    """The demo user talking to the offline coach; background work (the week chain) runs as each turn commits."""

    user_id: uuid.UUID
    capture: Callable[..., Any]
    session_id: uuid.UUID | None = None

    def say(self, message: str, *, model: str = "offline") -> TurnResult:
        with self.capture(execute=True):
            result = run_turn(user_id=self.user_id, message=message, model=model, session_id=self.session_id)
        self.session_id = result.session_id
        return result

    @property
    def session(self) -> AgentSession:
        assert self.session_id is not None, "no turn yet"
        return AgentSession.objects.get(pk=self.session_id)

    def at(self, name: str) -> None:
        location = Location.objects.get(user_id=self.user_id, name=name)
        set_current_location(user_id=self.user_id, location_id=location.id)

    def plan(self) -> WorkoutPlan:
        return WorkoutPlan.objects.get(user_id=self.user_id, status="active")

    def week(self, number: int) -> list[ScheduledWorkout]:
        """The active plan's sessions of week `number`, in date order."""
        return [
            item
            for item in ScheduledWorkout.objects.filter(plan=self.plan()).order_by("scheduled_date")
            if f"(week {number})" in item.title or f"(week {number}," in item.title
        ]


@pytest.fixture
def coached(db: None, settings: Any, django_capture_on_commit_callbacks: Any) -> Coached:
    """The demo user (kg, Home: dumbbells 5-25 kg, bench, bands; left-knee limitation; "No burpees")."""
    settings.PRIMARY_MODEL = "offline"
    settings.INITIALIZER_MODEL = "offline"
    seed_demo_user()
    return Coached(DEMO_USER_ID, django_capture_on_commit_callbacks)


@pytest.fixture
def in_pounds(coached: Coached) -> Coached:
    upsert_settings(user_id=coached.user_id, weight_unit="lb")
    return coached


def tools_of(result: TurnResult) -> list[str]:
    return [action.tool for action in result.actions]


def reply_of(result: TurnResult) -> str:
    messages = [
        str(action.args.get("message") or action.args.get("question") or "")
        for action in result.actions
        if action.tool in ("message_notify_user", "message_ask_user") and action.result.get("success")
    ]
    assert messages, f"no message in {tools_of(result)}"
    return messages[-1]


def prepared(item: ScheduledWorkout) -> dict[str, Any]:
    """The day's stored workout, after checking it is ready, valid for the user and has its message."""
    assert item.preparation == Preparation.READY, (item.title, item.preparation, item.preparation_error)
    assert item.workout and item.workout["exercises"], item.title
    problems = validate_workout(Workout.model_validate(item.workout), user_id=item.user_id)
    assert problems == [], problems
    assert 0 < len(item.message) <= 1600
    workout: dict[str, Any] = item.workout
    return workout


def slugs(workout: dict[str, Any]) -> list[str]:
    found = [find_exercise_by_name(name=e["exercise_name"]) for e in workout["exercises"]]
    assert all(found), [e["exercise_name"] for e in workout["exercises"]]
    return [exercise.slug for exercise in found if exercise is not None]


def main_sets(workout: dict[str, Any]) -> dict[str, int]:
    """Sets per loaded (reps) exercise with more than one set: the main work of the day."""
    return {
        e["exercise_name"]: int(e["sets"])
        for e in workout["exercises"]
        if e["exercise_type"] == "reps" and int(e.get("sets") or 0) > 1
    }


@pytest.fixture
def subagents_on_model(settings: Any) -> Iterator[Callable[..., Any]]:
    """Run the sub-agents on a real model id answered by a function of the structured request."""
    from trainer_agent.llm.providers import override_provider
    from trainer_agent.llm.scripted import ScriptedProvider

    def serve(answer: Callable[[StructuredRequest], dict[str, Any]], *, calls: int = 40) -> Any:
        settings.PRIMARY_MODEL = SUBAGENT_MODEL
        return override_provider(SUBAGENT_MODEL, ScriptedProvider(json_steps=[answer] * calls))

    yield serve


def request_input(request: StructuredRequest) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(request.user.split("\n\nYour previous answer was rejected")[0])["input"]
    return data
