"""Step replay for staff: the exact context the model saw at one `llm_request` of the trainer loop.

The context is rebuilt by the context builder from the stored events up to the request's `context_sequence`
(the newest context event in that request), turned into the Anthropic wire body by `build_anthropic_body`,
and shown with its four cache breakpoints. The previous trainer request is rebuilt the same way, and the part
both requests share from the start is marked: that prefix is what the prompt cache could serve.

Messages are exact: events are append-only and converted deterministically. The tool definitions and the
system prompt are today's code, and the user data XML is fetched fresh (docs/contracts.md §8.2 (user data block)), so those reflect
today's code and data; the page says so and compares the rebuilt size with the recorded estimate.

`register()` runs from TrainerAgentConfig.ready(): it adds the "Replay step" action to the session admin and
gives the admin timeline the console log's icons and descriptions (sessions_app imports nothing from here).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, cast
from uuid import UUID

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse
from django.template.response import TemplateResponse

from sessions_app.admin_registry import register_console_format, register_event_action
from sessions_app.events import is_trainer
from sessions_app.models import CONTEXT_EVENT_TYPES, AgentSession, AgentSessionEvent, EventType
from sessions_app.transcript import Transcript
from trainer_agent.console import ICONS, describe
from trainer_agent.context import ContextBuildError, build_context
from trainer_agent.llm.anthropic_provider import build_anthropic_body
from trainer_agent.llm.models import UnknownModel, get_model
from trainer_agent.llm.types import LLMRequest

REPLAY_ACTION = "replay"
# How far to look for the previous / next trainer request (initializer requests sit in between).
REQUEST_LOOKAROUND = 50
CHARS_PER_TOKEN = 4


def register() -> None:
    """Register the step-replay admin action and the console format with sessions_app's admin."""
    register_event_action(
        name=REPLAY_ACTION, label="Replay step", view=step_replay_view, applies_to=is_trainer_request
    )
    register_console_format(icons=ICONS, describe=describe)


def is_trainer_request(event_type: str, data: dict[str, Any]) -> bool:
    """An llm_request of the trainer loop (the initializer's requests have another context)."""
    return event_type == EventType.LLM_REQUEST and is_trainer(data)


def context_sequence_of(event: AgentSessionEvent) -> int:
    """The newest context event the request included; for events without it, everything before the request."""
    value = event.data.get("context_sequence") if isinstance(event.data, dict) else None
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return event.sequence_number - 1


def context_window(
    events: list[AgentSessionEvent], *, up_to: int, session_start: int
) -> list[AgentSessionEvent]:
    """The context events a request with `context_sequence = up_to` was built from.

    The session row only holds today's context start. A start that is not after `up_to` was already in force
    then (checkpoints move it to their own, later, sequence number); otherwise the latest checkpoint at or
    before `up_to` was the start at that time, or 0 without one.
    """
    candidates = [
        e.sequence_number
        for e in events
        if e.event_type == EventType.CHECKPOINT and e.sequence_number <= up_to
    ]
    if session_start <= up_to:
        candidates.append(session_start)
    start = max(candidates, default=0)
    return [e for e in events if start <= e.sequence_number <= up_to]


# --- the rebuilt request, as the page shows it ----------------------------------------------------------------


@dataclass
class BlockView:
    kind: str
    title: str
    text: str
    breakpoint: int | None = None
    is_error: bool = False


@dataclass
class MessageView:
    index: int
    role: str
    blocks: list[BlockView]
    shared: bool = False
    chars: int = 0


@dataclass
class ToolView:
    name: str
    description: str
    schema: str
    breakpoint: int | None = None


@dataclass
class StepBuild:
    """One request rebuilt: the wire body, or why it could not be built."""

    sequence: int
    context_sequence: int
    model: str
    body: dict[str, Any] | None = None
    request: LLMRequest | None = None
    problem: str | None = None
    context_event_count: int = 0


@dataclass
class SharedPrefix:
    """What this request shares from its start with the previous trainer request."""

    tools: bool = False
    system_prompt: bool = False
    user_data: bool = False
    messages: int = 0
    previous_messages: int = 0
    breakpoint: int | None = None  # the previous request's last breakpoint inside the shared prefix
    estimated_tokens: int = 0
    notes: list[str] = field(default_factory=list)


