"""A lost database connection with real processes: PostgreSQL terminates every backend of the service mid-turn.

Two daphne processes and a worker run six turns of a slow scripted model (three streams, three chats, and a
follower of one stream on the other process) when `pg_terminate_backend` ends every connection they hold:
pooled web connections, the worker's, the lease keeper's and the LISTEN connections. Every turn still
completes, every stream gets its `done`, every chat its JSON answer; and once the service is idle, a second
termination costs the next requests nothing (no HTML 500 per dead pooled connection).
"""

from __future__ import annotations

import http.client
import json
import os
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from tests.support.live_server import (
    TEST_HEARTBEAT_SECONDS,
    TEST_LEASE_SECONDS,
    DaphneServer,
    LiveDatabase,
    WorkerProcess,
    create_live_database,
    is_postgres_url,
    mint_test_token,
    server_env,
    wait_for,
    write_scripts,
)
from tests.trainer_agent.streaming.sse_client import SSEEvent, SSEStream, follow_session, post_turn

pytestmark = [pytest.mark.live, pytest.mark.xdist_group("live")]

TURNS_PER_KIND = 3
WAIT_S = 60.0


@pytest.fixture(scope="module")
def service(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[LiveDatabase, DaphneServer, DaphneServer]]:
    if not is_postgres_url(os.environ.get("DATABASE_URL", "")):
        pytest.skip("terminating the service's database connections needs PostgreSQL")
    directory = tmp_path_factory.mktemp("dbloss")
    models: dict[str, Any] = {
        "models": {
            # Three model calls of a second each: the termination lands while each turn is running.
            "scripted-dbloss": {
                "delay_s": 1.0,
                "steps": [
                    {"tool": "message_notify_user", "args": {"message": "Step one"}},
                    {"tool": "message_notify_user", "args": {"message": "Step two"}},
                    {"tool": "idle", "args": {"reason": "finished"}},
                ],
            },
            "scripted-quick": {
                "steps": [
                    {"tool": "message_notify_user", "args": {"message": "Quick answer"}},
                    {"tool": "idle", "args": {"reason": "finished"}},
                ]
            },
        }
    }
    database = create_live_database(name="dbloss", tmp_dir=directory)
    env = server_env(
        database_url=database.url,
        scripts=write_scripts(directory, models),
        extra={
            "SSE_HEARTBEAT_SECONDS": TEST_HEARTBEAT_SECONDS,
            "AGENT_TURN_RATE": "1000/min",
            "TURN_LEASE_SECONDS": TEST_LEASE_SECONDS,
        },
    )
    worker = WorkerProcess(env=env, log_path=directory / "worker.log", threads=8).start()
    web_a = DaphneServer(env=env, log_path=directory / "daphne-a.log").start()
    web_b = DaphneServer(env=env, log_path=directory / "daphne-b.log").start()
    try:
        yield database, web_a, web_b
    finally:
        web_a.stop()
        web_b.stop()
        worker.stop()
        database.drop()


def terminate_service_connections(database: LiveDatabase) -> int:
    """`pg_terminate_backend` on every connection to the service's database but this one's."""
    assert database.postgres_admin_url is not None
    with psycopg.connect(database.postgres_admin_url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()",
            [database.name],
        ).fetchall()
    return len(rows)


def post_chat(base_url: str, token: str, body: dict[str, Any]) -> tuple[int, str, bytes]:
    """POST /agent/chat: (status, content type, body)."""
    host, port = base_url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=WAIT_S)
    try:
        conn.request(
            "POST",
            "/agent/chat",
            body=json.dumps(body).encode(),
            headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
        )
        response = conn.getresponse()
        return response.status, response.getheader("Content-Type") or "", response.read()
    finally:
        conn.close()


