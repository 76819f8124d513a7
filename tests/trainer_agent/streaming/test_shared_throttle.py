"""AGENT_TURN_RATE is one limit per user across every web process, and survives a restart (a shared cache)."""

from __future__ import annotations

import uuid

import pytest

from tests.support.live_server import (
    DaphneServer,
    LiveDatabase,
    LiveScripts,
    WorkerProcess,
    live_env,
    mint_test_token,
)
from tests.trainer_agent.streaming.sse_client import open_stream

pytestmark = [pytest.mark.live, pytest.mark.xdist_group("live")]


def chat(server: DaphneServer, token: str) -> tuple[int, dict[str, str], dict[str, object]]:
    response = open_stream(
        server.base_url,
        "/agent/chat",
        method="POST",
        token=token,
        body={"message": "How long should I train?", "model": "scripted-ask"},
    )
    return response.status, response.headers, response.body_json()


def test_the_turn_rate_holds_across_web_processes_and_a_restart(
    live_database: LiveDatabase,
    live_scripts: LiveScripts,
    live_worker: WorkerProcess,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """With AGENT_TURN_RATE=3/min, three turns spread over two daphne processes use the user's whole rate: the
    fourth is 429 on either process, and still after one of them is restarted."""
    env = {**live_env(live_database, live_scripts), "AGENT_TURN_RATE": "3/min"}
    logs = tmp_path_factory.mktemp("throttle-logs")
    first = DaphneServer(env=env, log_path=logs / "a.log").start()
    second = DaphneServer(env=env, log_path=logs / "b.log")
    try:
        second.start()
        token = mint_test_token(uuid.uuid4())
        for server in (first, second, first):
            status, _, body = chat(server, token)
            assert status == 200, body

        status, headers, body = chat(second, token)
        assert status == 429, body
        assert "throttled" in str(body["detail"])
        assert 1 <= int(headers["retry-after"]) <= 60

        first.stop()
        first.start()
        status, _, body = chat(first, token)
        assert status == 429, "a restarted process remembers the user's turns"

        status, _, body = chat(second, mint_test_token(uuid.uuid4()))
        assert status == 200, "the limit is per user"
    finally:
        first.stop()
        second.stop()
