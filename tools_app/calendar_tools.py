"""The calendar and planning tools (docs/contracts.md §11.5 (tool list)): schedule_workout, update_scheduled_workout,
delete_scheduled_workout, create_workout_plan and prepare_week.

Dates are the user's local dates and may not lie in the past. schedule_workout takes a workout written out
(`workout`) or one made earlier by its `artifact_id` (one of the session's workout artifacts, or the user's current
workout): the day then holds a copy of its exercises as they are, without today's completion flags, so a model
never re-types a workout it has (slow, costly, and a chance to change it). Seed 001's spellings are accepted:
`scheduled_date` (a date, or a date-time that also sets the time), `workout_type` (the title), `exercises`
(a list, stored as the workout's exercises); for plans `plan_name`, `goal_description`, `duration_weeks`,
`workouts_per_week`. prepare_week (and create_workout_plan, for week 1) marks a plan week's sessions as being
prepared and hands them to the week chain (registered with `tools_app.plan_builder.set_week_preparer`), which
fills in each day's workout and message in the background. Plans come from the fitness_plan sub-agent (registered with `tools_app.plan_builder.set_plan_generator`; `build_plan` otherwise), are stored
active, and every planned day goes on the calendar linked to the plan. A new plan replaces the user's
active one: the old plan is archived and its future sessions cancelled.
"""

from __future__ import annotations

import datetime as dt
import uuid
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, Field, model_validator

from datasources_app import selectors, services
from datasources_app.formatters import day
from datasources_app.models import (
    Location,
    PlanStatus,
    Preparation,
    ScheduledWorkout,
    ScheduleStatus,
    WorkoutPlan,
)
from tools_app.formatting import confirmation, summary
from tools_app.plan_builder import (
    MAX_WEEKS,
    SessionExtra,
    can_prepare_weeks,
    endurance_modality,
    extras_sentence,
    generate_plan,
    request_week_preparation,
    session_extras,
    week_containing,
    week_dates,
    week_list,
)
from tools_app.registry import register
from tools_app.training_facts import injury_rules
from tools_app.types import Tool, ToolContext, ToolOutcome
from tools_app.workout_tools import (
    MadeWorkoutId,
    NonEmptyText,
    find_made_workout,
    made_workout_listing,
)
from tools_app.workout_validation import unsafe_named_exercises, user_injuries

DEFAULT_PLAN_WEEKS = 12
DEFAULT_DAYS_PER_WEEK = 3
# A week still pending after this long is taken to be lost (a worker died before the chain ran): asking
# again prepares it anew. Younger requests are not repeated.
PREPARATION_TIMEOUT = dt.timedelta(minutes=10)
NO_SESSIONS_LEFT = "has no scheduled sessions left"


class _AcceptsSeed001ScheduleFields(BaseModel):
    @model_validator(mode="before")
    @classmethod
    def _split_seed_001_fields(cls, data: Any) -> Any:
        """`scheduled_date` may carry a time ('2026-01-20T18:00'); `exercises` is a bare list of exercises."""
        if not isinstance(data, dict):
            return data
        data = dict(data)
        when = data.get("date")
        if isinstance(when, str) and "T" in when:
            day_part, _, time_part = when.partition("T")
            data["date"] = day_part
            if time_part and data.get("time") is None:
                data["time"] = time_part[:5]
        if isinstance(data.get("exercises"), list) and data.get("workout") is None:
            data["workout"] = {"exercises": data.pop("exercises")}
        return data


_SCHEDULED_ID = "From the scheduled_workouts data."


class _TakesAMadeWorkout(_AcceptsSeed001ScheduleFields):
    """A day's workout given written out (`workout`) or as one made earlier (`artifact_id`)."""

    @model_validator(mode="before")
    @classmethod
    def _lift_a_workout_named_by_id(cls, data: Any) -> Any:
        """`workout: {"artifact_id": …}` (no exercises) means `artifact_id`: `workout` takes any object, so it
        would otherwise put a day with no exercises on the calendar."""
        if not isinstance(data, dict) or not isinstance(data.get("workout"), dict):
            return data
        workout = dict(data["workout"])
        if "artifact_id" not in workout or "exercises" in workout:
            return data
        data = dict(data)
        data.setdefault("artifact_id", workout.pop("artifact_id"))
        if "title" in workout and data.get("title") is None:
            data["title"] = workout.pop("title")
        data["workout"] = workout or None
        return data


