"""Drafting a workout from a short brief (focus, minutes, style, intensity, what to avoid): the coach's rules
for choosing exercises under the user's constraints, behind the `draft_workout` tool and `draft_workout_for`.

`compose_workout` turns a `WorkoutBrief` and the user's facts (`tools_app.training_facts.load_facts`: units,
the location's equipment and weights, injuries, preferences, recovery, debt, recent loads, the catalogue) into a
workout dict in the canonical schema, and writes down the adaptations it made so the model can tell the user.

The rules follow the system prompt's priorities. Preferences (names, words, equipment) and injuries rule
exercises out. The brief picks the body areas; each area has a coach's template of slots ("a compound
quad lift", "a horizontal pull", "a core exercise"), filled in order, with no movement pattern twice while
another fits (`balance_pattern`, `pattern_limit`: one row and one pulldown, not two rows). Muscles trained
hard in the last 48 h (large) or 24 h (small) are left out unless the brief named them, in which case the
volume is lighter; for an open brief the slots of under-trained muscles come first. Within a slot, candidates are
scored (staple lifts, equipment that loads well, fit to the slot's muscles, level, familiarity) and ties
go to the slug, so the same facts always give the same workout. Loads are rounded and stepped by
`workout_coaching`'s one rule (the weights on hand at the location, else the implement's step).

`draft_workout_for` drafts without saving (the week's drafts in `plan_drafting` compose each day the same way); the `draft_workout` tool
drafts and saves it exactly as `generate_workout` does, listing the adaptations in its result.
"""

from __future__ import annotations

import copy
import datetime as dt
import re
import uuid
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import date
from functools import lru_cache
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from datasources_app import selectors
from datasources_app.catalog import (
    BODYWEIGHT,
    derive_movement_pattern,
)
from datasources_app.workouts import Workout, is_main, section_of
from tools_app.avoid_words import singular, split_avoid
from tools_app.formatting import joined
from tools_app.registry import register
from tools_app.training_facts import (
    LEG_MUSCLES,
    LEVEL_RANK,
    STAPLES,
    Candidate,
    Exclusions,
    Filters,
    TrainingFacts,
    as_of,
    choose_load,
    exclusions_from_phrases,
    load_facts,
    name_stems,
    plan_name_match,
    rejection_note,
    split_words,
)
from tools_app.types import Tool, ToolContext, ToolOutcome
from tools_app.workout_coaching import goals_for as coaching_goals_for
from tools_app.workout_coaching import mechanic_of, reps_and_rest
from tools_app.workout_fit import (
    FIT_OVER,
    FIT_UNDER,
    REST_GROWTH_SEC,
    FitRules,
    draft_rules,
    fit_to_minutes,
    plan_day_rules,
    resize,
    shortest_minutes,
)
from tools_app.workout_tools import (
    CheckedWorkout,
    check_workout,
    estimate_duration_min,
    save_checked_workout,
)
from tools_app.workout_validation import (
    KNEE_WORK_CUE,
    KNEELING_PAD_CUE,
    depth_cues,
    is_knee_work,
    knee_pad_cue,
    validate_workout,
)

# --- Body areas: the brief's vocabulary -------------------------------------------------------------------------
Style = Literal["strength", "hiit", "cardio", "mobility"]
Intensity = Literal["easy", "hard"]
Area = Literal[
    "full body",
    "upper body",
    "lower body",
    "push",
    "pull",
    "legs",
    "glutes",
    "quads",
    "hamstrings",
    "calves",
    "chest",
    "back",
    "shoulders",
    "arms",
    "biceps",
    "triceps",
    "forearms",
    "core",
    "lower back",
    "traps",
    "neck",
    "adductors",
    "abductors",
]
# Area → the muscles it targets with their weight (1 = main target).
FOCUS_MUSCLES: dict[str, dict[str, float]] = {
    "full body": {
        "Quadriceps": 1.0,
        "Chest": 1.0,
        "Back": 1.0,
        "Hamstrings": 0.7,
        "Glutes": 0.8,
        "Shoulders": 0.7,
        "Abs": 0.6,
        "Biceps": 0.3,
        "Triceps": 0.3,
        "Calves": 0.2,
    },
    "upper body": {"Chest": 1.0, "Back": 1.0, "Shoulders": 0.8, "Biceps": 0.4, "Triceps": 0.4},
    "lower body": {"Quadriceps": 1.0, "Hamstrings": 0.9, "Glutes": 0.9, "Calves": 0.4, "Adductors": 0.2},
    "push": {"Chest": 1.0, "Shoulders": 0.8, "Triceps": 0.6},
    "pull": {"Back": 1.0, "Biceps": 0.6, "Trapezius": 0.3, "Shoulders": 0.3, "Forearms": 0.2},
    "legs": {"Quadriceps": 1.0, "Hamstrings": 0.9, "Glutes": 0.9, "Calves": 0.4},
    "glutes": {"Glutes": 1.0, "Hamstrings": 0.4, "Abductors": 0.3},
    "quads": {"Quadriceps": 1.0},
    "hamstrings": {"Hamstrings": 1.0},
    "calves": {"Calves": 1.0},
    "chest": {"Chest": 1.0, "Triceps": 0.25, "Shoulders": 0.15},
    "back": {"Back": 1.0, "Biceps": 0.25, "Trapezius": 0.2},
    "shoulders": {"Shoulders": 1.0, "Trapezius": 0.25},
    "arms": {"Biceps": 1.0, "Triceps": 1.0, "Forearms": 0.3},
    "biceps": {"Biceps": 1.0},
    "triceps": {"Triceps": 1.0},
    "forearms": {"Forearms": 1.0},
    "core": {"Abs": 1.0, "Lower Back": 0.4},
    "lower back": {"Lower Back": 1.0, "Abs": 0.3},
    "traps": {"Trapezius": 1.0},
    "neck": {"Neck": 1.0},
    "adductors": {"Adductors": 1.0},
    "abductors": {"Abductors": 1.0},
}
# Areas that name the whole body rather than particular muscles: not an explicit ask for any one muscle.
OPEN_FOCUS = frozenset({"full body"})
# Words that say what to leave out without naming an exercise ("no legs", "no equipment").
NOT_EXERCISES = frozenset({*(singular(area) for area in FOCUS_MUSCLES), "leg", "equipment", "weight"})
MIN_MINUTES = 10
MAX_MINUTES = 120


# What to draft: the `draft_workout` tool's input (and a week day's brief, `brief_for_session`). (A comment, not a
# docstring: a docstring would be sent to the model as the schema's description.)
class WorkoutBrief(BaseModel):
    model_config = ConfigDict(frozen=True)

    focus: list[Area] = Field(
        default_factory=list,
        description="Areas to train, main first; empty = balanced full body.",
    )
    minutes: int | None = Field(
        default=None,
        ge=MIN_MINUTES,
        le=MAX_MINUTES,
        description="Default 45 strength, 30 cardio, 20 HIIT/mobility.",
    )
    style: Style | None = Field(default=None, description="Default strength.")
    intensity: Intensity | None = Field(default=None, description="Omit for normal.")
    bodyweight_only: bool = False
    avoid_areas: list[Area] = Field(
        default_factory=list, description="Areas to leave out ('full body, no legs')."
    )
    avoid: list[str] = Field(
        default_factory=list,
        description="Exercise names or equipment to leave out this time (stored preferences apply anyway).",
    )
    title: str | None = Field(default=None, description="Default: from the brief.")
    date: dt.date | None = Field(default=None, description="A later day: recovery counted to it.")

    @property
    def is_open(self) -> bool:
        """No particular muscles asked for (a plain "workout" or "full body")."""
        return not self.focus or all(name in OPEN_FOCUS for name in self.focus)

    def target_weights(self) -> dict[str, float]:
        """Muscle → weight for the areas asked for (the larger weight when areas overlap)."""
        weights: dict[str, float] = {}
        for name in self.focus or ("full body",):
            for muscle, weight in FOCUS_MUSCLES[name].items():
                weights[muscle] = max(weights.get(muscle, 0.0), weight)
        for name in self.avoid_areas:
            for muscle, weight in FOCUS_MUSCLES[name].items():
                if weight >= 0.5:
                    weights.pop(muscle, None)
        return weights

    def explicit_muscles(self) -> frozenset[str]:
        """Muscles named as a main target (weight ≥ 0.5 in a non-open area)."""
        return frozenset(
            muscle
            for name in self.focus
            if name not in OPEN_FOCUS
            for muscle, weight in FOCUS_MUSCLES[name].items()
            if weight >= 0.5
        )


MAX_EXERCISES = 7
MIN_MAIN_EXERCISES = 3
QUAD_DOMINANT_SHARE = 0.3  # a quads share from which a lift loads the knee too much to call knee-friendly
# The label of an exclusion that varies a plan week's main lifts (`plan_drafting.draft_week_workouts`): its note
# says the lifts were varied, not that the user asked for something to be left out.
EARLIER_THIS_WEEK = "earlier this week"
OTHER_DAYS_THIS_WEEK = "on the week's other days"  # lifts a plan gives another day of the week
DEFAULT_MINUTES: dict[str, int] = {"strength": 45, "hiit": 20, "cardio": 30, "mobility": 20}

MUSCLE_WORDS: dict[str, str] = {
    "Quadriceps": "quads",
    "Abs": "core",
    "Trapezius": "traps",
    "Abductors": "outer hips",
    "Adductors": "inner thighs",
    "Lower Back": "lower back",
}

HEAVY_BARS = frozenset({"barbell", "trap_bar", "smith_machine"})
_EQUIPMENT_BONUS = {"barbell": 0.2, "dumbbells": 0.18, "kettlebell": 0.12, "cable_machine": 0.1}
_EQUIPMENT_BONUS |= {"trap_bar": 0.1, "ez_bar": 0.1, "resistance_bands": 0.03, "bench": 0.0}
_EQUIPMENT_BONUS |= {"pull_up_bar": 0.1}
_HIIT_EQUIPMENT = frozenset(
    split_words(
        "kettlebell dumbbells medicine_ball battle_ropes jump_rope plyo_box resistance_bands rowing_machine "
        "stationary_bike sled"
    )
)
_STRENGTH_CATEGORIES = frozenset({"strength", "powerlifting", "olympic", "strongman"})
_MOBILITY_CATEGORIES = frozenset({"mobility", "stretching"})


# --- Slots: a coach's template for each body area -------------------------------------------------------------------
@dataclass(frozen=True)
class Slot:
    """One place in a workout: which muscles lead, and optionally the kind of movement."""

    muscles: tuple[str, ...]
    mechanic: str | None = None  # "compound" | "isolation"
    force: str | None = None  # "push" | "pull"
    light: bool = False  # no heavy bars (core and small-muscle work)
    conditioning: bool = False  # HIIT: a cardio or plyometric move, any muscle
    hold: bool = False  # an isometric hold (plank-type)
    knee: bool = False  # knee-dominant work only (no hinge, whatever muscle the catalogue lists first)


