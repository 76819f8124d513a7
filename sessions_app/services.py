"""Writes to the event store: sessions and their append-only events (seed 000 §7, §11.2)."""

from __future__ import annotations

import json
import random
import re
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any, NamedTuple, cast
from uuid import UUID

from django.core.serializers.json import DjangoJSONEncoder
from django.db import DEFAULT_DB_ALIAS, IntegrityError, connection, connections, transaction
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models import Field
from django.utils import timezone

from config.db import (
    PlannedRead,
    Statement,
    read_together,
    send_together,
    sends_statements_together,
    write_together,
)
from sessions_app.models import (
    AgentSession,
    AgentSessionEvent,
    EventType,
    SessionNotFound,
    SessionStatus,
)
from sessions_app.selectors import (
    get_session_for_user,
    hot_path_statements,
    last_sequence,
    session_param,
)

# Seed 000 §7.5: up to 5 attempts on a duplicate (session_id, sequence_number), with random backoff.
APPEND_MAX_ATTEMPTS = 5
APPEND_BACKOFF_SECONDS = (0.005, 0.050)

# A JSON text escape for U+0000 that is not itself an escaped backslash followed by "u0000".
_NUL_ESCAPE = re.compile(r"(?<!\\)(?:\\\\)*\\u0000")


class InvalidEventData(ValueError):
    """Event data that cannot be stored as a JSON object identically on SQLite and PostgreSQL."""


def create_session(*, user_id: UUID, metadata: dict[str, Any] | None = None) -> AgentSession:
    """Create an active session for the user, reading context from sequence 0."""
    session, insert = planned_session(user_id=user_id, metadata=metadata)
    write_together([insert])
    return session


def planned_session(
    *, user_id: UUID, metadata: dict[str, Any] | None = None
) -> tuple[AgentSession, Statement]:
    """`create_session`'s session and its INSERT, not yet run: for a caller that stores it together with other
    rows (`config.db.write_together`). The session is marked as saved; it exists once the INSERT has run.

    The row is the one `AgentSession.objects.create(...)` would store: defaults (id) from the model, the times
    from the fields' `pre_save` (auto_now, auto_now_add) and every value from its field's `get_db_prep_save`.
    """
    conn = connections[DEFAULT_DB_ALIAS]
    session = AgentSession(
        user_id=user_id,
        metadata=_to_json_object(metadata or {}),
        status=SessionStatus.ACTIVE,
        context_start_sequence=0,
    )
    params = [field.get_db_prep_save(field.pre_save(session, True), conn) for field in _SESSION_FIELDS]
    session._state.adding = False
    session._state.db = conn.alias
    return session, (hot_path_statements(conn).insert_session, params)


def get_or_create_session(*, user_id: UUID, session_id: UUID | None = None) -> AgentSession:
    """Return the user's given session, else their most recent active session, else a new one.

    Raises SessionNotFound when `session_id` is unknown or belongs to another user (one error for
    both, so callers cannot probe for other users' session ids).
    """
    if session_id is not None:
        return get_session_for_user(user_id=user_id, session_id=session_id)
    latest_active = (
        AgentSession.objects.filter(user_id=user_id, status=SessionStatus.ACTIVE)
        .order_by("-created_at")
        .first()
    )
    return latest_active or create_session(user_id=user_id)


def append_event(
    *,
    session: AgentSession,
    event_type: str,
    data: Mapping[str, Any],
    duration_ms: int | None = None,
) -> AgentSessionEvent:
    """Append one event at the next sequence number (0, 1, 2, … per session). Safe under concurrent writers.

    The first statement of the transaction is an UPDATE of the session row (bumping `updated_at`).
    On PostgreSQL that takes the same row lock as SELECT … FOR UPDATE and holds it to commit, so
    writers to one session queue up and each reads a MAX(sequence_number) that includes every
    committed predecessor: no gaps, no duplicates, no retries. Writers to different sessions do
    not block each other. SQLite serialises all writers anyway (BEGIN IMMEDIATE in settings).
    The seed's retry on a duplicate key (5 attempts, 5-50 ms random backoff) stays as the fallback
    for backends or isolation setups where the lock does not serialise, e.g. SQLite in DEFERRED mode.
    The lock lasts until the outermost transaction commits: do not wrap slow work (an LLM call)
    and appends in one transaction, or other writers to the session wait for it.

    Raises ValueError for an unknown event type or a negative duration, InvalidEventData (a
    ValueError) for data that is not a JSON object, and SessionNotFound if the session is gone.
    The statements are plain SQL through the cursor (see "The append hot path" below); the returned
    event equals the stored row as the ORM reads it.
    """
    return _append_checked(session, _checked(NewEvent(event_type, data, duration_ms)))


