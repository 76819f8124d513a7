"""Checkpoints (docs/contracts.md §13 (checkpoints)) and the retention tiers that decide what a checkpoint carries forward.

Before the first LLM call of a turn, `maybe_checkpoint` estimates the size of the next request. Past
`CHECKPOINT_THRESHOLD` (0.8 by default) of the model's context window it writes one `checkpoint` event that
summarises the events since `context_start_sequence` and the current state, then moves the context start to
that event. Nothing is deleted: earlier events stay in the timeline. The initializer counts loaded knowledge
from the context start, so it reloads what the next request needs by itself.

The checkpoint is written before the turn's `user_message`, so the new message (and the knowledge loaded for
it) lands after the checkpoint, inside the new context. It is never written between a tool_use and its
result, and the prompt-cache prefix only changes at that one point.

Retention tiers (data in `RETENTION_RULES`, documented in docs/architecture.md):
- T1 persistent: profile, settings, locations (always in the `<user_data>` block) and goals and preferences,
  fetched fresh into every checkpoint.
- T2 semi-persistent: schedule, plans, milestones, training balance: carried only when loaded or touched
  by a tool within the last `keep_turns` turns before the checkpoint; otherwise dropped until re-requested.
- T3 session-bound: the current workout and an open question: carried while they are active.
- T4 decaying: workout history: 15 → 7 → 5 → 3 items at the 1st, 2nd, 3rd and later checkpoints.
"""

from __future__ import annotations

import json
import logging
import traceback
import uuid
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from django.conf import settings
from django.db import transaction

from datasources_app import selectors as data_selectors
from datasources_app.sources import FormattedSource, SourceError, fetch_many
from sessions_app.events import CheckpointData, ErrorData, trainer_purpose_q
from sessions_app.models import CONTEXT_EVENT_TYPES, AgentSession, AgentSessionEvent, EventType
from sessions_app.selectors import context_events
from sessions_app.services import update_context_start
from sessions_app.transcript import NOTIFY_USER_TOOL, Transcript
from trainer_agent.context import ContextBuildError, build_context
from trainer_agent.llm.models import get_model
from trainer_agent.sink import EventSink

logger = logging.getLogger(__name__)

DEFAULT_THRESHOLD = 0.8
Tier = Literal["T1", "T2", "T3", "T4"]
REQUEST_PREVIEW_CHARS = 60
MAX_LISTED_REQUESTS = 12


@dataclass(frozen=True)
class RetentionRule:
    """How one knowledge source survives a checkpoint."""

    source: str
    tier: Tier
    keep_turns: int | None = None  # T2: turns since last loaded/touched within which it is carried
    decay: tuple[int, ...] = ()  # T4: items shown at the 1st, 2nd, … checkpoint (the last one repeats)
    touched_by: tuple[str, ...] = ()  # T2: tools whose use counts as re-requesting the source


T2_KEEP_TURNS = 5
RETENTION_RULES: tuple[RetentionRule, ...] = (
    RetentionRule("category_goals", "T1"),
    RetentionRule("muscle_goals", "T1"),
    RetentionRule("active_preferences", "T1"),
    RetentionRule(
        "scheduled_workouts",
        "T2",
        keep_turns=T2_KEEP_TURNS,
        touched_by=(
            "schedule_workout",
            "update_scheduled_workout",
            "delete_scheduled_workout",
            "create_workout_plan",
            "prepare_week",
        ),
    ),
    RetentionRule("workout_plans", "T2", keep_turns=T2_KEEP_TURNS, touched_by=("create_workout_plan",)),
    RetentionRule(
        "milestone_goals",
        "T2",
        keep_turns=T2_KEEP_TURNS,
        touched_by=("create_milestone_goal", "update_milestone_goal"),
    ),
    RetentionRule("exercise_distribution", "T2", keep_turns=T2_KEEP_TURNS),
    RetentionRule("current_workout_session", "T3"),
    RetentionRule("workout_history", "T4", decay=(15, 7, 5, 3)),
)
# T1 sources of the `<user_data>` block: rebuilt on every request, so never part of a summary.
STABLE_PREFIX_T1 = ("user_profile", "user_settings", "all_locations")


