"""What a coach knows when changing one exercise (issue 17 item 2), shared by every model through the tools.

- `pick_replacement`: the catalogue exercise to put in place of another when the model names none: the same
  movement pattern and main muscle where the equipment, preferences and injuries allow, else the same main
  muscle, never one already in the workout.
- `prescribe`: a fresh prescription for an exercise (type, sets, reps or time, rest, load), never copied from
  the exercise it replaces: by the catalogue's type and mechanic, the slot's role (warm-up and cool-down stay
  light), and the load from the user's history for that exercise or a conservative start.
- `harder_or_easier`: the adjust_exercise changes that make one exercise harder or easier, one lever at a time
  (`what_moved` says which), and `describe_change` the words that say what changed ("Dumbbell Bench Press:
  20→22.5 kg each hand").
- `recent_training_warnings`: muscles worked hard in the last 48 h that a workout works hard again.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Literal

from django.utils import timezone

from datasources_app import distribution, selectors
from datasources_app.catalog import exercise_name_key
from datasources_app.loads import HANDHELD, default_implements, implements_of, per_hand
from datasources_app.models import UserProfile
from datasources_app.stats import convert_weight
from datasources_app.workouts import section_of
from tools_app.workout_validation import (
    KNEE_WORK_CUE,
    KNEE_WORK_LOAD_SCALE,
    KNEE_WORK_REPS,
    KNEE_WORK_REST_SEC,
    CatalogMatch,
    TrainingContext,
    allowed,
    context_catalog,
    find_catalog_match,
    is_knee_work,
)

HISTORY_DAYS = 180
RECENT_HOURS = 48
# The implements a load can refer to, in the order an exercise's equipment is searched for one.
_LOADED_IMPLEMENTS = (
    "barbell",
    "smith_machine",
    "trap_bar",
    "ez_bar",
    "dumbbells",
    "kettlebell",
    "cable_machine",
    "weight_plates",
    "medicine_ball",
)
# The smallest sensible jump per implement when the location lists no weights: 2.5 kg / 5 lb (the smallest
# plates, a pair on a bar, and the usual dumbbell and machine step); kettlebells come in 4 kg / 9 lb steps.
_STEP_KG: dict[str, float] = {"kettlebell": 4.0}
_STEP_LB: dict[str, float] = {"kettlebell": 9.0}


# --- Prescriptions: reps, rest and loads (one rule for swap_exercise's `prescribe` and the drafting) ------------
DEFAULT_BODY_WEIGHT_KG = 75.0
LEVEL_RANK = {"beginner": 0, "intermediate": 1, "advanced": 2}
SMALL_WORK_MUSCLES = frozenset({"Abs", "Lower Back", "Forearms", "Neck", "Calves", "Abductors", "Adductors"})
# Exercises done with body weight on a bar, bench or station: their equipment holds no load.
_UNLOADED = re.compile(r"inverted-row|pull-up|chin-up|dip\b|dip$|hanging|dead-hang|push-up|scapular|captain")
_UNILATERAL = re.compile(r"single|one-arm|alternating|split|lunge|step-up|side-|copenhagen|kickback|windmill")
_LOW_REP_BODYWEIGHT = re.compile(r"pull-up|chin-up|dip|nordic|inverted-row|hanging")
# Barbell-equivalent → load on this implement (per hand for dumbbells).
_IMPLEMENT_FACTOR = {"barbell": 1.0, "trap_bar": 1.3, "ez_bar": 0.9, "smith_machine": 0.9, "dumbbells": 0.4}
_IMPLEMENT_FACTOR |= {"kettlebell": 0.3, "cable_machine": 0.8, "leg_press_machine": 2.0}
_IMPLEMENT_FACTOR |= {"hack_squat_machine": 1.2}
_FIXED_LOAD_KG = {"weight_plates": 10.0, "medicine_ball": 6.0}
# Barbell-equivalent load as a fraction of body weight for an intermediate lifter, by primary muscle.
_COMPOUND_RATIO = {"Quadriceps": 1.0, "Hamstrings": 1.0, "Glutes": 1.0, "Lower Back": 1.2, "Chest": 0.75}
_COMPOUND_RATIO |= {"Back": 0.65, "Shoulders": 0.45, "Triceps": 0.6, "Trapezius": 0.8, "Biceps": 0.35}
_ISOLATION_RATIO = {"Quadriceps": 0.4, "Hamstrings": 0.35, "Glutes": 0.3, "Calves": 0.8, "Chest": 0.25}
_ISOLATION_RATIO |= {"Back": 0.3, "Shoulders": 0.13, "Biceps": 0.3, "Triceps": 0.3, "Trapezius": 0.7}
_ISOLATION_RATIO |= {"Abs": 0.2, "Forearms": 0.2, "Abductors": 0.4, "Adductors": 0.4, "Neck": 0.05}
_LEVEL_FACTOR = {"beginner": 0.6, "intermediate": 1.0, "advanced": 1.3}
_SEX_FACTOR = {"male": 1.0, "female": 0.65}
# The reps the ratios are for (a compound's working sets of 8, an isolation's 12): other reps move the load by
# `load_for_reps`.
_RATIO_REPS = {"compound": 8, "isolation": 12}
# A first time with a compound lift starts at a load the lifter surely manages (about RPE 6-7) and adds weight
# next time: an estimate from body weight and level can be a fifth off or more, and a first set too heavy is a
# failed or unsafe one. The isolation ratios are already such a start (a lateral raise at 5 kg each hand).
FIRST_TIME_SHARE = 0.8
# Movements about one joint: whatever the catalogue calls them (it says "compound" for an incline fly), they are
# loaded and repped as isolation work, a fraction of the press or row beside them.
SINGLE_JOINT_PATTERNS = frozenset(
    {
        "chest_fly",
        "shoulder_raise",
        "elbow_flexion",
        "elbow_extension",
        "knee_extension",
        "knee_flexion",
        "calf_raise",
        "hip_abduction",
        "hip_adduction",
        "wrist",
        "neck",
        "shrug",
    }
)


@dataclass(frozen=True)
class Lifter:
    """What a prescription depends on besides the exercise: experience, body weight, sex, the rep scheme the
    user's goals call for."""

    level: str = "beginner"
    body_weight_kg: float = DEFAULT_BODY_WEIGHT_KG
    sex: str = "unspecified"
    emphasis: str = "hypertrophy"  # strength | hypertrophy | endurance


