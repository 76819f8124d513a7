"""Fixtures for tool tests: a session with a context, and a way to store artifacts in it."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import pytest

from sessions_app.models import AgentSession
from sessions_app.services import append_event, create_session
from tools_app.types import ToolContext

StoreArtifact = Callable[..., dict[str, Any]]


@pytest.fixture
def session(db: None) -> AgentSession:
    return create_session(user_id=uuid.uuid4())


@pytest.fixture
def ctx(session: AgentSession) -> ToolContext:
    return ToolContext(user_id=session.user_id, session=session)


def workout_artifact(artifact_id: str, exercise_ids: list[str], *, title: str = "Workout") -> dict[str, Any]:
    """Artifact event data (docs/contracts.md §6.4 (event data)) for a workout holding exercises with the given ids."""
    return {
        "artifact_id": artifact_id,
        "type": "exercise_list",
        "schema_version": "1.0",
        "title": title,
        "summary": {"exercise_count": len(exercise_ids)},
        "auto_start": False,
        "payload": {
            "exercises": [
                {"id": exercise_id, "exercise_name": f"Exercise {exercise_id}", "exercise_type": "reps"}
                for exercise_id in exercise_ids
            ]
        },
    }


@pytest.fixture
def store_artifact(session: AgentSession) -> StoreArtifact:
    """Append an `artifact` event to the session and return its data."""

    def store(data: dict[str, Any]) -> dict[str, Any]:
        append_event(session=session, event_type="artifact", data=data)
        return data

    return store
