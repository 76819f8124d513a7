"""Trials and evals: run a scripted conversation through the real turn runner and check what the user got.

One format serves both (docs/evals.md): a *trial* is a JSON object with the user's data (the demo user's, with
small overrides), the turns (the user's message and optional `currentWorkout`, each with its checks) and,
for a recorded trial, the model's answers (`model.trainer` in call order, `model.subagents[agent_id]` in call
order). `manage.py eval` runs trials on any model (or replays the recorded answers with `--model scripted`);
tests/trainer_agent/trials replays every fixture of tests/fixtures/trials.

Recorded answers name ids the service made up during the trial (artifact, exercise and row ids), which a
replay cannot know in advance. They are written as placeholders: `{{art_1}}` is the first `art_…` id that
appeared in the model's context (user data, tool results, knowledge), `{{ex_3}}` the third `ex_…` id,
`{{uuid_2}}` the second UUID. The replaying provider numbers the ids of the live context the same way and
substitutes them before it answers.

Every turn runs as `manage.py chat` runs it (`trainer_agent.turns.run_turn`: admission, the worker's loop, the
task backend inline), in a throw-away user's data (`setup_user`, removed again by `remove_user`).
"""

from __future__ import annotations

import json
import re
import time
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

import time_machine
from django.tasks import task_backends
from django.tasks.backends.immediate import ImmediateBackend
from django.test import override_settings
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from datasources_app import selectors as data_selectors
from datasources_app import services as data_services
from datasources_app.models import Location, Preparation, ScheduledWorkout
from datasources_app.sources import fetch_and_format
from sessions_app.models import AgentSession, EventType, TurnStatus
from sessions_app.selectors import events_after, last_sequence
from tools_app.workout_coaching import recent_training_warnings
from tools_app.workout_tools import estimate_duration_min, parse_stored_exercise
from tools_app.workout_validation import check_exercises
from trainer_agent.context import describe_exercise
from trainer_agent.llm.models import ModelConfig, registered_model
from trainer_agent.llm.providers import override_provider
from trainer_agent.llm.scripted import scripted_response
from trainer_agent.llm.types import LLMError, LLMRequest, LLMResponse, StructuredResult, Usage
from trainer_agent.loop import TurnError
from trainer_agent.tenancy import acting_for
from trainer_agent.trial_ids import IdRegistry, context_texts
from trainer_agent.turns import delete_session_everywhere, run_turn

SCRIPTED_MODEL = "scripted"
OFFLINE_MODEL = "offline"
# The kinds of hard constraint a delivered workout must respect, as the tools' own validators word them.
VIOLATION_KINDS = ("injury", "equipment", "preference", "units", "recovery")


# --- the format --------------------------------------------------------------------------------------------------
class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class UserSetup(_Strict):
    """The demo user's data (`manage.py seed_demo`) with overrides, applied through datasources services."""

    profile: dict[str, Any] = Field(default_factory=dict, description="upsert_profile fields, e.g. injuries")
    settings: dict[str, Any] = Field(default_factory=dict, description="upsert_settings fields, e.g. units")
    location: str | None = Field(default=None, description="name of the current location (Home or Gym)")
    history_days: int = Field(default=0, ge=0, le=365, description="days of generated workout logs")
    preferences: list[dict[str, Any]] = Field(default_factory=list, description="create_preference fields")


