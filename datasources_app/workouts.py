"""The workout: one typed model for what the model writes, what is stored and what a client sends back
(docs/contracts.md §12 (workouts)).

Canonical field names are seed 000's (`exercise_name`, `exercise_type`, `muscles_utilized`,
`goals_addressed`, `{muscle, share}`, `{goal, share}`); seed 001's spellings (`name`, `type`, `muscles`,
`goals`, `{name, share}`, a scalar `load`, `lbs`) are accepted on input and normalised, but the schema
sent to the model shows only the canonical names.

These models check only the shape of the JSON (which fields, which JSON types). Everything with a
meaning (exercise types and their required fields, positive numbers, known muscles, share sums, units,
groups, equipment, preferences) is checked by `tools_app.workout_validation`, so one failed call lists
every problem at once instead of stopping at the first. The JSON schema still advertises the allowed
values and minimums (via `json_schema_extra`), so the model is told what is valid up front.

`Workout` is what the model must write (generate_workout's input). `StoredWorkout` is the user's current
workout as stored, the record every tool reads and edits (`StoredExercise.to_json()` / `to_record()` are the
stored JSON); `ClientWorkout` is the same workout sent back by a client as its state (`currentWorkout`): the
server's own workout (ids, catalogue slugs, completion flags) round-trips through it unchanged, an exercise
the user added in the app needs only a name and a type, and a field it does not know is refused (a 400
naming it) rather than dropped.

How an exercise reads ("3×10 @ 20kg each hand") is `datasources_app.formatters.exercise_prescription`, the
one rendering every surface uses. This module imports nothing of ours but the catalogue's vocabulary.
"""

from __future__ import annotations

import math
import re
import secrets
from collections.abc import Iterable, Mapping
from typing import Annotated, Any, Literal, Self

from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic.json_schema import SkipJsonSchema

from datasources_app.catalog import EQUIPMENT, EXERCISE_TYPES, GROUP_TYPES, MUSCLES, ROUND_GROUP_TYPES

# --- Normalisation of free-text spellings ---------------------------------------------------------------------
_LETTERS = re.compile(r"[^a-z0-9]+")


def _spelling_key(value: str) -> str:
    return _LETTERS.sub("", value.lower())


# Unambiguous everyday names for the canonical muscles ("quads" → "Quadriceps").
_MUSCLE_SYNONYMS: dict[str, str] = {
    "pecs": "Chest",
    "pectorals": "Chest",
    "lats": "Back",
    "upperback": "Back",
    "delts": "Shoulders",
    "deltoids": "Shoulders",
    "bicep": "Biceps",
    "tricep": "Triceps",
    "abdominals": "Abs",
    "quads": "Quadriceps",
    "hamstring": "Hamstrings",
    "glute": "Glutes",
    "calf": "Calves",
    "traps": "Trapezius",
    "forearm": "Forearms",
}
_MUSCLE_KEYS: dict[str, str] = {
    **{_spelling_key(muscle): muscle for muscle in MUSCLES},
    **_MUSCLE_SYNONYMS,
}


def canonical_muscle(value: str) -> str:
    """The canonical spelling of a muscle name ("lower_back" → "Lower Back"); unknown names unchanged."""
    return _MUSCLE_KEYS.get(_spelling_key(value), value.strip())


_EQUIPMENT_KEYS: dict[str, str] = {}
for _slug, _display, _category in EQUIPMENT:
    for _spelling in (_slug, _display):
        _EQUIPMENT_KEYS[_spelling_key(_spelling)] = _slug
        _EQUIPMENT_KEYS[_spelling_key(_spelling).removesuffix("s")] = _slug
_EQUIPMENT_KEYS.update({"none": "bodyweight", "bodyweightonly": "bodyweight", "noequipment": "bodyweight"})


def canonical_equipment(value: str) -> str:
    """The equipment slug a spelling names ("Dumbbell", "pull-up bar" → "dumbbells", "pull_up_bar").

    An unknown name comes back lower-cased with underscores; validation then reports it.
    """
    key = _spelling_key(value)
    found = _EQUIPMENT_KEYS.get(key) or _EQUIPMENT_KEYS.get(key.removesuffix("s"))
    return found or re.sub(r"[^a-z0-9]+", "_", value.strip().lower()).strip("_")


