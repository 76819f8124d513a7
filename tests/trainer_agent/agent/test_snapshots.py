"""Snapshots of the exact JSON bodies sent to Anthropic and to OpenAI for one fixed session.

Any change to the wire format, the system prompt, a tool's schema or description, the user-data XML or the
event-to-message conversion shows up here as a diff. When the change is intended, regenerate with

    UPDATE_SNAPSHOTS=1 .venv/bin/pytest tests/trainer_agent/agent/test_snapshots.py

and review the diff of tests/trainer_agent/agent/snapshots/ before committing it.
"""

from __future__ import annotations

import json
import os
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from datasources_app.services import create_location, upsert_profile, upsert_settings
from sessions_app.models import AgentSession
from sessions_app.services import append_event, create_session
from tests.support.clock import freeze_now
from tests.support.llm_fakes import (
    ScriptedTransport,
    anthropic_message,
    anthropic_provider_for,
    openai_completion,
    openai_provider_for,
)
from trainer_agent.context import build_context

pytestmark = pytest.mark.django_db

SNAPSHOTS = Path(__file__).parent / "snapshots"
USER_ID = uuid.UUID("00000000-0000-4000-8000-00000000c0de")


@pytest.fixture(autouse=True)
def _fixed_day(monkeypatch: pytest.MonkeyPatch) -> None:
    """The user data names today's date: the snapshots are taken on one fixed day."""
    freeze_now(monkeypatch, datetime(2025, 1, 15, 12, 0, tzinfo=UTC))


def assert_matches_snapshot(name: str, body: Any) -> None:
    """Compare `body` with snapshots/<name>.json (exact text, key order included); UPDATE_SNAPSHOTS=1 rewrites it."""
    path = SNAPSHOTS / f"{name}.json"
    text = json.dumps(body, indent=2, ensure_ascii=False) + "\n"
    if os.environ.get("UPDATE_SNAPSHOTS") == "1":
        path.write_text(text, encoding="utf-8")
        return
    assert path.exists(), f"No snapshot {path.name}: run with UPDATE_SNAPSHOTS=1 to create it"
    expected = path.read_text(encoding="utf-8")
    assert text == expected, (
        f"{path.name} differs; if intended, rerun with UPDATE_SNAPSHOTS=1 and review the diff"
    )


def fixed_session() -> AgentSession:
    """A user whose data does not depend on today's date, and a turn and a half of events with fixed ids."""
    upsert_settings(user_id=USER_ID, weight_unit="kg", distance_unit="km", timezone="UTC")
    upsert_profile(
        user_id=USER_ID, sex="female", height_cm=168.0, weight_kg=61.5, experience_level="beginner"
    )
    create_location(
        user_id=USER_ID,
        name="Home",
        equipment_slugs=["dumbbells"],
        available_weights_kg={"dumbbells": [4, 6, 8]},
        make_current=True,
    )
    session = create_session(user_id=USER_ID)
    exercise: dict[str, Any] = {
        "exercise_name": "Dumbbell Floor Press",
        "exercise_type": "reps",
        "order": 1,
        "sets": 3,
        "reps": [12, 12, 12],
        "load_each": [8, 8, 8],
        "load_unit": "kg",
        "rest_sec": 60,
        "muscles_utilized": [{"muscle": "Chest", "share": 0.7}, {"muscle": "Triceps", "share": 0.3}],
        "goals_addressed": [{"goal": "strength", "share": 1.0}],
        "reasoning": "Press without a bench.",
    }
    workout = {"title": "Quick Chest", "exercises": [exercise]}
    artifact = {
        "artifact_id": "art_5eed5eed5eed",
        "type": "exercise_list",
        "schema_version": "1.0",
        "title": "Quick Chest",
        "summary": {"exercise_count": 1, "estimated_duration_min": 8},
        "auto_start": False,
        "payload": {"title": "Quick Chest", "exercises": [{**exercise, "id": "ex_c0ffee"}]},
    }
    events: list[tuple[str, dict[str, Any]]] = [
        ("user_message", {"message": "Give me a quick chest workout"}),
        (
            "knowledge",
            {
                "source": "workout_history",
                "params": {"days_back": 14},
                "data": "No workouts logged in the last 14 days.",
            },
        ),
        (
            "tool_call",
            {"tool_name": "generate_workout", "arguments": {"workout": workout}, "call_id": "toolu_snap_01"},
        ),
        (
            "tool_result",
            {
                "tool_name": "generate_workout",
                "call_id": "toolu_snap_01",
                "success": True,
                "result": {
                    "success": True,
                    "data": {"artifact_id": "art_5eed5eed5eed"},
                    "formatted": '<tool_result name="generate_workout">\nCreated workout art_5eed5eed5eed '
                    "'Quick Chest': 1 exercises, ~8 min.\n</tool_result>",
                    "artifact_id": "art_5eed5eed5eed",
                },
            },
        ),
        ("artifact", artifact),
        (
            "tool_call",
            {
                "tool_name": "message_notify_user",
                "arguments": {"message": "Here you go!", "artifact_id": "art_5eed5eed5eed"},
                "call_id": "toolu_snap_02",
            },
        ),
        (
            "tool_result",
            {
                "tool_name": "message_notify_user",
                "call_id": "toolu_snap_02",
                "success": True,
                "result": {
                    "success": True,
                    "data": {},
                    "formatted": '<tool_result name="message_notify_user">\nok\n</tool_result>',
                },
            },
        ),
        ("user_message", {"message": "Can I do it without weights?"}),
    ]
    for event_type, data in events:
        append_event(session=session, event_type=event_type, data=data)
    return session


def test_anthropic_request_body_snapshot() -> None:
    """The Messages API body for the fixed session, as the real SDK sends it."""
    session = fixed_session()
    transport = ScriptedTransport(anthropic_message([("idle", {"reason": "done"}, "toolu_snap_03")]))
    request = build_context(session=session, user_id=USER_ID).to_request(model="claude-haiku-4-5")
    anthropic_provider_for(transport).complete(request)
    assert transport.urls == ["https://api.anthropic.com/v1/messages"]
    assert_matches_snapshot("anthropic_request", transport.bodies[0])


def test_openai_request_body_snapshot() -> None:
    """The chat-completions body for the same session, as the real SDK sends it."""
    session = fixed_session()
    transport = ScriptedTransport(openai_completion([("idle", {"reason": "done"}, "call_snap_03")]))
    request = build_context(session=session, user_id=USER_ID).to_request(model="gpt-4o-mini")
    openai_provider_for(transport).complete(request)
    assert transport.urls == ["https://api.openai.com/v1/chat/completions"]
    assert_matches_snapshot("openai_request", transport.bodies[0])
