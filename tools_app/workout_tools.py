"""The workout tools (docs/contracts.md §12.6 (workout tools)): generate_workout, swap_exercise, adjust_exercise, remove_exercise,
log_workout.

The user's current workout is kept in the database (`datasources_app.services.save_current_workout`),
never in process memory, so it survives a restart and any worker can continue the session. It is stored
as a flat record `{artifact_id, title, summary, auto_start, exercises}` holding the latest artifact's
exercises. A `ToolContext.current_workout_override` (either shape) replaces it for the tools that act on
it: they then read and update the override only and never touch the stored one. generate_workout always
stores its workout, and replaces the override too when there is one.

Modifications keep keys other tools add to an exercise (e.g. a completion flag).

Every change writes a NEW artifact (new `art_` id, same structure) and makes it the current workout,
so the client can show the updated workout; the observation asks the model to deliver it with
message_notify_user. Exercise ids (`ex_` + 6 hex) survive adjustments and removals of other exercises.

Exercises are referred to by id (`ex_…`, or any id an earlier workout carried, e.g. a UUID), by 1-based
order number ("2" or 2), or in the user's words ("the last one", "the curls"): one resolver,
`tools_app.exercise_references`, whose error lists the candidates when the words match several or none.
"""

from __future__ import annotations

import datetime as dt
import logging
import math
import re
import uuid
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, Field, StringConstraints, ValidationError, model_validator
from pydantic.json_schema import SkipJsonSchema

from datasources_app import formatters, services
from datasources_app.catalog import EXERCISE_TYPES, exercise_name_key
from datasources_app.models import PERFORMANCE_FIELDS
from datasources_app.selectors import (
    get_current_workout,
    local_today,
    log_of_made_workout,
    scheduled_day_of,
    scheduled_workouts,
)
from datasources_app.selectors import workout_log_of as get_workout_log_of
from datasources_app.workouts import (
    ARTIFACT_SCHEMA_VERSION,
    ARTIFACT_TYPE,
    GROUP_MIN_SIZE,
    OPTIONAL_FIELDS,
    REQUIRED_FIELDS,
    CompletedExercise,
    Exercise,
    ExerciseFields,
    ReplacementExercise,
    StoredExercise,
    StoredWorkout,
    Workout,
    WorkoutSummary,
    canonical_equipment,
    expand_per_set_scalars,
    new_exercise_id,
    section_of,
)
from sessions_app.selectors import get_artifact
from tools_app.displayables import is_workout_artifact, session_workouts
from tools_app.exercise_references import (
    REFERENCE_DESCRIPTION,
    REFERENCES_DESCRIPTION,
    Unresolved,
    named_exactly,
    resolve_exercise,
    resolve_exercises,
)
from tools_app.formatting import counted, joined, shorten
from tools_app.registry import register
from tools_app.training_facts import name_qualifier, name_readings
from tools_app.types import Tool, ToolContext, ToolOutcome
from tools_app.unit_conversion import exercise_in_user_units
from tools_app.workout_coaching import (
    FREE_TEXT_FIELDS,
    Change,
    describe_change,
    harder_or_easier,
    heavier_than_on_hand,
    lifter_of,
    nudge,
    pick_replacement,
    prescribe,
    recent_training_warnings,
    what_moved,
)
from tools_app.workout_validation import (
    CatalogMatch,
    ExerciseCheck,
    TrainingContext,
    check_exercises,
    close_catalog_names,
    effective_equipment,
    find_catalog_match,
    implements_for,
    knee_pad_cue,
    load_training_context,
)

logger = logging.getLogger(__name__)

# Seconds per rep and per change of exercise, for the duration estimate.
_SECONDS_PER_REP = 3
_SECONDS_BETWEEN_EXERCISES = 60


def new_artifact_id() -> str:
    return "art_" + uuid.uuid4().hex[:12]


# --- Input models ---------------------------------------------------------------------------------------------------
def _reference_as_text(value: Any) -> Any:
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


ExerciseRef = Annotated[
    str, BeforeValidator(_reference_as_text), Field(min_length=1, description=REFERENCE_DESCRIPTION)
]


class GenerateWorkoutInput(BaseModel):
    workout: Workout

    @model_validator(mode="before")
    @classmethod
    def _accept_top_level_exercises(cls, data: Any) -> Any:
        """Seed 001 passes `exercises` (and `summary`, `title`) at the top level, not inside `workout`."""
        if isinstance(data, dict) and "workout" not in data and "exercises" in data:
            keys = ("title", "exercises", "summary", "auto_start")
            return {"workout": {key: data[key] for key in keys if key in data}}
        return data


_PER_SET = "One per set."


# The exercise to replace, and optionally the replacement's name and changes to its prescription. Seed 001's
# `new_exercise` (a whole exercise, as in generate_workout) is still accepted but not advertised: a name is
# enough, since the tool prescribes the replacement itself. (No docstring: pydantic would send it to the model.)
class SwapExerciseInput(BaseModel):
    exercise_id: ExerciseRef
    replacement_name: str | None = Field(
        default=None,
        min_length=1,
        description="Omit to let the tool pick one with the same movement and muscles.",
    )
    exercise_type: str | None = Field(
        default=None,
        description="Only for a name not in the catalogue.",
        json_schema_extra={"enum": list(EXERCISE_TYPES)},
    )
    muscles: list[str] | None = Field(default=None, description="Only for a name not in the catalogue.")
    avoid_equipment: list[str] | None = Field(
        default=None,
        description="When the tool picks: equipment the replacement must not use (e.g. bench taken).",
    )
    # Checked with the rest of the replacement (tools_app.workout_validation), so no bounds advertised here.
    sets: int | None = None
    reps: list[int] | None = Field(default=None, description=_PER_SET)
    load_each: list[float] | None = Field(default=None, description=_PER_SET)
    hold_sec: list[int] | None = Field(default=None, description=_PER_SET)
    duration_min: float | None = None
    rounds: int | None = None
    work_sec: int | None = None
    rest_sec: int | None = None
    reason: str | None = Field(default=None, description="Why, in a few words.")
    new_exercise: SkipJsonSchema[ReplacementExercise | None] = None

    @model_validator(mode="before")
    @classmethod
    def _accept_a_bare_name(cls, data: Any) -> Any:
        """A new_exercise that is only a name (a string, or a dict without a type) means replacement_name;
        a single number for a per-set field is that number for every set."""
        if not isinstance(data, dict):
            return data
        new = data.get("new_exercise")
        name = new if isinstance(new, str) else None
        if isinstance(new, dict) and not (new.keys() & {"exercise_type", "type"}):
            name = new.get("exercise_name") or new.get("name")
        if name is not None:
            data = {**{k: v for k, v in data.items() if k != "new_exercise"}, "replacement_name": name}
        return expand_per_set_scalars(data)

    def overrides(self) -> dict[str, Any]:
        """The prescription fields given, by name."""
        return {key: getattr(self, key) for key in PRESCRIPTION_OVERRIDES if getattr(self, key) is not None}


PRESCRIPTION_OVERRIDES = (
    "sets",
    "reps",
    "load_each",
    "hold_sec",
    "duration_min",
    "rounds",
    "work_sec",
    "rest_sec",
)


def _references_as_text(value: Any) -> Any:
    """A list of references (ids, numbers) is read as the several exercises it names."""
    if isinstance(value, list):
        return ", ".join(str(_reference_as_text(item)) for item in value)
    return _reference_as_text(value)


class AdjustExerciseInput(BaseModel):
    exercise_id: Annotated[
        str, BeforeValidator(_references_as_text), Field(min_length=1, description=REFERENCES_DESCRIPTION)
    ]
    adjustments: dict[str, Any] = Field(
        default_factory=dict,
        description='e.g. {"sets": 4, "reps": [8, 8, 8, 8]} or {"order": 1}; not exercise_type.',
    )
    change: Change | None = Field(
        default=None,
        description="Instead of adjustments: one step the tool works out (harder/easier, or one field).",
    )

    @model_validator(mode="before")
    @classmethod
    def _accept_flat_fields(cls, data: Any) -> Any:
        """Seed 001 passes the changed fields next to exercise_id instead of inside `adjustments`."""
        if isinstance(data, dict) and "adjustments" not in data:
            rest = {
                key: value for key, value in data.items() if key not in ("exercise_id", "reason", "change")
            }
            return {"exercise_id": data.get("exercise_id"), "adjustments": rest, "change": data.get("change")}
        return data


class RemoveExerciseInput(BaseModel):
    exercise_id: ExerciseRef
    reason: str | None = Field(default=None, description="Why, in a few words.")


class LogWorkoutInput(BaseModel):
    completed_exercises: list[CompletedExercise] = Field(default_factory=list)
    others_as_planned: bool = Field(
        default=False, description="True: the exercises not listed (all, if none are) were done as planned."
    )
    workout_notes: str | None = Field(default=None, description="How the session went overall.")
    artifact_id: MadeWorkoutId = Field(
        default=None, description="art_... of the workout done, if not the current one."
    )


# --- The current workout ----------------------------------------------------------------------------------------------
def load_current_workout(ctx: ToolContext) -> StoredWorkout | None:
    """The workout the tools act on (the context's override, else the user's stored one), its exercises in
    order, or None when there is none (or what is stored is no workout)."""
    workout: Any = ctx.current_workout_override
    artifact_id = ""
    if workout is None:
        current = get_current_workout(user_id=ctx.user_id)
        if current is not None:
            workout, artifact_id = current.workout, current.artifact_id
    if not isinstance(workout, dict):
        return None
    try:
        stored = StoredWorkout.model_validate(workout)
    except ValidationError:
        logger.warning("workout.unreadable", extra={"user_id": str(ctx.user_id)}, exc_info=True)
        return None
    stored.exercises = stored.in_order()
    stored.artifact_id = artifact_id or stored.artifact_id or ""
    return stored


