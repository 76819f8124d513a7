"""What a coach knows when changing one exercise (issue 17 item 2), shared by every model through the tools.

- `pick_replacement`: the catalogue exercise to put in place of another when the model names none: the same
  movement pattern and main muscle where the equipment, preferences and injuries allow, else the same main
  muscle, never one already in the workout.
- `prescribe`: a fresh prescription for an exercise (type, sets, reps or time, rest, load), never copied from
  the exercise it replaces: by the catalogue's type and mechanic, the slot's role (warm-up and cool-down stay
  light), and the load from the user's history for that exercise or a conservative start.
- `harder_or_easier`: the adjust_exercise changes that make one exercise harder or easier, and `describe_change`
  the words that say what changed ("Dumbbell Bench Press: 3→4 sets, 20→22.5 kg each hand").
- `recent_training_warnings`: muscles worked hard in the last 48 h that a workout works hard again.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.utils import timezone

from datasources_app import distribution, selectors
from datasources_app.catalog import exercise_name_key
from datasources_app.loads import default_implements, implements_of, per_hand
from datasources_app.stats import convert_weight
from tools_app.workout_validation import CatalogMatch, TrainingContext, allowed, context_catalog

HISTORY_DAYS = 180
RECENT_HOURS = 48
# A conservative first load (kg) per implement, when the user has no history for the exercise.
_START_KG: dict[str, float] = {
    "barbell": 20.0,
    "smith_machine": 20.0,
    "trap_bar": 30.0,
    "ez_bar": 10.0,
    "dumbbells": 5.0,
    "kettlebell": 8.0,
    "cable_machine": 10.0,
    "weight_plates": 5.0,
    "medicine_ball": 4.0,
}
_MACHINE_START_KG = 15.0
# The smallest sensible jump per implement when the location lists no weights: 2.5 kg / 5 lb (the smallest
# plates, a pair on a bar, and the usual dumbbell and machine step); kettlebells come in 4 kg / 9 lb steps.
_STEP_KG: dict[str, float] = {"kettlebell": 4.0}
_STEP_LB: dict[str, float] = {"kettlebell": 9.0}


def implement(equipment: Iterable[str]) -> str | None:
    """The loaded implement an exercise uses (barbell, dumbbells, machine, ...), None for bodyweight/bands."""
    gear = set(equipment)
    for slug in _START_KG:
        if slug in gear:
            return slug
    return next((slug for slug in sorted(gear) if slug.endswith("_machine") or slug == "pec_deck"), None)


# The empty bar: no barbell load goes below it.
_BAR_KG: dict[str, float] = {"barbell": 20.0, "trap_bar": 20.0, "ez_bar": 10.0}
_BAR_LB: dict[str, float] = {"barbell": 45.0, "trap_bar": 45.0, "ez_bar": 25.0}
WeightsOnHand = Mapping[str, Sequence[float]]


def loads_on_hand(gear: str | None, *, unit: str, weights_kg: WeightsOnHand | None) -> list[float]:
    """The loads the location lists for an implement (its `available_weights_kg`), in the user's unit: kg to the
    half kilo; kg plates and bells shown in lb are rounded to the whole pound, as gym labels do."""
    kilos = (weights_kg or {}).get(gear or "", ())
    if unit == "lb":
        return sorted({float(round(convert_weight(kg, from_unit="kg", to_unit="lb"))) for kg in kilos})
    return sorted({round(kg * 2) / 2 for kg in kilos})


def _step(unit: str, gear: str | None) -> float:
    return (_STEP_LB if unit == "lb" else _STEP_KG).get(gear or "", 5.0 if unit == "lb" else 2.5)


def round_load(
    value: float, *, unit: str, gear: str | None, weights_kg: WeightsOnHand | None = None
) -> float:
    """A load the user can set up, in their unit: the nearest weight on hand when the location lists its
    weights, else the implement's step (never below the empty bar). The one rounding rule for every load a
    tool prescribes (swap, adjust, draft)."""
    options = loads_on_hand(gear, unit=unit, weights_kg=weights_kg)
    if options:
        return min(options, key=lambda option: (abs(option - value), option))
    step = _step(unit, gear)
    minimum = (_BAR_LB if unit == "lb" else _BAR_KG).get(gear or "", step)
    return max(minimum, round(value / step) * step)


def step_load(
    value: float, *, unit: str, gear: str | None, steps: int, weights_kg: WeightsOnHand | None = None
) -> float:
    """`value` moved up (steps > 0) or down by that many increments: the next weights on hand when the
    location lists them, else the implement's step."""
    options = loads_on_hand(gear, unit=unit, weights_kg=weights_kg)
    if options:
        nearest = min(range(len(options)), key=lambda i: (abs(options[i] - value), options[i]))
        return options[max(0, min(len(options) - 1, nearest + steps))]
    step = _step(unit, gear)
    return max(step, round(value / step) * step + steps * step)


