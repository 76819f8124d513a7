"""The agent loop (docs/contracts.md §5 (the turn)): build context → one LLM call → one tool → record → decide to stop.

Synchronous by design: a worker runs it (`trainer_agent.turns.execute_turn`), or the view itself under the
ImmediateBackend. It keeps nothing between iterations that the event store does not have, and it starts from
the store: `run_loop` reads where the turn stands from its events, so a worker that takes over the turn of a
dead one continues exactly where the store says (docs/architecture.md "Recovery"). An iteration commits twice,
never across a model call:

- the `llm_response` with its `tool_call`s, when the model answers (followers see the tool start);
- the tool's own writes with its `tool_result` (+ `artifact`) and the next `llm_request`, in one transaction, so
  a tool's writes are never half-done and never repeated, and the request is stored before its call (a crash
  shows what was in flight; on recovery the call is made again).

A tool that writes nothing and returns at once (`Tool.writes` False: the communication tools) commits once: the
answer, its calls, the result and the next request together. The turn's first request is stored on its own, and
its last events are committed with the turn's end (`finish_turn`).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from contextlib import ExitStack, nullcontext
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.db import transaction

from sessions_app.events import (
    TRAINER,
    ArtifactData,
    ErrorData,
    Tokens,
    ToolCallData,
    ToolOutput,
    ToolResultData,
    ToolStatus,
    TrainerRequest,
    TrainerResponse,
)
from sessions_app.models import AgentSessionEvent, AgentTurn, EventType, TurnStatus
from sessions_app.selectors import SessionState, events_after
from sessions_app.services import NewEvent, finish_turn
from sessions_app.transcript import Transcript
from tools_app.formatting import wrap_in_xml
from tools_app.registry import UnknownToolError, all_tools, execute_tool, get_tool, prepare_call
from tools_app.types import ToolContext, ToolResult
from trainer_agent import previews as preview_frames
from trainer_agent import tracing
from trainer_agent.agents.registry import get_agent
from trainer_agent.checkpoint import maybe_checkpoint
from trainer_agent.connection_pool import giving_back_after
from trainer_agent.context import (
    TRAINER_AGENT_ID,
    AgentContext,
    ContextCache,
    build_context,
    build_locked_context,
)
from trainer_agent.initializer import initialize_context
from trainer_agent.llm.cost import cost_cents
from trainer_agent.llm.models import ModelConfig, get_model
from trainer_agent.llm.providers import get_provider
from trainer_agent.llm.types import (
    LLMError,
    LLMRequest,
    LLMResponse,
    PartialCallback,
    Provider,
    StreamingProvider,
    ToolCall,
)
from trainer_agent.sink import EventSink, deferred_writes

TERMINAL_TOOLS = frozenset({"idle", "message_ask_user"})
# llm_request.data.prompt keeps only the newest part of the prompt; the full context is rebuilt from events.
PROMPT_PREVIEW_CHARS = 2000
RAW_RESPONSE_MAX_CHARS = 20_000
# What the client shows when a turn ends without delivering anything (every tool failed, the cap, a crash).
APOLOGY = "Sorry, I couldn't finish that. Please try again in a moment."


class TurnError(Exception):
    """The turn ended in `error` (the model could not be called, or nothing was delivered); every event is kept."""

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
    status: str = TurnStatus.COMPLETED
    error_kind: str = ""
    error_message: str = ""
    retry_after: float | None = None

    def as_api(self) -> dict[str, Any]:
        """The `/agent/chat` body: `{sessionId, response, iterations}`."""
        return {"sessionId": str(self.session_id), "response": self.response, "iterations": self.iterations}


@dataclass
class _Position:
    """Where a turn stands, read from its events (`sessions_app.transcript`): what the next step of the loop is."""

    iterations: int = 0  # trainer llm_requests so far
    initialized: bool = False  # the loop has started (the initializer ran)
    pending_request: bool = False  # an llm_request with no answer: call the model again
    pending_calls: list[ToolCall] = field(default_factory=list)  # an answer whose first call has no result
    request_sequence: int = -1  # the latest trainer llm_request (the call a recovered turn makes again)


def read_position(events: list[AgentSessionEvent]) -> _Position:
    transcript = Transcript.read(events)
    last = transcript.last_request
    return _Position(
        iterations=transcript.iterations,
        initialized=transcript.initialized,
        pending_request=transcript.pending_request,
        pending_calls=[
            ToolCall(id=call.call_id, name=call.tool_name, arguments=call.arguments)
            for call in transcript.pending_calls
        ],
        request_sequence=(
            getattr(last, "sequence_number", -1)
            if last is not None
            else (events[-1].sequence_number if events else -1)
        ),
    )


def run_loop(
    *, turn: AgentTurn, sink: EventSink, events: list[AgentSessionEvent], previews: bool = False
) -> None:
    """Run (or continue) the turn from where its `events` (the turn's events so far) say it stands, and
    finish it. LLMError propagates (the caller ends the turn in `error`). With `previews` each trainer call
    publishes preview frames while the model writes (`trainer_agent.previews`); what is stored is the same
    either way."""
    session = turn.session
    user_id = session.user_id
    model_id = turn.model
    cap = int(turn.result.get("max_iterations") or settings.AGENT_MAX_ITERATIONS)
    position = read_position(events)
    if not position.initialized:
        if turn.attempts <= 1:
            maybe_checkpoint(
                session=session, user_id=user_id, model_id=model_id, sink=sink, keep_from=turn.start_sequence
            )
        message = str(events[0].data.get("message", "")) if events else ""
        initialize_context(session=session, user_id=user_id, message=message, sink=sink)

    model_config = get_model(model_id)
    provider = get_provider(model_id)
    tool_ctx = ToolContext(user_id=user_id, session=session)
    cache = ContextCache()
    iterations = position.iterations
    calls = position.pending_calls
    request_sequence = position.request_sequence
    request: LLMRequest | None = None
    pending: list[NewEvent] = []  # the model's answer, when it is stored with its call's result
    if not calls and position.pending_request:
        request = build_context(session=session, user_id=user_id, cache=cache).to_request(model=model_id)
    elif not calls:
        iterations += 1
        with transaction.atomic():
            request, request_sequence = _record_request(
                sink, cache, turn=turn, model_id=model_id, iteration=iterations
            )
    while True:
        if not calls:
            assert request is not None  # recorded with the previous tool's result, or above
            publisher = (
                preview_frames.publisher_for(
                    turn=turn, request_sequence=request_sequence, units=cache.units()
                )
                if previews
                else None
            )
            response = _complete(provider, request, model_config, on_partial=publisher)
            answer = NewEvent(
                EventType.LLM_RESPONSE,
                _response_data(response, model_config),
                duration_ms=response.duration_ms,
            )
            calls = response.tool_calls
            if not calls:
                _finish(
                    sink,
                    turn,
                    [answer, NewEvent(EventType.ERROR, _loop_error("No tool call in response"))],
                    "no_tool_call",
                    iterations,
                )
                return
            # The answer and all its calls, so the transcript shows the response as the model gave it. Committed
            # before the tool runs, so followers see the tool start at once; with the result when the tool
            # writes nothing (it returns at once: the communication tools).
            answered = [
                answer,
                *(
                    NewEvent(
                        EventType.TOOL_CALL,
                        ToolCallData(tool_name=each.name, arguments=each.arguments, call_id=each.id),
                    )
                    for each in calls
                ),
            ]
            if _writes_nothing(calls[0].name):
                pending = answered
            else:
                cache.written(sink.record_all(answered))
        call = calls[0]
        # The tool's own writes, its result and the next request commit together (its writes are never
        # half-done nor repeated; a crash before the commit leaves the call without a result, and the tool runs
        # again). A tool that fans out to threads (`Tool.atomic` False: fetch_data, whose sources are fetched in
        # parallel) runs before that transaction.
        before = _runs_before_transaction(call.name)
        with ExitStack() as step:
            # The tool's span holds its `prepare` step (a sub-agent's model call), which runs first, outside the
            # transaction, and ends with the tool's execution.
            tool_trace = step.enter_context(ExitStack())
            span = tool_trace.enter_context(tracing.tool_span(name=call.name, call_id=call.id))
            call_ctx = _prepared(call, tool_ctx)
            if not before:
                step.enter_context(transaction.atomic())
            with deferred_writes(session) as held:
                executed = _execute(call, sink, call_ctx, span)
            tool_trace.close()
            outcome = [*pending, *held, *_result_events(call, executed), *_extra_call_answers(calls[1:])]
            stop_reason = ""
            if executed.terminates_loop or (call.name in TERMINAL_TOOLS and executed.success):
                stop_reason = call.name
            elif iterations >= cap:
                outcome.append(NewEvent(EventType.ERROR, _loop_error(f"Max iterations ({cap}) reached")))
                stop_reason = "max_iterations"
            if stop_reason:
                _finish(sink, turn, outcome, stop_reason, iterations)
                return
            iterations += 1
            with transaction.atomic() if before else nullcontext():
                request, request_sequence = _record_request(
                    sink, cache, turn=turn, model_id=model_id, iteration=iterations, after=outcome
                )
        calls, pending = [], []


def _finish(
    sink: EventSink, turn: AgentTurn, events: list[NewEvent], stop_reason: str, iterations: int
) -> None:
    """End the turn with its last events. A turn that delivered nothing to the user (no message, question or
    workout: every tool failed, the cap, no tool call) ends in `error` with the reason, so the client can tell."""
    delivered = _delivered_anything(turn, sink, events)
    if delivered:
        stored = finish_turn(
            turn=turn,
            status=TurnStatus.COMPLETED,
            events=events,
            result={"stop_reason": stop_reason, "iterations": iterations},
        )
        sink.observe(stored)
        return
    reason = {
        "no_tool_call": "The model answered without calling a tool.",
        "max_iterations": "The turn reached its iteration limit without answering.",
    }.get(stop_reason, "The turn ended without a message for the user.")
    stored = finish_turn(
        turn=turn,
        status=TurnStatus.ERROR,
        events=[*events, NewEvent(EventType.ERROR, _turn_error("undelivered", reason))],
        result={
            "stop_reason": stop_reason,
            "iterations": iterations,
            "error_kind": "undelivered",
            "error": reason,
        },
    )
    sink.observe(stored)


def _delivered_anything(turn: AgentTurn, sink: EventSink, pending: list[NewEvent]) -> bool:
    """Whether the turn delivered a message or a question: seen in what this attempt wrote (no read), else in
    the turn's stored events (an earlier attempt's, for a turn continued after its worker died)."""
    if Transcript.read([*sink.stored, *pending]).delivered:
        return True
    stored = events_after(session_id=turn.session_id, after_sequence=turn.start_sequence - 1, limit=100_000)
    return Transcript.read([*stored, *pending]).delivered


def fail_turn(
    turn: AgentTurn,
    *,
    kind: str,
    message: str,
    context: str,
    stack: str | None = None,
    retry_after: float | None = None,
) -> None:
    """End the turn in `error`: the `error` event (which followers show as the terminal `error` frame), the
    session's status and usage so far, in one transaction. Every event already written stays."""
    data = _turn_error(kind, message, context=context, stack=stack, retry_after=retry_after)
    stored = finish_turn(
        turn=turn,
        status=TurnStatus.ERROR,
        events=[NewEvent(EventType.ERROR, data)],
        result={"error_kind": kind, "error": message, "retry_after": retry_after},
    )
    EventSink(session=turn.session).observe(stored)


