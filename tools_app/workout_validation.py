"""Checks a workout before anything is stored (docs/contracts.md §12 (workouts), issue 4 item 5).

`validate_workout(workout, user_id=...)` returns every problem at once (empty list = valid), each naming
the exercise it is about by its position in the list, e.g.

    exercise 2 'Barbell Row': needs barbell, which is not available at Home (available: bench, ...)

so the model can fix all of them in one new call. The checks:
- structure: orders unique and 1..N; groups of a known type whose exercises are next to each other,
  with positions 1..k and name/rounds on the first one only;
- per exercise: a known type and that type's required fields, positive numbers, one value per set;
  muscles from the canonical 16 and muscle/goal shares each summing to 1 ± 0.01; loads and distances in
  kg/lb and km/mi (the user's other unit is converted when stored); equipment available at the current
  location (bodyweight always is; a catalogue exercise also needs the catalogue's equipment); the user's
  active preferences (excluded exercises and equipment); injuries and limitations (the profile's, and
  preferences that name an injured body part): the exercise's movement pattern and loaded joints
  (catalogue data, or derived from the name and muscles for an exercise the catalogue does not know) against `datasources_app.catalog.BODY_PARTS`, with safe
  catalogue alternatives named in the problem.

The modification tools re-check only the exercise they change (`check_exercises(..., only=...)`), plus
the structure, so a workout made valid earlier is not refused because the user has since moved.
"""

from __future__ import annotations

import math
import re
import uuid
from collections import Counter, defaultdict
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from datasources_app import selectors
from datasources_app.catalog import (
    BODYWEIGHT,
    DEPTH_CUES,
    DEPTH_LIMITS,
    EXERCISE_TYPES,
    GROUP_TYPES,
    MILD_BODY_PARTS,
    MUSCLES,
    NO_DEEP_BEND,
    ROUND_GROUP_TYPES,
    SHARE_SUM_TOLERANCE,
    BodyPart,
    contraindication,
    derive_loaded_joints,
    derive_movement_pattern,
    equipment_named,
    exercise_name_key,
    goes_past_parallel,
    injured_body_parts,
    kneels,
    mild_in,
    name_covers,
    name_words,
    says_more_than_mild,
)
from datasources_app.loads import HANDHELD, default_implements
from datasources_app.models import Exercise as CatalogExercise
from datasources_app.models import Location, Preference, UserSettings
from datasources_app.workouts import (
    GROUP_MIN_SIZE,
    NUMBER_LIMITS,
    OPTIONAL_FIELDS,
    REQUIRED_FIELDS,
    Exercise,
    ExerciseFields,
    ExerciseGroup,
    Workout,
    out_of_limits,
)


@dataclass(frozen=True)
class CatalogMatch:
    """What the exercise catalogue knows about an exercise named in a workout."""

    slug: str
    name: str
    equipment: frozenset[str]
    name_keys: frozenset[str]
    movement_pattern: str = ""
    loaded_joints: frozenset[str] = frozenset()
    exercise_type: str = ""
    mechanic: str = ""
    force: str = ""
    category: str = ""
    level: str = ""
    primary_muscles: tuple[str, ...] = ()
    muscle_shares: tuple[tuple[str, float], ...] = ()
    names: tuple[str, ...] = ()  # name and aliases


@dataclass(frozen=True)
class Injury:
    """An injured body part and the user's words that named it (profile or preference)."""

    part: BodyPart
    source: str


@dataclass(frozen=True)
class TrainingContext:
    """The user's facts a workout is checked against, read once per check."""

    weight_unit: str
    distance_unit: str
    location_name: str | None
    available_equipment: frozenset[str]
    preferences: tuple[Preference, ...] = ()
    # The location's weights per implement (kg), when it lists them: loads are rounded to what is on hand.
    weights_kg: Mapping[str, tuple[float, ...]] = field(default_factory=dict, compare=False)
    injuries: tuple[Injury, ...] = ()
    # The catalogue, read once per check when a refusal needs safe options (see `context_catalog`).
    catalog_cache: list[CatalogMatch] = field(default_factory=list, compare=False, repr=False)