class Checks(_Strict):
    """What the user must get from one turn. Every field is optional; `max_violations` defaults to 0."""

    status: Literal["completed", "error"] | None = None
    delivered_workout: bool | None = None
    message_contains: list[str] = Field(default_factory=list)
    message_not_contains: list[str] = Field(default_factory=list)
    asked_question: bool | None = None
    tools_called: list[str] = Field(default_factory=list, description="each ran successfully in the turn")
    no_exercise_matching: list[str] = Field(default_factory=list, description="regexes, case-insensitive")
    exercise_matching: list[str] = Field(default_factory=list, description="regexes, case-insensitive")
    workout_lines: list[str] = Field(
        default_factory=list,
        description="each a line of the delivered workout as the model's artifact block shows it, e.g. "
        "'Incline Dumbbell Press — 3×10 @ 39lb each hand, rest 60s' (loads in the user's units)",
    )
    workout_minutes: tuple[int, int] | None = Field(
        default=None,
        description="[least, most]: the delivered workout's length as the user reads it (the artifact's "
        "estimated_duration_min), e.g. [27, 31] for a 30-minute ask",
    )
    history_contains: list[str] = Field(
        default_factory=list,
        description="each in the user's workout history as the model reads it after the turn, e.g. "
        "'Seated Dumbbell Shoulder Press 3×10/10/8 @ 15kg each hand'",
    )
    scheduled_lines: list[str] = Field(
        default_factory=list,
        description="each a line of a workout the turn put on the calendar (schedule_workout, "
        "update_scheduled_workout, a plan week it prepared), as workout_lines reads, e.g. 'Dumbbell Curl — 3×12 @ 10kg each hand, rest 60s'",
    )
    max_tool_input_chars: int | None = Field(
        default=None,
        description="the longest tool input the model wrote in the turn (JSON characters): a workout written out "
        "again is thousands",
    )
    tool_result_contains: dict[str, list[str]] = Field(
        default_factory=dict,
        description="per tool, texts one of its results in the turn holds as the model read it, e.g. "
        "{'get_training_stats': ['By muscle, working sets: ']}: what the model had to go on, checked on replay",
    )
    tool_result_not_contains: dict[str, list[str]] = Field(
        default_factory=dict, description="per tool, texts none of its results in the turn holds"
    )
    max_tool_errors: int | None = None
    max_iterations: int | None = None
    max_violations: int | None = 0
    scheduled_days_ready: int | None = Field(default=None, description="at least this many days ready")
    drafted_lines: dict[str, list[str]] = Field(
        default_factory=dict,
        description="by a scheduled day's title, the starts of lines its drafted workout (the draft the week "
        "chain's sub-agents started from, kept on the day) must show as describe_exercise renders them, e.g. "
        "{'Full Body C (week 1)': ['Plank — 3×30s', 'Stationary Bike — 5×30s/90s']}",
    )
    scheduled_minutes: dict[str, tuple[int, int]] = Field(
        default_factory=dict,
        description="by a scheduled day's title, [least, most]: its prepared workout's length as the user reads it "
        "(estimate_duration_min), e.g. {'Upper A (week 1)': [42, 46]} for a 45-minute plan day",
    )
    user_settings: dict[str, Any] = Field(default_factory=dict, description="settings values after the turn")


class TurnSpec(_Strict):
    message: str = Field(min_length=1)
    current_workout: dict[str, Any] | None = Field(default=None, alias="currentWorkout")
    new_session: bool = False
    checks: Checks = Field(default_factory=Checks)

    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class RecordedModel(_Strict):
    """A trial's model answers: trainer calls in order; each sub-agent's structured answers in order."""

    trainer: list[dict[str, Any]] = Field(default_factory=list)
    subagents: dict[str, list[dict[str, Any]]] = Field(default_factory=dict)


class Trial(_Strict):
    name: str = Field(min_length=1)
    description: str = ""
    user: UserSetup = Field(default_factory=UserSetup)
    turns: list[TurnSpec] = Field(min_length=1)
    model: RecordedModel | None = None
    recorded_at: datetime | None = Field(
        default=None,
        description="when the trial was recorded: a replay runs at this time (ticking), so the recorded answers' "
        "dates (next Monday, this week) mean what they meant then",
    )
    source: str = Field(default="", exclude=True)


class TrialFormatError(ValueError):
    """A trial or scenario file that does not follow the format; the message names the file and field."""


