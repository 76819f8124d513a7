"""Stream frames (docs/contracts.md "SSE frames") as a projection of the event store.

Nothing stores frames: `/agent/stream` and `/agent/sessions/<id>/events` read `agent_session_events` and turn
each event into the frames the client shows. A frame's SSE `id:` is its event's sequence number, on the last
frame of that event (so `Last-Event-ID` means "everything of that event was received"); the terminal frame of
a turn (`done` or `error`) travels with the turn's last event, which is committed together with the turn's end.
"""

from __future__ import annotations

import json
from typing import Any

from django.core.serializers.json import DjangoJSONEncoder

from datasources_app.sources import UnknownSourceError, get_source
from sessions_app.models import AgentSessionEvent, AgentTurn, EventType, TurnStatus
from sessions_app.selectors import events_after
from sessions_app.transcript import Step, Transcript
from tools_app.registry import RESERVED_TOOL_NAMES, UnknownToolError, get_tool
from trainer_agent.llm.models import get_model

PING = ": ping\n\n"
# The first frame of every turn: its user_message is stored, so the client knows its message was taken.
RECEIVED_FRAME: dict[str, Any] = {
    "type": "status",
    "data": {"message": "Message received", "tool": "agent", "phase": "start"},
}
CHECKPOINT_FRAME: dict[str, Any] = {
    "type": "status",
    "data": {"message": "Summarising the conversation", "tool": "checkpoint", "phase": "done"},
}
# Sent (without an `id:`: no stored event) while a turn whose worker died waits for another worker to continue it.
RECOVERY_FRAME: dict[str, Any] = {
    "type": "status",
    "data": {"message": "Picking up where we left off…", "tool": "recovery", "phase": "start"},
}
# The last frame of a stream whose session was deleted (without an `id:`); the stream ends after it.
SESSION_DELETED_FRAME: dict[str, Any] = {"type": "error", "message": "This session was deleted."}

# The status line after a call that failed. The model reads the error and usually corrects the call on its next
# iteration, so the client is shown progress, not an error: the error stays in the `tool_result` event (and the
# admin), and a turn that ends without delivering ends with the `error` frame.
FAILED_CALL_STATUS = "Adjusting..."


class Projector:
    """Events → frames. Which tool call of the latest model answer ran (the first) is the transcript's
    (`sessions_app.transcript`): the others are answered "not executed" and have no frames. Feed it every event
    from the last `llm_response` before the point a stream resumes from, discarding those frames (`prime`)."""

    def __init__(self) -> None:
        self.transcript = Transcript(history=False)

    def prime(self, events: list[AgentSessionEvent]) -> None:
        for event in events:
            self.frames(event)

    def frames(self, event: AgentSessionEvent) -> list[dict[str, Any]]:
        data: dict[str, Any] = event.data if isinstance(event.data, dict) else {}
        kind = event.event_type
        step = self.transcript.add(event)
        if kind == EventType.USER_MESSAGE:
            return [RECEIVED_FRAME]
        if kind == EventType.KNOWLEDGE and data.get("reason"):
            source = str(data.get("source", ""))
            return [
                {
                    "type": "knowledge",
                    "data": {"source": source, "displayName": _display_name(source), "status": "done"},
                }
            ]
        if kind == EventType.CHECKPOINT:
            return [CHECKPOINT_FRAME]
        if step == Step.CALL_RAN and self.transcript.running is not None:
            name = self.transcript.running.call.tool_name
            start = _status_start(name)
            frames: list[dict[str, Any]] = []
            if start:
                frames.append({"type": "status", "data": {"message": start, "tool": name, "phase": "start"}})
            frames.append(
                _typed({"data": {"status": "running", "args": data.get("arguments") or {}}}, tool_name=name)
            )
            return frames
        if step == Step.RESULT_OF_RAN:
            return _result_frames(data)
        return []


def _result_frames(data: dict[str, Any]) -> list[dict[str, Any]]:
    name = str(data.get("tool_name", ""))
    result = data.get("result") if isinstance(data.get("result"), dict) else {}
    assert isinstance(result, dict)
    success = bool(result.get("success"))
    inner = result.get("data") if isinstance(result.get("data"), dict) else {}
    frame = _typed(
        {
            "data": {"success": success, **(inner or {})},
            "formatted": result.get("formatted", ""),
            "status": "done" if success else "failed",
        },
        tool_name=name,
    )
    if result.get("artifact") is not None:
        frame["artifact"] = result["artifact"]
    if result.get("artifact_id") is not None:
        frame["artifact_id"] = result["artifact_id"]
    frames = [frame]
    status = data.get("status")
    if isinstance(status, dict) and status.get("message"):
        message = status["message"] if success else FAILED_CALL_STATUS
        frames.append(
            {"type": "status", "data": {"message": message, "tool": name, "phase": status.get("phase")}}
        )
    return frames


