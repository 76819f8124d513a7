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
import re
import uuid
from collections.abc import Collection
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from django.db import transaction
from django.tasks import task
from django_tasks_db.backend import DatabaseBackend

from datasources_app import selectors, services
from datasources_app.models import Preparation, ScheduledWorkout, ScheduleStatus, WorkoutPlan
from sessions_app.events import SUBAGENT_PREFIX, ErrorData
from sessions_app.models import AgentSession, EventType
from sessions_app.services import record_usage
from tools_app.plan_builder import WEEKDAYS, week_dates
from tools_app.plan_drafting import fresh_week_days
from tools_app.unit_conversion import workout_in_user_units
from tools_app.workout_tools import estimate_duration_min
from tools_app.workout_validation import fill_implements
from trainer_agent.agents.callbacks import AgentRun, callback_registry
from trainer_agent.agents.subagents import SubagentError, run_subagent
from trainer_agent.sink import EventSink
from trainer_agent.tenancy import acting_for
from trainer_agent.wakeups import wake_workers

logger = logging.getLogger(__name__)

DAY_FAILED_CALLBACK = "week.day_failed"
CHAIN_CONTEXT = "week_chain"


@dataclass
class WeekOutcome:
    """What one run of the chain did: the days it prepared and the ones it could not (with the reason)."""

    plan_id: uuid.UUID
    week: int
    prepared: list[uuid.UUID] = field(default_factory=list)
    failed: dict[uuid.UUID, str] = field(default_factory=dict)


def calendar_days(items: list[ScheduledWorkout]) -> list[dict[str, Any]]:
    """The plan week's sessions as they are on the calendar now: the microcycle lays the week out on these."""
    return [
        {
            "date": item.scheduled_date.isoformat(),
            "weekday": WEEKDAYS[item.scheduled_date.weekday()],
            "title": item.title,
            "status": item.status,
        }
        for item in items
    ]


def plan_location_id(plan: WorkoutPlan) -> str | None:
    """The location the plan is for (create_workout_plan records it), if it still exists; else None (the
    current one)."""
    location = (plan.plan or {}).get("location") or {}
    try:
        wanted = uuid.UUID(str(location.get("id")))
    except ValueError:
        return None
    found = selectors.get_location(user_id=plan.user_id, location_id=wanted)
    return str(found.id) if found is not None else None


def prepare_plan_week(
    *,
    user_id: uuid.UUID,
    plan_id: uuid.UUID,
    week: int,
    session: AgentSession | None = None,
    only: Collection[uuid.UUID] | None = None,
) -> WeekOutcome:
    """Run the chain for the plan's week and store each pending day's workout and message (or its failure).

    The microcycle is given the week as it is on the calendar now (a moved day on its new date), and every
    sub-agent writes for the plan's location. A refused layout fails no day it does not name: those keep the
    answer's workout, the others their drafted one written out (`_layouts_despite`). `only`: the days to prepare
    again on their own (the week's others are left as they are); each is drafted again from the user's injuries,
    preferences and equipment as they are now and written out, so only its own structure and message are asked
    for. Failures are stored on the days and the plan's week and written to the session as a non-fatal `error`
    event."""
    outcome = WeekOutcome(plan_id=plan_id, week=week)
    plan = selectors.get_workout_plan(user_id=user_id, plan_id=plan_id)
    if plan is None:
        return outcome
    first, last = week_dates(plan.plan, week)
    on_calendar = selectors.plan_week_workouts(user_id=user_id, plan_id=plan_id, first=first, last=last)
    pending = {
        item.scheduled_date.isoformat(): item
        for item in on_calendar
        if item.preparation == Preparation.PENDING and (only is None or item.pk in only)
    }
    if not pending:
        return outcome
    sink = EventSink(session=session) if session is not None else None
    location_id = plan_location_id(plan)
    reasons: dict[str, str] = {}
    if only is not None:
        # A day prepared again starts from a draft made now: the injuries, preferences and equipment said since
        # the week was laid out count (the earlier layout's workout does not know them).
        layouts, reasons = _fresh_layouts(
            plan, week, on_calendar, pending, user_id=user_id, location_id=location_id
        )
    else:
        try:
            layouts = _lay_out_week(
                plan, week, on_calendar, pending, user_id=user_id, location_id=location_id, sink=sink
            )
        except SubagentError as exc:
            _report(outcome, user_id=user_id, sink=sink, agent_id="microcycle", problems=exc.problems)
            layouts, reasons = _layouts_despite(exc, pending, user_id=user_id)
    for when, reason in reasons.items():
        if when in pending:
            _fail(outcome, pending[when], reason)
    for when, layout in layouts.items():
        found = pending.get(when)
        if found is not None and found.pk not in outcome.failed:
            _prepare_day(
                outcome,
                found,
                str(layout.get("markdown") or ""),
                draft=layout.get("draft"),
                location_id=location_id,
                sink=sink,
            )
    for item in pending.values():
        if item.pk not in outcome.prepared and item.pk not in outcome.failed:
            _fail(outcome, item, "the week's plan has no session on this day")
    return _finish(outcome, user_id=user_id, first=first, last=last, only=only)


