"""The exercise logging tools (docs/contracts.md §11.5 (tool list)): log_completed_exercise, undo_logged_exercise and
mark_exercise_complete.

Each logs ONE exercise now (`datasources_app.services.log_single_exercise`). While there is a current
workout the entry goes to that workout's log (titled after it; its id is kept on the workout as `log_id`),
so sets logged during a workout and the `log_workout` that ends it make one history entry; with no
workout, to today's log of this session. An exercise of the current workout keeps its planned values as the entry's targets, and the
current workout records that it is done: the exercise gets `completed: true`, `completed_at` and the
`log_entry_id`, so the current_workout_session source shows progress and undo can clear the flag again.
The workout is updated in place (same artifact id): ticking an exercise off is not a new workout.

Values the model does not give count as done as planned. Seed 001 spellings are accepted: `load_kg`,
`distance_km`, scalar `reps`/`hold_sec`/`load`, `actual_*` prefixes, and its older exercise types
(strength, hiit, isometric, ...) mapped onto reps | hold | duration | intervals.
"""

from __future__ import annotations

import re
import uuid
from datetime import timedelta
from typing import Annotated, Any, Literal

from django.utils import timezone
from pydantic import BaseModel, BeforeValidator, Field, model_validator
from pydantic.json_schema import SkipJsonSchema

from datasources_app import formatters, selectors, services
from datasources_app.catalog import EXERCISE_TYPES, MUSCLES, canonical_muscle
from datasources_app.models import PERFORMANCE_FIELDS, WorkoutLogEntry
from datasources_app.sources import units_for
from datasources_app.workouts import (
    SECTION_DESCRIPTION,
    GoalShare,
    MuscleShare,
    StoredExercise,
    StoredWorkout,
    is_main,
    section_of,
)
from tools_app.exercise_references import REFERENCE_DESCRIPTION, named_exactly, resolve_exercise
from tools_app.formatting import confirmation
from tools_app.registry import register
from tools_app.types import Tool, ToolContext, ToolOutcome
from tools_app.unit_conversion import conversion_note, distance_in, loads_in
from tools_app.workout_coaching import heavier_than_on_hand
from tools_app.workout_tools import (
    MadeWorkout,
    MadeWorkoutId,
    later_day_of,
    load_current_workout,
    save_workout_in_place,
    workout_named,
    workout_to_log,
)
from tools_app.workout_validation import weights_on_hand

# Older exercise-type names, mapped onto the four types of docs/contracts.md §12.2 (exercise types).
SEED_001_EXERCISE_TYPES: dict[str, str] = {
    "strength": "reps",
    "bodyweight": "reps",
    "circuit": "reps",
    "sport_specific": "reps",
    "cardio_distance": "duration",
    "cardio_time": "duration",
    "yoga": "duration",
    "hiit": "intervals",
    "isometric": "hold",
    "flexibility": "hold",
    "balance": "hold",
}
# Catalogue categories as goal categories, for exercises logged without goals.
_CATALOG_CATEGORY_GOALS = {
    "strength": "strength",
    "powerlifting": "strength",
    "olympic": "power",
    "strongman": "strength",
    "plyometrics": "power",
    "cardio": "cardio",
    "stretching": "mobility",
    "mobility": "mobility",
}
_PER_SET_FIELDS = ("reps", "load_each", "hold_sec")
_UNIT_SPELLINGS = {"kgs": "kg", "kilograms": "kg", "lbs": "lb", "pounds": "lb", "miles": "mi", "kms": "km"}


def exercise_type_from_any(value: Any) -> Any:
    """'Reps', 'HIIT', 'cardio-time' → one of reps | hold | duration | intervals; other values unchanged."""
    if not isinstance(value, str):
        return value
    token = re.sub(r"[\s\-]+", "_", value.strip().lower())
    return SEED_001_EXERCISE_TYPES.get(token, token)


ExerciseType = Annotated[
    Literal["reps", "hold", "duration", "intervals"], BeforeValidator(exercise_type_from_any)
]


def _unit(value: Any) -> Any:
    if isinstance(value, str):
        cleaned = value.strip().lower()
        return _UNIT_SPELLINGS.get(cleaned, cleaned)
    return value


