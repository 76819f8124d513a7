"""Reads from the event store. Each function is one query unless its docstring says otherwise."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from uuid import UUID
from weakref import WeakKeyDictionary

from django.db import DEFAULT_DB_ALIAS, connections
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models import Field, Subquery

from config.db import PlannedRead, RowReader, Rows, quoted_column, quoted_table, read_together
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
    """The highest sequence number in the session, or -1 when it has no events yet.

    On every append's path, so plain SQL through the cursor (the ORM's
    `order_by("-sequence_number").values_list("sequence_number")[:1]`, without its query-building cost).
    """
    conn = connections[DEFAULT_DB_ALIAS]
    with conn.cursor() as cursor:
        cursor.execute(hot_path_statements(conn).last_sequence, [session_param(conn, session)])
        row = cursor.fetchone()
    last: int | None = row[0] if row else None
    return -1 if last is None else last


# --- Plain SQL on the agent loop's hot path ----------------------------------------------------------------
# Every iteration of the loop locks the session, reads its last sequence number, inserts events and reads the
# new context events. The ORM's query building costs several times these statements, so they go through the
# connection's cursor as plain SQL that both vendors accept (`%s` parameters). Names come from the models'
# `_meta`, quoted for the vendor; parameters are adapted with each field's `get_db_prep_*` and values read
# back pass through the converters the ORM applies, so the results equal the ORM's on SQLite and PostgreSQL
# (tests/sessions_app/test_hot_path_sql.py).


def session_param(conn: BaseDatabaseWrapper, session: AgentSession) -> Any:
    """The session's primary key as the database takes it."""
    return _SESSION_ID.get_db_prep_value(session.pk, conn)


_SESSION_ID = AgentSession._meta.get_field("id")
assert isinstance(_SESSION_ID, Field)


_CONTEXT_EVENT_FIELDS = ("id", "sequence_number", "event_type", "timestamp", "data")
_CONTEXT_TYPE_VALUES = [str(kind) for kind in CONTEXT_EVENT_TYPES]


@dataclass
class HotPathStatements:
    """The hot path's statements and readers for one connection (the converters are bound to its backend)."""

    lock_session: str
    last_sequence: str
    insert_event: str
    # The same INSERT with the number after the session's last read inside it (its one parameter there is the
    # session id), returning that number: the session must already be locked (no other writer can append).
    insert_next_event: str
    context_events: str
    context_event: RowReader[AgentSessionEvent]  # a context_events row (but its last column) → the event
    insert_session: str  # every column of agent_sessions, in `_meta.concrete_fields` order


_STATEMENTS: WeakKeyDictionary[BaseDatabaseWrapper, HotPathStatements] = WeakKeyDictionary()


def hot_path_statements(conn: BaseDatabaseWrapper) -> HotPathStatements:
    """The statements for this connection, made on its first use (`services` runs the lock and the inserts)."""
    made = _STATEMENTS.get(conn)
    if made is None:
        made = _STATEMENTS[conn] = _make_statements(conn)
    return made


def _make_statements(conn: BaseDatabaseWrapper) -> HotPathStatements:
    sessions, events = quoted_table(conn, AgentSession), quoted_table(conn, AgentSessionEvent)

    def event(name: str) -> str:
        return f"e.{quoted_column(conn, AgentSessionEvent, name)}"

    event_fields = AgentSessionEvent._meta.concrete_fields
    session_fields = AgentSession._meta.concrete_fields
    start = f"s.{quoted_column(conn, AgentSession, 'context_start_sequence')}"
    session_id = f"s.{quoted_column(conn, AgentSession, 'id')}"
    # The session's row, left-joined to its new context events: the start comes back even when nothing is new.
    context_events = (
        f"SELECT {', '.join(event(name) for name in _CONTEXT_EVENT_FIELDS)}, {start} "
        f"FROM {sessions} s LEFT JOIN {events} e ON {event('session')} = {session_id} "
        f"AND {event('event_type')} IN ({', '.join(['%s'] * len(_CONTEXT_TYPE_VALUES))}) "
        f"AND {event('sequence_number')} > %s AND {event('sequence_number')} >= {start} "
        f"WHERE {session_id} = %s ORDER BY {event('sequence_number')}"
    )
    sequence, of_session = (
        quoted_column(conn, AgentSessionEvent, "sequence_number"),
        quoted_column(conn, AgentSessionEvent, "session"),
    )
    # The session's last number as the first entry of a backward scan of the unique (session, sequence_number)
    # index: constant time. Written as MAX() the planner may instead read every event of the session through
    # another index that leads with the session (with statistics older than the session, it expects one row).
    last_sequence = (
        f"SELECT {sequence} FROM {events} WHERE {of_session} = %s ORDER BY {sequence} DESC LIMIT 1"
    )
    columns = ", ".join(quoted_column(conn, AgentSessionEvent, f.name) for f in event_fields)
    values = ["%s"] * len(event_fields)
    insert_event = f"INSERT INTO {events} ({columns}) VALUES ({', '.join(values)})"
    values[[f.name for f in event_fields].index("sequence_number")] = f"(COALESCE(({last_sequence}), -1) + 1)"
    insert_next_event = f"INSERT INTO {events} ({columns}) VALUES ({', '.join(values)}) RETURNING {sequence}"
    lock_session = (
        f"UPDATE {sessions} SET {quoted_column(conn, AgentSession, 'updated_at')} = %s "
        f"WHERE {quoted_column(conn, AgentSession, 'id')} = %s"
    )
    return HotPathStatements(
        lock_session=lock_session,
        last_sequence=last_sequence,
        insert_event=insert_event,
        insert_next_event=insert_next_event,
        context_events=context_events,
        context_event=RowReader(conn, AgentSessionEvent, _CONTEXT_EVENT_FIELDS),
        insert_session=(
            f"INSERT INTO {sessions} ({', '.join(quoted_column(conn, AgentSession, f.name) for f in session_fields)}) "
            f"VALUES ({', '.join(['%s'] * len(session_fields))})"
        ),
    )


def context_events_after(
    *, session: AgentSession, after_sequence: int
) -> tuple[list[AgentSessionEvent], int] | None:
    """The context events numbered above `after_sequence` and at or after the session's context start, in order,
    with that start as stored now (a checkpoint written by another worker counts); None if the session is gone.

    One query, also when nothing is new (the start still comes back). The events are loaded as
    `context_events` loads them (sequence_number, event_type, timestamp and data; other fields deferred).
    """
    return read_together(plan_context_events_after(session=session, after_sequence=after_sequence))[0]


def plan_context_events_after(
    *, session: AgentSession, after_sequence: int
) -> PlannedRead[tuple[list[AgentSessionEvent], int] | None]:
    """`context_events_after` as a read to send with others (`config.db.read_together`)."""
    conn = connections[DEFAULT_DB_ALIAS]
    statements = hot_path_statements(conn)

    def finish(rowsets: list[Rows]) -> tuple[list[AgentSessionEvent], int] | None:
        rows = rowsets[0]
        if not rows:
            return None
        start: int = rows[0][-1]
        events = []
        for row in rows:
            event = statements.context_event.instance(row[:-1])
            if event is not None:  # None: the session's row alone, nothing new
                events.append(event)
        return events, start

    params = [*_CONTEXT_TYPE_VALUES, after_sequence, session_param(conn, session)]
    return PlannedRead(statements=((statements.context_events, params),), finish=finish)
