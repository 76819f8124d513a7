"""Many turns on few connections (issue 27 item 8): a real worker process runs more turns at once than its pool
has connections, because its threads give their connection back around every model call.

A worker with 16 loops and a pool of 3, a scripted model that takes 0.5 s per call: 16 streamed turns at once
must all end `done`, most of them must have run at the same time, and PostgreSQL must have seen no more of the
worker's connections than its pool, its LISTEN connection and the previews' notifying one (pg_stat_activity, by
`application_name`).
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from tests.support.live_server import (
    DaphneServer,
    LiveDatabase,
    WorkerProcess,
    create_live_database,
    mint_test_token,
    server_env,
    write_scripts,
)
from tests.trainer_agent.streaming.sse_client import post_turn

pytestmark = [pytest.mark.live, pytest.mark.xdist_group("live")]

TURNS = 16
POOL_SIZE = 3
MODEL = "scripted-pool"
WORKER_APP = "pooled-worker"
STEPS = [
    {"tool": "message_notify_user", "args": {"message": "Looking at your history"}},
    {"tool": "message_notify_user", "args": {"message": "Here is the plan"}},
    {"tool": "idle", "args": {"reason": "done"}},
]


def named(url: str, application_name: str) -> str:
    return f"{url}{'&' if '?' in url else '?'}application_name={application_name}"


@pytest.fixture(scope="module")
def pooled_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LiveDatabase, DaphneServer]]:
    directory: Path = tmp_path_factory.mktemp("pool")
    database = create_live_database(name="pool", tmp_dir=directory)
    if database.postgres_admin_url is None:
        database.drop()
        pytest.skip("the connection pool is PostgreSQL's")
    scripts = write_scripts(directory, {"models": {MODEL: {"delay_s": 0.5, "steps": STEPS}}})
    env = server_env(
        database_url=database.url,
        scripts=scripts,
        extra={
            "AGENT_TURN_RATE": "1000/min",
            "DATABASE_POOL_MAX_SIZE": str(POOL_SIZE),
            "DATABASE_POOL_MIN_SIZE": "1",
        },
    )
    worker_env = {**env, "DATABASE_URL": named(env["DATABASE_URL"], WORKER_APP)}
    worker = WorkerProcess(env=worker_env, log_path=directory / "worker.log", threads=TURNS).start()
    web = DaphneServer(env={**env, "DATABASE_POOL_MAX_SIZE": "8"}, log_path=directory / "web.log").start()
    try:
        yield database, web
    finally:
        web.stop()
        worker.stop()
        database.drop()


def _stream(base_url: str) -> dict[str, Any]:
    stream = post_turn(base_url, mint_test_token(uuid.uuid4()), {"message": "Quick one", "model": MODEL})
    try:
        frames = [event.json() for event in stream.read_frames_until_done()] if stream.status == 200 else []
        return {"status": stream.status, "session": stream.headers.get("x-session-id"), "last": frames[-1:]}
    finally:
        stream.close()


def test_a_worker_runs_more_turns_at_once_than_its_pool_has_connections(
    pooled_stack: tuple[LiveDatabase, DaphneServer],
) -> None:
    database, web = pooled_stack
    peak = [0]
    stop = threading.Event()

    def sample() -> None:
        while not stop.is_set():
            count = database.scalar(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = %s AND application_name = %s",
                [database.name, WORKER_APP],
            )
            peak[0] = max(peak[0], int(count or 0))
            time.sleep(0.05)

    sampler = threading.Thread(target=sample)
    sampler.start()
    try:
        with ThreadPoolExecutor(max_workers=TURNS) as pool:
            results = list(pool.map(lambda _: _stream(web.base_url), range(TURNS)))
    finally:
        stop.set()
        sampler.join()

    assert [r["status"] for r in results] == [200] * TURNS
    assert all(r["last"] and r["last"][0]["type"] == "done" for r in results), results
    spans = database.query("SELECT started_at, finished_at FROM agent_turns WHERE finished_at IS NOT NULL")
    assert len(spans) == TURNS
    at_once = max(sum(1 for s, f in spans if s <= start < f) for start, _ in spans)
    assert at_once > POOL_SIZE + 1, f"only {at_once} turns ran at once"
    # The pool's connections, the LISTEN connection and the previews' notifying one; nothing per turn.
    assert 0 < peak[0] <= POOL_SIZE + 2, f"the worker held {peak[0]} connections"
