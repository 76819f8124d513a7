"""Sub-agents (seeds 003/004): one structured job each, a validated pydantic output, a retry on bad output.

`run_subagent(agent_id, input=..., user_id=...)` looks the agent up in the registry, completes the input with
what the job needs from the user's data (the spec's `brief`: the plan builder's draft of a plan, a week's
sessions on the calendar with their drafted workouts, a workout's message lines) and asks the agent's model
for JSON matching the output model's schema, whatever the model: the offline one (the default without API
keys) answers from the same request (`trainer_agent.offline.structured`). The output goes through the pydantic
model and the agent's validators. A rejected answer is retried with the problems appended to the prompt, as
often as the retry policy allows; then `SubagentError` names the problems. Each attempt is recorded in the
parent session as `llm_request`/`llm_response` events with `purpose = "subagent:<id>"`, so staff see sub-agent
runs, their tokens and cost in the timeline (the offline model's at zero tokens and cost).
"""

from __future__ import annotations

import datetime as dt
import json
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.utils import timezone
from pydantic import BaseModel, Field, ValidationError, model_validator

from datasources_app import formatters, selectors
from datasources_app.workouts import Workout
from sessions_app.events import SUBAGENT_PREFIX, SubagentRequest, SubagentResponse, Tokens
from sessions_app.models import AgentSession, AgentSessionEvent, EventType
from tools_app.plan_builder import (
    MAX_WEEKS,
    WEEKDAYS,
    Weekday,
    canonical_weekday,
    default_deload_weeks,
    progression_problems,
    session_extras,
    takes_extras,
    week_dates,
)
from tools_app.plan_drafting import (
    DEFAULT_WEEKS,
    draft_plan,
    draft_week_workouts,
    week_training_days,
    written_out_days,
)
from tools_app.workout_validation import unsafe_named_exercises, user_injuries, validate_workout
from trainer_agent import tracing
from trainer_agent.agents.callbacks import callback_registry
from trainer_agent.agents.registry import AgentDefinition, AgentRegistry, RetryPolicy, agent_registry
from trainer_agent.llm.cost import cost_cents
from trainer_agent.llm.models import get_model
from trainer_agent.llm.providers import get_structured_provider
from trainer_agent.llm.types import LLMError, Usage
from trainer_agent.sink import EventSink

SMS_MAX_CHARS = 1600
PROMPT_PREVIEW_CHARS = 2000


class SubagentError(RuntimeError):
    """A sub-agent gave no acceptable output; `problems` lists why (from the last attempt)."""

    def __init__(
        self,
        agent_id: str,
        problems: list[str],
        *,
        attempts: int,
        output: Any = None,
        input: dict[str, Any] | None = None,
    ) -> None:
        self.agent_id = agent_id
        self.problems = problems
        self.attempts = attempts
        self.output = output  # the last answer, when it parsed (its problems are `problems`)
        self.input = input  # the briefed input the model was given
        listed = "; ".join(problems[:10]) or "no output"
        super().__init__(f"Sub-agent {agent_id!r} failed after {attempts} attempt(s): {listed}")


# --- Inputs ---------------------------------------------------------------------------------------------------
LOCATION_ID_DESCRIPTION = "The user's location the training is for (its equipment); default the current one."


class FitnessPlanInput(BaseModel):
    goal: str | None = Field(default=None, description="Goal in words; the user's stored goals when omitted.")
    weeks: int = Field(default=12, ge=1, le=MAX_WEEKS)
    days_per_week: int = Field(default=3, ge=1, le=7)
    deload_weeks: list[int] | None = Field(default=None, description="Default: every 5th week (5 and 10).")
    preferred_days: list[Weekday] | None = None
    start_date: dt.date | None = None
    extras: list[str] | None = Field(
        default=None,
        description="What the user asked to add to every session ('core work at the end'): the draft words it at "
        "the end of each session's prescription ('core finisher: …').",
    )
    draft: dict[str, Any] | None = Field(
        default=None,
        description="The plan builder's plan for this input and the user (their goal, equipment and injuries): "
        "return it, or improve it within the same rules.",
    )
    # Last: the stored prompt preview (PROMPT_PREVIEW_CHARS) keeps the end of the request.
    location_id: str | None = Field(default=None, description=LOCATION_ID_DESCRIPTION)