def load_phrase(value: float, unit: str, implements: int) -> str:
    """'22.5 kg each hand' for a pair (`implements` 2), '25 kg' for one dumbbell or a bar: the words are
    `per_hand`'s, as on every other line that shows a load."""
    return f"{value:g} {unit}{per_hand(implements)}"


def _catalogue_implements(match: CatalogMatch) -> int:
    return default_implements(name=match.name, slug=match.slug, equipment=match.equipment)


@dataclass(frozen=True)
class PastLoad:
    """The user's latest logged loaded sets of one exercise, in the unit asked for."""

    load: float  # the heaviest set
    reps: int  # the fewest reps done (or planned)
    completed: bool  # every set reached its target reps
    rpe: float | None


def logged_loads(*, user_id: uuid.UUID, unit: str, days: int = HISTORY_DAYS) -> dict[str, PastLoad]:
    """The latest loaded session of each exercise in the last `days`, by catalogue slug and by name key: the one
    history reader behind a swap's prescription and a draft's progression. A load logged only as planned
    (no actual) counts as done at the planned load, not completed."""
    since = timezone.now() - timedelta(days=days)
    found: dict[str, PastLoad] = {}
    for entry in selectors.log_entries_between(user_id=user_id, start=since):  # oldest first
        loads = [float(value) for value in entry.actual_load_each or entry.target_load_each or () if value]
        if not loads:
            continue
        reps = [int(value) for value in entry.actual_reps or () if value]
        targets = [int(value) for value in entry.target_reps or () if value]
        past = PastLoad(
            load=round(convert_weight(max(loads), from_unit=entry.load_unit, to_unit=unit), 1),
            reps=min(reps) if reps else (min(targets) if targets else 8),
            completed=bool(reps) and (not targets or min(reps) >= min(targets)),
            rpe=entry.rpe,
        )
        for key in (entry.exercise_slug, exercise_name_key(entry.exercise_name)):
            if key:
                found[key] = past
    return found


def last_load(*, user_id: uuid.UUID, match: CatalogMatch, unit: str) -> tuple[float, int] | None:
    """The heaviest load and its reps from the user's latest logged session of this exercise, in `unit`."""
    history = logged_loads(user_id=user_id, unit=unit)
    keys = (match.slug, exercise_name_key(match.name), *sorted(match.name_keys))
    past = next((history[key] for key in keys if key in history), None)
    return (past.load, past.reps) if past is not None else None


def _role(old: Mapping[str, Any] | None) -> str:
    group_type = str(((old or {}).get("group") or {}).get("type") or "")
    return group_type if group_type in ("warmup", "cooldown") else "main"