_WEIGHT_UNITS = {"kg": "kg", "kgs": "kg", "kilo": "kg", "kilos": "kg", "kilogram": "kg", "kilograms": "kg"}
_WEIGHT_UNITS |= {"lb": "lb", "lbs": "lb", "pound": "lb", "pounds": "lb"}
_DISTANCE_UNITS = {"km": "km", "kms": "km", "kilometer": "km", "kilometers": "km", "kilometre": "km"}
_DISTANCE_UNITS |= {"kilometres": "km", "mi": "mi", "mile": "mi", "miles": "mi"}


def _unit(value: Any, spellings: dict[str, str]) -> Any:
    if isinstance(value, str):
        cleaned = value.strip().lower().rstrip(".")
        return spellings.get(cleaned, cleaned) or None
    return value


def _lower_token(value: Any) -> Any:
    """'Giant Set' / 'giant-set' → 'giant_set'; 'REPS ' → 'reps'. Non-strings are left for pydantic."""
    if isinstance(value, str):
        return re.sub(r"[\s\-]+", "_", value.strip().lower())
    return value


def expand_per_set_scalars(data: Any) -> Any:
    """One number where a per-set list is expected becomes that number for every set.

    Covers seed 001's `load` (a number, or null for bodyweight) → `load_each`, and a bare number given
    for `reps`, `hold_sec` or `load_each`.
    """
    if not isinstance(data, dict):
        return data
    data = dict(data)
    if "load" in data:
        load = data.pop("load")
        if data.get("load_each") is None and load is not None:
            data["load_each"] = load
    sets = data.get("sets")
    count = sets if isinstance(sets, int) and not isinstance(sets, bool) and 0 < sets <= 100 else 1
    for name in ("reps", "hold_sec", "load_each"):
        value = data.get(name)
        if isinstance(value, int | float) and not isinstance(value, bool):
            data[name] = [value] * count
    return data


def new_exercise_id(taken: Iterable[str] = ()) -> str:
    """A fresh exercise id (`ex_` + 6 hex) not in `taken`."""
    used = set(taken)
    while True:
        candidate = "ex_" + secrets.token_hex(3)
        if candidate not in used:
            return candidate


SECTION_DESCRIPTION = "Unplanned warm-up/cool-down."


# The parts of a workout besides its main work: a group of one of these types (docs/contracts.md §12.3).
EDGE_SECTIONS = ("warmup", "cooldown")


def section_of(exercise: Mapping[str, Any]) -> str:
    """The part of the workout an exercise (its stored JSON) is in: "warmup" or "cooldown" (its group's type),
    else "main"; a log entry keeps it, so warm-up and cool-down sets are not counted as working sets. The one
    rule of what is main work (`StoredExercise.section` reads the same)."""
    return section_of_group(((exercise or {}).get("group") or {}).get("type"))


def section_of_group(group_type: object) -> str:
    """The section a group of this type makes: the type for a warm-up or cool-down, else "main"."""
    return str(group_type) if group_type in EDGE_SECTIONS else "main"


def is_main(exercise: Mapping[str, Any]) -> bool:
    """Main work: not part of the warm-up or the cool-down (an exercise the user trains, and counts)."""
    return section_of(exercise) == "main"


# --- Numeric limits ------------------------------------------------------------------------------------------------
# The range of every number of a workout, the model's (tools_app.workout_validation lists what is outside) and
# the client's `currentWorkout` (refused with a 400 naming the field): one table for both.
NUMBER_LIMITS: dict[str, tuple[float, float]] = {
    "order": (1, 200),
    "sets": (1, 50),
    "reps": (1, 1000),
    "load_each": (0, 2000),
    "implements": (1, 2),
    "rest_sec": (0, 3600),
    "hold_sec": (1, 3600),
    "duration_min": (0, 1440),
    "distance": (0, 1000),
    "rounds": (1, 200),
    "work_sec": (1, 3600),
    "position": (1, 200),
    "rest_between_rounds_sec": (0, 3600),
    "estimated_duration_min": (0, 1440),
    "exercise_count": (0, 200),
}