def _append_checked(session: AgentSession, row: _Row) -> AgentSessionEvent:
    batch = _open_batches().get(session.pk)
    if batch is not None:
        if len(connection.savepoint_ids) == batch.depth:
            return _append_in_batch(batch, session, row)
        # A write in a savepoint inside the batch may still be rolled back: ask the database again next time.
        batch.next_sequence = None

    for attempt in range(1, APPEND_MAX_ATTEMPTS + 1):
        try:
            with transaction.atomic():
                now = _lock_session(session)
                event = _insert_event(session, last_sequence(session=session) + 1, row)
        except IntegrityError as exc:
            if attempt == APPEND_MAX_ATTEMPTS or not _is_sequence_collision(exc):
                raise
            _backoff()
            continue
        session.updated_at = now
        return event
    raise AssertionError("unreachable: the last attempt either returns or raises")


@dataclass(frozen=True)
class NewEvent:
    """An event for `append_events`. `timestamp` (default: when it is stored) records when it happened, for an
    event written later than that (an `llm_request` stored with the model's answer)."""

    event_type: str
    data: Mapping[str, Any]
    duration_ms: int | None = None
    timestamp: datetime | None = None


class _Row(NamedTuple):
    """A checked NewEvent: the event type's stored value and the data as it will read back."""

    event_type: str
    payload: dict[str, Any]
    duration_ms: int | None
    timestamp: datetime | None


def _checked(event: NewEvent) -> _Row:
    """The event ready to store; ValueError (InvalidEventData for the data) for anything not storable."""
    try:
        event_type = EventType(event.event_type).value
    except ValueError:
        raise ValueError(
            f"unknown event type {event.event_type!r}; expected one of {', '.join(EventType.values)}"
        ) from None
    if event.duration_ms is not None and event.duration_ms < 0:
        raise ValueError(f"duration_ms must be >= 0, got {event.duration_ms}")
    return _Row(event_type, _to_json_object(event.data), event.duration_ms, event.timestamp)


def append_events(
    *, session: AgentSession, events: Sequence[NewEvent], wait_for_flush: bool = True
) -> list[AgentSessionEvent]:
    """Append the events at consecutive numbers after the session's last one: all of them or none.

    The agent loop's writes. On PostgreSQL (outside an `event_batch` of the session) the session lock and the
    INSERTs, each numbering itself after the one before (`insert_next_event`), go to the server as one message.
    In autocommit mode the server runs such a message as one transaction, so its commit travels with it: one
    round trip, where a batch of the same events needs four or more (BEGIN, lock and first INSERT, each further
    INSERT, COMMIT). Inside a caller's transaction the message joins it, and the lock lasts until it commits.
    Elsewhere (SQLite, server-side binding, or inside a batch) the events go through `event_batch`.

    `wait_for_flush=False` (PostgreSQL, outside a caller's transaction): the commit does not wait for the WAL to
    reach the disk (`synchronous_commit` off for this one transaction). The events are committed and visible at
    once; they become durable with the next commit that does wait, on any connection, because the WAL is flushed
    in order (and otherwise within three times `wal_writer_delay`, 600 ms by default). Only a crash of the database server
    in between can lose them, never leaving anything inconsistent. For writes that a waiting commit follows.

    Validates every event before writing any (ValueError, InvalidEventData); raises SessionNotFound if the
    session is gone. Returns the stored events, equal to the rows read back through the ORM.
    """
    stored, _ = _append(session, events, None, wait_for_flush=wait_for_flush)
    return stored


def append_events_then_read[T](
    *, session: AgentSession, events: Sequence[NewEvent], read: PlannedRead[T]
) -> tuple[list[AgentSessionEvent], T]:
    """`append_events`, then `read` (a selector's planned read, which sees the new events): on PostgreSQL in
    the same message, so the write, its commit and the read are one round trip; elsewhere one after the other."""
    stored, result = _append(session, events, read)
    return stored, cast(T, result)  # a read was given, so this is its result