def goals_for(
    kind: str,
    *,
    category: str = "",
    mechanic: str = "",
    movement_pattern: str = "",
    role: str = "main",
    reps: int | None = None,
) -> list[dict[str, Any]]:
    """goals_addressed for one exercise as prescribed (shares sum to 1.0): the one rule for the swap tool's
    prescriptions and the drafting's."""
    if role != "main" or category in ("mobility", "stretching") or movement_pattern == "mobility":
        return [{"goal": "mobility", "share": 1.0}]
    if kind == "hold":
        return [{"goal": "stability", "share": 0.7}, {"goal": "endurance", "share": 0.3}]
    if kind == "duration":
        return [{"goal": "cardio", "share": 0.7}, {"goal": "endurance", "share": 0.3}]
    if kind == "intervals":
        second = "power" if category == "plyometrics" else "endurance"
        return [{"goal": "cardio", "share": 0.6}, {"goal": second, "share": 0.4}]
    if category == "plyometrics":
        return [{"goal": "power", "share": 0.7}, {"goal": "cardio", "share": 0.3}]
    if reps is not None and reps <= 6:
        return [{"goal": "strength", "share": 0.7}, {"goal": "hypertrophy", "share": 0.3}]
    if reps is not None and reps >= 15:
        return [{"goal": "endurance", "share": 0.5}, {"goal": "hypertrophy", "share": 0.5}]
    if mechanic == "compound":
        return [{"goal": "hypertrophy", "share": 0.6}, {"goal": "strength", "share": 0.4}]
    return [{"goal": "hypertrophy", "share": 0.8}, {"goal": "strength", "share": 0.2}]


def prescribe(
    match: CatalogMatch,
    *,
    user_id: uuid.UUID,
    context: TrainingContext,
    old: Mapping[str, Any] | None = None,
    reasoning: str = "",
) -> dict[str, Any]:
    """A full exercise (generate_workout fields, no order/group) for `match`, prescribed for itself.

    `old` (the exercise it replaces) only lends its role (warm-up, cool-down, main) and, for timed work, the
    time the slot had; sets, reps, rest and load are never copied from it.
    """
    role = _role(old)
    kind = match.exercise_type or "reps"
    shares = match.muscle_shares or tuple(
        (muscle, 1.0 / len(match.primary_muscles)) for muscle in match.primary_muscles
    )
    exercise: dict[str, Any] = {
        "exercise_name": match.name,
        "exercise_type": kind,
        "muscles_utilized": [{"muscle": muscle, "share": share} for muscle, share in shares],
        "equipment": sorted(match.equipment),
        "reasoning": reasoning or f"{match.name}: {match.movement_pattern.replace('_', ' ')} work.",
    }
    notes: list[str] = []
    reps = 10
    if kind == "reps":
        if role != "main":
            sets, reps, rest = 1, 10, 0
        elif match.mechanic == "compound" and match.equipment:
            sets, reps, rest = 3, 8, 90
        elif match.mechanic == "compound":
            sets, reps, rest = 3, 12, 60
        else:
            sets, reps, rest = 3, 12, 60
        exercise.update(sets=sets, reps=[reps] * sets, rest_sec=rest)
        gear = implement(match.equipment)
        if gear is not None and role == "main":
            unit = context.weight_unit
            past = last_load(user_id=user_id, match=match, unit=unit)
            if past is not None:
                load = round_load(past[0], unit=unit, gear=gear, weights_kg=context.weights_kg)
                notes.append(
                    f"Load from your last {match.name} ({load_phrase(load, unit, _catalogue_implements(match))})."
                )
            else:
                start = _START_KG.get(gear, _MACHINE_START_KG)
                load = round_load(
                    convert_weight(start, from_unit="kg", to_unit=unit),
                    unit=unit,
                    gear=gear,
                    weights_kg=context.weights_kg,
                )
                notes.append("A conservative start: add weight if the last reps feel easy.")
            exercise.update(load_each=[load] * sets, load_unit=unit)
    elif kind == "hold":
        sets, hold, rest = (
            (1, 30, 0) if role != "main" or match.movement_pattern == "mobility" else (3, 30, 45)
        )
        exercise.update(sets=sets, hold_sec=[hold] * sets, rest_sec=rest)
    elif kind == "duration":
        minutes = (
            float((old or {}).get("duration_min") or 0)
            if (old or {}).get("exercise_type") == "duration"
            else 0
        )
        exercise["duration_min"] = minutes or (5.0 if role != "main" else 20.0)
    else:
        same = (old or {}).get("exercise_type") == "intervals"
        exercise.update(
            rounds=int((old or {}).get("rounds") or 6) if same else 6,
            work_sec=int((old or {}).get("work_sec") or 30) if same else 30,
            rest_sec=int((old or {}).get("rest_sec") or 30) if same else 30,
        )
    exercise["goals_addressed"] = goals_for(
        kind,
        category=match.category,
        mechanic=match.mechanic,
        movement_pattern=match.movement_pattern,
        role=role,
        reps=reps,
    )
    if notes:
        exercise["reasoning"] = f"{exercise['reasoning']} {' '.join(notes)}"
    return exercise


