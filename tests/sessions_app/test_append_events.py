"""append_events: several events at consecutive numbers, all or none; one round trip with its commit on PostgreSQL."""

from __future__ import annotations

import datetime as dt
import math
import uuid

import pytest
from django.db import connection, connections, transaction
from django.test.utils import CaptureQueriesContext

from sessions_app.models import AgentSession, AgentSessionEvent, EventType, SessionNotFound
from sessions_app.selectors import plan_context_events_after
from sessions_app.services import (
    InvalidEventData,
    NewEvent,
    append_event,
    append_events,
    append_events_then_read,
    create_session,
    delete_session,
    event_batch,
)
from tests.support.prepared import prepared_statement_runs

pytestmark = pytest.mark.django_db

FIELDS = ("id", "session_id", "sequence_number", "event_type", "timestamp", "duration_ms", "data")
TURN = [
    NewEvent(EventType.LLM_RESPONSE, {"text": "Ça va? 💪", "tokens": {"prompt": 10}}, duration_ms=1234),
    NewEvent(EventType.TOOL_CALL, {"tool_name": "idle", "arguments": {"reason": "done"}, "call_id": "c1"}),
    NewEvent(EventType.TOOL_CALL, {"tool_name": "idle", "arguments": {}, "call_id": "c2"}),
]


def _rows(session: AgentSession) -> list[tuple[int, str]]:
    return list(
        AgentSessionEvent.objects.filter(session=session)
        .order_by("sequence_number")
        .values_list("sequence_number", "event_type")
    )


def test_the_events_follow_the_stored_ones_and_equal_the_rows_read_back() -> None:
    session = create_session(user_id=uuid.uuid4())
    append_event(session=session, event_type=EventType.USER_MESSAGE, data={"message": "hi"})
    before = AgentSession.objects.get(pk=session.pk).updated_at

    stored = append_events(session=session, events=TURN)

    assert [event.sequence_number for event in stored] == [1, 2, 3]
    for event in stored:
        again = AgentSessionEvent.objects.get(pk=event.pk)
        assert {name: getattr(event, name) for name in FIELDS} == {
            name: getattr(again, name) for name in FIELDS
        }
    assert _rows(session) == [(0, "user_message"), (1, "llm_response"), (2, "tool_call"), (3, "tool_call")]
    assert (
        AgentSession.objects.get(pk=session.pk).updated_at == session.updated_at > before
    )  # the lock's bump


@pytest.mark.parametrize(
    ("bad", "error"),
    [
        (NewEvent("not_a_type", {}), ValueError),
        (NewEvent(EventType.ERROR, {"score": math.nan}), InvalidEventData),
        (NewEvent(EventType.ERROR, {}, duration_ms=-1), ValueError),
    ],
)
def test_one_invalid_event_stores_none_of_them(bad: NewEvent, error: type[Exception]) -> None:
    session = create_session(user_id=uuid.uuid4())
    with pytest.raises(error):
        append_events(session=session, events=[TURN[0], bad, TURN[1]])
    assert _rows(session) == []


def test_an_event_that_brings_its_timestamp_keeps_it() -> None:
    """A model request stored with its answer keeps the time it was sent."""
    session = create_session(user_id=uuid.uuid4())
    sent = dt.datetime(2026, 11, 23, 1, 2, 3, 456789, tzinfo=dt.UTC)
    request, answer = append_events(
        session=session,
        events=[NewEvent(EventType.LLM_REQUEST, {"model": "m"}, timestamp=sent), TURN[0]],
    )
    assert request.timestamp == sent == AgentSessionEvent.objects.get(pk=request.pk).timestamp
    assert answer.timestamp > sent  # stamped when stored


def test_inside_a_batch_they_join_it_and_roll_back_with_it() -> None:
    session = create_session(user_id=uuid.uuid4())
    with event_batch(session=session):
        append_event(session=session, event_type=EventType.USER_MESSAGE, data={"message": "hi"})
        assert [e.sequence_number for e in append_events(session=session, events=TURN[:2])] == [1, 2]
    with pytest.raises(RuntimeError), event_batch(session=session):
        append_events(session=session, events=TURN)
        raise RuntimeError("the turn failed")
    assert [number for number, _ in _rows(session)] == [0, 1, 2]


def test_nothing_to_append_writes_nothing() -> None:
    session = create_session(user_id=uuid.uuid4())
    with CaptureQueriesContext(connection) as queries:
        assert append_events(session=session, events=[]) == []
    assert len(queries) == 0


def test_a_deleted_session_raises_session_not_found_inside_a_transaction() -> None:
    session = create_session(user_id=uuid.uuid4())
    delete_session(session=session)
    with pytest.raises(SessionNotFound), transaction.atomic():
        append_events(session=session, events=TURN)
    assert not AgentSessionEvent.objects.filter(session_id=session.pk).exists()