@dataclass(frozen=True)
class Carried:
    """One source a checkpoint carries, with the parameters it is fetched with."""

    source: str
    tier: Tier
    params: dict[str, Any] = field(default_factory=dict)


def decay_limit(rule: RetentionRule, checkpoint_number: int) -> int:
    """Items a T4 source shows at the `checkpoint_number`-th checkpoint (1-based): 15, 7, 5, then 3."""
    index = min(max(checkpoint_number, 1), len(rule.decay)) - 1
    return rule.decay[index]


def retained_sources(
    *,
    checkpoint_number: int,
    turns_since_use: dict[str, int],
    workout_active: bool,
    rules: Sequence[RetentionRule] = RETENTION_RULES,
) -> list[Carried]:
    """Apply the tiers: which sources the `checkpoint_number`-th checkpoint carries (pure function).

    `turns_since_use` maps a source to the number of user turns since it was last loaded as knowledge or
    touched by one of its tools (0 = in the latest turn); sources never used are absent.
    """
    carried: list[Carried] = []
    for rule in rules:
        if rule.tier == "T1":
            carried.append(Carried(rule.source, "T1"))
        elif rule.tier == "T2":
            since = turns_since_use.get(rule.source)
            if since is not None and rule.keep_turns is not None and since <= rule.keep_turns:
                carried.append(Carried(rule.source, "T2"))
        elif rule.tier == "T3":
            if workout_active:
                carried.append(Carried(rule.source, "T3"))
        else:
            carried.append(Carried(rule.source, "T4", {"limit": decay_limit(rule, checkpoint_number)}))
    return carried


@dataclass
class EventDigest:
    """What happened between the context start and now, read from the context events."""

    first_sequence: int
    last_sequence: int
    turns: int = 0
    turns_before: int = 0  # turns summarised by earlier checkpoints
    checkpoints_before: int = 0
    requests: list[str] = field(default_factory=list)
    tools_used: Counter[str] = field(default_factory=Counter)
    workouts_generated: list[str] = field(default_factory=list)
    workouts_delivered: list[str] = field(default_factory=list)
    open_question: str | None = None
    turns_since_use: dict[str, int] = field(default_factory=dict)


def digest_events(events: Sequence[AgentSessionEvent]) -> EventDigest:
    """Summarise context events: turns, requests, tools, workouts and the source use that T2 needs."""
    digest = EventDigest(
        first_sequence=events[0].sequence_number if events else 0,
        last_sequence=events[-1].sequence_number if events else 0,
    )
    touched = {tool: rule.source for rule in RETENTION_RULES for tool in rule.touched_by}
    last_use_turn: dict[str, int] = {}
    # The transcript reads each event; the digest adds, in event order, what a checkpoint carries on.
    transcript = Transcript()
    for event in events:
        transcript.add(event)
        kind = event.event_type
        if kind == EventType.CHECKPOINT:
            data = transcript.checkpoints[-1]
            digest.turns_before += int(data.get("turns", 0)) + int(data.get("turns_before", 0))
            digest.checkpoints_before = max(digest.checkpoints_before, int(data.get("checkpoint_number", 0)))
            digest.workouts_generated.extend(str(w) for w in data.get("workouts_generated") or [])
            digest.workouts_delivered.extend(str(w) for w in data.get("workouts_delivered") or [])
        elif kind == EventType.USER_MESSAGE:
            digest.requests.append(_preview(transcript.user_messages[-1]))
        elif kind == EventType.TOOL_CALL:
            call = transcript.calls[-1]
            digest.tools_used[call.tool_name] += 1
            if call.tool_name in touched:
                last_use_turn[touched[call.tool_name]] = call.turn
            if call.tool_name == NOTIFY_USER_TOOL and call.arguments.get("artifact_id"):
                digest.workouts_delivered.append(str(call.arguments["artifact_id"]))
        elif kind == EventType.KNOWLEDGE:
            last_use_turn[transcript.knowledge[-1].source] = transcript.knowledge[-1].turn
        elif kind == EventType.ARTIFACT:
            artifact = transcript.artifacts[-1]
            digest.workouts_generated.append(
                f"{artifact.get('artifact_id', '')} {artifact.get('title', '')}".strip()
            )
    digest.turns = transcript.turns
    digest.open_question = transcript.open_question
    digest.turns_since_use = {source: digest.turns - turn for source, turn in last_use_turn.items()}
    return digest