def rebuild_step(
    *,
    session: AgentSession,
    request_event: AgentSessionEvent,
    events: list[AgentSessionEvent],
) -> StepBuild:
    """Rebuild one trainer request from the stored context events (all of them up to at least this one)."""
    data = request_event.data if isinstance(request_event.data, dict) else {}
    context_sequence = context_sequence_of(request_event)
    model = str(data.get("model") or settings.PRIMARY_MODEL)
    step = StepBuild(sequence=request_event.sequence_number, context_sequence=context_sequence, model=model)
    window = context_window(events, up_to=context_sequence, session_start=session.context_start_sequence)
    step.context_event_count = len(window)
    try:
        context = build_context(
            session=session, user_id=session.user_id, events=window, up_to_sequence=context_sequence
        )
        step.request = context.to_request(model=model)
        step.body = build_anthropic_body(step.request)
    except (ContextBuildError, ValueError) as exc:
        step.problem = str(exc)
    return step


def _strip_cache_control(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _strip_cache_control(item) for key, item in value.items() if key != "cache_control"}
    if isinstance(value, list):
        return [_strip_cache_control(item) for item in value]
    return value


def _chars(value: Any) -> int:
    return len(json.dumps(_strip_cache_control(value), ensure_ascii=False, sort_keys=True))


def shared_prefix(current: dict[str, Any], previous: dict[str, Any]) -> SharedPrefix:
    """Compare two wire bodies layer by layer, in the order the cache reads them: tools, system, messages."""
    shared = SharedPrefix(previous_messages=len(previous["messages"]))
    shared.tools = current["tools"] == previous["tools"]
    if not shared.tools:
        shared.notes.append("The tool definitions differ, so nothing could be served from the cache.")
        return shared
    shared.breakpoint = 1
    shared.estimated_tokens = _chars(current["tools"]) // CHARS_PER_TOKEN
    shared.system_prompt = current["system"][0] == previous["system"][0]
    if not shared.system_prompt:
        shared.notes.append("The system prompt differs.")
        return shared
    shared.breakpoint = 2
    shared.estimated_tokens += _chars(current["system"][0]) // CHARS_PER_TOKEN
    shared.user_data = current["system"][1] == previous["system"][1]
    if not shared.user_data:
        shared.notes.append("The user data differs.")
        return shared
    shared.breakpoint = 3
    shared.estimated_tokens += _chars(current["system"][1]) // CHARS_PER_TOKEN
    now = _strip_cache_control(current["messages"])
    before = _strip_cache_control(previous["messages"])
    for mine, theirs in zip(now, before, strict=False):
        if mine != theirs:
            break
        shared.messages += 1
    if shared.messages == len(before):
        shared.breakpoint = 4
        shared.estimated_tokens += (
            sum(_chars(message) for message in now[: shared.messages]) // CHARS_PER_TOKEN
        )
    else:
        shared.notes.append(
            f"Message {shared.messages + 1} changed since the previous request (content was merged into it), "
            "so the previous request's last breakpoint does not match: the cache could serve up to the user data."
        )
    return shared


def _block_view(block: dict[str, Any], breakpoint: int | None) -> BlockView:
    kind = str(block.get("type", "?"))
    if kind == "text":
        return BlockView(kind, "text", str(block.get("text", "")), breakpoint)
    if kind == "tool_use":
        return BlockView(
            kind,
            f"tool_use {block.get('name', '?')} · {block.get('id', '')}",
            json.dumps(block.get("input", {}), indent=2, ensure_ascii=False),
            breakpoint,
        )
    if kind == "tool_result":
        content = block.get("content", "")
        text = content if isinstance(content, str) else json.dumps(content, indent=2, ensure_ascii=False)
        return BlockView(
            kind,
            f"tool_result for {block.get('tool_use_id', '')}"
            + (" (is_error)" if block.get("is_error") else ""),
            text,
            breakpoint,
            is_error=bool(block.get("is_error")),
        )
    return BlockView(kind, kind, json.dumps(block, indent=2, ensure_ascii=False), breakpoint)


def message_views(body: dict[str, Any], shared_messages: int) -> list[MessageView]:
    views = []
    for index, message in enumerate(body["messages"]):
        content = message.get("content")
        blocks = content if isinstance(content, list) else [{"type": "text", "text": str(content)}]
        views.append(
            MessageView(
                index=index + 1,
                role=str(message.get("role", "?")),
                blocks=[
                    _block_view(block, 4 if "cache_control" in block else None)
                    for block in blocks
                    if isinstance(block, dict)
                ],
                shared=index < shared_messages,
                chars=_chars(message),
            )
        )
    return views


def tool_views(body: dict[str, Any]) -> list[ToolView]:
    return [
        ToolView(
            name=str(tool["name"]),
            description=str(tool.get("description", "")),
            schema=json.dumps(tool.get("input_schema", {}), indent=2, ensure_ascii=False),
            breakpoint=1 if "cache_control" in tool else None,
        )
        for tool in body["tools"]
    ]


