"""Reads from the event store. Each function is one query unless its docstring says otherwise."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from django.db import connections, router
from django.db.models import Count, F, Min, OuterRef, Q, QuerySet, Subquery
from django.db.models.expressions import BaseExpression, RawSQL

from sessions_app.events import trainer_purpose_q
from sessions_app.models import (
    CONTEXT_EVENT_TYPES,
    AgentSession,
    AgentSessionEvent,
    AgentTurn,
    EventType,
    SessionNotFound,
    TurnStatus,
    WorkerHeartbeat,
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
    # Uncorrelated (the session's own id), so PostgreSQL reads it once per statement, not once per event row.
    return Subquery(
        AgentSession.objects.filter(pk=session.pk).order_by().values("context_start_sequence")[:1]
    )


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
    """`{source, params, loaded_at}` of each knowledge event in the current context (since the last checkpoint),
    in order: what the initializer may reuse, and when each source was loaded (whether the user has been shown a
    change since).

    Only those keys leave the database, not the (large) fetched data.
    """
    rows = (
        AgentSessionEvent.objects.filter(
            session=session,
            event_type=EventType.KNOWLEDGE,
            sequence_number__gte=_context_start(session),
        )
        .order_by("sequence_number")
        .values_list("data__source", "data__params", "timestamp")
    )
    return [
        {"source": source, "params": params or {}, "loaded_at": loaded_at}
        for source, params, loaded_at in rows
    ]


def last_sequence(*, session: AgentSession) -> int:
    """The highest sequence number in the session, or -1 when it has no events yet.

    The first entry of a backward scan of the unique (session, sequence_number) index, however long the session.
    """
    last = (
        AgentSessionEvent.objects.filter(session=session)
        .order_by("-sequence_number")
        .values_list("sequence_number", flat=True)
        .first()
    )
    return -1 if last is None else last


# A prepared `session_state_query`: the session's row as a dict.
StateQuery = QuerySet[AgentSession, Any]


@dataclass(frozen=True)
class SessionState:
    """The session as one query reads it (`session_state`): its last event's number (-1 with none), where its
    context starts, and the values of the caller's extra expressions (`extra`, by name)."""

    last_sequence: int
    context_start: int
    extra: dict[str, Any]
    # The query also woke the session's followers for when the transaction commits (`services.waking_followers`).
    followers_woken: bool = False


# The column of a state query that wakes the followers (`services.waking_followers`); not part of `extra`.
FOLLOWERS_WOKEN = "_followers_woken"


def session_state_query(
    *, session: AgentSession, extra: Mapping[str, BaseExpression] | None = None
) -> StateQuery:
    """The query `session_state` runs: the session's row with its last sequence number (the first entry of a
    backward scan of the unique (session, sequence_number) index), its context start, and `extra`, expressions
    evaluated on the session's row (e.g. subqueries by its `user_id`: what a caller wants to know in the same
    round trip). Build it once and read it as often as needed: making the subqueries costs Django more CPU than
    running the query."""
    last = Subquery(
        AgentSessionEvent.objects.filter(session=OuterRef("pk"))
        .order_by("-sequence_number")
        .values("sequence_number")[:1]
    )
    # order_by(): one row, so the model's default ordering (`-created_at`) would only cost a sort on the server
    # and the ORM's compiling of it at every read.
    return (
        AgentSession.objects.filter(pk=session.pk)
        .order_by()
        .values("context_start_sequence", _last_sequence=last, **(extra or {}))
    )


def session_state(*, query: StateQuery) -> SessionState | None:
    """The session's state now (`session_state_query`), in one query; None if the session is gone."""
    found = next(iter(query.all()), None)
    if found is None:
        return None
    row: dict[str, Any] = dict(found)
    last_sequence = row.pop("_last_sequence")
    context_start = row.pop("context_start_sequence")
    woken = FOLLOWERS_WOKEN in row
    row.pop(FOLLOWERS_WOKEN, None)
    return SessionState(
        last_sequence=-1 if last_sequence is None else int(last_sequence),
        context_start=int(context_start),
        extra=row,
        followers_woken=woken,
    )