def workout_exercises(workout: dict[str, Any]) -> list[dict[str, Any]]:
    """The exercises of a stored current-workout record or of an artifact (`payload.exercises`) as stored,
    in order; [] when it holds none."""
    try:
        stored = StoredWorkout.model_validate(workout)
    except ValidationError:
        return []
    return [exercise.to_json() for exercise in stored.in_order()]


def current_workout_record(artifact: dict[str, Any]) -> dict[str, Any]:
    """What is stored as the user's current workout for a workout artifact: flat, exercises at the top
    level (the shape the `current_workout_session` data source reads)."""
    return {
        "artifact_id": artifact["artifact_id"],
        "title": artifact["title"],
        "summary": artifact["summary"],
        "auto_start": artifact["auto_start"],
        "exercises": artifact["payload"]["exercises"],
    }


def store_current_workout(ctx: ToolContext, artifact: dict[str, Any], *, replace_stored: bool) -> None:
    """Make `artifact` the current workout: the override when there is one, else (or also, when
    `replace_stored`) the one stored for the user.

    A changed version of the same workout (`replace_stored` False: a swap, an adjustment, a removal) keeps
    the previous version's `log_id`, so sets logged before the change still belong to the workout."""
    record = current_workout_record(artifact)
    overridden = ctx.current_workout_override is not None
    if not replace_stored:
        previous = load_current_workout(ctx)
        if previous is not None and previous.log_id:
            record["log_id"] = previous.log_id
    if overridden:
        ctx.current_workout_override = record
    if replace_stored or not overridden:
        services.save_current_workout(
            user_id=ctx.user_id,
            workout=record,
            artifact_id=str(artifact["artifact_id"]),
            session_id=ctx.session.pk,
        )


def save_workout_in_place(ctx: ToolContext, workout: StoredWorkout) -> None:
    """Store a change to the current workout that keeps its artifact (a completion flag, its log): the
    override when there is one, else the user's stored workout."""
    if ctx.current_workout_override is not None:
        ctx.current_workout_override = workout.to_record()
    else:
        services.update_current_workout(user_id=ctx.user_id, workout=workout.to_record())


# --- Workouts made earlier, by artifact_id -----------------------------------------------------------------------------
# How many of the workouts made in the session an unknown artifact_id's error lists, newest first.
_WORKOUTS_LISTED = 5

NonEmptyText = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]
MadeWorkoutId = Annotated[
    NonEmptyText | None, Field(description="art_... of a workout you made: copied exactly.")
]


@dataclass(frozen=True)
class MadeWorkout:
    """A workout an `art_` id names: as it was made (the artifact, or the stored record of the current workout),
    and whether it is the user's current workout (that version or an earlier one of it)."""

    workout: StoredWorkout
    current: bool


def find_made_workout(ctx: ToolContext, reference: str) -> MadeWorkout | str:
    """The workout `reference` names among the session's workout artifacts and the user's current workout (so
    another user's id is never found); else what the id is, for the error ("No workout art_…")."""
    current = load_current_workout(ctx)
    if current is not None and current.artifact_id == reference:
        return MadeWorkout(current, current=True)
    artifact = get_artifact(session=ctx.session, artifact_id=reference)
    if artifact is None or not is_workout_artifact(artifact):
        return (
            f"{reference} is a {artifact.get('type')}, not a workout"
            if artifact
            else f"No workout {reference}"
        )
    try:
        made = StoredWorkout.model_validate(artifact)
    except ValidationError:
        return f"No workout {reference}"
    made.artifact_id, made.exercises = reference, made.in_order()
    return MadeWorkout(
        made, current=current is not None and _exercise_ids(made) & _exercise_ids(current) != set()
    )


def _exercise_ids(workout: StoredWorkout | Mapping[str, Any]) -> set[str]:
    """The exercise ids of a workout (or an artifact): a change keeps the other exercises' ids, so two versions of
    one workout share some, and two workouts made apart share none."""
    if isinstance(workout, StoredWorkout):
        return {str(exercise.id) for exercise in workout.exercises}
    payload = workout.get("payload") if isinstance(workout.get("payload"), Mapping) else workout
    exercises = payload.get("exercises") if isinstance(payload, Mapping) else None
    return {
        str(exercise["id"])
        for exercise in (exercises if isinstance(exercises, list) else ())
        if isinstance(exercise, Mapping) and exercise.get("id")
    }


def _other_workouts(ctx: ToolContext, current: StoredWorkout | None) -> list[dict[str, Any]]:
    """The session's workout artifacts, newest first, one per workout (its latest version), without the current
    workout's versions."""
    seen = _exercise_ids(current) if current is not None else set()
    others = []
    for artifact in reversed(session_workouts(session=ctx.session)):
        ids = _exercise_ids(artifact)
        if not ids & seen:
            others.append(artifact)
        seen |= ids
    return others


def made_workout_listing(ctx: ToolContext, *, with_days: bool = False) -> list[str]:
    """The workouts the model can name by artifact_id, the current one first, then the session's newest first
    (each one's latest version): "art_… 'Upper Body' (the current workout)"; `with_days`: and the day each is on the
    calendar for, when it is ("art_… 'Home Cardio' (for Sun 29 Nov)")."""
    current = load_current_workout(ctx)
    current_id = current.artifact_id if current is not None else None
    made: dict[str, str] = {}
    if current is not None and current_id:
        made[current_id] = current.title or "Workout"
    for workout in _other_workouts(ctx, current):
        made.setdefault(str(workout.get("artifact_id")), str(workout.get("title") or "Workout"))
    listing = []
    for artifact_id, title in list(made.items())[:_WORKOUTS_LISTED]:
        notes = ["the current workout"] if artifact_id == current_id else []
        day = None
        if with_days and current is not None and artifact_id == current_id:
            day = calendar_day_of(ctx, current)  # changed since it was put on the day, too
        elif with_days:
            day = scheduled_day_of(user_id=ctx.user_id, artifact_id=artifact_id)
        if day is not None:
            notes.append(f"for {formatters.day(day)}")
        listing.append(f"{artifact_id} '{title}'" + (f" ({', '.join(notes)})" if notes else ""))
    return listing


def calendar_day_of(ctx: ToolContext, workout: StoredWorkout) -> dt.date | None:
    """The nearest day, today or later, the calendar holds this workout for, still to do: the version put on it or
    a later one (a swap or an adjustment gives the workout a new artifact id and keeps its other exercises' ids,
    while the day keeps the version scheduled). None when on no day."""
    ids = _exercise_ids(workout)
    for day in scheduled_workouts(user_id=ctx.user_id, days_ahead=30, statuses=("scheduled",)):
        held = day.workout if isinstance(day.workout, dict) else {}
        if (workout.artifact_id and held.get("artifact_id") == workout.artifact_id) or ids & _exercise_ids(
            held
        ):
            return day.scheduled_date
    return None


def later_day_of(ctx: ToolContext, workout: StoredWorkout) -> dt.date | None:
    """The later day the workout is on the calendar for, when it is for no day sooner (None: it is for today, or
    on no day)."""
    day = calendar_day_of(ctx, workout)
    return day if day is not None and day > local_today(user_id=ctx.user_id) else None


def workout_named(ctx: ToolContext, workout: StoredWorkout) -> str:
    """How a log's result names the workout it went to, so a model notices when it is not the one the user did:
    "'Legs' (art_…, for today)", "'Home Cardio' (art_…, on the calendar for Sun 29 Nov, not today)"."""
    later = later_day_of(ctx, workout)
    day = f"on the calendar for {formatters.day(later)}, not today" if later else "for today"
    return f"'{workout.title or 'Workout'}' ({', '.join(filter(None, (workout.artifact_id, day)))})"


def workout_to_log(ctx: ToolContext, reference: str | None, *, tool: str) -> MadeWorkout | ToolOutcome:
    """The workout a logging tool logs: the one `reference` names (`find_made_workout`), else the current one.
    The current workout on the calendar for a later day is not taken for the one done today: the failure asks for
    the artifact_id of the workout done (that one's, if the user did it early; a workout made in an earlier
    session is logged by its exercises' names)."""
    if reference is None:
        current = load_current_workout(ctx)
        if current is None:
            return _no_active_workout()
        later = later_day_of(ctx, current)
        if later is None:
            return MadeWorkout(current, current=True)
        return _failure(
            f"Nothing was logged: the current workout '{current.title or 'Workout'}' is on the calendar for "
            f"{formatters.day(later)}, not today. Call {tool} again with the artifact_id of the workout the user "
            f"did: {'; '.join(made_workout_listing(ctx, with_days=True))}. A workout not listed (made in an "
            "earlier conversation): log what the user did with log_completed_exercise by exercise_name."
        )
    found = find_made_workout(ctx, reference)
    if isinstance(found, str):
        listing = made_workout_listing(ctx, with_days=True)
        return _failure(
            f"Nothing was logged: {found}. "
            + (f"Workouts you can log by artifact_id: {'; '.join(listing)}." if listing else "")
        )
    if found.current:
        current = load_current_workout(ctx)
        return MadeWorkout(current, current=True) if current is not None else found
    return MadeWorkout(_with_its_log(ctx, found.workout), current=False)