def goal_emphasis(*, user_id: uuid.UUID) -> str:
    """The rep scheme the user's heaviest goal calls for: strength, hypertrophy or endurance."""
    for goal in selectors.list_category_goals(user_id=user_id):  # heaviest first
        name = goal.category.lower()
        if name in ("strength", "power"):
            return "strength"
        if name in ("endurance", "cardio", "conditioning"):
            return "endurance"
        if name in ("hypertrophy", "muscle", "size"):
            return "hypertrophy"
    return "hypertrophy"


def lifter_of(*, user_id: uuid.UUID) -> Lifter:
    """The user's `Lifter` (profile and goals; defaults where they say nothing)."""
    return lifter_from(selectors.get_profile(user_id=user_id), user_id=user_id)


def lifter_from(profile: UserProfile | None, *, user_id: uuid.UUID) -> Lifter:
    """`lifter_of` with the user's profile (None: none) already read."""
    return Lifter(
        level=(profile.experience_level if profile is not None else "") or "beginner",
        body_weight_kg=(profile.weight_kg if profile is not None else None) or DEFAULT_BODY_WEIGHT_KG,
        sex=(profile.sex if profile is not None else "") or "unspecified",
        emphasis=goal_emphasis(user_id=user_id),
    )


def mechanic_of(mechanic: str, movement_pattern: str) -> str:
    """The mechanic a prescription goes by: "isolation" for a movement about one joint (`SINGLE_JOINT_PATTERNS`)
    whatever the catalogue says, else the catalogue's."""
    return "isolation" if movement_pattern in SINGLE_JOINT_PATTERNS else mechanic


def load_for_reps(load: float, *, from_reps: int, to_reps: int) -> float:
    """The load that is as hard for `to_reps` as `load` is for `from_reps` (Epley's estimate of one rep max)."""
    return load * (1 + from_reps / 30) / (1 + to_reps / 30)


def is_unilateral(slug: str) -> bool:
    """One side at a time (single-leg, one-arm, split, lunge, ...): reps are per side."""
    return _UNILATERAL.search(slug) is not None


def loaded_implement(slug: str, equipment: Iterable[str]) -> str | None:
    """The implement a load refers to, None for bodyweight work on a bar, bench or station (pull-up, dip)."""
    if _UNLOADED.search(slug) and not slug.startswith("weighted"):
        return None
    return implement(equipment)


def reps_and_rest(
    *,
    primary: str,
    mechanic: str,
    force: str,
    slug: str,
    equipment: Iterable[str],
    loaded: bool,
    lifter: Lifter,
    rank: int = 2,
    movement_pattern: str = "",
    knee_work: bool = False,
) -> tuple[int, int]:
    """Reps per set and rest (s) of a main reps exercise: small muscles high reps; loaded compounds by the goals'
    emphasis (the first two of a strength session heavy), isolation (`mechanic_of`) 12-15; bodyweight by level.
    Knee work for a knee that complains (`workout_validation.is_knee_work`) is never a heavy set: 12 reps or more."""
    level = LEVEL_RANK.get(lifter.level, 0)
    mechanic = mechanic_of(mechanic, movement_pattern)
    if primary in SMALL_WORK_MUSCLES:
        return (12, 60) if loaded else (15, 45)
    if loaded:
        if mechanic != "compound":
            return (15 if lifter.emphasis == "endurance" else 12), 60
        if rank < 2 and lifter.emphasis == "strength" and not knee_work:
            return 6, 120
        if lifter.emphasis == "endurance":
            return 15, 60
        if knee_work:
            return KNEE_WORK_REPS, KNEE_WORK_REST_SEC
        return (10 if level == 0 else 8), 90
    if "resistance_bands" in set(equipment):
        return 15, 45
    if _LOW_REP_BODYWEIGHT.search(slug):
        return (5, 8, 10)[level], 90
    if force == "push" and primary in ("Chest", "Triceps", "Shoulders"):
        return (8, 12, 15)[level], 60
    return 15, 45


