"""Writes to the event store: sessions, their append-only events and their turns (docs/contracts.md §6 (sessions and events)).

Every write goes through the ORM. One function appends events (`append_events`): one `atomic()` block, the
session row locked with `select_for_update()`, the events inserted with `bulk_create` at consecutive numbers.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any
from uuid import UUID

from django.core.serializers.json import DjangoJSONEncoder
from django.db import connection, connections, router, transaction
from django.db.models import F, Func, Q, TextField, Value
from django.utils import timezone

from sessions_app.events import EventData
from sessions_app.models import (
    AgentSession,
    AgentSessionEvent,
    AgentTurn,
    EventType,
    SessionNotFound,
    SessionStatus,
    TurnStatus,
    WorkerHeartbeat,
)
from sessions_app.selectors import (
    FOLLOWERS_WOKEN,
    SessionState,
    StateQuery,
    get_session_for_user,
    last_sequence,
    session_state,
    session_state_query,
)

# A JSON text escape for U+0000 that is not itself an escaped backslash followed by "u0000".
_NUL_ESCAPE = re.compile(r"(?<!\\)(?:\\\\)*\\u0000")
# The PostgreSQL channel followers of a session's stream LISTEN on; the payload is the session id.
EVENTS_CHANNEL = "agent_events"


class InvalidEventData(ValueError):
    """Event data that cannot be stored as a JSON object identically on SQLite and PostgreSQL."""


class TurnInProgress(RuntimeError):
    """Another turn is open in this session (409)."""


class TurnTakenOver(RuntimeError):
    """The turn has ended, or another worker holds it now (this one was presumed dead): write nothing."""


def create_session(*, user_id: UUID, metadata: dict[str, Any] | None = None) -> AgentSession:
    """Create an active session for the user, reading context from sequence 0."""
    return AgentSession.objects.create(
        user_id=user_id, metadata=_to_json_object(metadata or {}), status=SessionStatus.ACTIVE
    )


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


@dataclass(frozen=True, init=False)
class NewEvent:
    """An event for `append_events`, stamped with the moment it is stored. `data` is the type's model
    (`sessions_app.events`), stored as its `to_data()`; a plain mapping is stored as given."""

    event_type: str
    data: Mapping[str, Any]
    duration_ms: int | None = None

    def __init__(
        self, event_type: str, data: Mapping[str, Any] | EventData, duration_ms: int | None = None
    ) -> None:
        if isinstance(data, EventData):
            if data.event_type != event_type:
                raise ValueError(
                    f"{type(data).__name__} is the data of {data.event_type}, not of {event_type}"
                )
            data = data.to_data()
        object.__setattr__(self, "event_type", event_type)
        object.__setattr__(self, "data", data)
        object.__setattr__(self, "duration_ms", duration_ms)


def append_event(
    *,
    session: AgentSession,
    event_type: str,
    data: Mapping[str, Any] | EventData,
    duration_ms: int | None = None,
) -> AgentSessionEvent:
    """Append one event at the next sequence number (0, 1, 2, … per session); see `append_events`."""
    return append_events(session=session, events=[NewEvent(event_type, data, duration_ms)])[0]


# What a writer appends once it holds the session's lock and knows its state (`append_events(then=…)`): the
# events about to be stored before them (numbered, unsaved) → the events to store after them.
ThenAppend = Callable[[SessionState, Sequence[AgentSessionEvent]], Sequence[NewEvent]]


def append_events(
    *,
    session: AgentSession,
    events: Sequence[NewEvent],
    holder: str | None = None,
    then: ThenAppend | None = None,
    read: StateQuery | None = None,
) -> list[AgentSessionEvent]:
    """Append the events at consecutive numbers after the session's last one: all of them or none.

    One transaction: the session row is locked (an UPDATE of its `updated_at`; SQLite serialises writers with
    its IMMEDIATE transactions), the last number read from the unique (session, sequence_number) index and the
    events inserted with one `bulk_create`. Writers to one session queue on the lock, so the numbers are
    contiguous with no gap and no duplicate; writers to different sessions never wait for each other. Inside a
    caller's transaction the block is the caller's (no savepoint of its own) and the lock lasts until it
    commits: never hold one across a model call.

    `holder` (a turn's worker): write only if the session's `lease_holder` still names it, checked by the
    statement that takes the lock, so a worker presumed dead cannot write once another has claimed the turn
    (`claim_turn` sets the holder under the same lock); TurnTakenOver, and nothing written, otherwise.

    `then` (a writer whose last event depends on the store, e.g. the loop's next `llm_request`, built from the
    context): called under the lock with the session's state (`selectors.session_state`: the last number, the
    context start and what else `read`, a `selectors.session_state_query` of the caller's, asks of the session's
    row, all in the one query that reads the last number) and the events about to be stored, numbered; the
    events it returns are stored after them, in the same INSERT.

    Followers of the session are woken when the transaction commits (on PostgreSQL by the INSERT itself:
    `notify_session_changed`). Validates every event before writing any (ValueError, InvalidEventData);
    SessionNotFound if the session is gone.
    """
    rows = [_checked(each) for each in events]
    if not rows and then is None:
        return []
    stored: list[AgentSessionEvent] | None = None
    # savepoint=False: nothing is written before the lock, and a refusal leaves the block normally (raised
    # below), so a caller's transaction is only marked for rollback by a database error.
    with transaction.atomic(savepoint=False):
        if _lock_session(session, holder=holder):
            stored = _insert_events(session, rows, then=then, read=read)
    if stored is None:
        if holder is not None:
            raise TurnTakenOver(f"session {session.pk} is no longer held by {holder}, or is gone")
        raise SessionNotFound(f"session {session.pk} does not exist")
    return stored


def _insert_events(
    session: AgentSession,
    rows: Sequence[_Row],
    *,
    then: ThenAppend | None = None,
    read: StateQuery | None = None,
) -> list[AgentSessionEvent]:
    """Under the session's lock: the rows (and what `then` adds) at the numbers after its last one."""
    if then is None and read is None:
        first = last_sequence(session=session) + 1
        state = None
    else:
        state = session_state(query=read if read is not None else session_state_query(session=session))
        if state is None:  # cannot happen: the lock was just taken on the row
            raise SessionNotFound(f"session {session.pk} does not exist")
        first = state.last_sequence + 1
    made = _numbered(session, rows, first)
    if then is not None and state is not None:
        made += _numbered(session, [_checked(each) for each in then(state, list(made))], first + len(made))
    if not made:
        return []
    stored = AgentSessionEvent.objects.bulk_create(made)  # marks them saved: no second save()
    if state is None or not state.followers_woken:
        notify_session_changed(session_id=session.pk)
    return stored