@dataclass
class ExerciseCheck:
    """The outcome of `check_exercises`: the problems, and each exercise's catalogue match and equipment."""

    problems: list[str] = field(default_factory=list)
    catalog: list[CatalogMatch | None] = field(default_factory=list)
    equipment: list[list[str]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


# A preference names an injury when it is filed as one or its words say so ("my left knee is injured, avoid
# exercises that load the knee"); "I love shoulder day" is not one. "Weak" is one only when nothing says the
# user wants to train the part: "my weak knee gives way" is, "weak shoulders, I want to build them" is a goal.
INJURY_CATEGORIES = frozenset({"injury", "limitation", "recovery", "medical"})
_INJURY_WORDS = re.compile(
    r"injur|hurt|pain|sore|strain|sprain|tear|torn|surgery|operat|recover|rehab|tendin|bursitis|arthritis|"
    r"avoid|protect|careful|\bbad\b|tender|\bache|aching|niggle|tweak|swollen|dislocat|fractur|gives? (?:way|out)"
)
_WEAK_WORDS = re.compile(r"\bweak")
_TRAINING_GOAL_WORDS = re.compile(
    r"\bbuild|strengthen|stronger|\bgrow|bring (?:it |them )?up|\bimprove|bigger|focus on|work on|target|"
    r"more (?:volume|work|sets)|prioriti[sz]e"
)


def names_an_injury(text: str) -> bool:
    """Whether a preference's words describe an injury or a limitation to train around (not a goal)."""
    lowered = text.lower()
    if _INJURY_WORDS.search(lowered):
        return True
    return bool(_WEAK_WORDS.search(lowered)) and not _TRAINING_GOAL_WORDS.search(lowered)


# A safety rule for every knee: "Stop any exercise that causes sharp knee pain", "stop if it hurts".
_STOP_RULE = re.compile(
    r"^\s*(?:[-*•]\s*)?(?:[\w' -]{1,30}:\s*)?(?:stop|back off|ease off|skip)\b[^.;!?]*\b(?:if|when|that|which|above)\b",
    re.IGNORECASE,
)


def _serious_sentences(guidance: str) -> str:
    """The sentences of a note's guidance that say an injury is more than mild ("The user had ACL surgery", "sharp
    pain in deep squats"), not a safety rule for everyone ("stop if it causes sharp pain"). The rest of the
    guidance is the model's coaching ("Left knee only.", "Keep knee bends pain-free: box squats, leg press"): how
    bad the injury is, the description says."""
    sentences = re.split(r"(?<=[.;!?\n])\s*", guidance or "")
    return " ".join(
        sentence for sentence in sentences if says_more_than_mild(sentence) and not _STOP_RULE.match(sentence)
    )


_BARE_PARTS = frozenset(
    {
        "knee",
        "knees",
        "back",
        "lower back",
        "lower_back",
        "shoulder",
        "shoulders",
        "hip",
        "hips",
        "ankle",
        "ankles",
        "wrist",
        "wrists",
        "elbow",
        "elbows",
        "neck",
    }
)


def injuries_from(
    *, profile_injuries: str, limitations: Iterable[str], preferences: Iterable[Preference]
) -> tuple[Injury, ...]:
    """The injured body parts the profile and the preferences name, each once (the first source wins)."""
    # (the words naming parts, where they come from, the words saying how bad it is: a limitation tag says not)
    sources: list[tuple[str, str, str]] = []
    tags = [str(tag) for tag in limitations if str(tag).strip()]
    profile_text = " ".join([profile_injuries, *tags]).strip()
    if profile_text:
        said = [f"'{' '.join(profile_injuries.split())}'"] if profile_injuries.strip() else []
        said += [f"limitations: {', '.join(tags)}"] if tags else []
        # A tag that says more than the part ("acl_reconstruction", "knee pain") says how bad it is too.
        telling = [tag.replace("_", " ") for tag in tags if tag.strip().lower() not in _BARE_PARTS]
        sources.append((profile_text, f"profile: {'; '.join(said)}", ". ".join([profile_injuries, *telling])))
    for preference in preferences:
        text = f"{preference.description} {preference.guidance}"
        if preference.category in INJURY_CATEGORIES or names_an_injury(text):
            # How bad it is: what the description says, and what the guidance says of the user, not its
            # instructions ("Keep knee work in a pain-free range. Stop if it causes sharp knee pain.").
            how = f"{preference.description}. {_serious_sentences(preference.guidance)}"
            sources.append((text, f"preference '{preference.description}'", how))
    found: dict[str, Injury] = {}
    mild: dict[str, bool] = {}
    for text, source, how in sources:
        for part in injured_body_parts(text):
            found.setdefault(part.key, Injury(part=part, source=source))
            # Mild only when everything that names the part says it is ("knee" alone could be anything).
            mild[part.key] = mild.get(part.key, True) and mild_in(part, how) is True
    return tuple(
        replace(injury, part=MILD_BODY_PARTS[key]) if mild[key] and key in MILD_BODY_PARTS else injury
        for key, injury in found.items()
    )


def user_injuries(
    *, user_id: uuid.UUID, preferences: Iterable[Preference] | None = None
) -> tuple[Injury, ...]:
    """The user's injured body parts: the profile's injuries and limitations, and injury preferences."""
    profile = selectors.get_profile(user_id=user_id)
    return injuries_from(
        profile_injuries=profile.injuries if profile is not None else "",
        limitations=(profile.limitations or ()) if profile is not None else (),
        preferences=preferences if preferences is not None else selectors.active_preferences(user_id=user_id),
    )


def load_training_context(*, user_id: uuid.UUID, location_id: uuid.UUID | None = None) -> TrainingContext:
    """The user's facts for the checks, at their current location or at their location `location_id`."""
    user_settings = selectors.get_settings(user_id=user_id)
    location = (
        selectors.get_location(user_id=user_id, location_id=location_id)
        if location_id is not None
        else selectors.current_location(user_id=user_id)
    )
    preferences = tuple(selectors.active_preferences(user_id=user_id))
    return training_context_from(
        user_settings=user_settings,
        location=location,
        equipment=(
            selectors.available_equipment_slugs(user_id=user_id, location_id=location.id)
            if location is not None
            else {BODYWEIGHT}
        ),
        preferences=preferences,
        injuries=user_injuries(user_id=user_id, preferences=preferences),
    )


def training_context_from(
    *,
    user_settings: UserSettings,
    location: Location | None,
    equipment: Iterable[str],
    preferences: Iterable[Preference],
    injuries: tuple[Injury, ...],
) -> TrainingContext:
    """The context `load_training_context` makes of what it reads, for a caller that has read it already
    (the drafting's facts): the user's settings, their location and its equipment (just bodyweight without
    one), their active preferences and the injuries these and the profile name."""
    return TrainingContext(
        weight_unit=user_settings.weight_unit,
        distance_unit=user_settings.distance_unit,
        location_name=location.name if location is not None else None,
        available_equipment=frozenset(equipment),
        preferences=tuple(preferences),
        injuries=injuries,
        weights_kg=weights_on_hand(location),
    )


def weights_on_hand(location: Location | None) -> dict[str, tuple[float, ...]]:
    """A location's `available_weights_kg` as implement → sorted kilos (nothing when it lists none)."""
    weights: dict[str, tuple[float, ...]] = {}
    for slug, values in ((location.available_weights_kg or {}) if location is not None else {}).items():
        if isinstance(values, list):
            weights[str(slug)] = tuple(sorted(float(v) for v in values if isinstance(v, int | float)))
    return weights


# Sentences of free text (a plan's prescription, a week's notes) that say what to leave out name no exercise.
_SENTENCES = re.compile(r"[.;:!?\n]+")
_FRAGMENTS = re.compile(r",|\+|/|\band\b|\bthen\b|\(|\)")
_PRESCRIPTION = re.compile(r"\s[—–-]\s|\d|@|×")
# Words by which a sentence keeps its movements short of a deep bend: the depth cues `catalog.deep_knee_bend` reads
# in a name, and what the sentence keeps the knee out of ("no deep knee bend", "out of a deep bend").
_RANGE_KEPT = re.compile(
    rf"{DEPTH_CUES}|{NO_DEEP_BEND.pattern}|\b(?:out|short) of (?:a |the )?(?:deep|full)", re.IGNORECASE
)
_NEGATION = re.compile(
    r"\b(?:no|not|avoid|avoids|avoided|avoiding|instead of|skip|skipped|without|swap|swapped|"
    r"replace|replaced|never|keep off|kept off|away from|left out|leave out|leaving out|exclud\w*)\b",
    re.IGNORECASE,
)


# Exercise words that are also everyday words ("hard but clean", "three days in a row", "leg swings", "hop on the
# bike", a leg press's "stop the sled before the knee feels it"): in free text each is a lift only when used as one:
# after a word that makes it one ("power clean", "kettlebell swing", "push the sled"), before one ("clean and jerk",
# "clean & press", "sled push"), in the plural ("cleans", "dips"), or as a list's item on its own ("Dips 3x10",
# "push-ups, dips"); anywhere else it names nothing.
_IMPLEMENT_WORDS = (
    r"barbell|dumbbell|db|kettlebell|kb|cable|band|banded|machine|smith|weighted|bodyweight|single[\s-]arm|"
    r"one[\s-]arm|single[\s-]leg|one[\s-]leg|alternating|double|seated|standing|lying|heavy"
)


@dataclass(frozen=True)
class _EverydayWord:
    word: str  # the word and its forms, as a pattern
    before: str = ""  # words before it that make it a lift
    after: str = ""  # words after it that make it a lift
    plural: str = ""  # its plural, a lift in itself
    prose_plural: str = ""  # words before the plural that make it no lift ("leg swings")
    alone_needs_numbers: bool = False  # on its own it is a lift only with sets or reps ("Good morning!")
    prose_after: str = ""  # words after it that make it no lift ("jump on the bike"); else it always is one
    everyday_near: str = ""  # an everyday word only in a sentence that says this ("the sled" of a leg press)


_EVERYDAY_WORDS = tuple(
    (item, re.compile(rf"\b(?:{item.word})\b", re.IGNORECASE))
    for item in (
        _EverydayWord(
            "cleans?",
            before=r"power|hang|high[\s-]hang|squat|muscle|split|full|block|bottoms[\s-]up|med(?:icine)? ball|sandbag",
            after=r"\s*(?:and|&|\+|n'?)\s*(?:jerks?|press(?:es)?)|[\s-]+(?:pulls?|high pulls?|deadlifts?)",
            plural="cleans",
        ),
        _EverydayWord("jerks?", before=r"push|split|power|squat|clean\s*(?:and|&|\+|n'?)", plural="jerks"),
        _EverydayWord(
            "swings?",
            before=r"russian|american|hip|two[\s-]hand(?:ed)?",
            plural="swings",
            prose_plural=r"leg|arm|pendulum",
        ),
        _EverydayWord(
            "dips?",
            before=r"triceps?|chest|bench|ring|parallel[\s-]bar|bar|straight[\s-]bar|assisted|korean|box",
            plural="dips",
            prose_plural=r"hip|energy",
        ),
        _EverydayWord(
            "rows?",
            before=r"upright|bent[\s-]over|pendlay|t[\s-]bar|chest[\s-]supported|inverted|renegade|ring|trx|kroc|"
            r"meadows|landmine|yates|seal|incline|gorilla",
            plural="rows",
        ),
        _EverydayWord(
            "bridges?",
            before=r"glute|hip|side|shoulder|frog|marching|feet[\s-]elevated|wrestler'?s?",
            plural="bridges",
        ),
        _EverydayWord(
            r"good[\s-]mornings?",
            plural=r"good[\s-]mornings",
            alone_needs_numbers=True,
        ),
        _EverydayWord(
            "carry|carries|carrying|carryover|carry-over",
            before=r"farmer'?s?|suitcase|waiter'?s?|overhead|front[\s-]rack|rack|goblet|sandbag|zercher|"
            r"bottoms[\s-]up|loaded",
            plural="carries",
        ),
        _EverydayWord("walks?", before=r"farmer'?s?|suitcase|waiter'?s?|overhead|yoke|bear|crab|duck|lunge"),
        _EverydayWord(
            "twists?",
            before=r"russian|landmine|trunk|torso|oblique|bicycle|med(?:icine)? ball|plate",
            plural="twists",
        ),
        _EverydayWord(
            "hops?", before=r"pogo|ankle|lateral|line|box|hurdle|broad|side|forward", plural="hops"
        ),
        _EverydayWord(
            "bound|bounds|rebound|rebounds|boundary|boundaries|bounded",
            before=r"lateral|broad|skater|speed|alternat(?:e|ing)",
            plural="bounds",
        ),
        _EverydayWord(
            "sleds?",
            before=r"(?:push|pull|drag)(?:es|s|ing)?(?:\s+(?:the|a))?|prowler|reverse|backwards?|forwards?|lateral",
            after=r"[\s-]+(?:push|pull|drag|sprint|march|row|walk)",
            plural="sleds",
            everyday_near=r"\bleg[\s-]*press",
        ),
        _EverydayWord(
            "jump|jumping",
            before=r"box|tuck|broad|squat|split|lateral|star|vertical|depth|pike|frog|long|hurdle|seal",
            prose_after=r"\s+(?:on|into|in|straight|right|back|ahead|up|to)\b",
        ),
    )
)
_ITEM_START = re.compile(r"(?:^|[,+/(]|\b(?:then|or)\b)\s*(?:[-*#•]+|\d+[.)])?\s*(?:the\s+|a\s+)?$")
_ITEM_END = re.compile(r"\s*(?:$|[,+/)]|[—–-]\s|\d|@|×|x\s?\d)")
_SETS_IN = re.compile(r"\d\s*[x×]\s*\d|\b\d+\s*(?:reps?|sets?|each)\b", re.IGNORECASE)
_NUMBERS_AFTER = re.compile(r"\s*(?:[,—–-]\s*)?(?:\d|@|×|x\s?\d)")


def _used_as_a_lift(item: _EverydayWord, sentence: str, match: re.Match[str], *, clause: str) -> bool:
    before, after, said = sentence[: match.start()], sentence[match.end() :], match.group(0).lower()
    if item.everyday_near and not re.search(item.everyday_near, clause, re.IGNORECASE):
        return True  # "finish with the sled": sled work, unless the sentence is about a leg press's sled
    implements = f"{item.before}|{_IMPLEMENT_WORDS}" if item.before else _IMPLEMENT_WORDS
    if re.search(rf"\b(?:{implements})[\s-]*$", before, re.IGNORECASE):
        return True
    if _SETS_IN.search(_FRAGMENTS.split(after, maxsplit=1)[0]):
        return True  # "Jump up onto a box 3x5", "Hop on one leg 3x10"
    if item.prose_after:
        return re.match(item.prose_after, after, re.IGNORECASE) is None
    if item.after and re.match(item.after, after, re.IGNORECASE):
        return True
    if item.plural and re.fullmatch(item.plural, said):
        return not (
            item.prose_plural and re.search(rf"\b(?:{item.prose_plural})[\s-]*$", before, re.IGNORECASE)
        )
    if _NUMBERS_AFTER.match(after):
        return True
    alone = bool(_ITEM_START.search(before)) and bool(_ITEM_END.match(after))
    return alone and not item.alone_needs_numbers


def _everyday_words_left_out(sentence: str, *, clause: str = "") -> str:
    """The sentence with the exercise words it uses as everyday words blanked ("hard but clean" → "hard but ");
    `clause`: the sentence with its label ("Leg press: stop the sled …"), when it has one."""
    for item, pattern in _EVERYDAY_WORDS:
        spans = [
            match.span()
            for match in pattern.finditer(sentence)
            if not _used_as_a_lift(item, sentence, match, clause=clause or sentence)
        ]
        for start, end in spans:
            sentence = sentence[:start] + " " * (end - start) + sentence[end:]
    return sentence


_CLAUSES = re.compile(r"[.;!?\n…]+")


def _sentences_by_clause(text: str) -> list[tuple[str, str]]:
    """Each sentence of `text` (split at colons too) with its clause (a sentence, its colons kept)."""
    return [(clause, sentence) for clause in _CLAUSES.split(text) for sentence in _SENTENCES.split(clause)]


def unsafe_named_exercises(texts: Iterable[tuple[str, str]], injuries: Sequence[Injury]) -> list[str]:
    """Problems for every exercise named in free text (`(label, text)` pairs) that the user's injuries rule
    out, by the same movement-pattern rule as `validate_workout` (sentences saying what to avoid are skipped, and
    exercise words used as everyday words name nothing: "hard but clean").

    A lift is kept short of a deep bend by a depth cue in its clause ("Leg press (pain-free range)", "Squat: box
    squat to parallel"), and wherever its text names it again: a day's "Leg press: stop before the knee feels it"
    is the leg press the day keeps in a pain-free range, whoever wrote the text (a plan's day, a week's markdown)."""
    if not injuries:
        return []
    # One problem however many labels repeat it (a plan's weeks share their notes): its labels joined.
    labels_of: dict[str, list[str]] = {}
    for label, text in texts:
        named_lifts = _named_lifts(text or "")
        kept_names = [(name_words(named), cue) for named, _, cue, _ in named_lifts if cue]
        for named, pattern, cue, prescribed in named_lifts:
            words = name_words(named)
            if not cue and not prescribed:
                # A mention without sets of its own ("Leg press: stop before the knee feels it") is the lift the
                # text keeps short elsewhere; one with its own sets ("Squat 5x5") is read as it is written.
                cue = next((kept for other, kept in kept_names if words and other[: len(words)] == words), "")
            joints = derive_loaded_joints(pattern, name=named)
            # The lift with the depth cues of its clause ("Leg press (pain-free range)"): the name rules read them
            # (a parallel cue keeps a squat short, not a lunge; "to parallel or below" keeps nothing short).
            depth = f"{named} ({cue})" if cue else named
            for injury, why in injury_conflicts(pattern, joints, injuries, name=depth):
                problem = (
                    f"'{named}' is unsafe for the user's {injury.part.key} ({injury.source}): "
                    f"{why}; {injury.part.advice}"
                )
                labels = labels_of.setdefault(problem, [])
                if label not in labels:
                    labels.append(label)
    return [f"{', '.join(labels)}: {problem}" for problem, labels in labels_of.items()]


def depth_cues(text: str) -> str:
    """The depth cues of `text` that keep a knee short of a deep bend ("pain-free range", "low box", "no deep knee
    bend"), joined; "" when it has none or takes the knee past parallel ("to parallel or below")."""
    if goes_past_parallel(text):
        return ""
    return "; ".join(found.group(0) for found in _RANGE_KEPT.finditer(text))


def _named_lifts(text: str) -> list[tuple[str, str, str, bool]]:
    """Each lift `text` names (not what it leaves out), its movement pattern, the depth cues of its clause ("" when
    none), and whether its fragment gives it sets or reps."""
    lifts: list[tuple[str, str, str, bool]] = []
    for clause, sentence in _sentences_by_clause(text):
        # "Leg press (no deep knee bend)", "no deeper than parallel", "keeps the knee out of a deep bend": a depth
        # cue, neither what the sentence leaves out nor an exercise.
        sentence = DEPTH_LIMITS.sub(" ", sentence)
        if _NEGATION.search(sentence):
            continue
        # "Leg press (partial depth)", "step-ups stay in a pain-free range", "Squat: box squat to a high box":
        # the clause (a sentence, a label's colon included) keeps the range short.
        kept = depth_cues(clause)
        for fragment in _FRAGMENTS.split(_everyday_words_left_out(sentence, clause=clause)):
            # The name without its prescription ('Goblet squats 3x10 @ 16kg' → 'Goblet squats').
            named = _PRESCRIPTION.split(" ".join(fragment.split()).lstrip(" -*#0123456789."))[0].strip()
            pattern = derive_movement_pattern(named) if named else None
            if pattern is not None:
                lifts.append((named, pattern, kept, bool(_SETS_IN.search(fragment))))
    return lifts


def catalog_match_of(exercise: CatalogExercise) -> CatalogMatch:
    """What the checks need of a catalogue exercise (its equipment prefetched or fetched)."""
    keys = {exercise_name_key(exercise.name), exercise_name_key(exercise.slug)}
    keys.update(exercise_name_key(alias) for alias in exercise.aliases or ())
    shares = exercise.muscle_shares or {}
    ordered = dict.fromkeys([*(exercise.primary_muscles or ()), *(exercise.secondary_muscles or ()), *shares])
    return CatalogMatch(
        slug=exercise.slug,
        name=exercise.name,
        equipment=frozenset(item.slug for item in exercise.equipment.all()) - {BODYWEIGHT},
        name_keys=frozenset(key for key in keys if key),
        movement_pattern=exercise.movement_pattern,
        loaded_joints=frozenset(exercise.loaded_joints or ()),
        exercise_type=exercise.exercise_type,
        mechanic=exercise.mechanic,
        force=exercise.force,
        category=exercise.category,
        level=exercise.level,
        primary_muscles=tuple(exercise.primary_muscles or ()),
        muscle_shares=tuple((muscle, float(shares[muscle])) for muscle in ordered if shares.get(muscle)),
        names=(exercise.name, *(str(alias) for alias in exercise.aliases or ())),
    )


def find_catalog_match(name: str) -> CatalogMatch | None:
    exercise = selectors.find_exercise_by_name(name=name)
    return catalog_match_of(exercise) if exercise is not None else None


def find_catalog_matches(names: Iterable[str]) -> dict[str, CatalogMatch | None]:
    """`find_catalog_match` of each name, the catalogue's names read in one query rather than one each."""
    return {
        name: catalog_match_of(exercise) if exercise is not None else None
        for name, exercise in selectors.find_exercises_by_name(names=names).items()
    }


def excluded_by(preference: Preference, names: Iterable[str]) -> bool:
    """Whether the preference excludes an exercise known by `names` (or a variation of an excluded name)."""
    excluded = [str(item) for item in preference.exclude_exercises or ()]
    return any(name_covers(item, name) for item in excluded for name in names)


def catalog_matches() -> list[CatalogMatch]:
    """Every catalogue exercise (two queries), by slug."""
    exercises = selectors.search_exercises(limit=100_000)
    return sorted((catalog_match_of(exercise) for exercise in exercises), key=lambda match: match.slug)


def context_catalog(context: TrainingContext) -> list[CatalogMatch]:
    """Every catalogue exercise, read at most once per context."""
    if not context.catalog_cache:
        context.catalog_cache.extend(catalog_matches())
    return context.catalog_cache


def movement_of(exercise: ExerciseFields, match: CatalogMatch | None) -> tuple[str | None, frozenset[str]]:
    """The movement pattern and loaded joints of an exercise: the catalogue's, else derived from its name and
    the muscles the model gave (so an unknown name cannot slip a squat past a knee injury)."""
    if match is not None and match.movement_pattern:
        return match.movement_pattern, match.loaded_joints
    muscles = [item.muscle for item in sorted(exercise.muscles_utilized, key=lambda item: -item.share)]
    pattern = derive_movement_pattern(
        exercise.exercise_name, primary_muscles=muscles[:1], mechanic="compound"
    )
    return pattern, frozenset(derive_loaded_joints(pattern, muscles=muscles, name=exercise.exercise_name))


def injury_conflicts(
    pattern: str | None, joints: Collection[str], injuries: Iterable[Injury], *, name: str = ""
) -> list[tuple[Injury, str]]:
    """Each injury the movement (an exercise called `name`) conflicts with, and why."""
    conflicts = []
    for injury in injuries:
        why = contraindication(injury.part, pattern=pattern, joints=joints, name=name)
        if why is not None:
            conflicts.append((injury, why))
    return conflicts


def allowed(match: CatalogMatch, context: TrainingContext) -> bool:
    """Whether a catalogue exercise fits the user: equipment here, preferences, injuries."""
    if any(slug not in context.available_equipment for slug in match.equipment):
        return False
    for preference in context.preferences:
        if excluded_by(preference, match.names) or match.equipment & set(preference.exclude_equipment or ()):
            return False
    return not injury_conflicts(
        match.movement_pattern, match.loaded_joints, context.injuries, name=match.name
    )


# Words of a name (canonical: `catalog.name_words`) that say the kit or the side, not the movement: they break
# ties, never make a name close.
_KIT_WORDS = frozenset(
    [
        "dumbbell",
        "barbell",
        "kettlebell",
        "band",
        "banded",
        "cable",
        "machine",
        "smith",
        "bodyweight",
        "weighted",
        "single",
        "one",
        "arm",
        "leg",
        "alternating",
        "seated",
        "standing",
        "lying",
        "incline",
        "decline",
    ]
)


def close_catalog_names(name: str, context: TrainingContext, *, limit: int = 4) -> list[str]:
    """Catalogue exercises the user may do here whose names share the movement words of `name` ("Dumbbell Hip
    Thrust" → "Hip Thrust", "Single-Leg Hip Thrust"), the most words in common first: what a model that guessed a
    name can call instead (no tool lists the catalogue)."""
    wanted = set(name_words(name))
    movement = wanted - _KIT_WORDS
    scored = []
    for candidate in context_catalog(context):
        words = set(name_words(candidate.name))
        shared = movement & words
        if not shared or candidate.movement_pattern in ("mobility", "") or not allowed(candidate, context):
            continue
        scored.append(
            (-(2 * len(shared) + len(wanted & words & _KIT_WORDS)), len(candidate.name), candidate.name)
        )
    return [name for *_, name in sorted(scored)[:limit]]


def validate_workout(
    workout: Workout, *, user_id: uuid.UUID, location_id: uuid.UUID | None = None
) -> list[str]:
    """Every problem of `workout` for this user (at their current location, or at `location_id`); an empty
    list means it may be stored."""
    context = load_training_context(user_id=user_id, location_id=location_id)
    return check_exercises(workout.exercises, user_id=user_id, context=context).problems


def check_exercises(
    exercises: Sequence[Exercise],
    *,
    user_id: uuid.UUID,
    only: Collection[int] | None = None,
    context: TrainingContext | None = None,
) -> ExerciseCheck:
    """Check the structure of `exercises` and each exercise whose index is in `only` (default: all)."""
    context = context or load_training_context(user_id=user_id)
    check = ExerciseCheck(problems=structure_problems(exercises))
    matches = find_catalog_matches(
        exercise.exercise_name
        for index, exercise in enumerate(exercises)
        if exercise.exercise_name and (only is None or index in only)
    )
    for index, exercise in enumerate(exercises):
        if only is not None and index not in only:
            check.catalog.append(None)
            check.equipment.append(list(exercise.equipment or []))
            continue
        match = matches[exercise.exercise_name] if exercise.exercise_name else None
        label = exercise_label(index, exercise)
        equipment = effective_equipment(exercise, match)
        check.catalog.append(match)
        check.equipment.append(equipment)
        check.problems.extend(
            f"{label}: {problem}"
            for problem in exercise_problems(
                exercise,
                match,
                equipment,
                context,
                taken=[other.exercise_name for other in exercises if other is not exercise],
            )
        )
    return check


def exercise_label(index: int, exercise: ExerciseFields) -> str:
    return f"exercise {index + 1} '{exercise.exercise_name}'"


def effective_equipment(exercise: ExerciseFields, match: CatalogMatch | None) -> list[str]:
    """The equipment the exercise needs: what the model declared plus, for a catalogue exercise, the
    catalogue's list (taken alone when the model declared none). Bodyweight is implied, never listed."""
    if exercise.equipment is not None:
        declared = list(exercise.equipment)
    else:  # none given: for an exercise the catalogue does not know, what its name says ("Dumbbell ...")
        declared = [] if match is not None else equipment_named(exercise.exercise_name)
    needed = declared + sorted(match.equipment) if match is not None else declared
    return [slug for slug in dict.fromkeys(needed) if slug != BODYWEIGHT]


# --- Structure ----------------------------------------------------------------------------------------------------
def structure_problems(exercises: Sequence[Exercise]) -> list[str]:
    problems: list[str] = []
    count = len(exercises)
    if count == 0:
        return ["a workout needs at least one exercise"]
    by_order: dict[int, list[int]] = defaultdict(list)
    for index, exercise in enumerate(exercises):
        by_order[exercise.order].append(index)
        if exercise.order < 1 or exercise.order > count:
            problems.append(
                f"{exercise_label(index, exercise)}: order {exercise.order} is outside 1..{count} "
                f"(orders run 1..N without gaps)"
            )
    for order, indexes in sorted(by_order.items()):
        if len(indexes) > 1:
            names = " and ".join(exercise_label(index, exercises[index]) for index in indexes)
            problems.append(f"{names} share order {order} (each order is used once)")
    problems.extend(group_problems(exercises))
    return problems


def group_problems(exercises: Sequence[Exercise]) -> list[str]:
    problems: list[str] = []
    members: dict[str, list[tuple[int, ExerciseGroup]]] = defaultdict(list)
    for index in sorted(range(len(exercises)), key=lambda i: (exercises[i].order, i)):
        group = exercises[index].group
        if group is not None:
            members[group.id].append((index, group))
    for group_id, grouped in members.items():
        label = exercise_label(grouped[0][0], exercises[grouped[0][0]])
        types = Counter(group.type for _, group in grouped)
        group_type = types.most_common(1)[0][0]
        if len(types) > 1:
            problems.append(
                f"{label}: group '{group_id}' mixes types {', '.join(sorted(types))} (one type per group)"
            )
        if group_type not in GROUP_TYPES:
            problems.append(f"{label}: group type '{group_type}' is not one of {', '.join(GROUP_TYPES)}")
        orders = [exercises[index].order for index, _ in grouped]
        if len(set(orders)) == len(orders) and max(orders) - min(orders) != len(orders) - 1:
            problems.append(
                f"{label}: group '{group_id}' is split; its exercises must be next to each other "
                f"(orders {', '.join(map(str, orders))})"
            )
        positions = [group.position for _, group in grouped]
        if positions != list(range(1, len(grouped) + 1)):
            problems.append(
                f"{label}: group '{group_id}' positions must run 1..{len(grouped)} in exercise order, "
                f"got {', '.join(map(str, positions))}"
            )
        minimum = GROUP_MIN_SIZE.get(group_type, 1)
        if len(grouped) < minimum:
            problems.append(
                f"{label}: a {group_type} group needs at least {minimum} exercises, "
                f"'{group_id}' has {len(grouped)}"
            )
        for rank, (index, group) in enumerate(grouped, start=1):
            member = exercise_label(index, exercises[index])
            if rank > 1 and (group.name is not None or group.rounds is not None):
                problems.append(f"{member}: group name and rounds belong on the group's first exercise only")
            if group.rounds is not None and group.rounds < 1:
                problems.append(f"{member}: group rounds must be ≥ 1, got {group.rounds}")
            if group.rest_between_rounds_sec is not None and group.rest_between_rounds_sec < 0:
                problems.append(
                    f"{member}: group rest_between_rounds_sec must be ≥ 0, got {group.rest_between_rounds_sec}"
                )
            for name in ("position", "rounds", "rest_between_rounds_sec"):
                too_large = _above_limit(name, getattr(group, name))
                if too_large:
                    problems.append(f"{member}: group {too_large}")
        if group_type in ROUND_GROUP_TYPES:
            problems.extend(_round_group_problems(group_id, group_type, grouped, exercises))
    return problems


def _round_group_problems(
    group_id: str, group_type: str, grouped: list[tuple[int, ExerciseGroup]], exercises: Sequence[Exercise]
) -> list[str]:
    """A circuit, superset or giant set is done `rounds` times, each member once per round (ROUND_GROUP_TYPES)."""
    problems: list[str] = []
    first_index, first = grouped[0]
    if first.rounds is None:
        problems.append(
            f"{exercise_label(first_index, exercises[first_index])}: {group_type} '{group_id}' needs rounds on "
            f"its first exercise's group (how many times the whole {group_type} is done)"
        )
    rounds = first.rounds or "N"
    for index, _ in grouped:
        exercise = exercises[index]
        member = exercise_label(index, exercise)
        if exercise.exercise_type in ("reps", "hold") and exercise.sets is not None and exercise.sets != 1:
            per_set = "reps" if exercise.exercise_type == "reps" else "hold_sec"
            values = getattr(exercise, per_set) or []
            one = f"{per_set}: [{values[0]:g}]" if values else f"{per_set} with one value"
            loads = ", load_each with one value" if exercise.load_each else ""
            problems.append(
                f"{member}: in {group_type} '{group_id}' the group's rounds ({rounds}) count the rounds and each "
                f"member is done once per round, so send sets: 1, {one}{loads} (not sets: {exercise.sets})"
            )
        if exercise.exercise_type == "intervals" and exercise.rounds is not None and exercise.rounds != 1:
            problems.append(
                f"{member}: in {group_type} '{group_id}' the group's rounds ({rounds}) count the rounds, so send "
                f"this exercise's rounds: 1 (not {exercise.rounds}) and put the count in the group's rounds"
            )
    return problems


def _above_limit(name: str, value: float | list[float] | list[int] | None) -> str | None:
    """The problem with a value above its NUMBER_LIMITS maximum (values below the minimum are reported apart)."""
    if value is None:
        return None
    low = NUMBER_LIMITS[name][0]
    values = value if isinstance(value, list) else [value]
    return out_of_limits(name, [item for item in values if math.isfinite(item) and item >= low])


# --- One exercise -------------------------------------------------------------------------------------------------
def exercise_problems(
    exercise: ExerciseFields,
    match: CatalogMatch | None,
    equipment: list[str],
    context: TrainingContext,
    *,
    taken: Collection[str] = (),
) -> list[str]:
    """Every problem of one exercise; `taken`: the names of the workout's other exercises (no refusal offers
    one of them as the safe option)."""
    problems: list[str] = []
    if not exercise.exercise_name:
        problems.append("exercise_name is empty")
    if not exercise.reasoning.strip():
        problems.append("reasoning is empty")
    problems.extend(_type_problems(exercise))
    problems.extend(_implements_problems(exercise, match, equipment))
    problems.extend(_unit_problems(exercise, context))
    problems.extend(_muscle_problems(exercise))
    problems.extend(_goal_problems(exercise))
    problems.extend(_equipment_problems(equipment, context))
    problems.extend(_preference_problems(exercise, match, equipment, context))
    # A lift the injury rules out is refused for that alone, not also for how heavy it is.
    problems.extend(
        _injury_problems(exercise, match, context, taken=taken)
        or _knee_work_problems(exercise, match, context)
    )
    return problems


_LOWER_BODY = frozenset({"Quadriceps", "Hamstrings", "Glutes", "Calves", "Abductors", "Adductors"})


# How a coach ranks an option with the same main muscle: loadable kit first, bands last ("Band Good Morning" is no
# option at a gym with a barbell).
_KIT_RANK = {
    "barbell": 0,
    "trap_bar": 0,
    "smith_machine": 0,
    "dumbbells": 1,
    "kettlebell": 1,
    "resistance_bands": 3,
}


def _kit_rank(candidate: CatalogMatch) -> int:
    ranks = [_KIT_RANK.get(slug, 1) for slug in candidate.equipment if slug != BODYWEIGHT]
    return min(ranks) if ranks else 2


def safe_alternatives(
    exercise: ExerciseFields,
    match: CatalogMatch | None,
    context: TrainingContext,
    *,
    taken: Collection[str] = (),
) -> list[CatalogMatch]:
    """Catalogue exercises the user may do here whose main muscle the exercise works, the most-worked first,
    loadable kit before bodyweight and bands, one of each movement pattern before a second of any, none of those
    `taken` (names of the workout's other exercises).

    Only muscles of the exercise's own half of the body count: a refused squat's options are hinges and bridges
    for its hamstrings and glutes, never a press for the few percent its shoulders hold the weight."""
    shares = (
        dict(match.muscle_shares)
        if match is not None and match.muscle_shares
        else {item.muscle: item.share for item in exercise.muscles_utilized}
    )
    if shares:
        lower = max(shares, key=lambda muscle: shares[muscle]) in _LOWER_BODY
        shares = {muscle: share for muscle, share in shares.items() if (muscle in _LOWER_BODY) == lower}
    taken_keys = {exercise_name_key(name) for name in taken}
    fitting = [
        candidate
        for candidate in context_catalog(context)
        if candidate.movement_pattern not in ("mobility", "")
        and candidate.primary_muscles
        and candidate.primary_muscles[0] in shares
        and candidate.exercise_type == exercise.exercise_type
        and allowed(candidate, context)
        and not (candidate.name_keys & taken_keys)
    ]
    fitting.sort(
        key=lambda candidate: (-shares[candidate.primary_muscles[0]], _kit_rank(candidate), candidate.name)
    )
    # One of each movement pattern first (a refused squat's options are not four hinges), then the rest in order.
    first: list[CatalogMatch] = []
    rest: list[CatalogMatch] = []
    patterns: set[str] = set()
    for candidate in fitting:
        (rest if candidate.movement_pattern in patterns else first).append(candidate)
        patterns.add(candidate.movement_pattern)
    return first + rest


def _injury_problems(
    exercise: ExerciseFields, match: CatalogMatch | None, context: TrainingContext, *, taken: Collection[str]
) -> list[str]:
    if not context.injuries:
        return []
    pattern, joints = movement_of(exercise, match)
    # Both names: the model's may say how deep ("Goblet Squat to a high box"), the catalogue's what it is; the
    # exercise's own notes may say it instead ("Leg Press", notes "pain-free range"), and count like its name.
    cues = depth_cues(exercise.notes or "")
    named = f"{exercise.exercise_name} ({cues})" if cues else exercise.exercise_name
    names = " / ".join(dict.fromkeys([named, *([match.name] if match is not None else [])]))
    conflicts = injury_conflicts(pattern, joints, context.injuries, name=names)
    if not conflicts:
        return []
    safe = [candidate.name for candidate in safe_alternatives(exercise, match, context, taken=taken)[:4]]
    problems = []
    for injury, why in conflicts:
        problem = f"unsafe for the user's {injury.part.key} ({injury.source}): {why}; {injury.part.advice}"
        if safe:
            problem += f"; safe options here for these muscles: {', '.join(safe)}"
        problems.append(problem)
    return problems


# --- A knee that complains ---------------------------------------------------------------------------------------
# The knee work such a knee still does (a mild knee's box squat to the bench, low step-up, leg extension, leg curl) a
# coach keeps moderate, never a heavy set: a lighter load for more reps, lowered slowly to the box or a pain-free
# depth. The drafts and swaps prescribe it (`workout_coaching.reps_and_rest`); a workout written with a strength
# set of it is refused.
KNEE_WORK_PATTERNS = frozenset({"squat", "lunge", "knee_extension", "knee_flexion"})
KNEE_WORK_REPS = 12  # what the tools prescribe
KNEE_WORK_REST_SEC = 90  # its rest, whatever a plan day's fit does to the others'
KNEE_WORK_MIN_REPS = 8  # fewer is a strength set
# Of the usual first load for the knee work's reps (`workout_coaching.working_load`): lighter, as knee work is. With
# history the last load is moved to the knee work's reps instead (Epley), and progressed as any other.
KNEE_WORK_LOAD_SCALE = 0.7
# No depth cue in it (`depth_cues` reads none): the tools' own cue never lets a deep squat pass as kept short.
KNEE_WORK_CUE = (
    "Lower for 3 seconds and drive up smoothly, no bouncing; stop where your knee starts to complain."
)
# Kneeling or on all fours presses on the kneecap: a knee that hurts is spared it (`catalog.BodyPart.kneeling`), a
# mildly bothered one kneels on a pad.
KNEELING_PAD_CUE = "Kneel on a cushion or a folded mat to pad your knee."
_PADDED = re.compile(r"\bpad|cushion|folded (?:mat|towel)|\bmat\b|towel", re.IGNORECASE)


def is_knee_work(pattern: str | None, injured: Collection[str]) -> bool:
    """Whether an exercise of `pattern` is knee work for a user whose injured parts (keys) are `injured`."""
    return "knee" in injured and pattern in KNEE_WORK_PATTERNS


def knee_pad_cue(name: str, notes: str | None, injured: Collection[str]) -> str:
    """The cue an exercise done kneeling gets for a knee the rules let kneel ("Kneel on a cushion ..."), the user's
    injured parts (keys) being `injured`; "" when it does not kneel, the user's knee is fine, or its notes pad the
    knee already."""
    if "knee" not in injured or not kneels(name) or _PADDED.search(notes or ""):
        return ""
    return KNEELING_PAD_CUE


def _knee_work_problems(
    exercise: ExerciseFields, match: CatalogMatch | None, context: TrainingContext
) -> list[str]:
    """A strength set (fewer than KNEE_WORK_MIN_REPS) of knee work for a knee that complains."""
    knee = next((injury for injury in context.injuries if injury.part.key == "knee"), None)
    reps = [value for value in exercise.reps or () if math.isfinite(value)]
    if knee is None or exercise.exercise_type != "reps" or not reps or min(reps) >= KNEE_WORK_MIN_REPS:
        return []
    pattern, _ = movement_of(exercise, match)
    if not is_knee_work(pattern, {"knee"}):
        return []
    return [
        f"too heavy a set for the user's knee ({knee.source}): knee work stays moderate for a knee that "
        f"complains, {KNEE_WORK_MIN_REPS}-15 controlled reps with a lighter load, lowered slowly to the box or a "
        f"pain-free depth, never {min(reps):g} reps; send reps of {KNEE_WORK_MIN_REPS} or more (e.g. "
        f"{KNEE_WORK_REPS}) with a load to match"
    ]


def _type_problems(exercise: ExerciseFields) -> list[str]:
    kind = exercise.exercise_type
    if kind not in EXERCISE_TYPES:
        return [f"exercise_type '{kind}' is not one of {', '.join(EXERCISE_TYPES)}"]
    problems: list[str] = []
    required = REQUIRED_FIELDS[kind]
    missing = [name for name in required if _is_missing(getattr(exercise, name))]
    if missing:
        problems.append(f"missing {', '.join(missing)} (a {kind} exercise needs {', '.join(required)})")
    for name in ("sets", "rounds", "work_sec"):
        value = getattr(exercise, name, None)
        if value is not None and value < 1:
            problems.append(f"{name} must be ≥ 1, got {value}")
    if exercise.rest_sec is not None and exercise.rest_sec < 0:
        problems.append(f"rest_sec must be ≥ 0, got {exercise.rest_sec}")
    for name in ("sets", "reps", "load_each", "rest_sec", "hold_sec", "duration_min", "distance", "rounds"):
        too_large = _above_limit(name, getattr(exercise, name))
        if too_large:
            problems.append(too_large)
    too_long = _above_limit("work_sec", exercise.work_sec)
    if too_long:
        problems.append(too_long)
    for name, minimum in (("duration_min", 0.0), ("distance", 0.0)):
        value = getattr(exercise, name)
        if value is not None and not (math.isfinite(value) and value > minimum):
            problems.append(f"{name} must be > 0, got {value}")
    for name, minimum in (("reps", 1), ("hold_sec", 1), ("load_each", 0)):
        values = getattr(exercise, name)
        if not values:
            continue
        bad = [value for value in values if not (math.isfinite(value) and value >= minimum)]
        if bad:
            problems.append(f"{name} values must be ≥ {minimum}, got {_numbers(bad)}")
        if kind in ("reps", "hold") and exercise.sets is not None and exercise.sets >= 1:
            applies = name in REQUIRED_FIELDS[kind] or name in OPTIONAL_FIELDS[kind]
            if applies and len(values) != exercise.sets:
                problems.append(f"{name} has {len(values)} values for {exercise.sets} sets (one per set)")
    return problems


def implements_for(
    exercise: ExerciseFields, match: CatalogMatch | None, equipment: Iterable[str]
) -> int | None:
    """How many dumbbells/kettlebells a loaded reps exercise's load_each is for: the model's `implements`, else
    the catalogue's usual count; None when it is not loaded with one (or is unknown and did not say)."""
    if exercise.exercise_type != "reps" or not any(exercise.load_each or ()) or not HANDHELD & set(equipment):
        return None
    if exercise.implements in (1, 2):
        return exercise.implements
    if match is None:
        return None
    return default_implements(name=exercise.exercise_name, slug=match.slug, equipment=equipment)


def fill_implements(exercises: list[dict[str, Any]]) -> None:
    """Give each exercise of a valid workout (dicts) the `implements` its load is for, where the model left it to
    the catalogue (as generate_workout stores it), so "each hand" is said of a pair wherever the workout is shown."""
    for exercise in exercises:
        if exercise.get("implements") is not None or not exercise.get("load_each"):
            continue
        model = Exercise.model_validate(exercise)
        match = find_catalog_match(model.exercise_name)
        implements = implements_for(model, match, effective_equipment(model, match))
        if implements is not None:
            exercise["implements"] = implements


def _implements_problems(
    exercise: ExerciseFields, match: CatalogMatch | None, equipment: list[str]
) -> list[str]:
    """`implements` says one or two dumbbells/kettlebells; "each hand" is shown only for two."""
    implements = exercise.implements
    handheld = sorted(HANDHELD & set(equipment))
    loaded = exercise.exercise_type == "reps" and any(exercise.load_each or ())
    if implements is None:
        # An exercise the catalogue does not know, declared with dumbbells or kettlebells, must say one or two;
        # one whose name alone says so ("Dumbbell Calf Raise") reads as one (never a wrong "each hand").
        if loaded and handheld and match is None and exercise.equipment is not None:
            return [
                f"say how many {handheld[0]} load_each is for: implements: 1 (one) or 2 (a pair, load_each is "
                f"each one's weight)"
            ]
        return []
    if implements not in (1, 2):
        return [f"implements must be 1 (one) or 2 (a pair), got {implements}"]
    if exercise.exercise_type != "reps":
        return [
            f"implements applies to reps exercises only: omit it for this {exercise.exercise_type} exercise"
        ]
    if implements == 2 and not handheld:
        if match is None and not equipment:
            return [
                "implements 2 (a pair) is for dumbbells or kettlebells, and this exercise (not in the catalogue) "
                'names none: give its equipment (e.g. ["dumbbells"]) or omit implements'
            ]
        uses = ", ".join(equipment) or "no equipment"
        return [
            f"implements 2 (a pair) is for dumbbells or kettlebells only, and this exercise uses {uses}: "
            f"omit implements"
        ]
    if implements == 2 and not loaded:
        return [
            "implements 2 (a pair) needs load_each (each one's weight): give load_each or omit implements"
        ]
    return []


def _is_missing(value: object) -> bool:
    return value is None or value == []


def _unit_problems(exercise: ExerciseFields, context: TrainingContext) -> list[str]:
    """Only unknown units: a load or distance in the user's other unit is converted when stored."""
    problems: list[str] = []
    if exercise.load_unit is not None and exercise.load_unit not in ("kg", "lb"):
        problems.append(f"load_unit '{exercise.load_unit}' is not kg or lb")
    if exercise.distance_unit is not None and exercise.distance_unit not in ("km", "mi"):
        problems.append(f"distance_unit '{exercise.distance_unit}' is not km or mi")
    return problems


def _share_sum_problem(kind: str, shares: Iterable[float]) -> str | None:
    values = list(shares)
    if any(not (math.isfinite(value) and 0 <= value <= 1) for value in values):
        return f"{kind} shares must each be between 0 and 1, got {_numbers(values)}"
    total = sum(values)
    if abs(total - 1.0) > SHARE_SUM_TOLERANCE:
        return f"{kind} shares sum to {total:.2f}, not 1.0 (±{SHARE_SUM_TOLERANCE})"
    return None


def _muscle_problems(exercise: ExerciseFields) -> list[str]:
    muscles = exercise.muscles_utilized
    if not muscles:
        return ["muscles_utilized is empty (list the muscles worked, shares summing to 1)"]
    problems: list[str] = []
    unknown = [item.muscle for item in muscles if item.muscle not in MUSCLES]
    if unknown:
        names = ", ".join(f"'{name}'" for name in unknown)
        problems.append(f"unknown muscle {names} (valid: {', '.join(MUSCLES)})")
    repeated = [name for name, count in Counter(item.muscle for item in muscles).items() if count > 1]
    if repeated:
        problems.append(f"muscle {', '.join(repeated)} listed more than once")
    share_problem = _share_sum_problem("muscle", (item.share for item in muscles))
    if share_problem:
        problems.append(share_problem)
    return problems


def _goal_problems(exercise: ExerciseFields) -> list[str]:
    goals = exercise.goals_addressed
    if not goals:
        return ["goals_addressed is empty (list the goals served, shares summing to 1)"]
    problems: list[str] = []
    if any(not item.goal for item in goals):
        problems.append("a goal name is empty")
    repeated = [name for name, count in Counter(item.goal for item in goals).items() if count > 1 and name]
    if repeated:
        problems.append(f"goal {', '.join(repeated)} listed more than once")
    share_problem = _share_sum_problem("goal", (item.share for item in goals))
    if share_problem:
        problems.append(share_problem)
    return problems


def _equipment_problems(equipment: list[str], context: TrainingContext) -> list[str]:
    missing = [slug for slug in equipment if slug not in context.available_equipment]
    if not missing:
        return []
    available = ", ".join(sorted(context.available_equipment))
    where = (
        f"at {context.location_name} (available: {available})"
        if context.location_name
        else "(no current location is set, so only bodyweight exercises are possible)"
    )
    verb = "is" if len(missing) == 1 else "are"
    return [f"needs {', '.join(missing)}, which {verb} not available {where}"]


def _preference_problems(
    exercise: ExerciseFields,
    match: CatalogMatch | None,
    equipment: list[str],
    context: TrainingContext,
) -> list[str]:
    problems: list[str] = []
    names = (exercise.exercise_name, *(match.names if match is not None else ()))
    for preference in context.preferences:
        if excluded_by(preference, names):
            problems.append(f"excluded by the user's preference '{preference.description}'")
        banned = [slug for slug in equipment if slug in set(preference.exclude_equipment or ())]
        if banned:
            problems.append(
                f"uses {', '.join(banned)}, excluded by the user's preference '{preference.description}'"
            )
    return problems


def _numbers(values: Iterable[float]) -> str:
    return "[" + ", ".join(f"{value:g}" for value in values) + "]"