class CalendarDay(BaseModel):
    """One of the plan week's sessions as it is on the user's calendar now."""

    date: dt.date
    weekday: Weekday
    title: str
    status: str = Field(description="scheduled, completed, skipped or cancelled.")


class TrainingDay(BaseModel):
    """One training day of the plan week, laid out on the calendar, with a drafted workout."""

    date: dt.date
    weekday: Weekday
    title: str | None = None
    session: str
    focus: list[str] = Field(default_factory=list)
    duration_minutes: int = Field(ge=0)
    prescription: str = ""
    draft: dict[str, Any] | None = Field(
        default=None,
        description="A workout for the day drafted for the user (equipment, injuries, preferences, recovery, "
        "loads from recent training; the week's main lifts varied, lighter in a deload week).",
    )
    draft_notes: list[str] = Field(
        default_factory=list, description="What the draft left out or changed, and why."
    )
    markdown: str | None = Field(
        default=None,
        description="The draft written out as the day's markdown workout; it passes every check as it is.",
    )


class MicrocycleInput(BaseModel):
    week: int = Field(ge=1, le=MAX_WEEKS)
    plan: dict[str, Any] | None = Field(
        default=None, description="A fitness_plan output; built when omitted."
    )
    goal: str | None = None
    weeks: int | None = Field(default=None, ge=1, le=MAX_WEEKS)
    days_per_week: int | None = Field(default=None, ge=1, le=7)
    deload_weeks: list[int] | None = None
    preferred_days: list[Weekday] | None = None
    workouts: bool = Field(
        default=False, description="Write each training day's workout as markdown (the week chain)."
    )
    calendar: list[CalendarDay] | None = Field(
        default=None,
        description="The week's sessions as they are on the calendar now (moved, deleted or done ones as they "
        "are): the training days are the scheduled and completed ones, on their dates.",
    )
    training_days: list[TrainingDay] | None = Field(
        default=None,
        description="The week's training days: the plan's sessions on the calendar's days, each with a drafted "
        "workout when workouts is true.",
    )
    # Last: the stored prompt preview (PROMPT_PREVIEW_CHARS) keeps the end of the request.
    location_id: str | None = Field(default=None, description=LOCATION_ID_DESCRIPTION)


class WorkoutMessageInput(BaseModel):
    title: str | None = None
    markdown: str | None = Field(default=None, description="The workout as markdown.")
    workout: dict[str, Any] | None = Field(
        default=None, description="The workout as JSON (title, exercises)."
    )
    lines: list[str] | None = Field(
        default=None, description="The workout's exercises, one line each, as the app writes them."
    )
    location_id: str | None = Field(default=None, description=LOCATION_ID_DESCRIPTION)


class WorkoutStructureInput(BaseModel):
    # The draft comes first: the recorded prompt keeps only its tail, which should still show the markdown and
    # the location (`PROMPT_PREVIEW_CHARS`).
    draft: dict[str, Any] | None = Field(
        default=None,
        description="A workout drafted for this day's session, minutes and location by the coach's drafting rules "
        "(`tools_app.workout_drafting`), in the output's schema: it already respects the equipment, injuries, "
        "preferences, recovery and units. Start from it.",
    )
    markdown: str = Field(min_length=1)
    title: str | None = None
    # Last: the stored prompt preview (PROMPT_PREVIEW_CHARS) keeps the end of the request.
    location_id: str | None = Field(default=None, description=LOCATION_ID_DESCRIPTION)


# --- Outputs --------------------------------------------------------------------------------------------------
# The pydantic models below are the one description of each answer: their JSON schema is sent to the model,
# they parse the answer (weekdays in any obvious spelling become 'Mon'..'Sun'; dates are ISO) and the checks
# registered in VALIDATORS compare the parsed, normalised values.
WEEKDAY_DESCRIPTION = "Day of the week: Mon, Tue, Wed, Thu, Fri, Sat or Sun (full names are accepted)."


def _weekday_matches(weekday: str, when: dt.date | None) -> None:
    if when is not None and WEEKDAYS[when.weekday()] != weekday:
        raise ValueError(
            f"weekday {weekday} does not match date {when.isoformat()}, a {WEEKDAYS[when.weekday()]}"
        )