@pytest.mark.django_db(transaction=True)
def test_a_deleted_session_raises_session_not_found_in_autocommit_mode() -> None:
    """Outside any transaction (the agent loop's case) the missing session is found when the write commits."""
    session = create_session(user_id=uuid.uuid4())
    delete_session(session=session)
    with pytest.raises(SessionNotFound):
        append_events(session=session, events=TURN)
    assert not AgentSessionEvent.objects.filter(session_id=session.pk).exists()
    # The connection is usable afterwards (no transaction left open or aborted).
    other = create_session(user_id=uuid.uuid4())
    assert [e.sequence_number for e in append_events(session=other, events=TURN)] == [0, 1, 2]


@pytest.mark.skipif(connection.vendor != "postgresql", reason="several statements per message: PostgreSQL")
@pytest.mark.django_db(transaction=True)
def test_on_postgresql_the_events_and_their_commit_take_one_round_trip() -> None:
    """One message holds the lock and the INSERTs; in autocommit mode it commits on its own, so another
    connection sees every event as soon as the call returns."""
    session = create_session(user_id=uuid.uuid4())
    with CaptureQueriesContext(connection) as queries:
        append_events(session=session, events=TURN)
    assert len(queries) == 1
    assert not connection.in_atomic_block
    observer = connections.create_connection("default")
    try:
        with observer.cursor() as cursor:
            cursor.execute(
                "SELECT sequence_number FROM agent_session_events WHERE session_id = %s ORDER BY 1",
                [session.pk],
            )
            assert [row[0] for row in cursor.fetchall()] == [0, 1, 2]
    finally:
        observer.close()


def test_a_read_sent_with_the_events_sees_them() -> None:
    """append_events_then_read: the planned read runs after the INSERTs (same message on PostgreSQL)."""
    session = create_session(user_id=uuid.uuid4())
    append_event(session=session, event_type=EventType.USER_MESSAGE, data={"message": "hi"})
    with CaptureQueriesContext(connection) as queries:
        stored, found = append_events_then_read(
            session=session, events=TURN, read=plan_context_events_after(session=session, after_sequence=0)
        )
    assert found is not None
    events, start = found
    tool_calls = [event for event in stored if event.event_type == EventType.TOOL_CALL]
    assert [(e.pk, e.sequence_number, e.data) for e in events] == [
        (e.pk, e.sequence_number, e.data) for e in tool_calls
    ]
    assert start == 0
    if connection.vendor == "postgresql":
        assert len(queries) == 1


def test_a_read_sent_with_events_for_a_deleted_session_raises_and_stores_nothing() -> None:
    session = create_session(user_id=uuid.uuid4())
    delete_session(session=session)
    with pytest.raises(SessionNotFound), transaction.atomic():
        append_events_then_read(
            session=session, events=TURN, read=plan_context_events_after(session=session, after_sequence=-1)
        )
    assert not AgentSessionEvent.objects.filter(session_id=session.pk).exists()


def _synchronous_commit() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SHOW synchronous_commit")
        row = cursor.fetchone()
    return str(row[0])


def _runs_of_no_flush_wait() -> int:
    runs = prepared_statement_runs().items()
    return sum(
        count for statement, count in runs if "set_config('synchronous_commit', 'off', true)" in statement
    )


@pytest.mark.skipif(connection.vendor != "postgresql", reason="synchronous_commit: PostgreSQL")
@pytest.mark.django_db(transaction=True)
def test_events_appended_without_waiting_for_the_flush_are_committed_and_the_setting_stays_with_them() -> (
    None
):
    """The message turns synchronous_commit off for its own transaction only: the events are visible to others
    at once, and the connection's next transaction waits for its flush again."""
    session = create_session(user_id=uuid.uuid4())
    asked = _runs_of_no_flush_wait()
    stored = append_events(session=session, events=TURN, wait_for_flush=False)
    assert (
        _runs_of_no_flush_wait() == asked + 1
    )  # the message turned it off (a prepared statement, by default)
    assert [event.sequence_number for event in stored] == [0, 1, 2]
    assert _synchronous_commit() == "on"
    observer = connections.create_connection("default")
    try:
        with observer.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM agent_session_events WHERE session_id = %s", [session.pk])
            assert cursor.fetchone() == (3,)
    finally:
        observer.close()
    assert [e.sequence_number for e in append_events(session=session, events=TURN)] == [3, 4, 5]


@pytest.mark.skipif(connection.vendor != "postgresql", reason="synchronous_commit: PostgreSQL")
def test_inside_a_callers_transaction_the_flush_setting_is_left_alone() -> None:
    """The caller's transaction commits as the caller decides: not waiting for the flush is not imposed on it."""
    session = create_session(user_id=uuid.uuid4())
    with transaction.atomic():
        append_events(session=session, events=TURN, wait_for_flush=False)
        assert _synchronous_commit() == "on"
    assert AgentSessionEvent.objects.filter(session=session).count() == 3