def _slots(spec: str) -> tuple[Slot, ...]:
    """Parse 'Quadriceps:compound, Chest:compound:push, Abs::light, Glutes/Hamstrings' into slots (flags after the
    force: light, conditioning, hold, knee)."""
    slots = []
    for item in spec.split(","):
        parts = [part.strip() for part in item.strip().split(":")]
        muscles = tuple(part for part in parts[0].split("/") if part)
        mechanic = parts[1] if len(parts) > 1 and parts[1] in ("compound", "isolation") else None
        force = parts[2] if len(parts) > 2 and parts[2] in ("push", "pull") else None
        flags = set(parts[1:])
        slots.append(
            Slot(
                muscles,
                mechanic,
                force,
                "light" in flags,
                "conditioning" in flags,
                "hold" in flags,
                "knee" in flags,
            )
        )
    return tuple(slots)


AREA_SLOTS: dict[str, tuple[Slot, ...]] = {
    name: _slots(spec)
    for name, spec in {
        "full body": "Quadriceps:compound, Chest:compound:push, Back:compound:pull, "
        "Hamstrings/Glutes, Shoulders:compound:push, Abs::light",
        # A push, a pull, an overhead press, then arms before the second pull: four exercises stay balanced, and
        # the second pull is a vertical one (`pattern_limit`).
        "upper body": "Chest:compound:push, Back:compound:pull, Shoulders:compound:push, Biceps:isolation, "
        "Back:compound:pull, Triceps:isolation",
        # A squat, a hinge, then a single-leg lift (the second quad compound cannot be a second squat), a hip
        # thrust or bridge, a hamstring curl.
        "lower body": "Quadriceps:compound, Hamstrings/Glutes:compound, Quadriceps:compound, Glutes, "
        "Hamstrings:isolation, Calves, Quadriceps:isolation",
        "legs": "Quadriceps:compound, Hamstrings/Glutes:compound, Quadriceps:compound, Glutes, "
        "Hamstrings:isolation, Calves, Quadriceps:isolation",
        "push": "Chest:compound:push, Shoulders:compound:push, Chest:compound:push, Triceps:isolation, "
        "Shoulders:isolation:push, Chest:isolation",
        "pull": "Back:compound:pull, Back:compound:pull, Shoulders:isolation:pull, Biceps:isolation, "
        "Trapezius, Biceps:isolation",
        "chest": "Chest:compound, Chest:compound, Chest:isolation, Chest, Triceps:isolation, Chest",
        "back": "Back:compound:pull, Back:compound:pull, Back, Shoulders:isolation:pull, Biceps:isolation, "
        "Lower Back::light",
        "shoulders": "Shoulders:compound:push, Shoulders:isolation:push, Shoulders:isolation:pull, Trapezius, "
        "Shoulders",
        "arms": "Triceps:compound, Biceps:isolation, Triceps:isolation, Biceps:isolation, Triceps",
        "biceps": "Biceps, Biceps, Biceps, Forearms",
        "triceps": "Triceps:compound, Triceps:isolation, Triceps:isolation, Triceps",
        "glutes": "Glutes:compound, Hamstrings/Glutes:compound, Glutes:isolation, Abductors, Glutes",
        # Asked for quads: squats, lunges and knee extensions, not a hinge that lists the quads first.
        "quads": "Quadriceps:compound::knee, Quadriceps:compound::knee, Quadriceps:isolation::knee, "
        "Quadriceps::knee",
        "hamstrings": "Hamstrings:compound, Hamstrings:isolation, Hamstrings, Glutes",
        "calves": "Calves, Calves, Calves",
        "core": "Abs::light, Abs::hold:light, Lower Back::light, Abs::light, Abs::light",
        "lower back": "Lower Back::light, Abs::hold:light, Lower Back::light, Glutes::light",
        "traps": "Trapezius, Trapezius, Shoulders:isolation:pull",
        "neck": "Neck, Neck, Trapezius",
        "forearms": "Forearms, Forearms, Biceps:isolation",
        "adductors": "Adductors, Adductors, Glutes",
        "abductors": "Abductors, Abductors, Glutes",
    }.items()
}
# When recovery or "no legs" empties an open request's slots, these fill the workout instead.
FILL_SLOTS = _slots(
    "Chest:compound:push, Back:compound:pull, Shoulders:compound:push, Back:compound:pull, Abs::light, "
    "Biceps:isolation, Triceps:isolation, Shoulders:isolation:push"
)
# Conditioning moves (jumps, climbers, machine intervals) alternate with compound stations.
HIIT_SLOTS = _slots(
    "Abs::conditioning, Quadriceps/Glutes/Hamstrings:compound, Abs::conditioning, Chest/Shoulders/Triceps:compound, "
    "Abs::conditioning, Back/Biceps:compound"
)


# --- Movement patterns: what a coach balances within a session ------------------------------------------------------
# The catalogue's movement pattern (`datasources_app.catalog.derive_movement_pattern`, from names, muscles and
# mechanic) is fine-grained for injuries; a session is balanced on coarser families: a hip thrust is a hinge like an
# RDL, and a plank, a crunch and a twist are all core work. Patterns not listed stay as they are (curl, raise, fly).
_BALANCE_PATTERNS: dict[str, str] = {
    "hip_extension": "hinge",
    "horizontal_push": "horizontal push",
    "vertical_push": "vertical push",
    "horizontal_pull": "horizontal pull",
    "vertical_pull": "vertical pull",
    "core_flexion": "core",
    "core_stability": "core",
    "rotation": "core",
}
# Areas that span several patterns: in them a pattern appears once while another one fits (two rows make no upper
# body day). Naming a single area ("chest", "arms") asks for its patterns more than once.
BROAD_AREAS = frozenset({"full body", "upper body", "lower body", "push", "pull", "legs"})
# A lower-body day takes two hip-dominant lifts (an RDL and a hip thrust), never three.
_TWICE_IN: dict[str, frozenset[str]] = {"hinge": frozenset({"lower body", "legs"})}
CORE_MUSCLES = frozenset({"Abs", "Lower Back"})
STRENGTH_HOLDS = CORE_MUSCLES | {
    "Quadriceps"
}  # the muscles whose holds are strength work (a plank, a wall sit)
MOST_OF_A_PATTERN = 2  # how often any pattern appears when nothing else fits


@lru_cache(maxsize=4096)
def balance_pattern(candidate: Candidate) -> str:
    """The movement family a coach balances a session on: squat, lunge, hinge, horizontal/vertical push or pull,
    carry, core, or the catalogue's own pattern for single-joint work (elbow_flexion, shoulder_raise ...)."""
    pattern = candidate.movement_pattern or derive_movement_pattern(
        candidate.name,
        primary_muscles=(candidate.primary,),
        category=candidate.category,
        mechanic=candidate.mechanic,
        force=candidate.force,
    )
    if pattern is None:
        return ""
    if candidate.primary == "Abs" and pattern not in ("mobility", "jump", "locomotion", "cyclical"):
        return "core"  # a hanging knee raise or an ab bridge is core work, whatever the hips do
    return _BALANCE_PATTERNS.get(pattern, pattern)


def pattern_limit(brief: WorkoutBrief) -> Callable[[Candidate], int]:
    """How many times a candidate's pattern may appear while others still fit: once in a broad area's session,
    twice for a hinge on a lower-body day, and as often as needed for a single area's own muscles ("arms")."""
    narrow = frozenset(
        muscle
        for name in brief.focus
        if name not in BROAD_AREAS
        for muscle, weight in FOCUS_MUSCLES[name].items()
        if weight >= 0.5
    )

    def limit(candidate: Candidate) -> int:
        if candidate.primary in narrow:
            return MAX_EXERCISES
        areas = _TWICE_IN.get(balance_pattern(candidate), frozenset())
        return 2 if areas & set(brief.focus) else 1

    return limit


def repeats(candidate: Candidate, chosen: Iterable[Candidate]) -> int:
    """How many of `chosen` share the candidate's movement pattern (none for an unknown pattern)."""
    pattern = balance_pattern(candidate)
    return sum(1 for other in chosen if pattern and balance_pattern(other) == pattern)


# Main exercises by the session's minutes (up to): a long session has room for more lifts, not only more sets.
MAIN_EXERCISES_BY_MINUTES = ((20, 3), (30, 4), (60, 5), (75, 6), (MAX_MINUTES, 7))
LONG_SESSION_MINUTES = 60  # from here a session repeats a movement pattern rather than run short of lifts
CARDIO_CIRCUIT_MIN = 3  # the fewest bodyweight cardio moves that make a cardio circuit where no machine is
FINISHER_ROUNDS_MAX = (
    12  # the most rounds of one cardio move when nothing else fits (not 37 rounds of skaters)
)


def length_note(estimate: int, minutes: int) -> str:
    """The note for a draft that comes to `estimate` minutes, short of the `minutes` asked for."""
    return (
        f"it comes to about {estimate} min rather than the {minutes} you asked for: that's as much as I could "
        "build from the exercises that suit you here"
    )


def warmup_moves(minutes: int) -> int:
    """How many warm-up moves a session of `minutes` has room for: one in a quick session, two from 25 minutes,
    three from 45 (a coach prepares each of the session's main patterns)."""
    return 1 if minutes < 25 else 2 if minutes < 45 else 3


# --- Style, scoring and filling slots ------------------------------------------------------------------------------
def fits_style(candidate: Candidate, style: Style, targets: Mapping[str, float]) -> bool:
    """Whether the exercise belongs in a workout of this style."""
    if style == "strength":
        if candidate.category not in _STRENGTH_CATEGORIES:
            return False
        if candidate.exercise_type == "hold":
            # Core holds, and a quad hold (a wall sit) for a session asking for quads: a knee's isometric.
            return candidate.primary in STRENGTH_HOLDS and targets.get(candidate.primary, 0) > 0
        return candidate.exercise_type == "reps"
    if style == "hiit":
        if candidate.category in _MOBILITY_CATEGORIES or candidate.exercise_type == "hold":
            return False
        if any(slug not in _HIIT_EQUIPMENT for slug in candidate.equipment):
            return False
        if candidate.words & {"run", "jog", "walk"}:
            return False  # steady efforts, not circuit stations
        if candidate.category in ("plyometrics", "cardio"):
            return True
        return candidate.mechanic == "compound" and candidate.category in _STRENGTH_CATEGORIES
    if style == "cardio":
        return candidate.category == "cardio"
    return candidate.category in _MOBILITY_CATEGORIES


def similar(a: Candidate, b: Candidate) -> bool:
    """Two variations of one exercise ("Dumbbell Bench Press" / "Decline Dumbbell Bench Press")."""
    if a.keys & b.keys:
        return True
    common = len(a.name_words & b.name_words)
    return common / max(1, len(a.name_words), len(b.name_words)) >= 0.6


