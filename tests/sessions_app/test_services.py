"""Event-store writes: sessions, append_event, end_session aggregation, status, checkpoints, deletion."""

from __future__ import annotations

import datetime as dt
import uuid
from decimal import Decimal
from typing import Any

import psycopg
import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from sessions_app.models import AgentSession, AgentSessionEvent, EventType, SessionNotFound, SessionStatus
from sessions_app.selectors import session_state_query
from sessions_app.services import (
    EVENTS_CHANNEL,
    InvalidEventData,
    NewEvent,
    TurnInProgress,
    append_event,
    append_events,
    create_session,
    delete_idle_session,
    delete_session,
    end_session,
    finish_turn,
    get_or_create_session,
    open_turn,
    set_session_status,
    update_context_start,
    waking_followers,
)
from tests.sessions_app.factories import AgentSessionEventFactory, AgentSessionFactory

pytestmark = pytest.mark.django_db


def _set_created_at(session: AgentSession, minutes_ago: int) -> None:
    """Give sessions distinct creation times so "most recent" does not depend on clock resolution."""
    created = dt.datetime(2026, 1, 1, tzinfo=dt.UTC) - dt.timedelta(minutes=minutes_ago)
    AgentSession.objects.filter(pk=session.pk).update(created_at=created)


# --- create_session / get_or_create_session ------------------------------------------------------------


def test_create_session_is_active_and_reads_context_from_zero() -> None:
    """A new session is active, starts its context at sequence 0 and keeps the given metadata."""
    user_id = uuid.uuid4()
    session = create_session(user_id=user_id, metadata={"title": "Leg day"})
    session.refresh_from_db()
    assert session.user_id == user_id
    assert session.status == SessionStatus.ACTIVE
    assert session.context_start_sequence == 0
    assert (session.total_tokens, session.cached_tokens, session.total_cost_cents) == (0, 0, 0.0)
    assert session.metadata == {"title": "Leg day"}


def test_get_or_create_session_returns_the_users_own_session_by_id() -> None:
    """With a session id the user owns, that session is returned whatever its status."""
    session = AgentSessionFactory.create(status=SessionStatus.COMPLETED)
    assert get_or_create_session(user_id=session.user_id, session_id=session.id) == session


@pytest.mark.parametrize("whose", ["unknown", "other_user"])
def test_get_or_create_session_refuses_unknown_and_foreign_ids_alike(whose: str) -> None:
    """An unknown session id and another user's session id both raise SessionNotFound."""
    foreign = AgentSessionFactory.create()
    session_id = uuid.uuid4() if whose == "unknown" else foreign.id
    with pytest.raises(SessionNotFound):
        get_or_create_session(user_id=uuid.uuid4(), session_id=session_id)
    assert AgentSession.objects.count() == 1


def test_get_or_create_session_without_id_returns_most_recent_active_session() -> None:
    """Without an id, the user's newest active session wins over older active and newer finished ones."""
    user_id = uuid.uuid4()
    older_active = AgentSessionFactory.create(user_id=user_id)
    newer_active = AgentSessionFactory.create(user_id=user_id)
    newest_completed = AgentSessionFactory.create(user_id=user_id, status=SessionStatus.COMPLETED)
    other_users_newest = AgentSessionFactory.create()
    _set_created_at(older_active, minutes_ago=30)
    _set_created_at(newer_active, minutes_ago=20)
    _set_created_at(newest_completed, minutes_ago=10)
    _set_created_at(other_users_newest, minutes_ago=0)

    assert get_or_create_session(user_id=user_id) == newer_active
    assert AgentSession.objects.count() == 4


def test_get_or_create_session_without_id_creates_one_when_none_is_active() -> None:
    """A user whose sessions are all finished gets a new active session."""
    user_id = uuid.uuid4()
    finished = AgentSessionFactory.create(user_id=user_id, status=SessionStatus.ERROR)
    AgentSessionFactory.create()  # another user's active session is not reused

    session = get_or_create_session(user_id=user_id)

    assert session.pk != finished.pk
    assert session.user_id == user_id
    assert session.status == SessionStatus.ACTIVE
    assert AgentSession.objects.filter(user_id=user_id).count() == 2


