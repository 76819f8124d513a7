"""The agent loop (seed 000 §3): build context → one LLM call → one tool → record → decide to stop.

Synchronous by design: the streaming view runs it in a worker thread and receives frames through the sink's
listener. The only thing kept between iterations is the turn's `ContextCache` of events already read, which
cannot go stale (events are append-only); everything else comes from the database, so any worker can
continue any session.
"""

from __future__ import annotations

import json
import traceback
import uuid
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings

from config.db import release_pooled_connections
from sessions_app.models import AgentSession, EventType, SessionStatus
from sessions_app.services import NewEvent, end_session, get_or_create_session, set_session_status
from tools_app.formatting import wrap_in_xml
from tools_app.registry import UnknownToolError, all_tools, execute_tool, get_tool
from tools_app.types import ToolContext, ToolResult
from trainer_agent.checkpoint import maybe_checkpoint
from trainer_agent.context import AgentContext, ContextCache, ContextRead, build_context, plan_context_read
from trainer_agent.initializer import initialize_context
from trainer_agent.llm.cost import cost_cents
from trainer_agent.llm.models import ModelConfig, get_model
from trainer_agent.llm.providers import get_provider
from trainer_agent.llm.types import LLMError, LLMRequest, LLMResponse, Provider, ToolCall
from trainer_agent.sink import EventSink, Listener
from trainer_agent.slots import work_slots

TERMINAL_TOOLS = frozenset({"idle", "message_ask_user"})
# llm_request.data.prompt keeps only the newest part of the prompt; the full context is rebuilt from events.
PROMPT_PREVIEW_CHARS = 2000
RAW_RESPONSE_MAX_CHARS = 20_000


class TurnError(Exception):
    """The turn ended because the model could not be called; every event written so far is kept."""

    def __init__(
        self, *, session_id: uuid.UUID, kind: str, message: str, retry_after: float | None = None
    ) -> None:
        super().__init__(message)
        self.session_id = session_id
        self.kind = kind
        self.message = message
        self.retry_after = retry_after


@dataclass
class Action:
    tool: str
    args: dict[str, Any]
    result: dict[str, Any]


@dataclass
class TurnResult:
    session_id: uuid.UUID
    actions: list[Action] = field(default_factory=list)
    iterations: int = 0
    response: dict[str, Any] = field(default_factory=dict)
    stop_reason: str = ""

    def as_api(self) -> dict[str, Any]:
        """The `/agent/chat` body: `{sessionId, response, iterations}`."""
        return {"sessionId": str(self.session_id), "response": self.response, "iterations": self.iterations}


def run_turn(
    *,
    user_id: uuid.UUID,
    message: str,
    session: AgentSession | None = None,
    session_id: uuid.UUID | None = None,
    model: str | None = None,
    listener: Listener | None = None,
    current_workout_text: str | None = None,
    max_iterations: int | None = None,
) -> TurnResult:
    """Run one user turn to completion. Raises TurnError when the model fails (after recording it).

    Any other exception (a bug) is recorded as an `error` event, sets the session to `error` and propagates.
    """
    model_id = model or settings.PRIMARY_MODEL
    get_model(model_id)  # an unknown model id fails before anything is written
    session = session or get_or_create_session(user_id=user_id, session_id=session_id)
    if session.status != SessionStatus.ACTIVE:
        set_session_status(session=session, status=SessionStatus.ACTIVE)
    sink = EventSink(session=session, listener=listener)
    result = TurnResult(session_id=session.pk)
    try:
        _run(
            result,
            sink,
            user_id=user_id,
            message=message,
            model_id=model_id,
            current_workout_text=current_workout_text,
            cap=max_iterations or settings.AGENT_MAX_ITERATIONS,
        )
    except LLMError as exc:
        _fail_turn(sink, session, kind=exc.kind, message=exc.message, stack=None, context="llm_call")
        raise TurnError(
            session_id=session.pk, kind=exc.kind, message=exc.message, retry_after=exc.retry_after
        ) from exc
    except Exception as exc:
        _fail_turn(
            sink,
            session,
            kind="internal",
            message=f"{type(exc).__name__}: {exc}",
            stack=traceback.format_exc(),
            context="agent_loop",
        )
        raise
    end_session(session=session, status=SessionStatus.COMPLETED)
    result.response = client_response(result.actions)
    sink.emit({"type": "done", "sessionId": str(session.pk)})
    return result