def in_slot(candidate: Candidate, slot: Slot, *, strict: bool) -> bool:
    if slot.conditioning:
        return candidate.conditioning
    if candidate.primary not in slot.muscles:
        return False
    if balance_pattern(candidate) == "core" and not CORE_MUSCLES & set(slot.muscles):
        return False  # flutter kicks work the glutes, but are no leg exercise
    if slot.knee and balance_pattern(candidate) == "hinge":
        return False  # a trap-bar deadlift lists the quads first, but a quads day wants squats and knee extensions
    if slot.light and HEAVY_BARS & set(candidate.equipment):
        return False
    if strict and slot.mechanic and candidate.mechanic and candidate.mechanic != slot.mechanic:
        return False
    if strict and slot.hold != (candidate.exercise_type == "hold"):
        return False
    return not (strict and slot.force and candidate.force and candidate.force != slot.force)


def score(
    candidate: Candidate,
    *,
    muscles: Iterable[str],
    targets: Mapping[str, float],
    facts: TrainingFacts,
    style: Style,
    chosen: Sequence[Candidate],
    debt: Mapping[str, float],
) -> float:
    """How good a pick `candidate` is for a place that should work `muscles`, next to `chosen`."""
    lead = set(muscles)
    # Any exercise led by the slot's muscle fits it fully: a single-muscle catalogue entry must not beat
    # a staple lift just because its share is not split with helpers.
    value = min(1.0, candidate.share_of(lead) / 0.7) + 0.3 * sum(
        targets.get(muscle, 0.0) * share for muscle, share in candidate.shares if muscle not in lead
    )
    bonus = 0.3 if candidate.slug in STAPLES else 0.0
    if style == "strength":
        bonus += max((_EQUIPMENT_BONUS.get(slug, 0.08) for slug in candidate.equipment), default=0.0)
        bonus += 0.1 if candidate.mechanic == "compound" else 0.0
        if candidate.bodyweight and LEVEL_RANK.get(facts.level, 0) >= 1 and facts.equipment - {BODYWEIGHT}:
            bonus -= 0.1  # trained lifters progress better with load when there is some
    elif style == "hiit":
        bonus += 0.2 if candidate.conditioning else 0.0
        bonus += 0.05 if candidate.bodyweight or "kettlebell" in candidate.equipment else 0.0
    level_gap = LEVEL_RANK.get(candidate.level, 0) - LEVEL_RANK.get(facts.level, 0)
    bonus -= 0.3 * max(0, level_gap)
    bonus -= 0.04 * max(0, len(candidate.name.split()) - 2)
    if candidate.slug in facts.history:
        bonus += 0.1
    bonus += min(0.5, 2.0 * max(0.0, debt.get(candidate.primary, 0.0)))
    penalty = 1.0
    for other in chosen:
        if similar(candidate, other):
            penalty *= 0.3
        elif other.primary == candidate.primary and candidate.pattern and other.pattern == candidate.pattern:
            penalty *= 0.75  # a second row after a row: prefer a different movement
        elif other.primary == candidate.primary and other.mechanic == candidate.mechanic:
            penalty *= 0.9
    return round(value * (1.0 + bonus) * penalty, 9)


def best(
    pool: Iterable[Candidate],
    *,
    muscles: Iterable[str],
    targets: Mapping[str, float],
    facts: TrainingFacts,
    style: Style,
    chosen: Sequence[Candidate],
    debt: Mapping[str, float] | None = None,
) -> Candidate | None:
    """The highest-scoring candidate not chosen yet; ties go to the slug."""
    lead = tuple(muscles)
    scored = [
        (
            -score(
                c, muscles=lead, targets=targets, facts=facts, style=style, chosen=chosen, debt=debt or {}
            ),
            c.slug,
            c,
        )
        for c in pool
        if c not in chosen
    ]
    scored = [item for item in scored if item[0] < 0]
    return min(scored, key=lambda item: (item[0], item[1]))[2] if scored else None


def fill_slots(
    slots: Sequence[Slot],
    pool: Sequence[Candidate],
    *,
    count: int,
    targets: Mapping[str, float],
    facts: TrainingFacts,
    style: Style,
    chosen: Sequence[Candidate] = (),
    debt: Mapping[str, float] | None = None,
    limit: Callable[[Candidate], int] | None = None,
) -> list[Candidate]:
    """One exercise per slot, in slot order, until `count`.

    A first pass takes only exact matches (muscle, mechanic, force) whose movement pattern is not in as often as
    `limit` allows (`pattern_limit`: a second row waits while a pulldown fits); slots left empty are filled in a
    second pass with looser matches, so a missing machine does not put a second squat before the calf raise, and
    still no pattern a third time unless `limit` allows it.
    """
    picked: list[tuple[int, Candidate]] = []
    for strict in (True, False):
        for index, slot in enumerate(slots):
            if len(picked) >= count:
                break
            if any(taken == index for taken, _ in picked):
                continue
            taken = [*chosen, *(c for _, c in picked)]
            options = [
                c
                for c in pool
                if in_slot(c, slot, strict=strict)
                and (limit is None or fits_pattern(c, taken, limit, strict))
            ]
            lead = slot.muscles if not slot.conditioning else tuple(targets)
            found = best(
                options,
                muscles=lead,
                targets=targets,
                facts=facts,
                style=style,
                chosen=[*chosen, *(c for _, c in picked)],
                debt=debt,
            )
            if found is None:
                continue
            if strict and any(similar(found, other) for other in [*chosen, *(c for _, c in picked)]):
                continue  # only a variation of something already in: let other slots go first
            picked.append((index, found))
    return [candidate for _, candidate in sorted(picked, key=lambda item: item[0])]


def fits_pattern(
    candidate: Candidate, chosen: Sequence[Candidate], limit: Callable[[Candidate], int], strict: bool
) -> bool:
    """Whether the candidate's movement pattern may join `chosen`: within `limit`, or (not `strict`: nothing
    else fits) within MOST_OF_A_PATTERN."""
    allowed = limit(candidate) if strict else max(limit(candidate), MOST_OF_A_PATTERN)
    return repeats(candidate, chosen) < allowed


def cover(
    pool: Sequence[Candidate],
    *,
    count: int,
    targets: Mapping[str, float],
    facts: TrainingFacts,
    style: Style,
    chosen: Sequence[Candidate] = (),
    limit: Callable[[Candidate], int] | None = None,
) -> list[Candidate]:
    """`count` exercises that together cover `targets`, heaviest muscles first (warm-ups, stretches); with
    `limit`, no movement pattern more often than `fill_slots`' second pass allows."""
    picked: list[Candidate] = []
    covered: dict[str, float] = {}
    for candidate in chosen:
        for muscle, share in candidate.shares:
            covered[muscle] = covered.get(muscle, 0.0) + share
    for _ in range(count):
        weights = {
            muscle: weight / (1.0 + 2.0 * covered.get(muscle, 0.0)) for muscle, weight in targets.items()
        }
        taken = [*chosen, *picked]
        options = [c for c in pool if limit is None or fits_pattern(c, taken, limit, False)]
        found = best(options, muscles=(), targets=weights, facts=facts, style=style, chosen=taken)
        if found is None:
            break
        picked.append(found)
        for muscle, share in found.shares:
            covered[muscle] = covered.get(muscle, 0.0) + share
    return picked


# --- Building exercises ---------------------------------------------------------------------------------------------
def shares_list(candidate: Candidate) -> list[dict[str, Any]]:
    """muscles_utilized from the catalogue shares, rounded to 2 decimals and summing to exactly 1.0."""
    total = sum(share for _, share in candidate.shares) or 1.0
    rounded = [
        (muscle, round(share / total, 2)) for muscle, share in candidate.shares if share / total >= 0.005
    ]
    if not rounded:
        return [{"muscle": candidate.primary, "share": 1.0}]
    drift = round(1.0 - sum(share for _, share in rounded), 2)
    rounded[0] = (rounded[0][0], round(rounded[0][1] + drift, 2))
    return [{"muscle": muscle, "share": share} for muscle, share in rounded]


def goals_for(
    candidate: Candidate, kind: str, *, reps: int | None = None, role: str = "main"
) -> list[dict[str, Any]]:
    """goals_addressed for one exercise as prescribed: `workout_coaching.goals_for` for a candidate."""
    return coaching_goals_for(
        kind,
        category=candidate.category,
        mechanic=candidate.mechanic,
        movement_pattern=candidate.movement_pattern,
        role="main" if role == "main" else "warmup",
        reps=reps,
    )


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= 200 else text[:197].rstrip() + "..."


def base_exercise(candidate: Candidate, *, kind: str, reasoning: str) -> dict[str, Any]:
    return {
        "exercise_name": candidate.name,
        "exercise_type": kind,
        "order": 0,
        "muscles_utilized": shares_list(candidate),
        "goals_addressed": [],
        "reasoning": _clip(reasoning),
        "equipment": list(candidate.equipment),
    }


def _reps_and_rest(
    candidate: Candidate, facts: TrainingFacts, *, rank: int, knee_work: bool
) -> tuple[int, int]:
    """`workout_coaching.reps_and_rest` for a candidate at `rank` in the workout."""
    return reps_and_rest(
        primary=candidate.primary,
        mechanic=candidate.mechanic,
        force=candidate.force,
        slug=candidate.slug,
        equipment=candidate.equipment,
        loaded=candidate.loaded_equipment is not None,
        lifter=facts.lifter,
        rank=rank,
        movement_pattern=candidate.movement_pattern,
        knee_work=knee_work,
    )


def strength_exercise(
    candidate: Candidate,
    facts: TrainingFacts,
    *,
    rank: int,
    light: bool,
    intensity: str | None,
    why: str,
) -> dict[str, Any]:
    """A reps (or core hold) exercise with sets, reps, rest and a load where the implement takes one."""
    level = LEVEL_RANK.get(facts.level, 0)
    easier = intensity == "easy" or light
    if candidate.exercise_type == "hold":
        hold = (30, 40, 45)[level] - (10 if easier else 0) + (15 if intensity == "hard" else 0)
        exercise = base_exercise(candidate, kind="hold", reasoning=why)
        exercise.update(sets=3, hold_sec=[hold] * 3, rest_sec=30)
        exercise["goals_addressed"] = goals_for(candidate, "hold")
        if candidate.unilateral:
            exercise["notes"] = "Hold each side."
        return exercise
    knee_work = is_knee_work(candidate.movement_pattern, {rule.key for rule in facts.injuries})
    reps, rest = _reps_and_rest(candidate, facts, rank=rank, knee_work=knee_work)
    sets = 3
    scale = 1.0
    if easier:
        sets, scale = 2, 0.85
    elif intensity == "hard":
        sets = 4
        if candidate.loaded_equipment is None:
            reps += 3
    load = choose_load(candidate, facts, reps=reps, scale=scale, knee_work=knee_work)
    cues = ["Reps are per side."] if candidate.unilateral else []
    for rule in facts.injuries:
        if rule.key == "knee" and knee_work:
            cues.append(KNEE_WORK_CUE)  # how deep and how slow, where the knee bends under load
        elif (
            # The knee's range cue where the lift bends the knee under load: not a hinge or a hip thrust.
            rule.key == "knee"
            and candidate.primary in LEG_MUSCLES
            and candidate.mechanic == "compound"
            and "knee" in candidate.loaded_joints
        ) or (rule.key == "lower back" and candidate.primary in ("Hamstrings", "Lower Back", "Back")):
            cues.append(rule.cue)
    exercise = base_exercise(candidate, kind="reps", reasoning=f"{why} {load.note}")
    exercise.update(sets=sets, reps=[reps] * sets, rest_sec=rest)
    if load.load is not None:
        exercise.update(load_each=[load.load] * sets, load_unit=facts.weight_unit, **candidate.implements)
    exercise["goals_addressed"] = goals_for(candidate, "reps", reps=reps)
    if cues:
        exercise["notes"] = " ".join(cues)
    return exercise


