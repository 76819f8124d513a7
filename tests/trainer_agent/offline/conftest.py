"""Fixtures for the offline coach: the demo user in a known state, and helpers to run turns and inspect them."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from datasources_app.demo import DEMO_USER_ID
from datasources_app.models import Location
from datasources_app.selectors import find_exercise_by_name
from datasources_app.services import (
    seed_demo_user,
    set_current_location,
    upsert_profile,
)
from datasources_app.workouts import Workout
from sessions_app.models import AgentSession
from sessions_app.selectors import get_artifact
from tests.support.training import log_heavy_legs
from tools_app.workout_validation import validate_workout
from trainer_agent.loop import TurnResult
from trainer_agent.turns import run_turn

HOME_EQUIPMENT = frozenset({"dumbbells", "bench", "resistance_bands"})
LEGS = ("Quadriceps", "Hamstrings", "Glutes")
# Slug patterns (regexes) the demo user's knee limitation rules out (jumping and deep knee flexion).
KNEE_UNSAFE = (
    "lunge",
    "split-squat",
    "step-up",
    "jump",
    "burpee",
    "tuck-jump",
    "box-jump",  # a box squat (to a bench, to parallel) is knee-friendly work for the demo's mild knee
    "(?<!marching-)high-knees",  # marching high knees keep a foot on the floor: low-impact cardio
    "bound",
)


@dataclass
class DemoUser:
    """The seeded demo user (knee limitation, "No burpees" preference, Home current), with setup helpers."""

    user_id: uuid.UUID

    def at(self, name: str) -> None:
        location = Location.objects.get(user_id=self.user_id, name=name)
        set_current_location(user_id=self.user_id, location_id=location.id)

    def injured(self, injuries: str, *limitations: str) -> None:
        upsert_profile(user_id=self.user_id, injuries=injuries, limitations=list(limitations))

    def trained_legs(self, *, hours_ago: float) -> None:
        """A heavy leg session logged `hours_ago` hours ago."""
        log_heavy_legs(self.user_id, hours_ago=hours_ago)

    def run(self, message: str, *, session_id: uuid.UUID | None = None) -> TurnResult:
        return run_turn(user_id=self.user_id, message=message, model="offline", session_id=session_id)


@pytest.fixture
def demo(db: None) -> DemoUser:
    seed_demo_user()
    return DemoUser(DEMO_USER_ID)


def tools_of(result: TurnResult) -> list[str]:
    return [action.tool for action in result.actions]


WORKOUT_TOOLS = ("draft_workout", "generate_workout")  # the tools that create a workout


def created_workout(result: TurnResult) -> dict[str, Any]:
    """The workout the turn's last successful draft_workout/generate_workout call created, as stored."""
    calls = [a for a in result.actions if a.tool in WORKOUT_TOOLS and a.result.get("success")]
    assert calls, f"no workout created in {tools_of(result)}"
    session = AgentSession.objects.get(pk=result.session_id)
    artifact = get_artifact(session=session, artifact_id=calls[-1].result["artifact_id"])
    assert artifact is not None
    return {"title": artifact["title"], **artifact["payload"]}


def generated(result: TurnResult) -> list[dict[str, Any]]:
    """The exercises of the workout the turn created."""
    exercises: list[dict[str, Any]] = created_workout(result)["exercises"]
    return exercises


def main_exercises(exercises: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in exercises if (e.get("group") or {}).get("type") not in ("warmup", "cooldown")]


def slug_of(exercise: dict[str, Any]) -> str:
    found = find_exercise_by_name(name=exercise["exercise_name"])
    assert found is not None, exercise["exercise_name"]
    return found.slug


def validation_problems(exercises: list[dict[str, Any]], user_id: uuid.UUID) -> list[str]:
    return validate_workout(Workout.model_validate({"exercises": exercises}), user_id=user_id)


def hard_share(exercise: dict[str, Any], muscles: tuple[str, ...]) -> float:
    return max((m["share"] for m in exercise["muscles_utilized"] if m["muscle"] in muscles), default=0.0)


Check = Callable[[DemoUser, TurnResult], None]