class ScheduleWorkoutInput(_TakesAMadeWorkout):
    date: dt.date = Field(description="In the user's calendar, today or later.")
    time: dt.time | None = None
    title: NonEmptyText | None = Field(
        default=None,
        description="e.g. 'Upper Body'. Default: the workout's.",
    )
    duration_minutes: int | None = Field(default=None, ge=1, le=600)
    notes: str | None = None
    artifact_id: MadeWorkoutId = None
    workout: dict[str, Any] | None = Field(
        default=None,
        description='e.g. {"exercises": [...]} as in generate_workout.',
    )


class UpdateScheduledWorkoutInput(_TakesAMadeWorkout):
    workout_id: NonEmptyText = Field(description=_SCHEDULED_ID)
    date: dt.date | None = None
    time: dt.time | None = None
    title: str | None = None
    duration_minutes: int | None = Field(default=None, ge=1, le=600)
    notes: str | None = None
    artifact_id: MadeWorkoutId = None
    workout: dict[str, Any] | None = None
    status: Literal["scheduled", "completed", "skipped", "cancelled"] | None = None


class DeleteScheduledWorkoutInput(BaseModel):
    workout_id: NonEmptyText = Field(description=_SCHEDULED_ID)


class CreateWorkoutPlanInput(BaseModel):
    name: NonEmptyText = Field(description="e.g. '12-Week Strength Block'.")
    goal: NonEmptyText = Field(description="In the user's words, e.g. 'run a 5K under 25 min'.")
    weeks: int = Field(default=DEFAULT_PLAN_WEEKS, ge=1, le=MAX_WEEKS)
    days_per_week: int | None = Field(
        default=None, ge=1, le=7, description="Default 3, or len(preferred_days)."
    )
    start_date: dt.date | None = Field(default=None, description="Default the coming Monday.")
    preferred_days: list[str] | None = Field(default=None, description="e.g. ['Monday', 'Thursday'].")
    deload_weeks: list[int] | None = Field(default=None, description="Default every 5th week.")
    location: str | None = Field(
        default=None, description="A location's name or id; default the current one."
    )
    extras: list[NonEmptyText] | None = Field(
        default=None,
        description="Added to every session, the user's words: ['core work at the end', 'a cardio finisher'].",
    )


class PrepareWeekInput(BaseModel):
    week: int | None = Field(
        default=None,
        ge=1,
        le=MAX_WEEKS,
        description="Plan week (1 = first); default this one or the next.",
    )
    plan_id: str | None = Field(default=None, description="Default the active plan.")
    workout_id: str | None = Field(
        default=None,
        description="A day to redo alone (its schedule id); the others are kept.",
    )


def _failure(message: str) -> ToolOutcome:
    return ToolOutcome(success=False, data={"error": message}, text=message)


def _past(when: dt.date, today: dt.date) -> ToolOutcome:
    return _failure(
        f"date {when.isoformat()} is in the past (today is {today.isoformat()}); choose today or later."
    )


def _scheduled_data(item: ScheduledWorkout) -> dict[str, Any]:
    return {
        "workout_id": str(item.id),
        "date": item.scheduled_date.isoformat(),
        "time": item.scheduled_time.strftime("%H:%M") if item.scheduled_time else None,
        "title": item.title,
        "duration_minutes": item.duration_minutes,
        "notes": item.notes,
        "status": item.status,
        "has_workout": bool(item.workout),
        "plan_id": str(item.plan_id) if item.plan_id else None,
    }


def _when(item: ScheduledWorkout) -> str:
    return day(item.scheduled_date) + (f" {item.scheduled_time:%H:%M}" if item.scheduled_time else "")


def _find_scheduled(ctx: ToolContext, reference: str) -> ScheduledWorkout | ToolOutcome:
    try:
        wanted: uuid.UUID | None = uuid.UUID(reference)
    except ValueError:
        wanted = None
    found = ScheduledWorkout.objects.filter(id=wanted, user_id=ctx.user_id).first() if wanted else None
    if found is not None:
        return found
    upcoming = selectors.scheduled_workouts(user_id=ctx.user_id, days_ahead=30)
    listing = "; ".join(f"{_when(item)} {item.title} id={item.id}" for item in upcoming[:10]) or "none"
    return _failure(f"Scheduled workout {reference} not found. Next 30 days: {listing}.")


