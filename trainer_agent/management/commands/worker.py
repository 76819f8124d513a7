"""`manage.py worker [--threads N]`: run agent turns (and any other task) from the database queue.

One process runs N of django-tasks-db's own worker loops (`Worker.run_task` on the rows it claims with a row
lock), each on its own thread: a turn waits on its model most of the time, so one process serves many turns at
once. On PostgreSQL the threads borrow connections from the process's pool only while they use the database
(`trainer_agent.connection_pool`), so N may exceed the pool's size. Idle threads sleep until a turn is enqueued
(PostgreSQL `LISTEN agent_turns` wakes one per task) or `--interval` passes; on PostgreSQL only one idle thread
per interval then looks (a fallback for a missed notification), so idle threads cost nothing however many there
are. One thread sweeps for turns whose worker died (their lease lapsed) and
re-enqueues them: they continue from the event store, and marks `FAILED` the task rows that killed workers
left `RUNNING`. One thread beats: the process's row of `agent_workers` (every third of a lease), which tells
every web process that a worker is alive (`/healthz`, and turns no worker would take: `turns.watch_open_turn`).
SIGINT/SIGTERM stop taking new turns and wait for the running ones (the row is deleted then); a killed process
loses no turn (another worker continues each when its lease lapses).
"""

from __future__ import annotations

import logging
import os
import signal
import threading
import time
from types import FrameType
from typing import Any

import psycopg
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import OperationalError, connection, connections
from django.utils import timezone
from django_tasks_db.management.commands.db_worker import Worker
from django_tasks_db.models import DBTaskResult
from django_tasks_db.utils import exclusive_transaction, is_locked_database_exception

from sessions_app.services import forget_worker, record_worker_heartbeat
from trainer_agent.connection_pool import give_back_connection
from trainer_agent.startup_heap import freeze_startup_objects
from trainer_agent.turns import fail_orphaned_task_rows, sweep_lapsed_turns, worker_name
from trainer_agent.wakeups import TURNS_CHANNEL

logger = logging.getLogger("trainer_agent.worker")

# SQLite: a heartbeat asks for the write lock again after at most this long (SQLite's own short sleeps in
# between), and gives up (the beat fails, logged) after as long as any other write waits (the `timeout` option).
HEARTBEAT_LOCK_POLL_MS = 20


class Command(BaseCommand):
    help = "Run agent turns from the task queue: N worker loops in one process, plus crash recovery."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--threads", type=int, default=8, help="turns run at once (default 8)")
        parser.add_argument(
            "--interval", type=float, default=1.0, help="seconds an idle loop waits before looking again"
        )
        parser.add_argument("--sweep", type=float, default=2.0, help="seconds between recovery sweeps")

    def handle(self, *args: Any, threads: int, interval: float, sweep: float, **options: Any) -> None:
        pool = WorkerPool(threads=max(1, threads), interval=interval, sweep=sweep)
        signal.signal(signal.SIGINT, pool.stop)
        signal.signal(signal.SIGTERM, pool.stop)
        freeze_startup_objects()  # out of every full collection of the turns' garbage
        self.stdout.write(f"worker: {threads} threads on {connection.vendor}; Ctrl-C stops")
        pool.run()