UNKNOWN_TOOL_FRAME_TYPE = "unknown_tool"


def _typed(frame: dict[str, Any], *, tool_name: str) -> dict[str, Any]:
    """A tool frame's `type`: the tool's name when it is a registered tool (never a protocol frame type: the
    registry refuses those names), else `unknown_tool` with the name the model used in `tool`, so a model that
    calls `done` cannot send the client a `done` frame (docs/contracts.md §7.2)."""
    if tool_name not in RESERVED_TOOL_NAMES and _is_registered(tool_name):
        return {"type": tool_name, **frame}
    return {"type": UNKNOWN_TOOL_FRAME_TYPE, "tool": tool_name, **frame}


def _is_registered(tool_name: str) -> bool:
    try:
        get_tool(tool_name)
    except UnknownToolError:
        return False
    return True


def terminal_frame(turn: AgentTurn) -> dict[str, Any]:
    """`done`, or `error` with the message the client shows (ours: the provider's words stay in the events)."""
    if turn.status == TurnStatus.COMPLETED:
        return {"type": "done", "sessionId": str(turn.session_id)}
    outcome = turn.result or {}
    kind = str(outcome.get("error_kind", ""))
    message = str(outcome.get("error", "")) if kind == "undelivered" else failure_detail(kind, turn.model)
    return {"type": "error", "message": message}


# What a 502 says, by the failure's kind: our words, never the provider's (those stay in the events and logs).
FAILURE_DETAILS = {
    "rate_limited": "The model is rate-limited right now. Please try again shortly.",
    "overloaded": "The model is overloaded right now. Please try again shortly.",
    "timeout": "The model did not answer in time. Please try again.",
    "bad_request": "The model refused the request.",
    "server": "The model's service failed. Please try again.",
    "invalid_response": "The model gave an answer that could not be used. Please try again.",
    "internal": "The turn could not be completed. Please try again.",
    "no_worker": "No worker is running to take the turn. Please try again later.",
}
KEY_SETTINGS = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}


def failure_detail(kind: str, model_id: str) -> str:
    if kind == "auth":
        try:
            key = KEY_SETTINGS.get(get_model(model_id).provider, "API key")
        except Exception:
            key = "API key"
        return f"The model {model_id!r} cannot be used: its {key} is missing or was refused."
    return FAILURE_DETAILS.get(kind, FAILURE_DETAILS["internal"])


def encode(frames: list[dict[str, Any]], event_id: int | None) -> str:
    """SSE text for one event's frames: `data: {json}` each, the `id:` line on the last one."""
    out = []
    for index, frame in enumerate(frames):
        data = json.dumps(frame, cls=DjangoJSONEncoder)
        last = index == len(frames) - 1
        out.append(
            f"id: {event_id}\ndata: {data}\n\n" if last and event_id is not None else f"data: {data}\n\n"
        )
    return "".join(out)


def _status_start(tool_name: str) -> str | None:
    try:
        return get_tool(tool_name).status_start
    except UnknownToolError:
        return None


def _display_name(source: str) -> str:
    try:
        return get_source(source).display_name
    except UnknownSourceError:
        return source


def turn_frames(turn: AgentTurn) -> list[dict[str, Any]]:
    """Every frame of one turn, as `/agent/stream` sends it (the terminal frame last), read from the store."""
    projector = Projector()
    frames: list[dict[str, Any]] = []
    for event in events_after(
        session_id=turn.session_id, after_sequence=turn.start_sequence - 1, limit=100_000
    ):
        if turn.end_sequence is not None and event.sequence_number > turn.end_sequence:
            break
        frames.extend(projector.frames(event))
    if turn.finished_at is not None:
        frames.append(terminal_frame(turn))
    return frames


NAMED_FRAME_TYPES = frozenset({"status", "knowledge", "done", "error"})


def frame_kind(frame: dict[str, Any]) -> str:
    """The kind of a stream frame (docs/contracts.md §7.2 (SSE frames)): status, knowledge, done, error, tool_start or tool_result.

    On the wire (docs/contracts.md §7.2 (SSE frames)) tool frames carry the tool's name as their `type`; a start frame is the one whose data
    says `running` and that has no `formatted` result yet.
    """
    kind = str(frame.get("type", ""))
    if kind in NAMED_FRAME_TYPES:
        return kind
    data = frame.get("data")
    if "formatted" not in frame and isinstance(data, dict) and data.get("status") == "running":
        return "tool_start"
    return "tool_result"