def _turn_error(
    kind: str,
    message: str,
    *,
    context: str = "agent_loop",
    stack: str | None = None,
    retry_after: float | None = None,
) -> ErrorData:
    if retry_after is None:
        return ErrorData(message=message, kind=kind, context=context, stack=stack, fatal=True)
    return ErrorData(
        message=message, kind=kind, context=context, stack=stack, fatal=True, retry_after=retry_after
    )


def _record_request(
    sink: EventSink,
    cache: ContextCache,
    *,
    turn: AgentTurn,
    model_id: str,
    iteration: int,
    after: Sequence[NewEvent] = (),
) -> tuple[LLMRequest, int]:
    """Store `after` (the previous tool's result) and the next request, built from the context, in one append:
    the session is locked, its state read (the last number, the context start, the user data's version: one
    query), the context built from the turn's cache (`build_locked_context`: events and user data are read
    again only when they changed) and the request stored with `after` in one INSERT. Returns the request and its
    number.

    Always inside a transaction of the caller's (the tool's, or one for this write alone), so that a failure of
    the build rolls back that block, a savepoint inside a longer one (a test's). Under row-level security every
    transaction starts with a `set_config`, so the fewer the better."""
    built: list[LLMRequest] = []

    def request_after(state: SessionState, new: Sequence[AgentSessionEvent]) -> list[NewEvent]:
        context = build_locked_context(
            session=turn.session, user_id=turn.session.user_id, cache=cache, state=state, new=new
        )
        built.append(context.to_request(model=model_id))
        return [NewEvent(EventType.LLM_REQUEST, _request_data(built[-1], context, iteration))]

    stored = sink.record_all(after, then=request_after, read=cache.state_query_of(turn.session))
    cache.through = stored[-1].sequence_number
    return built[-1], stored[-1].sequence_number