def out_of_limits(name: str, value: Any) -> str | None:
    """Why `value` (a number or a per-set list) is outside `NUMBER_LIMITS[name]`, or None when it is inside."""
    low, high = NUMBER_LIMITS[name]
    values = value if isinstance(value, list) else [value]
    bad = [
        item
        for item in values
        if isinstance(item, int | float) and not (math.isfinite(item) and low <= item <= high)
    ]
    if not bad:
        return None
    shown = ", ".join(str(item) if isinstance(item, int) else f"{item:g}" for item in bad)
    return f"{name} must be from {low:g} to {high:g}, got {shown}"


# --- Field types ---------------------------------------------------------------------------------------------------
def _min(value: int) -> Any:
    """Advertise a minimum in the schema without enforcing it here (validation reports it with the rest)."""
    return Field(json_schema_extra={"minimum": value})


IntMin1 = Annotated[int, _min(1)]
IntMin0 = Annotated[int, _min(0)]
FloatMin0 = Annotated[float, _min(0)]


class MuscleShare(BaseModel):
    muscle: str = Field(
        validation_alias=AliasChoices("muscle", "name"),
        json_schema_extra={"enum": list(MUSCLES)},
    )
    share: float = Field(
        json_schema_extra={"minimum": 0, "maximum": 1},
    )

    @field_validator("muscle", mode="before")
    @classmethod
    def _canonical_muscle(cls, value: Any) -> Any:
        return canonical_muscle(value) if isinstance(value, str) else value


class GoalShare(BaseModel):
    goal: str = Field(
        validation_alias=AliasChoices("goal", "name"),
        description="e.g. strength, hypertrophy, endurance, power, mobility, cardio, stability.",
    )
    share: float = Field(
        json_schema_extra={"minimum": 0, "maximum": 1},
    )

    @field_validator("goal", mode="before")
    @classmethod
    def _lower_goal(cls, value: Any) -> Any:
        return " ".join(value.lower().split()) if isinstance(value, str) else value


# docs/contracts.md §12.3 (groups). (A comment: the docstring is the schema's description, which a model reads.)
class ExerciseGroup(BaseModel):
    """Links exercises done together."""

    id: str = Field(description="Shared by the group's exercises.")
    type: str = Field(json_schema_extra={"enum": list(GROUP_TYPES)})
    position: IntMin1 = Field(description="1..k within the group.")
    # name and rounds go on the group's first exercise only (the system prompt says so).
    name: str | None = None
    rounds: IntMin1 | None = Field(
        default=None, description="Times the whole group is done; members: sets 1."
    )
    rest_between_rounds_sec: IntMin0 | None = None

    @field_validator("type", mode="before")
    @classmethod
    def _normalise_type(cls, value: Any) -> Any:
        return _lower_token(value)


class _Units(BaseModel):
    """ "kilos", "LBS", "miles": a load_unit or distance_unit in the model's own words, as the schema's enums."""

    @field_validator("load_unit", mode="before", check_fields=False)
    @classmethod
    def _normalise_load_unit(cls, value: Any) -> Any:
        return _unit(value, _WEIGHT_UNITS)

    @field_validator("distance_unit", mode="before", check_fields=False)
    @classmethod
    def _normalise_distance_unit(cls, value: Any) -> Any:
        return _unit(value, _DISTANCE_UNITS)