def _with_its_log(ctx: ToolContext, workout: StoredWorkout) -> StoredWorkout:
    """A workout made earlier that is not the current one, with what was logged of it already (in the log of any
    of its versions, e.g. sets logged while it was current): its log's id, and each exercise logged there marked
    with its entry (by name), as the current workout carries them."""
    ids = _exercise_ids(workout)
    versions = [
        str(artifact.get("artifact_id"))
        for artifact in session_workouts(session=ctx.session)
        if _exercise_ids(artifact) & ids
    ]
    log = log_of_made_workout(user_id=ctx.user_id, artifact_ids=[workout.artifact_id or "", *versions])
    if log is None:
        return workout
    workout.log_id = str(log.id)
    open_by_name: dict[str, list[StoredExercise]] = defaultdict(list)
    for exercise in workout.exercises:
        open_by_name[exercise_name_key(exercise.exercise_name or "")].append(exercise)
    for entry in log.entries.order_by("order"):
        waiting = open_by_name.get(exercise_name_key(entry.exercise_name))
        if waiting:
            exercise = waiting.pop(0)
            exercise.completed, exercise.log_entry_id = True, str(entry.id)
            exercise.completed_at = entry.completed_at.isoformat()
    return workout


def find_exercise(
    exercises: Sequence[StoredExercise], reference: str, *, positions: Literal["workout", "main"] = "workout"
) -> int | ToolOutcome:
    """Index of the exercise `reference` means (`resolve_exercise`), else the failure that says which it may be."""
    found = resolve_exercise(exercises, reference, positions=positions)
    return found if isinstance(found, int) else _failure(found.error)


def _no_active_workout() -> ToolOutcome:
    return _failure("No active workout: create one with generate_workout first.")


def _failure(message: str, **data: Any) -> ToolOutcome:
    return ToolOutcome(success=False, data={"error": message, **data}, text=message)


def _problem_list(header: str, problems: list[str]) -> ToolOutcome:
    text = header + "\n" + "\n".join(f"- {problem}" for problem in problems)
    return _failure(text, problems=problems)


# --- Canonical exercises and artifacts -------------------------------------------------------------------------------
def canonical_exercise(
    exercise: ExerciseFields,
    *,
    exercise_id: str,
    order: int,
    match: CatalogMatch | None,
    equipment: list[str],
    context: TrainingContext,
) -> StoredExercise:
    """The exercise as stored in the artifact: seed 000 field names, only the fields of its type."""
    fields = canonical_fields(
        exercise, exercise_id=exercise_id, order=order, match=match, equipment=equipment, context=context
    )
    return StoredExercise.model_validate(fields)


def canonical_fields(
    exercise: ExerciseFields,
    *,
    exercise_id: str,
    order: int,
    match: CatalogMatch | None,
    equipment: list[str],
    context: TrainingContext,
) -> dict[str, Any]:
    """`canonical_exercise`'s fields, before they are checked as a stored exercise (a preview has no id)."""
    exercise, _ = exercise_in_user_units(
        exercise, weight_unit=context.weight_unit, distance_unit=context.distance_unit
    )
    out: dict[str, Any] = {
        "id": exercise_id,
        "order": order,
        "exercise_name": exercise.exercise_name,
        "exercise_type": exercise.exercise_type,
    }
    if match is not None:
        out["exercise_slug"] = match.slug
    for name in (*REQUIRED_FIELDS[exercise.exercise_type], *OPTIONAL_FIELDS[exercise.exercise_type]):
        value = getattr(exercise, name)
        if value is not None and value != []:
            out[name] = value
    out.pop("implements", None)
    if out.get("load_each"):
        out["load_unit"] = exercise.load_unit or context.weight_unit
        implements = implements_for(exercise, match, equipment)
        if implements is not None:
            out["implements"] = implements  # 2: load_each is each one of a pair ("each hand")
    else:
        out.pop("load_unit", None)
    if out.get("distance") is not None:
        out["distance_unit"] = exercise.distance_unit or context.distance_unit
    else:
        out.pop("distance_unit", None)
    out["muscles_utilized"] = [item.model_dump() for item in exercise.muscles_utilized]
    out["goals_addressed"] = [item.model_dump() for item in exercise.goals_addressed]
    out["reasoning"] = exercise.reasoning
    out["equipment"] = equipment
    if exercise.group is not None:
        out["group"] = exercise.group.model_dump(exclude_none=True)
    # A kneeling exercise for a knee the rules let kneel is done on a pad, whoever wrote it.
    injured = {injury.part.key for injury in context.injuries}
    notes = " ".join(
        part
        for part in (exercise.notes, knee_pad_cue(exercise.exercise_name, exercise.notes, injured))
        if part
    )
    if notes:
        out["notes"] = notes
    return out


def preview_exercise(
    exercise: ExerciseFields, *, match: CatalogMatch | None, weight_unit: str, distance_unit: str
) -> dict[str, Any] | None:
    """An exercise of a workout the model is still writing, shaped as the workout's artifact will store it
    (docs/contracts.md §12.5) as far as it can be before the workout is checked: canonical spelling, only the
    fields of its type, the user's units, the catalogue's slug (`match`, the catalogue's entry for its name) and
    equipment, the dumbbell count. It has no `id` yet (ids are given when the workout is stored). None for an
    exercise type the tools do not know."""
    if exercise.exercise_type not in EXERCISE_TYPES:
        return None
    # canonical_exercise reads only the units of the context; the user's other facts are for the checks.
    units = TrainingContext(
        weight_unit=weight_unit,
        distance_unit=distance_unit,
        location_name=None,
        available_equipment=frozenset(),
    )
    order = getattr(exercise, "order", None)
    shaped = canonical_fields(
        exercise,
        exercise_id="",
        order=order if isinstance(order, int) else 0,
        match=match,
        equipment=effective_equipment(exercise, match),
        context=units,
    )
    del shaped["id"]
    if not isinstance(order, int):
        del shaped["order"]
    return shaped


def parse_stored_exercise(stored: dict[str, Any], **changes: Any) -> Exercise:
    merged = {**stored, **changes}
    if "implements" not in changes and not any(merged.get("load_each") or [merged.get("load")]):
        merged.pop("implements", None)  # a load made bodyweight has no dumbbells left to count
    return Exercise.model_validate(merged)


def ranked_shares(exercises: Sequence[StoredExercise], field: Literal["muscles", "goals"]) -> list[str]:
    """Muscle (or goal) names from every exercise's shares, the largest total share first."""
    totals: dict[str, float] = defaultdict(float)
    for exercise in exercises:
        if field == "muscles":
            for muscle in exercise.muscles_utilized or ():
                totals[muscle.muscle] += muscle.share
        else:
            for goal in exercise.goals_addressed or ():
                totals[goal.goal] += goal.share
    return [name for name, _ in sorted(totals.items(), key=lambda pair: (-pair[1], pair[0]))]


def estimate_duration_min(exercises: Sequence[Mapping[str, Any]]) -> int:
    """A rough length: reps at 3 s each, holds, durations and intervals as given, rests, 1 min per change."""
    rounds_by_group: dict[str, int] = {}
    for exercise in exercises:
        group = exercise.get("group") or {}
        if group.get("id") and group.get("rounds"):
            rounds_by_group.setdefault(str(group["id"]), int(group["rounds"]))
    seconds = 0.0
    for exercise in exercises:
        kind = exercise.get("exercise_type")
        rest = float(exercise.get("rest_sec") or 0)
        sets = int(exercise.get("sets") or 1)
        if kind == "reps":
            work = sum(exercise.get("reps") or ()) * _SECONDS_PER_REP + rest * sets
        elif kind == "hold":
            work = sum(exercise.get("hold_sec") or ()) + rest * sets
        elif kind == "duration":
            work = float(exercise.get("duration_min") or 0) * 60
        else:
            work = int(exercise.get("rounds") or 0) * (float(exercise.get("work_sec") or 0) + rest)
        group_id = str((exercise.get("group") or {}).get("id"))
        seconds += work * rounds_by_group.get(group_id, 1) + _SECONDS_BETWEEN_EXERCISES
    return max(1, math.ceil(seconds / 60))


def build_artifact(
    *,
    exercises: Sequence[StoredExercise],
    title: str | None,
    auto_start: bool,
    given: WorkoutSummary | None = None,
) -> dict[str, Any]:
    """A workout artifact (docs/contracts.md §6.4 (event data) `artifact` event data) with a new id."""
    stored = [exercise.to_json() for exercise in exercises]
    muscles = ranked_shares(exercises, "muscles")
    goals = ranked_shares(exercises, "goals")
    summary = {
        "exercise_count": len(exercises),
        "estimated_duration_min": (given.estimated_duration_min if given else None)
        or estimate_duration_min(stored),
        "muscles_targeted": (given.muscles_targeted if given else None) or muscles,
        "primary_goals": (given.primary_goals if given else None) or goals[:3],
    }
    title = title or (" & ".join(muscles[:2]) + " workout" if muscles else "Workout")
    return {
        "artifact_id": new_artifact_id(),
        "type": ARTIFACT_TYPE,
        "schema_version": ARTIFACT_SCHEMA_VERSION,
        "title": title,
        "summary": summary,
        "auto_start": auto_start,
        "payload": {"exercises": stored, "title": title},
    }


def next_version(previous: StoredWorkout, exercises: Sequence[StoredExercise]) -> dict[str, Any]:
    """The artifact for a changed workout: new id, same title and auto_start, summary recomputed."""
    return build_artifact(exercises=exercises, title=previous.title, auto_start=previous.auto_start)


def store_next_version(
    ctx: ToolContext, previous: StoredWorkout, exercises: Sequence[StoredExercise]
) -> tuple[dict[str, Any], str]:
    """Store the changed workout as the current one (swap, adjust, remove): its artifact, and the sentence that
    tells the user how long it takes now ('It now takes about 38 min.'), from the summary's estimate."""
    artifact = next_version(previous, exercises)
    store_current_workout(ctx, artifact, replace_stored=False)
    return artifact, f"It now takes about {_number(artifact['summary']['estimated_duration_min'])} min."