# What the logging tools add to an exercise of the current workout as it is done: today's progress, not part of
# the workout a later day repeats.
_PROGRESS_KEYS = frozenset({"completed", "completed_at", "log_entry_id"})


def _planned_copy(*, artifact_id: str, title: Any, summary: Any, exercises: list[Any]) -> dict[str, Any]:
    """What the calendar keeps of a workout made earlier: its exercises exactly as they are (without today's
    progress), its title and summary, and the artifact it came from."""
    return {
        "artifact_id": artifact_id,
        "title": title,
        "summary": summary,
        "exercises": [
            {key: value for key, value in exercise.items() if key not in _PROGRESS_KEYS}
            for exercise in exercises
            if isinstance(exercise, dict)
        ],
    }


def _made_workout(ctx: ToolContext, reference: str) -> dict[str, Any] | ToolOutcome:
    """The workout `reference` (an art_ id) names, among the session's workouts and the user's current one, as
    the calendar keeps it (`_planned_copy`); else the failure that lists the ids there are."""
    found = find_made_workout(ctx, reference)
    if not isinstance(found, str):
        record = found.workout.to_record()
        return _planned_copy(
            artifact_id=reference,
            title=record.get("title"),
            summary=record.get("summary"),
            exercises=record["exercises"],
        )
    listing = made_workout_listing(ctx)
    if not listing:
        return _failure(
            f"{found}, and no workout has been made yet: make one first (draft_workout), or give its exercises "
            "in workout."
        )
    return _failure(f"{found}. Workouts you can schedule by artifact_id: {'; '.join(listing)}.")


@dataclass(frozen=True)
class _DayWorkout:
    """The workout a day is given (`workout` written out, or the copy of the one `artifact_id` names), its length
    (the one given, else the made workout's estimate) and what the summary says was attached."""

    workout: dict[str, Any] | None
    minutes: int | None
    attached: str | None = None


def _day_workout(
    args: ScheduleWorkoutInput | UpdateScheduledWorkoutInput, ctx: ToolContext
) -> _DayWorkout | ToolOutcome:
    """The workout schedule_workout and update_scheduled_workout put on a day: the one written out, or the one
    made earlier that `artifact_id` names, copied as it is; the failure for both at once or an id that names no
    workout of this user's."""
    if args.artifact_id is None:
        return _DayWorkout(args.workout, args.duration_minutes)
    if args.workout is not None:
        return _failure("Give either artifact_id (a workout you made) or workout, not both.")
    made = _made_workout(ctx, args.artifact_id)
    if isinstance(made, ToolOutcome):
        return made
    attached = f"workout {args.artifact_id} attached ({len(made['exercises'])} exercises)"
    return _DayWorkout(made, args.duration_minutes or _estimated_minutes(made), attached)


def _workout_title(workout: dict[str, Any] | None) -> str:
    return str((workout or {}).get("title") or "").strip()


def schedule_workout(args: ScheduleWorkoutInput, ctx: ToolContext) -> ToolOutcome:
    """Put a workout on the user's calendar: one written out in `workout`, or one made earlier (`artifact_id`),
    copied as it is."""
    if args.title is None and args.artifact_id is None and args.workout is None:
        return _failure("title is required (unless artifact_id names a workout you made: its title is used).")
    today = selectors.local_today(user_id=ctx.user_id)
    if args.date < today:
        return _past(args.date, today)
    given = _day_workout(args, ctx)
    if isinstance(given, ToolOutcome):
        return given
    # A workout without a title still names the day: failing would make the model write it all out again.
    title = args.title or _workout_title(given.workout) or "Workout"
    item = services.schedule_workout(
        user_id=ctx.user_id,
        scheduled_date=args.date,
        scheduled_time=args.time,
        title=title,
        duration_minutes=given.minutes,
        notes=args.notes or "",
        workout=given.workout,
    )
    text = summary("scheduled", f"{item.title} on {_when(item)}", given.attached, f"id={item.id}")
    return ToolOutcome(success=True, data={"scheduled_workout": _scheduled_data(item)}, text=text)