class PlanDay(BaseModel):
    day: int = Field(ge=1, le=7, description="The session's number within its week, 1..days_per_week.")
    date: dt.date = Field(description="ISO date of the session, e.g. '2026-03-02'.")
    weekday: Weekday = Field(description=WEEKDAY_DESCRIPTION + " The date's weekday.")
    title: str = Field(description="The calendar title, e.g. 'Upper A (week 1)'.")
    session: str = Field(description="The session's name in the split, e.g. 'Upper A'.")
    focus: list[str] = Field(description="Muscles or areas trained.")
    duration_minutes: int = Field(ge=0)
    prescription: str = Field(description="Sets, reps and effort in a line; no exercise the user must avoid.")
    notes: str = ""

    @model_validator(mode="after")
    def _date_is_the_weekday(self) -> PlanDay:
        _weekday_matches(self.weekday, self.date)
        return self


class PlanWeek(BaseModel):
    week: int = Field(ge=1, description="Week number, 1 for the first.")
    phase: str = Field(description="'build' or 'deload'.")
    deload: bool
    target_rpe: float
    volume_factor: float = Field(description="Volume relative to week 1 (deload about 0.6).")
    intensity_pct: float | None = None
    days: list[PlanDay] = Field(description="Exactly days_per_week sessions, in date order.")


class FitnessPlan(BaseModel):
    goal: str
    goal_type: str = Field(description="strength, hypertrophy, endurance, fat_loss or general.")
    split: list[str] = Field(description="The session names of a week, in order.")
    days_per_week: int = Field(ge=1, le=7)
    weekdays: list[Weekday] = Field(description="The training weekdays: " + WEEKDAY_DESCRIPTION)
    deload_weeks: list[int]
    progression: str
    start_date: dt.date = Field(description="ISO date of week 1's first day (the input's start_date).")
    end_date: dt.date = Field(description="ISO date of the last week's last day.")
    equipment: list[str] = Field(default_factory=list)
    extras: list[str] = Field(default_factory=list, description="input.extras, as given.")
    weeks: list[PlanWeek] = Field(min_length=1)


class MicrocycleDay(BaseModel):
    weekday: Weekday = Field(description=WEEKDAY_DESCRIPTION)
    rest: bool
    focus: str
    session: str | None = None
    duration_minutes: int = Field(ge=0, description="0 on a rest day.")
    prescription: str | None = None
    date: dt.date | None = Field(default=None, description="ISO date; required on a training day.")
    markdown: str | None = Field(
        default=None,
        description="With input workouts true, a training day's workout: '# Title', '## Warm-Up', "
        "'## Main Workout' with one exercise per line ('1. Dumbbell Row — 3x10 @ 16kg, rest 90s'), "
        "'## Cool Down', '## Notes'.",
    )

    @model_validator(mode="after")
    def _date_is_the_weekday(self) -> MicrocycleDay:
        _weekday_matches(self.weekday, self.date)
        return self


class Microcycle(BaseModel):
    week: int = Field(ge=1)
    deload: bool
    days_per_week: int = Field(ge=1, le=7, description="The number of training days (rest false).")
    target_rpe: float
    days: list[MicrocycleDay] = Field(description="Seven days, one per weekday, Monday first.")

    @model_validator(mode="after")
    def _monday_first(self) -> Microcycle:
        self.days.sort(key=lambda day: WEEKDAYS.index(day.weekday))
        return self


class WorkoutMessage(BaseModel):
    message: str = Field(min_length=1, json_schema_extra={"maxLength": SMS_MAX_CHARS})


# --- Validators (registered by name; they see the output, the input and the user) -----------------------------
@dataclass(frozen=True)
class SubagentCheck:
    output: Any
    input: dict[str, Any]
    user_id: uuid.UUID


def _listed(days: Iterable[tuple[str, str]]) -> str:
    return ", ".join(f"{weekday} {when}" for weekday, when in days) or "none"