def _number(value: Any) -> str:
    return f"{value:g}" if isinstance(value, int | float) else str(value)


def _numbers(values: Iterable[Any]) -> str:
    return "[" + ",".join(_number(value) for value in values) + "]"


def describe_exercise(exercise: StoredExercise) -> str:
    """One line, e.g. 'ex_7f8a9b: Barbell Bench Press (reps) [order: 1] - 4×10/10/8/6 @ 60kg · rest 120s'
    (the prescription as every surface reads it, `formatters.exercise_card_text`)."""
    detail = formatters.exercise_card_text(exercise)
    line = (
        f"{exercise.id}: {exercise.exercise_name} ({exercise.exercise_type}) "
        f"[order: {exercise.order}] - {detail}"
    )
    group = exercise.group
    if group is not None:
        rounds = f", {group.rounds} rounds" if group.rounds else ""
        line += f" {{{group.type} {group.id} #{group.position}{rounds}}}"
    return line


def _deliver_instruction(artifact_id: str) -> str:
    return f"Call message_notify_user with artifact_id={artifact_id} so the user sees the updated workout."


# --- generate_workout --------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class CheckedWorkout:
    """A workout in the user's units and its check against their facts at their current location
    (`check_workout`): what generate_workout stores when the check found no problem."""

    workout: Workout
    conversions: list[str]
    context: TrainingContext
    check: ExerciseCheck
    converted: bool  # a load or distance was put in the user's units (`workout` is not the one given)


def check_workout(
    workout: Workout, *, user_id: uuid.UUID, context: TrainingContext | None = None
) -> CheckedWorkout:
    """The workout in the user's units, checked at their current location (`context`: the user's facts there,
    when the caller has read them already)."""
    context = context or load_training_context(user_id=user_id)
    converted = [
        exercise_in_user_units(item, weight_unit=context.weight_unit, distance_unit=context.distance_unit)
        for item in workout.exercises
    ]
    in_units = workout.model_copy(update={"exercises": [item for item, _ in converted]})
    return CheckedWorkout(
        workout=in_units,
        conversions=[note for _, notes in converted for note in notes],
        context=context,
        check=check_exercises(in_units.exercises, user_id=user_id, context=context),
        converted=any(
            item is not given for (item, _), given in zip(converted, workout.exercises, strict=True)
        ),
    )


def generate_workout(args: GenerateWorkoutInput, ctx: ToolContext) -> ToolOutcome:
    """Validate the workout; when valid, store it as the user's current workout and return its artifact."""
    return save_checked_workout(check_workout(args.workout, user_id=ctx.user_id), ctx)


def save_checked_workout(checked: CheckedWorkout, ctx: ToolContext, *, days_ahead: int = 0) -> ToolOutcome:
    """generate_workout's outcome for a workout `check_workout` checked: stored as the user's current workout
    with its artifact when the check found no problem, else every problem listed. `days_ahead`: the workout is
    for that many days from now, so recent training is warned of as it will stand then."""
    workout, conversions, context, check = (
        checked.workout,
        checked.conversions,
        checked.context,
        checked.check,
    )
    if not check.ok:
        return _problem_list(
            "The workout was not created. Fix every problem below and call generate_workout again:",
            check.problems,
        )
    ranked = sorted(range(len(workout.exercises)), key=lambda i: (workout.exercises[i].order, i))
    ids: list[str] = []
    exercises = []
    for index in ranked:
        ids.append(new_exercise_id(ids))
        exercises.append(
            canonical_exercise(
                workout.exercises[index],
                exercise_id=ids[-1],
                order=workout.exercises[index].order,
                match=check.catalog[index],
                equipment=check.equipment[index],
                context=context,
            )
        )
    artifact = build_artifact(
        exercises=exercises, title=workout.title, auto_start=workout.auto_start, given=workout.summary
    )
    store_current_workout(ctx, artifact, replace_stored=True)
    services.consume_preferences_after_use(user_id=ctx.user_id)

    artifact_id = artifact["artifact_id"]
    summary = artifact["summary"]
    warnings = recent_training_warnings(
        user_id=ctx.user_id, exercises=[exercise.to_json() for exercise in exercises], days_ahead=days_ahead
    )
    lines = [
        f"Created workout {artifact_id} '{artifact['title']}': {len(exercises)} exercises, "
        f"~{_number(summary['estimated_duration_min'])} min.",
        *(f"  {describe_exercise(exercise)}" for exercise in exercises),
        *(f"Converted to the user's units: {note}." for note in conversions),
        *(f"Warning: {warning}." for warning in warnings),
        "Use these exercise ids with swap_exercise, adjust_exercise and remove_exercise.",
        f"IMPORTANT: You MUST now call message_notify_user with artifact_id={artifact_id} to deliver "
        f"this workout.",
    ]
    return ToolOutcome(
        success=True,
        data={
            "artifact_id": artifact_id,
            "exercise_count": len(exercises),
            "summary": summary,
            "warnings": warnings,
            **({"conversions": conversions} if conversions else {}),
        },
        text="\n".join(lines),
        artifact=artifact,
    )


# --- swap_exercise -----------------------------------------------------------------------------------------------------
def _move(exercises: list[StoredExercise], index: int, order: int) -> tuple[list[StoredExercise], int]:
    """Put exercise `index` at 1-based position `order` and renumber all orders 1..N."""
    moved = list(exercises)
    item = moved.pop(index)
    position = min(max(order, 1), len(exercises)) - 1
    moved.insert(position, item)
    _renumber(moved)
    return moved, position


def _renumber(exercises: list[StoredExercise]) -> None:
    for number, exercise in enumerate(exercises, start=1):
        exercise.order = number


# An exercise the user added in the app (ClientExercise) may lack what the model must give; the exercises a
# change leaves alone are not re-checked, so these stand in for what they lack.
_UNCHECKED_DEFAULTS: dict[str, Any] = {"reasoning": "", "muscles_utilized": [], "goals_addressed": []}


def _as_int(value: Any, *, default: int) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return default


def _revalidate(
    ctx: ToolContext,
    exercises: list[StoredExercise],
    changed: int,
    header: str,
    fields: dict[str, Any] | None = None,
    *,
    context: TrainingContext | None = None,
) -> tuple[list[Exercise], ExerciseCheck, TrainingContext] | ToolOutcome:
    """Re-check the changed exercise (`fields`, when its new fields are not yet a stored exercise) and the
    workout's structure; a failed outcome lists the problems."""
    try:
        models = [
            parse_stored_exercise(exercise.to_json() if fields is None else fields)
            if index == changed
            else parse_stored_exercise({**_UNCHECKED_DEFAULTS, **exercise.to_json()})
            for index, exercise in enumerate(exercises)
        ]
    except ValidationError as exc:
        problems = [
            f"{'.'.join(str(part) for part in error['loc'])}: {error['msg']}"
            for error in exc.errors(include_url=False)
        ]
        return _problem_list(header, problems)
    context = context or load_training_context(user_id=ctx.user_id)
    check = check_exercises(models, user_id=ctx.user_id, only={changed}, context=context)
    if not check.ok:
        return _problem_list(header, check.problems)
    return models, check, context


def _days_until_scheduled(ctx: ToolContext, workout: StoredWorkout) -> int:
    """Days from today to the calendar day this workout is scheduled for (0: not scheduled, or today): the
    recovery a change is checked against is counted to that day."""
    day = calendar_day_of(ctx, workout)
    return (day - local_today(user_id=ctx.user_id)).days if day is not None else 0


