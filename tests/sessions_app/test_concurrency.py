"""Concurrent writers to one session leave contiguous, unique sequence numbers."""

from __future__ import annotations

import threading

import pytest
from django.db import connection, transaction

from sessions_app.models import AgentSession, AgentSessionEvent, EventType
from sessions_app.services import NewEvent, append_event, append_events
from tests.sessions_app.factories import AgentSessionFactory


def _append(session: AgentSession, writer: int, index: int) -> None:
    append_event(session=session, event_type=EventType.TOOL_RESULT, data={"writer": writer, "index": index})


def _append_concurrently(
    session: AgentSession, *, writers: int, appends_each: int, batched: bool = False, together: bool = False
) -> list[BaseException]:
    """Run `writers` threads that each append `appends_each` events; return the errors they hit.

    `batched`: two of every three appends in one caller's transaction; `together`: through one
    `append_events` (as the agent loop writes them).
    """
    start = threading.Barrier(writers)
    errors: list[BaseException] = []

    def write(writer: int) -> None:
        try:
            start.wait()
            for index in range(appends_each):
                if together and index % 3 == 1:
                    append_events(
                        session=session,
                        events=[
                            NewEvent(EventType.TOOL_RESULT, {"writer": writer, "index": each})
                            for each in (index - 1, index)
                        ],
                    )
                    continue
                if (batched or together) and index % 3 == 0:
                    continue  # appended with the next one
                if batched and index % 3 == 1:
                    with transaction.atomic():  # two appends in a caller's transaction
                        for each in (index - 1, index):
                            _append(session, writer, each)
                    continue
                _append(session, writer, index)
        except BaseException as exc:  # reported to the test thread below
            errors.append(exc)
        finally:
            connection.close()  # each thread has its own connection; leave none open for teardown

    threads = [threading.Thread(target=write, args=(writer,)) for writer in range(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return errors


def _assert_contiguous(session: AgentSession, *, writers: int, appends_each: int) -> None:
    numbers = list(
        AgentSessionEvent.objects.filter(session=session)
        .order_by("sequence_number")
        .values_list("sequence_number", flat=True)
    )
    assert numbers == list(range(writers * appends_each))
    pairs = set(AgentSessionEvent.objects.filter(session=session).values_list("data__writer", "data__index"))
    assert len(pairs) == writers * appends_each  # every append landed exactly once


@pytest.mark.skipif(connection.vendor != "postgresql", reason="real concurrent writers need PostgreSQL")
@pytest.mark.django_db(transaction=True)
def test_eight_writers_times_one_hundred_appends_leave_no_gap_and_no_duplicate() -> None:
    """8 threads x 100 append_event on one session give exactly 800 events numbered 0..799."""
    session = AgentSessionFactory.create()
    errors = _append_concurrently(session, writers=8, appends_each=100)
    assert errors == []
    _assert_contiguous(session, writers=8, appends_each=100)


@pytest.mark.skipif(connection.vendor != "sqlite", reason="the SQLite variant of the test above")
@pytest.mark.django_db(transaction=True)
def test_concurrent_writers_on_a_sqlite_file_database_leave_no_gap() -> None:
    """4 threads x 25 append_event on one session in a SQLite file give 100 events numbered 0..99."""
    if connection.is_in_memory_db():  # type: ignore[attr-defined]  # SQLite wrapper; known once the test DB exists
        pytest.skip(
            "needs a SQLite file test database (set SQLITE_TEST_NAME): threads share the in-memory one "
            "through SQLite's shared cache, whose table locks fail at once ('database table is locked') "
            "instead of waiting for the busy timeout"
        )
    session = AgentSessionFactory.create()
    errors = _append_concurrently(session, writers=4, appends_each=25)
    assert errors == []
    _assert_contiguous(session, writers=4, appends_each=25)


@pytest.mark.skipif(connection.vendor != "postgresql", reason="real concurrent writers need PostgreSQL")
@pytest.mark.django_db(transaction=True)
def test_batched_and_single_appends_from_eight_writers_leave_no_gap_and_no_duplicate() -> None:
    """Batches (one lock, numbers assigned locally) interleaved with single appends from 8 threads: 0..599."""
    session = AgentSessionFactory.create()
    errors = _append_concurrently(session, writers=8, appends_each=75, batched=True)
    assert errors == []
    _assert_contiguous(session, writers=8, appends_each=75)


@pytest.mark.skipif(connection.vendor != "postgresql", reason="real concurrent writers need PostgreSQL")
@pytest.mark.django_db(transaction=True)
def test_appends_together_and_single_ones_from_eight_writers_leave_no_gap_and_no_duplicate() -> None:
    """append_events (one message: lock and INSERTs, each numbering itself) interleaved with single appends
    from 8 threads: 0..599."""
    session = AgentSessionFactory.create()
    errors = _append_concurrently(session, writers=8, appends_each=75, together=True)
    assert errors == []
    _assert_contiguous(session, writers=8, appends_each=75)