def per_set_values(value: Any, sets: Any) -> Any:
    """A scalar given for a per-set field becomes one value per set."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        count = sets if isinstance(sets, int) and not isinstance(sets, bool) and 0 < sets <= 100 else 1
        return [value] * count
    return value


# What the user did for one exercise; omitted values count as done as planned. (No docstring on input models:
# pydantic would send it to the model.)
class ExercisePerformance(BaseModel):
    sets: int | None = Field(default=None, ge=1)
    reps: list[Annotated[int, Field(ge=0)]] | None = Field(default=None, description="One per set.")
    load_each: list[Annotated[float, Field(ge=0)]] | None = Field(
        default=None, description="One per set: the bar's or machine's total; each one's weight for a pair."
    )
    load_unit: Literal["kg", "lb"] | None = None
    hold_sec: list[Annotated[int, Field(ge=1)]] | None = Field(default=None, description="One per set.")
    duration_min: float | None = Field(default=None, ge=0)
    distance: float | None = Field(default=None, ge=0)
    distance_unit: Literal["km", "mi"] | None = None
    rounds: int | None = Field(default=None, ge=1)
    work_sec: int | None = Field(default=None, ge=1)
    rpe: float | None = Field(default=None, ge=1, le=10)
    notes: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _accept_seed_001_spellings(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        data = {key.removeprefix("actual_"): value for key, value in data.items()}
        if "load_kg" in data:
            data.setdefault("load_each", data.pop("load_kg"))
            data.setdefault("load_unit", "kg")
        if "load" in data:
            data.setdefault("load_each", data.pop("load"))
        if "distance_km" in data:
            data.setdefault("distance", data.pop("distance_km"))
            data.setdefault("distance_unit", "km")
        for field in _PER_SET_FIELDS:
            if field in data:
                data[field] = per_set_values(data[field], data.get("sets"))
        for field in ("load_unit", "distance_unit"):
            if field in data:
                data[field] = _unit(data[field])
        return data

    def given(self) -> dict[str, Any]:
        return {
            field: getattr(self, field) for field in PERFORMANCE_FIELDS if getattr(self, field) is not None
        }


ExerciseRef = Annotated[
    str,
    BeforeValidator(
        lambda value: str(value) if isinstance(value, int) and not isinstance(value, bool) else value
    ),
    Field(min_length=1),
]


class LogCompletedExerciseInput(ExercisePerformance):
    exercise_id: ExerciseRef | None = Field(default=None, description=REFERENCE_DESCRIPTION)
    exercise_name: str | None = Field(default=None, description="For an exercise not in the current workout.")
    # Inferred from the values given for an exercise the catalogue does not know: accepted, not advertised.
    exercise_type: SkipJsonSchema[ExerciseType | None] = None
    muscles: list[str] | None = Field(default=None, description="Only for an exercise not in the catalogue.")
    # Muscles and goals with shares, as in generate_workout: accepted, not advertised.
    muscles_utilized: SkipJsonSchema[list[MuscleShare] | None] = None
    goals_addressed: SkipJsonSchema[list[GoalShare] | None] = None
    section: Literal["warmup", "cooldown"] | None = Field(default=None, description=SECTION_DESCRIPTION)
    artifact_id: MadeWorkoutId = Field(
        default=None, description="art_... of its workout, if not the current one."
    )


class MarkExerciseCompleteInput(ExercisePerformance):
    exercise_id: ExerciseRef = Field(description=REFERENCE_DESCRIPTION)


class UndoLoggedExerciseInput(BaseModel):
    exercise_id: ExerciseRef = Field(
        description="The log entry id returned when it was logged, or the current workout's exercise id."
    )


def _failure(message: str, **data: Any) -> ToolOutcome:
    return ToolOutcome(success=False, data={"error": message, **data}, text=message)


# --- The current workout's completion flags -------------------------------------------------------------------
def _mark(exercise: StoredExercise, entry: WorkoutLogEntry) -> None:
    exercise.completed = True
    exercise.completed_at = entry.completed_at.isoformat()
    exercise.log_entry_id = str(entry.id)


def _unmark(exercise: StoredExercise) -> None:
    exercise.completed = exercise.completed_at = exercise.log_entry_id = None


# --- Building one log entry -----------------------------------------------------------------------------------
def _catalog_facts(name: str) -> dict[str, Any]:
    """Slug, canonical name, type, muscles and goals the catalogue knows for `name` ({} if unknown)."""
    exercise = selectors.find_exercise_by_name(name=name)
    if exercise is None:
        return {}
    order = [*exercise.primary_muscles, *exercise.secondary_muscles]
    shares = exercise.muscle_shares or {}
    muscles = [{"muscle": muscle, "share": float(shares[muscle])} for muscle in order if muscle in shares]
    goal = _CATALOG_CATEGORY_GOALS.get(exercise.category)
    return {
        "exercise_name": exercise.name,
        "exercise_slug": exercise.slug,
        "exercise_type": exercise.exercise_type,
        "muscles_utilized": muscles,
        "goals_addressed": [{"goal": goal, "share": 1.0}] if goal else [],
    }


def _inferred_type(values: dict[str, Any]) -> str:
    if values.get("hold_sec"):
        return "hold"
    if values.get("rounds") is not None or values.get("work_sec") is not None:
        return "intervals"
    if values.get("duration_min") is not None or values.get("distance") is not None:
        return "duration"
    return "reps"


def _missing_for_type(exercise_type: str, actual: dict[str, Any]) -> str | None:
    needed = {
        "reps": ("reps",),
        "hold": ("hold_sec",),
        "duration": ("duration_min", "distance"),
        "intervals": ("rounds",),
    }[exercise_type]
    if any(actual.get(field) for field in needed):
        return None
    return " or ".join(needed)


def _normalised_shares(items: list[dict[str, Any]], key: str) -> list[dict[str, Any]]:
    total = sum(float(item.get("share") or 0) for item in items)
    if total <= 0:
        return items
    return [{key: item[key], "share": round(float(item["share"]) / total, 4)} for item in items]


def build_log_entry(
    ctx: ToolContext,
    *,
    planned: dict[str, Any] | None,
    performance: ExercisePerformance,
    exercise_name: str | None = None,
    exercise_type: str | None = None,
    muscles: list[dict[str, Any]] | None = None,
    goals: list[dict[str, Any]] | None = None,
    section: str | None = None,
) -> dict[str, Any] | str:
    """A log_single_exercise entry (targets from `planned`, actuals given or as planned), or a problem."""
    target = planned or {}
    catalog = {} if planned else _catalog_facts(exercise_name or "")
    name = target.get("exercise_name") or catalog.get("exercise_name") or (exercise_name or "").strip()
    if not name:
        return "Give exercise_id (an exercise of the current workout) or exercise_name."
    user_settings = selectors.get_settings(user_id=ctx.user_id)
    given = performance.given()
    kind = (
        target.get("exercise_type") or exercise_type or catalog.get("exercise_type") or _inferred_type(given)
    )
    if kind not in EXERCISE_TYPES:
        return f"exercise_type must be one of {', '.join(EXERCISE_TYPES)}, not {kind!r}."

    # Stored in the planned exercise's unit, else the user's; a load or distance given in the other is converted.
    load_unit = str(target.get("load_unit") or user_settings.weight_unit)
    distance_unit = str(target.get("distance_unit") or user_settings.distance_unit)
    if given.get("load_each") and performance.load_unit and performance.load_unit != load_unit:
        given["load_each"] = loads_in(given["load_each"], from_unit=performance.load_unit, to_unit=load_unit)
    if (
        given.get("distance") is not None
        and performance.distance_unit
        and performance.distance_unit != distance_unit
    ):
        given["distance"] = distance_in(
            given["distance"], from_unit=performance.distance_unit, to_unit=distance_unit
        )
    actual = {field: given.get(field, target.get(field)) for field in PERFORMANCE_FIELDS}
    if actual["sets"] is None and kind in ("reps", "hold"):
        per_set = actual["reps"] if kind == "reps" else actual["hold_sec"]
        actual["sets"] = len(per_set) if per_set else None
    missing = _missing_for_type(kind, actual)
    if missing:
        return f"Nothing to log for {name} ({kind}): give {missing}."

    entry: dict[str, Any] = {
        "exercise_name": name,
        "exercise_slug": target.get("exercise_slug") or catalog.get("exercise_slug") or "",
        "exercise_type": kind,
        "section": section_of(target) if planned else section or "main",
        "muscles": target.get("muscles_utilized")
        or _normalised_shares(muscles or [], "muscle")
        or catalog.get("muscles_utilized")
        or [],
        "goals": target.get("goals_addressed")
        or _normalised_shares(goals or [], "goal")
        or catalog.get("goals_addressed")
        or [],
        "load_unit": load_unit,
        "distance_unit": distance_unit,
        "rpe": performance.rpe,
        "notes": performance.notes or "",
        "target_rest_sec": target.get("rest_sec"),
    }
    for field in PERFORMANCE_FIELDS:
        empty: Any = [] if field in _PER_SET_FIELDS else None
        planned_value = target.get(field)
        entry[f"target_{field}"] = planned_value if planned_value is not None else empty
        entry[f"actual_{field}"] = actual[field] if actual[field] is not None else empty
    return entry


def _log(
    ctx: ToolContext, entry: dict[str, Any], *, workout: StoredWorkout | None
) -> WorkoutLogEntry | ToolOutcome:
    """Log `entry`; during a workout into that workout's log (one history entry per workout, titled)."""
    try:
        if workout is None:
            return services.log_single_exercise(user_id=ctx.user_id, entry=entry, session_id=ctx.session.pk)
        return services.log_single_exercise(
            user_id=ctx.user_id,
            entry=entry,
            session_id=ctx.session.pk,
            workout_title=workout.title or "Workout",
            workout_log=selectors.workout_log_of(user_id=ctx.user_id, workout=workout.to_record()),
            artifact_id=workout.artifact_id or "",
        )
    except services.InvalidLogEntryError as exc:
        return _failure(f"Nothing was logged: {exc}")