class ExerciseFields(_Units):
    """Every exercise field except `order` (required in a workout, optional in a replacement)."""

    exercise_name: str = Field(validation_alias=AliasChoices("exercise_name", "name"))
    exercise_type: str = Field(
        validation_alias=AliasChoices("exercise_type", "type"),
        description="Fields it needs: reps: sets, reps, rest_sec (load_each unless bodyweight); hold: sets, "
        "hold_sec, rest_sec; duration: duration_min (distance, target_pace optional); intervals: rounds, "
        "work_sec, rest_sec.",
        json_schema_extra={"enum": list(EXERCISE_TYPES)},
    )
    muscles_utilized: list[MuscleShare] = Field(
        validation_alias=AliasChoices("muscles_utilized", "muscles"),
        description="Shares sum to 1.",
    )
    goals_addressed: list[GoalShare] = Field(
        validation_alias=AliasChoices("goals_addressed", "goals"),
        description="Shares sum to 1.",
    )
    reasoning: str = Field(description="One sentence.")
    equipment: list[str] | None = Field(
        default=None,
        description="Slugs; [] for bodyweight; omit for a catalogue exercise.",
    )
    # reps
    sets: IntMin1 | None = None
    reps: list[IntMin1] | None = Field(default=None, description="One per set, e.g. [10, 10, 8].")
    load_each: list[FloatMin0] | None = Field(default=None, description="One per set.")
    load_unit: str | None = Field(
        default=None,
        description="Default the user's; the other unit is converted.",
        json_schema_extra={"enum": ["kg", "lb"]},
    )
    implements: int | None = Field(
        default=None,
        description="Dumbbells/kettlebells: 1, or 2 (a pair: load_each is each one's weight).",
        json_schema_extra={"enum": [1, 2]},
    )
    rest_sec: IntMin0 | None = Field(default=None, description="Between sets, or after each round.")
    # hold
    hold_sec: list[IntMin1] | None = Field(default=None, description="One per set.")
    # duration
    duration_min: float | None = Field(default=None, json_schema_extra={"minimum": 0})
    distance: float | None = Field(default=None, json_schema_extra={"minimum": 0})
    distance_unit: SkipJsonSchema[str | None] = None
    target_pace: str | None = Field(default=None, description="e.g. '5:30/km'.")
    # intervals
    rounds: IntMin1 | None = None
    work_sec: IntMin1 | None = None
    group: ExerciseGroup | None = Field(default=None, description="Only for exercises done together.")
    notes: str | None = Field(default=None, description="Cues for the user.")

    @model_validator(mode="before")
    @classmethod
    def _accept_scalar_load(cls, data: Any) -> Any:
        return expand_per_set_scalars(data)

    @field_validator("exercise_type", mode="before")
    @classmethod
    def _normalise_exercise_type(cls, value: Any) -> Any:
        return _lower_token(value)

    @field_validator("equipment", mode="before")
    @classmethod
    def _normalise_equipment(cls, value: Any) -> Any:
        if isinstance(value, list):
            return [canonical_equipment(item) if isinstance(item, str) else item for item in value]
        return value

    @field_validator("exercise_name", "reasoning", mode="after")
    @classmethod
    def _strip(cls, value: str | None) -> str | None:
        # None only in ClientExercise, whose reasoning is optional.
        return " ".join(value.split()) if value is not None else None


# Input models sent to the model carry no docstring: pydantic would send it as the schema's description.
class Exercise(ExerciseFields):
    order: IntMin1 = Field(description="1..N without gaps.")


class ReplacementExercise(ExerciseFields):
    """The exercise swap_exercise puts in place of another; it keeps the old one's order and group."""

    order: IntMin1 | None = Field(
        default=None, description="Position in the workout; omit to take the replaced exercise's."
    )


class WorkoutSummary(BaseModel):
    estimated_duration_min: float | None = Field(default=None, json_schema_extra={"minimum": 0})
    primary_goals: list[str] | None = None
    muscles_targeted: list[str] | None = None


def _clean_title(value: str | None) -> str | None:
    return " ".join(value.split()) or None if value is not None else None


class Workout(BaseModel):
    title: str | None = None
    exercises: list[Exercise] = Field(min_length=1)
    # Computed from the exercises when omitted, so not advertised.
    summary: SkipJsonSchema[WorkoutSummary | None] = None
    auto_start: bool = False

    @field_validator("title", mode="after")
    @classmethod
    def _strip_title(cls, value: str | None) -> str | None:
        return _clean_title(value)


