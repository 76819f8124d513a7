"""The turn task: what a worker runs for a turn (`run_turn_task`), how a turn is handed to the task queue
(`enqueue_turn`), and the task rows of a session's turns (deleted with the session).

`run_turn_task` is stored by its dotted path in the task queue's table: `trainer_agent.turns.run_turn_task`
(re-exported by the package) resolves for rows written before the split.
"""

from __future__ import annotations

import logging
import uuid

from django.conf import settings
from django.db import DatabaseError
from django.tasks import task

from sessions_app.models import AgentTurn
from trainer_agent.turns.execution import execute_turn
from trainer_agent.wakeups import wake_workers

logger = logging.getLogger(__name__)


def enqueue_turn(turn: AgentTurn, *, previews: bool = False) -> None:
    """Hand the turn to the task framework (and, on PostgreSQL, wake idle workers at once).

    Called once the turn is stored. Should this fail, the turn is not lost: it stays queued and the workers'
    sweep enqueues it again within two leases (`sweep_lapsed_turns`), so the failure is logged, not raised.
    `previews` travels as the task's argument, not in the store: a turn the sweep hands to another worker
    continues without previews, its stored events exactly the same.
    """
    try:
        if previews:
            run_turn_task.enqueue(str(turn.pk), previews=True)
        else:
            run_turn_task.enqueue(str(turn.pk))
        wake_workers(str(turn.pk))
    except DatabaseError:
        logger.exception("turn.enqueue_failed", extra={"turn_id": str(turn.pk)})


@task()
def run_turn_task(turn_id: str, previews: bool = False) -> dict[str, object] | None:
    """The task a worker runs for a turn: `execute_turn`. Returns the turn's outcome (None if another worker
    has it, or it has ended)."""
    result = execute_turn(turn_id=uuid.UUID(turn_id), previews=previews)
    if result is None:
        return None
    return {"status": result.status, "iterations": result.iterations, "stop_reason": result.stop_reason}


def delete_task_rows(turn_ids: list[uuid.UUID]) -> None:
    """Delete the task rows of these turns (their first argument is the turn's id)."""
    if not turn_ids or "django_tasks_db" not in settings.INSTALLED_APPS:
        return
    from django_tasks_db.models import DBTaskResult

    DBTaskResult.objects.filter(args_kwargs__args__0__in=[str(pk) for pk in turn_ids]).delete()