def _numbered(session: AgentSession, rows: Sequence[_Row], first: int) -> list[AgentSessionEvent]:
    return [
        AgentSessionEvent(
            session=session,
            sequence_number=first + index,
            event_type=row.event_type,
            duration_ms=row.duration_ms,
            data=row.data,
        )
        for index, row in enumerate(rows)
    ]


def _lock_session(session: AgentSession, *, holder: str | None = None, **changes: Any) -> bool:
    """Lock the session's row for the rest of the transaction, bumping its `updated_at` (and setting
    `changes`); with `holder`, only while its `lease_holder` is that. False if no row matched (the session is
    gone, or held by another worker)."""
    now = timezone.now()
    held = {"lease_holder": holder} if holder is not None else {}
    if not AgentSession.objects.filter(pk=session.pk, **held).update(updated_at=now, **changes):
        return False
    session.updated_at = now
    for name, value in changes.items():
        setattr(session, name, value)
    return True


def notify_session_changed(*, session_id: UUID) -> None:
    """Wake the session's followers on every web process when the current transaction commits.

    PostgreSQL: `pg_notify` (delivered at commit, dropped on rollback; the framework has no API for it).
    SQLite has no push: followers poll there.
    """
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_notify(%s, %s)", [EVENTS_CHANNEL, str(session_id)])