def _conversions(logged: WorkoutLogEntry, performance: ExercisePerformance) -> str:
    """' (60 lb → 27.5 kg)' when the load or distance was given in the unit it is not stored in."""
    notes = []
    if performance.load_each and performance.load_unit and performance.load_unit != logged.load_unit:
        notes.append(
            conversion_note(
                "", performance.load_each, performance.load_unit, logged.actual_load_each, logged.load_unit
            )
        )
    if (
        performance.distance is not None
        and performance.distance_unit
        and performance.distance_unit != logged.distance_unit
        and logged.actual_distance is not None
    ):
        notes.append(
            conversion_note(
                "",
                [performance.distance],
                performance.distance_unit,
                [logged.actual_distance],
                logged.distance_unit,
            )
        )
    return f" (converted {'; '.join(notes)})" if notes else ""


def _heavier_than_on_hand(ctx: ToolContext, entry: dict[str, Any], equipment: list[str] | None) -> str:
    """`heavier_than_on_hand` for an entry logged now, at the user's current location."""
    if not entry.get("actual_load_each"):
        return ""
    location = selectors.current_location(user_id=ctx.user_id)
    return heavier_than_on_hand(
        entry,
        equipment=equipment,
        location=location.name if location is not None else None,
        weights_kg=weights_on_hand(location),
    )