def first_load_kg(
    *,
    gear: str,
    primary: str,
    mechanic: str,
    unilateral: bool,
    lifter: Lifter,
    reps: int | None = None,
    movement_pattern: str = "",
) -> float:
    """A first load (kg) with no history, for sets of `reps` (None: the usual 8 or 12): a fraction of body weight
    by main muscle and mechanic (`mechanic_of`), scaled for the implement, one side, experience and sex, a compound
    lift's `FIRST_TIME_SHARE` of it; fixed for plates and medicine balls."""
    if gear in _FIXED_LOAD_KG:
        return _FIXED_LOAD_KG[gear]
    compound = mechanic_of(mechanic, movement_pattern) == "compound"
    ratios = _COMPOUND_RATIO if compound else _ISOLATION_RATIO
    factor = _IMPLEMENT_FACTOR.get(gear, 0.8) * _one_side(gear, unilateral)
    working = (
        lifter.body_weight_kg
        * ratios.get(primary, 0.3)
        * factor
        * _LEVEL_FACTOR.get(lifter.level, 0.6)
        * _SEX_FACTOR.get(lifter.sex, 0.8)
    )
    usual = _RATIO_REPS["compound" if compound else "isolation"]
    at_reps = load_for_reps(working, from_reps=usual, to_reps=reps or usual)
    return at_reps * FIRST_TIME_SHARE if compound else at_reps


def working_load(
    *,
    gear: str,
    unit: str,
    past: PastLoad | None,
    first_kg: float,
    weights_kg: WeightsOnHand | None,
    scale: float = 1.0,
    reps: int | None = None,
    knee_reps: int | None = None,
    implements: int = 1,
) -> tuple[float, str]:
    """The load for sets of `reps` and what to say about it (`last_time_note`). With history: the last load, moved
    down to these reps when they are more than the fewest done (`load_for_reps`: 65 kg × 6 is about 57.5 kg × 10,
    25 kg × 10, 10, 8 about 22.5 kg × 12; never up for fewer), one step up from there when the last session was
    completed at RPE 8 or less, the same otherwise; with no history the first load, rounded to what is on hand.

    `knee_reps`: knee work for a knee that complains (`workout_validation.is_knee_work`), a moderate set of these
    reps (60 kg × 11 is about 57.5 kg × 12); a first load is KNEE_WORK_LOAD_SCALE of the usual one for them."""
    reps = knee_reps if knee_reps is not None else reps
    if past is not None:
        moved = past.load
        if reps is not None and (reps > past.reps or knee_reps is not None):
            moved = load_for_reps(past.load, from_reps=past.reps, to_reps=reps)
        progress = past.completed and (past.rpe is None or past.rpe <= 8) and scale >= 1.0
        base = step_load(moved, unit=unit, gear=gear, steps=1, weights_kg=weights_kg) if progress else moved
        load = (
            round_load(base * scale, unit=unit, gear=gear, weights_kg=weights_kg)
            if scale != 1.0 or moved != past.load
            else base
        )
        return load, last_time_note(
            past,
            load=load,
            reps=reps or past.reps,
            unit=unit,
            implements=implements,
            knee=knee_reps is not None,
        )
    kilos = first_kg * scale * (KNEE_WORK_LOAD_SCALE if knee_reps is not None else 1.0)
    load = round_load(
        convert_weight(kilos, from_unit="kg", to_unit=unit), unit=unit, gear=gear, weights_kg=weights_kg
    )
    return load, FIRST_TIME_NOTE


FIRST_TIME_NOTE = "First time: start here and add weight if the last reps feel easy."


def last_time_note(
    past: PastLoad, *, load: float, reps: int, unit: str, implements: int = 1, knee: bool = False
) -> str:
    """What happened last time and what this prescription does with it, in words that match both numbers: "Up from
    65 kg × 6 last time." only when the load went up for no more reps than last time; otherwise the sets as done
    and the new load with its reps ("65 kg × 6 last time; 60 kg for 10 reps.", "25 kg × 10, 10, 8 last time;
    22.5 kg for 12 reps.")."""
    did = past.words(unit)  # as the history lines say it; the prescription's line says "each hand"
    now = load_phrase(load, unit, implements)
    if knee and load < past.load:
        return f"Last time: {did}; lighter for {reps} moderate reps for your knee."
    if load > past.load and reps <= past.reps:
        return f"Up from {did} last time."
    if load == past.load and reps == past.reps and past.completed:
        return f"Last time: {did}."
    return f"{did} last time; {now} for {reps} reps."