# --- append_event --------------------------------------------------------------------------------------


def test_append_event_numbers_events_from_zero_per_session() -> None:
    """Sequence numbers start at 0 and count up independently in each session."""
    first, second = AgentSessionFactory.create(), AgentSessionFactory.create()
    numbers = [
        append_event(session=first, event_type=EventType.USER_MESSAGE, data={"message": "a"}).sequence_number,
        append_event(session=first, event_type=EventType.ERROR, data={"message": "b"}).sequence_number,
        append_event(
            session=second, event_type=EventType.USER_MESSAGE, data={"message": "c"}
        ).sequence_number,
        append_event(session=first, event_type=EventType.KNOWLEDGE, data={"source": "x"}).sequence_number,
    ]
    assert numbers == [0, 1, 0, 2]


def test_append_event_stores_type_data_and_duration() -> None:
    """The stored event has the given type, data and duration."""
    session = AgentSessionFactory.create()
    event = append_event(
        session=session, event_type="tool_call", data={"tool_name": "idle", "arguments": {}}, duration_ms=42
    )
    stored = AgentSessionEvent.objects.get(pk=event.pk)
    assert (stored.event_type, stored.duration_ms) == ("tool_call", 42)
    assert stored.data == {"tool_name": "idle", "arguments": {}}
    assert stored.session_id == session.pk


def test_append_event_bumps_the_session_updated_at() -> None:
    """Appending moves the session's updated_at forward, in the database and on the instance."""
    session = AgentSessionFactory.create()
    old = dt.datetime(2020, 1, 1, tzinfo=dt.UTC)
    AgentSession.objects.filter(pk=session.pk).update(updated_at=old)
    append_event(session=session, event_type=EventType.USER_MESSAGE, data={"message": "hi"})
    assert AgentSession.objects.get(pk=session.pk).updated_at > old
    assert session.updated_at == AgentSession.objects.get(pk=session.pk).updated_at


def test_append_event_rejects_unknown_event_type() -> None:
    """An event type outside EventType is a ValueError and nothing is stored."""
    session = AgentSessionFactory.create()
    with pytest.raises(ValueError, match="unknown event type 'action'"):
        append_event(session=session, event_type="action", data={})
    assert not AgentSessionEvent.objects.exists()


def test_append_event_rejects_negative_duration() -> None:
    """A negative duration_ms is a ValueError."""
    with pytest.raises(ValueError, match="duration_ms"):
        append_event(
            session=AgentSessionFactory.create(), event_type=EventType.ERROR, data={}, duration_ms=-1
        )


def test_append_event_converts_uuids_dates_and_decimals_to_their_stored_form() -> None:
    """UUIDs, datetimes and Decimals become strings up front, so the returned event equals the stored one."""
    session = AgentSessionFactory.create()
    workout_id = uuid.uuid4()
    data = {
        "workout_id": workout_id,
        "at": dt.datetime(2026, 3, 1, 7, 30, tzinfo=dt.UTC),
        "weight": Decimal("62.5"),
        "sets": (1, 2),
    }
    event = append_event(session=session, event_type=EventType.TOOL_RESULT, data=data)
    expected = {"workout_id": str(workout_id), "at": "2026-03-01T07:30:00Z", "weight": "62.5", "sets": [1, 2]}
    assert event.data == expected
    assert AgentSessionEvent.objects.get(pk=event.pk).data == expected


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"tags": {"a"}}, "not JSON-serialisable"),
        ({"score": float("nan")}, "not JSON-serialisable"),
        ({"text": "a\x00b"}, "NUL character"),
        (["not", "a", "dict"], "must be a JSON object"),
    ],
    ids=["set", "nan", "nul", "list"],
)
def test_append_event_rejects_data_the_databases_cannot_store_alike(data: Any, message: str) -> None:
    """Data that is not a JSON object storable on both SQLite and PostgreSQL is refused with a clear error."""
    session = AgentSessionFactory.create()
    with pytest.raises(InvalidEventData, match=message):
        append_event(session=session, event_type=EventType.TOOL_RESULT, data=data)
    assert not AgentSessionEvent.objects.exists()


