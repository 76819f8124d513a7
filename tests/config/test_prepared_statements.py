"""config.db.send_together on PostgreSQL: the hot paths' statements run as prepared statements of each connection."""

from __future__ import annotations

import uuid

import pytest
from django.db import connection, connections, transaction
from django.test.utils import CaptureQueriesContext
from pytest_django import Settings

from config.db import send_together
from sessions_app.models import AgentSessionEvent
from sessions_app.services import NewEvent, append_events, create_session
from tests.support.prepared import prepared_statement_runs

pytestmark = pytest.mark.skipif(connection.vendor != "postgresql", reason="prepared statements: PostgreSQL")

TURN = [
    NewEvent("llm_request", {"model": "m", "prompt": "p"}),
    NewEvent("llm_response", {"raw_response": {}, "tokens": {"total": 1}}),
    NewEvent("tool_call", {"tool_name": "idle", "arguments": {}, "call_id": "c1"}),
]


def runs_of(prepared: dict[str, int], fragment: str) -> int:
    (runs,) = [count for statement, count in prepared.items() if fragment in statement]
    return runs


@pytest.mark.django_db
def test_appends_run_the_prepared_lock_and_insert_once_per_statement() -> None:
    session = create_session(user_id=uuid.uuid4())
    append_events(session=session, events=TURN)  # prepares on first use (if no earlier test did)
    before = prepared_statement_runs()
    for _ in range(3):
        append_events(session=session, events=TURN)
    after = prepared_statement_runs()
    insert, lock = 'INSERT INTO "agent_session_events"', 'UPDATE "agent_sessions" SET "updated_at"'
    assert runs_of(after, insert) - runs_of(before, insert) == 9  # three events per append
    assert runs_of(after, lock) - runs_of(before, lock) == 3
    numbers = AgentSessionEvent.objects.filter(session=session).values_list("sequence_number", flat=True)
    assert sorted(numbers) == list(range(12))


@pytest.mark.django_db
def test_with_the_setting_off_nothing_new_is_prepared_and_appends_still_work(settings: Settings) -> None:
    settings.DB_PREPARED_STATEMENTS = False
    session = create_session(user_id=uuid.uuid4())
    before = prepared_statement_runs()
    stored = append_events(session=session, events=TURN)
    assert prepared_statement_runs() == before
    assert [event.sequence_number for event in stored] == [0, 1, 2]


@pytest.mark.django_db
def test_parameters_percent_signs_and_statements_without_parameters() -> None:
    marker = uuid.uuid4().hex  # a statement no connection has prepared yet
    statements = [("SELECT 'a%%b' || %s || %s", ["c", marker]), (f"SELECT 7 AS seven_{marker}", [])]
    with CaptureQueriesContext(connection) as queries, connection.cursor() as cursor:
        for _ in range(2):  # the second time the statements are already prepared
            send_together(cursor, statements)
            first = cursor.fetchall()
            assert cursor.nextset()
            second = cursor.fetchall()
            assert (first, second) == ([(f"a%bc{marker}",)], [(7,)])
    assert len(queries) == 2  # one message each time; preparing is not logged as a query
    assert any(marker in statement for statement in prepared_statement_runs())


@pytest.mark.django_db
def test_a_statement_first_prepared_in_a_rolled_back_transaction_still_runs_afterwards() -> None:
    """PREPARE outlives the transaction that ran it (it is not transactional), so the connection's record that
    the statement is prepared stays true after a rollback."""
    sql = f"SELECT %s::int + 1 AS next_{uuid.uuid4().hex}"
    with transaction.atomic():
        with connection.cursor() as cursor:
            send_together(cursor, [(sql, [1])])
            assert cursor.fetchall() == [(2,)]
        transaction.set_rollback(True)
    with connection.cursor() as cursor:
        send_together(cursor, [(sql, [41])])
        assert cursor.fetchall() == [(42,)]


@pytest.mark.django_db
def test_each_connection_prepares_for_itself() -> None:
    """A statement prepared on one connection is prepared again on another before it runs there."""
    sql = f"SELECT %s::text AS echo_{uuid.uuid4().hex}"
    with connection.cursor() as cursor:
        send_together(cursor, [(sql, ["here"])])
        assert cursor.fetchall() == [("here",)]
    other = connections.create_connection("default")
    try:
        with other.cursor() as cursor:
            send_together(cursor, [(sql, ["there"])])
            assert cursor.fetchall() == [("there",)]
        assert any(sql.split()[-1] in statement for statement in prepared_statement_runs(other))
    finally:
        other.close()