def load_trials(path: Path) -> list[Trial]:
    """The trials of a JSON file (one object, a list, or `{"scenarios": [...]}`) or of every *.json in a folder."""
    files = sorted(path.glob("*.json")) if path.is_dir() else [path]
    if not files:
        raise TrialFormatError(f"{path}: no *.json files")
    trials: list[Trial] = []
    for file in files:
        try:
            raw = json.loads(file.read_text())
        except (OSError, ValueError) as exc:
            raise TrialFormatError(f"{file}: {exc}") from exc
        items = raw.get("scenarios") if isinstance(raw, dict) and "scenarios" in raw else raw
        for index, item in enumerate(items if isinstance(items, list) else [items]):
            try:
                trial = Trial.model_validate(item)
            except ValidationError as exc:
                problems = "; ".join(
                    f"{'.'.join(str(p) for p in error['loc'])}: {error['msg']}" for error in exc.errors()
                )
                raise TrialFormatError(f"{file} [{index}]: {problems}") from None
            trial.source = str(file)
            trials.append(trial)
    return trials


# --- replaying a trial's answers ---------------------------------------------------------------------------------
class ReplayMismatch(LLMError):
    """The conversation asked the replay for a call the trial did not record (or of another kind)."""

    def __init__(self, message: str) -> None:
        super().__init__("invalid_response", message)


class ReplayProvider:
    """Answers trainer calls and sub-agents' structured calls with a trial's recorded answers, in order.

    Every call that does not fit (more calls than recorded, a sub-agent with no answers left, a tool the
    request does not offer, an unknown id placeholder) is kept in `mismatches` and raised as `ReplayMismatch`,
    naming the trial and the call, so a test can report exactly where the replay left the recording.
    """

    def __init__(self, trial: Trial) -> None:
        if trial.model is None:
            raise TrialFormatError(f"{trial.source or trial.name}: no recorded model answers to replay")
        self.trial = trial
        self.trainer = list(trial.model.trainer)
        self.subagents = {agent: list(answers) for agent, answers in trial.model.subagents.items()}
        self.trainer_calls = 0
        self.subagent_calls: dict[str, int] = {}
        self.ids = IdRegistry()
        self.mismatches: list[str] = []

    def _fail(self, message: str) -> ReplayMismatch:
        text = f"trial {self.trial.name!r} ({self.trial.source or 'inline'}): {message}"
        self.mismatches.append(text)
        return ReplayMismatch(text)

    def complete(self, request: LLMRequest) -> LLMResponse:
        self.trainer_calls += 1
        number = self.trainer_calls
        for text in context_texts(request.user_data_xml, request.messages):
            self.ids.observe(text)
        if number > len(self.trainer):
            raise self._fail(f"trainer call {number} was not recorded (the trial has {len(self.trainer)})")
        answer = self.trainer[number - 1]
        try:
            resolved = self.ids.resolve(answer)
        except KeyError as exc:
            raise self._fail(f"trainer call {number}: unknown placeholder {exc.args[0]}") from None
        if "name" in resolved:
            offered = {tool.name for tool in request.tools}
            if resolved["name"] not in offered:
                raise self._fail(
                    f"trainer call {number}: the recorded answer calls {resolved['name']!r}, which the "
                    "request does not offer"
                )
            return scripted_response(tool_calls=[(resolved["name"], dict(resolved.get("input") or {}))])
        if "text" in resolved:
            return scripted_response(text=str(resolved["text"]))
        raise self._fail(f"trainer call {number}: a recorded answer needs 'name' (+ 'input') or 'text'")

    def complete_json(
        self,
        *,
        model: str,
        system: str,
        user: str,
        json_schema: dict[str, Any],
        schema_name: str,
        max_tokens: int = 1024,
        temperature: float | None = None,
    ) -> StructuredResult:
        number = self.subagent_calls[schema_name] = self.subagent_calls.get(schema_name, 0) + 1
        answers = self.subagents.get(schema_name, [])
        if number > len(answers):
            raise self._fail(
                f"{schema_name} call {number} was not recorded (the trial has {len(answers)} for it; "
                f"recorded sub-agents: {', '.join(sorted(self.subagents)) or 'none'})"
            )
        try:
            data = self.ids.resolve(answers[number - 1])
        except KeyError as exc:
            raise self._fail(f"{schema_name} call {number}: unknown placeholder {exc.args[0]}") from None
        return StructuredResult(dict(data), Usage(), {"replayed": data}, 0)

    def unused(self) -> list[str]:
        """Recorded answers the conversation never asked for (a replay that stopped short)."""
        left = []
        if self.trainer_calls < len(self.trainer):
            left.append(f"{len(self.trainer) - self.trainer_calls} trainer answer(s) never asked for")
        for agent, answers in self.subagents.items():
            used = self.subagent_calls.get(agent, 0)
            if used < len(answers):
                left.append(f"{len(answers) - used} {agent} answer(s) never asked for")
        return left