def test_append_event_accepts_a_literal_backslash_u0000_text() -> None:
    """The six characters \\u0000 in a string are ordinary text, not a NUL, and are stored as given."""
    event = append_event(
        session=AgentSessionFactory.create(), event_type=EventType.ERROR, data={"message": "\\u0000"}
    )
    assert AgentSessionEvent.objects.get(pk=event.pk).data == {"message": "\\u0000"}


def test_append_event_to_a_deleted_session_raises_session_not_found() -> None:
    """Appending to a session that no longer exists raises SessionNotFound."""
    session = AgentSessionFactory.create()
    delete_session(session=session)
    with pytest.raises(SessionNotFound):
        append_event(session=session, event_type=EventType.ERROR, data={})


def _numbers(session: AgentSession) -> list[int]:
    return list(
        AgentSessionEvent.objects.filter(session=session)
        .order_by("sequence_number")
        .values_list("sequence_number", flat=True)
    )


def test_a_rolled_back_savepoint_inside_a_transaction_leaves_no_gap() -> None:
    """An append in a savepoint that rolls back does not use up a number for the batch's later appends."""
    session = AgentSessionFactory.create()

    with transaction.atomic():
        append_event(session=session, event_type=EventType.USER_MESSAGE, data={"message": "hi"})
        with pytest.raises(RuntimeError), transaction.atomic():
            append_event(session=session, event_type=EventType.KNOWLEDGE, data={"source": "lost"})
            raise RuntimeError("rolled back")
        last = append_event(session=session, event_type=EventType.LLM_REQUEST, data={})

    assert last.sequence_number == 1
    assert _numbers(session) == [0, 1]


def test_event_factory_assigns_the_next_sequence_number() -> None:
    """The test factory appends through append_event, so its events are numbered 0, 1, 2."""
    session = AgentSessionFactory.create()
    events = AgentSessionEventFactory.create_batch(3, session=session, event_type=EventType.TOOL_CALL)
    assert [event.sequence_number for event in events] == [0, 1, 2]


# --- end_session ---------------------------------------------------------------------------------------


def _llm_response(session: AgentSession, tokens: dict[str, int], cost_cents: float) -> None:
    append_event(
        session=session,
        event_type=EventType.LLM_RESPONSE,
        data={"raw_response": {"content": "x" * 200}, "tokens": tokens, "cost_cents": cost_cents},
    )


def test_end_session_aggregates_usage_of_llm_responses_only() -> None:
    """Totals, cache hit rate and call count come from llm_response events; other events are ignored."""
    session = AgentSessionFactory.create()
    append_event(session=session, event_type=EventType.USER_MESSAGE, data={"message": "hi"})
    _llm_response(
        session, {"prompt": 1000, "completion": 200, "cached": 0, "cache_write": 3000, "total": 4200}, 1.5
    )
    append_event(  # not an llm_response: its numbers must not count
        session=session,
        event_type=EventType.TOOL_RESULT,
        data={"tokens": {"prompt": 9, "cached": 9, "total": 9}, "cost_cents": 9.0},
    )
    _llm_response(
        session, {"prompt": 50, "completion": 100, "cached": 3000, "cache_write": 0, "total": 3150}, 0.25
    )
    _llm_response(
        session, {"prompt": 150, "completion": 300, "cached": 3000, "cache_write": 200, "total": 3650}, 0.5
    )

    ended = end_session(session=session)

    ended.refresh_from_db()
    assert ended.status == SessionStatus.COMPLETED
    assert ended.total_tokens == 11000
    assert ended.cached_tokens == 6000
    assert ended.total_cost_cents == pytest.approx(2.25)
    assert ended.metadata["usage"] == {
        "llm_calls": 3,
        "prompt_tokens": 1200,
        "completion_tokens": 600,
        "cached_tokens": 6000,
        "cache_write_tokens": 3200,
        "total_tokens": 11000,
        "cost_cents": pytest.approx(2.25),
        "cache_hit_rate": pytest.approx(6000 / 10400),  # cached / (prompt + cached + cache_write)
    }