def waking_followers(query: StateQuery, *, session: AgentSession) -> StateQuery:
    """`query` (a `selectors.session_state_query`, for `append_events(read=…)`) that also wakes the session's
    followers when the transaction commits: on PostgreSQL the state query calls `pg_notify` itself, so the append
    sends no statement of its own for it (one round trip less). For a writer that always stores after reading the
    state (the loop's next request): the notification is queued with the read and, like any, delivered at
    commit and dropped on rollback. SQLite has no push: `query` as it is."""
    if connection.vendor != "postgresql":
        return query
    notify = Func(
        Value(EVENTS_CHANNEL), Value(str(session.pk)), function="pg_notify", output_field=TextField()
    )
    return query.annotate(**{FOLLOWERS_WOKEN: notify})


@dataclass(frozen=True)
class _Row:
    event_type: str
    data: dict[str, Any]
    duration_ms: int | None


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
    return _Row(event_type, _to_json_object(event.data), event.duration_ms)


def end_session(*, session: AgentSession, status: str = SessionStatus.COMPLETED) -> AgentSession:
    """Aggregate usage and cost of every llm_response event into the session row and set its status; the
    session has no running turn any more (`lease_holder` cleared).

    Stores total_tokens (sum of tokens.total), cached_tokens (sum of tokens.cached) and
    total_cost_cents on the row, and all buckets plus `llm_calls` and `cache_hit_rate`
    (cached / (prompt + cached + cache_write), a fraction in 0..1; 0 without tokens) in
    metadata["usage"] (`_fold_usage`: incremental, each response counted once).
    """
    status = _check_status(status)
    if status == SessionStatus.ACTIVE:
        raise ValueError("end_session needs a final status ('completed' or 'error'), not 'active'")
    with transaction.atomic(savepoint=False):
        _fold_usage(session)
        session.status = status
        session.lease_holder = None  # an ended session has no running turn
        session.save(update_fields=[*_USAGE_FIELDS, "status", "lease_holder", "updated_at"])
    return session


def record_usage(*, session: AgentSession) -> AgentSession:
    """Fold the llm_responses written since the last fold into the session's usage totals, leaving its status
    and a running turn's lease alone (work outside a turn that called models: the week chain)."""
    with transaction.atomic(savepoint=False):
        _fold_usage(session)
        session.save(update_fields=[*_USAGE_FIELDS, "updated_at"])
    return session


_USAGE_FIELDS = ("total_tokens", "cached_tokens", "total_cost_cents", "metadata")


def _fold_usage(session: AgentSession) -> None:
    """Under the session's row lock, add the llm_responses numbered above metadata["usage_counted_through"] to
    metadata["usage"] and the row's totals (in memory; the caller saves). A session's history grows without
    bound (summing all of it at every turn's end cost a quarter of a second at 300 turns); the position moves
    with the totals, so folding again adds nothing, and a session whose usage predates the position is summed
    in full once. SessionNotFound if the session is gone."""
    # Lock the row so a concurrent metadata change is not overwritten by our stale copy.
    current_metadata = (
        AgentSession.objects.select_for_update()
        .filter(pk=session.pk)
        .values_list("metadata", flat=True)
        .first()
    )
    if current_metadata is None:
        raise SessionNotFound(f"session {session.pk} does not exist")
    counted_through = current_metadata.get(USAGE_COUNTED_THROUGH)
    if not isinstance(counted_through, int) or not isinstance(current_metadata.get("usage"), dict):
        counted_through, previous = -1, {}
    else:
        previous = current_metadata["usage"]
    usage, counted_through = _aggregate_usage(
        session=session, after_sequence=counted_through, previous=previous
    )
    session.total_tokens = usage["total_tokens"]
    session.cached_tokens = usage["cached_tokens"]
    session.total_cost_cents = usage["cost_cents"]
    session.metadata = {**current_metadata, "usage": usage, USAGE_COUNTED_THROUGH: counted_through}


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
    """Delete the session, its turns and all its events; the only path the append-only guards let through.

    On PostgreSQL through `agent_delete_session` (migration 0007), a SECURITY DEFINER function of the
    migration role: the application role may not delete events itself. It deletes only a session the caller
    can see (the outer SELECT runs under the caller's row-level security) and its own check repeats that.
    Returns the number of events deleted (0 when the session is gone or not the caller's).
    """
    # The staff connection for the admin's delete (sessions_app/staff.py), else the application's.
    using = router.db_for_write(AgentSession)
    if connections[using].vendor == "postgresql":
        with transaction.atomic(using=using), connections[using].cursor() as cursor:
            cursor.execute(
                "SELECT agent_delete_session(s.id) FROM agent_sessions s WHERE s.id = %s", [session.pk]
            )
            row = cursor.fetchone()
        return int(row[0]) if row is not None and row[0] is not None else 0
    with transaction.atomic(using=using):
        _, deleted = AgentSession.objects.filter(pk=session.pk).delete()
    return deleted.get(AgentSessionEvent._meta.label, 0)


