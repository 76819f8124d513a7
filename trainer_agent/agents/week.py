"""The week chain of seed 003: an active plan's week → `microcycle` → per training day `workout_structure`
(validated like generate_workout) → `workout_message` (≤ 1,600 characters), stored on the calendar.

It runs as its own task (`prepare_week_task`), not inside the tool that asks for it: a week is 1 + 2 × (training
days) model calls, far too long to hold a turn's tool (and its transaction) open. `prepare_week` and
`create_workout_plan` mark the week's sessions `pending` and enqueue the task when their transaction commits;
the turn ends at once ("your week is on its way"), and each day turns `ready` (workout + message) or `failed`
(with the reason) as the chain gets to it, so the schedule shows progress day by day. The sub-agents' requests
and answers are written to the session that asked (purpose `subagent:<id>`), where staff see them with their
cost; the loop ignores them. Callbacks fire around every sub-agent run (`callback_registry`); the chain
registers its own (`week.day_failed`) that marks a day failed whenever its structure or message run fails.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.db import transaction
from django.tasks import task
from django.utils import timezone
from django_tasks_db.backend import DatabaseBackend

from datasources_app import selectors, services
from datasources_app.models import Preparation, ScheduledWorkout, WorkoutPlan
from sessions_app.models import AgentSession
from sessions_app.services import record_usage
from tools_app.plan_builder import week_dates
from tools_app.unit_conversion import workout_in_user_units
from trainer_agent.agents.callbacks import AgentRun, callback_registry
from trainer_agent.agents.subagents import SubagentError, run_subagent
from trainer_agent.sink import EventSink
from trainer_agent.tenancy import acting_for
from trainer_agent.turns import wake_workers

logger = logging.getLogger(__name__)

RECENT_DAYS = 14
DAY_FAILED_CALLBACK = "week.day_failed"


@dataclass
class WeekOutcome:
    """What one run of the chain did: the days it prepared and the ones it could not (with the reason)."""

    plan_id: uuid.UUID
    week: int
    prepared: list[uuid.UUID] = field(default_factory=list)
    failed: dict[uuid.UUID, str] = field(default_factory=dict)


def recent_workout_lines(*, user_id: uuid.UUID, days: int = RECENT_DAYS) -> list[str]:
    """The last `days` of logged sets, one line per exercise: what the microcycle progresses from."""
    start = timezone.now() - timedelta(days=days)
    lines = []
    for entry in selectors.log_entries_between(user_id=user_id, start=start):
        reps = "/".join(str(value) for value in entry.actual_reps or ())
        loads = "/".join(f"{value:g}" for value in entry.actual_load_each or () if value)
        target = "/".join(str(value) for value in entry.target_reps or ())
        load = f" @ {loads} {entry.load_unit}" if loads else ""
        rpe = f" RPE {entry.rpe:g}" if entry.rpe else ""
        lines.append(f"{entry.exercise_name}: reps {reps or '-'} (target {target or '-'}){load}{rpe}".strip())
    return lines


def prepare_plan_week(
    *, user_id: uuid.UUID, plan_id: uuid.UUID, week: int, session: AgentSession | None = None
) -> WeekOutcome:
    """Run the chain for the plan's week and store each pending day's workout and message (or its failure)."""
    outcome = WeekOutcome(plan_id=plan_id, week=week)
    plan = selectors.get_workout_plan(user_id=user_id, plan_id=plan_id)
    if plan is None:
        return outcome
    first, last = week_dates(plan.plan, week)
    pending = {
        item.scheduled_date.isoformat(): item
        for item in selectors.plan_week_workouts(user_id=user_id, plan_id=plan_id, first=first, last=last)
        if item.preparation == Preparation.PENDING
    }
    if not pending:
        return outcome
    sink = EventSink(session=session) if session is not None else None
    try:
        cycle = run_subagent(
            "microcycle",
            input={
                "week": week,
                "plan": plan.plan,
                "workouts": True,
                "recent_workouts": recent_workout_lines(user_id=user_id),
            },
            user_id=user_id,
            sink=sink,
        ).output
    except SubagentError as exc:
        for item in pending.values():
            _fail(outcome, item, f"The week could not be laid out: {'; '.join(exc.problems[:3])}")
        return outcome
    for day in cycle.days:
        found = pending.get(str(day.date)) if not day.rest else None
        if found is not None:
            _prepare_day(outcome, found, day.markdown or "", title=found.title, sink=sink)
    for item in pending.values():
        if item.pk not in outcome.prepared and item.pk not in outcome.failed:
            _fail(outcome, item, "The week's layout has no session on this day.")
    return outcome


def _prepare_day(
    outcome: WeekOutcome, item: ScheduledWorkout, markdown: str, *, title: str, sink: EventSink | None
) -> None:
    context = {"user_id": item.user_id, "scheduled_workout_id": item.pk}
    try:
        structure = run_subagent(
            "workout_structure",
            input={"markdown": markdown, "title": title},
            user_id=item.user_id,
            sink=sink,
            callback_context=context,
        ).output
        # Loads or distances in the user's other unit are stored converted to theirs.
        workout = workout_in_user_units(structure, user_id=item.user_id)[0].model_dump(
            mode="json", exclude_none=True
        )
        message = run_subagent(
            "workout_message",
            input={"workout": workout, "title": title},
            user_id=item.user_id,
            sink=sink,
            callback_context=context,
        ).output.message
    except SubagentError as exc:
        # The day_failed callback has stored the failure already; keep the outcome in step.
        outcome.failed[item.pk] = "; ".join(exc.problems[:3])
        return
    if services.store_prepared_workout(
        user_id=item.user_id, scheduled_workout_id=item.pk, workout=workout, message=message
    ):
        outcome.prepared.append(item.pk)  # else the user changed or removed the day meanwhile: theirs wins


def _fail(outcome: WeekOutcome, item: ScheduledWorkout, reason: str) -> None:
    services.fail_workout_preparation(user_id=item.user_id, scheduled_workout_id=item.pk, error=reason)
    outcome.failed[item.pk] = reason


def mark_day_failed(run: AgentRun) -> None:
    """Callback (on_failure of workout_structure and workout_message): the day is `failed`, with the problems."""
    scheduled_id = run.context.get("scheduled_workout_id")
    if scheduled_id is None:
        return
    problems = getattr(run.error, "problems", None) or [str(run.error)]
    services.fail_workout_preparation(
        user_id=run.context["user_id"],
        scheduled_workout_id=scheduled_id,
        error=f"{run.agent_id}: {'; '.join(str(p) for p in problems[:3])}",
    )


def register_week_callbacks() -> None:
    if DAY_FAILED_CALLBACK not in callback_registry.names():
        callback_registry.register(
            DAY_FAILED_CALLBACK,
            mark_day_failed,
            when="on_failure",
            agents=("workout_structure", "workout_message"),
        )


@task()
def prepare_week_task(user_id: str, plan_id: str, week: int, session_id: str | None) -> dict[str, Any]:
    """The background run of the chain for one plan week (enqueued when the asking tool's transaction commits),
    as the user's unit of work (row-level security on PostgreSQL)."""
    owner = uuid.UUID(user_id)
    with acting_for(owner):
        return _prepare_week(owner, uuid.UUID(plan_id), week, session_id)


def _prepare_week(
    user_id: uuid.UUID, plan_id: uuid.UUID, week: int, session_id: str | None
) -> dict[str, Any]:
    session = AgentSession.objects.filter(pk=session_id, user_id=user_id).first() if session_id else None
    try:
        outcome = prepare_plan_week(user_id=user_id, plan_id=plan_id, week=week, session=session)
    except Exception:
        # A bug must not leave the days pending forever: they say so, and the user can ask again.
        logger.exception("week.failed", extra={"plan_id": str(plan_id), "week": week})
        _fail_pending_days(user_id=user_id, plan_id=plan_id, week=week)
        raise
    if session is not None:
        # Fold the sub-agents' cost into the session's totals (status and a running turn's lease untouched).
        record_usage(session=session)
    return {"week": week, "prepared": len(outcome.prepared), "failed": len(outcome.failed)}


def _fail_pending_days(*, user_id: uuid.UUID, plan_id: uuid.UUID, week: int) -> None:
    plan = WorkoutPlan.objects.filter(pk=plan_id, user_id=user_id).first()
    if plan is None:
        return
    first, last = week_dates(plan.plan, week)
    for item in selectors.plan_week_workouts(user_id=plan.user_id, plan_id=plan_id, first=first, last=last):
        if item.preparation == Preparation.PENDING:
            services.fail_workout_preparation(
                user_id=plan.user_id,
                scheduled_workout_id=item.pk,
                error="The week could not be prepared (internal error); ask again.",
            )


def enqueue_week_preparation(
    *, user_id: uuid.UUID, plan_id: uuid.UUID, week: int, session: AgentSession | None
) -> None:
    """The week preparer registered with tools_app: run the chain as its own task.

    With the database task backend the task row is written in the caller's transaction, so it commits with
    the tool's writes and result: a worker that dies right after the commit cannot lose the week. Other
    backends (the immediate one of tests and `TASKS_BACKEND=immediate`) enqueue once the transaction commits,
    so the chain never runs inside the tool's transaction.
    """
    session_id = str(session.pk) if session is not None else None

    def enqueue() -> None:
        prepare_week_task.enqueue(str(user_id), str(plan_id), week, session_id)
        wake_workers(f"week:{plan_id}:{week}")

    if isinstance(prepare_week_task.get_backend(), DatabaseBackend):
        enqueue()
    else:
        transaction.on_commit(enqueue)