def _prepared(call: ToolCall, ctx: ToolContext) -> ToolContext:
    """The context to run `call` with: its tool's `prepare` step run now (`tools_app.registry.prepare_call`),
    for a call the trainer may make with arguments that parse."""
    offered = get_agent(TRAINER_AGENT_ID).tool_names()
    if call.has_invalid_arguments or (offered is not None and call.name not in offered):
        return ctx
    return prepare_call(call.name, call.arguments, ctx)


def _runs_before_transaction(tool_name: str) -> bool:
    try:
        return not get_tool(tool_name).atomic
    except UnknownToolError:
        return False


def _writes_nothing(tool_name: str) -> bool:
    """The call's tool writes nothing and returns at once (`Tool.writes` False), or there is no such tool."""
    try:
        return not get_tool(tool_name).writes
    except UnknownToolError:
        return True


def _complete(
    provider: Provider,
    request: LLMRequest,
    model_config: ModelConfig,
    *,
    on_partial: PartialCallback | None = None,
) -> LLMResponse:
    """One model call (a `chat` span when tracing); a provider that fails with anything but LLMError is
    reported as a server error. A provider that can stream does (docs/architecture.md "Streaming providers":
    the timeout bounds the model's silence, not its whole answer), reporting the tool input as it grows to
    `on_partial` when the turn wants previews; the response is the same as `complete`'s."""
    with tracing.model_call_span(model_config, purpose="trainer", max_tokens=request.max_tokens) as span:
        try:
            if isinstance(provider, StreamingProvider):
                # The previews callback may borrow a pooled connection (the user's units): given straight back.
                publish = giving_back_after(on_partial) if on_partial is not None else None
                response = provider.stream(request, on_partial=publish)
            else:
                response = provider.complete(request)
        except LLMError as exc:
            span.fail(exc.kind, exc.message)
            raise
        except Exception as exc:
            span.fail("server", f"{type(exc).__name__}: {exc}")
            raise LLMError("server", f"{type(exc).__name__}: {exc}") from exc
        span.record(usage=response.usage, response_model=response.model, finish_reason=response.stop_reason)
        return response