def _append[T](
    session: AgentSession,
    events: Sequence[NewEvent],
    read: PlannedRead[T] | None,
    *,
    wait_for_flush: bool = True,
) -> tuple[list[AgentSessionEvent], T | None]:
    checked = [_checked(each) for each in events]
    conn = connections[DEFAULT_DB_ALIAS]
    if checked and session.pk not in _open_batches() and _sends_appends_together(conn):
        return _send_appends(conn, session, checked, read, wait_for_flush=wait_for_flush)
    stored = []
    if checked:
        with event_batch(session=session):
            stored = [_append_checked(session, row) for row in checked]
    return stored, (read_together(read)[0] if read is not None else None)


def _sends_appends_together(conn: BaseDatabaseWrapper) -> bool:
    return bool(conn.features.can_return_columns_from_insert) and sends_statements_together(conn)


def _send_appends[T](
    conn: BaseDatabaseWrapper,
    session: AgentSession,
    rows: Sequence[_Row],
    read: PlannedRead[T] | None,
    *,
    wait_for_flush: bool = True,
) -> tuple[list[AgentSessionEvent], T | None]:
    """One message: the session lock, an INSERT per row numbering itself after the one before, then the read's
    statements (which see the new rows); first, without `wait_for_flush` and outside a caller's transaction,
    `synchronous_commit` off for the message's own transaction. Sets `session.updated_at`; SessionNotFound if
    the session is gone."""
    now = timezone.now()
    made = [_new_event(conn, session, None, row) for row in rows]
    statements = hot_path_statements(conn)
    no_flush_wait = not wait_for_flush and not conn.in_atomic_block
    message: list[Statement] = [
        *([(_NO_FLUSH_WAIT, [])] if no_flush_wait else []),
        (statements.lock_session, _lock_params(conn, session, now)),
        *((statements.insert_next_event, insert_params) for _, insert_params in made),
        *(read.statements if read is not None else ()),
    ]
    try:
        with conn.cursor() as cursor:
            send_together(cursor, message)
            if no_flush_wait:
                cursor.nextset()  # past set_config's row
            locked = cursor.rowcount  # of the first statement, the UPDATE
            numbers = []
            for _ in made:
                cursor.nextset()
                numbers.append(cursor.fetchone()[0])
            rowsets = []
            while cursor.nextset():
                rowsets.append(cursor.fetchall())
    except IntegrityError as exc:
        # In autocommit mode the deferred foreign key is checked when the message commits: the session is gone.
        if getattr(exc.__cause__, "sqlstate", None) == _FOREIGN_KEY_VIOLATION:
            raise SessionNotFound(f"session {session.pk} does not exist") from exc
        raise
    if not locked:
        # Inside a caller's transaction the INSERTs went through (the foreign key is checked at commit), but
        # raising rolls them back with it.
        raise SessionNotFound(f"session {session.pk} does not exist")
    session.updated_at = now
    stored = []
    for (event, _), number in zip(made, numbers, strict=True):
        event.sequence_number = number
        stored.append(_stored(conn, event))
    return stored, (read.finish(rowsets) if read is not None else None)


_FOREIGN_KEY_VIOLATION = "23503"
# For the transaction it runs in only (is_local): the message's own, in autocommit mode.
_NO_FLUSH_WAIT = "SELECT set_config('synchronous_commit', 'off', true)"


@dataclass
class _OpenBatch:
    """An `event_batch` in progress on this thread's connection."""

    depth: int  # savepoints open inside the batch's own transaction block
    locked: bool = False  # the session row is locked (and stays locked until the batch commits)
    next_sequence: int | None = None  # known while only this batch has appended since the lock


_local = threading.local()


def _open_batches() -> dict[UUID, _OpenBatch]:
    batches: dict[UUID, _OpenBatch] | None = getattr(_local, "batches", None)
    if batches is None:
        batches = _local.batches = {}
    return batches


@contextmanager
def event_batch(*, session: AgentSession) -> Iterator[None]:
    """Append the events of the block in one transaction that locks the session once.

    The first append locks the session row and inserts after the last sequence number (read by the INSERT
    itself where the database can return it, else by a MAX query first; on PostgreSQL the lock and the INSERT
    go in one round trip); later appends in the block insert at the next numbers directly (no savepoint, lock
    or MAX query each), since no other writer can append while the lock is held. An append made inside a
    savepoint opened within the block takes the ordinary path, and the next one asks the database again, so
    a rolled-back savepoint leaves no gap.
    Nesting a batch for the same session joins the outer one. As with `append_event`, never hold a batch
    open across slow work (a model call): other writers to the session wait for its commit.
    """
    batches = _open_batches()
    if session.pk in batches:
        yield
        return
    with transaction.atomic():
        batches[session.pk] = _OpenBatch(depth=len(connection.savepoint_ids))
        try:
            yield
        finally:
            del batches[session.pk]


