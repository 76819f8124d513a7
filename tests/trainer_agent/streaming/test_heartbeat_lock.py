"""A worker whose heartbeat waited for SQLite's write lock is alive the moment the beat lands.

On SQLite every write waits for one database-wide lock; in a burst of turns a beat waited there 8-10 s (the
turns' writes kept taking the lock first). A beat stamped before that wait landed already older than three
leases: the busy worker counted as dead, `/healthz` answered 503 and queued turns ended with "No worker is
running" (test_burst). Here the test itself holds the lock for longer than that window.
"""

from __future__ import annotations

import contextlib
import sqlite3
import time
from datetime import UTC, datetime
from urllib.parse import urlsplit

import pytest

from tests.support.live_server import TEST_LEASE_SECONDS, LiveDatabase, WorkerProcess, wait_for

pytestmark = [pytest.mark.live, pytest.mark.xdist_group("live")]

ALIVE_SECONDS = 3 * float(TEST_LEASE_SECONDS)  # a worker is alive while its last beat is younger than this


def _last_beat(database: LiveDatabase) -> datetime | None:
    value = database.scalar("SELECT MAX(seen_at) FROM agent_workers")
    return None if value is None else datetime.fromisoformat(str(value)).replace(tzinfo=UTC)


def _age(beat: datetime | None) -> float:
    return float("inf") if beat is None else (datetime.now(UTC) - beat).total_seconds()


def test_a_heartbeat_that_waited_for_the_write_lock_lands_fresh(
    live_database: LiveDatabase, live_worker: WorkerProcess
) -> None:
    if live_database.postgres_admin_url is not None:
        pytest.skip("SQLite's database-wide write lock")
    assert live_worker.alive(), live_worker.log_tail()
    wait_for(lambda: _age(_last_beat(live_database)) < float(TEST_LEASE_SECONDS), "the worker's heartbeat")

    with contextlib.closing(sqlite3.connect(urlsplit(live_database.url).path, isolation_level=None)) as lock:
        # Every write of the worker, its heartbeat's included, waits from here.
        lock.execute("BEGIN IMMEDIATE")
        before = _last_beat(live_database)
        time.sleep(ALIVE_SECONDS + 2)
        assert _age(_last_beat(live_database)) > ALIVE_SECONDS  # no beat got through meanwhile
        lock.execute("COMMIT")

    landed = wait_for(
        lambda: (beat := _last_beat(live_database)) is not None and beat != before and beat,
        "the heartbeat that waited for the lock",
        timeout=30,
    )
    age = _age(landed)
    assert age < ALIVE_SECONDS, (
        f"the beat that waited for the lock landed {age:.1f} s old: the worker, alive and beating, counted as "
        f"dead (alive: a beat younger than {ALIVE_SECONDS:.0f} s)"
    )