def _execute(call: ToolCall, sink: EventSink, ctx: ToolContext, span: Any) -> ToolResult:
    """Run the tool in its `execute_tool` span (when tracing). Failures come back as failed results, never as
    exceptions."""
    result = _execute_untraced(call, sink, ctx)
    if not result.success:
        tracing.tool_failed(span, str(result.data.get("error", "")) if isinstance(result.data, dict) else "")
    return result


def _execute_untraced(call: ToolCall, sink: EventSink, ctx: ToolContext) -> ToolResult:
    if call.has_invalid_arguments:
        return _failed_result(
            call.name, "The tool arguments were not valid JSON. Call the tool again with a JSON object."
        )
    offered = get_agent(TRAINER_AGENT_ID).tool_names()
    try:
        if offered is not None and call.name not in offered:
            raise UnknownToolError(call.name)  # registered, but not one of this agent's tools
        return execute_tool(call.name, call.arguments, ctx)
    except UnknownToolError:
        names = ", ".join(t.name for t in all_tools() if offered is None or t.name in offered)
        sink.record(
            EventType.ERROR,
            ErrorData(message=f"Unknown tool: {call.name}", context="tool_execution", stack=None),
        )
        return _failed_result(call.name, f"Unknown tool: {call.name}. Available tools: {names}")


def _result_events(call: ToolCall, executed: ToolResult) -> list[NewEvent]:
    """The tool's result (with the status line the stream shows), and the artifact it created (if any)."""
    output = ToolOutput.model_validate(executed.to_dict())
    if executed.status_message:
        data = ToolResultData(
            tool_name=call.name,
            result=output,
            success=executed.success,
            call_id=call.id,
            status=ToolStatus(message=executed.status_message, phase=executed.status_phase),
        )
    else:
        data = ToolResultData(tool_name=call.name, result=output, success=executed.success, call_id=call.id)
    events = [NewEvent(EventType.TOOL_RESULT, data, duration_ms=executed.duration_ms)]
    if executed.artifact is not None:
        events.append(NewEvent(EventType.ARTIFACT, ArtifactData.model_validate(executed.artifact)))
    return events


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
                ToolResultData(
                    tool_name=extra.name,
                    result=ToolOutput.model_validate(refused.to_dict()),
                    success=False,
                    call_id=extra.id,
                ),
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


def _loop_error(message: str) -> ErrorData:
    return ErrorData(message=message, context="agent_loop", stack=None)


def _request_data(request: LLMRequest, context: AgentContext, iteration: int) -> TrainerRequest:
    newest = request.messages[-1] if request.messages else {}
    return TrainerRequest(
        model=request.model,
        prompt=json.dumps(newest, ensure_ascii=False, default=str)[-PROMPT_PREVIEW_CHARS:],
        estimated_tokens=context.estimated_tokens,
        message_count=len(request.messages),
        context_sequence=context.last_sequence,
        iteration=iteration,
        purpose=TRAINER,
    )


def _response_data(response: LLMResponse, model_config: ModelConfig) -> TrainerResponse:
    raw = response.raw
    if len(json.dumps(raw, default=str)) > RAW_RESPONSE_MAX_CHARS:
        raw = {"truncated": True, "stop_reason": response.stop_reason, "model": response.model}
    return TrainerResponse(
        model=model_config.id,
        raw_response=raw,
        text=response.text,
        stop_reason=response.stop_reason,
        tokens=Tokens.model_validate(response.usage.as_event_tokens()),
        cost_cents=cost_cents(model_config, response.usage),
    )


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