def swap_exercise(args: SwapExerciseInput, ctx: ToolContext) -> ToolOutcome:
    """Replace one exercise of the current workout with a new one (new id, same place unless moved)."""
    workout = load_current_workout(ctx)
    if workout is None:
        return _no_active_workout()
    exercises = workout.exercises
    index = find_exercise(exercises, args.exercise_id)
    if isinstance(index, ToolOutcome):
        return index
    old = exercises[index]
    context = load_training_context(user_id=ctx.user_id)
    notes: list[str] = []
    new = args.new_exercise
    if new is None:
        fields = _replacement_fields(args, old, exercises, ctx=ctx, context=context, notes=notes)
        if isinstance(fields, ToolOutcome):
            return fields
        new = ReplacementExercise.model_validate(fields)
    replacement = new.model_dump(exclude={"order"}, exclude_none=True)
    # A steady block (the bike for 25 min) is no station of a circuit done for rounds: it leaves the group, which
    # closes up behind it (a trial's bike in a 7-round circuit read "about 197 min").
    leaves = (
        old.group is not None
        and old.group.type in GROUP_MIN_SIZE
        and replacement.get("exercise_type") == "duration"
    )
    if "group" not in new.model_fields_set and old.group is not None and not leaves:
        replacement["group"] = old.group.model_dump(exclude_none=True)
    exercises[index] = StoredExercise.model_validate({**replacement, "order": old.order})
    if leaves and "group" not in new.model_fields_set and old.group is not None:
        first = next((e for e in exercises if e.group is not None and e.group.id == old.group.id), None)
        if (
            first is not None
            and first.order is not None
            and old.order is not None
            and first.order < old.order
            and new.order in (None, old.order)
        ):
            exercises, index = _move(exercises, index, first.order)
        _close_group_gap(exercises, old)
        notes.append(
            f"{exercises[index].exercise_name} is a steady block: done on its own before the {old.group.type}"
        )
    if new.order is not None and new.order != old.order:
        exercises, index = _move(exercises, index, new.order)

    header = "The exercise was not swapped. Fix every problem below and call swap_exercise again:"
    outcome = _revalidate(ctx, exercises, index, header)
    if isinstance(outcome, ToolOutcome):
        return outcome
    models, check, context = outcome
    match = check.catalog[index]
    if args.new_exercise is not None and match is not None and _copied_prescription(models[index], old):
        # A valid swap that carried the old exercise's sets, reps, rest and load over: prescribe it for itself.
        fields = prescribe(
            match, user_id=ctx.user_id, context=context, old=old.to_json(), reasoning=models[index].reasoning
        )
        rederived = {
            key: value for key, value in exercises[index].to_json().items() if key not in _PRESCRIPTION
        }
        exercises[index] = StoredExercise.model_validate(
            {**rederived, **{key: value for key, value in fields.items() if key in _PRESCRIPTION}}
        )
        outcome = _revalidate(ctx, exercises, index, header)
        if isinstance(outcome, ToolOutcome):
            return outcome
        models, check, context = outcome
        notes.append(f"prescription re-derived for {match.name} (the replaced exercise's was copied)")
    new_id = new_exercise_id(str(exercise.id) for exercise in exercises)
    exercises[index] = canonical_exercise(
        models[index],
        exercise_id=new_id,
        order=models[index].order,
        match=check.catalog[index],
        equipment=check.equipment[index],
        context=context,
    )
    artifact, length_now = store_next_version(ctx, workout, exercises)
    artifact_id = artifact["artifact_id"]
    warnings = recent_training_warnings(
        user_id=ctx.user_id,
        exercises=[exercises[index].to_json()],
        days_ahead=_days_until_scheduled(ctx, workout),
    )
    text = (
        f"Replaced {old.id} ({old.exercise_name}) → {describe_exercise(exercises[index])}. "
        + "".join(f"Note: {note}. " for note in notes)
        + "".join(f"Warning: {warning}. " for warning in warnings)
        + f"Updated workout saved as {artifact_id} (replaces {workout.artifact_id}). "
        + _deliver_instruction(artifact_id)
    )
    return ToolOutcome(
        success=True,
        data={
            "old_exercise": {"id": old.id, "exercise_name": old.exercise_name, "order": old.order},
            "new_exercise": exercises[index].to_json(),
            "new_id": new_id,
            "notes": notes,
            "warnings": warnings,
            "reason": args.reason,
            "artifact_id": artifact_id,
            "previous_artifact_id": workout.artifact_id,
        },
        text=text,
        artifact=artifact,
        tell_user=(
            f"Done: I swapped {old.exercise_name} for {exercises[index].exercise_name}. "
            f"Everything else stays the same. {length_now}"
        ),
    )


def _replacement_fields(
    args: SwapExerciseInput,
    old: StoredExercise,
    exercises: list[StoredExercise],
    *,
    ctx: ToolContext,
    context: TrainingContext,
    notes: list[str],
) -> dict[str, Any] | ToolOutcome:
    """The replacement as exercise fields: a catalogue exercise prescribed afresh (the named one, or the one
    the tool picks), or a named non-catalogue exercise built from the given type and prescription; then the
    prescription fields given override the tool's."""
    reasoning = args.reason or f"In place of {old.exercise_name}."
    stored = old.to_json()
    if args.replacement_name:
        match, qualifier = _replacement_match(args.replacement_name)
        if match is None:
            if args.exercise_type is None:
                close = close_catalog_names(args.replacement_name, context)
                return _failure(
                    f"'{args.replacement_name}' is not in the exercise catalogue."
                    + (
                        f" Catalogue exercises with close names that fit the user here: {', '.join(close)}."
                        if close
                        else ""
                    )
                    + " Name a catalogue exercise, or give exercise_type and its sets/reps or time (and muscles) to "
                    "add this one as written."
                )
            fields = _uncatalogued_exercise(args, old, reasoning)
        elif args.exercise_type is not None and args.exercise_type != (match.exercise_type or "reps"):
            return _failure(
                f"{match.name} is a {match.exercise_type or 'reps'} exercise in the catalogue, not "
                f"{args.exercise_type}: leave out exercise_type or name another exercise."
            )
        else:
            fields = prescribe(match, user_id=ctx.user_id, context=context, old=stored, reasoning=reasoning)
            if qualifier:  # 'Leg Press (pain-free range)': the catalogue's leg press, its range as the cue
                cues = [f"{qualifier[0].upper()}{qualifier[1:]}.", fields.get("notes") or ""]
                fields["notes"] = " ".join(cue for cue in cues if cue)
    else:
        workout = [exercise.to_json() for exercise in exercises]
        avoided = {canonical_equipment(item) for item in args.avoid_equipment or ()}
        here = replace(context, available_equipment=context.available_equipment - avoided)
        match = pick_replacement(
            stored, workout=workout, context=here, level=lifter_of(user_id=ctx.user_id).level
        )
        if match is None:
            return _failure(
                f"No catalogue exercise fits in place of {old.exercise_name} with the user's "
                "equipment, preferences and injuries; name a replacement or remove the exercise."
            )
        notes.append(f"picked {match.name} (same movement and muscles, fits the user)")
        fields = prescribe(match, user_id=ctx.user_id, context=context, old=stored, reasoning=reasoning)
    overrides = args.overrides()
    if overrides:
        _resize_uniform_lists_to(fields, overrides)
        fields.update(overrides)
    return fields


def _replacement_match(name: str) -> tuple[CatalogMatch | None, str]:
    """The catalogue exercise a replacement's name means, and what the name says beyond it: as written, else
    without its qualifier ('Leg Press (pain-free range)' → Leg Press, 'pain-free range'), which the exercise keeps
    as its cue (a depth cue there counts like one in the name)."""
    for reading in name_readings(name):
        match = find_catalog_match(reading)
        if match is not None:
            return match, "" if reading == name else name_qualifier(name)
    return None, ""


def _uncatalogued_exercise(args: SwapExerciseInput, old: StoredExercise, reasoning: str) -> dict[str, Any]:
    """Fields for a named exercise the catalogue does not know: the given type, muscles (equal shares; the
    replaced exercise's when none are given) and the replaced exercise's goals and, for the same type, rest."""
    kind = str(args.exercise_type)
    if args.muscles:
        share = round(1 / len(args.muscles), 4)
        muscles: list[dict[str, Any]] = [{"muscle": name, "share": share} for name in args.muscles]
    else:
        muscles = [item.model_dump() for item in old.muscles_utilized or ()]
    fields: dict[str, Any] = {
        "exercise_name": args.replacement_name,
        "exercise_type": kind,
        "muscles_utilized": muscles,
        "goals_addressed": [item.model_dump() for item in old.goals_addressed or ()]
        or [{"goal": "strength", "share": 1.0}],
        "reasoning": reasoning,
    }
    if kind != "duration":
        same = old.exercise_type == kind and old.rest_sec is not None
        fields["rest_sec"] = old.rest_sec if same else 60
    return fields


def _resize_uniform_lists_to(fields: dict[str, Any], overrides: dict[str, Any]) -> None:
    """Make the prescription's per-set lists match the number of sets the overrides give (or imply)."""
    sets = overrides.get("sets")
    if sets is None:
        sets = next((len(overrides[key]) for key in _PER_SET_FIELDS if overrides.get(key)), None)
        if sets is None:
            return
        fields["sets"] = sets
    for name in _PER_SET_FIELDS:
        values = fields.get(name)
        if name not in overrides and values and len(values) != sets:
            fields[name] = (
                [values[0]] * sets if len(set(values)) == 1 else (values + [values[-1]] * sets)[:sets]
            )


_PRESCRIPTION = (
    "sets",
    "reps",
    "load_each",
    "load_unit",
    "rest_sec",
    "hold_sec",
    "duration_min",
    "rounds",
    "work_sec",
)


def _copied_prescription(new: ExerciseFields, old: StoredExercise) -> bool:
    """Whether a replacement (another reps exercise) carries the replaced one's sets, reps, rest and load."""
    if exercise_name_key(new.exercise_name) == exercise_name_key(old.exercise_name):
        return False
    if new.exercise_type != "reps" or old.exercise_type != "reps":
        return False
    return all(getattr(new, key) == getattr(old, key) for key in ("sets", "reps", "rest_sec", "load_each"))


# --- adjust_exercise ---------------------------------------------------------------------------------------------------
PROTECTED_FIELDS = frozenset({"id", "type", "exercise_type"})
_ADJUSTMENT_ALIASES = {
    "name": "exercise_name",
    "muscles": "muscles_utilized",
    "goals": "goals_addressed",
}
_TYPE_FIELD_WORDS = {"hold": {"reps": "hold_sec"}, "intervals": {"sets": "rounds", "reps": "work_sec"}}
ADJUSTABLE_FIELDS = frozenset((set(ExerciseFields.model_fields) | {"order"}) - {"exercise_type"})
_PER_SET_FIELDS = ("reps", "load_each", "hold_sec")
_EXERCISE_KEYS = frozenset(ExerciseFields.model_fields) | {"id", "order", "exercise_slug"}


# The fields a `change` steps, the first naming it ("no rest to change" where an exercise has none of them).
_STEPPED_FIELDS = {
    **dict.fromkeys(("more_sets", "fewer_sets"), ("sets", "rounds")),
    **dict.fromkeys(("more_reps", "fewer_reps"), ("reps", "hold_sec", "work_sec")),
    **dict.fromkeys(("heavier", "lighter"), ("load_each", "reps", "hold_sec", "work_sec")),
    **dict.fromkeys(("more_rest", "less_rest"), ("rest_sec",)),
}


