"""A burst of turns against a real daphne and worker: 50 streams and 50 chats at once, offline coach.

The old in-process design froze under such a burst (pool timeouts, turns left `active`, /healthz silent). Here
the web process only admits and streams while the worker runs the turns: every turn must complete, every
session must end `completed` with its turn closed, and /healthz must keep answering during the burst. (How fast
is a benchmark's business: docs/benchmarks.md "Durable turns".)
"""

from __future__ import annotations

import http.client
import json
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from tests.support.live_server import DaphneServer, LiveDatabase, mint_test_token
from tests.trainer_agent.streaming.sse_client import post_turn

pytestmark = [pytest.mark.live, pytest.mark.xdist_group("live")]

TURNS = 50
CLIENT_TIMEOUT_S = 120.0


def _stream(base_url: str) -> dict[str, Any]:
    token = mint_test_token(uuid.uuid4())
    stream = post_turn(base_url, token, {"message": "Give me a quick workout"}, timeout=CLIENT_TIMEOUT_S)
    try:
        frames = [event.json() for event in stream.read_frames_until_done()] if stream.status == 200 else []
        return {"status": stream.status, "session": stream.headers.get("x-session-id"), "last": frames[-1:]}
    finally:
        stream.close()


def _chat(base_url: str) -> dict[str, Any]:
    host, port = base_url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=CLIENT_TIMEOUT_S)
    try:
        conn.request(
            "POST",
            "/agent/chat",
            body=json.dumps({"message": "Give me a quick workout"}),
            headers={
                "Authorization": f"Bearer {mint_test_token(uuid.uuid4())}",
                "Content-Type": "application/json",
            },
        )
        response = conn.getresponse()
        body = json.loads(response.read())
        return {"status": response.status, "session": body.get("sessionId"), "body": body}
    finally:
        conn.close()


def _probe_health(base_url: str, stop: threading.Event, answers: list[int], refusals: list[bytes]) -> None:
    host, port = base_url.removeprefix("http://").split(":")
    while not stop.is_set():
        conn = http.client.HTTPConnection(host, int(port), timeout=10)
        try:
            conn.request("GET", "/healthz")
            response = conn.getresponse()
            answers.append(response.status)
            if response.status != 200:
                refusals.append(response.read()[:300])
        except OSError:
            answers.append(0)
        finally:
            conn.close()
        time.sleep(0.1)


def _ready(base_url: str, *, within_s: float = 30.0) -> None:
    """Until /healthz says ready: the worker has reported its first heartbeat."""
    host, port = base_url.removeprefix("http://").split(":")
    deadline = time.monotonic() + within_s
    while True:
        conn = http.client.HTTPConnection(host, int(port), timeout=10)
        try:
            conn.request("GET", "/healthz")
            if conn.getresponse().status == 200:
                return
        except OSError:
            pass
        finally:
            conn.close()
        assert time.monotonic() < deadline, "/healthz never said ready (no worker heartbeat)"
        time.sleep(0.2)


def test_fifty_streams_and_fifty_chats_at_once_all_complete(
    live_server_process: DaphneServer, live_database: LiveDatabase
) -> None:
    base_url = live_server_process.base_url
    _ready(base_url)
    stop = threading.Event()
    health: list[int] = []
    refusals: list[bytes] = []
    prober = threading.Thread(target=_probe_health, args=(base_url, stop, health, refusals))
    prober.start()
    try:
        with ThreadPoolExecutor(max_workers=2 * TURNS) as pool:
            streams = [pool.submit(_stream, base_url) for _ in range(TURNS)]
            chats = [pool.submit(_chat, base_url) for _ in range(TURNS)]
            stream_results = [future.result() for future in streams]
            chat_results = [future.result() for future in chats]
    finally:
        stop.set()
        prober.join()

    assert [r["status"] for r in stream_results] == [200] * TURNS
    assert all(r["last"] and r["last"][0]["type"] == "done" for r in stream_results), [
        r for r in stream_results if not (r["last"] and r["last"][0]["type"] == "done")
    ]
    assert [r["status"] for r in chat_results] == [200] * TURNS, [
        r["body"] for r in chat_results if r["status"] != 200
    ]
    assert all(r["body"]["response"]["messages"] for r in chat_results)

    sessions = [r["session"] for r in stream_results + chat_results]
    ids = sessions if live_database.postgres_admin_url else [uuid.UUID(s).hex for s in sessions]
    placeholders = ", ".join(["%s"] * len(ids))
    statuses = live_database.query(f"SELECT status FROM agent_sessions WHERE id IN ({placeholders})", ids)
    assert sorted(str(row[0]) for row in statuses) == ["completed"] * (2 * TURNS)
    open_turns = live_database.scalar(
        f"SELECT COUNT(*) FROM agent_turns WHERE finished_at IS NULL AND session_id IN ({placeholders})", ids
    )
    assert open_turns == 0
    assert health and set(health) == {200}, (
        f"/healthz answered 200 to {health.count(200)} of {len(health)} probes during the burst: {refusals[:3]}"
    )