SCRIPTED_CONFIG = ModelConfig(
    id=SCRIPTED_MODEL,
    provider="scripted",
    display_name="Recorded trial answers",
    context_window=200_000,
    max_output_tokens=8192,
    input_per_mtok=0.0,
    output_per_mtok=0.0,
    cache_read_per_mtok=0.0,
    cache_write_per_mtok=0.0,
    min_cacheable_tokens=0,
    notes="Replays a trial's recorded answers (trainer_agent.evals.ReplayProvider).",
)


@contextmanager
def serving(trial: Trial, model: str) -> Iterator[ReplayProvider | None]:
    """The trainer and its sub-agents on `model` (the replay of `trial`'s answers for `scripted`), the
    offline initializer for a replay, and background tasks (the week chain) run inline."""
    with ExitStack() as stack:
        replay: ReplayProvider | None = None
        if model == SCRIPTED_MODEL:
            if trial.recorded_at is not None:
                stack.enter_context(time_machine.travel(trial.recorded_at, tick=True))
            replay = ReplayProvider(trial)
            stack.enter_context(registered_model(SCRIPTED_CONFIG))
            stack.enter_context(override_provider(SCRIPTED_MODEL, replay))
            stack.enter_context(override_settings(INITIALIZER_MODEL=OFFLINE_MODEL))
        stack.enter_context(override_settings(PRIMARY_MODEL=model))
        stack.enter_context(inline_tasks())
        yield replay


@contextmanager
def inline_tasks() -> Iterator[None]:
    """Run enqueued tasks at once in this thread (a running worker must not take a throw-away user's turn)."""
    previous = task_backends["default"]
    if isinstance(previous, ImmediateBackend):
        yield
        return
    task_backends["default"] = ImmediateBackend(alias="default", params={})
    try:
        yield
    finally:
        task_backends["default"] = previous


# --- the user ----------------------------------------------------------------------------------------------------
def setup_user(*, user_id: uuid.UUID, setup: UserSetup) -> None:
    """The demo user's data for `user_id`, then the trial's overrides (through the datasources services)."""
    with acting_for(user_id):
        data_services.seed_demo_user(user_id=user_id, history_days=setup.history_days)
        if setup.profile:
            data_services.upsert_profile(user_id=user_id, **setup.profile)
        if setup.settings:
            data_services.upsert_settings(user_id=user_id, **setup.settings)
        if setup.location:
            location = Location.objects.filter(user_id=user_id, name__iexact=setup.location).first()
            if location is None:
                raise TrialFormatError(f"user.location: no location named {setup.location!r} (Home, Gym)")
            data_services.set_current_location(user_id=user_id, location_id=location.pk)
        for preference in setup.preferences:
            data_services.create_preference(user_id=user_id, **preference)


def remove_user(*, user_id: uuid.UUID) -> None:
    """Delete the throw-away user's sessions (events, turns, task rows) and fitness data."""
    with acting_for(user_id):
        for session in AgentSession.objects.filter(user_id=user_id):
            delete_session_everywhere(session=session)
        data_services.delete_user_data(user_id=user_id)