def _append_in_batch(batch: _OpenBatch, session: AgentSession, row: _Row) -> AgentSessionEvent:
    if not batch.locked:
        event = _lock_and_insert_next(session, row)
        batch.locked = True
    elif batch.next_sequence is None:
        event = _insert_next(session, row)
    else:
        event = _insert_event(session, batch.next_sequence, row)
    batch.next_sequence = event.sequence_number + 1
    return event


# --- The append hot path ---------------------------------------------------------------------------------
# Every agent-loop iteration appends a few events, and the ORM's query building (compiling the statement,
# resolving lookups, running the save() machinery) costs several times the statement itself. The lock and the
# inserts therefore go through the connection's cursor as plain SQL that both vendors accept (`%s` parameters;
# `selectors.hot_path_statements` makes the statements from the models' `_meta`). Every value is adapted with
# its field's `get_db_prep_save`, exactly as the ORM adapts it, so the stored row is the one
# `objects.create()` would store (tests/sessions_app/test_hot_path_sql.py compares the two on both vendors).
#
# Inside a batch the first append locks the session and inserts after its last event; the INSERT reads that
# number itself (`insert_next_event`, RETURNING it), which is safe because the lock is held: on PostgreSQL each
# statement of a READ COMMITTED transaction takes a new snapshot, so it sees every writer that held the lock
# before. Where the database takes several statements in one message (`sends_statements_together`), the
# UPDATE and that INSERT travel together: one round trip instead of three.


def _new_event(
    conn: BaseDatabaseWrapper,
    session: AgentSession,
    sequence_number: int | None,
    row: _Row,
) -> tuple[AgentSessionEvent, list[Any]]:
    """The event as `AgentSessionEvent.objects.create(...)` would make it, and the INSERT's parameters.

    The instance gets its defaults (id) from the model, its `timestamp` from the field's `pre_save` (auto_now_add)
    unless the row brings its own, and every column value from the field's `get_db_prep_save`, as in the ORM's
    insert. With `sequence_number` None the parameters are those of `insert_next_event` (the session id where
    the number goes).
    """
    event = AgentSessionEvent(
        session=session,
        sequence_number=-1 if sequence_number is None else sequence_number,  # -1: numbered by the INSERT
        event_type=row.event_type,
        duration_ms=row.duration_ms,
        data=row.payload,
    )
    params = [field.get_db_prep_save(field.pre_save(event, True), conn) for field in _EVENT_FIELDS]
    if row.timestamp is not None:
        event.timestamp = row.timestamp
        params[_TIMESTAMP_INDEX] = _EVENT_FIELDS[_TIMESTAMP_INDEX].get_db_prep_save(row.timestamp, conn)
    if sequence_number is None:
        params[_SEQUENCE_INDEX] = session_param(conn, session)
    return event, params


def _stored(conn: BaseDatabaseWrapper, event: AgentSessionEvent) -> AgentSessionEvent:
    """Mark the event as saved (`_state.adding` False), so the append-only guard refuses to save it again."""
    event._state.adding = False
    event._state.db = conn.alias
    return event


def _insert_event(session: AgentSession, sequence_number: int, row: _Row) -> AgentSessionEvent:
    """INSERT one event row at `sequence_number` and return it as saved.

    A duplicate sequence number raises IntegrityError as from the ORM (`append_event` retries on it).
    """
    conn = connections[DEFAULT_DB_ALIAS]
    event, params = _new_event(conn, session, sequence_number, row)
    with conn.cursor() as cursor:
        cursor.execute(hot_path_statements(conn).insert_event, params)
    return _stored(conn, event)