class WorkerPool:
    def __init__(self, *, threads: int, interval: float, sweep: float) -> None:
        self.threads = threads
        self.interval = interval
        self.sweep_interval = sweep
        self.running = True
        self.wake = threading.Condition()
        # PostgreSQL: every enqueue wakes a loop (`wakeups.wake_workers`), so polling is only a fallback, made by
        # one idle loop per interval for the whole process (`next_poll`, under `wake`). SQLite has no wake-up:
        # every idle loop polls.
        self.woken_by_enqueue = connection.vendor == "postgresql"
        self.next_poll = 0.0
        # The process's name (its `agent_workers` row); its loops' task-runner ids are `<name>-<index>`
        # (`turns.worker_process_of`), within django-tasks-db's 64 characters.
        self.name = worker_name()[:58]
        self.started_at = timezone.now()

    def stop(self, signum: int, frame: FrameType | None) -> None:
        if not self.running:
            # A second signal: stop now. The running turns are not lost: their leases lapse and another worker
            # continues them from the store.
            logger.warning("worker: stopping now")
            os._exit(1)
        logger.warning("worker: stopping after the running turns (a second Ctrl-C or SIGTERM stops at once)")
        self.running = False
        self._notify()

    def run(self) -> None:
        workers = [
            threading.Thread(target=self._loop, args=(i,), name=f"turns-{i}") for i in range(self.threads)
        ]
        self._beat()  # alive before the first claim
        helpers = [
            threading.Thread(target=self._sweep, name="sweeper", daemon=True),
            threading.Thread(target=self._heartbeat, name="heartbeat", daemon=True),
        ]
        if connection.vendor == "postgresql":
            helpers.append(threading.Thread(target=self._listen, name="listener", daemon=True))
        for thread in [*workers, *helpers]:
            thread.start()
        while any(t.is_alive() for t in workers):
            time.sleep(0.2)
        self._forget()
        if self.running:  # every loop died without being asked to stop: let a process manager restart us
            raise CommandError("worker: every worker loop stopped")

    def _notify(self, turns: int | None = None) -> None:
        """Wake one idle loop per enqueued turn (`turns`), or every loop (None: stopping). One task row needs
        one claim: waking every idle loop made each run the claim query and all but one find nothing."""
        with self.wake:
            if turns is None:
                self.wake.notify_all()
            else:
                self.wake.notify(turns)

    def _loop(self, index: int) -> None:
        """django-tasks-db's claim-and-run step, in a loop that sleeps on `wake` instead of a fixed interval."""
        worker = Worker(
            queue_names=["default"],
            interval=self.interval,
            batch=False,
            backend_name="default",
            startup_delay=False,
            max_tasks=None,
            worker_id=f"{self.name}-{index}"[:64],
            excluded_queue_names=[],
        )
        polled = True  # the first look at start-up finds what was enqueued while no worker ran
        try:
            while self.running:
                try:
                    # Without a pool the thread keeps its connection between tasks (reconnecting on every poll
                    # cost PostgreSQL more CPU than the turns); with one it gives it back after each claim and
                    # task, so an idle loop holds none. One that failed is closed below and opened again.
                    task_result = self._claim(worker)
                    if task_result is not None:
                        if polled and self.woken_by_enqueue:
                            # Found by a poll, not announced: there may be more, so another loop looks too.
                            self._notify(1)
                        try:
                            worker.run_task(task_result)
                        finally:
                            give_back_connection()
                        # The look right after a task is a poll: what it finds was not announced.
                        polled = True
                        continue
                    give_back_connection()
                except Exception:
                    # The database went away (a restart, a network cut): back off and try again with a new
                    # connection. A turn this loop had claimed is continued once its lease lapses.
                    logger.exception("worker: loop %s failed; retrying", index)
                    connections.close_all()
                    time.sleep(min(5.0, max(self.interval, 1.0)))
                    continue
                polled = self._idle()
        finally:
            connections.close_all()

    def _idle(self) -> bool:
        """Sleep until woken (a task was enqueued, or stopping: False) or it is this loop's turn to poll (True)."""
        with self.wake:
            while self.running:
                if self.wake.wait(self.interval):
                    return False
                now = time.monotonic()
                if not self.woken_by_enqueue or now >= self.next_poll:
                    self.next_poll = now + self.interval
                    return True
        return False

    @staticmethod
    def _claim(worker: Worker) -> DBTaskResult | None:
        tasks = DBTaskResult.objects.ready().filter(backend_name=worker.backend_name)
        try:
            with exclusive_transaction(tasks.db):
                task_result = tasks.get_locked()
                if task_result is not None:
                    task_result.claim(worker.worker_id)
                return task_result
        except OperationalError as exc:
            if is_locked_database_exception(exc):
                return None
            raise

    def _sweep(self) -> None:
        while self.running:
            try:
                enqueued = sweep_lapsed_turns()
                if enqueued:
                    self._notify(enqueued)
                fail_orphaned_task_rows()
                give_back_connection()
            except Exception:
                logger.exception("worker: sweep failed")
                connection.close()
            time.sleep(self.sweep_interval)

    def _heartbeat(self) -> None:
        """Beat every third of a lease (a worker counts as alive while its last beat is younger than a lease)."""
        while self.running:
            time.sleep(settings.TURN_LEASE_SECONDS / 3)
            if self.running:
                self._beat()

    def _beat(self) -> None:
        try:
            if connection.vendor == "sqlite":
                self._beat_on_sqlite()
            else:
                record_worker_heartbeat(name=self.name, threads=self.threads, started_at=self.started_at)
            give_back_connection()
        except Exception:
            logger.warning("worker: heartbeat failed", exc_info=True)
            connection.close()  # a connection the database dropped is replaced on the next beat

    def _beat_on_sqlite(self) -> None:
        """One beat on SQLite, asking for the write lock every few ms until it has it (for as long as any other
        write waits for it). SQLite's lock is no queue: a waiting writer retries after ever longer sleeps (every
        100 ms after the first third of a second) while a fresh one retries within 1-2 ms and wins, so in a
        burst of turns' writes the beat, waiting among them, went 8-10 s without the lock and the busy worker
        counted as dead. Only this thread's connection polls this way, and only while the lock is taken."""
        wait = float(connection.settings_dict["OPTIONS"].get("timeout", 5))
        deadline = time.monotonic() + wait
        with connection.cursor() as cursor:
            cursor.execute(f"PRAGMA busy_timeout = {HEARTBEAT_LOCK_POLL_MS}")
        try:
            while True:
                try:
                    record_worker_heartbeat(name=self.name, threads=self.threads, started_at=self.started_at)
                    return
                except OperationalError as exc:
                    if not is_locked_database_exception(exc) or time.monotonic() >= deadline:
                        raise
        finally:
            with connection.cursor() as cursor:  # the connection's other work waits as configured
                cursor.execute(f"PRAGMA busy_timeout = {int(wait * 1000)}")

    def _forget(self) -> None:
        try:
            forget_worker(name=self.name)
        except Exception:
            logger.warning("worker: could not remove its heartbeat", exc_info=True)
        finally:
            connection.close()

    def _listen(self) -> None:
        """Wake idle loops when a turn is enqueued (`pg_notify` from `turns.enqueue_turn`)."""
        from trainer_agent.connection_pool import conninfo

        while self.running:
            try:
                with psycopg.connect(conninfo(), autocommit=True) as conn:
                    conn.execute(f"LISTEN {TURNS_CHANNEL}")
                    for _ in conn.notifies():
                        self._notify(1)
            except Exception:
                logger.warning("worker: listener failed", exc_info=True)
                time.sleep(1.0)
