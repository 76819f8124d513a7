"""The timer tools (docs/contracts.md §11.5 (tool list)): generate_exercise_timer and generate_workout_timers.

A timer is a list of phases with durations the client counts down:

    prepare         before the first exercise (prepare_sec, default 10 s)
    work / hold     one set of reps (reps × 3 s, an estimate), one hold, a duration block, an interval round
    rest            the rest after each interval round
    between_sets    the rest between sets of a reps or hold exercise (rest_sec, default 60 s)
    between_rounds  the rest between rounds of a superset, circuit or giant set
    transition      the change to the next exercise (transition_sec, default 30 s)

So a reps exercise lasts prepare + Σ reps×3 + (sets-1) × rest, a hold one prepare + Σ holds + (sets-1) × rest,
intervals prepare + rounds × (work + rest), a duration exercise prepare + minutes × 60, an EMOM rounds × work_sec
(default 60 s: on the minute, the rest of the interval to recover) and an AMRAP one block of its minutes; an
`instruction` ("10 reps at the top of each minute") is shown on the timer and its work phases. In a workout,
the exercises of a superset, circuit or giant set run back to back, one set each per round, with
between_rounds rest after every round but the last. Every call creates an artifact of type "timer"
(`payload.timers`, each with `phases` and `total_duration_sec`) to deliver with message_notify_user.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AliasChoices, BaseModel, BeforeValidator, Field, model_validator
from pydantic.json_schema import SkipJsonSchema

from datasources_app.formatters import number
from datasources_app.workouts import Exercise, ExerciseGroup
from tools_app.exercise_references import resolve_exercise
from tools_app.logging_tools import exercise_type_from_any, per_set_values
from tools_app.registry import register
from tools_app.types import Tool, ToolContext, ToolOutcome
from tools_app.workout_tools import load_current_workout, new_artifact_id

TIMER_ARTIFACT_TYPE = "timer"
TIMER_SCHEMA_VERSION = "1.0"
SECONDS_PER_REP = 3
DEFAULT_PREPARE_SEC = 10
DEFAULT_SET_REST_SEC = 60
DEFAULT_ROUND_REST_SEC = 60
DEFAULT_TRANSITION_SEC = 30
# Groups whose exercises run back to back, round after round; the other group types are plain sequences.
ROUND_GROUPS = frozenset({"superset", "circuit", "giant_set"})

# A workout exercise's fields the timer does not read: accepted and ignored, so an exercise can be passed as
# generate_workout wrote it (any other unknown field is an error).
_WORKOUT_EXERCISE_FIELDS = frozenset(Exercise.model_fields) | {"id", "exercise_slug", "load_per_hand"}

PhaseType = Literal["prepare", "work", "hold", "rest", "between_sets", "between_rounds", "transition"]


def _timer_type(value: Any) -> Any:
    return exercise_type_from_any(value)


TimerType = Annotated[
    Literal["reps", "hold", "duration", "intervals", "emom", "amrap"], BeforeValidator(_timer_type)
]


# The fields of a timer (no docstrings on these models: pydantic would send them to the model). The few numbers
# each type reads: reps: sets, reps, rest_sec; hold: sets, hold_sec, rest_sec; duration: duration_min;
# intervals: rounds, work_sec, rest_sec; emom: rounds (minutes), work_sec (default 60); amrap: duration_min.
# Load and group are read from a workout's exercises and accepted on input, not advertised.
class TimerFields(BaseModel):
    exercise_name: str | None = Field(
        default=None, min_length=1, validation_alias=AliasChoices("exercise_name", "name")
    )
    exercise_type: TimerType | None = Field(
        default=None,
        validation_alias=AliasChoices("exercise_type", "type"),
        description="emom: rounds (minutes) of work_sec (default 60); amrap: duration_min.",
    )
    sets: int | None = Field(default=None, ge=1)
    reps: list[Annotated[int, Field(ge=1)]] | None = Field(default=None, description="One per set.")
    hold_sec: list[Annotated[int, Field(ge=1)]] | None = Field(default=None, description="One per set.")
    duration_min: float | None = Field(default=None, gt=0)
    rounds: int | None = Field(default=None, ge=1)
    work_sec: int | None = Field(default=None, ge=1)
    rest_sec: int | None = Field(
        default=None,
        ge=0,
        validation_alias=AliasChoices("rest_sec", "rest_seconds"),
        description="Default 60 between sets.",
    )
    instruction: str | None = Field(
        default=None, min_length=1, description="Shown to the user, e.g. '10 reps at the top of each minute'."
    )
    load_each: SkipJsonSchema[list[Annotated[float, Field(ge=0)]] | None] = None
    load_unit: SkipJsonSchema[Literal["kg", "lb"] | None] = None
    group: SkipJsonSchema[ExerciseGroup | None] = None

    @model_validator(mode="before")
    @classmethod
    def _accept_seed_001_spellings(cls, data: Any) -> Any:
        """Seed 001: scalar reps, `work_duration_seconds`, and its older exercise types."""
        if not isinstance(data, dict):
            return data
        data = {
            key: value
            for key, value in data.items()
            if key in cls.model_fields or key not in _WORKOUT_EXERCISE_FIELDS
        }
        kind = exercise_type_from_any(data.get("exercise_type", data.get("type")))
        sets = data.get("sets")
        if data.get("load_each") is None and data.get("load") is not None:
            data["load_each"] = data.pop("load")
        for field in ("reps", "hold_sec", "load_each"):
            if field in data:
                data[field] = per_set_values(data[field], sets)
        seconds = data.pop("work_duration_seconds", None)
        if seconds is not None:
            if kind == "hold" and data.get("hold_sec") is None:
                data["hold_sec"] = per_set_values(seconds, sets)
            elif kind == "duration" and data.get("duration_min") is None:
                data["duration_min"] = seconds / 60
            elif data.get("work_sec") is None:
                data["work_sec"] = seconds
        return data

    def given(self) -> dict[str, Any]:
        return self.model_dump(exclude_none=True)


class TimerExercise(TimerFields):
    exercise_name: str = Field(min_length=1, validation_alias=AliasChoices("exercise_name", "name"))
    exercise_type: TimerType = Field(validation_alias=AliasChoices("exercise_type", "type"))


class ExerciseTimerInput(TimerFields):
    exercise_id: str | None = Field(
        default=None,
        description="Id (ex_...), order number, or the user's words; other fields then change its timer.",
    )
    prepare_sec: int = Field(default=DEFAULT_PREPARE_SEC, ge=0, le=600)

    @model_validator(mode="before")
    @classmethod
    def _accept_a_nested_exercise(cls, data: Any) -> Any:
        """An `exercise` object (this tool's earlier form) is the same fields, nested."""
        if isinstance(data, dict) and isinstance(data.get("exercise"), dict):
            return {**{k: v for k, v in data.items() if k != "exercise"}, **data["exercise"]}
        return data


class WorkoutTimersInput(BaseModel):
    # Exercises to time instead of the current workout: accepted (seed 001), not advertised.
    exercises: SkipJsonSchema[list[TimerExercise] | None] = Field(default=None, min_length=1)
    prepare_sec: int = Field(default=DEFAULT_PREPARE_SEC, ge=0, le=600)
    transition_sec: int = Field(default=DEFAULT_TRANSITION_SEC, ge=0, le=600)


def _failure(message: str) -> ToolOutcome:
    return ToolOutcome(success=False, data={"error": message}, text=message)


# --- Phases ---------------------------------------------------------------------------------------------------
def _phase(
    phase_type: PhaseType, seconds: float, cue: str, detail: str = "", **numbers: int
) -> dict[str, Any]:
    phase: dict[str, Any] = {
        "phase_type": phase_type,
        "duration_sec": round(seconds),
        "cue": cue,
        "detail": detail,
        "countdown": True,
    }
    phase.update(numbers)
    return phase


def _per_set(values: list[Any] | None, count: int) -> list[Any]:
    """One value per set: a short list is padded with its last value."""
    items = list(values or ())
    return (items + [items[-1]] * (count - len(items)))[:count] if items else []


def _set_count(exercise: dict[str, Any], per_set_field: str) -> int:
    return int(exercise.get("sets") or len(exercise.get(per_set_field) or ()) or 0)


def exercise_problems(exercise: dict[str, Any]) -> list[str]:
    """What an exercise lacks to be timed, by type."""
    kind = exercise.get("exercise_type")
    needs = {
        "reps": ("reps",),
        "hold": ("hold_sec",),
        "duration": ("duration_min",),
        "intervals": ("rounds", "work_sec"),
        "emom": ("rounds",),
        "amrap": ("duration_min",),
    }.get(str(kind))
    if needs is None:
        return [f"exercise_type must be reps, hold, duration, intervals, emom or amrap, not {kind!r}"]
    missing = [field for field in needs if not exercise.get(field)]
    return [f"type {kind} needs {', '.join(missing)}"] if missing else []


def _load_detail(exercise: dict[str, Any], set_index: int) -> str:
    loads = _per_set(exercise.get("load_each"), set_index + 1)
    if not loads or not loads[set_index]:
        return ""
    return f" @ {number(loads[set_index])} {exercise.get('load_unit') or ''}".rstrip()


def set_phases(exercise: dict[str, Any], set_number: int, sets: int) -> list[dict[str, Any]]:
    """The work phase of one set (reps or hold), 1-based, or the whole block for duration/intervals."""
    name = exercise["exercise_name"]
    kind = exercise["exercise_type"]
    if kind == "reps":
        reps = _per_set(exercise.get("reps"), sets)[set_number - 1]
        return [
            _phase(
                "work",
                reps * SECONDS_PER_REP,
                f"{name} - Set {set_number}/{sets}",
                f"{reps} reps{_load_detail(exercise, set_number - 1)}",
                set_number=set_number,
            )
        ]
    if kind == "hold":
        hold = _per_set(exercise.get("hold_sec"), sets)[set_number - 1]
        return [
            _phase("hold", hold, f"{name} - Hold {set_number}/{sets}", f"hold {hold}s", set_number=set_number)
        ]
    instruction = str(exercise.get("instruction") or "")
    if kind == "duration":
        minutes = float(exercise["duration_min"])
        return [_phase("work", minutes * 60, name, instruction or f"{number(minutes)} min")]
    if kind == "amrap":
        minutes = float(exercise["duration_min"])
        detail = instruction or "as many rounds as possible"
        return [_phase("work", minutes * 60, f"{name} - AMRAP {number(minutes)} min", detail)]
    if kind == "emom":
        return _emom_phases(exercise, instruction)
    rounds = int(exercise["rounds"])
    work = int(exercise["work_sec"])
    rest = int(exercise.get("rest_sec") or 0)
    phases = []
    for round_number in range(1, rounds + 1):
        cue = f"{name} - Round {round_number}/{rounds}"
        phases.append(_phase("work", work, cue, f"work {work}s", round_number=round_number))
        if rest:
            phases.append(
                _phase(
                    "rest",
                    rest,
                    f"Rest - Round {round_number}/{rounds}",
                    f"{rest}s",
                    round_number=round_number,
                )
            )
    return phases


def _emom_phases(exercise: dict[str, Any], instruction: str) -> list[dict[str, Any]]:
    """Every minute (or every work_sec) on the minute: the work, and the rest of the interval to recover."""
    name = exercise["exercise_name"]
    rounds = int(exercise["rounds"])
    interval = int(exercise.get("work_sec") or 60)
    reps = _per_set(exercise.get("reps"), rounds)
    unit = "Minute" if interval == 60 else "Interval"
    return [
        _phase(
            "work",
            interval,
            f"{name} - {unit} {round_number}/{rounds}",
            instruction or (f"{reps[round_number - 1]} reps" if reps else f"every {interval}s"),
            round_number=round_number,
        )
        for round_number in range(1, rounds + 1)
    ]


def exercise_phases(exercise: dict[str, Any]) -> list[dict[str, Any]]:
    """Every phase of one exercise done on its own, without the leading prepare or transition."""
    kind = exercise["exercise_type"]
    if kind not in ("reps", "hold"):
        return set_phases(exercise, 1, 1)
    sets = _set_count(exercise, "reps" if kind == "reps" else "hold_sec")
    rest = exercise.get("rest_sec")
    rest_sec = DEFAULT_SET_REST_SEC if rest is None else int(rest)
    phases: list[dict[str, Any]] = []
    for set_number in range(1, sets + 1):
        phases += set_phases(exercise, set_number, sets)
        if set_number < sets and rest_sec:
            phases.append(
                _phase("between_sets", rest_sec, f"Rest - next: Set {set_number + 1}/{sets}", f"{rest_sec}s")
            )
    return phases


def group_phases(members: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A superset/circuit/giant set: each round runs every member's next set back to back."""
    header = next(
        (member.get("group") or {} for member in members if (member.get("group") or {}).get("rounds")), {}
    )
    per_member_sets = [
        _set_count(member, "reps" if member["exercise_type"] == "reps" else "hold_sec")
        for member in members
        if member["exercise_type"] in ("reps", "hold")
    ]
    rounds = int(header.get("rounds") or max(per_member_sets, default=1) or 1)
    rest = header.get("rest_between_rounds_sec")
    if rest is None:
        rest = next(
            (member.get("rest_sec") for member in members if member.get("rest_sec") is not None), None
        )
    rest_sec = DEFAULT_ROUND_REST_SEC if rest is None else int(rest)
    phases: list[dict[str, Any]] = []
    for round_number in range(1, rounds + 1):
        for member in members:
            round_phases = (
                set_phases(member, round_number, rounds)
                if member["exercise_type"] in ("reps", "hold")
                else set_phases(member, 1, 1)
            )
            for phase in round_phases:
                phase["round_number"] = round_number
            phases += round_phases
        if round_number < rounds and rest_sec:
            phases.append(
                _phase(
                    "between_rounds",
                    rest_sec,
                    f"Rest - next: Round {round_number + 1}/{rounds}",
                    f"{rest_sec}s",
                )
            )
    return phases


def _timer(
    *,
    name: str,
    exercise_type: str,
    phases: list[dict[str, Any]],
    exercise_ids: list[str],
    exercises: list[str],
    instruction: str = "",
) -> dict[str, Any]:
    timer: dict[str, Any] = {
        "exercise_name": name,
        "exercise_type": exercise_type,
        "total_duration_sec": sum(phase["duration_sec"] for phase in phases),
        "phases": phases,
    }
    if instruction:
        timer["instruction"] = instruction
    if exercise_ids:
        timer["exercise_ids"] = exercise_ids
    if len(exercises) > 1:
        timer["exercises"] = exercises
    return timer


def _blocks(exercises: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Consecutive exercises of one round-based group form a block; every other exercise is its own."""
    blocks: list[list[dict[str, Any]]] = []
    for exercise in exercises:
        group = exercise.get("group") or {}
        in_round_group = group.get("type") in ROUND_GROUPS and group.get("id")
        previous = (blocks[-1][-1].get("group") or {}) if blocks else {}
        if in_round_group and previous.get("id") == group.get("id"):
            blocks[-1].append(exercise)
        else:
            blocks.append([exercise])
    return blocks


def workout_timers(
    exercises: list[dict[str, Any]], *, prepare_sec: int, transition_sec: int
) -> list[dict[str, Any]]:
    """One timer per exercise or round-based group, in order. The first starts with a prepare phase, each
    later one with a transition phase, so the workout's length is the sum of the timers'."""
    timers = []
    for index, block in enumerate(_blocks(exercises)):
        first = block[0]
        group = first.get("group") or {}
        grouped = len(block) > 1 or group.get("type") in ROUND_GROUPS
        names = [str(member["exercise_name"]) for member in block]
        name = str(group.get("name") or " + ".join(names)) if grouped else names[0]
        body = group_phases(block) if grouped else exercise_phases(first)
        if index == 0:
            lead = [_phase("prepare", prepare_sec, f"Get ready: {name}")] if prepare_sec else []
        else:
            lead = [_phase("transition", transition_sec, f"Next: {name}")] if transition_sec else []
        timers.append(
            _timer(
                name=name,
                exercise_type=str(group.get("type")) if grouped else str(first["exercise_type"]),
                phases=lead + body,
                exercise_ids=[str(member["id"]) for member in block if member.get("id")],
                exercises=names,
                instruction="" if grouped else str(first.get("instruction") or ""),
            )
        )
    return timers


def timer_artifact(*, title: str, timers: list[dict[str, Any]]) -> dict[str, Any]:
    total = sum(timer["total_duration_sec"] for timer in timers)
    return {
        "artifact_id": new_artifact_id(),
        "type": TIMER_ARTIFACT_TYPE,
        "schema_version": TIMER_SCHEMA_VERSION,
        "title": title,
        "summary": {
            "total_duration_sec": total,
            "timer_count": len(timers),
            "phase_count": sum(len(timer["phases"]) for timer in timers),
        },
        "auto_start": False,
        "payload": {"timers": timers, "total_duration_sec": total},
    }


def clock(seconds: int) -> str:
    """'1:05:30', '5:30', '0:45'."""
    hours, rest = divmod(int(seconds), 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def _deliver(artifact_id: str) -> str:
    return f"Call message_notify_user with artifact_id={artifact_id} to show the timer to the user."


def _timed_exercise(exercise: dict[str, Any]) -> dict[str, Any]:
    """A current-workout exercise with only what the timer reads."""
    return {
        key: exercise.get(key)
        for key in (
            "id",
            "exercise_name",
            "exercise_type",
            "sets",
            "reps",
            "load_each",
            "load_unit",
            "hold_sec",
            "duration_min",
            "rounds",
            "work_sec",
            "rest_sec",
            "group",
        )
    }


_REST_PHASES = frozenset({"rest", "between_sets", "between_rounds"})


def segment_lines(phases: list[dict[str, Any]]) -> list[str]:
    """The phases as a few lines for the model: a line per segment (a set, round or block with the rest after
    it), identical consecutive segments counted once ('3× work 30s: 10 reps, rest 90s')."""
    segments: list[str] = []
    for phase in phases:
        if phase["phase_type"] in _REST_PHASES and segments:
            segments[-1] += f", rest {phase['duration_sec']}s"
            continue
        said = phase["detail"] not in ("", f"{phase['phase_type']} {phase['duration_sec']}s")
        detail = f": {phase['detail']}" if said and phase["phase_type"] not in _REST_PHASES else ""
        label = phase["cue"] if phase["phase_type"] in ("prepare", "transition") else phase["phase_type"]
        segments.append(f"{label} {phase['duration_sec']}s{detail}")
    lines: list[str] = []
    count = 0
    for index, segment in enumerate(segments):
        count += 1
        if index + 1 < len(segments) and segments[index + 1] == segment:
            continue
        lines.append(f"  {count}× {segment}" if count > 1 else f"  {segment}")
        count = 0
    return lines


# --- Handlers --------------------------------------------------------------------------------------------------
def generate_exercise_timer(args: ExerciseTimerInput, ctx: ToolContext) -> ToolOutcome:
    """Build the phases of one exercise's timer: an exercise of the current workout (the fields given
    change its timer), or one described by the fields alone."""
    given = args.given()
    given.pop("prepare_sec", None)
    if args.exercise_id:
        given.pop("exercise_id")
        workout = load_current_workout(ctx)
        if workout is None:
            return _failure(
                f"No active workout, so there is no exercise '{args.exercise_id}'. Describe the timer with "
                "exercise_name and exercise_type instead."
            )
        index = resolve_exercise(workout.exercises, args.exercise_id)
        if not isinstance(index, int):
            return _failure(index.error)
        exercise = {**_timed_exercise(workout.exercises[index].to_json()), **given}
    elif args.exercise_name and args.exercise_type:
        exercise = given
    else:
        return _failure(
            "Give exercise_id (an exercise of the current workout), or exercise_name and exercise_type."
        )
    problems = exercise_problems(exercise)
    if problems:
        return _failure(f"No timer for {exercise.get('exercise_name')}: {'; '.join(problems)}.")
    name = str(exercise["exercise_name"])
    lead = [_phase("prepare", args.prepare_sec, f"Get ready: {name}")] if args.prepare_sec else []
    timer = _timer(
        name=name,
        exercise_type=str(exercise["exercise_type"]),
        phases=lead + exercise_phases(exercise),
        exercise_ids=[str(exercise["id"])] if exercise.get("id") else [],
        exercises=[name],
        instruction=str(exercise.get("instruction") or ""),
    )
    artifact = timer_artifact(title=f"{name} timer", timers=[timer])
    total = timer["total_duration_sec"]
    lines = [
        f"Timer {artifact['artifact_id']}: {name} ({timer['exercise_type']}), total {clock(total)} ({total}s)"
    ]
    if timer.get("instruction"):
        lines.append(f"  shown: {timer['instruction']}")
    lines += segment_lines(timer["phases"])
    lines.append(_deliver(artifact["artifact_id"]))
    data = {"artifact_id": artifact["artifact_id"], "timer": timer, "total_duration_sec": total}
    return ToolOutcome(success=True, data=data, text="\n".join(lines), artifact=artifact)


def generate_workout_timers(args: WorkoutTimersInput, ctx: ToolContext) -> ToolOutcome:
    """Build timers for a list of exercises, or for the current workout."""
    title = "Workout timers"
    if args.exercises is not None:
        exercises = [exercise.model_dump() for exercise in args.exercises]
    else:
        workout = load_current_workout(ctx)
        if workout is None:
            return _failure(
                "No active workout: give `exercises`, or create a workout with generate_workout first."
            )
        exercises = [_timed_exercise(exercise.to_json()) for exercise in workout.exercises]
        title = f"{workout.title or 'Workout'} timers"
    problems = [
        f"exercise {number_} '{exercise.get('exercise_name')}': {problem}"
        for number_, exercise in enumerate(exercises, start=1)
        for problem in exercise_problems(exercise)
    ]
    if problems:
        return _failure(
            "No timers created. Fix every problem below:\n" + "\n".join(f"- {p}" for p in problems)
        )
    timers = workout_timers(exercises, prepare_sec=args.prepare_sec, transition_sec=args.transition_sec)
    artifact = timer_artifact(title=title, timers=timers)
    total = artifact["payload"]["total_duration_sec"]
    lines = [f"Timers {artifact['artifact_id']}: {len(timers)} timers, total {clock(total)} ({total}s)"]
    lines += [f"  {timer['exercise_name']}: {clock(timer['total_duration_sec'])}" for timer in timers]
    lines.append(_deliver(artifact["artifact_id"]))
    data = {
        "artifact_id": artifact["artifact_id"],
        "timers": [{key: timer[key] for key in ("exercise_name", "total_duration_sec")} for timer in timers],
        "total_duration_sec": total,
    }
    return ToolOutcome(success=True, data=data, text="\n".join(lines), artifact=artifact)


GENERATE_EXERCISE_TIMER = register(
    Tool(
        name="generate_exercise_timer",
        description=(
            "Create a countdown timer for one exercise of the current workout (exercise_id), or a free-"
            "standing one (exercise_name, exercise_type and its numbers). Deliver the artifact_id with "
            "message_notify_user."
        ),
        input_model=ExerciseTimerInput,
        handler=generate_exercise_timer,
        category="timers",
        priority=550,
        observation="full",
        status_start="Setting up your timer...",
        status_done="Timer ready",
    )
)

GENERATE_WORKOUT_TIMERS = register(
    Tool(
        name="generate_workout_timers",
        description=(
            "Create timers for the whole current workout, one per exercise (a superset or circuit as one), "
            "with transitions. Deliver the artifact_id with message_notify_user."
        ),
        input_model=WorkoutTimersInput,
        handler=generate_workout_timers,
        category="timers",
        priority=551,
        observation="full",
        status_start="Setting up your timers...",
        status_done="Timers ready",
    )
)
