"""Canonical vocabularies shared by the catalogue, the tools and the agent (docs/contracts.md §12 (workouts)).

Pure constants and pure functions only: no Django imports, so the catalogue build script and the data
migration can use this module without the app registry.
"""

from __future__ import annotations

import re
from typing import Final, Literal, get_args

# --- Muscles (docs/contracts.md §12.4 (muscles, goals, shares): exactly these 16 names, in this order) ------------------------------------
Muscle = Literal[
    "Chest",
    "Back",
    "Shoulders",
    "Biceps",
    "Triceps",
    "Abs",
    "Lower Back",
    "Quadriceps",
    "Hamstrings",
    "Glutes",
    "Calves",
    "Trapezius",
    "Abductors",
    "Adductors",
    "Forearms",
    "Neck",
]
MUSCLES: Final[tuple[Muscle, ...]] = get_args(Muscle)
_MUSCLES_BY_KEY: Final[dict[str, Muscle]] = {muscle.casefold(): muscle for muscle in MUSCLES}


def canonical_muscle(name: str) -> Muscle | None:
    """The canonical spelling of one of the 16 muscles ("lower  back" → "Lower Back"), None if unknown."""
    return _MUSCLES_BY_KEY.get(" ".join(name.split()).casefold())


# --- Exercise types and groups (docs/contracts.md §12 (workouts)) -----------------------------------------------------------
ExerciseType = Literal["reps", "hold", "duration", "intervals"]
EXERCISE_TYPES: Final[tuple[ExerciseType, ...]] = get_args(ExerciseType)

GroupType = Literal["circuit", "superset", "giant_set", "warmup", "cooldown", "sequence"]
GROUP_TYPES: Final[tuple[GroupType, ...]] = get_args(GroupType)

# Goal categories the agent uses for `goals_addressed`. Seed 000 leaves goals free-form strings; these are
# the suggested, canonical spellings (lower case) so distributions group cleanly.
GOALS: Final[tuple[str, ...]] = (
    "strength",
    "hypertrophy",
    "endurance",
    "power",
    "mobility",
    "cardio",
    "stability",
)

# Share lists (muscles, goals) must sum to 1.0 within this tolerance (seed 001's zod schema).
SHARE_SUM_TOLERANCE: Final[float] = 0.01

# --- Catalogue vocabularies ------------------------------------------------------------------------------
ExerciseCategory = Literal[
    "strength", "stretching", "plyometrics", "cardio", "powerlifting", "olympic", "strongman", "mobility"
]
EXERCISE_CATEGORIES: Final[tuple[ExerciseCategory, ...]] = get_args(ExerciseCategory)

Level = Literal["beginner", "intermediate", "advanced"]
LEVELS: Final[tuple[Level, ...]] = get_args(Level)

Mechanic = Literal["compound", "isolation"]
MECHANICS: Final[tuple[Mechanic, ...]] = get_args(Mechanic)

Force = Literal["push", "pull", "static"]
FORCES: Final[tuple[Force, ...]] = get_args(Force)

# --- Equipment -------------------------------------------------------------------------------------------
EquipmentCategory = Literal[
    "bodyweight", "free_weights", "benches_racks", "machines", "cardio", "accessories"
]
EQUIPMENT_CATEGORIES: Final[tuple[EquipmentCategory, ...]] = get_args(EquipmentCategory)

# The slug every user always has. Exercises that need nothing else list no equipment at all.
BODYWEIGHT: Final[str] = "bodyweight"