# --- running and checking ----------------------------------------------------------------------------------------
@dataclass
class TurnReport:
    message: str
    asked_for_workout: bool = False
    status: str = ""
    error: str = ""
    messages: list[str] = field(default_factory=list)
    delivered_workout: bool = False
    exercises: list[str] = field(default_factory=list)
    workout_lines: list[str] = field(default_factory=list)
    scheduled_lines: list[str] = field(default_factory=list)
    workout_minutes: int | None = None
    question: str | None = None
    tools: list[str] = field(default_factory=list)
    tool_input_chars: int = 0
    tool_errors: int = 0
    iterations: int = 0
    tokens: int = 0
    cost_cents: float = 0.0
    latency_s: float = 0.0
    violations: list[dict[str, str]] = field(default_factory=list)
    failed_checks: list[str] = field(default_factory=list)
    tool_results: dict[str, list[str]] = field(
        default_factory=dict
    )  # per tool, its results as the model read


@dataclass
class TrialReport:
    name: str
    model: str
    turns: list[TurnReport] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # replay mismatches, setup errors

    @property
    def passed(self) -> bool:
        return not self.problems and all(not turn.failed_checks for turn in self.turns)

    def as_dict(self) -> dict[str, Any]:
        turns = [asdict(turn) for turn in self.turns]
        return {
            "name": self.name,
            "model": self.model,
            "passed": self.passed,
            "problems": self.problems,
            "violations": sum(len(turn.violations) for turn in self.turns),
            "delivered_when_asked": all(t.delivered_workout for t in self.turns if t.asked_for_workout),
            "tool_errors": sum(turn.tool_errors for turn in self.turns),
            "iterations": sum(turn.iterations for turn in self.turns),
            "tokens": sum(turn.tokens for turn in self.turns),
            "cost_cents": round(sum(turn.cost_cents for turn in self.turns), 4),
            "latency_s": round(sum(turn.latency_s for turn in self.turns), 3),
            "turns": turns,
        }


def run_trial(trial: Trial, *, model: str) -> TrialReport:
    """Run `trial` on `model` (`scripted` replays its answers) as a throw-away user, check every turn, clean up."""
    report = TrialReport(name=trial.name, model=model)
    user_id = uuid.uuid4()
    try:
        with serving(trial, model) as replay:
            # Inside: a replay's clock is its recording's, so the demo history is laid out before that day, as
            # the trial saw it (seeded on today's clock, a replay run the day after found a workout of "today").
            setup_user(user_id=user_id, setup=trial.user)
            session_id: uuid.UUID | None = None
            for spec in trial.turns:
                if spec.new_session:
                    session_id = None
                turn, session_id = _run_turn(user_id=user_id, spec=spec, model=model, session_id=session_id)
                report.turns.append(turn)
                if replay is not None and replay.mismatches:
                    break
            if replay is not None:
                report.problems += replay.mismatches
                if not replay.mismatches:
                    report.problems += [f"trial {trial.name!r}: {left}" for left in replay.unused()]
    except TrialFormatError as exc:
        report.problems.append(str(exc))
    finally:
        remove_user(user_id=user_id)
    return report


def _run_turn(
    *, user_id: uuid.UUID, spec: TurnSpec, model: str, session_id: uuid.UUID | None
) -> tuple[TurnReport, uuid.UUID | None]:
    report = TurnReport(message=spec.message, asked_for_workout=spec.checks.delivered_workout is True)
    after = -1
    if session_id is not None:
        with acting_for(user_id):
            after = last_sequence(session=AgentSession.objects.get(pk=session_id))
    started = time.monotonic()
    try:
        result = run_turn(
            user_id=user_id,
            message=spec.message,
            session_id=session_id,
            model=model,
            current_workout=spec.current_workout,
        )
        session_id, report.status, response = result.session_id, str(result.status), result.response
        report.iterations = result.iterations
        if result.status == TurnStatus.ERROR:
            report.error = result.error_message
    except TurnError as exc:
        session_id, report.status, response = exc.session_id, TurnStatus.ERROR, {}
        report.error = f"{exc.kind}: {exc.message}"
    report.latency_s = round(time.monotonic() - started, 3)
    report.messages = [str(text) for text in response.get("messages") or []]
    exercises = response.get("exercises") or []
    report.delivered_workout = bool(exercises)
    report.exercises = [str(exercise.get("exercise_name", "")) for exercise in exercises]
    report.workout_lines = [
        describe_exercise(exercise) for exercise in exercises if isinstance(exercise, dict)
    ]
    if exercises:
        report.workout_minutes = estimate_duration_min([e for e in exercises if isinstance(e, dict)])
    question = response.get("question")
    report.question = str(question.get("question", "")) if isinstance(question, dict) else None
    with acting_for(user_id):
        _read_events(report, session_id=session_id, after=after)
        report.violations = workout_violations(exercises, user_id=user_id) if exercises else []
        report.failed_checks = failed_checks(spec.checks, report, user_id=user_id)
    return report, session_id


