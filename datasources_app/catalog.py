"""Canonical vocabularies shared by the catalogue, the tools and the agent (docs/contracts.md §12 (workouts)).

Pure constants and pure functions only: no Django imports, so the catalogue build script and the data
migration can use this module without the app registry.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass
from functools import lru_cache
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
# Groups done as rounds: the group's `rounds` is how many times the whole group is done, each member once per
# round (its `sets`, or an intervals member's `rounds`, is 1), with `rest_between_rounds_sec` after a round.
ROUND_GROUP_TYPES: Final[tuple[GroupType, ...]] = ("circuit", "superset", "giant_set")

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


# The two below are pure and called for every catalogue exercise against every excluded name of every draft:
# remembering recent answers keeps their regex and word rules out of that loop.
@lru_cache(maxsize=8192)
def exercise_name_key(name: str) -> str:
    """A lookup key that ignores case, spacing, hyphens, punctuation and plurals.

    "Push-Ups", "push ups" and "Pushup" share the key "pushup"; "Dumbbell Flyes" and "dumbbell fly"
    share "dumbbellfly".
    """
    words = _WORD_RE.findall(name.lower().replace("&", " and "))
    return "".join(_canonical_word(word) for word in words)


@lru_cache(maxsize=8192)
def name_words(name: str) -> tuple[str, ...]:
    """The canonical words of a name ("Wide-Grip Push-Ups" → ("wide", "grip", "push", "up"))."""
    return tuple(_canonical_word(word) for word in _WORD_RE.findall(name.lower().replace("&", " and ")))


def name_covers(excluded: str, name: str) -> bool:
    """Whether a name a user excluded covers `name`: the same exercise, or a variation whose name holds it
    ("Push-Ups" covers "Wide-Grip Push-Up"; "Squat" covers "Goblet Squat"; "Bench Press" does not cover "Bench Dip")."""
    wanted, words = name_words(excluded), name_words(name)
    if not wanted:
        return False
    if exercise_name_key(excluded) == exercise_name_key(name):
        return True
    size = len(wanted)
    return any(words[start : start + size] == wanted for start in range(len(words) - size + 1))


def slugify_exercise_name(name: str) -> str:
    """The catalogue slug for a display name: lower case, words joined by hyphens."""
    return "-".join(_WORD_RE.findall(name.lower()))


# --- Movement patterns, loaded joints and body parts (issue 17 item 1) ----------------------------------------------
# What a coach checks against an injury: the movement an exercise is (knee-dominant squat, hip hinge, overhead
# press, ...) and the joints it puts under load. Stored on every catalogue exercise (derived by
# scripts/build_exercise_catalog.py with `derive_movement_pattern` / `derive_loaded_joints`), and derived the
# same way for an exercise the catalogue does not know, from its name and the muscles the model gave.
MovementPattern = Literal[
    "squat",  # knee-dominant, both legs: squats, leg press, hack squat, wall sit
    "lunge",  # knee-dominant, one leg: lunges, split squats, step-ups
    "knee_extension",
    "knee_flexion",
    "hinge",  # hip-hinge: deadlifts, good mornings, swings, back extensions
    "hip_extension",  # bridges, hip thrusts, kickbacks
    "hip_abduction",
    "hip_adduction",
    "calf_raise",
    "jump",  # lower-body plyometrics and impact
    "olympic",  # cleans, snatches, thrusters, get-ups: everything at once
    "horizontal_push",
    "vertical_push",  # overhead pressing
    "dip",
    "chest_fly",
    "horizontal_pull",
    "vertical_pull",
    "upright_row",
    "shoulder_raise",  # lateral / front / rear raises, external rotation
    "elbow_flexion",
    "elbow_extension",
    "wrist",
    "shrug",
    "neck",
    "core_flexion",
    "core_stability",
    "rotation",
    "carry",
    "locomotion",  # running, skipping, jumping jacks: impact
    "cyclical",  # cycling, rowing, elliptical, stairs, walking: low impact
    "mobility",  # stretches, foam rolling, joint circles: nothing loaded
]
MOVEMENT_PATTERNS: Final[tuple[MovementPattern, ...]] = get_args(MovementPattern)

Joint = Literal["knee", "hip", "spine", "shoulder", "elbow", "wrist", "ankle", "neck"]
JOINTS: Final[tuple[Joint, ...]] = get_args(Joint)

# The joints each pattern loads. `derive_loaded_joints` adds the spine when the lower back works.
PATTERN_JOINTS: Final[dict[str, tuple[Joint, ...]]] = {
    "squat": ("knee", "hip", "ankle"),
    "lunge": ("knee", "hip", "ankle"),
    "knee_extension": ("knee",),
    "knee_flexion": ("knee",),
    "hinge": ("hip", "spine"),
    "hip_extension": ("hip",),
    "hip_abduction": ("hip",),
    "hip_adduction": ("hip",),
    "calf_raise": ("ankle",),
    "jump": ("knee", "hip", "ankle"),
    "olympic": ("knee", "hip", "spine", "shoulder", "wrist"),
    "horizontal_push": ("shoulder", "elbow", "wrist"),
    "vertical_push": ("shoulder", "elbow", "wrist"),
    "dip": ("shoulder", "elbow", "wrist"),
    "chest_fly": ("shoulder",),
    "horizontal_pull": ("shoulder", "elbow"),
    "vertical_pull": ("shoulder", "elbow"),
    "upright_row": ("shoulder", "elbow"),
    "shoulder_raise": ("shoulder",),
    "elbow_flexion": ("elbow", "wrist"),
    "elbow_extension": ("elbow",),
    "wrist": ("wrist",),
    "shrug": ("neck",),
    "neck": ("neck",),
    "core_flexion": ("spine",),
    "core_stability": (),
    "rotation": ("spine",),
    "carry": ("wrist", "spine"),
    "locomotion": ("knee", "ankle"),
    "cyclical": ("knee", "hip"),
    "mobility": (),
}

# Name rules, first match wins (lower-case names). Muscles decide when no rule matches.
_PATTERN_RULES: Final[tuple[tuple[str, MovementPattern], ...]] = (
    (r"stretch|foam roll|circles|cat-cow|child's pose|inchworm|groiner|world's greatest", "mobility"),
    (
        r"bike|bicycling|cycling|elliptical|stair|rowing machine|rowing, stationary|treadmill walk|outdoor walk|brisk walk|^walk\b",
        "cyclical",
    ),
    # Cardio that keeps a foot on the floor (marching, step jacks, shadow boxing): low impact, not running. Named
    # moves only: "march" or "low impact" in another name ("Marching Lunge", "Low-Impact Jump Squat") is that move.
    (
        r"^(?:low[- ]impact |marching )(?:high knees|skaters?|jacks)$|^march(?:ing)? (?:in place|on the spot)$|"
        r"^step jacks?$|^shadow ?box(?:ing)?$",
        "cyclical",
    ),
    (
        r"treadmill|\brun\b|jog|sprint|"
        r"jump rope|rope jumping|high knees|jumping jacks|star jump|sled|mountain climber",
        "locomotion",
    ),
    (r"clean|snatch|jerk|thruster|turkish get-up|get-up", "olympic"),
    (r"jump|bound|burpee|\bhops?\b|skater|tuck jump", "jump"),
    (r"calf|calves|heel raise", "calf_raise"),
    (r"leg extension", "knee_extension"),
    (r"leg curl|hamstring curl|glute ham|nordic", "knee_flexion"),
    (r"lunge|split squat|step-?up|pistol|bulgarian", "lunge"),
    (r"squat|leg press|wall sit|sissy", "squat"),
    (
        r"deadlift|good morning|swing|hyperextension|back extension|pull-through|pull through|rack pull|superman",
        "hinge",
    ),
    (
        r"hip thrust|bridge|hip raise|kickback \(glute|glute kickback|hip extension|donkey kick",
        "hip_extension",
    ),
    (r"abduction|abductor|clamshell|monster walk|side-lying leg raise|lateral band walk", "hip_abduction"),
    (r"adduction|adductor|copenhagen", "hip_adduction"),
    (r"upright row|high pull\b", "upright_row"),
    (r"shrug", "shrug"),
    (r"neck", "neck"),
    (r"wrist|finger curl|plate pinch|wrist roller", "wrist"),
    (r"\bdips?\b|dip machine", "dip"),
    (
        r"triceps|tricep|skull|pushdown|kickback|close-grip bench|jm press|tate press|french press",
        "elbow_extension",
    ),
    (r"curl", "elbow_flexion"),
    (
        r"overhead press|military|shoulder press|arnold|push press|handstand|pike push|landmine press|"
        r"kettlebell press|lever shoulder",
        "vertical_push",
    ),
    (r"pull-?ups?\b|chin-?ups?\b|pulldown|pull-down|muscle up|dead hang|pullover", "vertical_pull"),
    (
        r"face pull|rear delt|reverse fly|reverse pec|pull apart|external rotation|lateral raise|front raise|"
        r"scaption|rear lateral|front plate raise",
        "shoulder_raise",
    ),
    (r"\brows?\b|rowing", "horizontal_pull"),
    (r"\bfly\b|flye|crossover|cross over|pec deck|butterfly", "chest_fly"),
    (r"bench press|chest press|push-?ups?\b|press-up|floor press|svend|chest pass", "horizontal_push"),
    (r"carry|farmer|walk\b|yoke", "carry"),
    (r"plank|hollow|bird dog|dead bug|side bridge|vacuum|pallof|l-sit|hold", "core_stability"),
    (r"twist|wood ?chop|windmill|rotation|side bend|oblique", "rotation"),
    (
        r"crunch|sit-up|situp|leg raise|knee raise|v-up|toes to bar|rollout|roller|knee tuck|flutter|jackknife|slam",
        "core_flexion",
    ),
)
_COMPILED_PATTERN_RULES: Final = tuple((re.compile(rule), pattern) for rule, pattern in _PATTERN_RULES)

# By main muscle when the name says nothing: (isolation/static pattern, compound pattern).
_MUSCLE_PATTERNS: Final[dict[str, tuple[MovementPattern, MovementPattern]]] = {
    "Chest": ("chest_fly", "horizontal_push"),
    "Back": ("horizontal_pull", "horizontal_pull"),
    "Shoulders": ("shoulder_raise", "vertical_push"),
    "Biceps": ("elbow_flexion", "elbow_flexion"),
    "Triceps": ("elbow_extension", "elbow_extension"),
    "Abs": ("core_flexion", "core_flexion"),
    "Lower Back": ("hinge", "hinge"),
    "Quadriceps": ("knee_extension", "squat"),
    "Hamstrings": ("knee_flexion", "hinge"),
    "Glutes": ("hip_extension", "hip_extension"),
    "Calves": ("calf_raise", "calf_raise"),
    "Trapezius": ("shrug", "shrug"),
    "Abductors": ("hip_abduction", "hip_abduction"),
    "Adductors": ("hip_adduction", "hip_adduction"),
    "Forearms": ("wrist", "wrist"),
    "Neck": ("neck", "neck"),
}


def derive_movement_pattern(
    name: str,
    *,
    primary_muscles: list[str] | tuple[str, ...] = (),
    category: str = "",
    mechanic: str = "",
    force: str = "",
) -> MovementPattern | None:
    """The movement an exercise is: the first name rule that matches, else its main muscle (None if unknown)."""
    if category in ("stretching", "mobility"):
        return "mobility"
    lowered = name.lower()
    for rule, pattern in _COMPILED_PATTERN_RULES:
        if rule.search(lowered):
            return pattern
    if category == "cardio":
        return "locomotion"
    muscle = next((canonical_muscle(item) for item in primary_muscles if canonical_muscle(item)), None)
    if muscle is None:
        return None
    if muscle in ("Quadriceps", "Hamstrings", "Glutes") and category == "plyometrics":
        return "jump"
    if muscle == "Abs" and force == "static":
        return "core_stability"
    isolation, compound = _MUSCLE_PATTERNS[muscle]
    return compound if mechanic == "compound" else isolation


def derive_loaded_joints(
    pattern: str | None, *, muscles: list[str] | tuple[str, ...] = (), name: str = ""
) -> list[Joint]:
    """The joints an exercise loads: its pattern's, plus the spine when the lower back works (bent-over rows,
    back squats) and the knee for lunging/squatting names the pattern missed. Canonical order."""
    joints: set[str] = set(PATTERN_JOINTS.get(pattern or "", ()))
    if pattern not in ("mobility", None) and "Lower Back" in {canonical_muscle(m) for m in muscles}:
        joints.add("spine")
    lowered = name.lower()
    if pattern not in ("mobility", None) and re.search(
        r"bent[- ]over|barbell row|t-bar row|back squat|barbell squat|good morning", lowered
    ):
        joints.add("spine")
    return [joint for joint in JOINTS if joint in joints]


# A deep knee bend (full knee flexion): what hurts a knee that complains in deep lunges or deep squats. Squats and
# lunges bend it deeply unless their name says they stop short (a box squat, a wall sit, a low-box step-up: a
# step-up onto a bench is a deep bend); these names
# bend it deeply whatever their pattern (a child's pose is a stretch, and still a full knee bend; a squat held at
# the bottom is one, a Spanish squat or a wall squat held at parallel is not).
_DEEP_KNEE_NAMES: Final = re.compile(
    r"child'?s pose|\bhero'?s? pose|virasana|\bpistol|\bsissy|\batg\b|ass[\s-]to[\s-]grass|full[\s-]depth|"
    r"\bdeep\b(?=.*\b(?:squat|lunge|split|pistol|knee|bend))|"
    r"full squat|cossack|(?<!spanish )(?<!wall )squat (?:hold|stretch)|malasana|quad(?:riceps)? stretch|world'?s greatest|groiner|"
    r"lunge stretch|\bheel[\s-]*(?:to|sits?)[\s-]*(?:butt|glute)"
)
# Depth cues a coach writes to keep a knee short of a deep bend ("leg press in a pain-free range", "box squat to
# parallel", "keep the leg press above 90°", "no deeper than parallel"): a name holding one stops short
# (`deep_knee_bend`), and so do the lifts of a sentence of free text holding one (`workout_validation`).
_NO_DEEPER_THAN: Final = (
    r"\b(?:no|not|never)\s+(?:any\s+)?(?:deeper|lower|further|below|past)(?:\s+than)?\s+"
    r"(?:(?:about|around|roughly|approximately|~)\s*)?(?:parallel\b|90)"
)
_PARALLEL_CUES: Final = (
    r"\b(?:to|at|above)\s+(?:or (?:just )?above\s+)?parallel\b(?![\s-]*bars?\b)|"
    r"\b(?:above|to|at|short of)\s+90\s*(?:°|º|degrees?\b|deg\b)"
)
# The cues that keep the knee at parallel or 90°: short of a deep bend in a squat, an ordinary lunge's depth.
PARALLEL_CUES: Final = re.compile(_PARALLEL_CUES)
DEPTH_CUES: Final = (
    r"pain[\s-]free|\bpartial(?:[\s-](?:depth|range))?|short of (?:full )?depth|comfortable (?:depth|range)|"
    r"high box|low[\s-](?:box|step)|as deep as (?:the |a )?(?:box|bench)|"
    r"\b(?:mid|low)[\s-]?shin(?:[\s-](?:height|high|level))?\s+(?:box|step)|shin[\s-](?:height|high) (?:box|step)|"
    r"(?:no|without) (?:the )?bottom (?:of the )?range|\btop half|\b(?:half|short) range|"
    rf"{_PARALLEL_CUES}|{_NO_DEEPER_THAN}"
)
_SHALLOW_KNEE_NAMES: Final = re.compile(
    r"box squat|wall (?:sit|squat)|spanish squat|half squat|quarter squat|pin squat|sit[\s-]to[\s-]stand|terminal knee ext|"
    r"(?:squat|sit) (?:only |just )?to a (?:high )?(?:box|bench)|step[\s-]?ups? (?:to|onto) a low|"
    + DEPTH_CUES
)
# Knee work that even a mildly bothered knee is spared: kneeling, the body's weight held at the knee (Nordic curls).
_ON_THE_KNEES: Final = re.compile(r"\bnordic|\bnatural leg curl|\bglute[\s-]*ham raise|\bkneeling leg curl")
# Positions that rest the body's weight on the knees (kneeling, on all fours): pressure on the kneecap. The name says
# so ("Kneeling Hip Flexor Stretch", "Quadruped Hip Circles") or the exercise is done that way whatever its name says
# (a bird dog, a cat-cow, a glute kickback or a donkey kick on all fours, an ab wheel rolled out from the knees; a
# cable kickback is done standing).
_KNEELING: Final = re.compile(
    r"kneel|quadruped|all[\s-]fours|hands[\s-]and[\s-]knees|\bbird[\s-]?dogs?\b|\bcat[\s-]cows?\b|"
    r"donkey[\s-]kicks?|fire[\s-]hydrants?|(?<!cable )(?<!standing )glute[\s-]kick[\s-]?backs?|"
    r"\bknee[\s-]push[\s-]?ups?|\bab[\s-](?:wheel|roller)|child'?s pose|(?<!standing )cable crunch"
)
_NOT_KNEELING: Final = re.compile(r"\b(?:no|not|without|never)\s+(?:on\s+the\s+knees?|kneeling)\b")


def kneels(name: str) -> bool:
    """Whether an exercise called `name` is done kneeling or on all fours, its weight on the kneecaps ("Kneeling
    Hip Flexor Stretch", "Bird Dog", "Glute Kickback"; not "Cable Glute Kickback", "Hip Flexor Stretch (no
    kneeling)")."""
    return _KNEELING.search(_NOT_KNEELING.sub(" ", name.lower())) is not None


_DEEP_KNEE_PATTERNS: Final = frozenset({"squat", "lunge", "jump", "olympic"})
# What a name says it keeps the knee out of ("Leg Press (no deep knee bend)"): it stops short, and names no deep bend.
NO_DEEP_BEND: Final = re.compile(
    r"\b(?:no|not|without|avoid(?:ing|s)?|out of|short of)\s+(?:a |the |any )?(?:deep|full)(?:[\s-]+knee)?"
    r"[\s-]+(?:bends?|flexion|depth|range)\b"
)
# The depth cues that say "no" and leave nothing out ("Leg press (no deep knee bend)", "no deeper than parallel").
DEPTH_LIMITS: Final = re.compile(
    rf"{NO_DEEP_BEND.pattern}|{_NO_DEEPER_THAN}|(?:no|without) (?:the )?bottom (?:of the )?range",
    re.IGNORECASE,
)


_NO_DEEPER: Final = re.compile(_NO_DEEPER_THAN)
_HIGH_BOX: Final = re.compile(r"(?:to |onto |on )?(?:a |the )?high box")
# Cues that take the knee to parallel or past it, never short of it ("to parallel or below", "at least to 90°").
DEEPER_THAN_PARALLEL: Final = re.compile(
    r"\bbelow parallel|\b(?:parallel|90\s*(?:°|º|degrees?\b)?)\s*(?:or|and)\s+(?:below|deeper|lower|beyond|past)\b|"
    r"\bat least (?:to )?(?:parallel|90)"
)


def goes_past_parallel(text: str) -> bool:
    """Whether `text` takes the knee to parallel or past it ("to parallel or below"; "not below parallel" does not)."""
    return DEEPER_THAN_PARALLEL.search(_NO_DEEPER.sub(" ", text.lower())) is not None


@lru_cache(maxsize=4096)
def deep_knee_bend(pattern: str | None, name: str) -> bool:
    """Whether an exercise takes the knee into a deep bend: a squat, lunge, jump or clean unless its name says it
    stops short ("Barbell Box Squat", "Wall Sit", "Low-Box Step-Up"), and any name that says so ("Child's Pose",
    "Pistol Squat", "Deep Lunge")."""
    lowered = name.lower()
    kept_out = NO_DEEP_BEND.search(lowered) is not None
    lowered = NO_DEEP_BEND.sub(" ", lowered)  # "Hip Thrust (no deep knee bend)" says the opposite
    if _DEEP_KNEE_NAMES.search(lowered) or goes_past_parallel(lowered):
        return True
    if pattern == "lunge":
        # A lunge to parallel ("no deeper than parallel", "no deep knee bend") is an ordinary lunge, the movement
        # that bothers such a knee: only a cue that keeps it short of that (partial, pain-free, a low step) does. A
        # high box keeps a squat short and makes a step-up deeper.
        lowered = _HIGH_BOX.sub(" ", PARALLEL_CUES.sub(" ", _NO_DEEPER.sub(" ", lowered)))
        kept_out = False
    return pattern in _DEEP_KNEE_PATTERNS and not (kept_out or _SHALLOW_KNEE_NAMES.search(lowered))


@dataclass(frozen=True)
class BodyPart:
    """One injured body part: the words that name it, the joint it is, and the patterns a coach avoids."""

    key: str
    words: re.Pattern[str]
    joint: Joint | None  # every exercise loading this joint is avoided
    patterns: frozenset[str]  # and every exercise of these patterns
    advice: str  # what to do instead, for the model
    deep_knee: bool = False  # and every deep knee bend (`deep_knee_bend`), a stretch or a pose included
    kept: re.Pattern[str] | None = None  # names kept whatever their pattern (a mild knee's sled push)
    kneeling: bool = False  # and every exercise done kneeling or on all fours (`kneels`)
    overhead: bool = False  # and every exercise its name says is done with the arms overhead (`_OVERHEAD`)


# Body part → contraindicated movement patterns (and loaded joint). Data, not exercise names: a new catalogue
# exercise is covered by its pattern and joints.
BODY_PARTS: Final[tuple[BodyPart, ...]] = (
    BodyPart(
        "knee",
        re.compile(r"\bknees?\b|\bacl\b|\bmcl\b|menisc|patell"),
        None,  # cycling and hip work load it lightly; the patterns below are what hurts
        frozenset({"squat", "lunge", "jump", "knee_extension", "knee_flexion", "olympic", "locomotion"}),
        "no squats, lunges, step-ups, jumps, running, leg extensions or leg curls, no deep knee bends in "
        "stretches (child's pose, quad stretch), and nothing kneeling or on all fours (kneeling stretches, bird "
        "dogs, kickbacks on all fours): stretch and work the core standing or lying (a standing hip flexor "
        "stretch, a dead bug); pick hip-dominant work that keeps the knee still (hip thrust, glute bridge, hip "
        "abduction, back extension) or upper body",
        deep_knee=True,
        kneeling=True,
    ),
    BodyPart(
        "lower back",
        re.compile(r"lower[\s-]*back|lumbar|\bdiscs?\b|sciatica|back pain|back injury|herniat|\bspine\b"),
        "spine",
        frozenset({"hinge", "olympic", "carry"}),
        "no deadlifts, good mornings, swings, cleans or loaded carries; pick supported or machine work that "
        "keeps the spine neutral and unloaded (chest-supported rows, machines, planks)",
    ),
    BodyPart(
        "shoulder",
        re.compile(r"\bshoulders?\b|rotator|\bcuff\b|impingement|labrum"),
        None,
        frozenset({"vertical_push", "dip", "upright_row", "olympic", "vertical_pull"}),
        "nothing overhead (no overhead presses, overhead triceps extensions, pull-ups or pulldowns), no dips or "
        "upright rows; keep pressing and pulling below shoulder height",
        # An overhead triceps extension is elbow work by its pattern, but the arm is overhead all the same.
        overhead=True,
    ),
    BodyPart(
        "elbow",
        re.compile(r"\belbows?\b|tennis elbow|golfer"),
        None,
        frozenset({"elbow_extension", "dip"}),
        "avoid heavy elbow extension (skull crushers, dips, triceps extensions)",
    ),
    BodyPart(
        "wrist",
        re.compile(r"\bwrists?\b|carpal"),
        None,
        frozenset({"wrist", "olympic"}),
        "keep load off the wrists (no wrist curls or cleans)",
    ),
    BodyPart(
        "ankle",
        re.compile(r"\bankles?\b|achilles"),
        "ankle",
        frozenset({"jump", "locomotion", "calf_raise", "lunge"}),
        "no running, jumping or calf work; seated or lying work is fine",
    ),
    BodyPart(
        "hip",
        re.compile(r"\bhips?\b|groin"),
        "hip",
        frozenset({"squat", "lunge", "hinge", "jump", "olympic"}),
        "no squats, lunges, hinges (deadlifts, RDLs, swings) or jumps; upper-body and core work that keeps "
        "the hip still",
    ),
    BodyPart(
        "neck",
        re.compile(r"\bneck\b|cervical"),
        "neck",
        frozenset({"shrug", "neck", "upright_row"}),
        "no shrugs, upright rows or neck work",
    ),
)


# A part as a user with only mild discomfort in a named movement has it ("mild discomfort in the left knee during
# deep lunges"): a coach keeps what does not hurt. Only where the table can say what that is; a part missing here
# stays as strict as BODY_PARTS has it.
MILD_BODY_PARTS: Final[dict[str, BodyPart]] = {
    "knee": BodyPart(
        "knee",
        BODY_PARTS[0].words,
        None,
        frozenset({"jump", "olympic", "locomotion"}),
        "the user has only mild discomfort in deep knee bends, so keep the knee out of deep flexion under load "
        "(no full-depth squats, lunges, split squats, pistols, jumps, running, or stretches like child's pose) and "
        "keep knee-friendly quad and hamstring work in a pain-free range: box squats to a high box, wall sits, "
        "step-ups to a low box, leg extensions and leg curls; a leg press, squat or step-up passes with its depth in "
        "its name or notes ('Leg Press (pain-free range)', 'Dumbbell Step-Up (low box)'), for 8-15 controlled reps "
        "with a moderate load, never a heavy low-rep set; kneeling is fine on a pad (the tools add the cue)",
        deep_knee=True,
        # A sled pushed or dragged keeps the knee out of a deep bend and off impact: not the running it is filed with.
        kept=re.compile(r"\bsled|\bprowler"),
    ),
}
_MILD_WORDS: Final = re.compile(
    r"\bmild|\bslight|\bminor\b|\ba (?:little|bit)\b|twinge|niggl|\btight|\bstiff|\bcranky|\bgrumpy|\bachy\b"
)
_SERIOUS_WORDS: Final = re.compile(
    r"surg|operat|reconstruct|\btorn\b|\btears?\b|ruptur|fractur|broke|dislocat|sprain|\bacl\b|\bmcl\b|\bpcl\b|"
    r"menisc|sharp|severe|swell|swollen|gives? (?:way|out)|unstable|instabilit|injur|rehab|recover|arthritis|"
    r"tendin|tendon|bursitis|chronic|can'?t|cannot|unable|locks?\b|locking|clicks?\b|\bpops?\b|post[\s-]?op|"
    r"replace|replacement|moderate(?:ly)?\s+(?:[a-z]+\s+){0,2}(?:pain|painful|discomfort|injur|sprain|strain|tear|swelling|ache)|"
    r"significant|a lot\b|worse|worsening|\b(?:not|isn'?t|more than) (?:just |only )?mild"
)
_NOTHING_ELSE: Final = re.compile(r"\bno (?:other )?(?:injur\w*|issues?|problems?|pain)\b")
_DURING: Final = re.compile(r"\b(?:during|when|while|in|on|with|after|doing|from)\b(?P<movement>.+)")


def says_more_than_mild(text: str) -> bool:
    """Whether `text` says an injury is more than mild ("sharp", "swells", "surgery", "torn", "gives way")."""
    return _SERIOUS_WORDS.search(text.lower()) is not None


def mild_in(part: BodyPart, text: str) -> bool | None:
    """How `text` (an injury as the user said it) has `part`: True when every sentence naming it says only mild
    discomfort during a named movement and nothing serious ("mild discomfort in the left knee during deep lunges"),
    False when one says more ("knee pain", "after ACL surgery", "torn meniscus"), None when none names it."""
    said: list[bool] = []
    for clause in re.split(r"[.;!?\n]+", _TRAINING_PHRASES.sub(" ", text.lower())):
        if not part.words.search(clause):
            continue
        clause = _NOTHING_ELSE.sub(" ", clause)
        during = _DURING.search(clause)
        movement = during is not None and derive_movement_pattern(during.group("movement")) is not None
        said.append(bool(_MILD_WORDS.search(clause)) and movement and not _SERIOUS_WORDS.search(clause))
    return all(said) if said else None


# Training words that name a body part without saying it hurts: "train legs hip-dominant (hip thrusts)" is advice
# for a knee, not a hip injury; "no shoulder press" is an exclusion, not a shoulder injury.
_TRAINING_PHRASES: Final = re.compile(
    r"\bhips?[\s-]*(?:thrusts?|dominant|hinges?|hinging|abductions?|adductions?|extensions?|bridges?|"
    r"circles?|flexor stretch(?:es)?|drive)\b"
    r"|\bshoulders?[\s-]*(?:press(?:es)?|taps?|width|height|level|blades?|dislocates?|shrugs?)\b"
    r"|\bknees?[\s-]*(?:raises?|tucks?|friendly|safe|push-?ups?|level|dominant|extensions?|bending)\b"
    r"|\bkeeps? the (?:hip|knee|shoulder)s? still\b"
    r"|\bhips?\s+and\s+(?:hamstrings|glutes)\b|\b(?:load|train|hit)\s+(?:the\s+)?hips?\b"
)


_OVERHEAD: Final = re.compile(r"\bover[\s-]?head\b")


def injured_body_parts(text: str) -> tuple[BodyPart, ...]:
    """The body parts `text` (injuries, limitations, what the user said) names, in table order; words of
    training ("hip thrust", "hip-dominant", "shoulder press") do not name an injured part."""
    lowered = _TRAINING_PHRASES.sub(" ", text.lower())
    return tuple(part for part in BODY_PARTS if part.words.search(lowered))


def contraindication(
    part: BodyPart, *, pattern: str | None, joints: Collection[str], name: str = ""
) -> str | None:
    """Why an exercise of `pattern` loading `joints` (and called `name`) is wrong for an injured `part`, or None
    when it is fine."""
    if (
        pattern is not None
        and pattern in part.patterns
        and not (part.kept and part.kept.search(name.lower()))
    ):
        return f"its movement pattern ({pattern.replace('_', ' ')}) is contraindicated for the {part.key}"
    if part.deep_knee and deep_knee_bend(pattern, name):
        return "it takes the knee into a deep bend (full knee flexion), which is what bothers this knee"
    if part.key == "knee" and _ON_THE_KNEES.search(name.lower()):
        return "it loads the knee to its limit with the body's weight kneeling on it"
    if part.kneeling and kneels(name):
        return "it is done kneeling or on all fours, with the body's weight pressing on the kneecap"
    if part.overhead and _OVERHEAD.search(name.lower()):
        return "it is done with the arms overhead, which is what bothers this shoulder"
    if part.joint is not None and part.joint in joints:
        return f"it loads the {part.joint}"
    return None


# Implements an exercise's name says it uses ("Seated Dumbbell Overhead Press", "Banded Glute Bridge"): what an
# exercise the catalogue does not know needs, when whoever wrote it gave no equipment list.
_NAMED_EQUIPMENT: Final = (
    (re.compile(r"\b(?:dumbbells?|db)\b"), "dumbbells"),
    (re.compile(r"\b(?:kettlebells?|kb)\b"), "kettlebell"),
    (re.compile(r"\bez[\s-]*(?:curl[\s-]*)?bar\b"), "ez_bar"),
    (re.compile(r"\b(?:trap|hex)[\s-]*bar\b"), "trap_bar"),
    (re.compile(r"\bbarbells?\b"), "barbell"),
    (re.compile(r"\b(?:bands?|banded|resistance band)\b"), "resistance_bands"),
    (re.compile(r"\bcables?\b"), "cable_machine"),
    (re.compile(r"\bsmith\b"), "smith_machine"),
    (re.compile(r"\b(?:medicine|med)[\s-]*ball\b"), "medicine_ball"),
    (re.compile(r"\b(?:trx|suspension)\b"), "suspension_trainer"),
)


def equipment_named(name: str) -> list[str]:
    """The equipment slugs an exercise's name names ("Dumbbell Hammer Curl" → ["dumbbells"]), in table order."""
    lowered = name.lower()
    return [slug for pattern, slug in _NAMED_EQUIPMENT if pattern.search(lowered)]