def delete_idle_session(
    *, session: AgentSession, on_delete: Callable[[list[UUID]], None] | None = None
) -> int:
    """Delete the session (its events and turns, `delete_session`) unless one of its turns is open:
    TurnInProgress then, checked under the session's lock, which admitting a turn also takes (`open_turn`).

    In the same transaction, before the delete, `on_delete` gets the ids of the session's turns, for what an
    app above keeps about them (the turns' task rows). The session's followers are woken at commit
    (`notify_session_changed`): their stream ends saying the session was deleted. Returns the number of events
    deleted.
    """
    with transaction.atomic():
        AgentSession.objects.select_for_update().filter(pk=session.pk).exists()
        if session.turns.filter(finished_at__isnull=True).exists():
            raise TurnInProgress(f"a turn is running in session {session.pk}")
        if on_delete is not None:
            on_delete(list(session.turns.values_list("pk", flat=True)))
        deleted = delete_session(session=session)
        notify_session_changed(session_id=session.pk)
        return deleted


# --- Turns ---------------------------------------------------------------------------------------------------


def open_turn(
    *,
    session: AgentSession,
    model: str,
    events: Sequence[NewEvent],
    result: Mapping[str, Any] | None = None,
) -> tuple[AgentTurn, list[AgentSessionEvent]]:
    """Admit a turn: its first events (the `user_message`, …) and the turn row, queued, in one transaction
    (the caller's, if it has one: no savepoint), with `result` as the turn's initial result.

    The session becomes `active` (in the statement that locks it, once). TurnInProgress while another turn of
    the session is open (the unique constraint on open turns settles a race between two requests);
    SessionNotFound if the session is gone. Nothing is written in either case.
    """
    rows = [_checked(each) for each in events]
    if not rows:
        raise ValueError("a turn starts with at least one event")
    found = busy = False
    with transaction.atomic(savepoint=False):
        # Only the status changes with the lock, and a session with an open turn is `active` already: a refusal
        # below leaves nothing behind even when this block is the whole transaction. The running turn's
        # `lease_holder` is its worker's; the turn's end clears it (`end_session`).
        found = _lock_session(session, status=SessionStatus.ACTIVE)
        busy = found and AgentTurn.objects.filter(session=session, finished_at__isnull=True).exists()
        if found and not busy:
            stored = _insert_events(session, rows)
            turn = AgentTurn.objects.create(
                session=session,
                user_id=session.user_id,
                model=model,
                start_sequence=stored[0].sequence_number,
                enqueued_at=timezone.now(),
                result=dict(result or {}),
            )
    if not found:
        raise SessionNotFound(f"session {session.pk} does not exist")
    if busy:
        raise TurnInProgress(f"a turn is already running in session {session.pk}")
    return turn, stored