def _logged_outcome(
    ctx: ToolContext,
    logged: WorkoutLogEntry,
    *,
    workout_exercise_id: str | None,
    made: MadeWorkout | None = None,
    performance: ExercisePerformance | None = None,
    heavier: str = "",
) -> ToolOutcome:
    line = formatters.log_entry(logged, units_for(user_id=ctx.user_id))
    if performance is not None:
        line += _conversions(logged, performance)
    data = {
        "log_entry_id": str(logged.id),
        "log_id": str(logged.log_id),
        "exercise_name": logged.exercise_name,
        "exercise_type": logged.exercise_type,
        "workout_exercise_id": workout_exercise_id,
        "sets": logged.actual_sets,
        "reps": logged.actual_reps,
        "load_each": logged.actual_load_each,
        "load_unit": logged.load_unit,
        "rpe": logged.rpe,
    }
    done = ""
    if made is not None:
        named = workout_named(ctx, made.workout)
        ticked = made.current and workout_exercise_id
        done = f" (marked done in the current workout {named})" if ticked else f" (logged to {named})"
    left, tell_left = _what_is_left(made.workout if made is not None and _rest_to_log(made) else None)
    return ToolOutcome(
        success=True,
        data=data,
        text=f"logged: {line}{done}; entry id={logged.id}"
        + (f"\n{heavier}" if heavier else "")
        + (f"\n{left}" if left else ""),
        tell_user=f"Logged {line}. Nice work!" + (f" {tell_left}" if tell_left else ""),
    )


def _what_is_left(workout: StoredWorkout | None) -> tuple[str, str]:
    """What the workout logged into still has open after a log: for the model (log_workout when the user has
    finished, whatever they say of the rest) and for the user (ask for the rest only while some is open); ("", "")
    without a workout to finish."""
    if workout is None:
        return "", ""
    title = workout.title or "the workout"
    open_main = [e.exercise_name for e in workout.exercises if not e.completed and is_main(e.to_json())]
    if not open_main:
        return (
            f"Every main exercise of {title} is done: log_workout records the workout.",
            f"That's all of {title} done.",
        )
    return (
        f"Still open in {title}: {', '.join(open_main)}. If the user says they have finished the "
        "workout, log_workout records it now (what they did of these, or skipped); do not ask for the rest.",
        "Tell me when you've finished the rest and I'll log the workout.",
    )