def implement(equipment: Iterable[str]) -> str | None:
    """The loaded implement an exercise uses (barbell, dumbbells, machine, ...), None for bodyweight/bands."""
    gear = set(equipment)
    for slug in _LOADED_IMPLEMENTS:
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


# How far one "heavier"/"lighter" (and so "harder"/"easier") moves a load: enough to feel, as a coach moves a
# heavy lift (5-10 %). A light load moves one step, which is already more (a dumbbell pair 10 → 12.5 kg).
FELT_LOAD_SHARE = 0.075


def felt_load(
    value: float, *, unit: str, gear: str | None, heavier: bool, weights_kg: WeightsOnHand | None = None
) -> float:
    """`value` made heavier (lighter) by about `FELT_LOAD_SHARE`, rounded to what is on hand (`round_load`), at
    least one step (`step_load`); `value` itself when there is nothing heavier (lighter) here."""
    sign = 1 if heavier else -1
    one_step = step_load(value, unit=unit, gear=gear, steps=sign, weights_kg=weights_kg)
    felt = round_load(value * (1 + sign * FELT_LOAD_SHARE), unit=unit, gear=gear, weights_kg=weights_kg)
    moved = max(one_step, felt) if heavier else min(one_step, felt)
    return round_load(moved, unit=unit, gear=gear, weights_kg=weights_kg)  # never below the empty bar


def heavier_than_on_hand(
    entry: Mapping[str, Any],
    *,
    equipment: Iterable[str] | None,
    location: str | None,
    weights_kg: WeightsOnHand,
) -> str:
    """One sentence for the model when a logged load (a log entry's `actual_load_each`, in its `load_unit`) is
    heavier than the location lists for the exercise's implement (its `equipment`; None: the catalogue's), else
    "". The log keeps what the user says they lifted: the location's list may be out of date, which only the
    user can say. A load done as planned is not the user's news (the workout may be another location's)."""
    heaviest = max((float(value) for value in entry.get("actual_load_each") or () if value), default=0.0)
    as_planned = entry.get("actual_load_each") == entry.get("target_load_each")
    if location is None or not heaviest or not weights_kg or as_planned:
        return ""
    if equipment is None:
        match = find_catalog_match(str(entry.get("exercise_name") or ""))
        equipment = match.equipment if match is not None else ()
    gear = implement(equipment)
    unit = str(entry.get("load_unit") or "kg")
    on_hand = loads_on_hand(gear, unit=unit, weights_kg=weights_kg)
    if gear is None or not on_hand or heaviest <= on_hand[-1]:
        return ""
    return (
        f"The {heaviest:g} {unit} logged for {entry.get('exercise_name')} is more than the heaviest "
        f"{gear.replace('_', ' ')} listed at {location} ({on_hand[-1]:g} {unit}): new workouts there stop at "
        f"{on_hand[-1]:g} {unit} until the user adds heavier ones to {location} in the app (no tool changes a "
        f"location's equipment)."
    )


def load_phrase(value: float, unit: str, implements: int) -> str:
    """'22.5 kg each hand' for a pair (`implements` 2), '25 kg' for one dumbbell or a bar: the words are
    `per_hand`'s, as on every other line that shows a load."""
    return f"{value:g} {unit}{per_hand(implements)}"


@dataclass(frozen=True)
class PastLoad:
    """The user's latest logged loaded sets of one exercise, in the unit asked for."""

    load: float  # the heaviest set
    reps: int  # the fewest reps done (or planned)
    completed: bool  # every set reached its target reps
    rpe: float | None
    # The sets as done (or planned), load and reps each, in the unit asked for: what "last time" quotes.
    sets: tuple[tuple[float, int], ...] = ()

    def words(self, unit: str, implements: int = 1) -> str:
        """The sets as the user did them: "65 kg × 6", "25 kg × 10, 10, 8", "60 kg × 8, 65 kg × 6"."""
        sets = self.sets or ((self.load, self.reps),)
        loads = [load for load, _ in sets]
        if len(set(loads)) == 1:
            reps = [reps for _, reps in sets]
            said = f"{reps[0]}" if len(set(reps)) == 1 else ", ".join(str(value) for value in reps)
            return f"{load_phrase(loads[0], unit, implements)} × {said}"
        return ", ".join(f"{load_phrase(load, unit, implements)} × {reps}" for load, reps in sets)