def _canonical_changes(adjustments: dict[str, Any], old: StoredExercise) -> dict[str, Any]:
    """Adjustments under their canonical names, single numbers for per-set fields spread over the sets
    (seed 001's scalar `load` included; `load: null` means bodyweight)."""
    # The user's words for a hold's or an interval's numbers: "45 reps" of a plank are its seconds.
    by_type = _TYPE_FIELD_WORDS.get(old.exercise_type, {})
    changes = {
        by_type.get(key, _ADJUSTMENT_ALIASES.get(key, key)): value for key, value in adjustments.items()
    }
    if changes.get("load", 0) is None and "load_each" not in changes:
        changes["load_each"] = None
    expanded = expand_per_set_scalars({**changes, "sets": changes.get("sets", old.sets)})
    if "sets" not in changes:
        expanded.pop("sets")
    return dict(expanded)


def _resize_uniform_lists(adjusted: dict[str, Any], old: StoredExercise, changed: set[str]) -> None:
    """When only `sets` changed, stretch per-set lists that hold one repeated value to the new count."""
    sets = adjusted.get("sets")
    if "sets" not in changed or not isinstance(sets, int) or sets < 1:
        return
    for name in _PER_SET_FIELDS:
        values = getattr(old, name)
        if name in changed or not values or len(values) == sets:
            continue
        if len(set(values)) == 1:
            adjusted[name] = [values[0]] * sets


@dataclass(frozen=True)
class _Adjusted:
    """One exercise adjusted: the workout with the change, the exercise before and after, the fields shown."""

    exercises: list[StoredExercise]
    new: StoredExercise
    before: dict[str, Any]
    after: dict[str, Any]
    shown: list[str]
    # What the user should hear besides the fields: the one lever harder/easier moved, or why a step asked for as
    # weight moved the reps or time instead ("" for neither).
    aside: str

    @property
    def changed(self) -> bool:
        return any(self.before.get(key) != self.after.get(key) for key in self.shown)

    @property
    def summary(self) -> str:
        """'Dumbbell Bench Press: 90→60 s rest' (and why weight asked for moved the reps, when it did)."""
        return describe_change(self.new.exercise_name, self.before, self.after, self.shown) + self.aside


@dataclass(frozen=True)
class _NotAdjusted:
    """One exercise the change does not apply to: the failure a call on it alone returns, and why in words."""

    outcome: ToolOutcome
    reason: str


def adjust_exercise(args: AdjustExerciseInput, ctx: ToolContext) -> ToolOutcome:
    """Change some fields of one exercise, or the same change of several (one new version); `id` and its
    type cannot change."""
    workout = load_current_workout(ctx)
    if workout is None:
        return _no_active_workout()
    found = resolve_exercises(workout.exercises, args.exercise_id)
    if isinstance(found, Unresolved):
        return _failure(found.error)
    if len(found) > 1:
        return _adjust_several(args, ctx, workout, found)
    adjusted = _adjust_one(args, ctx, workout.exercises, found[0], load_training_context(user_id=ctx.user_id))
    if isinstance(adjusted, _NotAdjusted):
        return adjusted.outcome
    new, before, after, shown = adjusted.new, adjusted.before, adjusted.after, adjusted.shown
    old_values = {key: before.get(key) for key in shown}
    applied = {key: after.get(key) for key in shown}
    artifact, length_now = store_next_version(ctx, workout, adjusted.exercises)
    artifact_id = artifact["artifact_id"]
    changes_summary = ", ".join(f"{key} {_short(old_values[key])}→{_short(applied[key])}" for key in shown)
    change_summary = describe_change(new.exercise_name, before, after, shown)
    text = (
        f"Updated {new.id}: {new.exercise_name} - {changes_summary}. Now: {describe_exercise(new)}. "
        f"Updated workout saved as {artifact_id} (replaces {workout.artifact_id}). "
        + _deliver_instruction(artifact_id)
    )
    return ToolOutcome(
        success=True,
        data={
            "exercise_id": new.id,
            "exercise_name": new.exercise_name,
            "adjustments": applied,
            "old_values": old_values,
            "change_summary": change_summary,
            "artifact_id": artifact_id,
            "previous_artifact_id": workout.artifact_id,
        },
        text=text,
        artifact=artifact,
        # A note does not change how long the workout takes: "It now takes about 36 min" would say it did.
        tell_user=f"Done: {change_summary}{adjusted.aside}. "
        + ("" if set(shown) <= set(FREE_TEXT_FIELDS) else length_now),
    )


_UNSAFE_FOR = re.compile(r"unsafe for the user's ([a-z][a-z ]*?) \(")


def _unsafe_for(reason: str) -> str | None:
    """The body part a refusal says the exercise is unsafe for ("shoulder"), or None."""
    found = _UNSAFE_FOR.search(reason)
    return found.group(1) if found else None


def _adjust_several(
    args: AdjustExerciseInput, ctx: ToolContext, workout: StoredWorkout, indexes: list[int]
) -> ToolOutcome:
    """The same change to each of several exercises, stored as one new version: the ones it does not apply to
    (at a limit, not of their type) are said and left as they were; it fails only when none changed."""
    if "order" in args.adjustments:
        return _failure("order moves one exercise: call adjust_exercise with that exercise's id alone.")
    context = load_training_context(user_id=ctx.user_id)
    exercises = workout.exercises
    done: list[_Adjusted] = []
    left: list[tuple[StoredExercise, str]] = []
    refusals: list[ToolOutcome] = []
    for index in indexes:  # no order changes here, so each index stays the exercise's place
        adjusted = _adjust_one(args, ctx, exercises, index, context)
        if isinstance(adjusted, _NotAdjusted):
            left.append((exercises[index], adjusted.reason))
            refusals.append(adjusted.outcome)
        elif not adjusted.changed:
            lacking = [key for key in adjusted.shown if adjusted.after.get(key) is None]
            left.append(
                (exercises[index], f"no {_noun(lacking[0])} to change" if lacking else "already like that")
            )
        else:
            exercises = adjusted.exercises
            done.append(adjusted)
    if not done:
        if refusals and len(refusals) == len(indexes) and len({o.text for o in refusals}) == 1:
            return refusals[0]  # the change itself is wrong (an unknown field, say): one error says it
        return _failure(
            "No exercise was adjusted: "
            + "; ".join(f"{exercise.exercise_name}: {reason}" for exercise, reason in left)
            + ". Choose other exercises or give adjustments that apply."
        )
    artifact, length_now = store_next_version(ctx, workout, exercises)
    artifact_id = artifact["artifact_id"]
    changed = [
        {
            "exercise_id": item.new.id,
            "exercise_name": item.new.exercise_name,
            "adjustments": {key: item.after.get(key) for key in item.shown},
            "old_values": {key: item.before.get(key) for key in item.shown},
            "change_summary": describe_change(item.new.exercise_name, item.before, item.after, item.shown),
        }
        for item in done
    ]
    not_changed = [
        {"exercise_id": exercise.id, "exercise_name": exercise.exercise_name, "reason": reason}
        for exercise, reason in left
    ]
    listed = "; ".join(
        f"{item.new.id}: {item.new.exercise_name} - "
        + ", ".join(
            f"{key} {_short(item.before.get(key))}→{_short(item.after.get(key))}" for key in item.shown
        )
        for item in done
    )
    unchanged = "; ".join(f"{exercise.id} ({exercise.exercise_name}): {reason}" for exercise, reason in left)
    unsafe = [(exercise, part) for exercise, reason in left if (part := _unsafe_for(reason))]
    text = (
        f"Updated {counted(len(done), 'exercise')}: {listed}."
        + (f" Not changed: {unchanged}." if left else "")
        + (
            f" {joined([str(exercise.id) for exercise, _ in unsafe])} stay{'s' if len(unsafe) == 1 else ''} in the "
            "workout as before and unsafe: swap (swap_exercise) or remove (remove_exercise) "
            f"{'it' if len(unsafe) == 1 else 'them'}, or tell the user why not."
            if unsafe
            else ""
        )
        + f" Updated workout saved as {artifact_id} (replaces {workout.artifact_id}). "
        + _deliver_instruction(artifact_id)
    )
    summaries = "; ".join(item.summary for item in done)
    kept = "; ".join(
        f"{exercise.exercise_name} (not one for your {part} right now: I can swap it)"
        if (part := _unsafe_for(reason))
        else f"{exercise.exercise_name} ({reason})"
        for exercise, reason in left
    )
    return ToolOutcome(
        success=True,
        data={**changed[0], "change_summary": summaries, "artifact_id": artifact_id}
        | {"previous_artifact_id": workout.artifact_id, "changed": changed, "not_changed": not_changed},
        text=text,
        artifact=artifact,
        tell_user=(
            f"Done: changed {counted(len(done), 'exercise')}: {summaries}."
            + (f" Left as they were: {kept}." if left else "")
            + f" {length_now}"
        ),
    )