def check_fitness_plan(check: SubagentCheck) -> list[str]:
    plan: FitnessPlan = check.output
    weeks = check.input.get("weeks") or len(plan.weeks)
    problems: list[str] = []
    numbers = [week.week for week in plan.weeks]
    if numbers != list(range(1, weeks + 1)):
        problems.append(f"weeks must be numbered 1..{weeks}, got {numbers}")
    requested = check.input.get("deload_weeks")
    expected = sorted(set(requested)) if requested is not None else default_deload_weeks(weeks)
    deloads = [week.week for week in plan.weeks if week.deload]
    if deloads != expected:
        problems.append(f"deload weeks must be {expected}, got {deloads}")
    if plan.deload_weeks != expected:
        problems.append(f"deload_weeks must list {expected}, got {plan.deload_weeks}")
    problems += progression_problems(plan.progression, deloads)
    start = check.input.get("start_date")
    if start and plan.start_date.isoformat() != start:
        problems.append(f"start_date must be {start}, got {plan.start_date.isoformat()}")
    days = check.input.get("days_per_week") or plan.days_per_week
    plan_data = {"start_date": plan.start_date.isoformat()}
    for week in plan.weeks:
        if len(week.days) != days:
            problems.append(f"week {week.week} has {len(week.days)} sessions, expected {days}")
        first, last = week_dates(plan_data, week.week)
        outside = [(day.weekday, day.date.isoformat()) for day in week.days if not first <= day.date <= last]
        if outside:
            problems.append(
                f"week {week.week}'s sessions must fall from {first.isoformat()} to {last.isoformat()}, "
                f"got {_listed(outside)}"
            )
    texts = [
        (f"week {week.week} {day.weekday}", f"{day.title}. {day.session}. {day.prescription}. {day.notes}")
        for week in plan.weeks
        for day in week.days
    ]
    problems += unsafe_named_exercises(texts, user_injuries(user_id=check.user_id))
    # The sub-agent's input holds the user's words (its model reads them): the check reads them as the brief did.
    for extra in session_extras(check.input.get("extras") or ()):
        missing = [
            (f"week {week.week} {day.weekday}", day.date.isoformat())
            for week in plan.weeks
            for day in week.days
            if takes_extras(day.session) and f"{extra.kind} finisher" not in day.prescription.lower()
        ]
        if missing:
            problems.append(
                f"the user asked for {extra.asked!r} in every session: end each session's prescription with "
                f"it as the draft words it ('{extra.build}'); missing in {_listed(missing[:6])}"
            )
    return problems


def check_microcycle(check: SubagentCheck) -> list[str]:
    cycle: Microcycle = check.output
    problems: list[str] = []
    weekdays = [day.weekday for day in cycle.days]
    if weekdays != list(WEEKDAYS):
        problems.append(
            f"days must hold each weekday once ({', '.join(WEEKDAYS)}), got {', '.join(weekdays) or 'none'}"
        )
    training = [day for day in cycle.days if not day.rest]
    if len(training) != cycle.days_per_week:
        problems.append(
            f"days_per_week is {cycle.days_per_week} but {len(training)} days are training days (rest false)"
        )
    wanted = check.input.get("days_per_week")
    if wanted and cycle.days_per_week != wanted:
        problems.append(f"days_per_week must be {wanted}, got {cycle.days_per_week}")
    if cycle.week != check.input.get("week"):
        problems.append(f"week must be {check.input.get('week')}, got {cycle.week}")
    if any(day.rest and day.duration_minutes for day in cycle.days):
        problems.append("rest days must have duration_minutes 0")
    undated = [day.weekday for day in training if day.date is None]
    if undated:
        problems.append(f"training days need their date: {', '.join(undated)} has none")
    plan = check.input.get("plan")
    calendar = check.input.get("calendar")
    if calendar is not None:
        problems += _calendar_problems(cycle, calendar)
    elif plan:
        problems += _plan_days_problems(cycle, plan)
    if plan:
        problems += _deload_problems(cycle, plan)
    if check.input.get("workouts"):
        for day in training:
            markdown = day.markdown or ""
            missing = [heading for heading in WEEK_DAY_SECTIONS if heading.lower() not in markdown.lower()]
            if missing:
                problems.append(f"{day.weekday}: the workout markdown lacks {', '.join(missing)}")
    texts = [
        (day.weekday, f"{day.focus}. {day.session or ''}. {day.prescription or ''}\n{day.markdown or ''}")
        for day in training
    ]
    problems += unsafe_named_exercises(texts, user_injuries(user_id=check.user_id))
    return problems


# The sections of a day's workout in the week chain (seed 003's microcycle validation).
WEEK_DAY_SECTIONS = ("# ", "## Warm-Up", "## Main Workout", "## Cool Down")
TRAINING_STATUSES = ("scheduled", "completed")