# --- The stored workout ------------------------------------------------------------------------------------
# The artifact a workout tool delivers (type and schema version), accepted back as the client's workout.
ARTIFACT_TYPE = "exercise_list"
ARTIFACT_SCHEMA_VERSION = "1.0"
_STRICT = ConfigDict(extra="forbid")

# Per exercise type: the fields it needs (docs/contracts.md §12.2 (exercise types)) and the ones that also apply
# to it. A stored exercise keeps only these of its type's, in this order.
REQUIRED_FIELDS: dict[str, tuple[str, ...]] = {
    "reps": ("sets", "reps", "rest_sec"),
    "hold": ("sets", "hold_sec", "rest_sec"),
    "duration": ("duration_min",),
    "intervals": ("rounds", "work_sec", "rest_sec"),
}
OPTIONAL_FIELDS: dict[str, tuple[str, ...]] = {
    "reps": ("load_each", "load_unit", "implements"),
    "hold": (),
    "duration": ("distance", "distance_unit", "target_pace"),
    "intervals": (),
}
# Fewest exercises a group of each type can hold; the others may hold one.
GROUP_MIN_SIZE: dict[str, int] = {"superset": 2, "circuit": 2, "giant_set": 3}
# The keys of a stored exercise in the order it is written (docs/contracts.md §12.5): identity, the type's
# prescription (REQUIRED_FIELDS then OPTIONAL_FIELDS), what it works, then what other tools add.
_IDENTITY_KEYS = ("id", "order", "exercise_name", "exercise_type", "exercise_slug")
_DESCRIPTION_KEYS = ("muscles_utilized", "goals_addressed", "reasoning", "equipment", "group", "notes")
_SUMMARY_KEYS = ("exercise_count", "estimated_duration_min", "muscles_targeted", "primary_goals")
_RECORD_KEYS = ("artifact_id", "title", "summary", "auto_start", "exercises", "log_id")


def _ordered(data: dict[str, Any], first: Iterable[str]) -> dict[str, Any]:
    """`data` with the keys of `first` (those present) in that order, then the rest as they came."""
    head = {key: data[key] for key in first if key in data}
    return {**head, **{key: value for key, value in data.items() if key not in head}}


class StoredExercise(ExerciseFields):
    """One exercise of a stored workout (docs/contracts.md §12.5): the model's exercise in canonical spelling
    plus what the server adds (id, catalogue slug, completion by the logging tools). The workout tools edit
    these; `to_json()` is what is stored, key for key.

    What the model must give but a client need not (`reasoning`, `muscles_utilized`, `goals_addressed`) is
    optional: the app may add an exercise with only a name and a type. Keys this model does not know are kept
    as they came (`extra="allow"`) so nothing stored is lost by a change to another exercise.
    """

    model_config = ConfigDict(extra="allow")

    @property
    def section(self) -> str:
        """ "warmup", "cooldown" or "main", by the rule of `section_of`."""
        return section_of_group(self.group.type if self.group is not None else None)

    # Optional here, required of the model (ExerciseFields): the narrower type is what mypy objects to.
    muscles_utilized: list[MuscleShare] | None = Field(  # type: ignore[assignment]
        default=None, validation_alias=AliasChoices("muscles_utilized", "muscles")
    )
    goals_addressed: list[GoalShare] | None = Field(  # type: ignore[assignment]
        default=None, validation_alias=AliasChoices("goals_addressed", "goals")
    )
    reasoning: str | None = None  # type: ignore[assignment]
    order: IntMin1 | None = None
    id: str | None = None
    exercise_slug: str | None = None
    # Set by log_completed_exercise / mark_exercise_complete (tools_app.logging_tools).
    completed: bool | None = None
    completed_at: str | None = None
    log_entry_id: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _legacy_load_per_hand(cls, data: Any) -> Any:
        """A workout delivered before `implements` said a dumbbell pair by `load_per_hand: true`."""
        if isinstance(data, dict) and "load_per_hand" in data:
            data = dict(data)
            if data.pop("load_per_hand") is True and data.get("implements") is None:
                data["implements"] = 2
        return data

    @property
    def once_per_round(self) -> bool:
        """A member of a circuit, superset or giant set: done once per round of its group, so its own sets
        (an intervals member's rounds) are 1 and the rest after it is the pause before the next member."""
        return self.group is not None and self.group.type in ROUND_GROUP_TYPES

    @property
    def load_implements(self) -> int:
        """How many implements `load_each` is for: 2 for a pair (each one's weight, "each hand"), else 1."""
        return self.implements if self.implements in (1, 2) else 1

    def to_json(self) -> dict[str, Any]:
        """The exercise as stored: no empty values, keys in the order of docs/contracts.md §12.5."""
        data = self.model_dump(mode="json", exclude_none=True)
        order = (*_IDENTITY_KEYS, *REQUIRED_FIELDS.get(self.exercise_type, ()))
        order += (*OPTIONAL_FIELDS.get(self.exercise_type, ()), *_DESCRIPTION_KEYS)
        return _ordered(data, order)