def _estimated_minutes(workout: dict[str, Any]) -> int | None:
    """A made workout's estimated length (its summary's), whole minutes; None without one."""
    estimate = (workout.get("summary") or {}).get("estimated_duration_min")
    if not isinstance(estimate, int | float) or isinstance(estimate, bool) or estimate <= 0:
        return None
    return min(600, max(1, round(estimate)))


def update_scheduled_workout(args: UpdateScheduledWorkoutInput, ctx: ToolContext) -> ToolOutcome:
    """Change the given fields of one scheduled workout; `artifact_id` replaces its workout with one made earlier
    (its title and length too, unless given)."""
    changes = {field: getattr(args, field) for field in args.model_fields_set - {"workout_id", "artifact_id"}}
    if not changes and args.artifact_id is None:
        return _failure(
            "Nothing to change: give date, time, title, duration_minutes, notes, artifact_id, workout or status."
        )
    found = _find_scheduled(ctx, args.workout_id)
    if isinstance(found, ToolOutcome):
        return found
    today = selectors.local_today(user_id=ctx.user_id)
    if args.date is not None and args.date < today:
        return _past(args.date, today)
    if "title" in changes and not (args.title or "").strip():
        return _failure("title must not be empty.")
    attached = None
    if args.artifact_id is not None:
        given = _day_workout(args, ctx)
        if isinstance(given, ToolOutcome):
            return given
        changes["workout"], attached = given.workout, given.attached
        changes.setdefault("title", _workout_title(given.workout) or found.title)
        if given.minutes is not None:
            changes.setdefault("duration_minutes", given.minutes)
    kwargs: dict[str, Any] = {
        {"date": "scheduled_date", "time": "scheduled_time"}.get(field, field): value
        for field, value in changes.items()
    }
    if kwargs.get("notes") is None:
        kwargs.pop("notes", None)
    notes_before = found.notes
    item = services.update_scheduled_workout(user_id=ctx.user_id, scheduled_workout_id=found.id, **kwargs)
    changed = set(changes) | (
        {"notes"} if item.notes != notes_before else set()
    )  # a plan day's, with its workout
    text = summary(
        "updated",
        f"{item.title} on {_when(item)} [{item.status}]",
        attached,
        f"changed {', '.join(sorted(changed))}",
    )
    return ToolOutcome(success=True, data={"scheduled_workout": _scheduled_data(item)}, text=text)


def delete_scheduled_workout(args: DeleteScheduledWorkoutInput, ctx: ToolContext) -> ToolOutcome:
    """Remove one scheduled workout from the calendar."""
    found = _find_scheduled(ctx, args.workout_id)
    if isinstance(found, ToolOutcome):
        return found
    services.delete_scheduled_workout(user_id=ctx.user_id, scheduled_workout_id=found.id)
    data = {"deleted": True, "workout_id": str(found.id), "title": found.title}
    return ToolOutcome(success=True, data=data, text=confirmation("deleted"))


def next_monday(today: dt.date) -> dt.date:
    return today + dt.timedelta(days=(7 - today.weekday()) % 7)


@dataclass(frozen=True)
class _PlanDraft:
    """A plan made (its sub-agent's model call done) and not yet stored."""

    plan: dict[str, Any]
    start: dt.date
    today: dt.date
    location: Location | None
    extras: tuple[SessionExtra, ...] = ()  # what the user asked to add to every session, parsed


def draft_plan(args: CreateWorkoutPlanInput, ctx: ToolContext) -> _PlanDraft | ToolOutcome:
    """create_workout_plan's `prepare` step: the plan from the fitness_plan sub-agent (a model call), read and
    made without writing, or the refusal."""
    today = selectors.local_today(user_id=ctx.user_id)
    start = args.start_date or next_monday(today)
    if start < today:
        return _past(start, today)
    days_per_week = args.days_per_week or (
        len(args.preferred_days) if args.preferred_days else DEFAULT_DAYS_PER_WEEK
    )
    location = _plan_location(ctx, args.location)
    if isinstance(location, str):
        return _failure(f"Plan not created: {location}")
    try:
        extras = session_extras(args.extras or ())
    except ValueError as exc:
        return _failure(f"Plan not created: {exc}.")
    try:
        plan = generate_plan(
            user_id=ctx.user_id,
            session=ctx.session,
            goal=args.goal,
            weeks=args.weeks,
            days_per_week=days_per_week,
            start_date=start,
            preferred_days=args.preferred_days,
            deload_weeks=args.deload_weeks,
            location_id=location.id if location is not None else None,
            extras=extras,
        )
    except ValueError as exc:
        return _failure(f"Plan not created: {exc}.")
    if location is not None:
        plan["location"] = {"id": str(location.id), "name": location.name}
    return _PlanDraft(plan=plan, start=start, today=today, location=location, extras=extras)


