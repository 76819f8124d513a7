"""The append and context-read hot path (plain SQL through the cursor) gives what the ORM gives, on both vendors."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from django.db import DEFAULT_DB_ALIAS, connection, connections

from sessions_app.models import AgentSession, AgentSessionEvent, AppendOnlyError, EventType
from sessions_app.selectors import context_events, context_events_after
from sessions_app.services import (
    append_event,
    create_session,
    delete_session,
    event_batch,
    update_context_start,
)

pytestmark = pytest.mark.django_db

# Nested JSON with what tends to differ between encoders and backends: non-ASCII, floats, big integers,
# booleans, nulls, empty containers, a quote and a backslash.
DATA: dict[str, Any] = {
    "message": 'Ça va? 💪 «quotes» "and" \\ backslash',
    "numbers": [0, -1, 2.5, 1e-7, 12345678901234567890, 0.1],
    "flags": {"yes": True, "no": False, "nothing": None},
    "empty": {"list": [], "object": {}, "text": ""},
    "nested": [{"a": [1, {"b": "c"}]}],
}

FIELDS = ("id", "session_id", "sequence_number", "event_type", "timestamp", "duration_ms", "data")


def _values(event: AgentSessionEvent) -> dict[str, Any]:
    return {name: getattr(event, name) for name in FIELDS}


def _stored_data_text(event: AgentSessionEvent) -> str:
    """The data column as the database holds it (jsonb rendered as text on PostgreSQL)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT data::text FROM agent_session_events WHERE id = %s"
            if connection.vendor == "postgresql"
            else "SELECT data FROM agent_session_events WHERE id = %s",
            [event.pk if connection.vendor == "postgresql" else event.pk.hex],
        )
        row = cursor.fetchone()
    assert row is not None
    return str(row[0])


def test_the_appended_event_equals_the_row_read_back_through_the_orm() -> None:
    """Single and batched appends (the batch's first one numbered by its INSERT) return exactly the stored row."""
    session = create_session(user_id=uuid.uuid4())
    single = append_event(session=session, event_type=EventType.USER_MESSAGE, data=DATA)
    with event_batch(session=session):
        first = append_event(session=session, event_type=EventType.LLM_RESPONSE, data=DATA, duration_ms=1234)
        second = append_event(session=session, event_type=EventType.TOOL_CALL, data={"call_id": "c1"})

    assert [single.sequence_number, first.sequence_number, second.sequence_number] == [0, 1, 2]
    for event in (single, first, second):
        stored = AgentSessionEvent.objects.get(pk=event.pk)
        assert _values(event) == _values(stored)
        assert event.timestamp.tzinfo is not None
        assert (event._state.adding, event._state.db) == (False, stored._state.db)


def test_the_hot_path_stores_the_data_column_as_the_orm_does() -> None:
    """The same payload inserted by append_event and by objects.create is stored byte for byte alike."""
    session = create_session(user_id=uuid.uuid4())
    appended = append_event(session=session, event_type=EventType.KNOWLEDGE, data=DATA)
    created = AgentSessionEvent.objects.create(
        session=session, sequence_number=1, event_type=EventType.KNOWLEDGE, data=appended.data
    )
    assert _stored_data_text(appended) == _stored_data_text(created)


def test_an_appended_event_cannot_be_saved_again() -> None:
    """The returned instance counts as stored, so the append-only guard refuses to save it."""
    session = create_session(user_id=uuid.uuid4())
    event = append_event(session=session, event_type=EventType.ERROR, data={"message": "boom"})
    event.data = {"message": "changed"}
    with pytest.raises(AppendOnlyError):
        event.save()
    assert AgentSessionEvent.objects.get(pk=event.pk).data == {"message": "boom"}


def test_a_batch_after_events_of_another_session_numbers_its_own() -> None:
    """The INSERT's own sequence lookup counts only the session's events."""
    busy, fresh = create_session(user_id=uuid.uuid4()), create_session(user_id=uuid.uuid4())
    for _ in range(3):
        append_event(session=busy, event_type=EventType.ERROR, data={})
    with event_batch(session=fresh):
        first = append_event(session=fresh, event_type=EventType.ERROR, data={})
        second = append_event(session=fresh, event_type=EventType.ERROR, data={})
    assert (first.sequence_number, second.sequence_number) == (0, 1)


def _fields_of(events: list[AgentSessionEvent]) -> list[tuple[Any, ...]]:
    return [(e.pk, e.sequence_number, e.event_type, e.timestamp, e.data) for e in events]


