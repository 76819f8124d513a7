"""As an operator runs it: daphne and a worker (multiprocess metrics, JSON logs), a turn through the API, then a
Prometheus scrape of daphne's `/metrics` and the worker's log lines (docs/architecture.md "Metrics", "Logs")."""

from __future__ import annotations

import http.client
import json
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.support.live_server import (
    DaphneServer,
    LiveDatabase,
    LiveScripts,
    WorkerProcess,
    create_live_database,
    live_env,
    mint_test_token,
)
from tests.trainer_agent.streaming.sse_client import open_stream

pytestmark = [pytest.mark.live, pytest.mark.xdist_group("live")]

METRICS_TOKEN = "scrape-token-for-the-test"


@dataclass
class Deployment:
    server: DaphneServer
    worker: WorkerProcess


@pytest.fixture(scope="module")
def metrics_database(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveDatabase]:
    """A database of its own: the suite's shared live worker polls the shared one and could take this turn,
    counting it in a process whose metrics this deployment does not serve."""
    database = create_live_database(name="metrics", tmp_dir=tmp_path_factory.mktemp("metrics-db"))
    yield database
    database.drop()


@pytest.fixture(scope="module")
def deployment(
    metrics_database: LiveDatabase, live_scripts: LiveScripts, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Deployment]:
    """Web and worker sharing a PROMETHEUS_MULTIPROC_DIR, logging JSON; scrapes need the token (no network is
    allowed without it, not even loopback)."""
    directory = tmp_path_factory.mktemp("metrics-live")
    (directory / "prom").mkdir()
    env = {
        **live_env(metrics_database, live_scripts),
        "PROMETHEUS_MULTIPROC_DIR": str(directory / "prom"),
        "METRICS_TOKEN": METRICS_TOKEN,
        "METRICS_ALLOWED_NETWORKS": "",
        "LOG_FORMAT": "json",
        "AGENT_LOG_LEVEL": "INFO",
    }
    worker = WorkerProcess(env=env, log_path=directory / "worker.log", threads=2).start()
    try:
        server = DaphneServer(env=env, log_path=directory / "daphne.log").start()
    except Exception:
        worker.stop()
        raise
    yield Deployment(server=server, worker=worker)
    server.stop()
    worker.stop()


def get_metrics(server: DaphneServer, token: str | None) -> tuple[int, str]:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        conn.request("GET", "/metrics", headers={"Authorization": f"Bearer {token}"} if token else {})
        response = conn.getresponse()
        return response.status, response.read().decode()
    finally:
        conn.close()


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def json_lines(path: Path) -> list[dict[str, Any]]:
    """The log's JSON records (the worker's one stdout banner is not a log record)."""
    return [json.loads(line) for line in path.read_text().splitlines() if line.startswith("{")]


def test_a_turn_run_by_the_worker_is_in_the_web_process_scrape(
    deployment: Deployment, metrics_database: LiveDatabase
) -> None:
    token = mint_test_token(uuid.uuid4())
    response = open_stream(
        deployment.server.base_url,
        "/agent/chat",
        method="POST",
        token=token,
        body={"message": "Give me a quick chest workout", "model": "scripted-workout"},
    )
    assert response.status == 200, response.body_json()
    session_id = str(response.body_json()["sessionId"])

    # Counted by the worker process, served by daphne (multiprocess mode). The worker counts a turn's end just
    # after committing it, which is what answers the chat: scrape until that count and the turn's duration are
    # there (a few ms; the two are written one after the other, and a scrape between them saw only the first).
    finished = ("trainer_turns_finished_total", (("model", "scripted-workout"), ("status", "completed")))
    duration = (
        "trainer_turn_duration_seconds_count",
        (("model", "scripted-workout"), ("status", "completed")),
    )
    deadline = time.monotonic() + 10
    while True:
        status, text = get_metrics(deployment.server, METRICS_TOKEN)
        assert status == 200, text
        found = samples(text)
        if (found.get(finished) and found.get(duration)) or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert found[("trainer_turns_started_total", (("model", "scripted-workout"),))] >= 1
    assert (
        found[("trainer_turns_finished_total", (("model", "scripted-workout"), ("status", "completed")))] >= 1
    )
    assert found[duration] >= 1
    assert found[("trainer_turn_time_to_first_frame_seconds_count", (("model", "scripted-workout"),))] >= 1
    assert (
        found[
            (
                "trainer_llm_call_duration_seconds_count",
                (("model", "scripted-workout"), ("purpose", "trainer")),
            )
        ]
        >= 3
    )
    for tool in ("generate_workout", "message_notify_user", "idle"):
        assert found[("trainer_tool_calls_total", (("tool", tool),))] >= 1
    assert ("trainer_turn_queue_depth", ()) in found

    # The worker's records of that turn are JSON lines carrying the turn's ids.
    turn_id = uuid.UUID(
        str(
            metrics_database.scalar(
                "SELECT id FROM agent_turns WHERE session_id = %s", [uuid.UUID(session_id).hex]
            )
        )
    )
    deadline = time.monotonic() + 10
    records: list[dict[str, Any]] = []
    while time.monotonic() < deadline and not records:
        records = [r for r in json_lines(deployment.worker.log_path) if r.get("turn_id") == str(turn_id)]
        time.sleep(0.1)
    assert records, deployment.worker.log_tail()
    assert {r["session_id"] for r in records} == {session_id}
    tool_records = [r for r in records if r.get("message") == "tool.executed"]
    assert {"generate_workout", "message_notify_user", "idle"} <= {r["tool_name"] for r in tool_records}
    assert all(r["level"] and r["logger"] and r["time"] for r in records)
    console = [r for r in records if r["logger"] == "agent.console"]
    assert console, "the console log's lines are JSON records too, with the event's type and number"
    assert {"event_type", "sequence"} <= set(console[0])


def test_a_scrape_without_the_token_is_refused(deployment: Deployment) -> None:
    status, body = get_metrics(deployment.server, None)
    assert status == 401
    assert "METRICS_TOKEN" in json.loads(body)["detail"]
    status, _ = get_metrics(deployment.server, "not-the-token")
    assert status == 401