def prep_exercise(candidate: Candidate, *, role: str, why: str) -> dict[str, Any]:
    """A warm-up, cool-down or mobility exercise: one easy set of 10 reps or a 30-second hold."""
    if candidate.exercise_type == "hold":
        exercise = base_exercise(candidate, kind="hold", reasoning=why)
        exercise.update(sets=1, hold_sec=[30], rest_sec=0)
    else:
        exercise = base_exercise(candidate, kind="reps", reasoning=why)
        exercise.update(sets=1, reps=[10], rest_sec=0)
    exercise["goals_addressed"] = goals_for(candidate, exercise["exercise_type"], role=role)
    if candidate.unilateral:
        exercise["notes"] = "Each side."
    return exercise


def interval_exercise(candidate: Candidate, *, work_sec: int, rest_sec: int, why: str) -> dict[str, Any]:
    exercise = base_exercise(candidate, kind="intervals", reasoning=why)
    exercise.update(rounds=1, work_sec=work_sec, rest_sec=rest_sec)
    exercise["goals_addressed"] = goals_for(candidate, "intervals")
    return exercise


def duration_exercise(
    candidate: Candidate, facts: TrainingFacts, *, minutes: int, why: str
) -> dict[str, Any]:
    """A steady cardio block; runs get an easy target pace and the distance it covers."""
    exercise = base_exercise(candidate, kind="duration", reasoning=why)
    exercise["duration_min"] = minutes
    words = name_stems(candidate.name)
    if "run" in words or "jog" in words:
        per_km = 6.5 if "jog" in words else 6.0
        unit = facts.distance_unit if facts.distance_unit in ("km", "mi") else "km"
        pace = per_km * (1.609344 if unit == "mi" else 1.0)
        exercise.update(
            distance=max(0.5, round(minutes / pace * 2) / 2),
            distance_unit=unit,
            target_pace=f"{int(pace)}:{round((pace % 1) * 60):02d}/{unit}",
        )
    exercise["goals_addressed"] = goals_for(candidate, "duration")
    return exercise


def grouped(
    exercises: list[dict[str, Any]], *, group_id: str, group_type: str, name: str, **first: Any
) -> None:
    """Put `exercises` in one group: same id, positions 1..k, name (and rounds) on the first only."""
    for position, exercise in enumerate(exercises, start=1):
        group: dict[str, Any] = {"id": group_id, "type": group_type, "position": position}
        if position == 1:
            group["name"] = name
            group.update({key: value for key, value in first.items() if value is not None})
        exercise["group"] = group


# --- Words for the user ----------------------------------------------------------------------------------------------
def muscle_word(muscle: str) -> str:
    return MUSCLE_WORDS.get(muscle, muscle.lower())


def muscle_phrase(muscles: Iterable[str]) -> str:
    names = sorted(set(muscles))
    if set(LEG_MUSCLES) & set(names) and set(names) <= {*LEG_MUSCLES, "Adductors", "Abductors"}:
        return "legs"
    words = [muscle_word(name) for name in names]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def _broadest(labels: Iterable[str]) -> list[str]:
    """The labels a note names, sorted, without one another covers: "lunges" says "dumbbell lunges" too (a draft
    read "I left out bench presses, dumbbell lunges and lunges")."""
    words = {label: set(label.split()) for label in labels}
    return sorted(label for label in words if not any(other < words[label] for other in words.values()))


def _is_plural(muscles: Sequence[str]) -> bool:
    phrase = muscle_phrase(muscles)
    return phrase.endswith("s") or " and " in phrase


def _ago(hours: float) -> str:
    if hours < 12:
        return "earlier today"
    if hours < 36:
        return "yesterday"
    return f"{round(hours / 24)} days ago"


def _why_main(candidate: Candidate, rank: int, facts: TrainingFacts, debt_muscles: Sequence[str]) -> str:
    muscle = muscle_word(candidate.primary)
    if candidate.exercise_type == "hold" and candidate.primary in CORE_MUSCLES:
        text = f"Core stability for your {muscle}."
    elif candidate.exercise_type == "hold":
        text = f"An isometric hold for your {muscle}: hard work at a fixed knee angle."
    elif rank == 0 and candidate.mechanic == "compound":
        text = f"Main {muscle} lift, first while you're fresh."
    elif candidate.mechanic == "compound":
        text = f"Compound {muscle} work."
    elif candidate.bodyweight:
        text = f"Bodyweight {muscle} volume."
    else:
        text = f"Isolation work to finish your {muscle}."
    if candidate.primary in debt_muscles:
        text += f" Your {muscle} volume is behind your goal."
    if knee_friendly(candidate) and any(rule.key == "knee" for rule in facts.injuries):
        text += " Knee-friendly."
    return text


def knee_friendly(candidate: Candidate) -> bool:
    """Leg work that keeps load off the knee: hip-dominant (hinges, bridges, hip thrusts) or calves, never a
    quad-dominant lift, which the knee rules may allow (a trap-bar deadlift) but which works the knee hardest."""
    return (
        candidate.primary in LEG_MUSCLES
        and candidate.primary != "Quadriceps"
        and candidate.share_of(("Quadriceps",)) < QUAD_DOMINANT_SHARE
    )


def _label(brief: WorkoutBrief, skipped: Iterable[str]) -> str:
    names = [name for name in brief.focus if name != "full body"]
    if names:
        return " & ".join(names)
    if set(skipped) & set(LEG_MUSCLES) or set(brief.avoid_areas) & {"legs", "lower body"}:
        return "upper body & core"
    return "full-body"


def _title(style: str, label: str, minutes: int) -> str:
    pretty = label.replace("full-body", "full body").title().replace("&", "and")
    if style == "hiit":
        return f"{minutes}-Minute HIIT" + ("" if label == "full-body" else f": {pretty}")
    if style == "cardio":
        return f"{minutes}-Minute Cardio" + ("" if label == "full-body" else f" and {pretty}")
    if style == "mobility":
        return "Mobility & Stretch" if label == "full-body" else f"{pretty} Mobility"
    return f"Quick {pretty} Workout" if minutes <= 20 else f"{pretty} Workout"


# --- The composer ---------------------------------------------------------------------------------------------------
@dataclass
class ComposedWorkout:
    """A workout ready for generate_workout, and what the coach should say about it."""

    workout: dict[str, Any]
    title: str
    label: str
    style: str
    minutes: int
    estimated_min: int
    location_name: str | None
    main_names: list[str]
    notes: list[str]
    # generate_workout's check of `workout` at the user's current location, when it found nothing to drop:
    # the draft_workout tool saves the workout with it rather than checking it all again.
    checked: CheckedWorkout | None = None
    # A plan day's named lifts: the draft's exercise name → the name the prescription gave it (a stand-in's too).
    named_as: dict[str, str] = field(default_factory=dict)
    # The note of `notes` that says the knee work was kept moderate ('' when none did).
    knee_note: str = ""
    # A plan day's: how far the draft follows the prescription (`PlanDay.follow`'s answer), and the lifts it drew
    # that the fit to the day's minutes left out.
    followed: Any = None
    dropped: list[str] = field(default_factory=list)
    drawn: int = 0  # the lifts drawn for the draft, before the minutes had their say (a pool starved by exclusions draws few)
    # The knee rule's own note when `knee_note` says it too (one sentence for the knee), else ''.
    knee_rule_note: str = ""

    @property
    def exercises(self) -> list[dict[str, Any]]:
        exercises: list[dict[str, Any]] = self.workout["exercises"]
        return exercises

    @property
    def length_note(self) -> str:
        """The note that says the draft runs short of the minutes ('' when it does not)."""
        return (
            length_note(self.estimated_min, self.minutes)
            if self.estimated_min < self.minutes - FIT_UNDER
            else ""
        )


class Prescribed(Protocol):
    """What following a plan day's prescription tells the fit: the exercises whose rest the plan (or the knee
    rule) gives."""

    @property
    def rests_given(self) -> Collection[str]: ...


@dataclass(frozen=True)
class PlanDay:
    """What a plan day asks of a strength draft besides its named lifts: `follow` gives the drafted lifts the
    plan's sets, reps and rests (with the exercises' names the plan gave them) and says which rests are given;
    `after` is the work that ends the day before the cool-down (its finishers and cardio, budgeted before the
    lifts are chosen, and never cut), `finishers` the catalogue entries of its finishers: no lift repeats one, nor
    its kind of work (no bird dog in a day that ends with core work)."""

    follow: Callable[[list[dict[str, Any]], Mapping[str, str]], Prescribed]
    after: tuple[dict[str, Any], ...] = ()
    finishers: tuple[Candidate, ...] = ()

    def repeats_a_finisher(self, candidate: Candidate) -> bool:
        return any(
            set(candidate.keys) & set(finisher.keys)
            or balance_pattern(candidate) == balance_pattern(finisher)
            for finisher in self.finishers
        )


# What a cardio session's warm-up prepares and its cool-down stretches: the legs its moves and machines run on.
CARDIO_PREP_TARGETS: dict[str, float] = {"Quadriceps": 1.0, "Glutes": 0.8, "Hamstrings": 0.8, "Calves": 0.8}
# A circuit interval's work and rest (s) by the brief's intensity: HIIT and bodyweight cardio alike.
CIRCUIT_WORK_REST: dict[str, tuple[int, int]] = {"easy": (30, 30), "moderate": (40, 20), "hard": (45, 15)}