def test_context_events_after_equals_the_orm_reading() -> None:
    """The new context events (non-context types left out), from the context start on, as the ORM reads them."""
    session = create_session(user_id=uuid.uuid4())
    kinds = [
        EventType.USER_MESSAGE,
        EventType.LLM_REQUEST,
        EventType.LLM_RESPONSE,
        EventType.TOOL_CALL,
        EventType.TOOL_RESULT,
        EventType.KNOWLEDGE,
        EventType.ERROR,
        EventType.ARTIFACT,
        EventType.CHECKPOINT,
    ]
    for kind in kinds:
        append_event(session=session, event_type=kind, data={**DATA, "kind": kind})

    found = context_events_after(session=session, after_sequence=-1)
    assert found is not None
    events, start = found
    assert start == 0
    assert _fields_of(events) == _fields_of(context_events(session=session))
    assert [e.event_type for e in events] == [
        "user_message",
        "tool_call",
        "tool_result",
        "knowledge",
        "artifact",
        "checkpoint",
    ]

    newer = context_events_after(session=session, after_sequence=4)
    assert newer is not None
    assert [e.sequence_number for e in newer[0]] == [5, 7, 8]

    update_context_start(session=session, sequence=6)
    moved = context_events_after(session=session, after_sequence=-1)
    assert moved is not None
    assert moved[1] == 6
    assert _fields_of(moved[0]) == _fields_of(context_events(session=session))


def test_context_events_after_reports_the_start_when_nothing_is_new_and_none_for_a_gone_session() -> None:
    session = create_session(user_id=uuid.uuid4())
    assert context_events_after(session=session, after_sequence=-1) == ([], 0)
    append_event(session=session, event_type=EventType.USER_MESSAGE, data={"message": "hi"})
    assert context_events_after(session=session, after_sequence=0) == ([], 0)
    delete_session(session=session)
    assert context_events_after(session=session, after_sequence=-1) is None


def test_a_created_session_equals_the_row_read_back_through_the_orm() -> None:
    """create_session's plain-SQL INSERT stores what AgentSession.objects.create would, and returns it."""
    metadata = {"turn_running_since": "2026-11-23T01:02:03+00:00", "note": DATA["message"]}
    session = create_session(user_id=uuid.uuid4(), metadata=metadata)
    again = AgentSession.objects.get(pk=session.pk)
    names = [field.attname for field in AgentSession._meta.concrete_fields]
    assert {name: getattr(session, name) for name in names} == {name: getattr(again, name) for name in names}
    assert (again.status, again.context_start_sequence, again.metadata) == ("active", 0, metadata)
    session.status = "completed"
    session.save(update_fields=["status"])  # saved, not added: an UPDATE of the same row
    assert AgentSession.objects.get(pk=session.pk).status == "completed"


def _rows_read(plan: dict[str, Any]) -> int:
    """Rows that the plan's scans of agent_session_events produced (EXPLAIN ANALYZE, JSON), subplans included."""
    rows = (
        plan.get("Actual Rows", 0) * plan.get("Actual Loops", 1) if "Scan" in plan.get("Node Type", "") else 0
    )
    if plan.get("Relation Name") not in (None, "agent_session_events"):
        rows = 0
    return int(rows) + sum(_rows_read(child) for child in plan.get("Plans", []))


@pytest.mark.skipif(connection.vendor != "postgresql", reason="EXPLAIN ANALYZE: PostgreSQL")
def test_the_next_sequence_number_reads_one_index_entry_however_long_the_session() -> None:
    """The statistics predate the session (as for any session newer than the last ANALYZE), so the planner
    expects it to hold about nothing; the last number must still come from one entry of the unique index, not
    from reading every event of the session."""
    from sessions_app.selectors import hot_path_statements, session_param

    # Many one-event sessions, analyzed: the planner takes any session to hold one event.
    others = AgentSession.objects.bulk_create(AgentSession(user_id=uuid.uuid4()) for _ in range(1000))
    AgentSessionEvent.objects.bulk_create(
        AgentSessionEvent(session=other, sequence_number=0, event_type=EventType.USER_MESSAGE, data={})
        for other in others
    )
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE agent_session_events")
    session = create_session(user_id=uuid.uuid4())
    AgentSessionEvent.objects.bulk_create(
        AgentSessionEvent(
            session=session, sequence_number=n, event_type=EventType.USER_MESSAGE, data={"n": n}
        )
        for n in range(3000)
    )
    conn = connections[DEFAULT_DB_ALIAS]
    statement = hot_path_statements(conn).last_sequence
    with conn.cursor() as cursor:
        cursor.execute(f"EXPLAIN (ANALYZE, FORMAT JSON) {statement}", [session_param(conn, session)])
        (explained,) = cursor.fetchone()
    plan = (explained if isinstance(explained, list) else json.loads(explained))[0]["Plan"]
    assert _rows_read(plan) == 1
    assert append_event(session=session, event_type=EventType.USER_MESSAGE, data={}).sequence_number == 3000