def logged_loads(*, user_id: uuid.UUID, unit: str, days: int = HISTORY_DAYS) -> dict[str, PastLoad]:
    """The latest loaded session of each exercise in the last `days`, by catalogue slug and by name key: the one
    history reader behind a swap's prescription and a draft's progression. A load logged only as planned
    (no actual) counts as done at the planned load, not completed."""
    since = timezone.now() - timedelta(days=days)
    found: dict[str, PastLoad] = {}
    for entry in selectors.logged_load_rows(user_id=user_id, start=since):  # oldest first
        loads = [
            float(value) for value in entry["actual_load_each"] or entry["target_load_each"] or () if value
        ]
        if not loads:
            continue
        reps = [int(value) for value in entry["actual_reps"] or () if value]
        targets = [int(value) for value in entry["target_reps"] or () if value]
        done = reps or targets
        in_unit = [
            round(convert_weight(value, from_unit=entry["load_unit"], to_unit=unit), 1) for value in loads
        ]
        past = PastLoad(
            load=max(in_unit),
            reps=min(reps) if reps else (min(targets) if targets else 8),
            completed=bool(reps) and (not targets or min(reps) >= min(targets)),
            rpe=entry["rpe"],
            sets=tuple(zip(in_unit, done, strict=False)) if done else (),
        )
        for key in (entry["exercise_slug"], exercise_name_key(entry["exercise_name"])):
            if key:
                found[key] = past
    return found


def last_load(*, user_id: uuid.UUID, match: CatalogMatch, unit: str) -> PastLoad | None:
    """The user's latest logged session of this exercise (its heaviest load, in `unit`), or None."""
    history = logged_loads(user_id=user_id, unit=unit)
    keys = (match.slug, exercise_name_key(match.name), *sorted(match.name_keys))
    return next((history[key] for key in keys if key in history), None)


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
    role = section_of(old or {})
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
    knee_work = is_knee_work(match.movement_pattern, {injury.part.key for injury in context.injuries})
    if kind == "reps":
        gear = loaded_implement(match.slug, match.equipment)
        if role != "main":
            sets, reps, rest = 1, 10, 0
        else:
            lifter = lifter_of(user_id=user_id)
            primary = match.primary_muscles[0] if match.primary_muscles else ""
            sets = 3
            reps, rest = reps_and_rest(
                primary=primary,
                mechanic=match.mechanic,
                force=match.force,
                slug=match.slug,
                equipment=match.equipment,
                loaded=gear is not None,
                lifter=lifter,
                movement_pattern=match.movement_pattern,
                knee_work=knee_work,
            )
            if knee_work:
                exercise["notes"] = KNEE_WORK_CUE
        exercise.update(sets=sets, reps=[reps] * sets, rest_sec=rest)
        if gear is not None and role == "main":
            unit = context.weight_unit
            past = last_load(user_id=user_id, match=match, unit=unit)
            first_kg = first_load_kg(
                gear=gear,
                primary=primary,
                mechanic=match.mechanic,
                unilateral=is_unilateral(match.slug),
                lifter=lifter,
                reps=reps,
                movement_pattern=match.movement_pattern,
            )
            implements = (
                default_implements(name=match.name, slug=match.slug, equipment=match.equipment)
                if gear in HANDHELD
                else 1
            )
            # A pair of bells pressed in turn holds what a pair pressed together does: one side's share is for one.
            one_side = is_unilateral(match.slug) and implements == 1
            replaced = (
                load_from_replaced(old, gear=gear, unilateral=one_side, reps=reps, unit=unit)
                if past is None and old is not None and not knee_work and _same_work(old, match)
                else None
            )
            load, note = working_load(
                gear=gear,
                unit=unit,
                past=past,
                first_kg=replaced[0] if replaced is not None else first_kg,
                weights_kg=context.weights_kg,
                reps=reps,
                knee_reps=reps if knee_work else None,
                implements=implements,
            )
            notes.append(replaced[1] if replaced is not None else note)
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


# How well an implement carries a loaded lift's work when the replaced one's is not there (lower is closer): a bar or
# a machine takes the same load steadily, dumbbells a little less, a cable less again, a kettlebell comes in big
# steps and a plate or a medicine ball is one fixed weight. The replaced lift's own implement is closest of all.
_CARRIES_LOAD = {"dumbbells": 2, "cable_machine": 3, "kettlebell": 4, "weight_plates": 5, "medicine_ball": 5}
_NO_IMPLEMENT = 6


def _carries_load(gear: str | None, *, like: str | None) -> int:
    if gear == like:
        return 0
    if gear is None:
        return _NO_IMPLEMENT
    return _CARRIES_LOAD.get(gear, 1)  # a bar or a machine


def _same_work(old: Mapping[str, Any], match: CatalogMatch) -> bool:
    """Whether `match` does the replaced exercise's work: the same main muscle, both compound or both isolation
    (`mechanic_of`), so the replaced load says what the new one should be."""
    old_match = find_catalog_match(str(old.get("exercise_name") or ""))
    if old_match is None or not old_match.primary_muscles or not match.primary_muscles:
        return False
    return old_match.primary_muscles[0] == match.primary_muscles[0] and mechanic_of(
        old_match.mechanic, old_match.movement_pattern
    ) == mechanic_of(match.mechanic, match.movement_pattern)