def test_end_session_without_llm_calls_stores_zeros() -> None:
    """A session without llm_response events ends with zero usage and a 0 cache hit rate."""
    session = AgentSessionFactory.create()
    append_event(session=session, event_type=EventType.USER_MESSAGE, data={"message": "hi"})
    ended = end_session(session=session, status=SessionStatus.ERROR)
    ended.refresh_from_db()
    assert ended.status == SessionStatus.ERROR
    assert (ended.total_tokens, ended.cached_tokens, ended.total_cost_cents) == (0, 0, 0.0)
    assert ended.metadata["usage"]["llm_calls"] == 0
    assert ended.metadata["usage"]["cache_hit_rate"] == 0.0


def test_end_session_counts_a_response_without_usage_as_zero_tokens() -> None:
    """An llm_response without tokens or cost counts as a call with no usage instead of failing."""
    session = AgentSessionFactory.create()
    append_event(session=session, event_type=EventType.LLM_RESPONSE, data={"raw_response": {}})
    _llm_response(session, {"prompt": 10, "completion": 5, "cached": 0, "cache_write": 0, "total": 15}, 0.1)
    usage = end_session(session=session).metadata["usage"]
    assert (usage["llm_calls"], usage["total_tokens"], usage["cost_cents"]) == (2, 15, pytest.approx(0.1))


def test_end_session_keeps_metadata_written_by_someone_else() -> None:
    """Usage is merged into the stored metadata, not into a stale in-memory copy."""
    session = AgentSessionFactory.create(metadata={"title": "old"})
    AgentSession.objects.filter(pk=session.pk).update(metadata={"title": "new", "client": "ios"})
    end_session(session=session)
    stored = AgentSession.objects.get(pk=session.pk).metadata
    assert stored["title"] == "new"
    assert stored["client"] == "ios"
    assert stored["usage"]["llm_calls"] == 0


@pytest.mark.parametrize("status", [SessionStatus.ACTIVE, "finished"])
def test_end_session_rejects_a_status_that_does_not_end_it(status: str) -> None:
    """end_session accepts only a final status (completed or error)."""
    session = AgentSessionFactory.create()
    with pytest.raises(ValueError, match="status"):
        end_session(session=session, status=status)
    assert AgentSession.objects.get(pk=session.pk).status == SessionStatus.ACTIVE


# --- status, context start, deletion -------------------------------------------------------------------


def test_set_session_status_persists_a_valid_status_and_rejects_others() -> None:
    """set_session_status stores one of active/completed/error and refuses anything else."""
    session = AgentSessionFactory.create()
    set_session_status(session=session, status=SessionStatus.ERROR)
    assert AgentSession.objects.get(pk=session.pk).status == SessionStatus.ERROR
    with pytest.raises(ValueError, match="unknown session status"):
        set_session_status(session=session, status="paused")
    assert AgentSession.objects.get(pk=session.pk).status == SessionStatus.ERROR


def test_update_context_start_accepts_an_existing_or_the_next_sequence() -> None:
    """The context start can point at any stored event or at the next sequence, and is persisted."""
    session = AgentSessionFactory.create()
    AgentSessionEventFactory.create_batch(3, session=session)
    update_context_start(session=session, sequence=2)
    assert AgentSession.objects.get(pk=session.pk).context_start_sequence == 2
    update_context_start(session=session, sequence=3)
    assert AgentSession.objects.get(pk=session.pk).context_start_sequence == 3


@pytest.mark.parametrize("sequence", [-1, 4])
def test_update_context_start_rejects_sequences_outside_the_session(sequence: int) -> None:
    """A negative context start or one past the next sequence is a ValueError."""
    session = AgentSessionFactory.create()
    AgentSessionEventFactory.create_batch(3, session=session)
    with pytest.raises(ValueError, match="between 0 and 3"):
        update_context_start(session=session, sequence=sequence)
    assert AgentSession.objects.get(pk=session.pk).context_start_sequence == 0


