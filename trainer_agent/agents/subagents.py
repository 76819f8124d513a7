"""Sub-agents (seeds 003/004): one structured job each, a validated pydantic output, a retry on bad output.

`run_subagent(agent_id, input=..., user_id=...)` looks the agent up in the registry. With the `offline` model
(the default without API keys) it runs the deterministic variant from `offline_subagents`; otherwise it asks the
model for JSON matching the output model's schema. Either way the output goes through the same pydantic model
and the agent's validators. A rejected model answer is retried with the problems appended to the prompt, as
often as the retry policy allows; then `SubagentError` names the problems. Each attempt is recorded in the
parent session as `llm_request`/`llm_response` events with `purpose = "subagent:<id>"`, so staff see sub-agent
runs, their tokens and cost in the timeline; offline runs appear the same way with model "offline" and zero cost.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from datasources_app import selectors
from sessions_app.models import AgentSession, AgentSessionEvent, EventType
from tools_app.plan_builder import MAX_WEEKS, WEEKDAYS, default_deload_weeks
from tools_app.workout_schema import Workout
from tools_app.workout_validation import validate_workout
from trainer_agent.agents import offline_subagents
from trainer_agent.agents.callbacks import callback_registry
from trainer_agent.agents.registry import AgentDefinition, AgentRegistry, RetryPolicy, agent_registry
from trainer_agent.llm.cost import cost_cents
from trainer_agent.llm.models import get_model
from trainer_agent.llm.providers import get_structured_provider
from trainer_agent.llm.types import LLMError, Usage
from trainer_agent.sink import EventSink

OFFLINE_MODEL = "offline"
SMS_MAX_CHARS = offline_subagents.SMS_MAX_CHARS
PROMPT_PREVIEW_CHARS = 2000


class SubagentError(RuntimeError):
    """A sub-agent gave no acceptable output; `problems` lists why (from the last attempt)."""

    def __init__(self, agent_id: str, problems: list[str], *, attempts: int) -> None:
        self.agent_id = agent_id
        self.problems = problems
        self.attempts = attempts
        listed = "; ".join(problems[:10]) or "no output"
        super().__init__(f"Sub-agent {agent_id!r} failed after {attempts} attempt(s): {listed}")


# --- Inputs ---------------------------------------------------------------------------------------------------
class FitnessPlanInput(BaseModel):
    goal: str | None = Field(default=None, description="Goal in words; the user's stored goals when omitted.")
    weeks: int = Field(default=12, ge=1, le=MAX_WEEKS)
    days_per_week: int = Field(default=3, ge=1, le=7)
    deload_weeks: list[int] | None = Field(default=None, description="Default: every 5th week (5 and 10).")
    preferred_days: list[str] | None = None
    start_date: date | None = None


class MicrocycleInput(BaseModel):
    week: int = Field(ge=1, le=MAX_WEEKS)
    plan: dict[str, Any] | None = Field(
        default=None, description="A fitness_plan output; built when omitted."
    )
    goal: str | None = None
    weeks: int | None = Field(default=None, ge=1, le=MAX_WEEKS)
    days_per_week: int | None = Field(default=None, ge=1, le=7)
    deload_weeks: list[int] | None = None
    preferred_days: list[str] | None = None
    workouts: bool = Field(
        default=False, description="Write each training day's workout as markdown (the week chain)."
    )
    recent_workouts: list[str] | None = Field(
        default=None, description="The user's last two weeks of logged workouts, one line each (progression)."
    )


class WorkoutMessageInput(BaseModel):
    title: str | None = None
    markdown: str | None = Field(default=None, description="The workout as markdown.")
    workout: dict[str, Any] | None = Field(
        default=None, description="The workout as JSON (title, exercises)."
    )


class WorkoutStructureInput(BaseModel):
    markdown: str = Field(min_length=1)
    title: str | None = None


# --- Outputs --------------------------------------------------------------------------------------------------
class PlanDay(BaseModel):
    day: int = Field(ge=1, le=7)
    date: str
    weekday: str
    title: str
    session: str
    focus: list[str]
    duration_minutes: int = Field(ge=0)
    prescription: str
    notes: str = ""


class PlanWeek(BaseModel):
    week: int = Field(ge=1)
    phase: str
    deload: bool
    target_rpe: float
    volume_factor: float
    intensity_pct: float | None = None
    days: list[PlanDay]


class FitnessPlan(BaseModel):
    goal: str
    goal_type: str
    split: list[str]
    days_per_week: int = Field(ge=1, le=7)
    weekdays: list[str]
    deload_weeks: list[int]
    progression: str
    start_date: str
    end_date: str
    equipment: list[str] = Field(default_factory=list)
    weeks: list[PlanWeek] = Field(min_length=1)


class MicrocycleDay(BaseModel):
    weekday: str
    rest: bool
    focus: str
    session: str | None = None
    duration_minutes: int = Field(ge=0)
    prescription: str | None = None
    date: str | None = None
    markdown: str | None = Field(
        default=None,
        description="With input workouts true, a training day's workout: '# Title', '## Warm-Up', "
        "'## Main Workout' with one exercise per line ('1. Goblet Squat — 3x10 @ 16kg, rest 90s'), "
        "'## Cool Down', '## Notes'.",
    )


class Microcycle(BaseModel):
    week: int = Field(ge=1)
    deload: bool
    days_per_week: int = Field(ge=1, le=7)
    target_rpe: float
    days: list[MicrocycleDay]


class WorkoutMessage(BaseModel):
    message: str = Field(min_length=1, json_schema_extra={"maxLength": SMS_MAX_CHARS})


# --- Validators (registered by name; they see the output, the input and the user) -----------------------------
@dataclass(frozen=True)
class SubagentCheck:
    output: Any
    input: dict[str, Any]
    user_id: uuid.UUID


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
    days = check.input.get("days_per_week") or plan.days_per_week
    for week in plan.weeks:
        if len(week.days) != days:
            problems.append(f"week {week.week} has {len(week.days)} sessions, not {days}")
    return problems


def check_microcycle(check: SubagentCheck) -> list[str]:
    cycle: Microcycle = check.output
    problems: list[str] = []
    weekdays = [day.weekday for day in cycle.days]
    if weekdays != list(WEEKDAYS):
        problems.append(f"days must be {', '.join(WEEKDAYS)} in order, got {', '.join(weekdays)}")
    training = [day for day in cycle.days if not day.rest]
    if len(training) != cycle.days_per_week:
        problems.append(f"{len(training)} training days but days_per_week is {cycle.days_per_week}")
    wanted = check.input.get("days_per_week")
    if wanted and cycle.days_per_week != wanted:
        problems.append(f"days_per_week must be {wanted}, got {cycle.days_per_week}")
    if cycle.week != check.input.get("week"):
        problems.append(f"week must be {check.input.get('week')}, got {cycle.week}")
    if any(day.rest and day.duration_minutes for day in cycle.days):
        problems.append("rest days must have duration_minutes 0")
    plan = check.input.get("plan")
    if plan:
        problems += _plan_week_problems(cycle, plan)
    if check.input.get("workouts"):
        for day in training:
            markdown = day.markdown or ""
            missing = [heading for heading in WEEK_DAY_SECTIONS if heading.lower() not in markdown.lower()]
            if missing:
                problems.append(f"{day.weekday}: the workout markdown lacks {', '.join(missing)}")
    return problems


# The sections of a day's workout in the week chain (seed 003's microcycle validation).
WEEK_DAY_SECTIONS = ("# ", "## Warm-Up", "## Main Workout", "## Cool Down")


def _plan_week_problems(cycle: Microcycle, plan: dict[str, Any]) -> list[str]:
    """The week's training days must be the plan's (same weekdays and dates), so they land on its calendar."""
    week = next((item for item in plan.get("weeks") or [] if item.get("week") == cycle.week), None)
    if week is None:
        return [f"the plan has no week {cycle.week}"]
    expected = {str(day.get("weekday")): str(day.get("date")) for day in week.get("days") or []}
    found = {day.weekday: str(day.date) for day in cycle.days if not day.rest}
    if found != expected:
        listed = ", ".join(f"{weekday} {when}" for weekday, when in expected.items())
        return [f"training days must be the plan's week {cycle.week} days ({listed})"]
    if bool(week.get("deload")) != cycle.deload:
        return [f"week {cycle.week} is {'a' if week.get('deload') else 'not a'} deload week in the plan"]
    return []


def check_sms_length(check: SubagentCheck) -> list[str]:
    length = len(check.output.message)
    if length > SMS_MAX_CHARS:
        return [f"message is {length} characters; an SMS holds at most {SMS_MAX_CHARS}"]
    return []


def check_workout(check: SubagentCheck) -> list[str]:
    return validate_workout(check.output, user_id=check.user_id)


VALIDATORS: dict[str, Callable[[Any], list[str]]] = {
    "fitness_plan.consistent": check_fitness_plan,
    "microcycle.week": check_microcycle,
    "workout_message.sms_length": check_sms_length,
    "workout_structure.valid_workout": check_workout,
}


@dataclass(frozen=True)
class SubagentSpec:
    """What the registry's definition cannot hold as data: the input model and the offline variant."""

    input_model: type[BaseModel]
    output_model: type[BaseModel]
    offline: Callable[..., dict[str, Any]]


