"""Leases and worker liveness: how long a worker holds a turn, the keeper thread that renews what this process
runs, and which workers count as alive (their heartbeats in `agent_workers`)."""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta

from django.conf import settings
from django.db import connection
from django.utils import timezone

from sessions_app.models import AgentTurn
from sessions_app.selectors import live_worker_count
from sessions_app.services import renew_lease

logger = logging.getLogger(__name__)


def lease_duration() -> timedelta:
    return timedelta(seconds=settings.TURN_LEASE_SECONDS)


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{threading.get_ident()}:{uuid.uuid4().hex[:8]}"


# A worker beats every third of a lease; it counts as alive until it has missed about nine beats, so a worker
# starved of CPU by a burst of turns is not taken for dead (its task rows failed, /healthz saying not ready).
WORKER_ALIVE_LEASES = 3


def workers_seen_after(now: datetime) -> datetime:
    """A worker whose last heartbeat is after this is alive."""
    return now - WORKER_ALIVE_LEASES * lease_duration()


def live_workers() -> int:
    """Worker processes alive now (`workers_seen_after`)."""
    return live_worker_count(seen_after=workers_seen_after(timezone.now()))


class LeaseKeeper:
    """Renews the leases of the turns this process is running, every third of a lease, from one thread and one
    database connection per process (through model calls and tools; the loop's own writes renew them too)."""

    def __init__(self) -> None:
        self.running: dict[uuid.UUID, tuple[AgentTurn, timedelta]] = {}
        self.lock = threading.Lock()
        self.thread: threading.Thread | None = None

    @contextmanager
    def held(self, turn: AgentTurn, lease: timedelta) -> Iterator[None]:
        with self.lock:
            self.running[turn.pk] = (turn, lease)
            if self.thread is None or not self.thread.is_alive():
                self.thread = threading.Thread(target=self._run, name="lease-keeper", daemon=True)
                self.thread.start()
        try:
            yield
        finally:
            with self.lock:
                self.running.pop(turn.pk, None)

    def _run(self) -> None:
        while True:
            time.sleep(settings.TURN_LEASE_SECONDS / 3)
            with self.lock:
                running = list(self.running.values())
            for turn, lease in running:
                try:
                    renew_lease(turn=turn, lease=lease)
                except Exception:
                    logger.warning(
                        "turn.lease_renewal_failed", extra={"turn_id": str(turn.pk)}, exc_info=True
                    )
                    connection.close()  # a connection the database dropped is replaced on the next renewal


lease_keeper = LeaseKeeper()