def pick_replacement(
    old: Mapping[str, Any],
    *,
    workout: Sequence[Mapping[str, Any]],
    context: TrainingContext,
    avoid: Iterable[str] = (),
) -> CatalogMatch | None:
    """The catalogue exercise a coach would put in place of `old`: allowed here, not already in the workout,
    the same movement pattern and main muscle first, then the same main muscle, the same type of work."""
    from tools_app.workout_validation import find_catalog_match

    old_match = find_catalog_match(str(old.get("exercise_name") or ""))
    shares: dict[str, float] = {}
    for item in old.get("muscles_utilized") or ():
        if isinstance(item, Mapping) and item.get("muscle"):
            shares[str(item["muscle"])] = float(item.get("share") or 0)
    if old_match is not None and old_match.muscle_shares:
        shares = dict(old_match.muscle_shares)
    main = max(shares, key=lambda muscle: (shares[muscle], muscle)) if shares else ""
    pattern = old_match.movement_pattern if old_match is not None else ""
    kind = str(old.get("exercise_type") or "")
    taken = {exercise_name_key(str(item.get("exercise_name") or "")) for item in workout}
    taken |= {exercise_name_key(name) for name in avoid}
    role = _role(old)

    def rank(candidate: CatalogMatch) -> tuple[int, int, int, float, str]:
        primary = candidate.primary_muscles[0] if candidate.primary_muscles else ""
        return (
            0 if pattern and candidate.movement_pattern == pattern else 1,
            0 if primary == main else 1,
            0 if candidate.exercise_type == kind else 1,
            -shares.get(primary, 0.0),
            candidate.name,
        )

    pool = [
        candidate
        for candidate in context_catalog(context)
        if not (candidate.name_keys & taken)
        and (old_match is None or candidate.slug != old_match.slug)
        and candidate.primary_muscles
        and candidate.primary_muscles[0] in shares
        and (candidate.movement_pattern == "mobility") == (role != "main" or pattern == "mobility")
        and allowed(candidate, context)
    ]
    return min(pool, key=rank, default=None)


# --- Harder / easier ------------------------------------------------------------------------------------------------
def harder_or_easier(
    exercise: Mapping[str, Any], *, harder: bool, unit: str, weights_kg: WeightsOnHand | None = None
) -> dict[str, Any]:
    """The adjust_exercise fields that make `exercise` harder or easier ({} when nothing sensible changes).

    Reps work: a set more (up to 5) or fewer (down to 2), and the load one step up or down; bodyweight work
    without sets to change moves the reps by 2. Holds move by 10 s, intervals by 10 s of work (and rest the
    other way), continuous work by a fifth of its time.
    """
    kind = str(exercise.get("exercise_type") or "")
    sets = int(exercise.get("sets") or 0)
    reps = [int(value) for value in exercise.get("reps") or ()]
    loads = [float(value) for value in exercise.get("load_each") or ()]
    holds = [int(value) for value in exercise.get("hold_sec") or ()]
    changes: dict[str, Any] = {}
    if kind == "reps" and sets:
        count = sets + 1 if harder and sets < 5 else sets - 1 if not harder and sets > 2 else sets
        if count != sets:
            changes["sets"] = count
            changes["reps"] = [reps[0] if reps else 10] * count
        if loads:
            gear = implement(exercise.get("equipment") or ())
            new_load = step_load(
                loads[0], unit=unit, gear=gear, steps=1 if harder else -1, weights_kg=weights_kg
            )
            changes["load_each"] = [new_load if new_load != loads[0] else loads[0]] * count
            if count == sets and new_load == loads[0]:
                changes.pop("load_each")
        elif count == sets and reps:
            changes["reps"] = [max(1, reps[0] + (2 if harder else -2))] * sets
    elif kind == "hold" and holds and sets:
        changes["hold_sec"] = [max(10, holds[0] + (10 if harder else -10))] * sets
    elif kind == "intervals":
        work = int(exercise.get("work_sec") or 30)
        rest = int(exercise.get("rest_sec") or 0)
        changes["work_sec"] = work + 10 if harder else max(10, work - 10)
        changes["rest_sec"] = max(5, rest - 5) if harder else rest + 10
    elif kind == "duration":
        minutes = float(exercise.get("duration_min") or 10)
        changes["duration_min"] = max(1.0, round(minutes * (1.2 if harder else 0.8)))
    return {key: value for key, value in changes.items() if exercise.get(key) != value}