def _rest_to_log(made: MadeWorkout | None) -> bool:
    """Whether a logged exercise leaves a workout to finish: the current workout, or one made earlier with an
    exercise not logged yet (not one the user finished and logged, an exercise added to it afterwards)."""
    return made is None or made.current or any(not exercise.completed for exercise in made.workout.exercises)


def _workout_exercise(
    ctx: ToolContext, reference: str, made: MadeWorkout | None
) -> tuple[MadeWorkout, int] | ToolOutcome:
    """The exercise `reference` names in `made` (a workout named by artifact_id), else in the current workout."""
    if made is None:
        workout = load_current_workout(ctx)
        if workout is None:
            return _failure(f"No active workout, so there is no exercise '{reference}' to use.")
        made = MadeWorkout(workout, current=True)
    # Sets are reported for the main exercises: "the first one" is the first after the warm-up.
    index = resolve_exercise(made.workout.exercises, reference, positions="main")
    return (made, index) if isinstance(index, int) else _failure(index.error)


def _already_done(exercise: StoredExercise) -> ToolOutcome:
    return _failure(
        f"{exercise.id} ({exercise.exercise_name}) is already logged as entry "
        f"{exercise.log_entry_id}. To log it again, undo that entry with undo_logged_exercise first."
    )


def _log_workout_exercise(
    ctx: ToolContext, reference: str, performance: ExercisePerformance, made: MadeWorkout | None = None
) -> ToolOutcome:
    """Log one exercise of a workout (the current one, unless `made` names another) against its plan; the
    current workout also ticks it off."""
    found = _workout_exercise(ctx, reference, made)
    if isinstance(found, ToolOutcome):
        return found
    made, index = found
    workout = made.workout
    planned = workout.exercises[index]
    if planned.completed:
        return _already_done(planned)
    entry = build_log_entry(ctx, planned=planned.to_json(), performance=performance)
    if isinstance(entry, str):
        return _failure(entry)
    logged = _log(ctx, entry, workout=workout)
    if isinstance(logged, ToolOutcome):
        return logged
    _mark(planned, logged)
    workout.log_id = str(logged.log_id)
    if made.current:
        save_workout_in_place(ctx, workout)
    return _logged_outcome(
        ctx,
        logged,
        workout_exercise_id=str(planned.id),
        made=made,
        performance=performance,
        heavier=_heavier_than_on_hand(ctx, entry, planned.equipment or None),
    )


# --- Handlers ------------------------------------------------------------------------------------------------------
def log_completed_exercise(args: LogCompletedExerciseInput, ctx: ToolContext) -> ToolOutcome:
    """Log one exercise the user did, now, to its workout: the one `artifact_id` names, else the current one (an
    exercise of it is also marked done). An exercise outside the current workout, when that one is on the
    calendar for a later day, belongs to no workout."""
    made: MadeWorkout | None = None
    if args.artifact_id is not None:
        found = workout_to_log(ctx, args.artifact_id, tool="log_completed_exercise")
        if isinstance(found, ToolOutcome):
            return found
        made = found
    if args.exercise_id:
        return _log_workout_exercise(ctx, args.exercise_id, args, made)
    name = (args.exercise_name or "").strip()
    if not name:
        return _failure("Give exercise_id (an exercise of the current workout) or exercise_name.")
    if made is None:
        current = load_current_workout(ctx)
        made = MadeWorkout(current, current=True) if current is not None else None
    if made is not None:
        index = named_exactly(made.workout.exercises, name)
        if index is not None and not made.workout.exercises[index].completed:
            return _log_workout_exercise(ctx, str(made.workout.exercises[index].id), args, made)
        if made.current and args.artifact_id is None and later_day_of(ctx, made.workout) is not None:
            made = None  # not done as part of a workout meant for another day
    workout = made.workout if made is not None else None
    entry = build_log_entry(
        ctx,
        planned=None,
        performance=args,
        exercise_name=name,
        exercise_type=args.exercise_type,
        muscles=[item.model_dump() for item in args.muscles_utilized or ()]
        or [{"muscle": canonical_muscle(name) or name.strip(), "share": 1.0} for name in args.muscles or ()],
        goals=[item.model_dump() for item in args.goals_addressed or ()],
        section=args.section,
    )
    if isinstance(entry, str):
        return _failure(entry)
    unknown = sorted(
        {str(item["muscle"]) for item in entry["muscles"] if canonical_muscle(str(item["muscle"])) is None}
    )
    if unknown:
        return _failure(f"Unknown muscles: {', '.join(unknown)}. Valid muscles: {', '.join(MUSCLES)}.")
    logged = _log(ctx, entry, workout=workout)
    if isinstance(logged, ToolOutcome):
        return logged
    if (
        made is not None and workout is not None
    ):  # done during the workout though not planned: it belongs to its log
        workout.log_id = str(logged.log_id)
        if made.current:
            save_workout_in_place(ctx, workout)
    return _logged_outcome(
        ctx,
        logged,
        workout_exercise_id=None,
        made=made,
        performance=args,
        heavier=_heavier_than_on_hand(ctx, entry, None),
    )