def _adjust_one(
    args: AdjustExerciseInput,
    ctx: ToolContext,
    exercises: list[StoredExercise],
    index: int,
    context: TrainingContext,
) -> _Adjusted | _NotAdjusted:
    """The workout with exercise `index` adjusted as `args` say and checked, else why not."""
    exercises = list(exercises)
    adjustments = dict(args.adjustments)
    aside = ""
    if not adjustments and args.change is not None:
        unit = exercises[index].load_unit or context.weight_unit
        current = exercises[index].to_json()
        adjustments = (
            harder_or_easier(
                current, harder=args.change == "harder", unit=unit, weights_kg=context.weights_kg
            )
            if args.change in ("harder", "easier")
            else nudge(current, args.change, unit=unit, weights_kg=context.weights_kg)
        )
        if not adjustments:
            fields = _STEPPED_FIELDS.get(args.change, ())
            lacking = bool(fields) and all(current.get(field) in (None, []) for field in fields)
            return _NotAdjusted(
                _failure(
                    f"{exercises[index].exercise_name} cannot sensibly be made {args.change.replace('_', ' ')} "
                    "by itself (already at the limit); choose another exercise or give adjustments."
                ),
                f"no {_noun(fields[0])} to change" if lacking else "already at the limit",
            )
        if args.change in ("harder", "easier"):
            moved = what_moved(current, adjustments, harder=args.change == "harder")
            aside = f" ({moved})" if moved else ""
        if args.change in ("heavier", "lighter") and "load_each" not in adjustments:
            # No load to step (bodyweight or a band), or none heavier/lighter here: the step moved the reps,
            # holds or work instead; the user asked for weight, so the model must say what changed and why.
            what = "the reps" if "reps" in adjustments else "the time"
            if current.get("load_each"):
                extreme = "heaviest" if args.change == "heavier" else "lightest"
                aside = f"; that's already the {extreme} weight you have here, so I changed {what} instead"
            else:
                hint = "a stronger band or a held weight" if args.change == "heavier" else "a lighter band"
                aside = (
                    f"; it has no load to make {args.change}, so I changed {what} instead ({hint} would change "
                    "the load)"
                )
    if not adjustments:
        return _NotAdjusted(
            _failure('adjustments is empty: give the fields to change, e.g. {"sets": 4}.'),
            "nothing to change",
        )
    protected = sorted(key for key in adjustments if key in PROTECTED_FIELDS)
    if protected:
        return _NotAdjusted(
            _failure(
                f"adjust_exercise cannot change {', '.join(protected)}: an exercise keeps its id and type. "
                "To change the type, replace the exercise with swap_exercise."
            ),
            "its type cannot change",
        )
    old = exercises[index]
    changes = _canonical_changes(adjustments, old)
    unknown = sorted(key for key in changes if key not in ADJUSTABLE_FIELDS)
    if unknown:
        return _NotAdjusted(
            _failure(
                f"Unknown field(s) {', '.join(unknown)}. "
                f"Adjustable fields: {', '.join(sorted(ADJUSTABLE_FIELDS))}."
            ),
            "unknown field",
        )

    # The changed fields stay plain values until they are checked: a wrong one is a problem to report.
    before = old.to_json()
    adjusted = {**before, **changes}
    _resize_uniform_lists(adjusted, old, set(changes))
    exercises[index] = old.model_copy()  # holds the place (and takes the new order) while it is checked
    if "order" in changes:
        exercises, index = _move(exercises, index, _as_int(changes["order"], default=index + 1))
        adjusted["order"] = exercises[index].order

    header = "The exercise was not adjusted. Fix every problem below and call adjust_exercise again:"
    outcome = _revalidate(ctx, exercises, index, header, adjusted, context=context)
    if isinstance(outcome, ToolOutcome):
        first = (outcome.data.get("problems") or [outcome.text])[0]
        return _NotAdjusted(outcome, re.sub(r"^exercise \d+ '[^']*': ", "", str(first)))
    models, check, context = outcome
    rebuilt = canonical_exercise(
        models[index],
        exercise_id=str(old.id),
        order=models[index].order,
        match=check.catalog[index],
        equipment=check.equipment[index],
        context=context,
    )
    # What other tools keep on an exercise (e.g. completion) survives an adjustment.
    kept = {key: value for key, value in before.items() if key not in _EXERCISE_KEYS}
    new = exercises[index] = StoredExercise.model_validate({**rebuilt.to_json(), **kept})
    after = new.to_json()
    shown = [key for key in changes if before.get(key) != after.get(key)] or list(changes)
    return _Adjusted(exercises, new, before, after, shown, aside)


def _short(value: Any) -> str:
    if isinstance(value, list):
        return (
            _numbers(value)
            if all(isinstance(item, int | float) for item in value)
            else f"[{len(value)} items]"
        )
    if isinstance(value, dict):
        return "{…}"
    if isinstance(value, str):  # a note the model wrote itself: enough to tell which, not all of it again
        return f'"{shorten(value, NOTE_ECHO_CHARS)}"'
    return _number(value) if value is not None else "none"


NOTE_ECHO_CHARS = 40


# --- remove_exercise ---------------------------------------------------------------------------------------------------
def _close_group_gap(exercises: list[StoredExercise], removed: StoredExercise) -> str | None:
    """Renumber the removed exercise's group; dissolve it when too few remain. Returns a note or None."""
    group = removed.group
    if group is None or not group.id:
        return None
    members = [
        exercise for exercise in exercises if exercise.group is not None and exercise.group.id == group.id
    ]
    if not members:
        return None
    if len(members) < GROUP_MIN_SIZE.get(group.type, 1):
        for member in members:
            member.group = None
        return f"group {group.id} ({group.type}) dissolved: too few exercises left"
    # The group's first exercise carries its name and rounds: when it goes, the next one takes them.
    header = group.model_dump(include={"name", "rounds", "rest_between_rounds_sec"}, exclude_none=True)
    for position, member in enumerate(members, start=1):
        assert member.group is not None
        update = {"position": position, **(header if position == 1 and group.position == 1 else {})}
        member.group = member.group.model_copy(update=update)
    return None


def remove_exercise(args: RemoveExerciseInput, ctx: ToolContext) -> ToolOutcome:
    """Take one exercise out of the current workout and renumber the rest."""
    workout = load_current_workout(ctx)
    if workout is None:
        return _no_active_workout()
    exercises = workout.exercises
    index = find_exercise(exercises, args.exercise_id)
    if isinstance(index, ToolOutcome):
        return index
    if len(exercises) == 1:
        return _failure(
            "That is the workout's only exercise; a workout needs at least one. Swap it with swap_exercise "
            "or create a new workout with generate_workout."
        )
    removed = exercises.pop(index)
    _renumber(exercises)
    note = _close_group_gap(exercises, removed)

    artifact, length_now = store_next_version(ctx, workout, exercises)
    artifact_id = artifact["artifact_id"]
    text = (
        f"Removed {removed.id} ({removed.exercise_name}); {len(exercises)} exercises remain"
        + (f"; {note}" if note else "")
        + f". Updated workout saved as {artifact_id} (replaces {workout.artifact_id}). "
        + _deliver_instruction(artifact_id)
    )
    return ToolOutcome(
        success=True,
        data={
            "removed_exercise": {
                "id": removed.id,
                "exercise_name": removed.exercise_name,
                "order": removed.order,
            },
            "remaining_count": len(exercises),
            "reason": args.reason,
            "artifact_id": artifact_id,
            "previous_artifact_id": workout.artifact_id,
        },
        text=text,
        artifact=artifact,
        tell_user=f"Removed {removed.exercise_name}. {_what_is_left(exercises)} {length_now}",
    )


def _noun(field: str) -> str:
    """ "rest" for rest_sec, "load" for load_each: a field as the user's sentence names it."""
    return field.removesuffix("_sec").removesuffix("_each")


def _what_is_left(exercises: Sequence[StoredExercise]) -> str:
    """'You have 4 exercises left.', or with a warm-up or cool-down 'You have 3 main exercises left, plus the
    warm-up and cool-down.' (a user counts the exercises they train, not the prep)."""
    sections = {exercise.group.type for exercise in exercises if exercise.group is not None}
    prep = [name for kind, name in _PREP_SECTIONS if kind in sections]
    main = sum(1 for exercise in exercises if exercise.section == "main")
    if not prep:
        return f"You have {counted(main, 'exercise')} left."
    return f"You have {counted(main, 'main exercise')} left, plus the {joined(prep)}."


_PREP_SECTIONS = (("warmup", "warm-up"), ("cooldown", "cool-down"))


# --- log_workout -------------------------------------------------------------------------------------------------------
_LIST_SUFFIXES = ("_reps", "_load_each", "_hold_sec")


def _inferred_type(done: CompletedExercise) -> str:
    if done.hold_sec:
        return "hold"
    if done.duration_min is not None or done.distance is not None:
        return "duration"
    if done.rounds is not None or done.work_sec is not None:
        return "intervals"
    return "reps"


def log_entry(
    done: CompletedExercise,
    target: StoredExercise | None,
    *,
    order: int,
    context: TrainingContext,
) -> dict[str, Any]:
    """A record_workout_log entry: the planned (target) values beside what was done (actual)."""
    planned = target.to_json() if target is not None else {}
    name = planned.get("exercise_name") or done.exercise_name or ""
    slug = planned.get("exercise_slug")
    if slug is None and target is None:
        match = find_catalog_match(name)
        slug = match.slug if match is not None else ""
    entry: dict[str, Any] = {
        "order": order,
        "exercise_name": name,
        "exercise_slug": slug or "",
        "exercise_type": planned.get("exercise_type") or _inferred_type(done),
        "section": section_of(planned) if target is not None else done.section or "main",
        "muscles": planned.get("muscles_utilized") or [],
        "goals": planned.get("goals_addressed") or [],
        "load_unit": planned.get("load_unit") or context.weight_unit,
        "distance_unit": planned.get("distance_unit") or context.distance_unit,
        "rpe": done.rpe,
        "skipped": done.skipped,
        "notes": done.notes or "",
        "target_rest_sec": planned.get("rest_sec"),
    }
    for field in PERFORMANCE_FIELDS:
        target_value = planned.get(field)
        actual = getattr(done, field)
        if actual is None:
            actual = target_value  # not given: done as planned
        entry[f"target_{field}"] = target_value
        entry[f"actual_{field}"] = None if done.skipped else actual
    for key in [key for key, value in entry.items() if value is None and key.endswith(_LIST_SUFFIXES)]:
        entry[key] = []
    return entry


def _heavier_than_on_hand(
    entry: dict[str, Any], target: StoredExercise | None, context: TrainingContext
) -> str:
    """`heavier_than_on_hand` for a log_workout entry at the current location: the planned exercise's
    equipment, else (an unplanned one, or one the client added without equipment) the catalogue's."""
    return heavier_than_on_hand(
        entry,
        equipment=target.equipment if target is not None and target.equipment else None,
        location=context.location_name,
        weights_kg=context.weights_kg,
    )


