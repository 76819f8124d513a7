"""Reads from the event store. Each function is one query unless its docstring says otherwise."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from django.db.models import Max, Subquery

from sessions_app.models import (
    CONTEXT_EVENT_TYPES,
    AgentSession,
    AgentSessionEvent,
    EventType,
    SessionNotFound,
)

ACTION_EVENT_TYPES: tuple[str, ...] = (EventType.TOOL_CALL, EventType.TOOL_RESULT)


def get_session_for_user(*, user_id: UUID, session_id: UUID) -> AgentSession:
    """The user's session with this id; SessionNotFound if it is unknown or someone else's."""
    try:
        return AgentSession.objects.get(pk=session_id, user_id=user_id)
    except AgentSession.DoesNotExist:
        raise SessionNotFound(f"session {session_id} not found") from None


def list_sessions(*, user_id: UUID, limit: int = 10) -> list[AgentSession]:
    """The user's most recent sessions, newest first."""
    return list(AgentSession.objects.filter(user_id=user_id).order_by("-created_at")[:limit])


def _context_start(session: AgentSession) -> Subquery:
    # Read context_start_sequence from the row inside the same query rather than from the
    # in-memory instance: a checkpoint written by another worker must be honoured.
    return Subquery(AgentSession.objects.filter(pk=session.pk).values("context_start_sequence")[:1])


def context_events(*, session: AgentSession) -> list[AgentSessionEvent]:
    """The events the context builder reads, from the session's context_start_sequence, in order.

    Loads sequence_number, event_type, timestamp and data only (other fields are deferred).
    """
    return list(
        AgentSessionEvent.objects.filter(
            session=session,
            event_type__in=CONTEXT_EVENT_TYPES,
            sequence_number__gte=_context_start(session),
        )
        .only("sequence_number", "event_type", "timestamp", "data")
        .order_by("sequence_number")
    )


def timeline(
    *, session: AgentSession, from_sequence: int = 0, limit: int | None = None
) -> list[AgentSessionEvent]:
    """All events of the session from `from_sequence` on, in order, at most `limit` of them."""
    events = AgentSessionEvent.objects.filter(session=session, sequence_number__gte=from_sequence).order_by(
        "sequence_number"
    )
    if limit is not None:
        events = events[:limit]
    return list(events)


def recent_actions(*, session: AgentSession, limit: int = 20) -> list[AgentSessionEvent]:
    """The latest `limit` tool_call/tool_result events, oldest first."""
    latest = AgentSessionEvent.objects.filter(session=session, event_type__in=ACTION_EVENT_TYPES).order_by(
        "-sequence_number"
    )[:limit]
    return list(reversed(latest))


def get_artifact(*, session: AgentSession, artifact_id: str) -> dict[str, Any] | None:
    """The data of the session's artifact event with this artifact_id (the latest, if repeated), or None."""
    data: dict[str, Any] | None = (
        AgentSessionEvent.objects.filter(
            session=session, event_type=EventType.ARTIFACT, data__artifact_id=artifact_id
        )
        .order_by("-sequence_number")
        .values_list("data", flat=True)
        .first()
    )
    return data


def existing_knowledge_sources(*, session: AgentSession) -> list[dict[str, Any]]:
    """`{source, params}` of each knowledge event in the current context (since the last checkpoint).

    Only those two keys leave the database, not the (large) fetched data.
    """
    rows = (
        AgentSessionEvent.objects.filter(
            session=session,
            event_type=EventType.KNOWLEDGE,
            sequence_number__gte=_context_start(session),
        )
        .order_by("sequence_number")
        .values_list("data__source", "data__params")
    )
    return [{"source": source, "params": params or {}} for source, params in rows]


def last_sequence(*, session: AgentSession) -> int:
    """The highest sequence number in the session, or -1 when it has no events yet."""
    last: int | None = AgentSessionEvent.objects.filter(session=session).aggregate(
        last=Max("sequence_number")
    )["last"]
    return -1 if last is None else last