def _insert_next(session: AgentSession, row: _Row) -> AgentSessionEvent:
    """INSERT one event after the session's last one and return it as saved. The caller holds the lock."""
    conn = connections[DEFAULT_DB_ALIAS]
    if not conn.features.can_return_columns_from_insert:
        return _insert_event(session, last_sequence(session=session) + 1, row)
    event, params = _new_event(conn, session, None, row)
    with conn.cursor() as cursor:
        cursor.execute(hot_path_statements(conn).insert_next_event, params)
        event.sequence_number = cursor.fetchone()[0]
    return _stored(conn, event)


def _lock_and_insert_next(session: AgentSession, row: _Row) -> AgentSessionEvent:
    """Lock the session (`_lock_session`) and append after its last event: a batch's first append.

    Sets `session.updated_at`; raises SessionNotFound if the session is gone (nothing is then kept: the
    caller's transaction rolls back).
    """
    conn = connections[DEFAULT_DB_ALIAS]
    if not _sends_appends_together(conn):
        session.updated_at = _lock_session(session)
        return _insert_next(session, row)
    (event,), _ = _send_appends(conn, session, [row], None)
    return event


_EVENT_FIELDS = AgentSessionEvent._meta.concrete_fields  # the insert statements' columns, in this order
_SEQUENCE_INDEX = [field.name for field in _EVENT_FIELDS].index("sequence_number")
_TIMESTAMP_INDEX = [field.name for field in _EVENT_FIELDS].index("timestamp")


def _lock_params(conn: BaseDatabaseWrapper, session: AgentSession, now: datetime) -> list[Any]:
    return [_SESSION_UPDATED_AT.get_db_prep_save(now, conn), session_param(conn, session)]


def _lock_session(session: AgentSession) -> datetime:
    """Bump the session's `updated_at`: the row lock every appender queues on. Returns the new time.

    One UPDATE through the cursor (the statement `filter(pk=…).update(updated_at=now)` sends).
    """
    conn = connections[DEFAULT_DB_ALIAS]
    now = timezone.now()
    with conn.cursor() as cursor:
        cursor.execute(hot_path_statements(conn).lock_session, _lock_params(conn, session, now))
        updated = cursor.rowcount
    if not updated:
        raise SessionNotFound(f"session {session.pk} does not exist")
    return now


_SESSION_FIELDS = AgentSession._meta.concrete_fields  # the columns of `insert_session`, in this order
_SESSION_UPDATED_AT = AgentSession._meta.get_field("updated_at")
assert isinstance(_SESSION_UPDATED_AT, Field)


def end_session(*, session: AgentSession, status: str = SessionStatus.COMPLETED) -> AgentSession:
    """Aggregate usage and cost of every llm_response event into the session row and set its status.

    Stores total_tokens (sum of tokens.total), cached_tokens (sum of tokens.cached) and
    total_cost_cents on the row, and all buckets plus `llm_calls` and `cache_hit_rate`
    (cached / (prompt + cached + cache_write), a fraction in 0..1; 0 without tokens) in
    metadata["usage"]. Recomputed from all events each time, so calling it again is harmless.
    """
    status = _check_status(status)
    if status == SessionStatus.ACTIVE:
        raise ValueError("end_session needs a final status ('completed' or 'error'), not 'active'")
    with transaction.atomic():
        # Lock the row so a concurrent metadata change is not overwritten by our stale copy.
        current_metadata = (
            AgentSession.objects.select_for_update()
            .filter(pk=session.pk)
            .values_list("metadata", flat=True)
            .first()
        )
        if current_metadata is None:
            raise SessionNotFound(f"session {session.pk} does not exist")
        usage = _aggregate_usage(session=session)
        session.total_tokens = usage["total_tokens"]
        session.cached_tokens = usage["cached_tokens"]
        session.total_cost_cents = usage["cost_cents"]
        session.metadata = {**current_metadata, "usage": usage}
        session.status = status
        session.save(
            update_fields=[
                "total_tokens",
                "cached_tokens",
                "total_cost_cents",
                "metadata",
                "status",
                "updated_at",
            ],
        )
    return session


def set_session_status(*, session: AgentSession, status: str) -> AgentSession:
    """Set the session's status (active, completed or error)."""
    session.status = _check_status(status)
    session.save(update_fields=["status", "updated_at"])
    return session


def update_context_start(*, session: AgentSession, sequence: int) -> AgentSession:
    """Make context building start at `sequence` (a checkpoint event's number); earlier events stay stored.

    `sequence` may be any existing event's number or the next one (an empty context).
    """
    next_sequence = last_sequence(session=session) + 1
    if not 0 <= sequence <= next_sequence:
        raise ValueError(f"context start must be between 0 and {next_sequence}, got {sequence}")
    session.context_start_sequence = sequence
    session.save(update_fields=["context_start_sequence", "updated_at"])
    return session


