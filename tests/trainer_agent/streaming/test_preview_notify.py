"""Preview notifications on PostgreSQL (docs/architecture.md "Previews"): a worker's publications go out on a
connection of their own, not one borrowed from the pool the turns use, and a listener hears each of them in order.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from django.db import connection

from sessions_app.services import EVENTS_CHANNEL
from tests.trainer_agent.test_connection_pool import pool_of_one  # noqa: F401 (a fixture)
from trainer_agent.connection_pool import conninfo
from trainer_agent.previews import (
    PREVIEWS_CHANNEL,
    NotifySender,
    PreviewBatch,
    notification_payloads,
    notify_previews,
    receive_notification,
    stop_notifying,
)

pytestmark = [
    pytest.mark.skipif(connection.vendor != "postgresql", reason="NOTIFY is PostgreSQL's"),
    pytest.mark.django_db(transaction=True),
]


def card(index: int) -> dict[str, Any]:
    return {
        "type": "exercise_preview",
        "data": {"tool": "generate_workout", "call_id": "toolu_1", "index": index, "exercise": {"sets": 3}},
    }


def batch(session_id: uuid.UUID, index: int, *, final: bool = False) -> PreviewBatch:
    frames = [card(index)]
    return PreviewBatch(session_id, uuid.uuid4(), 7, frames=frames, state=frames, final=final)


@pytest.fixture(autouse=True)
def no_connection_left() -> Iterator[None]:
    """The process's sender closes its connection after each test (the test database is dropped at the end)."""
    yield
    stop_notifying()


@pytest.fixture
def listener() -> Iterator[psycopg.Connection[Any]]:
    """A web process's LISTEN connection."""
    with psycopg.connect(conninfo(), autocommit=True) as conn:
        conn.execute(f"LISTEN {PREVIEWS_CHANNEL}")
        conn.execute(f"LISTEN {EVENTS_CHANNEL}")
        yield conn


def heard(listener: psycopg.Connection[Any], count: int) -> list[tuple[str, str]]:
    return [(note.channel, note.payload) for note in listener.notifies(timeout=10, stop_after=count)]


def test_a_preview_goes_out_while_the_turns_hold_every_pooled_connection(
    pool_of_one: str,  # noqa: F811
    listener: psycopg.Connection[Any],
) -> None:
    """The pool's only connection is lent to another thread's work; the call's preview is heard all the same,
    and the publishing thread is left holding no connection."""
    lent, release = threading.Event(), threading.Event()

    def busy_turn() -> None:
        connection.ensure_connection()
        lent.set()
        release.wait(30)
        connection.close()

    holder = threading.Thread(target=busy_turn)
    holder.start()
    try:
        assert lent.wait(10)
        session = uuid.uuid4()
        notify_previews(batch(session, 0, final=True))
        assert connection.connection is None
        [(channel, payload)] = heard(listener, 1)
    finally:
        release.set()
        holder.join()
    assert channel == PREVIEWS_CHANNEL
    assert receive_notification(payload) == (str(session), 7, [card(0)])


def test_publications_sent_together_are_each_heard_in_order(listener: psycopg.Connection[Any]) -> None:
    """Thirty publications of three sessions queued at once (one statement, or a few) reach the listener, each
    session's in the order published."""
    sessions = [uuid.uuid4() for _ in range(3)]
    sender = NotifySender()
    try:
        for index in range(10):
            for session in sessions:
                sender.send(notification_payloads(batch(session, index)))
        sender.send(["flush"], wait=True)
    finally:
        sender.stop()
    indexes: dict[str, list[int]] = {str(session): [] for session in sessions}
    for _, payload in heard(listener, 31)[:-1]:
        received = receive_notification(payload)
        assert received is not None
        session_id, _, frames = received
        indexes[session_id].extend(frame["data"]["index"] for frame in frames)
    assert indexes == {str(session): list(range(10)) for session in sessions}


def test_the_last_card_is_heard_before_the_calls_answer_is_stored(listener: psycopg.Connection[Any]) -> None:
    """The final publication of a call is sent when `notify_previews` returns: the store's notification of the
    call's `llm_response`, sent right after, reaches the listener second (a follower reading that answer first
    would drop the card as stale)."""
    session = uuid.uuid4()
    notify_previews(batch(session, 5, final=True))
    with psycopg.connect(conninfo(), autocommit=True) as worker_connection:
        worker_connection.execute("SELECT pg_notify(%s, %s)", [EVENTS_CHANNEL, str(session)])
    assert [channel for channel, _ in heard(listener, 2)] == [PREVIEWS_CHANNEL, EVENTS_CHANNEL]


def test_a_publication_after_the_server_ended_the_connection_goes_out_on_a_new_one(
    listener: psycopg.Connection[Any],
) -> None:
    """The sender's connection is ended by the server (a restart, an idle timeout) between two publications: the
    next one, perhaps a call's last card, is sent again on a new connection instead of being lost, and no error
    reaches the model call."""
    opened: list[psycopg.Connection[Any]] = []

    def connect() -> psycopg.Connection[Any]:
        opened.append(psycopg.connect(conninfo(), autocommit=True))
        return opened[-1]

    sender = NotifySender(connect=connect)
    sender.send(["first"], wait=True)
    with psycopg.connect(conninfo(), autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", [opened[0].info.backend_pid])
    sender.send(["after the restart"], wait=True)
    sender.send(["next"], wait=True)
    sender.stop()
    assert [payload for _, payload in heard(listener, 3)] == ["first", "after the restart", "next"]
    assert len(opened) == 2


def test_a_publication_is_dropped_when_no_connection_can_be_made(listener: psycopg.Connection[Any]) -> None:
    """The database refuses new connections: that publication is dropped (previews are never worth waiting
    for), the model call goes on, and the next publication connects again."""
    attempts: list[str] = []

    def connect() -> psycopg.Connection[Any]:
        attempts.append("connect")
        if len(attempts) == 1:
            raise psycopg.OperationalError("the database is starting up")
        return psycopg.connect(conninfo(), autocommit=True)

    sender = NotifySender(connect=connect)
    sender.send(["refused"], wait=True)
    sender.send(["after"], wait=True)
    sender.stop()
    assert [payload for _, payload in heard(listener, 1)] == ["after"]
    assert attempts == ["connect", "connect"]