def pick_replacement(
    old: Mapping[str, Any],
    *,
    workout: Sequence[Mapping[str, Any]],
    context: TrainingContext,
    avoid: Iterable[str] = (),
    level: str = "",
) -> CatalogMatch | None:
    """The catalogue exercise a coach would put in place of `old`: allowed here, not already in the workout, the
    same movement pattern and main muscle first, then the same main muscle, the same type of work; among those the
    one that trains it at the same level: loaded when `old` is (bodyweight when it is not), no harder than the
    lifter's `level`, on the same side(s), on an implement that carries the load (`_CARRIES_LOAD`: a machine or
    dumbbell press before a kettlebell for a barbell bench press), with the closest muscle shares, then the plainest
    name (Machine Chest Press before Incline Machine Chest Press)."""
    from tools_app.workout_validation import find_catalog_match

    old_name = str(old.get("exercise_name") or "")
    old_match = find_catalog_match(old_name)
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
    role = section_of(old or {})
    old_slug = old_match.slug if old_match is not None else exercise_name_key(old_name)
    equipment = old_match.equipment if old_match is not None else old.get("equipment") or ()
    old_gear = loaded_implement(old_slug, equipment) if any(old.get("load_each") or ()) else None
    most = LEVEL_RANK.get(level, 2) if level else 2

    def rank(candidate: CatalogMatch) -> tuple[Any, ...]:
        primary = candidate.primary_muscles[0] if candidate.primary_muscles else ""
        gear = loaded_implement(candidate.slug, candidate.equipment)
        theirs = dict(candidate.muscle_shares)
        distance = sum(abs(shares.get(muscle, 0.0) - theirs.get(muscle, 0.0)) for muscle in shares | theirs)
        return (
            0 if pattern and candidate.movement_pattern == pattern else 1,
            0 if primary == main else 1,
            0 if candidate.exercise_type == kind else 1,
            (gear is None) != (old_gear is None),
            LEVEL_RANK.get(candidate.level, 0) > most,
            is_unilateral(candidate.slug) != is_unilateral(old_slug),
            _carries_load(gear, like=old_gear) if old_gear is not None else 0,
            round(distance, 2),
            len(candidate.name.split()),
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


def load_from_replaced(
    old: Mapping[str, Any], *, gear: str, unilateral: bool, reps: int, unit: str
) -> tuple[float, str] | None:
    """The first load (kg) of a replacement from the loaded lift it replaces, and the words for it: the replaced
    load as a barbell's (`_IMPLEMENT_FACTOR`, one side's share), on the new implement, moved to the new reps
    (`load_for_reps`): a barbell bench press 4×6 @ 52.5 kg becomes a machine chest press 3×8 @ 40 kg or dumbbells
    of 20 kg each hand. None when the replaced exercise has no load to go by, or the new one takes a fixed weight."""
    loads = [float(value) for value in old.get("load_each") or () if value]
    reps_before = [int(value) for value in old.get("reps") or () if value]
    old_gear = implement(old.get("equipment") or ())
    if (
        not loads
        or not reps_before
        or old_gear is None
        or gear in _FIXED_LOAD_KG
        or old_gear in _FIXED_LOAD_KG
    ):
        return None
    old_unit = str(old.get("load_unit") or unit)
    old_slug = exercise_name_key(str(old.get("exercise_name") or ""))
    kilos = convert_weight(max(loads), from_unit=old_unit, to_unit="kg")
    old_factor = _IMPLEMENT_FACTOR.get(old_gear, 0.8) * _one_side(
        old_gear, is_unilateral(str(old.get("exercise_slug") or old_slug))
    )
    new_factor = _IMPLEMENT_FACTOR.get(gear, 0.8) * _one_side(gear, unilateral)
    moved = load_for_reps(kilos / old_factor * new_factor, from_reps=min(reps_before), to_reps=reps)
    said = load_phrase(max(loads), old_unit, implements_of(old))
    return moved, f"Set from the {old.get('exercise_name')}'s {said} × {min(reps_before)}."


def _one_side(gear: str, unilateral: bool) -> float:
    """The share of a two-handed load one hand or leg takes (`first_load_kg`'s rule)."""
    return 0.6 if unilateral and gear in ("dumbbells", "kettlebell", "cable_machine") else 1.0


# --- Harder / easier ------------------------------------------------------------------------------------------------
# How far harder/easier moves one lever before the next one moves instead (`harder_or_easier`).
MAX_SETS = 5
MIN_SETS = 2
MAX_REPS_LOADED = 20  # past it a loaded exercise at its heaviest weight here gets a set instead
MAX_REPS_BODYWEIGHT = 30
MIN_REPS = 4
MAX_HOLD_SEC = 120
MAX_WORK_SEC = 90
MAX_ROUNDS = 12


def harder_or_easier(
    exercise: Mapping[str, Any], *, harder: bool, unit: str, weights_kg: WeightsOnHand | None = None
) -> dict[str, Any]:
    """The adjust_exercise fields that make `exercise` harder or easier ({} when nothing sensible changes).

    One lever at a time, as a coach moves them, each one `nudge` step: the load (`felt_load`: about 7.5 % and at least the
    next weight on hand) when the exercise is loaded and there is one; else the reps by 2 (holds by 10 s, interval work by 10 s); a set (an
    interval's round) only when neither can move within the limits above. Continuous work: a fifth of its time.
    """
    kind = str(exercise.get("exercise_type") or "")
    if kind == "duration":
        minutes = float(exercise.get("duration_min") or 10)
        changes = {"duration_min": max(1.0, round(minutes * (1.2 if harder else 0.8)))}
        return {key: value for key, value in changes.items() if exercise.get(key) != value}
    if kind not in ("reps", "hold", "intervals"):
        return {}

    def step(change: Change) -> dict[str, Any]:
        return nudge(exercise, change, unit=unit, weights_kg=weights_kg)

    if kind == "reps" and exercise.get("load_each"):
        load = step("heavier" if harder else "lighter")
        if "load_each" in load:
            return load
    most = MAX_REPS_LOADED if exercise.get("load_each") else MAX_REPS_BODYWEIGHT
    bounds = {"reps": (MIN_REPS, most), "hold_sec": (10, MAX_HOLD_SEC), "work_sec": (10, MAX_WORK_SEC)}
    more = step("more_reps" if harder else "fewer_reps")
    if more and all(
        low <= value <= high
        for key, (low, high) in bounds.items()
        for value in _as_list(more.get(key, exercise.get(key)))
        if key in more
    ):
        return more
    sets = step("more_sets" if harder else "fewer_sets")
    if "sets" in sets:
        return sets if MIN_SETS <= int(sets["sets"]) <= MAX_SETS else {}
    return sets if "rounds" in sets and 1 <= int(sets["rounds"]) <= MAX_ROUNDS else {}


def _as_list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list) else [value]


