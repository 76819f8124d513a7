"""No silent hang: a live daphne with no worker running (issue 24).

A turn no worker takes within TURN_PICKUP_SECONDS ends visibly: `/agent/chat` answers 503 saying no worker is
running, `/agent/stream` ends with that `error` frame, `/healthz` is 503 with 0 workers (`/livez` stays 200),
the user's message stays stored and the session takes new messages. A worker started afterwards runs new turns
and never the failed ones. A follower of a session that is deleted gets an `error` frame and the stream ends.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.live_server import (
    TEST_HEARTBEAT_SECONDS,
    TEST_LEASE_SECONDS,
    DaphneServer,
    LiveDatabase,
    WorkerProcess,
    create_live_database,
    mint_test_token,
    server_env,
    write_scripts,
)
from tests.trainer_agent.streaming.sse_client import follow_session, open_stream, post_turn

pytestmark = [pytest.mark.live, pytest.mark.xdist_group("live")]

PICKUP_SECONDS = 3.0
NO_WORKER = "No worker is running to take the turn. Please try again later."
MODEL = "scripted-hello"


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LiveDatabase, dict[str, str], Path]]:
    directory = tmp_path_factory.mktemp("no-worker")
    models: dict[str, Any] = {
        "models": {
            MODEL: {
                "steps": [
                    {"tool": "message_notify_user", "args": {"message": "Hello!"}},
                    {"tool": "idle", "args": {"reason": "done"}},
                ]
            }
        }
    }
    database = create_live_database(name="noworker", tmp_dir=directory)
    env = server_env(
        database_url=database.url,
        scripts=write_scripts(directory, models),
        extra={
            "SSE_HEARTBEAT_SECONDS": TEST_HEARTBEAT_SECONDS,
            "AGENT_TURN_RATE": "1000/min",
            "TURN_LEASE_SECONDS": TEST_LEASE_SECONDS,
            "TURN_PICKUP_SECONDS": str(PICKUP_SECONDS),
        },
    )
    yield database, env, directory
    database.drop()


@pytest.fixture(scope="module")
def web(setup: tuple[LiveDatabase, dict[str, str], Path]) -> Iterator[DaphneServer]:
    server = DaphneServer(env=setup[1], log_path=setup[2] / "daphne.log").start()
    yield server
    server.stop()


def get_json(base_url: str, path: str, token: str | None = None) -> tuple[int, dict[str, Any]]:
    response = open_stream(base_url, path, token=token, headers={"Accept": "application/json"})
    return response.status, response.body_json()


def _id(db: LiveDatabase, value: str) -> str:
    return value if db.postgres_admin_url else uuid.UUID(value).hex


def turns(db: LiveDatabase, session_id: str) -> list[tuple[str, int, str]]:
    """(status, attempts, error kind) of the session's turns, oldest first."""
    rows = db.query(
        "SELECT status, attempts, result FROM agent_turns WHERE session_id = %s ORDER BY start_sequence",
        [_id(db, session_id)],
    )
    out = []
    for status, attempts, result in rows:
        value = json.loads(result) if isinstance(result, str) else result
        out.append((str(status), int(attempts), str(value.get("error_kind", ""))))
    return out


def event_types(db: LiveDatabase, session_id: str) -> list[str]:
    rows = db.query(
        "SELECT event_type FROM agent_session_events WHERE session_id = %s ORDER BY sequence_number",
        [_id(db, session_id)],
    )
    return [str(kind) for (kind,) in rows]


def chat(base_url: str, token: str, body: dict[str, Any]) -> tuple[int, dict[str, Any], float]:
    started = time.monotonic()
    response = open_stream(base_url, "/agent/chat", method="POST", token=token, body=body, timeout=60)
    return response.status, response.body_json(), time.monotonic() - started