def _lay_out_week(
    plan: WorkoutPlan,
    week: int,
    on_calendar: list[ScheduledWorkout],
    pending: dict[str, ScheduledWorkout],
    *,
    user_id: uuid.UUID,
    location_id: str | None,
    sink: EventSink | None,
) -> dict[str, dict[str, Any]]:
    """The microcycle's layout of the week: each training day's `{date, markdown, draft}` by ISO date, in its
    order, also kept on each pending day so that the day can be prepared again on its own."""
    laid_out = run_subagent(
        "microcycle",
        input={
            "week": week,
            "plan": plan.plan,
            "workouts": True,
            "calendar": calendar_days(on_calendar),
            "location_id": location_id,
        },
        user_id=user_id,
        sink=sink,
    )
    # Each day's drafted workout, as the microcycle was given it: the structure starts from the same draft.
    drafts = {str(day["date"]): day.get("draft") for day in laid_out.input.get("training_days") or []}
    layouts: dict[str, dict[str, Any]] = {}
    for day in laid_out.output.days:
        if day.rest or not day.date:
            continue
        when = day.date.isoformat()
        layouts[when] = {"date": when, "markdown": day.markdown or "", "draft": drafts.get(when)}
        found = pending.get(when)
        if found is not None:
            services.store_day_layout(user_id=user_id, scheduled_workout_id=found.pk, layout=layouts[when])
    return layouts


def _fresh_layouts(
    plan: WorkoutPlan,
    week: int,
    on_calendar: list[ScheduledWorkout],
    pending: dict[str, ScheduledWorkout],
    *,
    user_id: uuid.UUID,
    location_id: str | None,
) -> tuple[dict[str, dict[str, Any]], dict[str, str]]:
    """The pending days laid out from drafts made now (`plan_drafting.fresh_week_days`), by ISO date, each kept on
    its day; and why a day has none (nothing fits it now), by date."""
    days = fresh_week_days(
        user_id=user_id,
        plan=plan.plan,
        week=week,
        calendar=calendar_days(on_calendar),
        location_id=uuid.UUID(location_id) if location_id else None,
    )
    layouts: dict[str, dict[str, Any]] = {}
    reasons: dict[str, str] = {}
    for day in days:
        when = str(day["date"])
        if when not in pending:
            continue
        if not day.get("markdown"):
            notes = [str(note) for note in day.get("draft_notes") or []]
            reasons[when] = f"no workout fits the day now ({notes[-1] if notes else 'nothing fits'})"
            continue
        layouts[when] = {"date": when, "markdown": day["markdown"], "draft": day.get("draft")}
        services.store_day_layout(
            user_id=user_id, scheduled_workout_id=pending[when].pk, layout=layouts[when]
        )
    return layouts, reasons


_LABELLED = re.compile(r"^(?P<days>(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)(?:, (?:Mon|Tue|Wed|Thu|Fri|Sat|Sun))*): ")