def test_delete_session_removes_the_session_and_only_its_events() -> None:
    """delete_session removes the session with all its events, returns their count, and leaves others alone."""
    doomed, kept = AgentSessionFactory.create(), AgentSessionFactory.create()
    AgentSessionEventFactory.create_batch(3, session=doomed)
    AgentSessionEventFactory.create_batch(2, session=kept)

    assert delete_session(session=doomed) == 3

    assert not AgentSession.objects.filter(pk=doomed.pk).exists()
    assert not AgentSessionEvent.objects.filter(session_id=doomed.pk).exists()
    assert AgentSessionEvent.objects.filter(session=kept).count() == 2


def test_end_session_adds_each_turn_once() -> None:
    """Turn after turn (each end adding only the responses written since the last), the totals are the sum of
    every llm_response, each counted once: calling it twice adds nothing."""
    session = AgentSessionFactory.create()
    usage = {"prompt": 100, "completion": 10, "cached": 50, "cache_write": 0, "total": 160}
    for turn in range(1, 4):
        _llm_response(session, usage, 0.5)
        _llm_response(session, usage, 0.5)
        end_session(session=session)
        end_session(session=session)  # again: nothing new to add
        stored = AgentSession.objects.get(pk=session.pk)
        assert stored.total_tokens == 320 * turn
        assert stored.metadata["usage"]["llm_calls"] == 2 * turn
        assert stored.total_cost_cents == pytest.approx(1.0 * turn)
    # A session whose usage was summed before the position was kept is summed in full, once.
    AgentSession.objects.filter(pk=session.pk).update(
        metadata={"usage": {"llm_calls": 1, "total_tokens": 1}}, total_tokens=1
    )
    assert end_session(session=session).total_tokens == 960


# --- delete_idle_session -------------------------------------------------------------------------------------


def test_delete_idle_session_refuses_while_a_turn_is_open_and_deletes_once_it_ended() -> None:
    """An open turn keeps the session (TurnInProgress, nothing deleted); once it ended the session, its events
    and turns go, and `on_delete` is told the turns' ids first."""
    session = create_session(user_id=uuid.uuid4())
    turn, _ = open_turn(
        session=session, model="offline", events=[NewEvent(EventType.USER_MESSAGE, {"message": "hi"})]
    )
    told: list[list[uuid.UUID]] = []
    with pytest.raises(TurnInProgress):
        delete_idle_session(session=session, on_delete=told.append)
    assert told == [] and AgentSession.objects.filter(pk=session.pk).exists()
    finish_turn(turn=turn, status="completed")
    assert delete_idle_session(session=session, on_delete=told.append) == 1
    assert told == [[turn.pk]]
    assert not AgentSession.objects.filter(pk=session.pk).exists()
    assert not AgentSessionEvent.objects.filter(session_id=session.pk).exists()


# --- waking followers ------------------------------------------------------------------------------------


@pytest.mark.skipif(connection.vendor != "postgresql", reason="LISTEN/NOTIFY is PostgreSQL's")
@pytest.mark.django_db(transaction=True)
def test_an_append_whose_state_query_wakes_the_followers_notifies_once_at_commit_and_sends_no_notify() -> (
    None
):
    """The loop's append (`read=waking_followers(…)`): the followers get one notification when it commits,
    queued by the state query, with no `pg_notify` statement of its own; a rolled-back one notifies nobody."""
    session = AgentSessionFactory.create()
    read = waking_followers(session_state_query(session=session), session=session)
    params = connection.get_connection_params()
    params.pop("cursor_factory", None)
    params.pop("context", None)
    with psycopg.connect(**params, autocommit=True) as listener:
        listener.execute(f"LISTEN {EVENTS_CHANNEL}")
        with pytest.raises(RuntimeError), transaction.atomic():
            append_events(session=session, events=[NewEvent(EventType.ERROR, {"message": "no"})], read=read)
            raise RuntimeError("rolled back")
        with CaptureQueriesContext(connection) as queries:
            append_events(session=session, events=[NewEvent(EventType.ERROR, {"message": "hi"})], read=read)
        woken = [each.payload for each in listener.notifies(timeout=2, stop_after=2)]
    assert woken == [str(session.pk)]
    statements = [each["sql"] for each in queries.captured_queries]
    assert sum("pg_notify" in sql for sql in statements) == 1
    assert not any(sql.lstrip().upper().startswith("SELECT PG_NOTIFY") for sql in statements)