def _run(
    result: TurnResult,
    sink: EventSink,
    *,
    user_id: uuid.UUID,
    message: str,
    model_id: str,
    current_workout_text: str | None,
    cap: int,
) -> None:
    """The loop of seed 000 §3.1. Each iteration commits twice, each write one round trip on PostgreSQL
    (`EventSink.record_all`): the request with the model's answer and its tool calls, before the tool runs (not
    waiting for the WAL flush, which the next waiting commit includes); then the tool's result, with the next
    context build's reads in the same message. Never a transaction across a model call or a tool."""
    session = sink.session
    maybe_checkpoint(session=session, user_id=user_id, model_id=model_id, sink=sink, pending_text=message)
    sink.record(EventType.USER_MESSAGE, {"message": message})
    if current_workout_text:
        sink.record(
            EventType.KNOWLEDGE,
            {"source": "current_workout_session", "params": {}, "data": current_workout_text},
        )
    initialize_context(session=session, user_id=user_id, message=message, sink=sink)

    model_config = get_model(model_id)
    provider = get_provider(model_id)
    tool_ctx = ToolContext(user_id=user_id, session=session)
    cache = ContextCache()
    request = _next_request(sink, cache, user_id=user_id, model_id=model_id, iteration=1)
    while True:
        result.iterations += 1
        response = _complete(provider, request)
        calls = response.tool_calls
        answer = NewEvent(
            EventType.LLM_RESPONSE, _response_data(response, model_config), duration_ms=response.duration_ms
        )
        if not calls:
            sink.record_all([answer, NewEvent(EventType.ERROR, _loop_error("No tool call in response"))])
            result.stop_reason = "no_tool_call"
            return
        # All the calls, so the transcript shows the response as the model gave it. Committed before the tool
        # runs, without waiting for the WAL flush: the WAL is flushed in order, so these events are durable
        # before anything the tool commits, and before the result's commit below, which waits.
        sink.record_all(
            [
                answer,
                *(
                    NewEvent(
                        EventType.TOOL_CALL,
                        {"tool_name": each.name, "arguments": each.arguments, "call_id": each.id},
                    )
                    for each in calls
                ),
            ],
            wait_for_flush=False,
        )
        call = calls[0]
        executed = _execute(call, sink, tool_ctx)
        result.actions.append(Action(tool=call.name, args=call.arguments, result=executed.to_dict()))
        outcome = [*_result_events(call, executed), *_extra_call_answers(calls[1:])]
        if executed.terminates_loop or (call.name in TERMINAL_TOOLS and executed.success):
            result.stop_reason = call.name
        elif result.iterations >= cap:
            outcome.append(NewEvent(EventType.ERROR, _loop_error(f"Max iterations ({cap}) reached")))
            result.stop_reason = "max_iterations"
        if result.stop_reason:
            sink.record_all(outcome)
            _emit_result(call, executed, sink)
            return
        # The result, its commit and the next build's reads (which see it) in one round trip on PostgreSQL.
        _, prefetched = sink.record_all_then_read(
            outcome, plan_context_read(session=session, user_id=user_id, cache=cache)
        )
        _emit_result(call, executed, sink)
        request = _next_request(
            sink,
            cache,
            user_id=user_id,
            model_id=model_id,
            iteration=result.iterations + 1,
            prefetched=prefetched,
        )


def _next_request(
    sink: EventSink,
    cache: ContextCache,
    *,
    user_id: uuid.UUID,
    model_id: str,
    iteration: int,
    prefetched: ContextRead | None = None,
) -> LLMRequest:
    """Build the context from the events (new ones only, through the turn's cache) and log the request; it is
    stored, stamped with this moment, with the model's answer or the error that ends the call (`EventSink.hold`)."""
    context = build_context(session=sink.session, user_id=user_id, cache=cache, prefetched=prefetched)
    request = context.to_request(model=model_id)
    sink.hold(EventType.LLM_REQUEST, _request_data(request, context, iteration))
    return request


def _complete(provider: Provider, request: LLMRequest) -> LLMResponse:
    """One model call; a provider that fails with anything but LLMError is reported as a server error."""
    release_pooled_connections()  # nothing is held across the call (no transaction is open here)
    try:
        with work_slots().released():
            return provider.complete(request)
    except LLMError:
        raise
    except Exception as exc:
        raise LLMError("server", f"{type(exc).__name__}: {exc}") from exc


def _execute(call: ToolCall, sink: EventSink, ctx: ToolContext) -> ToolResult:
    """Stream the start frames and run the tool. Failures come back as failed results, never as exceptions."""
    status_start = _status_start(call.name)
    if status_start:
        sink.emit({"type": "status", "data": {"message": status_start, "tool": call.name, "phase": "start"}})
    sink.emit({"type": call.name, "data": {"status": "running", "args": call.arguments}})
    if call.has_invalid_arguments:
        return _failed_result(
            call.name, "The tool arguments were not valid JSON. Call the tool again with a JSON object."
        )
    try:
        return execute_tool(call.name, call.arguments, ctx)
    except UnknownToolError:
        names = ", ".join(t.name for t in all_tools())
        sink.record(
            EventType.ERROR,
            {"message": f"Unknown tool: {call.name}", "context": "tool_execution", "stack": None},
        )
        return _failed_result(call.name, f"Unknown tool: {call.name}. Available tools: {names}")