def _layouts_despite(
    error: SubagentError, pending: dict[str, ScheduledWorkout], *, user_id: uuid.UUID
) -> tuple[dict[str, dict[str, Any]], dict[str, str]]:
    """The week laid out although the microcycle's last answer was refused: a day its problems do not name keeps
    the answer's workout, a day they name (or every day, when a problem is about the week) takes its drafted
    workout written out, which passes the same check; a day with neither fails alone, with its own reason."""
    bad_days: set[str] = set()
    about_the_week = False
    for problem in error.problems:
        found = _LABELLED.match(problem)
        if found is None:
            about_the_week = True
        else:
            bad_days.update(found["days"].split(", "))
    answered: dict[str, str] = {}
    if error.output is not None and not about_the_week:
        answered = {
            day.date.isoformat(): day.markdown
            for day in error.output.days
            if not day.rest and day.date and day.markdown and day.weekday not in bad_days
        }
    layouts: dict[str, dict[str, Any]] = {}
    reasons: dict[str, str] = {}
    for day in (error.input or {}).get("training_days") or []:
        when = str(day.get("date"))
        markdown = answered.get(when) or day.get("markdown")
        if when not in pending:
            continue
        if not markdown:
            mine = [
                p
                for p in error.problems
                if str(day.get("weekday")) in bad_days and p.startswith(str(day.get("weekday")))
            ]
            reasons[when] = f"the week could not be laid out ({_plain_week_problem(mine or error.problems)})"
            continue
        layouts[when] = {"date": when, "markdown": markdown, "draft": day.get("draft")}
        services.store_day_layout(
            user_id=user_id, scheduled_workout_id=pending[when].pk, layout=layouts[when]
        )
    for when in pending:
        if when not in layouts and when not in reasons:
            reasons[when] = f"the week could not be laid out ({_plain_week_problem(error.problems)})"
    return layouts, reasons


def _plain_week_problem(problems: list[str]) -> str:
    """The first problem in plain words ("it came out with Leg Press, which isn't a good idea for your knee")."""
    for problem in problems:
        text = _LABELLED.sub("", problem, count=1)
        named = re.match(r"^'(?P<name>[^']+)' (?P<rest>.+)$", text, re.S)
        if named is not None and (plain := plain_problem(f"exercise 1 '{named['name']}': {named['rest']}")):
            return f"it {plain}"
    return _first_problem(problems)


def _first_problem(problems: list[str]) -> str:
    text = problems[0] if problems else "no usable answer"
    return text if len(text) <= 300 else text[:297] + "..."


def _prepare_day(
    outcome: WeekOutcome,
    item: ScheduledWorkout,
    markdown: str,
    *,
    draft: dict[str, Any] | None,
    location_id: str | None,
    sink: EventSink | None,
) -> None:
    context = {"user_id": item.user_id, "scheduled_workout_id": item.pk}
    agent_id = "workout_structure"
    try:
        structure = run_subagent(
            agent_id,
            input={"markdown": markdown, "title": item.title, "location_id": location_id, "draft": draft},
            user_id=item.user_id,
            sink=sink,
            callback_context=context,
        ).output
        # Loads or distances in the user's other unit are stored converted to theirs.
        workout = workout_in_user_units(structure, user_id=item.user_id)[0].model_dump(
            mode="json", exclude_none=True
        )
        fill_implements(workout["exercises"])  # a pair's load reads "each hand" in the message and the app
        agent_id = "workout_message"
        message = run_subagent(
            agent_id,
            input={"workout": workout, "title": item.title, "location_id": location_id},
            user_id=item.user_id,
            sink=sink,
            callback_context=context,
        ).output.message
    except SubagentError as exc:
        # The day_failed callback has stored the failure already; keep the outcome in step.
        outcome.failed[item.pk] = day_failure_reason(agent_id, exc.problems)
        _report(outcome, user_id=item.user_id, sink=sink, agent_id=agent_id, problems=exc.problems, day=item)
        return
    # The schedule says how long the prepared workout takes, not the plan's minutes for the day.
    minutes = estimate_duration_min(workout["exercises"]) if workout.get("exercises") else None
    if services.store_prepared_workout(
        user_id=item.user_id,
        scheduled_workout_id=item.pk,
        workout=workout,
        message=message,
        duration_minutes=minutes,
    ):
        outcome.prepared.append(item.pk)  # else the user changed or removed the day meanwhile: theirs wins


def day_failure_reason(agent_id: str, problems: list[str]) -> str:
    """Why a day failed, as the coach can pass it on: which step, and the first exercise's problem in plain words
    ("the workout came out with Walking Lunge, which isn't a good idea for your knee"). A reason only: the
    schedule says "preparation failed: <reason>" and what to offer, and the plan's week "1 of 3 days, because
    <reason>", so the reason says neither again. The validator's full text is in the chain's error event."""
    step = "workout" if agent_id == "workout_structure" else "message"
    why = next((plain for problem in problems if (plain := plain_problem(str(problem)))), None)
    return f"the {step} {why or 'did not come out right'}"