def claim_turn(*, turn_id: UUID, worker: str, lease: timedelta, trace_id: str = "") -> AgentTurn | None:
    """Take the turn for `worker` with a lease: if it is queued, or running under a lapsed lease (its worker
    died). One conditional UPDATE, so of two workers racing for a turn exactly one wins. Counts the attempt.
    None when the turn is finished, gone or leased by a live worker.

    In the same transaction the session's `lease_holder` becomes `worker`, under the session's lock: a write
    of the previous worker either committed before (and the new worker reads it) or waits for this claim and
    is refused (`append_events(holder=…)`). Under row-level security that update is the session's user's work:
    the caller acts for `turn.user_id` (`selectors.turn_owner`). `trace_id`, when tracing is on, is the trace
    of this attempt (the turn keeps its latest attempt's)."""
    now = timezone.now()
    traced = {"trace_id": trace_id} if trace_id else {}
    claimable = Q(pk=turn_id, finished_at__isnull=True) & (
        Q(lease_expires_at__isnull=True) | Q(lease_expires_at__lt=now)
    )
    with transaction.atomic():
        taken = AgentTurn.objects.filter(claimable).update(
            status=TurnStatus.RUNNING,
            worker=worker,
            lease_expires_at=now + lease,
            attempts=F("attempts") + 1,
            started_at=now,
            **traced,
        )
        if not taken:
            return None
        turn = AgentTurn.objects.select_related("session").get(pk=turn_id)
        AgentSession.objects.filter(pk=turn.session_id).update(lease_holder=worker)
        turn.session.lease_holder = worker
    return turn


def renew_lease(*, turn: AgentTurn, lease: timedelta) -> bool:
    """Extend the lease of a turn this worker still holds; False if another worker took it over (or it ended).
    The worker's lease keeper calls it every third of a lease; the turn's writes check the holder instead
    (`append_events(holder=…)`)."""
    until = timezone.now() + lease
    renewed = AgentTurn.objects.filter(pk=turn.pk, worker=turn.worker, finished_at__isnull=True).update(
        lease_expires_at=until
    )
    if renewed:
        turn.lease_expires_at = until
    return bool(renewed)


def finish_turn(
    *, turn: AgentTurn, status: str, events: Sequence[NewEvent] = (), result: Mapping[str, Any] | None = None
) -> list[AgentSessionEvent]:
    """End the turn: its last events, the session's usage totals and status, and the turn row, in one
    transaction, so a follower that sees the last event also sees that the turn has ended. TurnTakenOver (and
    nothing written) if the turn has ended already or another worker holds it now. Returns the stored events."""
    session_status = SessionStatus.COMPLETED if status == TurnStatus.COMPLETED else SessionStatus.ERROR
    # No savepoint inside a caller's transaction (the loop's tool transaction): a refusal leaves the block before
    # anything is written and is raised below.
    with transaction.atomic(savepoint=False):
        holder = (
            AgentTurn.objects.select_for_update()
            .filter(pk=turn.pk)
            .values_list("worker", "finished_at")
            .first()
        )
        ours = holder is not None and holder[1] is None and holder[0] == turn.worker
        if ours:
            stored = _finish_locked(turn, status, session_status, events, result)
    if not ours:
        raise TurnTakenOver(f"turn {turn.pk} has ended or is held by another worker")
    return stored


def end_stranded_turn(
    *, turn_id: UUID, waiting_before: Any, events: Sequence[NewEvent], result: Mapping[str, Any]
) -> AgentTurn | None:
    """End in `error`, with `events`, a turn that waits for a worker since before `waiting_before`: queued and
    enqueued then, or running under a lease that lapsed then (its worker died). The turn is ended under its row
    lock, so of this and a worker's `claim_turn` exactly one wins, and a worker never runs it afterwards (a claim
    needs an open turn). None (nothing written) when a worker has it, or it has ended. The caller acts for the
    turn's user (its events are tenant data)."""
    with transaction.atomic():
        turn = (
            AgentTurn.objects.select_for_update()
            .select_related("session")
            .filter(pk=turn_id, finished_at__isnull=True)
            .filter(
                Q(status=TurnStatus.QUEUED, enqueued_at__lt=waiting_before)
                | Q(status=TurnStatus.RUNNING, lease_expires_at__lt=waiting_before)
            )
            .first()
        )
        if turn is None:
            return None
        _finish_locked(turn, TurnStatus.ERROR, SessionStatus.ERROR, events, result)
    return turn