def estimate_next_request_tokens(
    *, session: AgentSession, user_id: uuid.UUID, model_id: str, pending_text: str = ""
) -> int:
    """Tokens of the next request (tools, system, user data, messages) plus the text about to be added.

    Fast path: the session's latest trainer request inside the current context already counted everything up
    to its `context_sequence`; only the context events written after it are added (as raw JSON, which
    over-counts slightly). Without such a request the context is built and measured.
    """
    recorded = _latest_request_estimate(session)
    if recorded is not None:
        tokens, context_sequence = recorded
        newer = AgentSessionEvent.objects.filter(
            session=session, event_type__in=CONTEXT_EVENT_TYPES, sequence_number__gt=context_sequence
        ).values_list("data", flat=True)
        extra = sum(len(json.dumps(data, ensure_ascii=False, default=str)) for data in newer)
        return tokens + (extra + len(pending_text)) // 4
    return _built_context_tokens(
        session=session, user_id=user_id, model_id=model_id, pending_text=pending_text
    )


def _latest_request_estimate(session: AgentSession) -> tuple[int, int] | None:
    """(estimated_tokens, context_sequence) of the latest trainer request built from the current context."""
    start = (
        AgentSession.objects.filter(pk=session.pk).values_list("context_start_sequence", flat=True).first()
    )
    data = (
        AgentSessionEvent.objects.filter(
            trainer_purpose_q(), session=session, event_type=EventType.LLM_REQUEST
        )
        .order_by("-sequence_number")
        .values_list("data", flat=True)
        .first()
    )
    if start is None or not isinstance(data, dict):
        return None
    tokens, context_sequence = data.get("estimated_tokens"), data.get("context_sequence")
    if not isinstance(tokens, int) or not isinstance(context_sequence, int) or context_sequence < start:
        return None
    return tokens, context_sequence


def _built_context_tokens(
    *, session: AgentSession, user_id: uuid.UUID, model_id: str, pending_text: str = ""
) -> int:
    try:
        context = build_context(session=session, user_id=user_id)
    except ContextBuildError:
        return 0
    return context.to_request(model=model_id).estimated_tokens() + len(pending_text) // 4


def checkpoint_threshold() -> float:
    return float(getattr(settings, "CHECKPOINT_THRESHOLD", DEFAULT_THRESHOLD))


def maybe_checkpoint(
    *,
    session: AgentSession,
    user_id: uuid.UUID,
    model_id: str,
    sink: EventSink,
    pending_text: str = "",
    threshold: float | None = None,
    keep_from: int | None = None,
) -> AgentSessionEvent | None:
    """Write a checkpoint when the next request would pass `threshold` × the model's window. Never raises.

    Call it at a turn boundary, before the turn's user message is recorded (`pending_text` is that message,
    counted in the estimate). Returns the checkpoint event, or None when none was needed (or it failed: the
    failure is recorded as an `error` event and the turn goes on with the full context).
    """
    if keep_from is not None and keep_from <= session.context_start_sequence:
        # The context holds nothing before the running turn (a new session, or one just checkpointed): there is
        # nothing a checkpoint could summarise, so no need to measure the next request (a build of the whole
        # context, tools and user data: ~15 % of a short turn's CPU).
        return None
    try:
        limit = (checkpoint_threshold() if threshold is None else threshold) * get_model(
            model_id
        ).context_window
        estimated = estimate_next_request_tokens(
            session=session, user_id=user_id, model_id=model_id, pending_text=pending_text
        )
        if estimated <= limit:
            return None
        return write_checkpoint(
            session=session,
            user_id=user_id,
            sink=sink,
            estimated_tokens=estimated,
            limit_tokens=int(limit),
            keep_from=keep_from,
        )
    except Exception as exc:
        logger.exception("checkpoint.failed", extra={"session_id": str(session.pk)})
        sink.record(
            EventType.ERROR,
            ErrorData(
                message=f"checkpoint failed: {type(exc).__name__}: {exc}",
                context="checkpoint",
                stack=traceback.format_exc(),
            ),
        )
        return None