def _training_days_problem(cycle: Microcycle, expected: set[tuple[str, str]], where: str) -> list[str]:
    found = {(day.weekday, day.date.isoformat()) for day in cycle.days if not day.rest and day.date}
    if found == expected:
        return []
    order = sorted(expected | found, key=lambda item: item[1])
    missing = [item for item in order if item in expected - found]
    extra = [item for item in order if item in found - expected]
    detail = "; ".join(
        part
        for part in (
            f"missing {_listed(missing)}" if missing else "",
            f"not sessions {where}: {_listed(extra)} (make those rest days)" if extra else "",
        )
        if part
    )
    return [
        f"training days must be week {cycle.week}'s sessions {where}: expected "
        f"{_listed(sorted(expected, key=lambda item: item[1]))}; got {_listed(sorted(found, key=lambda item: item[1]))}"
        f" ({detail})"
    ]


def _calendar_problems(cycle: Microcycle, calendar: list[dict[str, Any]]) -> list[str]:
    """The week's training days must be the calendar's sessions as they are now (a moved day on its new date)."""
    expected = {
        (canonical_weekday(item["weekday"]), str(item["date"]))
        for item in calendar
        if item.get("status") in TRAINING_STATUSES
    }
    return _training_days_problem(cycle, expected, "on the calendar")


def _plan_days_problems(cycle: Microcycle, plan: dict[str, Any]) -> list[str]:
    """Without a calendar, the week's training days must be the plan's (same weekdays and dates)."""
    week = _plan_week(plan, cycle.week)
    if week is None:
        return [f"the plan has no week {cycle.week}"]
    expected = {
        (canonical_weekday(day.get("weekday") or date_weekday(day.get("date"))), str(day.get("date")))
        for day in week.get("days") or []
    }
    return _training_days_problem(cycle, expected, "in the plan")


def _deload_problems(cycle: Microcycle, plan: dict[str, Any]) -> list[str]:
    week = _plan_week(plan, cycle.week)
    if week is not None and bool(week.get("deload")) != cycle.deload:
        return [
            f"deload must be {str(bool(week.get('deload'))).lower()}: week {cycle.week} is "
            f"{'a' if week.get('deload') else 'not a'} deload week in the plan"
        ]
    return []


def _plan_week(plan: dict[str, Any], number: int) -> dict[str, Any] | None:
    return next((item for item in plan.get("weeks") or [] if item.get("week") == number), None)


def date_weekday(value: Any) -> str:
    return WEEKDAYS[dt.date.fromisoformat(str(value)).weekday()]


def check_sms_length(check: SubagentCheck) -> list[str]:
    length = len(check.output.message)
    if length > SMS_MAX_CHARS:
        return [f"message is {length} characters; an SMS holds at most {SMS_MAX_CHARS}"]
    return []


def check_workout(check: SubagentCheck) -> list[str]:
    return validate_workout(
        check.output, user_id=check.user_id, location_id=location_uuid(check.input.get("location_id"))
    )


def location_uuid(value: Any) -> uuid.UUID | None:
    return uuid.UUID(str(value)) if value else None


VALIDATORS: dict[str, Callable[[Any], list[str]]] = {
    "fitness_plan.consistent": check_fitness_plan,
    "microcycle.week": check_microcycle,
    "workout_message.sms_length": check_sms_length,
    "workout_structure.valid_workout": check_workout,
}


# --- Briefs: what a job needs from the user's data, added to its input for every model ------------------------
def fitness_plan_brief(input: dict[str, Any], user_id: uuid.UUID) -> dict[str, Any]:
    """The plan builder's draft for the input and the user."""
    if input.get("draft"):
        return input
    draft = draft_plan(
        user_id=user_id,
        goal=input.get("goal"),
        weeks=input.get("weeks"),
        days_per_week=input.get("days_per_week"),
        start_date=input.get("start_date"),
        preferred_days=input.get("preferred_days"),
        deload_weeks=input.get("deload_weeks"),
        location_id=location_uuid(input.get("location_id")),
        extras=session_extras(input.get("extras") or ()),
    )
    return input | {"draft": draft}