def test_without_a_worker_turns_end_visibly_and_a_later_worker_runs_only_new_ones(
    setup: tuple[LiveDatabase, dict[str, str], Path], web: DaphneServer
) -> None:
    database, env, directory = setup
    token = mint_test_token(uuid.uuid4())

    status, health = get_json(web.base_url, "/healthz")
    assert status == 503, "readiness fails with no worker alive"
    assert health["workers"]["alive"] == 0 and health["database"] in {"sqlite", "postgresql"}
    assert get_json(web.base_url, "/livez") == (200, {"status": "ok"})

    # /agent/chat: 503 within the bound, saying no worker is running; the message is kept.
    status, body, took = chat(web.base_url, token, {"message": "Hello?", "model": MODEL})
    assert status == 503, body
    assert body["detail"] == NO_WORKER
    assert took < PICKUP_SECONDS + 3, f"answered after {took:.1f} s"
    chat_session = body["sessionId"]
    assert turns(database, chat_session) == [("error", 0, "no_worker")]
    assert event_types(database, chat_session) == ["user_message", "error"]

    # /agent/stream: "Message received", then the error frame, then the stream ends.
    stream = post_turn(web.base_url, token, {"message": "Anyone there?", "model": MODEL})
    assert stream.status == 200
    stream_session = stream.headers["x-session-id"]
    started = time.monotonic()
    received = stream.frames()
    frames = [next(received).json()]
    # While the turn waits, readiness shows it queued (and still 0 workers).
    status, health = get_json(web.base_url, "/healthz")
    assert status == 503 and health["workers"]["alive"] == 0
    assert 0 <= health["workers"]["oldestQueuedSeconds"] < PICKUP_SECONDS + 1
    frames += [event.json() for event in received]  # until the server ends the stream
    stream.close()
    assert time.monotonic() - started < PICKUP_SECONDS + 3
    assert frames[0]["data"]["message"] == "Message received"
    assert frames[-1] == {"type": "error", "message": NO_WORKER}

    # The session is not locked: a new message is admitted at once (and ends the same way).
    status, body, _ = chat(web.base_url, token, {"message": "Still there?", "sessionId": chat_session})
    assert status == 503 and body["sessionId"] == chat_session

    worker = WorkerProcess(env=env, log_path=directory / "worker.log", threads=2).start()
    try:
        deadline = time.monotonic() + 60
        while get_json(web.base_url, "/healthz")[0] != 200:
            assert time.monotonic() < deadline, worker.log_tail()
            time.sleep(0.2)
        status, health = get_json(web.base_url, "/healthz")
        assert health["workers"]["alive"] == 1

        status, body, _ = chat(
            web.base_url, token, {"message": "Hi again", "sessionId": chat_session, "model": MODEL}
        )
        assert status == 200, body
        assert body["response"]["messages"] == ["Hello!"]
        time.sleep(float(TEST_LEASE_SECONDS) + 1)  # two sweeps of the worker pass meanwhile
    finally:
        worker.stop()
    # The failed turns were never run: no worker attempt, no model call, only the new turn's.
    assert turns(database, chat_session) == [
        ("error", 0, "no_worker"),
        ("error", 0, "no_worker"),
        ("completed", 1, ""),
    ]
    assert turns(database, stream_session) == [("error", 0, "no_worker")]
    assert event_types(database, stream_session) == ["user_message", "error"]
    # A worker that stopped cleanly no longer counts.
    assert get_json(web.base_url, "/healthz")[0] == 503


def test_a_follower_of_a_deleted_session_is_told_and_the_stream_ends(
    setup: tuple[LiveDatabase, dict[str, str], Path], web: DaphneServer
) -> None:
    token = mint_test_token(uuid.uuid4())
    json_only = {"Accept": "application/json"}
    created = open_stream(
        web.base_url, "/agent/sessions", method="POST", token=token, body={}, headers=json_only
    )
    assert created.status == 201
    session_id = created.body_json()["session"]["id"]
    stream = follow_session(web.base_url, token, session_id)
    assert stream.status == 200
    deleted = open_stream(
        web.base_url, f"/agent/sessions/{session_id}", method="DELETE", token=token, headers=json_only
    )
    assert deleted.status == 204
    started = time.monotonic()
    frames = [event.json() for event in stream.frames()]  # until the server ends the stream
    stream.close()
    assert frames == [{"type": "error", "message": "This session was deleted."}]
    assert time.monotonic() - started < 10