_EXERCISE_PROBLEM = re.compile(r"^exercise \d+ '(?P<name>[^']+)'[^:]*: (?P<problem>.+)$", re.S)
_UNSAFE = re.compile(r"unsafe for the user's (?P<part>[a-z][a-z ]*?) \(")
_NOT_HERE = re.compile(
    r"needs (?P<kit>.+?), which (?:is|are) not available(?: at (?P<where>[^(]+?))?(?: \(|$)"
)
_AVOIDED = re.compile(r"excluded by the user's preference")
_TOO_LONG = re.compile(r"an SMS holds at most (\d+)")


def plain_problem(problem: str) -> str | None:
    """A validation problem as the user would be told it, after what it is about ('came out with Walking Lunge,
    which isn't a good idea for your knee', a message too long for a text); None for one about the answer's form."""
    if too_long := _TOO_LONG.search(problem):
        return f"came out longer than the {too_long[1]} characters a text can hold"
    found = _EXERCISE_PROBLEM.match(problem.strip())
    if found is None:
        return None
    name, text = found["name"], found["problem"]
    if unsafe := _UNSAFE.search(text):
        return f"came out with {name}, which isn't a good idea for your {unsafe['part']}"
    if missing := _NOT_HERE.search(text):
        kit = [item.strip().replace("_", " ") for item in missing["kit"].split(",")]
        lacking = " or ".join([", ".join(kit[:-1]), kit[-1]] if len(kit) > 1 else kit)
        if missing["where"]:
            return f"came out with {name}, but {missing['where'].strip()} has no {lacking}"
        return f"came out with {name}, but you have no {lacking} where you train"
    if _AVOIDED.search(text):
        return f"came out with {name}, which you asked to leave out"
    return None


def _fail(outcome: WeekOutcome, item: ScheduledWorkout, reason: str) -> None:
    services.fail_workout_preparation(user_id=item.user_id, scheduled_workout_id=item.pk, error=reason)
    outcome.failed[item.pk] = reason


def _report(
    outcome: WeekOutcome,
    *,
    user_id: uuid.UUID,
    sink: EventSink | None,
    agent_id: str,
    problems: list[str],
    day: ScheduledWorkout | None = None,
) -> None:
    """A failure staff see in the session: a non-fatal `error` event naming the sub-agent and the week."""
    logger.warning(
        "week.subagent_failed",
        extra={"plan_id": str(outcome.plan_id), "week": outcome.week, "agent": agent_id},
    )
    if sink is None:
        return
    what = f"{day.title} on {day.scheduled_date.isoformat()}" if day is not None else f"week {outcome.week}"
    sink.record(
        EventType.ERROR,
        ErrorData(
            message=f"{agent_id} failed for {what}: {'; '.join(problems[:5]) or 'no usable answer'}",
            context=CHAIN_CONTEXT,
            purpose=f"{SUBAGENT_PREFIX}{agent_id}",
            plan_id=str(outcome.plan_id),
            week=outcome.week,
            scheduled_workout_id=str(day.pk) if day is not None else None,
            fatal=False,
            stack=None,
        ),
    )


def _finish(
    outcome: WeekOutcome,
    *,
    user_id: uuid.UUID,
    first: date,
    last: date,
    only: Collection[uuid.UUID] | None,
) -> WeekOutcome:
    """Record on the plan how the week went: ready, partly failed or failed (with the first reason). A run that
    prepared some days again counts the week's other days as they stand (none recorded while one is pending:
    the run preparing it records the week)."""
    failed_reasons = dict(outcome.failed)
    prepared = list(outcome.prepared)
    if only is not None:
        others = selectors.plan_week_workouts(
            user_id=user_id, plan_id=outcome.plan_id, first=first, last=last
        )
        for item in others:
            if item.pk in only or item.status != ScheduleStatus.SCHEDULED:
                continue
            if item.preparation == Preparation.PENDING:
                return outcome
            if item.preparation == Preparation.FAILED:
                failed_reasons[item.pk] = item.preparation_error
            elif item.preparation == Preparation.READY:
                prepared.append(item.pk)
    failed = len(failed_reasons)
    total = failed + len(prepared)
    if not failed:
        status, reason = "ready", ""
    else:
        status = "failed" if not prepared else "partly_failed"
        reasons = list(failed_reasons.values())
        said = reasons[0][:1].lower() + reasons[0][1:]  # a reason stored before reasons were clauses
        because = "because" if len(set(reasons)) == 1 else "the first because"
        reason = f"{failed} of {total} day{'s' if total != 1 else ''}, {because} {said}"
    services.record_week_preparation(
        user_id=user_id, plan_id=outcome.plan_id, week=outcome.week, status=status, reason=reason
    )
    return outcome