def log_workout(args: LogWorkoutInput, ctx: ToolContext) -> ToolOutcome:
    """Record what the user did against the current workout (or the workout made earlier that `artifact_id`
    names), then clear the current workout when it was the one logged."""
    found = workout_to_log(ctx, args.artifact_id, tool="log_workout")
    if isinstance(found, ToolOutcome):
        return found
    workout = found.workout
    if not args.completed_exercises and not args.others_as_planned:
        return _failure(
            "Nothing was logged: list the exercises done or skipped in completed_exercises, or set "
            "others_as_planned to true when the whole workout was done as planned."
        )
    exercises = workout.exercises
    context = load_training_context(user_id=ctx.user_id)
    problems: list[str] = []
    entries: list[dict[str, Any]] = []
    seen: dict[int, int] = {}
    already_logged: list[str] = []
    conversions: list[str] = []
    beyond: list[str] = []  # loads heavier than the location lists
    extra_order = len(exercises)
    unplanned: list[str] = []  # names of exercises done that the workout did not plan
    for number, done in enumerate(args.completed_exercises, start=1):
        target: StoredExercise | None = None
        index: int | None
        if done.exercise_id is not None:
            reference = resolve_exercise(exercises, done.exercise_id, positions="main")
            if not isinstance(reference, int):
                problem = (
                    reference.error
                    if reference.candidates
                    else f"'{done.exercise_id}' is not in "
                    + ("the current workout" if found.current else workout_named(ctx, workout))
                )
                problems.append(f"completed exercise {number}: {problem}")
                continue
            index = reference
        elif done.exercise_name:
            index = named_exactly(exercises, done.exercise_name)
        else:
            problems.append(f"completed exercise {number}: give exercise_id or exercise_name")
            continue
        if index is not None:
            if index in seen:
                problems.append(
                    f"completed exercise {number}: {exercises[index].id} was already given as "
                    f"completed exercise {seen[index]}"
                )
                continue
            seen[index] = number
            target = exercises[index]
            if target.log_entry_id:
                # Already logged during the workout (log_completed_exercise / mark_exercise_complete).
                already_logged.append(target.exercise_name or str(target.id))
                continue
            order = target.order or index + 1
        else:
            extra_order += 1
            order = extra_order
            unplanned.append(done.exercise_name or "")
        done, notes = exercise_in_user_units(
            done,
            weight_unit=(target.load_unit if target else None) or context.weight_unit,
            distance_unit=(target.distance_unit if target else None) or context.distance_unit,
            name=target.exercise_name if target else None,
        )
        conversions.extend(notes)
        entries.append(log_entry(done, target, order=order, context=context))
        beyond.append(_heavier_than_on_hand(entries[-1], target, context))
    for index, target in enumerate(exercises if args.others_as_planned else ()):
        if index in seen:
            continue
        if target.log_entry_id:
            already_logged.append(target.exercise_name or str(target.id))
        else:
            entries.append(
                log_entry(CompletedExercise(), target, order=target.order or index + 1, context=context)
            )
            beyond.append(_heavier_than_on_hand(entries[-1], target, context))
    if problems:
        return _problem_list(
            "Nothing was logged. Fix every problem below and call log_workout again:", problems
        )
    log = None
    # Sets logged during the workout went to its log: complete that one rather than start another.
    during = get_workout_log_of(user_id=ctx.user_id, workout=workout.to_record())
    if entries or during is not None:
        try:
            log = services.record_workout_log(
                user_id=ctx.user_id,
                entries=entries,
                title=workout.title or "",
                notes=args.workout_notes or "",
                session_id=ctx.session.pk,
                artifact_id=workout.artifact_id or "",
                into_log=during,
            )
        except ValueError as exc:
            return _failure(f"Nothing was logged: {exc}")
    kept = None if found.current else load_current_workout(ctx)
    if found.current and ctx.current_workout_override is not None:
        ctx.current_workout_override = None
    elif found.current:
        services.clear_current_workout(user_id=ctx.user_id)
    skipped = sum(1 for entry in entries if entry["skipped"])
    skipped_names = [str(entry["exercise_name"]) for entry in entries if entry["skipped"]]
    given = set(seen) | {index for index, target in enumerate(exercises) if target.log_entry_id}
    not_given = (
        []
        if args.others_as_planned
        else [
            target.exercise_name or str(target.id)
            for index, target in enumerate(exercises)
            if index not in given
        ]
    )
    # One count, the user's (the exercises trained, the warm-up and cool-down beside them), named: a model that
    # read "9 of 9 (1 skipped)" here and "5 exercises, plus the warm-up" to pass on had two numbers to square.
    text = (
        f"Workout logged: {workout_named(ctx, workout)}. "
        + _logged_count(entries, already_logged, named=True)
        + "."
        + (f" Skipped: {', '.join(skipped_names)}." if skipped_names else "")
        + (f" Not in the plan: {', '.join(unplanned)}." if unplanned else "")
        + (f" Not given, so not logged: {', '.join(not_given)}." if not_given else "")
        + "".join(f" Converted to the user's units: {note}." for note in conversions)
        + (
            " The current workout is cleared."
            if found.current
            else f" The current workout, {workout_named(ctx, kept)}, is kept."
            if kept is not None
            else ""
        )
        + "".join(f" {note}" for note in beyond if note)
    )
    return ToolOutcome(
        success=True,
        data={
            "logged_count": len(entries),
            "total_in_workout": len(exercises),
            "skipped_count": skipped,
            "already_logged_count": len(already_logged),
            "log_id": str(log.id) if log is not None else None,
            "artifact_id": workout.artifact_id or None,
            "title": workout.title or None,
        },
        text=text,
        tell_user=(
            _logged_count(entries, already_logged)
            + (
                f" (with {', '.join(already_logged)} from earlier, in the same workout)"
                if already_logged
                else ""
            )
            + (f", and {joined(skipped_names)} as skipped" if skipped else "")
            + ". Nice work! Next time I'll build on these numbers."
        ),
    )


def _logged_count(
    entries: Sequence[Mapping[str, Any]], already_logged: Sequence[str], *, named: bool = False
) -> str:
    """'Logged 4 exercises', or with a warm-up done 'Logged 4 exercises, plus the warm-up': a user counts the
    exercises they trained, not the prep (as `_what_is_left`); `named`: the exercises named after the count,
    'Logged 2 exercises (Goblet Squat, Plank logged earlier), plus the warm-up'."""
    done = sorted((entry for entry in entries if not entry["skipped"]), key=lambda entry: entry["order"])
    names = [str(entry["exercise_name"]) for entry in done if entry["section"] == "main"]
    names += [f"{name} logged earlier" for name in already_logged]
    count = counted(len(names), "exercise") + (f" ({', '.join(names)})" if named and names else "")
    sections = {entry["section"] for entry in done}
    prep = [name for kind, name in _PREP_SECTIONS if kind in sections]
    if not prep:
        return f"Logged {count}"
    if not names:
        return f"Logged the {joined(prep)}"
    return f"Logged {count}, plus the {joined(prep)}"


# --- Registration ------------------------------------------------------------------------------------------------------
_REFERENCE_ALIASES = {"exercise_order": "exercise_id"}

GENERATE_WORKOUT = register(
    Tool(
        name="generate_workout",
        description=(
            "Create a workout; it becomes the user's current workout. Use only equipment at the current "
            "location; respect preferences and injuries. Every problem is reported at once. Then deliver "
            "the returned artifact_id with message_notify_user, or the user sees nothing."
        ),
        input_model=GenerateWorkoutInput,
        handler=generate_workout,
        category="workout",
        priority=100,
        observation="full",
        status_start="Creating your workout...",
        status_done="Workout ready",
    )
)

SWAP_EXERCISE = register(
    Tool(
        name="swap_exercise",
        description=(
            "Replace one exercise of the current workout; the tool prescribes the replacement, and the "
            "prescription fields you give override it. Deliver the new artifact with message_notify_user."
        ),
        input_model=SwapExerciseInput,
        handler=swap_exercise,
        category="workout",
        priority=110,
        observation="summary",
        status_start="Finding alternative...",
        status_done="Exercise swapped",
        aliases=_REFERENCE_ALIASES,
    )
)

ADJUST_EXERCISE = register(
    Tool(
        name="adjust_exercise",
        description=(
            "Change fields of one exercise of the current workout, or make it harder/easier. Deliver the new "
            "artifact with message_notify_user."
        ),
        input_model=AdjustExerciseInput,
        handler=adjust_exercise,
        category="workout",
        priority=111,
        observation="summary",
        status_start="Adjusting exercise...",
        status_done="Exercise updated",
        aliases=_REFERENCE_ALIASES,
    )
)

REMOVE_EXERCISE = register(
    Tool(
        name="remove_exercise",
        description=(
            "Remove one exercise of the current workout. Deliver the new artifact with message_notify_user."
        ),
        input_model=RemoveExerciseInput,
        handler=remove_exercise,
        category="workout",
        priority=112,
        observation="summary",
        status_start="Removing exercise...",
        status_done="Exercise removed",
        aliases=_REFERENCE_ALIASES,
    )
)

LOG_WORKOUT = register(
    Tool(
        name="log_workout",
        description=(
            "Record a finished workout in the user's history: the current one (then cleared), or the one "
            "artifact_id names. completed_exercises: one item per exercise done or skipped, with only the values "
            "that differ from the plan."
        ),
        input_model=LogWorkoutInput,
        handler=log_workout,
        category="workout",
        priority=120,
        observation="summary",
        status_start="Saving your workout...",
        status_done="Workout logged",
        aliases={"notes": "workout_notes", "exercises": "completed_exercises"},
    )
)