def read_to_end(stream: SSEStream, into: list[SSEEvent]) -> None:
    """The stream's frames until `done` or `error` (or until the server ends it, or the read times out)."""
    try:
        for event in stream.frames():
            into.append(event)
            if event.json()["type"] in ("done", "error"):
                return
    except (OSError, http.client.HTTPException) as exc:  # the client's timeout: the stream went silent
        into.append(SSEEvent(data=json.dumps({"type": "client_gave_up", "error": repr(exc)})))
    finally:
        stream.close()


def test_terminating_every_database_connection_mid_turn_loses_no_turn_stream_or_request(
    service: tuple[LiveDatabase, DaphneServer, DaphneServer],
) -> None:
    database, web_a, web_b = service
    servers = [web_a, web_b]
    users = [uuid.uuid4() for _ in range(2 * TURNS_PER_KIND)]
    tokens = {user: mint_test_token(user) for user in users}
    stream_users, chat_users = users[:TURNS_PER_KIND], users[TURNS_PER_KIND:]

    streams: list[tuple[str, SSEStream, list[SSEEvent]]] = []
    for index, user in enumerate(stream_users):
        stream = post_turn(
            servers[index % 2].base_url, tokens[user], {"message": "Talk to me", "model": "scripted-dbloss"}
        )
        assert stream.status == 200
        first = next(stream.frames())
        streams.append((stream.headers["x-session-id"], stream, [first]))
    # A follower of the first stream's session on the other process.
    follower = follow_session(web_b.base_url, tokens[stream_users[0]], streams[0][0])
    assert follower.status == 200
    followed: list[SSEEvent] = []

    chats: dict[uuid.UUID, tuple[int, str, bytes]] = {}

    def chat(index: int, user: uuid.UUID) -> None:
        chats[user] = post_chat(
            servers[index % 2].base_url, tokens[user], {"message": "Talk to me", "model": "scripted-dbloss"}
        )

    chat_threads = [threading.Thread(target=chat, args=(i, u)) for i, u in enumerate(chat_users)]
    for thread in chat_threads:
        thread.start()

    running = len(users)
    wait_for(
        lambda: database.scalar("SELECT COUNT(*) FROM agent_turns WHERE status = 'running'") == running,
        "every turn to be running",
    )
    time.sleep(0.5)  # inside a model call of each turn
    assert terminate_service_connections(database) >= running, "the worker held a connection per turn"

    readers = [threading.Thread(target=read_to_end, args=(s, frames)) for _, s, frames in streams]
    readers.append(threading.Thread(target=read_to_end, args=(follower, followed)))
    for thread in readers:
        thread.start()
    for thread in [*readers, *chat_threads]:
        thread.join(timeout=WAIT_S + 5)

    for session_id, _, frames in streams:
        kinds = [event.json()["type"] for event in frames]
        assert frames[-1].json() == {"type": "done", "sessionId": session_id}, kinds
        assert "error" not in kinds
    assert followed and followed[-1].json() == {"type": "done", "sessionId": streams[0][0]}
    for user in chat_users:
        status, content_type, body = chats[user]
        assert (status, content_type) == (200, "application/json"), body[:300]
        messages = json.loads(body)["response"]["messages"]
        assert "Step two" in json.dumps(messages)
    statuses = database.query("SELECT status, COUNT(*) FROM agent_turns GROUP BY status")
    assert dict(statuses) == {"completed": running}, "every turn completed, none failed"

    # Idle now: every pooled connection dies again. The next requests find new ones: JSON, never HTML 500.
    terminate_service_connections(database)
    for attempt in range(9):
        user = users[attempt % len(users)]
        status, content_type, body = post_chat(
            web_a.base_url, tokens[user], {"message": "Again", "model": "scripted-quick"}
        )
        assert (status, content_type) == (200, "application/json"), body[:300]
    terminate_service_connections(database)
    stream = post_turn(web_b.base_url, tokens[users[0]], {"message": "Once more", "model": "scripted-quick"})
    assert stream.status == 200
    frames = stream.read_frames_until_done()
    stream.close()
    assert frames[-1].json()["type"] == "done"