def mark_day_failed(run: AgentRun) -> None:
    """Callback (on_failure of workout_structure and workout_message): the day is `failed`, with the problems."""
    scheduled_id = run.context.get("scheduled_workout_id")
    if scheduled_id is None:
        return
    problems = getattr(run.error, "problems", None) or [str(run.error)]
    services.fail_workout_preparation(
        user_id=run.context["user_id"],
        scheduled_workout_id=scheduled_id,
        error=day_failure_reason(run.agent_id, [str(problem) for problem in problems]),
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
def prepare_week_task(
    user_id: str, plan_id: str, week: int, session_id: str | None, workout_ids: list[str] | None = None
) -> dict[str, Any]:
    """The background run of the chain for one plan week (enqueued when the asking tool's transaction commits),
    as the user's unit of work (row-level security on PostgreSQL); `workout_ids`: only those days, again."""
    owner = uuid.UUID(user_id)
    only = {uuid.UUID(value) for value in workout_ids} if workout_ids is not None else None
    with acting_for(owner):
        return _prepare_week(owner, uuid.UUID(plan_id), week, session_id, only)


def _prepare_week(
    user_id: uuid.UUID,
    plan_id: uuid.UUID,
    week: int,
    session_id: str | None,
    only: set[uuid.UUID] | None = None,
) -> dict[str, Any]:
    session = AgentSession.objects.filter(pk=session_id, user_id=user_id).first() if session_id else None
    try:
        outcome = prepare_plan_week(user_id=user_id, plan_id=plan_id, week=week, session=session, only=only)
    except Exception:
        # A bug must not leave the days pending forever: they say so, and the user can ask again.
        logger.exception("week.failed", extra={"plan_id": str(plan_id), "week": week})
        _fail_pending_days(user_id=user_id, plan_id=plan_id, week=week, only=only)
        raise
    if session is not None:
        # Fold the sub-agents' cost into the session's totals (status and a running turn's lease untouched).
        record_usage(session=session)
    return {"week": week, "prepared": len(outcome.prepared), "failed": len(outcome.failed)}


def _fail_pending_days(
    *, user_id: uuid.UUID, plan_id: uuid.UUID, week: int, only: set[uuid.UUID] | None
) -> None:
    plan = WorkoutPlan.objects.filter(pk=plan_id, user_id=user_id).first()
    if plan is None:
        return
    first, last = week_dates(plan.plan, week)
    for item in selectors.plan_week_workouts(user_id=plan.user_id, plan_id=plan_id, first=first, last=last):
        if item.preparation == Preparation.PENDING and (only is None or item.pk in only):
            services.fail_workout_preparation(
                user_id=plan.user_id,
                scheduled_workout_id=item.pk,
                error="something went wrong on our side",
            )


def enqueue_week_preparation(
    *,
    user_id: uuid.UUID,
    plan_id: uuid.UUID,
    week: int,
    session: AgentSession | None,
    workout_ids: list[uuid.UUID] | None = None,
) -> None:
    """The week preparer registered with tools_app: run the chain as its own task (for `workout_ids` only,
    when given: the days prepared again on their own).

    With the database task backend the task row is written in the caller's transaction, so it commits with
    the tool's writes and result: a worker that dies right after the commit cannot lose the week. Other
    backends (the immediate one of tests and `TASKS_BACKEND=immediate`) enqueue once the transaction commits,
    so the chain never runs inside the tool's transaction.
    """
    session_id = str(session.pk) if session is not None else None

    def enqueue() -> None:
        only = [str(value) for value in workout_ids] if workout_ids is not None else None
        prepare_week_task.enqueue(str(user_id), str(plan_id), week, session_id, only)
        wake_workers(f"week:{plan_id}:{week}")

    if isinstance(prepare_week_task.get_backend(), DatabaseBackend):
        enqueue()
    else:
        transaction.on_commit(enqueue)
