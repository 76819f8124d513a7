"""The sweeper (every worker, periodically): turns whose worker died are handed to another worker
(`sweep_lapsed_turns`), and the task rows such a worker left running are marked failed
(`fail_orphaned_task_rows`)."""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.utils import timezone

from sessions_app.models import AgentTurn
from sessions_app.selectors import lapsed_turns, live_worker_names
from trainer_agent.turns.lease import lease_duration, workers_seen_after
from trainer_agent.turns.tasks import enqueue_turn

logger = logging.getLogger(__name__)


def sweep_lapsed_turns() -> int:
    """Re-enqueue the open turns whose worker died (lease lapsed) or that no worker took within two leases:
    a worker continues each from the store. Returns how many were re-enqueued."""
    now = timezone.now()
    lease = lease_duration()
    found = lapsed_turns(now=now, queued_before=now - 2 * lease)
    enqueued = 0
    for turn_id in found:
        # Compare-and-set on enqueued_at: of the sweeps of every worker process, one enqueues the turn, and a
        # turn gets at most one more task per lease however slow the queue is.
        if AgentTurn.objects.filter(pk=turn_id, finished_at__isnull=True, enqueued_at__lt=now - lease).update(
            enqueued_at=now
        ):
            enqueue_turn(AgentTurn(pk=turn_id))
            enqueued += 1
            logger.info("turn.reenqueued", extra={"turn_id": str(turn_id)})
    return enqueued


class WorkerDied(Exception):
    """The exception a task row of a killed worker is marked failed with (`fail_orphaned_task_rows`).

    Task rows name it by `WORKER_DIED_PATH`, the path it had before `turns` became a package (the package
    re-exports it), so old and new rows name it alike and both resolve."""


WORKER_DIED_PATH = "trainer_agent.turns.WorkerDied"


def worker_process_of(worker_id: str) -> str:
    """The worker process (its `agent_workers` name) of one of its loops' task-runner ids (`<name>-<index>`)."""
    return worker_id.rsplit("-", 1)[0]


def fail_orphaned_task_rows() -> int:
    """Mark `FAILED` the task rows left `RUNNING` by worker processes that are no longer alive (killed: their
    heartbeat lapsed or is gone), so every task row of a dead worker ends in a terminal state. A turn such a
    row ran is not lost: the sweep hands it to another worker (a task row of its own). Returns how many."""
    if "django_tasks_db" not in settings.INSTALLED_APPS:
        return 0
    from django.tasks import TaskResultStatus as TaskStatus
    from django_tasks_db.models import DBTaskResult

    now = timezone.now()
    alive = set(live_worker_names(seen_after=workers_seen_after(now)))
    running = DBTaskResult.objects.filter(status=TaskStatus.RUNNING, started_at__lt=now - lease_duration())
    orphaned: dict[str, list[Any]] = {}
    for pk, worker_ids in running.values_list("pk", "worker_ids")[:1000]:
        last = str(worker_ids[-1]) if isinstance(worker_ids, list) and worker_ids else ""
        process = worker_process_of(last)
        if process not in alive:
            orphaned.setdefault(process, []).append(pk)
    failed = 0
    for process, pks in orphaned.items():
        failed += DBTaskResult.objects.filter(pk__in=pks, status=TaskStatus.RUNNING).update(
            status=TaskStatus.FAILED,
            finished_at=now,
            return_value=None,
            exception_class_path=WORKER_DIED_PATH,
            traceback=f"WorkerDied: the worker process {process or '(unknown)'} stopped while running this task",
        )
    if failed:
        logger.warning("worker.orphaned_tasks_failed", extra={"count": failed})
    return failed