def what_moved(exercise: Mapping[str, Any], changes: Mapping[str, Any], *, harder: bool) -> str:
    """Which one lever `harder_or_easier` moved and what stayed, in the user's words ("only the weight: the same
    sets and reps"), with why the weight did not move when the exercise has one; "" for none of them."""
    levers = {
        "load_each": ("the weight", "the same sets and reps"),
        "reps": ("the reps", "the same sets"),
        "hold_sec": ("the hold", "the same sets"),
        "work_sec": ("the work time", "the same rounds and rest"),
        "sets": ("one set more" if harder else "one set fewer", "the same reps"),
        "rounds": ("one round more" if harder else "one round fewer", "the same work and rest"),
        "duration_min": ("the time", "the same pace"),
    }
    # A set more or fewer carries the per-set reps and loads along: the sets are the lever then.
    lever = next((key for key in ("sets", "rounds", *levers) if key in changes), None)
    if lever is None:
        return ""
    moved, stayed = levers[lever]
    if exercise.get("load_each") and lever != "load_each":
        extreme = "heaviest" if harder else "lightest"
        return f"only {moved}, {stayed} and weight: that's already the {extreme} weight you have here"
    return f"only {moved}: {stayed}"


# What adjust_exercise's `change` can ask for: harder/easier (`harder_or_easier`) or one step of one field (`nudge`).
Change = Literal[
    "harder",
    "easier",
    "more_sets",
    "fewer_sets",
    "more_reps",
    "fewer_reps",
    "heavier",
    "lighter",
    "more_rest",
    "less_rest",
]


def nudge(
    exercise: Mapping[str, Any], change: Change, *, unit: str, weights_kg: WeightsOnHand | None = None
) -> dict[str, Any]:
    """The adjust_exercise fields for one step of one kind ({} when nothing sensible changes): a set (a round
    of intervals) more or fewer, within 1-8; 2 reps (10 s of a hold or of interval work) more or fewer; the
    load by `felt_load` (the reps, without a load or beyond the weights on hand); 30 s of rest more or less."""
    kind = str(exercise.get("exercise_type") or "")
    sets = int(exercise.get("sets") or 0)
    reps = [int(value) for value in exercise.get("reps") or ()]
    loads = [float(value) for value in exercise.get("load_each") or ()]
    holds = [int(value) for value in exercise.get("hold_sec") or ()]
    up = change in ("more_sets", "more_reps", "heavier", "more_rest")
    step = 1 if up else -1
    changes: dict[str, Any] = {}
    if change in ("more_sets", "fewer_sets"):
        if kind == "intervals":
            changes["rounds"] = max(1, int(exercise.get("rounds") or 1) + step)
        elif kind in ("reps", "hold") and sets:
            count = changes["sets"] = min(8, max(1, sets + step))
            for key, values in (("reps", reps), ("load_each", loads), ("hold_sec", holds)):
                if values:  # the last set's value for an added set; a dropped set takes its values along
                    changes[key] = (values + [values[-1]] * count)[:count]
    elif change in ("more_reps", "fewer_reps") or (change in ("heavier", "lighter") and not loads):
        if kind == "reps" and reps:
            changes["reps"] = [max(1, reps[0] + 2 * step)] * sets
        elif kind == "hold" and holds:
            changes["hold_sec"] = [max(10, holds[0] + 10 * step)] * sets
        elif kind == "intervals":
            changes["work_sec"] = max(10, int(exercise.get("work_sec") or 30) + 10 * step)
    elif change in ("heavier", "lighter") and kind == "reps":
        gear = implement(exercise.get("equipment") or ())
        load = felt_load(loads[0], unit=unit, gear=gear, heavier=up, weights_kg=weights_kg)
        if load != loads[0] or not reps:
            changes["load_each"] = [load] * sets
        else:  # already the heaviest (lightest) weight on hand: the reps move instead
            changes["reps"] = [max(1, reps[0] + 2 * step)] * sets
    elif change in ("more_rest", "less_rest") and exercise.get("rest_sec") is not None:
        changes["rest_sec"] = max(0, int(exercise.get("rest_sec") or 0) + 30 * step)
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
    if value is None:
        return "none"
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