def write_checkpoint(
    *,
    session: AgentSession,
    user_id: uuid.UUID,
    sink: EventSink,
    estimated_tokens: int = 0,
    limit_tokens: int = 0,
    keep_from: int | None = None,
) -> AgentSessionEvent:
    """Summarise the context since its start, carry the retained state, and start the context there.

    `keep_from` (the running turn's `user_message`, already stored): the events from it on are not summarised
    and stay in the context, which then starts at that message, followed by the checkpoint.
    """
    events = context_events(session=session)
    if keep_from is not None:
        events = [event for event in events if event.sequence_number < keep_from]
    digest = digest_events(events)
    number = digest.checkpoints_before + 1
    carried = retained_sources(
        checkpoint_number=number,
        turns_since_use=digest.turns_since_use,
        workout_active=data_selectors.get_current_workout(user_id=user_id) is not None,
    )
    state = _fetch_state(user_id=user_id, carried=carried)
    data: dict[str, Any] = {
        "checkpoint_number": number,
        "events_summarized": f"{digest.first_sequence}-{digest.last_sequence}",
        "turns": digest.turns,
        "turns_before": digest.turns_before,
        "requests": digest.requests[-MAX_LISTED_REQUESTS:],
        "tools_used": dict(sorted(digest.tools_used.items())),
        "workouts_generated": digest.workouts_generated[-MAX_LISTED_REQUESTS:],
        "workouts_delivered": digest.workouts_delivered[-MAX_LISTED_REQUESTS:],
        "open_question": digest.open_question,
        "retained": {item.source: item.tier for item in carried if item.source in state},
        "estimated_tokens": estimated_tokens,
        "limit_tokens": limit_tokens,
    }
    data["summary"] = format_summary(data, state)
    with transaction.atomic():
        event = sink.record(EventType.CHECKPOINT, CheckpointData.model_validate(data))
        update_context_start(
            session=session, sequence=event.sequence_number if keep_from is None else keep_from
        )
    return event


def _fetch_state(*, user_id: uuid.UUID, carried: list[Carried]) -> dict[str, str]:
    results = fetch_many(  # one after another, as the initializer's (no connection per source)
        user_id=user_id, requests=[(item.source, item.params) for item in carried], max_workers=1
    )
    state: dict[str, str] = {}
    for item, result in zip(carried, results, strict=True):
        if isinstance(result, SourceError):
            logger.warning("checkpoint.source_failed", extra={"source": item.source, "error": result.error})
            continue
        assert isinstance(result, FormattedSource)
        state[item.source] = result.text
    return state


def format_summary(data: dict[str, Any], state: dict[str, str]) -> str:
    """The text the model sees inside `<checkpoint>`: what happened, then the current state."""
    total_turns = int(data["turns"]) + int(data["turns_before"])
    lines = [
        f"Conversation so far, summarised (events {data['events_summarized']}, checkpoint "
        f"{data['checkpoint_number']}): {data['turns']} turns since the last summary, {total_turns} in all.",
    ]
    requests: list[str] = data["requests"]
    if requests:
        omitted = int(data["turns"]) - len(requests)
        lines.append(
            "Latest user requests" + (f" ({omitted} earlier not listed)" if omitted > 0 else "") + ":"
        )
        lines += [f"  {index}. {text}" for index, text in enumerate(requests, start=1)]
    tools: dict[str, int] = data["tools_used"]
    if tools:
        lines.append("Tools used: " + ", ".join(f"{name}×{count}" for name, count in tools.items()))
    if data["workouts_generated"]:
        lines.append("Workouts generated: " + "; ".join(data["workouts_generated"]))
    if data["workouts_delivered"]:
        lines.append("Workouts delivered: " + ", ".join(data["workouts_delivered"]))
    if data["open_question"]:
        lines.append(f'Open question to the user: "{data["open_question"]}"')
    lines.append("<current_state>")
    lines += [state[source] for source in state]
    lines.append("</current_state>")
    return "\n".join(lines)


def _preview(text: str) -> str:
    text = " ".join(text.split())
    return f'"{text[:REQUEST_PREVIEW_CHARS]}…"' if len(text) > REQUEST_PREVIEW_CHARS else f'"{text}"'