def _read_events(report: TurnReport, *, session_id: uuid.UUID, after: int) -> None:
    """Tools run, tool errors, the longest tool input, the workouts put on the calendar, iterations, tokens and
    cost of the turn (sub-agents included) from its events."""
    scheduled: list[str] = []
    for event in events_after(session_id=session_id, after_sequence=after, limit=100_000):
        data = event.data if isinstance(event.data, dict) else {}
        if event.event_type == EventType.TOOL_CALL:
            written = len(json.dumps(data.get("arguments") or {}, ensure_ascii=False))
            report.tool_input_chars = max(report.tool_input_chars, written)
        elif event.event_type == EventType.TOOL_RESULT:
            name = str(data.get("tool_name", ""))
            formatted = (
                (data.get("result") or {}).get("formatted") if isinstance(data.get("result"), dict) else None
            )
            if isinstance(formatted, str):
                report.tool_results.setdefault(name, []).append(formatted)
            if data.get("success"):
                report.tools.append(name)
                result = (data.get("result") or {}).get("data") or {}
                day = result.get("scheduled_workout")
                if isinstance(day, dict) and day.get("workout_id"):
                    scheduled.append(str(day["workout_id"]))
                # A plan week the turn prepared (create_workout_plan, prepare_week) puts its days on the calendar too.
                prepared = (result.get("week_preparation") or {}).get("days") or []
                scheduled += [
                    str(item["workout_id"])
                    for item in prepared
                    if isinstance(item, dict) and item.get("workout_id")
                ]
            else:
                report.tool_errors += 1
        elif event.event_type == EventType.LLM_RESPONSE:
            tokens = data.get("tokens") or {}
            report.tokens += int(tokens.get("total") or 0)
            report.cost_cents += float(data.get("cost_cents") or 0)
    report.cost_cents = round(report.cost_cents, 4)
    for item in ScheduledWorkout.objects.filter(id__in=scheduled):
        exercises = (item.workout or {}).get("exercises") if isinstance(item.workout, dict) else None
        report.scheduled_lines += [
            describe_exercise(exercise) for exercise in exercises or [] if isinstance(exercise, dict)
        ]


def _missing_draft_lines(title: str, wanted: list[str], *, user_id: uuid.UUID) -> list[str]:
    """The `drafted_lines` of the day titled `title` no line of its kept draft starts with."""
    day = ScheduledWorkout.objects.filter(user_id=user_id, title=title).first()
    draft = ((day.preparation_layout or {}).get("draft") if day is not None else None) or {}
    lines = [
        describe_exercise(exercise) for exercise in draft.get("exercises") or [] if isinstance(exercise, dict)
    ]
    return [
        f"drafted_lines: the draft of {title!r} does not show {line!r} (draft: {lines})"
        for line in wanted
        if not any(drafted.startswith(line) for drafted in lines)
    ]


def workout_violations(exercises: list[dict[str, Any]], *, user_id: uuid.UUID) -> list[dict[str, str]]:
    """Hard-constraint problems of a delivered workout, found by the tools' own validators (the checks
    generate_workout runs, and its recovery warnings), each with its kind (`VIOLATION_KINDS`)."""
    found: list[dict[str, str]] = []
    try:
        models = [parse_stored_exercise(exercise) for exercise in exercises]
    except ValidationError as exc:
        return [{"kind": "schema", "problem": str(exc.errors()[0]["msg"])}]
    for problem in check_exercises(models, user_id=user_id).problems:
        kind = _violation_kind(problem)
        if kind is not None:
            found.append({"kind": kind, "problem": problem})
    for warning in recent_training_warnings(user_id=user_id, exercises=exercises):
        found.append({"kind": "recovery", "problem": warning})
    return found + _unit_violations(exercises, user_id=user_id)