def context_events_after(
    *, session: AgentSession, after_sequence: int
) -> tuple[list[AgentSessionEvent], int] | None:
    """The context events numbered above `after_sequence` and at or after the session's context start, in order,
    with that start as stored now (a checkpoint written by another worker counts); None if the session is gone.

    One query (the start read by a subquery of the same statement, so both come from one snapshot; the events
    load sequence_number, event_type, timestamp and data, the rest deferred), and a second one for the start
    only when no event is new.
    """
    events: list[AgentSessionEvent] = list(
        AgentSessionEvent.objects.annotate(context_start=_context_start(session))
        .filter(
            session=session,
            event_type__in=CONTEXT_EVENT_TYPES,
            sequence_number__gt=after_sequence,
            sequence_number__gte=F("context_start"),
        )
        .only("sequence_number", "event_type", "timestamp", "data")
        .order_by("sequence_number")
    )
    if events:
        return events, int(getattr(events[0], "context_start"))  # noqa: B009 (an annotation, unknown to mypy)
    start = (
        AgentSession.objects.filter(pk=session.pk).values_list("context_start_sequence", flat=True).first()
    )
    if start is None:
        return None
    return events, start


def events_after(*, session_id: UUID, after_sequence: int, limit: int = 500) -> list[AgentSessionEvent]:
    """The session's events numbered above `after_sequence`, in order, at most `limit` (a stream's next page)."""
    return list(
        AgentSessionEvent.objects.filter(session_id=session_id, sequence_number__gt=after_sequence).order_by(
            "sequence_number"
        )[:limit]
    )


def event_at(*, session_id: UUID, sequence: int) -> AgentSessionEvent | None:
    return AgentSessionEvent.objects.filter(session_id=session_id, sequence_number=sequence).first()


def latest_response_before(*, session_id: UUID, sequence: int) -> int | None:
    """The number of the session's last trainer llm_response at or before `sequence` (where a stream's
    projection of tool calls starts over), or None. Sub-agent responses (purpose subagent:…, written by a week
    being prepared meanwhile) are not where a projection starts."""
    return (
        AgentSessionEvent.objects.filter(
            trainer_purpose_q(),
            session_id=session_id,
            event_type=EventType.LLM_RESPONSE,
            sequence_number__lte=sequence,
        )
        .order_by("-sequence_number")
        .values_list("sequence_number", flat=True)
        .first()
    )


def trainer_requests_between(*, session_id: UUID, first: int, last: int | None) -> int:
    """How many trainer `llm_request`s the session holds numbered first..last (a turn's iterations)."""
    found = AgentSessionEvent.objects.filter(
        trainer_purpose_q(),
        session_id=session_id,
        event_type=EventType.LLM_REQUEST,
        sequence_number__gte=first,
    )
    return (found.filter(sequence_number__lte=last) if last is not None else found).count()


def turn_owner(*, turn_id: UUID) -> UUID | None:
    """The user whose turn it is (None if it is gone): `agent_turns` is system data, readable before the worker
    acts for anyone, and the claim that follows touches the session, which is the user's."""
    return AgentTurn.objects.filter(pk=turn_id).values_list("user_id", flat=True).first()


def get_turn(*, turn_id: UUID) -> AgentTurn | None:
    return AgentTurn.objects.select_related("session").filter(pk=turn_id).first()


def turn_at(*, session_id: UUID, sequence: int) -> AgentTurn | None:
    """The turn of the session that the event numbered `sequence` belongs to (the latest started at or before it)."""
    return (
        AgentTurn.objects.filter(session_id=session_id, start_sequence__lte=sequence)
        .order_by("-start_sequence")
        .first()
    )


def finished_turns_between(*, session_id: UUID, after: int, up_to: int) -> list[AgentTurn]:
    """The session's finished turns whose last event is numbered in (after, up_to], in order."""
    return list(
        AgentTurn.objects.filter(
            session_id=session_id, end_sequence__gt=after, end_sequence__lte=up_to, finished_at__isnull=False
        ).order_by("end_sequence")
    )


def open_turn_of(*, session_id: UUID) -> AgentTurn | None:
    return AgentTurn.objects.filter(session_id=session_id, finished_at__isnull=True).first()


