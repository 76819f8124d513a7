"""Loads and distances given in the other unit, converted to the user's (issue 23, units in conversation).

The workout and logging tools accept kg or lb, km or mi; what they store and show is always in the user's
units (their settings), rounded to what a gym or a watch uses: kg to 0.5, lb to 1, distances to 0.01. Each
conversion is described for the observation, e.g. "Goblet Squat: 60 lb → 27.5 kg", so the model can say it.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from pydantic import BaseModel

from datasources_app import selectors
from datasources_app.loads import LOAD_STEP, round_load
from datasources_app.stats import convert_distance, convert_weight
from datasources_app.workouts import Workout

DISTANCE_DECIMALS = 2


def loads_in(values: Sequence[float], *, from_unit: str, to_unit: str) -> list[float]:
    """Loads in `from_unit` expressed in `to_unit`, rounded to its step (0 stays 0: bodyweight)."""
    if from_unit == to_unit:
        return [float(value) for value in values]
    return [
        round_load(convert_weight(value, from_unit=from_unit, to_unit=to_unit), to_unit) for value in values
    ]


def distance_in(value: float, *, from_unit: str, to_unit: str) -> float:
    if from_unit == to_unit:
        return float(value)
    return round(convert_distance(value, from_unit=from_unit, to_unit=to_unit), DISTANCE_DECIMALS)


def _values(values: Sequence[float]) -> str:
    distinct = list(dict.fromkeys(f"{round(float(value), DISTANCE_DECIMALS):g}" for value in values))
    return "/".join(distinct)


def conversion_note(
    name: str, before: Sequence[float], from_unit: str, after: Sequence[float], to_unit: str
) -> str:
    """'Goblet Squat: 60 lb → 27.5 kg' (several distinct values joined by '/'; no name: '60 lb → 27.5 kg')."""
    converted = f"{_values(before)} {from_unit} → {_values(after)} {to_unit}"
    return f"{name}: {converted}" if name else converted


def exercise_in_user_units[ExerciseT: BaseModel](
    exercise: ExerciseT, *, weight_unit: str, distance_unit: str, name: str | None = None
) -> tuple[ExerciseT, list[str]]:
    """The exercise with load_each / distance converted to the user's units (and the notes saying so).

    Works on any model with `load_each`, `load_unit`, `distance`, `distance_unit` fields (`name`, else its
    `exercise_name`, labels the notes); a unit that is neither of the pair is left for validation to report.
    """
    updates: dict[str, object] = {}
    notes: list[str] = []
    name = name or str(getattr(exercise, "exercise_name", "") or "exercise")
    load_unit, loads = getattr(exercise, "load_unit", None), getattr(exercise, "load_each", None)
    if load_unit in LOAD_STEP and load_unit != weight_unit:
        if loads:
            converted = loads_in(loads, from_unit=load_unit, to_unit=weight_unit)
            updates["load_each"] = converted
            notes.append(conversion_note(name, loads, load_unit, converted, weight_unit))
        updates["load_unit"] = weight_unit
    unit, distance = getattr(exercise, "distance_unit", None), getattr(exercise, "distance", None)
    if unit in ("km", "mi") and unit != distance_unit:
        if distance is not None:
            converted_distance = distance_in(distance, from_unit=unit, to_unit=distance_unit)
            updates["distance"] = converted_distance
            notes.append(conversion_note(name, [distance], unit, [converted_distance], distance_unit))
        updates["distance_unit"] = distance_unit
    if not updates:
        return exercise, []
    return exercise.model_copy(update=updates), notes


def workout_in_user_units(workout: Workout, *, user_id: uuid.UUID) -> tuple[Workout, list[str]]:
    """The workout with every exercise's loads and distances in the user's units (and the notes saying so)."""
    user_settings = selectors.get_settings(user_id=user_id)
    converted = [
        exercise_in_user_units(
            item, weight_unit=user_settings.weight_unit, distance_unit=user_settings.distance_unit
        )
        for item in workout.exercises
    ]
    notes = [note for _, item_notes in converted for note in item_notes]
    if not notes and all(
        item is original for (item, _), original in zip(converted, workout.exercises, strict=True)
    ):
        return workout, []
    return workout.model_copy(update={"exercises": [item for item, _ in converted]}), notes