def _finish_locked(
    turn: AgentTurn,
    status: str,
    session_status: str,
    events: Sequence[NewEvent],
    result: Mapping[str, Any] | None,
) -> list[AgentSessionEvent]:
    """`finish_turn` once the turn's row is locked and known to be this worker's."""
    stored = append_events(session=turn.session, events=events)  # wakes the followers if there are any
    end_session(session=turn.session, status=session_status)
    turn.status = status
    turn.end_sequence = stored[-1].sequence_number if stored else last_sequence(session=turn.session)
    turn.finished_at = timezone.now()
    turn.lease_expires_at = None
    turn.result = {**turn.result, **(result or {})}
    turn.save(update_fields=["status", "end_sequence", "finished_at", "lease_expires_at", "result"])
    if not stored:
        notify_session_changed(session_id=turn.session_id)
    return stored


# --- Workers -----------------------------------------------------------------------------------------------

# A killed worker's row is removed this long after its last beat (by any other worker's beat).
STALE_WORKER_ROWS = timedelta(hours=1)


def record_worker_heartbeat(*, name: str, threads: int, started_at: Any) -> None:
    """The worker process `name` is alive now (its row created on the first beat); stale rows of killed
    workers are removed, in the same transaction.

    `seen_at` is read once the transaction has begun: on SQLite that BEGIN IMMEDIATE waits for the write lock
    (seconds behind a burst of turns' writes), and a beat stamped before that wait landed already stale, so a
    busy worker counted as dead (`/healthz` 503, turns ended for want of a worker)."""
    with transaction.atomic():
        now = timezone.now()
        WorkerHeartbeat.objects.update_or_create(
            name=name,
            defaults={"seen_at": now},
            create_defaults={"threads": threads, "started_at": started_at, "seen_at": now},
        )
        WorkerHeartbeat.objects.filter(seen_at__lt=now - STALE_WORKER_ROWS).delete()


def forget_worker(*, name: str) -> None:
    """The worker process `name` stopped cleanly: it no longer counts as alive."""
    WorkerHeartbeat.objects.filter(name=name).delete()


# --- helpers ---------------------------------------------------------------------------------------------


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


# metadata key: the sequence number of the last llm_response summed into metadata["usage"] (bookkeeping,
# not shown by the API).
USAGE_COUNTED_THROUGH = "usage_counted_through"


def _aggregate_usage(
    *, session: AgentSession, after_sequence: int, previous: Mapping[str, Any]
) -> tuple[dict[str, Any], int]:
    """`previous` plus the token buckets and cost of the session's llm_response events numbered above
    `after_sequence`, in one query; with the number of the last one summed.

    Only `data.tokens` and `data.cost_cents` leave the database (JSON key extraction works on
    SQLite and PostgreSQL alike); the large `raw_response` does not.
    """
    rows = AgentSessionEvent.objects.filter(
        session=session, event_type=EventType.LLM_RESPONSE, sequence_number__gt=after_sequence
    ).values_list("sequence_number", "data__tokens", "data__cost_cents")
    buckets = {
        bucket: int(_as_number(previous.get(f"{bucket}_tokens")))
        for bucket in ("prompt", "completion", "cached", "cache_write", "total")
    }
    cost_cents = float(_as_number(previous.get("cost_cents")))
    llm_calls = int(_as_number(previous.get("llm_calls")))
    last = after_sequence
    for sequence, tokens, cost in rows:
        last = max(last, sequence)
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
    }, last