def mark_exercise_complete(args: MarkExerciseCompleteInput, ctx: ToolContext) -> ToolOutcome:
    """Tick off an exercise of the current workout and log it (its targets as actuals unless given)."""
    return _log_workout_exercise(ctx, args.exercise_id, args)


def undo_logged_exercise(args: UndoLoggedExerciseInput, ctx: ToolContext) -> ToolOutcome:
    """Delete one logged exercise; an exercise of the current workout it ticked off is open again."""
    reference = args.exercise_id.strip()
    workout = load_current_workout(ctx)
    exercises = workout.exercises if workout is not None else []
    entry_id: uuid.UUID | None = None
    try:
        entry_id = uuid.UUID(reference)
    except ValueError:
        index = resolve_exercise(exercises, reference) if exercises else None
        if isinstance(index, int) and exercises[index].log_entry_id:
            entry_id = uuid.UUID(str(exercises[index].log_entry_id))
    entry = (
        WorkoutLogEntry.objects.filter(id=entry_id, log__user_id=ctx.user_id).first() if entry_id else None
    )
    if entry is None or entry_id is None:
        recent = selectors.log_entries_between(
            user_id=ctx.user_id, start=timezone.now() - timedelta(days=1), include_skipped=True
        )
        listing = "; ".join(f"{item.id} ({item.exercise_name})" for item in recent[-10:]) or "none"
        return _failure(f"No logged exercise '{reference}' found. Logged in the last 24 hours: {listing}.")
    services.undo_log_entry(user_id=ctx.user_id, entry_id=entry_id)
    reopened = None
    for exercise in exercises:
        if str(exercise.log_entry_id) == str(entry_id):
            _unmark(exercise)
            reopened = exercise.id
    if reopened is not None and workout is not None:
        save_workout_in_place(ctx, workout)
    data = {"removed": True, "log_entry_id": str(entry_id), "exercise_name": entry.exercise_name}
    if reopened is not None:
        data["workout_exercise_id"] = reopened
    return ToolOutcome(success=True, data=data, text=confirmation("removed", note=entry.exercise_name))


LOG_COMPLETED_EXERCISE = register(
    Tool(
        name="log_completed_exercise",
        description=(
            "Log one exercise the user just did: one of the current workout (exercise_id; its plan is the "
            "target and it is ticked off) or any other (exercise_name). Give what was done; omitted values "
            "count as planned. Returns the entry id for undo_logged_exercise."
        ),
        input_model=LogCompletedExerciseInput,
        handler=log_completed_exercise,
        category="logging",
        priority=500,
        observation="summary",
        status_start="Logging your exercise...",
        status_done="Exercise logged",
        aliases={"name": "exercise_name", "type": "exercise_type", "exercise_order": "exercise_id"},
    )
)

MARK_EXERCISE_COMPLETE = register(
    Tool(
        name="mark_exercise_complete",
        description=(
            "Tick off one exercise of the current workout as done and log it, as planned unless you give "
            "what was actually done."
        ),
        input_model=MarkExerciseCompleteInput,
        handler=mark_exercise_complete,
        category="logging",
        priority=501,
        observation="summary",
        status_start="Marking exercise done...",
        status_done="Exercise completed",
        aliases={"exercise_order": "exercise_id"},
    )
)

UNDO_LOGGED_EXERCISE = register(
    Tool(
        name="undo_logged_exercise",
        description=(
            "Delete a logged exercise from the user's history; a ticked-off workout exercise is open again."
        ),
        input_model=UndoLoggedExerciseInput,
        handler=undo_logged_exercise,
        category="logging",
        priority=502,
        observation="confirmation",
        status_start="Undoing that log...",
        status_done="Log entry removed",
        aliases={"log_entry_id": "exercise_id"},
    )
)