SPECS: dict[str, SubagentSpec] = {
    "fitness_plan": SubagentSpec(FitnessPlanInput, FitnessPlan, offline_subagents.fitness_plan),
    "microcycle": SubagentSpec(MicrocycleInput, Microcycle, offline_subagents.microcycle),
    "workout_message": SubagentSpec(WorkoutMessageInput, WorkoutMessage, offline_subagents.workout_message),
    "workout_structure": SubagentSpec(WorkoutStructureInput, Workout, offline_subagents.workout_structure),
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


def _user_facts(user_id: uuid.UUID) -> dict[str, Any]:
    user_settings = selectors.get_settings(user_id=user_id)
    return {
        "goals": offline_subagents.goal_text(user_id=user_id),
        "equipment": sorted(selectors.available_equipment_slugs(user_id=user_id)),
        "weight_unit": user_settings.weight_unit,
        "distance_unit": user_settings.distance_unit,
    }


def _ensure_registered(agent_id: str, registry: AgentRegistry) -> AgentDefinition:
    if agent_id not in registry.ids() and registry is agent_registry:
        from trainer_agent.agents.definitions import load_agents

        load_agents(registry)
    return registry.get(agent_id)


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
    definition = _ensure_registered(agent_id, registry)
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
        if model_id == OFFLINE_MODEL:
            return _run_offline(definition, spec, clean_input, user_id, sink, registry)
        return _run_model(definition, spec, clean_input, user_id, sink, registry, model_id)

    return callback_registry.run_agent(agent_id, run, context=callback_context)


def _purpose(definition: AgentDefinition) -> str:
    return f"subagent:{definition.agent_id}"


def _run_offline(
    definition: AgentDefinition,
    spec: SubagentSpec,
    input: dict[str, Any],
    user_id: uuid.UUID,
    sink: EventSink | None,
    registry: AgentRegistry,
) -> SubagentResult:
    events: list[AgentSessionEvent] = []
    prompt = json.dumps(input, ensure_ascii=False)
    if sink is not None:
        events.append(_record_request(sink, definition, OFFLINE_MODEL, prompt, attempt=1))
    try:
        data = spec.offline(input, user_id=user_id)
    except (ValueError, KeyError, StopIteration) as exc:
        data, problems = None, [f"{type(exc).__name__}: {exc}"]
        output = None
    else:
        output, problems = _validated(definition, spec, data, input, user_id, registry)
    if sink is not None:
        events.append(
            _record_response(sink, definition, OFFLINE_MODEL, {"offline": data}, Usage(), 0, 1, problems)
        )
    if problems or output is None:
        raise SubagentError(definition.agent_id, problems, attempts=1)
    return SubagentResult(output=output, attempts=1, model=OFFLINE_MODEL, events=events)


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
    base_prompt = json.dumps({"input": input, "user": _user_facts(user_id)}, ensure_ascii=False, default=str)
    events: list[AgentSessionEvent] = []
    problems: list[str] = []
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
            result = provider.complete_json(
                model=model_id,
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
            return SubagentResult(output=output, attempts=attempt, model=model_id, events=events)
        if "validation_error" not in policy.retry_on:
            raise SubagentError(definition.agent_id, problems, attempts=attempt)
    raise SubagentError(definition.agent_id, problems, attempts=attempts)


def _record_request(
    sink: EventSink, definition: AgentDefinition, model_id: str, prompt: str, *, attempt: int
) -> AgentSessionEvent:
    return sink.record(
        EventType.LLM_REQUEST,
        {
            "model": model_id,
            "purpose": _purpose(definition),
            "attempt": attempt,
            "prompt": prompt[-PROMPT_PREVIEW_CHARS:],
            "estimated_tokens": (len(definition.prompt) + len(prompt)) // 4,
        },
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
        {
            "model": model_id,
            "purpose": _purpose(definition),
            "attempt": attempt,
            "valid": not problems,
            "problems": problems,
            "raw_response": json.loads(json.dumps(raw, default=str)),
            "tokens": usage.as_event_tokens(),
            "cost_cents": cost,
        },
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