def microcycle_brief(input: dict[str, Any], user_id: uuid.UUID) -> dict[str, Any]:
    """The plan (the builder's when omitted) and the week's training days on the calendar, each with its drafted
    workout when the days' workouts are asked for."""
    number = input["week"]
    plan = input.get("plan") or draft_plan(
        user_id=user_id,
        goal=input.get("goal"),
        weeks=max(number, input.get("weeks") or DEFAULT_WEEKS),
        days_per_week=input.get("days_per_week"),
        preferred_days=input.get("preferred_days"),
        deload_weeks=input.get("deload_weeks"),
    )
    week = _plan_week(plan, number)
    if week is None or input.get("training_days") is not None:
        return input | {"plan": plan}
    days = week_training_days(week, input.get("calendar"))
    if input.get("workouts"):
        days = draft_week_workouts(
            user_id=user_id, week=week, days=days, location_id=location_uuid(input.get("location_id"))
        )
        days = written_out_days(days, user_id=user_id)
    fields = set(TrainingDay.model_fields)
    return input | {
        "plan": plan,
        "training_days": [{k: v for k, v in day.items() if k in fields} for day in days],
    }


def workout_message_brief(input: dict[str, Any], user_id: uuid.UUID) -> dict[str, Any]:
    """The workout's exercises as the app writes them, one line each."""
    if input.get("workout") and input.get("lines") is None:
        return input | {"lines": formatters.message_lines(input["workout"])}
    return input


type Brief = Callable[[dict[str, Any], uuid.UUID], dict[str, Any]]


@dataclass(frozen=True)
class SubagentSpec:
    """What the registry's definition cannot hold as data: the input and output models, and the brief that
    completes the input from the user's data before any model is asked."""

    input_model: type[BaseModel]
    output_model: type[BaseModel]
    brief: Brief | None = None


SPECS: dict[str, SubagentSpec] = {
    "fitness_plan": SubagentSpec(FitnessPlanInput, FitnessPlan, fitness_plan_brief),
    "microcycle": SubagentSpec(MicrocycleInput, Microcycle, microcycle_brief),
    "workout_message": SubagentSpec(WorkoutMessageInput, WorkoutMessage, workout_message_brief),
    "workout_structure": SubagentSpec(WorkoutStructureInput, Workout),
}


def register_validators(registry: AgentRegistry) -> None:
    for name, validator in VALIDATORS.items():
        registry.register_validator(name, validator)


# --- Running --------------------------------------------------------------------------------------------------
@dataclass
class SubagentResult:
    output: Any
    attempts: int
    model: str
    events: list[AgentSessionEvent] = field(default_factory=list)
    input: dict[str, Any] = field(default_factory=dict)  # as the model was given it (briefed)


def _problems_of(error: ValidationError) -> list[str]:
    return [
        f"{'.'.join(str(part) for part in item['loc']) or 'output'}: {item['msg']}" for item in error.errors()
    ]


def _validated(
    definition: AgentDefinition,
    spec: SubagentSpec,
    data: Any,
    input: dict[str, Any],
    user_id: uuid.UUID,
    registry: AgentRegistry,
) -> tuple[Any, list[str]]:
    try:
        output = spec.output_model.model_validate(data)
    except ValidationError as exc:
        return None, _problems_of(exc)
    check = SubagentCheck(output=output, input=input, user_id=user_id)
    problems = [problem for name in definition.validators for problem in registry.validator(name)(check)]
    return output, problems


RECENT_DAYS = 14


def recent_workout_lines(*, user_id: uuid.UUID, days: int = RECENT_DAYS) -> list[str]:
    """The last `days` of logged sets, one line per exercise (dated): what the week progresses from."""
    start = timezone.now() - timedelta(days=days)
    tz = selectors.user_timezone(user_id=user_id)
    lines = []
    for entry in selectors.log_entries_between(user_id=user_id, start=start):
        reps = "/".join(str(value) for value in entry.actual_reps or ())
        loads = "/".join(f"{value:g}" for value in entry.actual_load_each or () if value)
        target = "/".join(str(value) for value in entry.target_reps or ())
        load = f" @ {loads} {entry.load_unit}" if loads else ""
        rpe = f" RPE {entry.rpe:g}" if entry.rpe else ""
        when = f"{entry.completed_at.astimezone(tz):%Y-%m-%d} " if entry.completed_at else ""
        lines.append(
            f"{when}{entry.exercise_name}: reps {reps or '-'} (target {target or '-'}){load}{rpe}".strip()
        )
    return lines