class StoredWorkout(BaseModel):
    """The user's current workout as stored (`datasources_app.models.CurrentWorkout.workout`): the flat record
    `{artifact_id, title, summary, auto_start, exercises, log_id?}` holding the latest artifact's exercises.

    Also read from a workout artifact itself (its `payload.exercises` and `payload.title`). Exercises come in
    workout order; those without an id or order (added in the app) get a new `ex_` id and the next free order,
    so the tools can refer to them like any other.
    """

    model_config = ConfigDict(extra="allow")

    artifact_id: str | None = None
    # The log that sets logged during this workout went to (tools_app.logging_tools).
    log_id: str | None = None
    title: str | None = None
    exercises: list[StoredExercise] = Field(min_length=1)
    # Computed by the workout tools when they build the artifact; kept as it was computed.
    summary: dict[str, Any] | None = None
    auto_start: bool = False

    @model_validator(mode="before")
    @classmethod
    def _accept_artifact(cls, data: Any) -> Any:
        """Lift an artifact's `payload.exercises` / `payload.title`; anything else in the payload (or a
        value that contradicts the top level) is left under `payload.<key>`, so a client's is refused by name."""
        if not isinstance(data, dict) or not isinstance(data.get("payload"), dict):
            return data
        data = dict(data)
        for key, value in data.pop("payload").items():
            if key in ("exercises", "title") and data.get(key, value) == value:
                data[key] = value
            else:
                data[f"payload.{key}"] = value
        return data

    @field_validator("title", mode="after")
    @classmethod
    def _strip_title(cls, value: str | None) -> str | None:
        return _clean_title(value)

    @model_validator(mode="after")
    def _number_new_exercises(self) -> Self:
        taken = [exercise.id for exercise in self.exercises if exercise.id]
        last_order = max((exercise.order or 0 for exercise in self.exercises), default=0)
        for exercise in self.exercises:
            if not exercise.id:
                exercise.id = new_exercise_id(taken)
                taken.append(exercise.id)
            if exercise.order is None:
                last_order += 1
                exercise.order = last_order
        return self

    def in_order(self) -> list[StoredExercise]:
        """The exercises by their order (a stable sort: ties keep the stored order)."""
        return sorted(self.exercises, key=lambda exercise: exercise.order or 0)

    def to_record(self) -> dict[str, Any]:
        """The record as stored: `{artifact_id, title, summary, auto_start, exercises, log_id?}`."""
        data = self.model_dump(mode="json", exclude_none=True, exclude={"exercises", "summary"})
        data["exercises"] = [exercise.to_json() for exercise in self.exercises]
        if self.summary is not None:
            data["summary"] = _ordered(dict(self.summary), _SUMMARY_KEYS)
        data.setdefault("title", None)
        return _ordered(data, _RECORD_KEYS)


class ClientMuscleShare(MuscleShare):
    model_config = _STRICT


class ClientGoalShare(GoalShare):
    model_config = _STRICT


def _within_limits(value: Any, info: ValidationInfo) -> Any:
    """A client's number outside `NUMBER_LIMITS` is refused (a 400 naming the field), as the model's would be."""
    problem = out_of_limits(str(info.field_name), value) if value is not None else None
    if problem:
        raise ValueError(problem)
    return value