def _provider_note(model_id: str) -> str | None:
    """Requests to other providers carried the same context in their own wire format."""
    try:
        provider = get_model(model_id).provider
    except UnknownModel:
        return f"Model {model_id!r} is no longer in the registry; the context is shown in Anthropic's wire shape."
    if provider == "anthropic":
        return None
    if provider == "openai":
        return (
            f"{model_id} is served by OpenAI's chat completions: it received the same context in that format, "
            "and OpenAI caches prompt prefixes automatically, without breakpoints. Shown here in Anthropic's shape."
        )
    return (
        f"{model_id} is served by the {provider} provider, which reads the same context; no provider prompt "
        "cache is involved. Shown here in Anthropic's wire shape."
    )


# --- the admin view -------------------------------------------------------------------------------------------


def step_replay_view(
    request: HttpRequest, *, session_id: UUID, sequence: int, admin_context: dict[str, Any]
) -> HttpResponse:
    """The context of the trainer llm_request at `sequence`, next to what the previous request shared."""
    session = AgentSession.objects.filter(pk=session_id).first()
    if session is None:
        raise Http404("No such session")
    earlier_requests = list(
        AgentSessionEvent.objects.filter(
            session=session, event_type=EventType.LLM_REQUEST, sequence_number__lte=sequence
        ).order_by("-sequence_number")[:REQUEST_LOOKAROUND]
    )
    if not earlier_requests or earlier_requests[0].sequence_number != sequence:
        raise Http404(f"Event #{sequence} is not an LLM request of this session")
    request_event = earlier_requests[0]
    if not is_trainer_request(request_event.event_type, request_event.data):
        raise Http404(f"Event #{sequence} is not a request of the trainer loop")
    later = list(
        AgentSessionEvent.objects.filter(
            session=session,
            event_type__in=(EventType.LLM_REQUEST, EventType.LLM_RESPONSE),
            sequence_number__gt=sequence,
        ).order_by("sequence_number")[:REQUEST_LOOKAROUND]
    )
    # The transcript pairs each trainer request with its answer (none when the call failed), past the sub-agent
    # calls (purpose subagent:…, e.g. a week being prepared meanwhile) that may come in between.
    exchanges = Transcript.read([*reversed(earlier_requests), *later]).exchanges
    index = next(i for i, x in enumerate(exchanges) if x.request is request_event)
    previous_event = cast(AgentSessionEvent, exchanges[index - 1].request) if index > 0 else None
    response_event = cast(AgentSessionEvent | None, exchanges[index].response)
    next_event = cast(AgentSessionEvent, exchanges[index + 1].request) if index + 1 < len(exchanges) else None

    events = list(
        AgentSessionEvent.objects.filter(
            session=session,
            event_type__in=CONTEXT_EVENT_TYPES,
            sequence_number__lte=context_sequence_of(request_event),
        )
        .only("sequence_number", "event_type", "timestamp", "data")
        .order_by("sequence_number")
    )
    step = rebuild_step(session=session, request_event=request_event, events=events)
    previous = (
        rebuild_step(session=session, request_event=previous_event, events=events)
        if previous_event is not None
        else None
    )
    shared = (
        shared_prefix(step.body, previous.body)
        if step.body is not None and previous is not None and previous.body is not None
        else None
    )
    recorded = request_event.data if isinstance(request_event.data, dict) else {}
    response_data: dict[str, Any] = (
        response_event.data if response_event is not None and isinstance(response_event.data, dict) else {}
    )
    action_url = admin_context["action_url"]
    session_url = admin_context["session_url"]
    context = {
        **admin_context,
        "title": f"Step replay · request #{sequence}",
        "step": step,
        "recorded_estimate": recorded.get("estimated_tokens"),
        "rebuilt_estimate": step.request.estimated_tokens() if step.request is not None else None,
        "iteration": recorded.get("iteration"),
        "previous": previous,
        "shared": shared,
        "tools": tool_views(step.body) if step.body else [],
        "system_prompt": step.body["system"][0]["text"] if step.body else "",
        "user_data_xml": step.body["system"][1]["text"] if step.body else "",
        "request_messages": message_views(step.body, shared.messages if shared else 0) if step.body else [],
        "tokens": response_data.get("tokens") if isinstance(response_data.get("tokens"), dict) else None,
        "response_sequence": response_event.sequence_number if response_event is not None else None,
        "response_url": (
            f"{session_url}?seq={response_event.sequence_number}#e{response_event.sequence_number}"
            if response_event is not None
            else None
        ),
        "wire_body": json.dumps(step.body, indent=2, ensure_ascii=False) if step.body else "",
        "provider_note": _provider_note(step.model),
        "previous_url": action_url(previous_event.sequence_number) if previous_event is not None else None,
        "next_url": action_url(next_event.sequence_number) if next_event is not None else None,
    }
    return TemplateResponse(request, "admin/sessions_app/step_replay.html", context)