class Composer:
    """Builds one workout for one request; see the module docstring for the rules."""

    def __init__(
        self,
        brief: WorkoutBrief,
        facts: TrainingFacts,
        *,
        safe: bool = False,
        named: Sequence[str] = (),
        only_named: bool = False,
        plan: PlanDay | None = None,
    ) -> None:
        self.brief = brief
        self.facts = facts
        self.safe = safe
        self.plan = plan
        self.followed: Prescribed | None = None
        self.dropped: list[str] = []
        self.drawn = 0
        # Exercises a plan day names ('Bench Press', 'plank'): they lead the strength work, each kept when it fits
        # the user here, else a stand-in for the same muscle and movement; `only_named`: nothing else is added.
        self.named = tuple(named)
        self.only_named = only_named
        self.named_as: dict[str, str] = {}
        self.kept: set[str] = set()  # named exercises drafted as named (not a stand-in or the closest one)
        self.depth_cues: dict[
            str, str
        ] = {}  # a named lift's cue from the plan's name that keeps a knee short
        self.named_notes: list[str] = []
        self.style: Style = brief.style or "strength"
        self.minutes = brief.minutes or DEFAULT_MINUTES[self.style]
        recovering = facts.recovering()
        explicit = brief.explicit_muscles()
        self.targets = brief.target_weights()
        self.skipped = sorted(m for m in recovering if m not in explicit and m in self.targets)
        self.light = sorted(m for m in recovering if m in explicit)
        for muscle in self.skipped:
            self.targets.pop(muscle)
        if not self.targets:
            self.targets = {"Abs": 1.0, "Lower Back": 0.5, "Shoulders": 0.3}
        # Recovering muscles that a cardio session works only with steady, easy work (`_cardio`).
        self.easy_on: list[str] = []
        self.debt: dict[str, float] = {}
        self.debt_muscles: list[str] = []
        if brief.is_open and self.style == "strength":
            self.debt = {m: d for m, d in facts.debt.items() if d > 0.03 and m in self.targets}
            ranked = sorted(self.debt, key=lambda m: (-self.debt[m], m))
            self.debt_muscles = ranked[:2]
        equipment = frozenset({BODYWEIGHT}) if safe or brief.bodyweight_only else facts.equipment
        self.filters = Filters(
            equipment=equipment,
            exclusions=facts.exclusions,
            injuries=facts.injuries,
            avoid_muscles=frozenset(m for m in recovering if m not in explicit),
            max_level=max(1, LEVEL_RANK.get(facts.level, 0)),
        )
        # Why each catalogue exercise is ruled out (None: usable), by slug: the pool and the adaptation notes
        # both ask, and the preference check is most of a draft's work in Python.
        self.rejections = {c.slug: self.filters.rejection(c) for c in facts.catalog}
        self.pool = [c for c in facts.catalog if self.rejections[c.slug] is None]
        self.rejected: dict[str, set[str]] = {}
        self.main_candidates: list[Candidate] = []

    # -- adaptations worth telling the user --------------------------------------------------------------
    def _note_rejections(self) -> None:
        """Record which preferences and injuries removed exercises that would otherwise have fitted."""
        equipment_only = replace(
            self.filters, exclusions=Exclusions(), injuries=(), avoid_muscles=frozenset(), max_level=2
        )
        for candidate in self.facts.catalog:
            if equipment_only.rejection(candidate) is not None:
                continue
            if not fits_style(candidate, self.style, self.targets):
                continue
            if self.targets.get(candidate.primary, 0.0) < 0.5 and self.style in ("strength", "mobility"):
                continue
            reason = self.rejections[candidate.slug]
            if reason and ":" in reason:
                kind, label = reason.split(":", 1)
                rule = next((rule for rule in self.facts.injuries if rule.key == label), None)
                if kind == "injury" and rule is not None and rule.area and candidate.primary not in rule.area:
                    continue
                self.rejected.setdefault(kind, set()).add(label)

    def _adaptation_notes(self) -> list[str]:
        notes: list[str] = list(self.named_notes)
        recent = self.facts.recent_hours
        if self.skipped:
            they = _is_plural(self.skipped)
            notes.append(
                f"your {muscle_phrase(self.skipped)} {'are' if they else 'is'} still recovering from "
                f"{_ago(min(recent[m] for m in self.skipped))}, so I left {'them' if they else 'it'} out"
            )
        if self.easy_on:
            they = _is_plural(self.easy_on)
            notes.append(
                f"your {muscle_phrase(self.easy_on)} {'are' if they else 'is'} still recovering from "
                f"{_ago(min(recent[m] for m in self.easy_on))}, so the cardio is steady and easy on "
                f"{'them' if they else 'it'}"
            )
        if self.light:
            notes.append(
                f"you trained {muscle_phrase(self.light)} {_ago(min(recent[m] for m in self.light))}, "
                "so I kept the volume and loads lighter"
            )
        for rule in self.facts.injuries:
            if rule.key in self.rejected.get("injury", set()):
                cardio = self.style in ("cardio", "hiit") and rule.cardio_note
                notes.append(f"I {rule.cardio_note if cardio else rule.note}")
        labels = self.rejected.get("preference", set())
        asked = _broadest(labels - {EARLIER_THIS_WEEK, OTHER_DAYS_THIS_WEEK})
        if asked:
            # Not "as you asked": the brief's own avoid list is the model's, a saved preference an earlier message's.
            notes.append(f"I left out {joined(asked)}")
        if EARLIER_THIS_WEEK in labels:
            notes.append("I picked different main lifts from the ones earlier this week, for variety")
        elif OTHER_DAYS_THIS_WEEK in labels:
            notes.append("I picked different main lifts from the ones the plan gives the week's other days")
        if self.debt_muscles:
            they = _is_plural(self.debt_muscles)
            notes.append(
                f"I leaned toward {muscle_phrase(self.debt_muscles)}, which {'are' if they else 'is'} behind "
                "your goals"
            )
        if self.safe:
            notes.append("I kept it to bodyweight moves so it works with what you have")
        return notes

    # -- pieces ------------------------------------------------------------------------------------------------
    def _style_pool(self, style: Style) -> list[Candidate]:
        return [c for c in self.pool if fits_style(c, style, self.targets)]

    def _worked(self, chosen: Sequence[Candidate]) -> dict[str, float]:
        worked: dict[str, float] = {}
        for candidate in chosen:
            for muscle, share in candidate.shares:
                worked[muscle] = worked.get(muscle, 0.0) + share
        return worked

    def _prep_targets(self, main: Sequence[Candidate]) -> dict[str, float]:
        """The muscles a warm-up prepares and a cool-down stretches: those the main work loads; for cardio, the
        legs every move runs on (a shadow box's shoulders do not make a shoulder warm-up the session's)."""
        if self.style == "cardio":
            return dict(CARDIO_PREP_TARGETS)
        return self._worked(main)

    def _warmup(self, count: int, *, main: Sequence[Candidate]) -> list[dict[str, Any]]:
        pool = [
            c for c in self.pool if c.category == "mobility" and c.exercise_type == "reps" and c.bodyweight
        ]
        chosen = cover(
            pool, count=count, targets=self._prep_targets(main), facts=self.facts, style="mobility"
        )
        exercises = [
            prep_exercise(
                c, role="warmup", why=f"Warm-up: gets your {muscle_phrase([c.primary])} moving first."
            )
            for c in chosen
        ]
        if exercises:
            grouped(exercises, group_id="warmup", group_type="warmup", name="Warm-up")
        return exercises

    def _cooldown(self, count: int, *, main: Sequence[Candidate]) -> list[dict[str, Any]]:
        pool = [c for c in self.pool if c.category == "stretching" and c.exercise_type == "hold"]
        chosen = cover(
            pool, count=count, targets=self._prep_targets(main), facts=self.facts, style="mobility"
        )
        exercises = [
            prep_exercise(
                c, role="cooldown", why=f"Cool-down stretch for the {muscle_phrase([c.primary])} you worked."
            )
            for c in chosen
        ]
        if exercises:
            grouped(exercises, group_id="cooldown", group_type="cooldown", name="Cool-down")
        return exercises

    def _strength_slots(self) -> list[Slot]:
        areas = [name for name in self.brief.focus if name not in self.brief.avoid_areas] or ["full body"]
        lists = [AREA_SLOTS[name] for name in areas]
        merged: list[Slot] = []
        for index in range(max(len(slots) for slots in lists)):
            merged += [slots[index] for slots in lists if index < len(slots)]
        usable = [
            slot for slot in merged if slot.conditioning or any(m in self.targets for m in slot.muscles)
        ]
        if self.brief.is_open:
            usable += [slot for slot in FILL_SLOTS if any(m in self.targets for m in slot.muscles)]
            usable = list(dict.fromkeys(usable))  # one of each kind before the debt reordering below
            if self.debt:
                head, tail = usable[:2], usable[2:]
                tail.sort(key=lambda slot: -max((self.debt.get(m, 0.0) for m in slot.muscles), default=0.0))
                usable = head + tail
        return usable

    def _strength(self) -> tuple[list[dict[str, Any]], list[Candidate]]:
        # A plan day's finishers and cardio take their minutes first: the lifts are chosen for what is left (a
        # 30-minute day ending with 5 minutes of core work lifts for 25), not drawn for all 30 and dropped again.
        after = [copy.deepcopy(exercise) for exercise in self.plan.after] if self.plan else []
        lifting = max(MIN_MINUTES, self.minutes - estimate_duration_min(after)) if after else self.minutes
        main_count = next(count for most, count in MAIN_EXERCISES_BY_MINUTES if lifting <= most)
        pool = self._style_pool("strength")
        if self.plan is not None:
            pool = [c for c in pool if not self.plan.repeats_a_finisher(c)]
        named = self._named_picks(pool)
        chosen = list(named)
        limit = pattern_limit(self.brief)
        if not (self.only_named and named):
            chosen += fill_slots(
                self._strength_slots(),
                pool,
                count=max(0, main_count - len(named)),
                targets=self.targets,
                facts=self.facts,
                style="strength",
                chosen=named,
                debt=self.debt,
                limit=limit,
            )
        # Short of exercises: others for the muscles asked for, still no pattern a third time; a workout of
        # fewer than MIN_MAIN_EXERCISES (or a long one, which sets alone cannot fill) takes what fits.
        enough = main_count if lifting >= LONG_SESSION_MINUTES else MIN_MAIN_EXERCISES
        for most in (limit, None):
            if len(chosen) >= min(main_count, enough if most is None else main_count):
                break
            if self.only_named and named:
                break
            chosen += cover(
                [c for c in pool if self.targets.get(c.primary, 0.0) > 0 and self._fits_the_focus(c)],
                count=main_count - len(chosen),
                targets=self.targets,
                facts=self.facts,
                style="strength",
                chosen=chosen,
                limit=most,
            )
        rank = {c.slug: i for i, c in enumerate(chosen)}
        # Compound lifts first, then isolation work (a curl after the pulldown, whatever the slots' order), then
        # core work, holds last; slot order within each.
        chosen.sort(
            key=lambda c: (
                c.exercise_type == "hold",
                c.primary in CORE_MUSCLES,
                c.primary not in CORE_MUSCLES and mechanic_of(c.mechanic, c.movement_pattern) != "compound",
                rank[c.slug],
            )
        )
        self.drawn = len(chosen)
        main, chosen, rules = self._budget(chosen, after, pool)
        warmup, cooldown = self._prep(chosen)
        exercises = [*warmup, *main, *after, *cooldown]
        self.dropped = fit_to_minutes(exercises, minutes=self.minutes, rules=rules)
        kept = {id(exercise) for exercise in exercises}
        chosen = [c for c, e in zip(chosen, main, strict=True) if id(e) in kept]
        self.main_candidates = list(chosen)
        self.debt_muscles = [m for m in self.debt_muscles if any(c.primary == m for c in chosen)]
        return exercises, chosen

    def _prescribed(self, chosen: Sequence[Candidate]) -> list[dict[str, Any]]:
        """The main exercises for `chosen`, with a plan day's sets, reps and rests (`PlanDay.follow`)."""
        hard = set(self.light)
        main = [
            strength_exercise(
                c,
                self.facts,
                rank=i,
                light=c.works_hard(hard),
                intensity=self.brief.intensity,
                why=_why_main(c, i, self.facts, self.debt_muscles) + self._from_the_plan(c),
            )
            for i, c in enumerate(chosen)
        ]
        for exercise in main:
            cue = self.depth_cues.get(exercise["exercise_name"])
            if cue:
                exercise["notes"] = f"{cue} {exercise.get('notes') or ''}".strip()
        self.followed = self.plan.follow(main, self.named_as) if self.plan is not None else None
        return main

    def _prep(self, chosen: Sequence[Candidate]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """The warm-up and cool-down for the lifts `chosen`, as many moves as the session has room for."""
        warmup = self._warmup(warmup_moves(self.minutes), main=chosen)
        return warmup, self._cooldown(1, main=chosen) if self.minutes >= 40 else []

    def _fit_rules(self, chosen: Sequence[Candidate], after: Sequence[dict[str, Any]]) -> FitRules:
        """What the fit may change: a plan day's sets and given rests stay, its named lifts, finishers and cardio
        are never cut; a draft's sets and rests move within the Composer's bounds."""
        keep = {*self.named_as, *(str(e["exercise_name"]) for e in after)}
        if self.followed is not None:
            return plan_day_rules(
                min_main=MIN_MAIN_EXERCISES, keep=keep, rests_given=self.followed.rests_given
            )
        # A rest grows by at most REST_GROWTH_SEC over its prescription: 90 s between calf raises, not 150 s.
        return draft_rules(
            min_main=MIN_MAIN_EXERCISES,
            keep=keep,
            light=[c.name for c in chosen if c.works_hard(self.light)],
            compounds=[c.name for c in chosen if c.mechanic == "compound"] if self.minutes >= 60 else [],
            growth=REST_GROWTH_SEC * (2 if self.minutes >= LONG_SESSION_MINUTES else 1),
        )

    def _budget(
        self, drawn: Sequence[Candidate], after: Sequence[dict[str, Any]], pool: Sequence[Candidate]
    ) -> tuple[list[dict[str, Any]], list[Candidate], FitRules]:
        """The lifts that fit the minutes at their shortest (`shortest_minutes`: the fewest sets and shortest rests
        the fit may give, with the finishers, cardio, a warm-up move and the cool-down), prescribed, and the fit's
        rules for them. A lift that does not fit gives way, the last first, before a warm-up is built for it: to a
        lighter one of the same movement (a glute bridge for a dumbbell Romanian deadlift: a plan's accessory sets,
        not its main-lift sets) when that fits, else to nothing, while MIN_MAIN_EXERCISES main exercises stay."""
        chosen = list(drawn)
        tried: set[int] = set()
        while True:
            main = self._prescribed(chosen)
            rules = self._fit_rules(chosen, after)
            warmup, cooldown = self._prep(chosen)
            if len(main) + len(after) <= rules.min_main:
                break
            if shortest_minutes([*warmup[:1], *main, *after, *cooldown], rules) <= self.minutes + FIT_OVER:
                break
            droppable = [i for i, c in enumerate(chosen) if c.name not in rules.keep]
            if not droppable:
                break
            last = droppable[-1]
            lighter = self._lighter(chosen[last], chosen, pool) if last not in tried else None
            tried.add(last)
            if lighter is not None:
                chosen[last] = lighter
            else:
                chosen.pop(last)
                tried = {i for i in tried if i < last}
        return main, chosen, rules

    def _lighter(
        self, lift: Candidate, chosen: Sequence[Candidate], pool: Sequence[Candidate]
    ) -> Candidate | None:
        """A lighter pick for `lift`'s place: the same movement, no loaded implement (the plan's accessory sets)."""
        if lift.loaded_equipment is None:
            return None
        pattern = balance_pattern(lift)
        options = [
            c
            for c in pool
            if c.loaded_equipment is None
            and c.exercise_type == "reps"
            and balance_pattern(c) == pattern
            and self._fits_the_focus(c)
        ]
        return best(
            options,
            muscles=(lift.primary,),
            targets=self.targets,
            facts=self.facts,
            style="strength",
            chosen=chosen,
            debt=self.debt,
        )

    def _fits_the_focus(self, candidate: Candidate) -> bool:
        """Core work (flutter kicks list the glutes first) only when the brief's muscles include the core."""
        return balance_pattern(candidate) != "core" or bool(CORE_MUSCLES & set(self.targets))

    def _named_picks(self, pool: Sequence[Candidate]) -> list[Candidate]:
        """The catalogue exercises for the plan day's named ones, in order: each named exercise when it fits the
        user here (equipment, injuries, preferences, recovery, level), else the usual pick for its main muscle
        and movement; what was swapped or left out, and why, goes in the notes."""
        picks: list[Candidate] = []
        for name in self.named:
            wanted, closest = plan_name_match(name, self.facts)
            if wanted is None:
                # Not a failure to the user: what the day does instead.
                instead = (
                    "the day keeps the plan's other lifts"
                    if self.only_named
                    else "I filled its place with other work that suits you here"
                )
                self.named_notes.append(f"{name} isn't one of my exercises, so {instead}")
                continue
            if wanted in picks:
                continue
            reason = self.rejections[wanted.slug]
            if wanted.exercise_type not in ("reps", "hold"):
                self.named_notes.append(f"I left out {name}: it isn't strength work")
                continue
            if reason is None:
                picks.append(wanted)
                self.named_as[wanted.name] = name
                if not closest:
                    self.kept.add(wanted.name)
                if closest:
                    self.named_notes.append(
                        f"{name} isn't in my exercise list, so I used {wanted.name}, the closest I have"
                    )
                continue
            if self._kept_short(wanted, name, reason):
                picks.append(wanted)
                self.named_as[wanted.name] = name
                self.kept.add(wanted.name)
                continue
            stand_in = self._stand_in(wanted, pool, picks)
            why = rejection_note(wanted, reason)
            if stand_in is None:
                self.named_notes.append(f"I left out {name}: {why}")
                continue
            picks.append(stand_in)
            self.named_as[stand_in.name] = name
            self.named_notes.append(f"{name} swapped for {stand_in.name}: {why}")
        return picks

    def _kept_short(self, wanted: Candidate, name: str, reason: str) -> bool:
        """Whether the plan's name keeps a lift the knee rules out by its catalogue name short of a deep bend
        ("Dumbbell Step-Up (low box)", "Leg press in a pain-free range"): it is drafted with the plan's words as
        its cue (`depth_cues`), which generate_workout's check reads like the name."""
        cues = depth_cues(name)
        if not (reason.startswith("injury:") and cues):
            return False
        if self.filters.rejection(replace(wanted, name=f"{wanted.name} ({cues})")) is not None:
            return False
        self.depth_cues[wanted.name] = f"As your plan has it: {name}."
        return True

    def _stand_in(
        self, wanted: Candidate, pool: Sequence[Candidate], picks: Sequence[Candidate]
    ) -> Candidate | None:
        """The pick for `wanted`'s place: the same main muscle, the same movement pattern first, then the same
        mechanic, then any."""
        options = [c for c in pool if c.primary == wanted.primary and c.slug != wanted.slug]
        for narrowed in (
            [c for c in options if c.movement_pattern == wanted.movement_pattern],
            [c for c in options if c.mechanic == wanted.mechanic],
            options,
        ):
            found = best(
                narrowed,
                muscles=(wanted.primary,),
                targets=self.targets,
                facts=self.facts,
                style="strength",
                chosen=picks,
                debt=self.debt,
            )
            if found is not None:
                return found
        return None

    def _from_the_plan(self, candidate: Candidate) -> str:
        named = self.named_as.get(candidate.name)
        if named is None:
            return ""
        return " From your plan." if candidate.name in self.kept else f" In place of {named}."

    def _hiit(self) -> tuple[list[dict[str, Any]], list[Candidate]]:
        count = 4 if self.minutes <= 20 else 5
        pool = self._style_pool("hiit")
        slots = HIIT_SLOTS if self.brief.is_open else [*self._strength_slots(), *HIIT_SLOTS]
        chosen = fill_slots(slots, pool, count=count, targets=self.targets, facts=self.facts, style="hiit")
        work, rest = CIRCUIT_WORK_REST.get(self.brief.intensity or "", CIRCUIT_WORK_REST["moderate"])
        circuit = [
            interval_exercise(
                c,
                work_sec=work,
                rest_sec=rest,
                why=f"{'Explosive' if c.category == 'plyometrics' else 'Compound'} move that keeps your heart rate "
                f"up and works your {muscle_phrase([c.primary])}.",
            )
            for c in chosen
        ]
        warmup = self._warmup(warmup_moves(self.minutes - 10), main=chosen)
        cooldown = self._cooldown(1, main=chosen) if self.minutes >= 30 else []
        exercises = [*warmup, *circuit, *cooldown]
        if len(circuit) < 2:

            def set_rounds(rounds: int) -> None:
                for exercise in circuit:
                    exercise["rounds"] = rounds

            self._longest_that_fits(range(4, max(5, self.minutes * 2)), set_rounds, lambda: exercises)
            return exercises, chosen

        self._rounds_that_fit(circuit, exercises, name="HIIT circuit")
        return exercises, chosen

    def _rounds_that_fit(
        self, circuit: list[dict[str, Any]], exercises: list[dict[str, Any]], *, name: str
    ) -> None:
        """Group the circuit as one, with as many rounds (2-30, a minute's rest between them) as the minutes hold."""

        def circuit_rounds(rounds: int) -> None:
            grouped(
                circuit,
                group_id="circuit-1",
                group_type="circuit",
                name=name,
                rounds=rounds,
                rest_between_rounds_sec=60,
            )

        self._longest_that_fits(range(2, 31), circuit_rounds, lambda: exercises)

    def _longest_that_fits(
        self,
        values: Iterable[int],
        apply: Callable[[int], None],
        exercises: Callable[[], Sequence[dict[str, Any]]],
    ) -> None:
        """Apply the largest of the increasing `values` for which the estimate of `exercises()` stays within the
        minutes (`FIT_OVER`); the first when none does."""
        ordered = list(values)
        best = ordered[0]
        for value in ordered:
            apply(value)
            if estimate_duration_min(exercises()) > self.minutes + FIT_OVER:
                break
            best = value
        apply(best)

    def _cardio(self) -> tuple[list[dict[str, Any]], list[Candidate]]:
        """Steady cardio on the place's machines (the impact ones left out for a knee by its rule), then work for
        the areas the brief names (core after the cardio) or else a short finisher; a circuit of bodyweight
        cardio where there is no machine. Steady cardio is no hard work (`Candidate.works_hard`), so legs trained
        hard yesterday still get their easy ride; the finisher's intervals are hard work and leave them out."""
        steady = [c for c in self._style_pool("cardio") if c.exercise_type == "duration"]
        focus = self._focus_work()
        if not any(c.equipment for c in steady):
            circuit = self._cardio_circuit()
            if circuit is not None:
                if focus:
                    # The circuit's rounds fill the minutes: the areas asked for are said to be left out, and the
                    # title does not promise them.
                    areas = _label(self.brief, [])
                    self.named_notes.append(
                        f"with no cardio machine here the circuit fills the {self.minutes} minutes, so it has no "
                        f"{areas} work: ask me for a short {areas} session to follow it"
                    )
                return circuit
        # The focus work is this session's main lifting (what the knee note and the title read).
        self.main_candidates = list(focus)
        finishers = [c for c in self._style_pool("hiit") if c.category in ("cardio", "plyometrics")]
        targets = {"Quadriceps": 1.0, "Hamstrings": 0.6, "Glutes": 0.6, "Calves": 0.6, "Shoulders": 0.3}
        chosen = cover(
            steady, count=2 if self.minutes >= 30 else 1, targets=targets, facts=self.facts, style="cardio"
        )
        finisher = (
            []
            if focus
            else cover(finishers, count=1, targets=targets, facts=self.facts, style="hiit", chosen=chosen)
        )
        if not chosen and not finisher:
            return [], []
        if chosen:
            # The muscles recovering that the steady work uses: easy for them, which the note says (not "left out").
            self.easy_on, self.skipped = list(self.skipped), []
        intervals = [
            interval_exercise(
                c, work_sec=30, rest_sec=30, why="Short, hard finisher to lift your heart rate."
            )
            for c in finisher
        ]
        after = [
            strength_exercise(
                c,
                self.facts,
                rank=i,
                light=c.works_hard(self.light),
                intensity=self.brief.intensity,
                why=_why_main(c, i, self.facts, []) + " After the cardio.",
            )
            for i, c in enumerate(focus)
        ]
        warmup = self._warmup(1, main=[*chosen, *finisher, *focus])
        cooldown = self._cooldown(1, main=[*chosen, *finisher, *focus])
        blocks: list[dict[str, Any]] = []

        def steady_minutes(total: int) -> None:
            first = total if len(chosen) == 1 else max(5, round(total * 0.6))
            blocks[:] = [
                duration_exercise(
                    chosen[0],
                    self.facts,
                    minutes=first,
                    why="Steady aerobic block: the first 5 minutes easy to warm up, then a pace you could talk at.",
                )
            ]
            if len(chosen) > 1:
                blocks.append(
                    duration_exercise(
                        chosen[1],
                        self.facts,
                        minutes=max(5, total - first - 1),
                        why="A second machine spreads the work over more muscles.",
                    )
                )

        def finisher_rounds(rounds: int) -> None:
            for exercise in intervals:
                exercise["rounds"] = rounds

        def workout() -> list[dict[str, Any]]:
            return [*warmup, *blocks, *intervals, *after, *cooldown]

        if not chosen:
            # No machine and no circuit: one move for a few rounds at most, never for the whole session.
            self._longest_that_fits(range(6, FINISHER_ROUNDS_MAX + 1), finisher_rounds, workout)
            return workout(), [*finisher, *focus]
        # The steady work takes the minutes; a short session keeps a shorter finisher (or none).
        finisher_rounds(6 if self.minutes >= 20 else 4)
        if self.minutes < 15:
            intervals.clear()
        self._longest_that_fits(range(5, self.minutes + 1), steady_minutes, workout)
        return workout(), [*chosen, *(finisher if intervals else []), *focus]

    def _focus_work(self) -> list[Candidate]:
        """For a cardio brief that names areas ("cardio and some core"): strength work for them, as a strength
        workout would pick it (two moves, three from 50 minutes: the cardio keeps most of the time); none for an
        open brief."""
        if self.brief.is_open:
            return []
        return fill_slots(
            self._strength_slots(),
            [c for c in self._style_pool("strength") if self._fits_the_focus(c)],
            count=2 if self.minutes < 50 else 3,
            targets=self.targets,
            facts=self.facts,
            style="strength",
            limit=pattern_limit(self.brief),
        )

    def _cardio_circuit(self) -> tuple[list[dict[str, Any]], list[Candidate]] | None:
        """Cardio where there is no cardio machine (a home): a circuit of bodyweight cardio moves (jacks, high knees,
        skaters, mountain climbers ...) for rounds that fill the minutes, not a run out of the door or a plyometric
        push-up for 17 rounds. The impact moves while the user may do them, else the low-impact ones (marching, step
        jacks, shadow boxing); None when fewer than CARDIO_CIRCUIT_MIN fit."""
        moves = [
            c
            for c in self.pool
            if (
                c.category == "cardio" or (c.category == "plyometrics" and c.movement_pattern == "locomotion")
            )
            and not (c.exercise_type == "duration" and c.equipment)  # a machine's steady block
            and not c.words & {"run", "jog", "walk"}
        ]
        count = min(len(moves), 4 if self.minutes <= 20 else 5)
        if count < CARDIO_CIRCUIT_MIN:
            return None
        impact = [c for c in moves if c.movement_pattern != "cyclical"]
        targets = {"Quadriceps": 1.0, "Glutes": 0.8, "Hamstrings": 0.6, "Calves": 0.6, "Shoulders": 0.6}
        chosen = cover(
            impact if len(impact) >= count else moves,
            count=count,
            targets=targets,
            facts=self.facts,
            style="cardio",
        )
        work, rest = CIRCUIT_WORK_REST.get(self.brief.intensity or "", CIRCUIT_WORK_REST["moderate"])
        circuit = [
            interval_exercise(
                c,
                work_sec=work,
                rest_sec=rest,
                why=("Low-impact cardio" if c.movement_pattern == "cyclical" else "Cardio")
                + f" that keeps your heart rate up and works your {muscle_phrase([c.primary])}.",
            )
            for c in chosen
        ]
        warmup = self._warmup(warmup_moves(self.minutes), main=chosen)
        cooldown = self._cooldown(1, main=chosen)
        exercises = [*warmup, *circuit, *cooldown]

        self._rounds_that_fit(circuit, exercises, name="Cardio circuit")
        return exercises, chosen

    def _mobility(self) -> tuple[list[dict[str, Any]], list[Candidate]]:
        count = max(4, min(MAX_EXERCISES, self.minutes // 3))
        targets = dict(self.targets)
        if self.brief.is_open:
            targets = {m: 1.0 for m in targets} | {"Hamstrings": 1.5, "Lower Back": 1.2, "Glutes": 1.2}
        chosen = cover(
            self._style_pool("mobility"), count=count, targets=targets, facts=self.facts, style="mobility"
        )
        chosen.sort(key=lambda c: (c.exercise_type == "hold", c.slug))  # dynamic moves first, then holds
        exercises = []
        for c in chosen:
            kind = "Static stretch" if c.exercise_type == "hold" else "Dynamic mobility"
            exercise = prep_exercise(c, role="main", why=f"{kind} for your {muscle_phrase([c.primary])}.")
            resize(exercise, 2)
            exercise["rest_sec"] = 15
            exercises.append(exercise)
        # The same fit as a strength workout's (`fits_minutes`): a set more while it stays within the minutes,
        # a set less while over.
        for _ in range(40):
            estimate = estimate_duration_min(exercises) if exercises else self.minutes
            if estimate > self.minutes + FIT_OVER and any(e["sets"] > 1 for e in exercises):
                target = max(exercises, key=lambda e: e["sets"])
                resize(target, target["sets"] - 1)
                continue
            growable = [e for e in exercises if e["sets"] < 4]
            if estimate >= self.minutes - 1 or not growable:
                break
            target = min(growable, key=lambda e: e["sets"])
            resize(target, target["sets"] + 1)
            if estimate_duration_min(exercises) > self.minutes + FIT_OVER:
                resize(target, target["sets"] - 1)
                break
        return exercises, chosen

    def compose(self) -> ComposedWorkout | None:
        builders = {
            "strength": self._strength,
            "hiit": self._hiit,
            "cardio": self._cardio,
            "mobility": self._mobility,
        }
        self._note_rejections()
        exercises, chosen = builders[self.style]()
        if not chosen:
            return None
        for order, exercise in enumerate(exercises, start=1):
            exercise["order"] = order
        label = _label(self.brief, self.skipped)
        # A cardio session is titled for the areas it also works only when it does ("Cardio and Core").
        titled = "full-body" if self.style == "cardio" and not self.main_candidates else label
        title = self.brief.title or _title(self.style, titled, self.minutes)
        workout = {"title": title, "exercises": exercises}
        exercises, checked = _drop_invalid(workout, self.facts)
        main = [e for e in exercises if is_main(e)]
        if not main:
            return None
        estimated = estimate_duration_min(exercises)
        knee_note = self._knee_work_note(exercises)
        notes = self._adaptation_notes()
        knee_rule_note = ""
        if knee_note:
            # One sentence for the knee: what was left out, then how the knee work that stays is kept.
            knee_rule_note = next((note for note in notes if _is_knee_rule_note(note, self.facts)), "")
            if knee_rule_note:
                knee_note = _with_knee_work(knee_rule_note, knee_note)
                notes = [knee_note if note == knee_rule_note else note for note in notes]
            else:
                notes.append(knee_note)
        notes += _pad_notes(exercises, self.facts)
        if estimated < self.minutes - FIT_UNDER:
            notes.append(length_note(estimated, self.minutes))
        return ComposedWorkout(
            workout=workout,
            title=title,
            label=label,
            style=self.style,
            minutes=self.minutes,
            estimated_min=estimated,
            location_name=self.facts.location_name,
            main_names=[str(e["exercise_name"]) for e in main],
            notes=notes,
            checked=checked,
            named_as=dict(self.named_as),
            knee_note=knee_note,
            followed=self.followed,
            dropped=list(self.dropped),
            drawn=self.drawn,
            knee_rule_note=knee_rule_note,
        )

    def _knee_work_note(self, exercises: Sequence[Mapping[str, Any]]) -> str:
        """For the user, the knee work (by its movement, `is_knee_work`) the knee rule kept moderate ('' when
        none; its cue is on the exercises)."""
        injured = {rule.key for rule in self.facts.injuries}
        drafted = {str(exercise["exercise_name"]) for exercise in exercises if is_main(exercise)}
        knee_work = [
            c.name
            for c in self.main_candidates
            if c.name in drafted and c.exercise_type == "reps" and is_knee_work(c.movement_pattern, injured)
        ]
        if not knee_work:
            return ""
        return (
            f"I kept the knee work ({joined(knee_work)}) moderate for your knee: a lighter load for more reps, "
            "lowered slowly to the box or a pain-free depth"
        )


def _is_knee_rule_note(note: str, facts: TrainingFacts) -> bool:
    """Whether `note` is the knee rule's adaptation note ("I kept your knee out of deep bends ...")."""
    return any(
        rule.key == "knee" and note in (f"I {rule.note}", f"I {rule.cardio_note}") for rule in facts.injuries
    )


def _with_knee_work(rule_note: str, knee_note: str) -> str:
    """The knee rule's note and the knee work's as one sentence: "I kept your knee out of deep bends (no deep
    squats, lunges or jumping), and the knee work (Dumbbell Box Squat) moderate: a lighter load ..."."""
    rule_note = rule_note.removesuffix(" and kept the leg work knee-friendly")
    kept = knee_note.removeprefix("I kept ")
    return f"{rule_note}, and {kept}"


def _pad_notes(exercises: Sequence[Mapping[str, Any]], facts: TrainingFacts) -> list[str]:
    """For the user, the kneeling moves padded for a knee that complains (the cues are on the exercises)."""
    if not any(rule.key == "knee" for rule in facts.injuries):
        return []
    padded = [
        str(exercise["exercise_name"])
        for exercise in exercises
        if knee_pad_cue(str(exercise["exercise_name"]), None, {rule.key for rule in facts.injuries})
    ]
    if not padded:
        return []
    pad = KNEELING_PAD_CUE[:1].lower() + KNEELING_PAD_CUE[1:].rstrip(".")
    return [f"for {joined(padded)}, {pad}"]


def _drop_invalid(
    workout: dict[str, Any], facts: TrainingFacts
) -> tuple[list[dict[str, Any]], CheckedWorkout | None]:
    """Check with generate_workout's own validation; drop any exercise it objects to and renumber.

    A safety net only: the filters above apply the same rules, so normally nothing is dropped. Returns the
    exercises kept and, when the workout is at the user's current location and was kept whole, the check
    (`workout_tools.check_workout`) generate_workout would make of it.
    """
    if facts.user_id is None:
        return list(workout["exercises"]), None
    model = Workout.model_validate(workout)
    checked = (
        check_workout(model, user_id=facts.user_id, context=facts.context)
        if facts.location_id is None
        else None
    )
    if checked is not None and not checked.converted:
        problems = checked.check.problems  # the same exercises, checked as validate_workout checks them
    else:
        checked = None
        problems = validate_workout(model, user_id=facts.user_id, location_id=facts.location_id)
    bad = {int(match.group(1)) for problem in problems if (match := re.match(r"exercise (\d+) ", problem))}
    if bad:
        kept = [e for i, e in enumerate(workout["exercises"], start=1) if i not in bad]
        for order, exercise in enumerate(kept, start=1):
            exercise["order"] = order
        _repair_groups(kept)
        workout["exercises"] = kept
        checked = None  # generate_workout checks what is left
    return list(workout["exercises"]), checked


def _repair_groups(exercises: list[dict[str, Any]]) -> None:
    """Renumber group positions after a removal; dissolve circuits left with fewer than two exercises."""
    members: dict[str, list[dict[str, Any]]] = {}
    for exercise in exercises:
        group = exercise.get("group")
        if group:
            members.setdefault(str(group["id"]), []).append(exercise)
    for items in members.values():
        first = items[0]["group"]
        header = {key: first.get(key) for key in ("name", "rounds", "rest_between_rounds_sec")}
        if first.get("type") in ("circuit", "superset", "giant_set") and len(items) < 2:
            for exercise in items:
                exercise.pop("group", None)
            continue
        for position, exercise in enumerate(items, start=1):
            group = {"id": first["id"], "type": first["type"], "position": position}
            if position == 1:
                group.update({key: value for key, value in header.items() if value is not None})
            exercise["group"] = group


def compose_workout(
    brief: WorkoutBrief,
    facts: TrainingFacts,
    *,
    safe: bool = False,
    named: Sequence[str] = (),
    only_named: bool = False,
    plan: PlanDay | None = None,
) -> ComposedWorkout | None:
    """The workout for `brief`, or None when nothing in the catalogue fits (the coach then asks the user).
    `named`: exercises a plan day names, which lead a strength workout (`Composer`); `plan`: the rest of a plan
    day's prescription (`PlanDay`), followed and fitted to the minutes once.

    Falls back to a strength workout when the style finds nothing, then to bodyweight only.
    """

    def composer(brief: WorkoutBrief, *, safe: bool) -> Composer:
        return Composer(brief, facts, safe=safe, named=named, only_named=only_named, plan=plan)

    composed = composer(brief, safe=safe).compose()
    if composed is None and brief.style not in (None, "strength"):
        composed = composer(brief.model_copy(update={"style": None}), safe=safe).compose()
    if composed is None and not safe:
        composed = composer(brief, safe=True).compose()
    return composed


# A plan session's name → what to draft for it (areas, style). First match wins.
_SESSION_BRIEFS: tuple[tuple[str, tuple[Area, ...], Style], ...] = (
    ("full body circuit", ("full body",), "hiit"),
    ("conditioning", ("full body",), "hiit"),
    ("active recovery", ("full body",), "mobility"),
    ("recovery", ("full body",), "mobility"),
    ("upper", ("upper body",), "strength"),
    ("lower", ("lower body",), "strength"),
    ("push", ("push",), "strength"),
    ("pull", ("pull",), "strength"),
    ("legs", ("legs",), "strength"),
    ("easy", ("full body",), "cardio"),
    ("long", ("full body",), "cardio"),
    ("tempo", ("full body",), "cardio"),
    ("intervals", ("full body",), "hiit"),
)


def brief_for_session(session: str, minutes: int | None, *, deload: bool) -> WorkoutBrief:
    """What to draft for a plan session ("Upper A", "Full Body Circuit"): its areas and style, its minutes,
    easy in a deload week."""
    name = session.lower()
    focus, style = next(
        ((areas, kind) for key, areas, kind in _SESSION_BRIEFS if name.startswith(key)),
        (("full body",), "strength"),
    )
    return WorkoutBrief(
        focus=list(focus),
        minutes=max(MIN_MINUTES, min(MAX_MINUTES, minutes)) if minutes else None,
        style=style,
        intensity="easy" if deload else None,
    )


@dataclass(frozen=True)
class DraftedWorkout:
    """A drafted workout in the canonical `Workout` schema (title, exercises), not saved, and the adaptations
    made for the user (one short line each, to pass on)."""

    workout: dict[str, Any]
    notes: list[str]
    estimated_min: int
    location_name: str | None
    checked: CheckedWorkout | None = None  # `ComposedWorkout.checked`


def brief_facts(facts: TrainingFacts, brief: WorkoutBrief) -> TrainingFacts:
    """The facts with what the brief says to leave out this time (exercise names, equipment words)."""
    if not brief.avoid:
        return facts
    # Areas are left out by avoid_areas: "no legs" in the user's words rules out no exercise by its name.
    said = split_avoid(brief.avoid, not_exercises=NOT_EXERCISES)
    return facts.with_exclusions(exclusions_from_phrases(said.phrases, said.equipment, catalog=facts.catalog))


def draft_workout_for(
    *,
    user_id: uuid.UUID,
    brief: WorkoutBrief,
    location_id: uuid.UUID | None = None,
    on: date | None = None,
) -> DraftedWorkout | None:
    """Draft a workout for the user from `brief`, saving nothing: at their current location (or their location
    `location_id`), as things stand today (or on the day `on`, when recent training has had longer to
    recover). None when nothing in the catalogue fits."""
    facts = brief_facts(load_facts(user_id=user_id, location_id=location_id), brief)
    if on is not None:
        facts = as_of(facts, days_ahead=(on - selectors.local_today(user_id=user_id)).days)
    composed = compose_workout(brief, facts)
    if composed is None:
        return None
    return DraftedWorkout(
        workout=composed.workout,
        notes=list(composed.notes),
        estimated_min=composed.estimated_min,
        location_name=composed.location_name,
        checked=composed.checked,
    )


# --- The draft_workout tool ------------------------------------------------------------------------------------------
def draft_workout(args: WorkoutBrief, ctx: ToolContext) -> ToolOutcome:
    """Draft from the brief with the user's facts, then save it exactly as generate_workout does."""
    drafted = draft_workout_for(user_id=ctx.user_id, brief=args, on=args.date)
    if drafted is None:
        message = (
            "No workout could be drafted: nothing in the exercise catalogue fits this brief with the user's "
            "equipment, injuries and preferences. Ask the user what to change, or write the workout yourself "
            "with generate_workout."
        )
        return ToolOutcome(success=False, data={"error": message}, text=message)
    days_ahead = (args.date - selectors.local_today(user_id=ctx.user_id)).days if args.date else 0
    # As generate_workout, without a second check when the draft was checked already.
    checked = drafted.checked or check_workout(Workout.model_validate(drafted.workout), user_id=ctx.user_id)
    outcome = save_checked_workout(checked, ctx, days_ahead=days_ahead)
    if not outcome.success:
        return outcome
    lines = outcome.text.split("\n")
    at = next((i for i, line in enumerate(lines) if line.startswith("Use these exercise ids")), len(lines))
    adaptations = ["Adaptations made (tell the user):", *(f"  - {note}" for note in drafted.notes)]
    if not drafted.notes:
        adaptations = []
    return replace(
        outcome,
        text="\n".join([*lines[:at], *adaptations, *lines[at:]]),
        data={**outcome.data, "adaptations": drafted.notes},
        tell_user=_drafted_for_the_user(outcome, drafted),
    )


def _drafted_for_the_user(outcome: ToolOutcome, drafted: DraftedWorkout) -> str:
    """'Here's your Upper Body: about 45 min at Home, after a short warm-up — A, B and C.', the first three
    adaptations, and what the user can do next."""
    artifact = outcome.artifact or {}
    exercises = (artifact.get("payload") or {}).get("exercises") or []
    main = [str(exercise["exercise_name"]) for exercise in exercises if is_main(exercise)]
    where = f" at {drafted.location_name}" if drafted.location_name else ""
    warm = (
        ", after a short warm-up" if any(section_of(exercise) == "warmup" for exercise in exercises) else ""
    )
    minutes = f"{outcome.data['summary']['estimated_duration_min']:g}"
    notes = [
        note[:1].upper() + note[1:] + ("" if note.endswith((".", "!", "?")) else ".")
        for note in drafted.notes[:3]
    ]
    return " ".join(
        [
            f"Here's your {artifact.get('title')}: about {minutes} min{where}{warm} — {joined(main)}.",
            *notes,
            'Ask me to swap or adjust anything, and say "done" when you finish so I can log it.',
        ]
    )


DRAFT_WORKOUT = register(
    Tool(
        name="draft_workout",
        description=(
            "Build and save a complete workout from a short brief in one call: exercises, sets, reps, rests and "
            "loads fitted to the user's equipment here, injuries, preferences, recent training and units; far "
            "fewer output tokens than writing every exercise with generate_workout. The result says what to tell "
            "the user, adaptations included. Change it afterwards with swap/adjust/remove_exercise; use "
            "generate_workout when the user dictates exact exercises. Deliver the artifact_id with "
            "message_notify_user."
        ),
        input_model=WorkoutBrief,
        handler=draft_workout,
        category="workout",
        priority=101,
        observation="full",
        status_start="Drafting your workout...",
        status_done="Workout ready",
    )
)