def user_facts(user_id: uuid.UUID, *, location_id: uuid.UUID | None = None) -> dict[str, Any]:
    """What every sub-agent that writes training is told about the user: today, goals, injuries, standing
    preferences, the last two weeks of training, the location's equipment and the units."""
    user_settings = selectors.get_settings(user_id=user_id)
    today = selectors.local_today(user_id=user_id)
    location = (
        selectors.get_location(user_id=user_id, location_id=location_id)
        if location_id is not None
        else selectors.current_location(user_id=user_id)
    )
    preferences = selectors.active_preferences(user_id=user_id)
    return {
        "today": f"{today.isoformat()} ({WEEKDAYS[today.weekday()]})",
        "goals": selectors.goal_text(user_id=user_id),
        "injuries": [
            f"{injury.part.key} ({injury.source}): {injury.part.advice}"
            for injury in user_injuries(user_id=user_id, preferences=preferences)
        ],
        "preferences": [
            f"{item.description}" + (f" → {item.guidance}" if item.guidance else "") for item in preferences
        ],
        "recent_training": recent_workout_lines(user_id=user_id),
        "location": location.name if location is not None else "none set (bodyweight only)",
        "equipment": sorted(
            selectors.available_equipment_slugs(
                user_id=user_id, location_id=location.id if location is not None else None
            )
            if location is not None
            else {"bodyweight"}
        ),
        "weight_unit": user_settings.weight_unit,
        "distance_unit": user_settings.distance_unit,
    }


def run_subagent(
    agent_id: str,
    *,
    input: dict[str, Any],
    user_id: uuid.UUID,
    session: AgentSession | None = None,
    sink: EventSink | None = None,
    registry: AgentRegistry = agent_registry,
    callback_context: dict[str, Any] | None = None,
) -> SubagentResult:
    """Run one sub-agent to a validated output, or raise `SubagentError` naming the problems.

    The callbacks around the run (`callback_registry`) are told `callback_context` besides the outcome."""
    definition = registry.get(agent_id)  # registered at start (`wiring.wire_agents`)
    spec = SPECS[agent_id]
    try:
        clean_input = spec.input_model.model_validate(input).model_dump(mode="json")
    except ValidationError as exc:
        raise SubagentError(
            agent_id, [f"input {problem}" for problem in _problems_of(exc)], attempts=0
        ) from None
    if sink is None and session is not None:
        sink = EventSink(session=session)
    model_id = definition.resolved_model()

    def run() -> SubagentResult:
        # A SubagentError ends the span in error, with the problems (the span records the exception).
        with tracing.subagent_span(agent_id=agent_id, model=model_id):
            briefed = _briefed(agent_id, spec, clean_input, user_id)
            return _run_model(definition, spec, briefed, user_id, sink, registry, model_id)

    return callback_registry.run_agent(agent_id, run, context=callback_context)


def _purpose(definition: AgentDefinition) -> str:
    return f"{SUBAGENT_PREFIX}{definition.agent_id}"


def _briefed(agent_id: str, spec: SubagentSpec, input: dict[str, Any], user_id: uuid.UUID) -> dict[str, Any]:
    if spec.brief is None:
        return input
    try:
        briefed = spec.brief(input, user_id)
        return spec.input_model.model_validate(briefed).model_dump(mode="json")
    except (ValueError, KeyError) as exc:  # e.g. preferred_days that do not fit days_per_week
        raise SubagentError(agent_id, [f"{type(exc).__name__}: {exc}"], attempts=0) from None