class ClientExerciseGroup(ExerciseGroup):
    model_config = _STRICT

    _limits = field_validator("position", "rounds", "rest_between_rounds_sec", mode="after")(_within_limits)


class ClientExercise(StoredExercise):
    """One exercise of the client's workout: a stored exercise whose numbers are within `NUMBER_LIMITS` and
    with no field the server does not know (refused, a 400 naming it, rather than dropped)."""

    model_config = _STRICT

    muscles_utilized: list[ClientMuscleShare] | None = Field(  # type: ignore[assignment]
        default=None, validation_alias=AliasChoices("muscles_utilized", "muscles")
    )
    goals_addressed: list[ClientGoalShare] | None = Field(  # type: ignore[assignment]
        default=None, validation_alias=AliasChoices("goals_addressed", "goals")
    )
    group: ClientExerciseGroup | None = None

    _limits = field_validator(
        "order",
        "sets",
        "reps",
        "load_each",
        "implements",
        "rest_sec",
        "hold_sec",
        "duration_min",
        "distance",
        "rounds",
        "work_sec",
        mode="after",
    )(_within_limits)


class ClientWorkoutSummary(WorkoutSummary):
    model_config = _STRICT

    exercise_count: int | None = None

    _limits = field_validator("estimated_duration_min", "exercise_count", mode="after")(_within_limits)


class ClientWorkout(StoredWorkout):
    """The workout a client shows, sent back as `currentWorkout`: the stored workout (or its artifact; `type`
    and `schema_version` are checked, not stored), refused with a 400 naming the field for a field the
    server does not know or a number outside `NUMBER_LIMITS`."""

    model_config = _STRICT

    type: str | None = Field(default=None, exclude=True)
    schema_version: str | None = Field(default=None, exclude=True)
    exercises: list[ClientExercise] = Field(min_length=1)  # type: ignore[assignment]
    summary: ClientWorkoutSummary | None = None  # type: ignore[assignment]

    @field_validator("type", mode="after")
    @classmethod
    def _workout_artifact_type(cls, value: str | None) -> str | None:
        if value not in (None, ARTIFACT_TYPE):
            raise ValueError(f"a workout is an '{ARTIFACT_TYPE}' artifact, not '{value}'")
        return value

    @field_validator("schema_version", mode="after")
    @classmethod
    def _known_schema_version(cls, value: str | None) -> str | None:
        if value not in (None, ARTIFACT_SCHEMA_VERSION):
            raise ValueError(f"the workout artifact schema version is {ARTIFACT_SCHEMA_VERSION}, not {value}")
        return value


# What the user actually did for one exercise (log_workout); omitted values count as done as planned.
class CompletedExercise(_Units):
    exercise_id: str | None = Field(
        default=None,
        validation_alias=AliasChoices("exercise_id", "exercise_order", "id"),
        description="Id (ex_...), order number, or the user's words.",
    )
    exercise_name: str | None = Field(
        default=None,
        validation_alias=AliasChoices("exercise_name", "name"),
        description="For an unplanned exercise.",
    )
    sets: IntMin1 | None = None
    reps: list[IntMin1] | None = None
    load_each: list[FloatMin0] | None = None
    load_unit: Literal["kg", "lb"] | None = None
    hold_sec: list[IntMin1] | None = None
    duration_min: float | None = None
    distance: float | None = None
    distance_unit: Literal["km", "mi"] | None = None
    rounds: IntMin1 | None = None
    work_sec: IntMin1 | None = None
    rpe: float | None = Field(default=None, ge=1, le=10)
    skipped: bool = False
    notes: str | None = None
    section: Literal["warmup", "cooldown"] | None = Field(default=None, description=SECTION_DESCRIPTION)

    @model_validator(mode="before")
    @classmethod
    def _accept_scalar_load(cls, data: Any) -> Any:
        return expand_per_set_scalars(data)

    @field_validator("exercise_id", mode="before")
    @classmethod
    def _id_as_text(cls, value: Any) -> Any:
        return str(value) if isinstance(value, int) and not isinstance(value, bool) else value