def create_workout_plan(args: CreateWorkoutPlanInput, ctx: ToolContext) -> ToolOutcome:
    """Store the drafted plan (`draft_plan`, run first by the loop outside the transaction) as the active
    plan and put its days on the calendar."""
    draft = ctx.prepared if ctx.prepared is not None else draft_plan(args, ctx)
    if isinstance(draft, ToolOutcome):
        return draft
    plan, start, today = draft.plan, draft.start, draft.today
    replaced = selectors.list_workout_plans(user_id=ctx.user_id, status=PlanStatus.ACTIVE)
    for old in replaced:
        services.update_workout_plan_status(user_id=ctx.user_id, plan_id=old.id, status=PlanStatus.ARCHIVED)
    created = services.create_workout_plan(
        user_id=ctx.user_id,
        name=args.name,
        goal=args.goal,
        weeks=args.weeks,
        start_date=start,
        plan=plan,
        status=PlanStatus.ACTIVE,
        schedule_days=True,
    )
    data, text = _plan_data(created, replaced), _plan_text(created, replaced)
    tell_user = " ".join(filter(None, [_plan_for_the_user(created, ctx), extras_sentence(draft.extras)]))
    if can_prepare_weeks():
        prepared = _start_week(ctx, created, week=1, today=today)
        if isinstance(prepared, dict):
            data["week_preparation"] = prepared
            text += "\n" + _preparation_text(created, prepared)
            tell_user += " I'm preparing week 1's workouts now; each one shows up in your schedule as soon as it's ready."
    return ToolOutcome(success=True, data=data, text=text, tell_user=tell_user)


def _plan_location(ctx: ToolContext, reference: str | None) -> Location | str | None:
    """The location the plan is for: the named one, else the current one (None when the user has none); a str
    says why the name matched none."""
    locations = selectors.list_locations(user_id=ctx.user_id)
    if reference is None or not reference.strip():
        return next((location for location in locations if location.is_current), None)
    wanted = reference.strip().casefold()
    found = [
        location for location in locations if str(location.id) == wanted or location.name.casefold() == wanted
    ]
    if len(found) == 1:
        return found[0]
    listing = ", ".join(f"{location.name} (id {location.id})" for location in locations) or "none"
    return f"location '{reference}' is not one of the user's locations: {listing}."


def _start_week(
    ctx: ToolContext,
    plan: WorkoutPlan,
    *,
    week: int,
    today: dt.date,
    day_again: ScheduledWorkout | None = None,
) -> dict[str, Any] | str:
    """Mark the week's remaining sessions as being prepared and ask for the chain to run; a str says why not.

    Only `day_again` when given; when some of the remaining sessions failed, only those not ready (the ready
    ones are kept, listed as `kept`): a failure costs its own days' model calls, not the week's again."""
    first, last = week_dates(plan.plan, week)
    busy = selectors.week_being_prepared(
        user_id=ctx.user_id,
        plan_id=plan.id,
        first=day_again.scheduled_date if day_again else first,
        last=day_again.scheduled_date if day_again else last,
        within=PREPARATION_TIMEOUT,
    )
    if busy:
        what = f"{day_again.title} on {day(day_again.scheduled_date)}" if day_again else f"week {week}"
        return f"{what} is already being prepared (asked at {busy:%H:%M} UTC); it will be ready shortly"
    remaining = [
        item
        for item in selectors.plan_week_workouts(
            user_id=ctx.user_id, plan_id=plan.id, first=max(first, today), last=last
        )
        if item.status == ScheduleStatus.SCHEDULED
    ]
    only: list[uuid.UUID] | None = None
    kept: list[ScheduledWorkout] = []
    if day_again is not None:
        only = [day_again.id]
    elif any(item.preparation == Preparation.FAILED for item in remaining):
        kept = [item for item in remaining if item.preparation == Preparation.READY]
        only = [item.id for item in remaining if item.preparation != Preparation.READY]
    days = services.start_week_preparation(
        user_id=ctx.user_id, plan_id=plan.id, first=max(first, today), last=last, only=only
    )
    if not days:
        return f"week {week} ({day(first)} to {day(last)}) {NO_SESSIONS_LEFT}"
    services.record_week_preparation(user_id=ctx.user_id, plan_id=plan.id, week=week, status="pending")
    request_week_preparation(
        user_id=ctx.user_id, plan_id=plan.id, week=week, session=ctx.session, workout_ids=only
    )
    prepared: dict[str, Any] = {
        "plan_id": str(plan.id),
        "week": week,
        "status": "pending",
        "days": [_day_data(item) for item in days],
    }
    if kept:
        prepared["kept"] = [_day_data(item) for item in kept]
    return prepared