def _run_model(
    definition: AgentDefinition,
    spec: SubagentSpec,
    input: dict[str, Any],
    user_id: uuid.UUID,
    sink: EventSink | None,
    registry: AgentRegistry,
    model_id: str,
) -> SubagentResult:
    model = get_model(model_id)
    provider = get_structured_provider(model_id)
    schema = spec.output_model.model_json_schema()
    policy = definition.retry_policy or RetryPolicy()
    facts = user_facts(user_id, location_id=location_uuid(input.get("location_id")))
    base_prompt = json.dumps({"input": input, "user": facts}, ensure_ascii=False, default=str)
    events: list[AgentSessionEvent] = []
    problems: list[str] = []
    output: Any = None
    attempts = 1 + policy.max_retries
    for attempt in range(1, attempts + 1):
        prompt = base_prompt
        if problems:
            listed = "\n".join(f"- {problem}" for problem in problems)
            prompt += f"\n\nYour previous answer was rejected. Fix these problems:\n{listed}"
        if sink is not None:
            events.append(_record_request(sink, definition, model_id, prompt, attempt=attempt))
        try:
            # Inside a turn's tool the request above was not written yet (`sink.deferred_writes`): it is stored
            # with the tool's result, so no session lock is held across this call.
            result = tracing.complete_json(
                provider,
                model,
                purpose=_purpose(definition),
                system=definition.prompt,
                user=prompt,
                json_schema=schema,
                schema_name=definition.agent_id,
                max_tokens=definition.max_tokens,
                temperature=definition.temperature,
            )
        except LLMError as exc:
            problems = [f"model error: {exc}"]
            if "model_error" in policy.retry_on and attempt < attempts:
                continue
            raise SubagentError(definition.agent_id, problems, attempts=attempt) from exc
        output, problems = _validated(definition, spec, result.data, input, user_id, registry)
        if sink is not None:
            events.append(
                _record_response(
                    sink,
                    definition,
                    model_id,
                    result.raw,
                    result.usage,
                    cost_cents(model, result.usage),
                    attempt,
                    problems,
                    duration_ms=result.duration_ms,
                )
            )
        if output is not None and not problems:
            return SubagentResult(output=output, attempts=attempt, model=model_id, events=events, input=input)
        if "validation_error" not in policy.retry_on:
            raise SubagentError(definition.agent_id, problems, attempts=attempt, output=output, input=input)
    raise SubagentError(definition.agent_id, problems, attempts=attempts, output=output, input=input)


def _record_request(
    sink: EventSink, definition: AgentDefinition, model_id: str, prompt: str, *, attempt: int
) -> AgentSessionEvent:
    return sink.record(
        EventType.LLM_REQUEST,
        SubagentRequest(
            model=model_id,
            purpose=_purpose(definition),
            attempt=attempt,
            prompt=prompt[-PROMPT_PREVIEW_CHARS:],
            estimated_tokens=(len(definition.prompt) + len(prompt)) // 4,
        ),
    )


def _record_response(
    sink: EventSink,
    definition: AgentDefinition,
    model_id: str,
    raw: dict[str, Any],
    usage: Usage,
    cost: float,
    attempt: int,
    problems: list[str],
    *,
    duration_ms: int | None = None,
) -> AgentSessionEvent:
    return sink.record(
        EventType.LLM_RESPONSE,
        SubagentResponse(
            model=model_id,
            purpose=_purpose(definition),
            attempt=attempt,
            valid=not problems,
            problems=problems,
            raw_response=json.loads(json.dumps(raw, default=str)),
            tokens=Tokens.model_validate(usage.as_event_tokens()),
            cost_cents=cost,
        ),
        duration_ms=duration_ms,
    )


def plan_with_fitness_plan_agent(
    *, user_id: uuid.UUID, session: AgentSession | None, **arguments: Any
) -> dict[str, Any]:
    """create_workout_plan's plan generator: the fitness_plan sub-agent, run as part of the parent session.

    Registered with tools_app.plan_builder.set_plan_generator at start-up. Raises ValueError (which the tool
    reports to the model) when the sub-agent gives no acceptable plan.
    """
    start = arguments.get("start_date")
    request = {
        "goal": arguments.get("goal"),
        "weeks": arguments.get("weeks"),
        "days_per_week": arguments.get("days_per_week"),
        "deload_weeks": arguments.get("deload_weeks"),
        "preferred_days": arguments.get("preferred_days"),
        "start_date": start.isoformat() if start is not None else None,
        "extras": [extra.asked for extra in arguments.get("extras") or ()] or None,
        "location_id": str(arguments["location_id"]) if arguments.get("location_id") else None,
    }
    try:
        result = run_subagent(
            "fitness_plan",
            input={k: v for k, v in request.items() if v is not None},
            user_id=user_id,
            session=session,
        )
    except SubagentError as exc:
        raise ValueError("; ".join(exc.problems[:5]) or str(exc)) from exc
    output = result.output
    plan: dict[str, Any] = output.model_dump(mode="json") if hasattr(output, "model_dump") else dict(output)
    return plan