def delete_session(*, session: AgentSession) -> int:
    """Delete the session and all its events; the only path the append-only trigger lets through.

    Returns the number of events deleted.
    """
    with transaction.atomic():
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                # Transaction-local: it ends with this transaction (or savepoint, if rolled back).
                cursor.execute("SET LOCAL agent.allow_event_delete = 'on'")
        _, deleted = AgentSession.objects.filter(pk=session.pk).delete()
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                # Inside a caller's longer transaction, later statements must not inherit the permission.
                cursor.execute("SET LOCAL agent.allow_event_delete = 'off'")
    return deleted.get(AgentSessionEvent._meta.label, 0)


# --- helpers ---------------------------------------------------------------------------------------------


def _is_sequence_collision(exc: IntegrityError) -> bool:
    """True for a duplicate (session_id, sequence_number), False for any other integrity error."""
    cause = exc.__cause__
    sqlstate = getattr(cause, "sqlstate", None)
    if sqlstate is not None:  # PostgreSQL (psycopg)
        return sqlstate == "23505" and "sequence_number" in str(exc)
    message = str(exc)  # SQLite: "UNIQUE constraint failed: agent_session_events.session_id, …"
    return "UNIQUE constraint failed" in message and "sequence_number" in message


def _backoff() -> None:
    time.sleep(random.uniform(*APPEND_BACKOFF_SECONDS))


def _to_json_object(data: Mapping[str, Any]) -> dict[str, Any]:
    """Return `data` as it will read back from the database, or raise InvalidEventData.

    UUIDs, datetimes, dates, Decimals and lazy strings are converted the way DjangoJSONEncoder
    does (to strings), so the event returned by append_event equals the stored one. NaN/Infinity
    and U+0000 are refused here because PostgreSQL's jsonb refuses them while SQLite accepts them.
    """
    if not isinstance(data, Mapping):
        raise InvalidEventData(f"event data must be a JSON object (dict), got {type(data).__name__}")
    try:
        text = json.dumps(data, cls=DjangoJSONEncoder, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidEventData(f"event data is not JSON-serialisable: {exc}") from exc
    if "\\u0000" in text and _NUL_ESCAPE.search(text):  # the regex only where the plain search finds one
        raise InvalidEventData("event data contains a NUL character (U+0000), which PostgreSQL cannot store")
    result: dict[str, Any] = json.loads(text)
    return result


def _check_status(status: str) -> str:
    try:
        return SessionStatus(status).value
    except ValueError:
        raise ValueError(
            f"unknown session status {status!r}; expected one of {', '.join(SessionStatus.values)}"
        ) from None


def _as_number(value: Any) -> float:
    """A token count or cost from event data; anything that is not a number counts as 0."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0
    return value


def _aggregate_usage(*, session: AgentSession) -> dict[str, Any]:
    """Sum token buckets and cost over the session's llm_response events in one query.

    Only `data.tokens` and `data.cost_cents` leave the database (JSON key extraction works on
    SQLite and PostgreSQL alike); the large `raw_response` does not.
    """
    rows = AgentSessionEvent.objects.filter(session=session, event_type=EventType.LLM_RESPONSE).values_list(
        "data__tokens", "data__cost_cents"
    )
    buckets = dict.fromkeys(("prompt", "completion", "cached", "cache_write", "total"), 0)
    cost_cents = 0.0
    llm_calls = 0
    for tokens, cost in rows:
        llm_calls += 1
        cost_cents += _as_number(cost)
        if isinstance(tokens, dict):
            for bucket in buckets:
                buckets[bucket] += int(_as_number(tokens.get(bucket)))
    cache_base = buckets["prompt"] + buckets["cached"] + buckets["cache_write"]
    return {
        "llm_calls": llm_calls,
        "prompt_tokens": buckets["prompt"],
        "completion_tokens": buckets["completion"],
        "cached_tokens": buckets["cached"],
        "cache_write_tokens": buckets["cache_write"],
        "total_tokens": buckets["total"],
        "cost_cents": cost_cents,
        "cache_hit_rate": buckets["cached"] / cache_base if cache_base else 0.0,
    }