def _result_events(call: ToolCall, executed: ToolResult) -> list[NewEvent]:
    """The tool's result, and the artifact it created (if any)."""
    events = [
        NewEvent(
            EventType.TOOL_RESULT,
            {
                "tool_name": call.name,
                "result": executed.to_dict(),
                "success": executed.success,
                "call_id": call.id,
            },
            duration_ms=executed.duration_ms,
        )
    ]
    if executed.artifact is not None:
        events.append(NewEvent(EventType.ARTIFACT, executed.artifact))
    return events


def _emit_result(call: ToolCall, executed: ToolResult, sink: EventSink) -> None:
    """Stream the tool's result frame and its status frame (seed 000 §8.3)."""
    frame: dict[str, Any] = {
        "type": call.name,
        "data": executed.data,
        "formatted": executed.formatted,
        "status": "done" if executed.success else "failed",
    }
    if executed.delivered_artifact is not None:
        frame["artifact"] = executed.delivered_artifact
    if executed.artifact_id is not None:
        frame["artifact_id"] = executed.artifact_id
    sink.emit(frame)
    if executed.status_message:
        sink.emit(
            {
                "type": "status",
                "data": {
                    "message": executed.status_message,
                    "tool": call.name,
                    "phase": executed.status_phase,
                },
            }
        )


def _extra_call_answers(calls: list[ToolCall]) -> list[NewEvent]:
    """The model asked for several tools at once: only the first ran; answer the others so the transcript stays
    valid (every tool_use needs its tool_result) and the model knows to call them again if still needed."""
    answers = []
    for extra in calls:
        refused = _failed_result(
            extra.name,
            "Not executed: call exactly one tool per turn. Call it again in the next turn if still needed.",
        )
        answers.append(
            NewEvent(
                EventType.TOOL_RESULT,
                {"tool_name": extra.name, "result": refused.to_dict(), "success": False, "call_id": extra.id},
            )
        )
    return answers


def _failed_result(tool_name: str, message: str) -> ToolResult:
    return ToolResult(
        tool_name=tool_name,
        success=False,
        data={"error": message},
        formatted=wrap_in_xml(tool_name=tool_name, text=message, is_error=True),
        raw_formatted=message,
    )


def _status_start(tool_name: str) -> str | None:
    try:
        return get_tool(tool_name).status_start
    except UnknownToolError:
        return None


def _loop_error(message: str) -> dict[str, Any]:
    return {"message": message, "context": "agent_loop", "stack": None}


def _fail_turn(
    sink: EventSink, session: AgentSession, *, kind: str, message: str, stack: str | None, context: str
) -> None:
    """Record the failure, end the session in `error` (usage so far aggregated) and tell the listener."""
    sink.record(EventType.ERROR, {"message": message, "kind": kind, "context": context, "stack": stack})
    end_session(session=session, status=SessionStatus.ERROR)
    sink.emit({"type": "error", "message": message})


def _request_data(request: LLMRequest, context: AgentContext, iteration: int) -> dict[str, Any]:
    newest = request.messages[-1] if request.messages else {}
    return {
        "model": request.model,
        "prompt": json.dumps(newest, ensure_ascii=False, default=str)[-PROMPT_PREVIEW_CHARS:],
        "estimated_tokens": context.estimated_tokens,
        "message_count": len(request.messages),
        "context_sequence": context.last_sequence,
        "iteration": iteration,
        "purpose": "trainer",
    }


def _response_data(response: LLMResponse, model_config: ModelConfig) -> dict[str, Any]:
    raw = response.raw
    if len(json.dumps(raw, default=str)) > RAW_RESPONSE_MAX_CHARS:
        raw = {"truncated": True, "stop_reason": response.stop_reason, "model": response.model}
    return {
        "model": model_config.id,
        "raw_response": raw,
        "text": response.text,
        "stop_reason": response.stop_reason,
        "tokens": response.usage.as_event_tokens(),
        "cost_cents": cost_cents(model_config, response.usage),
    }


def client_response(actions: list[Action]) -> dict[str, Any]:
    """Seed 000 ClientResponse: the messages to show, the workout delivered (if any), a pending question."""
    messages: list[str] = []
    exercises: list[dict[str, Any]] | None = None
    question: dict[str, Any] | None = None
    for action in actions:
        if not action.result.get("success"):
            continue
        data = action.result.get("data") or {}
        if action.tool == "message_notify_user":
            if data.get("message"):
                messages.append(str(data["message"]))
            artifact = action.result.get("artifact")
            if isinstance(artifact, dict):
                payload = artifact.get("payload") or {}
                exercises = list(payload.get("exercises") or [])
        elif action.tool == "message_ask_user":
            question = {"question": data.get("question", ""), "options": data.get("options") or []}
    return {"messages": messages, "exercises": exercises, "question": question}