# (slug, display name, category). Every slug except `bodyweight` is required by at least one catalogue
# exercise; an exercise's equipment list means "all of these are needed".
EQUIPMENT: Final[tuple[tuple[str, str, EquipmentCategory], ...]] = (
    ("bodyweight", "Bodyweight", "bodyweight"),
    # free weights
    ("dumbbells", "Dumbbells", "free_weights"),
    ("barbell", "Barbell", "free_weights"),
    ("ez_bar", "EZ Curl Bar", "free_weights"),
    ("trap_bar", "Trap Bar", "free_weights"),
    ("kettlebell", "Kettlebell", "free_weights"),
    ("weight_plates", "Weight Plates", "free_weights"),
    ("medicine_ball", "Medicine Ball", "free_weights"),
    # benches, racks and stations
    ("bench", "Adjustable Bench", "benches_racks"),
    ("preacher_bench", "Preacher Bench", "benches_racks"),
    ("squat_rack", "Squat Rack", "benches_racks"),
    ("pull_up_bar", "Pull-up Bar", "benches_racks"),
    ("dip_station", "Dip Station", "benches_racks"),
    ("back_extension_bench", "Back Extension Bench", "benches_racks"),
    ("plyo_box", "Plyo Box", "benches_racks"),
    # machines
    ("cable_machine", "Cable Machine", "machines"),
    ("smith_machine", "Smith Machine", "machines"),
    ("leg_press_machine", "Leg Press Machine", "machines"),
    ("hack_squat_machine", "Hack Squat Machine", "machines"),
    ("leg_extension_machine", "Leg Extension Machine", "machines"),
    ("leg_curl_machine", "Leg Curl Machine", "machines"),
    ("calf_raise_machine", "Calf Raise Machine", "machines"),
    ("chest_press_machine", "Chest Press Machine", "machines"),
    ("pec_deck", "Pec Deck", "machines"),
    ("shoulder_press_machine", "Shoulder Press Machine", "machines"),
    ("seated_row_machine", "Seated Row Machine", "machines"),
    ("arm_curl_machine", "Arm Curl Machine", "machines"),
    ("triceps_machine", "Triceps Machine", "machines"),
    ("ab_crunch_machine", "Ab Crunch Machine", "machines"),
    ("hip_abduction_machine", "Hip Abduction Machine", "machines"),
    ("hip_adduction_machine", "Hip Adduction Machine", "machines"),
    ("glute_ham_developer", "Glute-Ham Developer", "machines"),
    # cardio
    ("treadmill", "Treadmill", "cardio"),
    ("stationary_bike", "Stationary Bike", "cardio"),
    ("rowing_machine", "Rowing Machine (Erg)", "cardio"),
    ("elliptical", "Elliptical Trainer", "cardio"),
    ("stair_climber", "Stair Climber", "cardio"),
    ("jump_rope", "Jump Rope", "cardio"),
    ("sled", "Sled", "cardio"),
    # accessories
    ("resistance_bands", "Resistance Bands", "accessories"),
    ("stability_ball", "Stability Ball", "accessories"),
    ("foam_roller", "Foam Roller", "accessories"),
    ("ab_wheel", "Ab Wheel", "accessories"),
    ("gymnastic_rings", "Gymnastic Rings", "accessories"),
    ("suspension_trainer", "Suspension Trainer", "accessories"),
    ("battle_ropes", "Battle Ropes", "accessories"),
)
EQUIPMENT_SLUGS: Final[tuple[str, ...]] = tuple(slug for slug, _, _ in EQUIPMENT)

# --- Names ------------------------------------------------------------------------------------------------
# Word-level spellings that mean the same exercise ("flyes" / "flies" / "fly", "db" / "dumbbell").
_WORD_SYNONYMS: Final[dict[str, str]] = {
    "flye": "fly",
    "db": "dumbbell",
    "bb": "barbell",
    "kb": "kettlebell",
    "calve": "calf",
    "tricep": "triceps",
    "bicep": "biceps",
}
_WORD_RE: Final = re.compile(r"[a-z0-9]+")


def _singular(word: str) -> str:
    if len(word) <= 2 or word.endswith(("ss", "us", "is")):
        return word
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("sses", "ches", "shes", "xes")):
        return word[:-2]
    if word.endswith("s"):
        return word[:-1]
    return word


def _canonical_word(word: str) -> str:
    word = _singular(word)
    return _WORD_SYNONYMS.get(word, word)


def exercise_name_key(name: str) -> str:
    """A lookup key that ignores case, spacing, hyphens, punctuation and plurals.

    "Push-Ups", "push ups" and "Pushup" share the key "pushup"; "Dumbbell Flyes" and "dumbbell fly"
    share "dumbbellfly".
    """
    words = _WORD_RE.findall(name.lower().replace("&", " and "))
    return "".join(_canonical_word(word) for word in words)


def slugify_exercise_name(name: str) -> str:
    """The catalogue slug for a display name: lower case, words joined by hyphens."""
    return "-".join(_WORD_RE.findall(name.lower()))