# Free-text fields, said by what happened to them.
FREE_TEXT_FIELDS = {"notes": "note", "reasoning": "reasoning"}


def describe_change(name: str, old: Mapping[str, Any], new: Mapping[str, Any], keys: Iterable[str]) -> str:
    """'Dumbbell Bench Press: 3→4 sets, 20→22.5 kg each hand' for the keys that changed."""
    parts = []
    for key in keys:
        before, after = old.get(key), new.get(key)
        if before == after or (
            isinstance(before, list) and isinstance(after, list) and set(before) == set(after)
        ):
            continue  # the same values over a new number of sets: the sets say it
        if key == "implements":
            # One implement or a pair, in words: "one → a pair" (never the field name).
            parts.append(" → ".join("a pair" if value == 2 else "one" for value in (before, after)))
        elif key == "load_each" and implements_of(old) != implements_of(new) and before and after:
            # One 8 kg bell became a pair of 16s: each side says what it is ("8 kg→16 kg each hand").
            unit = str(new.get("load_unit") or "")
            parts.append(
                f"{load_phrase(float(before[0]), unit, implements_of(old))}→"
                f"{load_phrase(float(after[0]), unit, implements_of(new))}"
                if len(set(before)) == 1 and len(set(after)) == 1
                else f"{_value(key, before, old)}→{_value(key, after, new)}"
            )
        elif key == "load_each" and before and after and len(set(before)) == 1 and len(set(after)) == 1:
            unit = load_phrase(0, str(new.get("load_unit") or ""), implements_of(new)).removeprefix("0 ")
            parts.append(f"{float(before[0]):g}→{float(after[0]):g} {unit}")
        elif key == "load_each":
            parts.append(f"{_value(key, before, old)}→{_value(key, after, new)}")
        elif key in _LABELS:
            parts.append(f"{_value(key, before, old)}→{_value(key, after, new)} {_LABELS[key]}")
        elif key in FREE_TEXT_FIELDS:
            # A note is read on the card: the user hears that it changed, not the note again (a trial echoed one
            # of 120 characters, as "notes None→…").
            parts.append(
                f"{FREE_TEXT_FIELDS[key]} {'added' if not before else 'removed' if not after else 'changed'}"
            )
        else:
            parts.append(f"{key} {_value(key, before, old)}→{_value(key, after, new)}")
    return f"{name}: {', '.join(parts)}" if parts else f"{name}: unchanged"


# --- Recent training ------------------------------------------------------------------------------------------------
def recent_training_warnings(
    *, user_id: uuid.UUID, exercises: Sequence[Mapping[str, Any]], days_ahead: int = 0
) -> list[str]:
    """A warning per exercise that is hard work (`distribution.is_hard_work`: not steady cardio) for a muscle
    trained hard in the RECENT_HOURS before the workout: now, or `days_ahead` days from now (a session for
    tomorrow has a day more of recovery behind it)."""
    later = 24.0 * max(0, days_ahead)
    recent = {
        muscle: hours + later
        for muscle, hours in distribution.recently_trained_muscles(
            user_id=user_id, hours=RECENT_HOURS
        ).items()
        if hours + later < RECENT_HOURS
    }
    if not recent:
        return []
    warnings = []
    for exercise in exercises:
        if section_of(exercise) != "main" or not distribution.is_hard_work(
            str(exercise.get("exercise_type"))
        ):
            continue
        hit = [
            str(item.get("muscle"))
            for item in exercise.get("muscles_utilized") or ()
            if str(item.get("muscle")) in recent and float(item.get("share") or 0) >= distribution.HARD_SHARE
        ]
        if hit:
            ago = "before that day" if later else "ago"
            when = ", ".join(f"{muscle} {recent[muscle]:g} h {ago}" for muscle in hit)
            warnings.append(
                f"{exercise.get('exercise_name')} works muscles trained hard within {RECENT_HOURS} h ({when}): "
                "consider other muscles or lighter volume, and tell the user"
            )
    return warnings