def lapsed_turns(*, now: Any, queued_before: Any, limit: int = 100) -> list[UUID]:
    """Open turns whose worker died (running, lease lapsed) or that no worker took in time (queued since before
    `queued_before`): the turns a sweeper hands to a worker again."""
    running_lapsed = Q(status=TurnStatus.RUNNING, lease_expires_at__lt=now)
    queued_long = Q(status=TurnStatus.QUEUED, enqueued_at__lt=queued_before)
    return list(
        AgentTurn.objects.filter(finished_at__isnull=True)
        .filter(running_lapsed | queued_long)
        .values_list("pk", flat=True)[:limit]
    )


def live_worker_count(*, seen_after: Any) -> int:
    """Worker processes whose heartbeat is newer than `seen_after`."""
    return WorkerHeartbeat.objects.filter(seen_at__gt=seen_after).count()


def live_worker_names(*, seen_after: Any) -> list[str]:
    """The names of the worker processes whose heartbeat is newer than `seen_after`."""
    return list(WorkerHeartbeat.objects.filter(seen_at__gt=seen_after).values_list("name", flat=True))


def oldest_queued_turn_since() -> Any:
    """When the longest-waiting queued turn (no worker has taken it yet) was enqueued; None when none waits."""
    return (
        AgentTurn.objects.filter(finished_at__isnull=True, status=TurnStatus.QUEUED)
        .order_by("enqueued_at")
        .values_list("enqueued_at", flat=True)
        .first()
    )


def session_belongs_to(*, session_id: UUID, user_id: UUID) -> bool:
    return AgentSession.objects.filter(pk=session_id, user_id=user_id).exists()


def session_exists(*, session_id: UUID) -> bool:
    return AgentSession.objects.filter(pk=session_id).exists()


def queued_turns() -> tuple[int, Any]:
    """How many turns wait for a worker, and when the longest-waiting one was (last) enqueued (None: none)."""
    row = AgentTurn.objects.filter(status=TurnStatus.QUEUED, finished_at__isnull=True).aggregate(
        depth=Count("pk"), oldest=Min("enqueued_at")
    )
    return int(row["depth"] or 0), row["oldest"]


# What staff search sessions by: a user message, a tool call's name and arguments, an error's message.
SEARCHABLE_EVENT_TYPES: tuple[str, ...] = (EventType.USER_MESSAGE, EventType.TOOL_CALL, EventType.ERROR)
# The same expression as the GIN index of migration 0011 (agent_evt_search_idx), so PostgreSQL reads the index.
SEARCH_DOCUMENT_SQL = (
    "to_tsvector('english'::regconfig, "
    "CASE event_type"
    " WHEN 'user_message' THEN coalesce(data ->> 'message', '')"
    " WHEN 'tool_call' THEN coalesce(data ->> 'tool_name', '') || ' ' || coalesce(data ->> 'arguments', '')"
    " WHEN 'error' THEN coalesce(data ->> 'message', '')"
    " ELSE '' END)"
)


def sessions_mentioning(*, text: str) -> QuerySet[AgentSessionEvent, UUID]:
    """The ids (for `pk__in`) of sessions with a user message, tool call or error that
    mentions `text`: PostgreSQL full-text search (English stemming, web-search syntax: words, "a phrase",
    -not), else every word as a case-insensitive substring of one event's text. One query when used as a
    subquery."""
    events = AgentSessionEvent.objects.filter(event_type__in=SEARCHABLE_EVENT_TYPES)
    if connections[router.db_for_read(AgentSessionEvent)].vendor == "postgresql":
        from django.contrib.postgres.search import SearchQuery, SearchVectorField

        document = RawSQL(SEARCH_DOCUMENT_SQL, (), output_field=SearchVectorField())
        events = events.annotate(document=document).filter(
            document=SearchQuery(text, config="english", search_type="websearch")
        )
    else:
        for word in text.split():
            events = events.filter(
                Q(event_type=EventType.USER_MESSAGE, data__message__icontains=word)
                | Q(event_type=EventType.TOOL_CALL, data__tool_name__icontains=word)
                | Q(event_type=EventType.TOOL_CALL, data__arguments__icontains=word)
                | Q(event_type=EventType.ERROR, data__message__icontains=word)
            )
    return events.order_by().values_list("session_id", flat=True).distinct()
