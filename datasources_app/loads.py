"""Loads held in each hand: which exercises move a pair of dumbbells.

A dumbbell exercise is prescribed and logged with the weight of ONE dumbbell (`load_each`: "3×10 @ 20kg
each hand"), the way people pick them off the rack. Most dumbbell exercises hold a pair, so what was lifted
is twice that: volume counts both hands, and every place that shows such a load says it is per hand. The
catalogue data (fixtures/exercises.json) says which exercises use dumbbells; `SINGLE_DUMBBELL` is the small
table of its dumbbell exercises that hold only one (a goblet squat, a one-arm row, a pullover).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from functools import cache
from pathlib import Path
from typing import Any

from datasources_app.catalog import exercise_name_key, slugify_exercise_name

CATALOG_PATH = Path(__file__).resolve().parent.parent / "fixtures" / "exercises.json"
DUMBBELLS = "dumbbells"
# Catalogue dumbbell exercises done with one dumbbell (both hands on it, or one arm at a time).
SINGLE_DUMBBELL = frozenset(
    {
        "goblet-squat",
        "one-arm-dumbbell-row",
        "concentration-curl",
        "dumbbell-pullover",
        "overhead-dumbbell-triceps-extension",
        "seated-triceps-press",
        "dumbbell-side-bend",
    }
)
_SINGLE_KEYS = frozenset(key.replace("-", "") for key in SINGLE_DUMBBELL)
# Names outside the catalogue: one dumbbell when they say so.
_ONE_IMPLEMENT_WORDS = ("goblet", "one arm", "one-arm", "single arm", "single-arm", "single dumbbell")


@cache
def _catalogue_pairs() -> frozenset[str]:
    """Slugs and name keys of the catalogue exercises that hold a dumbbell in each hand."""
    try:
        items = json.loads(CATALOG_PATH.read_text())
    except (OSError, ValueError):
        return frozenset()
    keys: set[str] = set()
    for item in items:
        if DUMBBELLS not in item.get("equipment", ()) or item.get("slug") in SINGLE_DUMBBELL:
            continue
        keys.add(str(item["slug"]))
        keys.update(exercise_name_key(name) for name in [item["name"], *item.get("aliases", ())])
    return frozenset(keys)


def holds_dumbbell_pair(*, name: str, slug: str = "", equipment: Iterable[str] | None = None) -> bool:
    """Whether `load_each` of this exercise is the weight in each hand of a dumbbell pair."""
    key = exercise_name_key(name)
    if slug in SINGLE_DUMBBELL or key in _SINGLE_KEYS:
        return False
    pairs = _catalogue_pairs()
    if slug in pairs or key in pairs:
        return True
    lowered = name.lower()
    if any(word in lowered for word in _ONE_IMPLEMENT_WORDS):
        return False
    if equipment is not None:
        return DUMBBELLS in set(equipment) and slugify_exercise_name(name) not in SINGLE_DUMBBELL
    return "dumbbell" in lowered


def hands_loaded(*, name: str, slug: str = "", equipment: Iterable[str] | None = None) -> int:
    """How many times `load_each` is lifted per rep: 2 for a dumbbell pair, else 1."""
    return 2 if holds_dumbbell_pair(name=name, slug=slug, equipment=equipment) else 1


# --- How many implements a prescription's load is for (docs/contracts.md §12.1 `implements`) ---------------
# Loads a person can hold one or two of; `implements: 2` (a pair) is meaningful only with these.
HANDHELD = frozenset({DUMBBELLS, "kettlebell"})
# Catalogue kettlebell exercises done with a bell in each hand (most hold one: a swing, a goblet squat, a get-up).
KETTLEBELL_PAIR = frozenset(
    {
        "alternating-kettlebell-floor-press",
        "alternating-kettlebell-press",
        "double-kettlebell-front-squat",
        "kettlebell-thruster",
        "two-arm-kettlebell-row",
    }
)
_KETTLEBELL_PAIR_KEYS = frozenset(exercise_name_key(slug.replace("-", " ")) for slug in KETTLEBELL_PAIR)


def default_implements(*, name: str, slug: str = "", equipment: Iterable[str] = ()) -> int:
    """The usual count for a catalogue exercise: 2 for a dumbbell pair or a kettlebell pair (`KETTLEBELL_PAIR`),
    else 1 (most kettlebell work holds one bell)."""
    if slug in KETTLEBELL_PAIR or exercise_name_key(name) in _KETTLEBELL_PAIR_KEYS:
        return 2
    return hands_loaded(name=name, slug=slug, equipment=list(equipment))


def implements_of(exercise: Mapping[str, Any]) -> int:
    """How many implements a workout exercise's `load_each` is for: its `implements` (2: a pair, so each
    one's weight, "each hand"), else 1; a workout stored before `implements` says a pair by `load_per_hand`."""
    value = exercise.get("implements")
    if value in (1, 2) and not isinstance(value, bool):
        return int(value)
    return 2 if exercise.get("load_per_hand") is True else 1


def per_hand(implements: int) -> str:
    """The words after a load: " each hand" for a pair, nothing for one implement (the only place they are)."""
    return " each hand" if implements == 2 else ""


# The smallest load step per unit: plates and dumbbells come in 0.5 kg / 1 lb steps or coarser.
LOAD_STEP = {"kg": 0.5, "lb": 1.0}


def round_load(value: float, unit: str) -> float:
    """`value` to the nearest load step of `unit` (kg 0.5, lb 1): a converted load as a gym has it."""
    step = LOAD_STEP.get(unit, 0.5)
    return round(round(value / step) * step, 2)