def _value(key: str, value: Any, exercise: Mapping[str, Any]) -> str:
    if isinstance(value, list):
        values = sorted(set(value))
        if not values:
            return "none"
        shown = f"{values[0]:g}" if len(values) == 1 else "/".join(f"{item:g}" for item in value)
        if key == "load_each":
            return (
                load_phrase(float(values[0]), str(exercise.get("load_unit") or ""), implements_of(exercise))
                if len(values) == 1
                else shown
            )
        return shown
    return f"{value:g}" if isinstance(value, int | float) else str(value)


_LABELS = {
    "sets": "sets",
    "reps": "reps",
    "hold_sec": "s holds",
    "rest_sec": "s rest",
    "work_sec": "s work",
    "rounds": "rounds",
    "duration_min": "min",
}


def describe_change(name: str, old: Mapping[str, Any], new: Mapping[str, Any], keys: Iterable[str]) -> str:
    """'Dumbbell Bench Press: 3→4 sets, 20→22.5 kg each hand' for the keys that changed."""
    parts = []
    for key in keys:
        before, after = old.get(key), new.get(key)
        if before == after or (
            isinstance(before, list) and isinstance(after, list) and set(before) == set(after)
        ):
            continue  # the same values over a new number of sets: the sets say it
        if key == "load_each" and before and after and len(set(before)) == 1 and len(set(after)) == 1:
            unit = load_phrase(0, str(new.get("load_unit") or ""), implements_of(new)).removeprefix("0 ")
            parts.append(f"{float(before[0]):g}→{float(after[0]):g} {unit}")
        elif key == "load_each":
            parts.append(f"{_value(key, before, old)}→{_value(key, after, new)}")
        elif key in _LABELS:
            parts.append(f"{_value(key, before, old)}→{_value(key, after, new)} {_LABELS[key]}")
        else:
            parts.append(f"{key} {_value(key, before, old)}→{_value(key, after, new)}")
    return f"{name}: {', '.join(parts)}" if parts else f"{name}: unchanged"


# --- Recent training ------------------------------------------------------------------------------------------------
def recent_training_warnings(*, user_id: uuid.UUID, exercises: Sequence[Mapping[str, Any]]) -> list[str]:
    """A warning per exercise that works hard a muscle trained hard in the last 48 h."""
    recent = distribution.recently_trained_muscles(user_id=user_id, hours=RECENT_HOURS)
    if not recent:
        return []
    warnings = []
    for exercise in exercises:
        if ((exercise.get("group") or {}).get("type")) in ("warmup", "cooldown"):
            continue
        hit = [
            str(item.get("muscle"))
            for item in exercise.get("muscles_utilized") or ()
            if str(item.get("muscle")) in recent and float(item.get("share") or 0) >= distribution.HARD_SHARE
        ]
        if hit:
            when = ", ".join(f"{muscle} {recent[muscle]:g} h ago" for muscle in hit)
            warnings.append(
                f"{exercise.get('exercise_name')} works muscles trained hard within {RECENT_HOURS} h ({when}): "
                "consider other muscles or lighter volume, and tell the user"
            )
    return warnings