def _day_data(item: ScheduledWorkout) -> dict[str, Any]:
    return {"workout_id": str(item.id), "date": item.scheduled_date.isoformat(), "title": item.title}


def _days_listing(days: list[dict[str, Any]]) -> str:
    return ", ".join(f"{day(dt.date.fromisoformat(item['date']))} {item['title']}" for item in days)


def _preparation_text(plan: WorkoutPlan, prepared: dict[str, Any]) -> str:
    listing = _days_listing(prepared["days"])
    kept = (
        f" Kept as they are (already ready): {_days_listing(prepared['kept'])}."
        if prepared.get("kept")
        else ""
    )
    return (
        f"Preparing week {prepared['week']} of {plan.name}: {listing}.{kept} Each day's workout and message "
        "appear in the schedule (scheduled_workouts) as soon as it is ready, usually within a minute: tell the "
        "user it is on its way."
    )


def prepare_week(args: PrepareWeekInput, ctx: ToolContext) -> ToolOutcome:
    """Prepare one week of a plan in the background: each session's workout and message."""
    if not can_prepare_weeks():
        return _failure("Weeks cannot be prepared here (no week preparer is registered).")
    if args.workout_id is not None:
        return _prepare_day_again(args.workout_id, ctx)
    plans = selectors.list_workout_plans(user_id=ctx.user_id, status=PlanStatus.ACTIVE)
    if args.plan_id is not None:
        try:
            wanted = uuid.UUID(args.plan_id)
        except ValueError:
            wanted = None
        found = selectors.get_workout_plan(user_id=ctx.user_id, plan_id=wanted) if wanted else None
        if found is None:
            listing = "; ".join(f"{plan.name} id={plan.id}" for plan in plans) or "none"
            return _failure(f"Plan {args.plan_id} not found. Active plans: {listing}.")
        plan = found
    elif plans:
        plan = plans[0]
    else:
        return _failure("The user has no active plan: create one with create_workout_plan first.")
    today = selectors.local_today(user_id=ctx.user_id)
    week = args.week or week_containing(plan.plan, today)
    if week == 0:
        return _failure(f"{plan.name} ended on {plan.plan.get('end_date')}; create a new plan.")
    if week > len(plan.plan.get("weeks") or []):
        return _failure(
            f"{plan.name} has {len(plan.plan.get('weeks') or [])} weeks; there is no week {week}."
        )
    prepared = _start_week(ctx, plan, week=week, today=today)
    over = isinstance(prepared, str) and prepared.endswith(NO_SESSIONS_LEFT)
    if over and args.week is None and week < len(plan.plan["weeks"]):
        week += 1  # this week is over: the next one
        prepared = _start_week(ctx, plan, week=week, today=today)
    return _preparation_outcome(plan, prepared)


def _preparation_outcome(plan: WorkoutPlan, prepared: dict[str, Any] | str) -> ToolOutcome:
    if isinstance(prepared, str):
        return _failure(f"Nothing to prepare: {prepared}.")
    return ToolOutcome(
        success=True,
        data={"week_preparation": prepared},
        text=_preparation_text(plan, prepared),
        tell_user=f"On it: I'm preparing {_days_listing(prepared['days'])}. "
        + (
            "It shows up in your schedule as soon as it's ready."
            if len(prepared["days"]) == 1
            else "Each workout and its message show up in your schedule as soon as it's ready."
        ),
    )