def _unit_violations(exercises: list[dict[str, Any]], *, user_id: uuid.UUID) -> list[dict[str, str]]:
    """A delivered load or distance not in the user's unit: the tools convert what the model gives in the other
    unit, so a workout the user sees in the wrong unit is a broken promise."""
    units = data_selectors.get_settings(user_id=user_id)
    found = []
    for position, exercise in enumerate(exercises, start=1):
        name = exercise.get("exercise_name") or f"exercise {position}"
        if exercise.get("load_each") and exercise.get("load_unit") not in (None, units.weight_unit):
            found.append(
                f"{name}: loads in {exercise['load_unit']} but the user trains in {units.weight_unit}"
            )
        if exercise.get("distance") and exercise.get("distance_unit") not in (None, units.distance_unit):
            found.append(
                f"{name}: distance in {exercise['distance_unit']} but the user measures in {units.distance_unit}"
            )
    return [{"kind": "units", "problem": problem} for problem in found]


def _violation_kind(problem: str) -> str | None:
    if "unsafe for the user's" in problem:
        return "injury"
    if "excluded by the user's preference" in problem:
        return "preference"
    if "not available" in problem:
        return "equipment"
    return None  # form (shares, fields) is the schema's business, not a broken promise to the user


def failed_checks(checks: Checks, turn: TurnReport, *, user_id: uuid.UUID) -> list[str]:
    """Every check of `checks` that `turn` does not meet, as a sentence naming what was expected and got."""
    failed: list[str] = []
    text = "\n".join(turn.messages).lower()
    if checks.status is not None and turn.status != checks.status:
        failed.append(f"status: expected {checks.status}, got {turn.status} {turn.error}".strip())
    if checks.delivered_workout is not None and turn.delivered_workout != checks.delivered_workout:
        failed.append(f"delivered_workout: expected {checks.delivered_workout}, got {turn.delivered_workout}")
    if checks.asked_question is not None and (turn.question is not None) != checks.asked_question:
        failed.append(f"asked_question: expected {checks.asked_question}, got {turn.question!r}")
    failed += [
        f"message_contains: no message contains {wanted!r} (messages: {turn.messages})"
        for wanted in checks.message_contains
        if wanted.lower() not in text
    ]
    failed += [
        f"message_not_contains: a message contains {unwanted!r}"
        for unwanted in checks.message_not_contains
        if unwanted.lower() in text
    ]
    failed += [
        f"tools_called: {tool} did not run successfully (ran: {turn.tools})"
        for tool in checks.tools_called
        if tool not in turn.tools
    ]
    for tool, wanted_texts in checks.tool_result_contains.items():
        results = turn.tool_results.get(tool, [])
        failed += [
            f"tool_result_contains: no {tool} result contains {wanted!r} (results: {results})"
            for wanted in wanted_texts
            if not any(wanted in result for result in results)
        ]
    for tool, unwanted_texts in checks.tool_result_not_contains.items():
        results = turn.tool_results.get(tool, [])
        failed += [
            f"tool_result_not_contains: a {tool} result contains {unwanted!r}"
            for unwanted in unwanted_texts
            if any(unwanted in result for result in results)
        ]
    for pattern in checks.no_exercise_matching:
        hits = [name for name in turn.exercises if re.search(pattern, name, re.IGNORECASE)]
        if hits:
            failed.append(f"no_exercise_matching {pattern!r}: {hits}")
    for pattern in checks.exercise_matching:
        if not any(re.search(pattern, name, re.IGNORECASE) for name in turn.exercises):
            failed.append(f"exercise_matching {pattern!r}: none of {turn.exercises}")
    failed += [
        f"workout_lines: no line reads {wanted!r} (lines: {turn.workout_lines})"
        for wanted in checks.workout_lines
        if wanted not in turn.workout_lines
    ]
    if checks.workout_minutes is not None:
        least, most = checks.workout_minutes
        if turn.workout_minutes is None or not least <= turn.workout_minutes <= most:
            failed.append(
                f"workout_minutes: the delivered workout takes about {turn.workout_minutes} min, "
                f"not {least}-{most}"
            )
    if checks.history_contains:
        history = fetch_and_format(user_id=user_id, source="workout_history").text
        failed += [
            f"history_contains: the workout history does not contain {wanted!r} (history: {history})"
            for wanted in checks.history_contains
            if wanted not in history
        ]
    failed += [
        f"scheduled_lines: no scheduled line reads {wanted!r} (lines: {turn.scheduled_lines})"
        for wanted in checks.scheduled_lines
        if wanted not in turn.scheduled_lines
    ]
    if checks.max_tool_input_chars is not None and turn.tool_input_chars > checks.max_tool_input_chars:
        failed.append(f"max_tool_input_chars: {turn.tool_input_chars} > {checks.max_tool_input_chars}")
    if checks.max_tool_errors is not None and turn.tool_errors > checks.max_tool_errors:
        failed.append(f"max_tool_errors: {turn.tool_errors} > {checks.max_tool_errors}")
    if checks.max_iterations is not None and turn.iterations > checks.max_iterations:
        failed.append(f"max_iterations: {turn.iterations} > {checks.max_iterations}")
    if checks.max_violations is not None and len(turn.violations) > checks.max_violations:
        listed = "; ".join(f"[{v['kind']}] {v['problem']}" for v in turn.violations[:5])
        failed.append(f"max_violations: {len(turn.violations)} > {checks.max_violations}: {listed}")
    if checks.scheduled_days_ready is not None:
        ready = ScheduledWorkout.objects.filter(
            user_id=user_id, preparation=Preparation.READY, workout__isnull=False
        ).count()
        if ready < checks.scheduled_days_ready:
            failed.append(f"scheduled_days_ready: {ready} < {checks.scheduled_days_ready}")
    for title, wanted_lines in checks.drafted_lines.items():
        failed += _missing_draft_lines(title, wanted_lines, user_id=user_id)
    for title, (least, most) in checks.scheduled_minutes.items():
        day = ScheduledWorkout.objects.filter(user_id=user_id, title=title).first()
        exercises = (day.workout or {}).get("exercises") if day is not None and day.workout else None
        minutes = estimate_duration_min([e for e in exercises if isinstance(e, dict)]) if exercises else None
        if minutes is None or not least <= minutes <= most:
            failed.append(f"scheduled_minutes: {title!r} takes about {minutes} min, not {least}-{most}")
    if checks.user_settings:
        current = data_selectors.get_settings(user_id=user_id)
        for key, wanted in checks.user_settings.items():
            got = getattr(current, key, None)
            if got != wanted:
                failed.append(f"user_settings.{key}: expected {wanted!r}, got {got!r}")
    return failed


def summarize(reports: list[TrialReport]) -> dict[str, Any]:
    """The overall figures of a run: scenarios passed, violations, tool errors, tokens, cost, latency."""
    turns = [turn for report in reports for turn in report.turns]
    latencies = sorted(turn.latency_s for turn in turns)
    return {
        "scenarios": len(reports),
        "passed": sum(report.passed for report in reports),
        "failed": [report.name for report in reports if not report.passed],
        "turns": len(turns),
        "violations": sum(len(turn.violations) for turn in turns),
        "tool_errors": sum(turn.tool_errors for turn in turns),
        "iterations": sum(turn.iterations for turn in turns),
        "tokens": sum(turn.tokens for turn in turns),
        "cost_cents": round(sum(turn.cost_cents for turn in turns), 4),
        "latency_s_per_turn": {
            "mean": round(sum(latencies) / len(latencies), 3) if latencies else 0.0,
            "max": latencies[-1] if latencies else 0.0,
        },
    }
