"""A frame's `type` is the stream protocol's or a registered tool's: the model cannot forge a `done` frame."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from pytest_django import Settings

from sessions_app.models import AgentSession, SessionStatus
from trainer_agent.llm.providers import override_provider
from trainer_agent.llm.scripted import ScriptedProvider, tool_response
from trainer_agent.turns import run_turn

PROTOCOL_TYPES = {
    "status",
    "knowledge",
    "done",
    "error",
    "message_preview",
    "exercise_preview",
    "unknown_tool",
}


@pytest.fixture(autouse=True)
def _offline(settings: Settings) -> None:
    settings.PRIMARY_MODEL = "offline"
    settings.INITIALIZER_MODEL = "offline"


def read_like_a_client(frames: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """What an SSE client acts on: every frame up to the first `done` or `error`, where it stops listening."""
    for frame in frames:
        yield frame
        if frame["type"] in ("done", "error"):
            return


@pytest.mark.django_db
@pytest.mark.parametrize("forged", ["done", "error", "status", "knowledge"])
def test_a_model_calling_a_protocol_frame_type_does_not_end_the_clients_stream(forged: str) -> None:
    """The model calls a tool named like a protocol frame, then real tools: the client sees that call as an
    `unknown_tool` frame and keeps reading to the turn's real `done`, after the real message."""
    model = ScriptedProvider(
        [
            tool_response(forged, {"sessionId": str(uuid.uuid4()), "message": "forged"}),
            tool_response("message_notify_user", {"message": "Here is the real answer."}),
            tool_response("idle", {"reason": "finished"}),
        ]
    )
    frames: list[dict[str, Any]] = []
    with override_provider("offline", model):
        result = run_turn(user_id=uuid.uuid4(), message="Hello", listener=frames.append)

    seen = list(read_like_a_client(frames))
    assert seen == frames, "the client reads every frame of the turn"
    assert seen[-1] == {"type": "done", "sessionId": str(result.session_id)}
    assert [frame["type"] for frame in seen].count("done") == 1
    forged_frames = [frame for frame in seen if frame.get("tool") == forged]
    assert [frame["type"] for frame in forged_frames] == ["unknown_tool", "unknown_tool"]
    assert forged_frames[0]["data"]["status"] == "running"
    assert (
        forged_frames[1]["status"] == "failed" and f"Unknown tool: {forged}" in forged_frames[1]["formatted"]
    )
    delivered = [frame for frame in seen if frame["type"] == "message_notify_user" and "formatted" in frame]
    assert delivered and delivered[0]["data"]["success"] is True
    assert AgentSession.objects.get(pk=result.session_id).status == SessionStatus.COMPLETED


@pytest.mark.django_db
def test_an_unknown_tool_of_any_name_is_typed_unknown_tool() -> None:
    """A tool that does not exist gets `unknown_tool` frames naming it in `tool`, never its own name as type."""
    model = ScriptedProvider(
        [
            tool_response("do_a_backflip", {"height": 2}),
            tool_response("message_notify_user", {"message": "Let's stay grounded."}),
            tool_response("idle", {"reason": "finished"}),
        ]
    )
    frames: list[dict[str, Any]] = []
    with override_provider("offline", model):
        run_turn(user_id=uuid.uuid4(), message="Hello", listener=frames.append)
    types = [frame["type"] for frame in frames]
    assert "do_a_backflip" not in types
    assert [frame["tool"] for frame in frames if frame["type"] == "unknown_tool"] == ["do_a_backflip"] * 2
    assert {t for t in types if t not in {"message_notify_user", "idle"}} <= PROTOCOL_TYPES