def _prepare_day_again(reference: str, ctx: ToolContext) -> ToolOutcome:
    """prepare_week(workout_id): one plan day prepared again on its own (its own model calls only)."""
    found = _find_scheduled(ctx, reference)
    if isinstance(found, ToolOutcome):
        return found
    plan = found.plan
    if plan is None:
        return _failure(
            f"{found.title} on {_when(found)} is not a day of a plan: only a plan's days are prepared "
            "(change it with update_scheduled_workout)."
        )
    today = selectors.local_today(user_id=ctx.user_id)
    if found.status != ScheduleStatus.SCHEDULED or found.scheduled_date < today:
        return _failure(
            f"Nothing to prepare: {found.title} on {_when(found)} is {found.status}"
            f"{' and in the past' if found.scheduled_date < today else ''}."
        )
    week = week_containing(plan.plan, found.scheduled_date)
    if week == 0:
        return _failure(f"{found.title} on {_when(found)} is outside {plan.name}'s weeks.")
    return _preparation_outcome(plan, _start_week(ctx, plan, week=week, today=today, day_again=found))


def _plan_data(created: WorkoutPlan, replaced: list[WorkoutPlan]) -> dict[str, Any]:
    plan = created.plan
    return {
        "plan_id": str(created.id),
        "name": created.name,
        "status": created.status,
        "goal_type": plan["goal_type"],
        "weeks": created.weeks,
        "start_date": plan["start_date"],
        "end_date": plan["end_date"],
        "weekdays": plan["weekdays"],
        "deload_weeks": plan["deload_weeks"],
        "scheduled_sessions": sum(len(week["days"]) for week in plan["weeks"]),
        "archived_plans": [str(old.id) for old in replaced],
        "location": (plan.get("location") or {}).get("name"),
    }


# The plan's kind and how its build weeks progress, in a coach's words (by the plan's goal_type).
_PLAN_KINDS = {
    "strength": ("strength", "adding load each build week"),
    "hypertrophy": ("muscle-building", "adding sets as the weeks go on"),
    "endurance": ("endurance", "adding about 10 % more time each build week"),
    "fat_loss": ("fat-loss", "adding rounds and effort as you get fitter"),
    "general": ("fitness", "adding rounds and effort as you get fitter"),
}


def _plan_for_the_user(created: WorkoutPlan, ctx: ToolContext) -> str:
    """What a coach says about the new plan, from its weeks: 'Your 12-week strength plan starts Mon 30 Nov: 3
    days a week (Mon, Wed, Fri) at Home, adding load each build week, with weeks 5 and 10 lighter to recover.',
    and, when the user's injuries shaped it, what it keeps them safe from ('For your knee, the workouts leave out
    squats, lunges and jumping.')."""
    plan = created.plan
    weeks = plan.get("weeks") or []
    kind, building = _PLAN_KINDS.get(str(plan.get("goal_type")), ("training", "building week by week"))
    deloads = [int(week["week"]) for week in weeks if week.get("deload")]
    where = f" at {plan['location']['name']}" if plan.get("location") else ""
    progress = f", {building}" if len(weeks) - len(deloads) > 1 else ""
    lighter = f", with {week_list(deloads)} lighter to recover" if deloads else ""
    sentences = [
        f"Your {len(weeks)}-week {kind} plan starts {day(dt.date.fromisoformat(str(plan['start_date'])))}: "
        f"{plan['days_per_week']} days a week ({', '.join(plan['weekdays'])}){where}{progress}{lighter}."
    ]
    injuries = user_injuries(user_id=ctx.user_id)
    rules = [rule for rule in injury_rules(injuries) if rule.in_a_plan]
    sessions = [str(session) for session in plan.get("split") or ()]
    on_the_bike = endurance_modality(created.goal) == "Run" and any(s.endswith(" Ride") for s in sessions)
    # The bike is said for the injury that rules out running (the same rule as the workout checks).
    running = {i.part.key for i in injuries if unsafe_named_exercises([("run", "Easy Run")], [i])}
    bike_for = next((rule.key for rule in rules if rule.key in running), rules[0].key if rules else None)
    for rule in rules:
        bike = (
            "your cardio is on the bike instead of running, and "
            if on_the_bike and rule.key == bike_for
            else ""
        )
        sentences.append(f"For your {rule.key}, {bike}{rule.in_a_plan}.")
    return " ".join(sentences)


def _plan_overview(created: WorkoutPlan) -> str:
    """'12 weeks Mon 30 Nov 2026 to Sun 21 Feb 2027, 3 days/week (Mon, Wed, Fri); 36 sessions added to the
    calendar; for Home.'"""
    plan = created.plan
    start = dt.date.fromisoformat(plan["start_date"])
    end = dt.date.fromisoformat(plan["end_date"])
    sessions = sum(len(week["days"]) for week in plan["weeks"])
    return (
        f"{created.weeks} weeks {day(start, with_year=True)} to {day(end, with_year=True)}, "
        f"{plan['days_per_week']} days/week ({', '.join(plan['weekdays'])}); {sessions} sessions added to the "
        "calendar" + (f"; for {plan['location']['name']}." if plan.get("location") else ".")
    )


def _plan_text(created: WorkoutPlan, replaced: list[WorkoutPlan]) -> str:
    plan = created.plan
    lines = [
        f"Plan: {created.name} id={created.id} [{created.status}] {plan['goal_type']}, {_plan_overview(created)}",
        f"Progression: {plan['progression']}",
    ]
    for week in plan["weeks"]:
        titles = ", ".join(item["session"] for item in week["days"])
        intensity = f", {week['intensity_pct']:g}% 1RM" if week.get("intensity_pct") is not None else ""
        lines.append(
            f"  Week {week['week']}: {len(week['days'])} workouts ({week['phase']}, RPE {week['target_rpe']:g}{intensity}): {titles}"
        )
    if replaced:
        lines.append(
            "Archived the previous active plan: "
            + ", ".join(f"{old.name} id={old.id}" for old in replaced)
            + "."
        )
    return "\n".join(lines)


SCHEDULE_WORKOUT = register(
    Tool(
        name="schedule_workout",
        description=(
            "Put a workout on the user's calendar for a day, optionally at a time. One you already made: "
            "pass its artifact_id, never write it out again."
        ),
        input_model=ScheduleWorkoutInput,
        handler=schedule_workout,
        category="calendar",
        priority=600,
        observation="summary",
        status_start="Adding it to your calendar...",
        status_done="Workout scheduled",
        aliases={"scheduled_date": "date", "workout_type": "title", "scheduled_time": "time"},
    )
)

UPDATE_SCHEDULED_WORKOUT = register(
    Tool(
        name="update_scheduled_workout",
        description=(
            "Change a scheduled workout (give only what changes), or mark it completed, skipped or cancelled."
        ),
        input_model=UpdateScheduledWorkoutInput,
        handler=update_scheduled_workout,
        category="calendar",
        priority=601,
        observation="summary",
        status_start="Updating your calendar...",
        status_done="Schedule updated",
        aliases={
            "scheduled_date": "date",
            "workout_type": "title",
            "scheduled_time": "time",
            "scheduled_workout_id": "workout_id",
        },
    )
)

DELETE_SCHEDULED_WORKOUT = register(
    Tool(
        name="delete_scheduled_workout",
        description=("Remove a scheduled workout from the user's calendar."),
        input_model=DeleteScheduledWorkoutInput,
        handler=delete_scheduled_workout,
        category="calendar",
        priority=602,
        observation="confirmation",
        status_start="Removing it from your calendar...",
        status_done="Workout removed from calendar",
        aliases={"scheduled_workout_id": "workout_id"},
    )
)

PREPARE_WEEK = register(
    Tool(
        name="prepare_week",
        description=(
            "Prepare a plan week in the background (workout + message per training day, on the calendar); "
            "create_workout_plan does week 1."
        ),
        input_model=PrepareWeekInput,
        handler=prepare_week,
        category="calendar",
        priority=611,
        observation="summary",
        status_start="Preparing your week...",
        status_done="Week on its way",
    )
)

CREATE_WORKOUT_PLAN = register(
    Tool(
        name="create_workout_plan",
        description=(
            "Create a multi-week plan toward a goal with progressive overload and deload weeks; its sessions "
            "go on the calendar and week 1 is prepared. It becomes the active plan; an earlier one is "
            "archived."
        ),
        input_model=CreateWorkoutPlanInput,
        handler=create_workout_plan,
        prepare=draft_plan,
        category="calendar",
        priority=610,
        observation="full",
        status_start="Building your plan...",
        status_done="Plan ready",
        aliases={
            "plan_name": "name",
            "goal_description": "goal",
            "duration_weeks": "weeks",
            "workouts_per_week": "days_per_week",
        },
    )
)
