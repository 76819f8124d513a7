"""What a coach knows before choosing exercises: the catalogue as candidates, the user's facts, and the filters
every exercise must pass.

`load_facts` reads once what a coach must know about the user (units, the location's equipment and weights,
injuries, preferences, muscles still recovering, distribution debt, recent loads) plus the exercise catalogue.
`Filters` say why a candidate may not be used here (equipment, exclusions, injuries, recovery, level);
`choose_load` gives a working load (progressed from the last session, else estimated), rounded by
`workout_coaching`'s one load rule. `tools_app.workout_drafting` composes workouts from these.
"""

from __future__ import annotations

import re
import threading
import time
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from django.db.models.signals import m2m_changed, post_delete, post_save
from django.dispatch import receiver

from datasources_app import distribution, selectors
from datasources_app.catalog import (
    BODY_PARTS,
    BODYWEIGHT,
    MILD_BODY_PARTS,
    BodyPart,
    contraindication,
    exercise_name_key,
    name_covers,
)
from datasources_app.loads import HANDHELD, default_implements
from datasources_app.models import Exercise, Preference
from datasources_app.stats import convert_weight
from tools_app.avoid_words import PreferenceAsk, parse_preference, singular
from tools_app.workout_coaching import (
    LEVEL_RANK,
    Lifter,
    PastLoad,
    first_load_kg,
    is_unilateral,
    lifter_from,
    loaded_implement,
    logged_loads,
    working_load,
)
from tools_app.workout_coaching import round_load as round_to_step
from tools_app.workout_coaching import step_load as step_by
from tools_app.workout_validation import (
    Injury,
    TrainingContext,
    injuries_from,
    training_context_from,
    weights_on_hand,
)

LEG_MUSCLES: tuple[str, ...] = ("Quadriceps", "Hamstrings", "Glutes", "Calves")


def split_words(text: str) -> list[str]:
    """The words of a whitespace-separated list (keeps long vocabularies readable)."""
    return text.split()


LARGE_MUSCLES = frozenset({"Chest", "Back", "Quadriceps", "Hamstrings", "Glutes"})
RECOVERY_HOURS_LARGE = 48
RECOVERY_HOURS_SMALL = 24
HARD_SHARE = distribution.HARD_SHARE
_CONDITIONING_PATTERNS = frozenset({"jump", "locomotion", "cyclical"})
# Movement patterns, from a name's words: two exercises of one pattern for one muscle are redundant.
_PATTERNS = {
    word: word for word in split_words("row press curl squat raise fly extension deadlift lunge crunch")
}
_PATTERNS |= {"pulldown": "vertical pull", "pull": "vertical pull", "chin": "vertical pull"}
_PATTERNS |= {"bridge": "bridge", "thrust": "bridge", "pushdown": "extension", "dip": "dip"}
_PATTERNS |= {"shrug": "shrug", "swing": "swing", "plank": "plank"}
_STEM_OVERRIDES = {
    "running": "run",
    "jogging": "jog",
    "cycling": "bike",
    "biking": "bike",
    "rowing": "rowing",
}
_GENERIC_NAME_WORDS = frozenset(
    split_words(
        "dumbbell barbell kettlebell cable machine band banded smith lever bodyweight weighted seated standing lying"
    )
)
# The lifts a coach reaches for first; everything else is a variation.
STAPLES = frozenset(
    split_words(
        """barbell-back-squat goblet-squat dumbbell-squat leg-press barbell-bench-press dumbbell-bench-press
        incline-dumbbell-press push-up pull-up chin-up lat-pulldown barbell-row one-arm-dumbbell-row
        bent-over-dumbbell-row seated-cable-row romanian-deadlift dumbbell-romanian-deadlift deadlift hip-thrust
        overhead-press dumbbell-shoulder-press seated-dumbbell-shoulder-press dumbbell-lateral-raise barbell-curl
        dumbbell-curl hammer-curl cable-triceps-pushdown rope-triceps-pushdown overhead-dumbbell-triceps-extension
        plank side-plank dead-bug bird-dog lying-leg-curl leg-extension glute-bridge face-pull dumbbell-fly
        cable-crossover close-grip-barbell-bench-press triceps-dip chest-dip walking-lunge bulgarian-split-squat
        dumbbell-calf-raise machine-standing-calf-raise kettlebell-swing hanging-leg-raise russian-twist
        cable-crunch ab-wheel-rollout bicycle-crunch dumbbell-shrug barbell-shrug reverse-crunch mountain-climber
        bodyweight-squat band-pull-apart dumbbell-reverse-fly chest-supported-dumbbell-row single-leg-glute-bridge
        outdoor-run rowing-machine stationary-bike treadmill-run jump-rope high-knees world-s-greatest-stretch
        inchworm cat-cow-stretch standing-hip-circles arm-circles hamstring-stretch figure-four-stretch
        child-s-pose kneeling-hip-flexor-stretch"""
    )
)


# --- Injuries -----------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class InjuryRule:
    """One injured body part: which exercises it rules out is catalogue data (each exercise's movement pattern
    and loaded joints against `datasources_app.catalog.BODY_PARTS`, the table generate_workout checks too);
    this adds what to tell the user about it."""

    key: str
    note: str
    cue: str = ""
    area: frozenset[str] = frozenset()  # muscles whose exercises the rule mostly concerns
    # What a plan's workouts do about it, after "For your knee, " (create_workout_plan tells the user).
    in_a_plan: str = ""
    mild: bool = False  # the user said only mild discomfort in a movement (`catalog.MILD_BODY_PARTS`)
    # `note` for a cardio or HIIT session, which has no leg work to speak of ('' when `note` says it already).
    cardio_note: str = ""

    @property
    def part(self) -> BodyPart:
        if self.mild:
            return MILD_BODY_PARTS[self.key]
        return next(part for part in BODY_PARTS if part.key == self.key)

    def excludes(self, candidate: Candidate) -> bool:
        return (
            contraindication(
                self.part,
                pattern=candidate.movement_pattern,
                joints=candidate.loaded_joints,
                name=candidate.name,
            )
            is not None
        )


INJURY_RULES: tuple[InjuryRule, ...] = (
    InjuryRule(
        key="knee",
        note="kept it knee-friendly (no squats, lunges, jumping or kneeling)",
        cue="Stop any movement that bothers your knee.",
        area=frozenset(LEG_MUSCLES),
        in_a_plan="the workouts leave out squats, lunges, jumping and kneeling",
    ),
    InjuryRule(
        key="lower back",
        note="went easy on your lower back (no deadlifts, good mornings or bent-over rows)",
        cue="Brace your core and keep your back neutral.",
        area=frozenset({"Lower Back", "Hamstrings", "Glutes", "Back"}),
        in_a_plan="the workouts leave out deadlifts, good mornings and bent-over rows",
    ),
    InjuryRule(
        key="shoulder",
        note="kept your shoulder safe (nothing overhead, no dips or upright rows)",
        cue="Stay in a pain-free range for your shoulder.",
        area=frozenset({"Shoulders", "Chest", "Triceps", "Trapezius", "Back"}),
        in_a_plan="the workouts keep nothing overhead, with no dips or upright rows",
    ),
    InjuryRule(
        key="wrist", note="kept load off your wrists", in_a_plan="the workouts keep load off your wrists"
    ),
    InjuryRule(
        key="elbow",
        note="avoided heavy elbow extension work",
        in_a_plan="the workouts avoid heavy elbow extension work",
    ),
    InjuryRule(
        key="ankle",
        note="skipped running, jumping and calf work for your ankle",
        area=frozenset(LEG_MUSCLES),
        in_a_plan="the workouts skip running, jumping and calf work",
    ),
    InjuryRule(
        key="hip",
        note="kept load off your hip",
        area=frozenset({"Glutes", "Hamstrings", "Quadriceps"}),
        in_a_plan="the workouts keep load off your hip",
    ),
    InjuryRule(key="neck", note="kept load off your neck", in_a_plan="the workouts keep load off your neck"),
)
# The same for a part the user has only mild discomfort in (`catalog.MILD_BODY_PARTS`): what stays in, and why.
MILD_INJURY_RULES: dict[str, InjuryRule] = {
    "knee": InjuryRule(
        key="knee",
        note=(
            "kept your knee out of deep bends (no deep squats, lunges or jumping) and kept the leg work "
            "knee-friendly"
        ),
        cue="Stay in the range your knee is happy with: stop short of the depth that bothers it.",
        cardio_note="kept your knee out of jumping and deep bends (no jumps, deep squats or lunges)",
        area=frozenset(LEG_MUSCLES),
        in_a_plan=(
            "the workouts leave out deep squats, lunges and jumping and keep the leg work knee-friendly, in a "
            "pain-free range"
        ),
        mild=True,
    ),
}


def injury_rules(injuries: Iterable[Injury]) -> tuple[InjuryRule, ...]:
    """The rules for the user's injuries, in INJURY_RULES order: the mild one where the user said only mild
    discomfort (`workout_validation.injuries_from` decides)."""
    parts = {injury.part.key: injury.part for injury in injuries}
    return tuple(
        MILD_INJURY_RULES[rule.key]
        if rule.key in MILD_INJURY_RULES and parts[rule.key] is MILD_BODY_PARTS.get(rule.key)
        else rule
        for rule in INJURY_RULES
        if rule.key in parts
    )


# --- Catalogue candidates -----------------------------------------------------------------------------------------
def stem(word: str) -> str:
    """A crude stem: singular, and "-ing" dropped ("running" → "run", "squats" → "squat")."""
    word = word.lower().strip("'")
    if word in _STEM_OVERRIDES:
        return _STEM_OVERRIDES[word]
    word = singular(word)
    if word.endswith("ing") and len(word) > 5:
        base = word[:-3]
        if len(base) > 2 and base[-1] == base[-2]:
            base = base[:-1]
        return base
    return word


def name_stems(text: str) -> frozenset[str]:
    return frozenset(stem(word) for word in re.findall(r"[a-z0-9']+", text.lower().replace("-", " ")))


@dataclass(frozen=True)
class Candidate:
    """A catalogue exercise, flattened for scoring."""

    slug: str
    name: str
    keys: frozenset[str]
    names: tuple[str, ...]  # the name and the catalogue's aliases
    words: frozenset[str]  # stems of the name, slug and aliases (for preferences)
    name_words: frozenset[str]  # distinctive stems of the name (for similarity)
    exercise_type: str
    category: str
    level: str
    mechanic: str
    force: str
    primary: str
    shares: tuple[tuple[str, float], ...]
    equipment: tuple[str, ...]
    movement_pattern: str = ""
    loaded_joints: frozenset[str] = frozenset()

    @property
    def bodyweight(self) -> bool:
        return not self.equipment

    @property
    def loaded_equipment(self) -> str | None:
        return loaded_implement(self.slug, self.equipment)

    @property
    def implements(self) -> dict[str, int]:
        """`implements` for a load on dumbbells/kettlebells (2: a pair, each one's weight), else nothing."""
        if not HANDHELD & set(self.equipment):
            return {}
        return {"implements": default_implements(name=self.name, slug=self.slug, equipment=self.equipment)}

    @property
    def unilateral(self) -> bool:
        return is_unilateral(self.slug)

    @property
    def pattern(self) -> str:
        """The movement, from the name: row, press, curl, vertical pull ... ('' when unknown)."""
        for word in reversed(re.findall(r"[a-z]+", self.name.lower())):
            found = _PATTERNS.get(stem(word))
            if found:
                return found
        return ""

    @property
    def conditioning(self) -> bool:
        """A move that drives the heart rate: plyometrics, cardio, jumps, locomotion, rowing or cycling."""
        return self.category in ("plyometrics", "cardio") or self.movement_pattern in _CONDITIONING_PATTERNS

    def share_of(self, muscles: Iterable[str]) -> float:
        wanted = set(muscles)
        return sum(share for muscle, share in self.shares if muscle in wanted)

    def works_hard(self, muscles: Iterable[str]) -> bool:
        """Whether the exercise is hard work (`distribution.is_hard_work`: not steady cardio) for any of
        `muscles`, as a prime mover."""
        if not distribution.is_hard_work(self.exercise_type):
            return False
        wanted = set(muscles)
        return any(share >= HARD_SHARE for muscle, share in self.shares if muscle in wanted)


def candidate_from(exercise: Exercise) -> Candidate:
    primary = list(exercise.primary_muscles or ())
    secondary = list(exercise.secondary_muscles or ())
    raw: Mapping[str, float] = exercise.muscle_shares or {}
    ordered = [muscle for muscle in dict.fromkeys([*primary, *secondary, *sorted(raw)]) if raw.get(muscle)]
    shares = tuple((muscle, float(raw[muscle])) for muscle in ordered) or tuple(
        (muscle, 1.0 / len(primary)) for muscle in primary
    )
    names = [exercise.name, exercise.slug, *(exercise.aliases or ())]
    return Candidate(
        slug=exercise.slug,
        name=exercise.name,
        keys=frozenset(key for key in (exercise_name_key(name) for name in names) if key),
        names=(exercise.name, *(exercise.aliases or ())),
        words=frozenset().union(*(name_stems(name) for name in names)),
        name_words=frozenset(name_stems(exercise.name) - _GENERIC_NAME_WORDS),
        exercise_type=exercise.exercise_type,
        category=exercise.category,
        level=exercise.level,
        mechanic=exercise.mechanic,
        force=exercise.force,
        primary=primary[0] if primary else (shares[0][0] if shares else ""),
        shares=shares,
        equipment=tuple(sorted(e.slug for e in exercise.equipment.all() if e.slug != BODYWEIGHT)),
        movement_pattern=exercise.movement_pattern,
        loaded_joints=frozenset(exercise.loaded_joints or ()),
    )


# The catalogue as candidates, per process: building it is most of a draft's time (~200 ms for ~870 exercises),
# and it changes only when staff edit it. This process's own edits forget it at once (`forget_catalog`); another
# process's reach drafting within CATALOG_TTL_SECONDS. One thread rebuilds it while the others go on with the copy
# they have (a burst of drafts once built it fifty times at once); with none yet, they wait for that one.
CATALOG_TTL_SECONDS = 60.0
_catalog: tuple[float, tuple[Candidate, ...]] | None = None
_catalog_lock = threading.Lock()


def load_catalog() -> tuple[Candidate, ...]:
    """Every catalogue exercise, sorted by slug (one query plus one for equipment, at most once a
    CATALOG_TTL_SECONDS per process)."""
    cached = _catalog
    if cached is not None and time.monotonic() - cached[0] < CATALOG_TTL_SECONDS:
        return cached[1]
    if cached is not None and not _catalog_lock.acquire(blocking=False):
        return cached[1]  # another thread is reading it again
    if cached is None:
        _catalog_lock.acquire()
    try:
        return _read_catalog()
    finally:
        _catalog_lock.release()


def _read_catalog() -> tuple[Candidate, ...]:
    global _catalog
    cached = _catalog
    if cached is not None and time.monotonic() - cached[0] < CATALOG_TTL_SECONDS:
        return cached[1]  # read by the thread this one waited for
    started = time.monotonic()
    exercises = selectors.search_exercises(limit=100_000)
    candidates = tuple(sorted((candidate_from(exercise) for exercise in exercises), key=lambda c: c.slug))
    if _catalog is cached:  # not forgotten meanwhile (an edit while reading: the next draft reads again)
        _catalog = (started, candidates)
    return candidates


@receiver([post_save, post_delete], sender=Exercise)
@receiver(m2m_changed, sender=Exercise.equipment.through)
def forget_catalog(**kwargs: object) -> None:
    """The catalogue changed in this process (an exercise or its equipment): read it again on the next draft."""
    global _catalog
    _catalog = None


# --- Preferences ----------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Exclusions:
    """What the user does not want, each with a label: excluded names (matched as generate_workout's check
    matches a preference, `catalog.name_covers`: "Push-Ups" covers "Wide-Grip Push-Up"), catalogue name keys,
    single-word stems ("running" rules out "Treadmill Run"), equipment."""

    keys: Mapping[str, str] = field(default_factory=dict)
    stems: Mapping[str, str] = field(default_factory=dict)
    equipment: Mapping[str, str] = field(default_factory=dict)
    names: Mapping[str, str] = field(default_factory=dict)

    def reason(self, candidate: Candidate) -> str | None:
        """The label of the preference that rules `candidate` out, or None."""
        for key in sorted(candidate.keys):
            if key in self.keys:
                return self.keys[key]
        for name, label in self.names.items():
            if any(name_covers(name, own) for own in candidate.names):
                return label
        for word in sorted(candidate.words):
            if word in self.stems:
                return self.stems[word]
        for slug in candidate.equipment:
            if slug in self.equipment:
                return self.equipment[slug]
        return None

    def merged(self, other: Exclusions) -> Exclusions:
        return Exclusions(
            keys={**other.keys, **self.keys},
            stems={**other.stems, **self.stems},
            equipment={**other.equipment, **self.equipment},
            names={**other.names, **self.names},
        )


def _plural_label(phrase: str) -> str:
    """What a note says was left out: "burpee" → "burpees", "jump squat" → "jump squats", "bench press" →
    "bench presses"; a plural or an activity ("pull ups", "jumping", "running") stays as said."""
    label = " ".join(phrase.strip().lower().split())
    if label.endswith(("ss", "sh", "ch", "x")):
        return label + "es"
    return label if label.endswith(("s", "ing")) else label + "s"


def exclusions_from_phrases(
    phrases: Iterable[str], equipment: Iterable[str], *, catalog: Sequence[Candidate]
) -> Exclusions:
    """Exclusions for words the user said ("burpees", "running", "pull ups") and equipment slugs."""
    keys: dict[str, str] = {}
    stems: dict[str, str] = {}
    names: dict[str, str] = {}
    by_key = {key: candidate for candidate in catalog for key in candidate.keys}
    for phrase in phrases:
        label = _plural_label(phrase)
        key = exercise_name_key(phrase)
        if not key:
            continue
        keys[key] = label
        names[phrase] = label
        if key in by_key:
            for other in by_key[key].keys:
                keys.setdefault(other, label)
        words = [word for word in re.findall(r"[a-z0-9']+", phrase.lower()) if len(word) > 2]
        if len(words) == 1:
            stems[stem(words[0])] = label
    return Exclusions(
        keys=keys,
        stems=stems,
        equipment={slug: f"the {slug.replace('_', ' ')}" for slug in equipment},
        names=names,
    )


def exclusions_from_preferences(
    preferences: Iterable[Preference], *, catalog: Sequence[Candidate]
) -> Exclusions:
    """The stored preferences' exclusion lists, plus what their free text says to avoid."""
    result = Exclusions()
    for preference in preferences:
        phrases = [str(name) for name in preference.exclude_exercises or ()]
        equipment = [str(slug) for slug in preference.exclude_equipment or ()]
        if not phrases and not equipment:
            said = parse_preference(preference.description.lower())
            phrases, equipment = list(said.phrases), list(said.equipment)
        result = result.merged(exclusions_from_phrases(phrases, equipment, catalog=catalog))
    return result


# --- Facts about the user ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class TrainingFacts:
    user_id: uuid.UUID | None
    display_name: str
    weight_unit: str
    distance_unit: str
    location_name: str | None
    equipment: frozenset[str]
    weights_kg: Mapping[str, tuple[float, ...]]
    level: str
    body_weight_kg: float
    sex: str
    injuries: tuple[InjuryRule, ...]
    exclusions: Exclusions
    recent_hours: Mapping[str, float]
    debt: Mapping[str, float]
    emphasis: str
    history: Mapping[str, PastLoad]
    catalog: tuple[Candidate, ...]
    location_id: uuid.UUID | None = None  # None: the current location
    # The same reads as generate_workout's check needs them (`workout_validation.load_training_context`), at
    # the current location; None for another location (or no user).
    context: TrainingContext | None = field(default=None, compare=False, repr=False)

    @property
    def lifter(self) -> Lifter:
        return Lifter(
            level=self.level, body_weight_kg=self.body_weight_kg, sex=self.sex, emphasis=self.emphasis
        )

    def recovering(self) -> dict[str, float]:
        """Muscles trained hard too recently to load again: 48 h for large muscles, 24 h for small ones."""
        return {
            muscle: hours
            for muscle, hours in self.recent_hours.items()
            if hours < (RECOVERY_HOURS_LARGE if muscle in LARGE_MUSCLES else RECOVERY_HOURS_SMALL)
        }

    def with_exclusions(self, extra: Exclusions) -> TrainingFacts:
        return replace(self, exclusions=self.exclusions.merged(extra))


def load_facts(
    *,
    user_id: uuid.UUID | None,
    extra: PreferenceAsk | None = None,
    catalog: tuple[Candidate, ...] | None = None,
    location_id: uuid.UUID | None = None,
) -> TrainingFacts:
    """Everything the composer needs about the user, read once: at their current location, or at their
    location `location_id` when given. `extra` adds exclusions said in this chat."""
    catalog = catalog if catalog is not None else load_catalog()
    said = exclusions_from_phrases(extra.phrases, extra.equipment, catalog=catalog) if extra else Exclusions()
    if user_id is None:
        return TrainingFacts(
            user_id=None,
            display_name="",
            weight_unit="kg",
            distance_unit="km",
            location_name=None,
            equipment=frozenset({BODYWEIGHT}),
            weights_kg={},
            level="beginner",
            body_weight_kg=Lifter().body_weight_kg,
            sex="unspecified",
            injuries=(),
            exclusions=said,
            recent_hours={},
            debt={},
            emphasis="hypertrophy",
            history={},
            catalog=catalog,
        )
    profile = selectors.get_profile(user_id=user_id)
    user_settings = selectors.get_settings(user_id=user_id)
    location = (
        selectors.get_location(user_id=user_id, location_id=location_id) if location_id is not None else None
    ) or selectors.current_location(user_id=user_id)
    preferences = selectors.active_preferences(user_id=user_id)
    injuries = injuries_from(
        profile_injuries=profile.injuries if profile is not None else "",
        limitations=(profile.limitations or ()) if profile is not None else (),
        preferences=preferences,
    )
    equipment = frozenset(
        selectors.available_equipment_slugs(
            user_id=user_id, location_id=location.id if location is not None else None
        )
    )
    window = distribution.training_window(user_id=user_id)  # the shares and the recovery: one read
    muscles = distribution.muscle_distribution(user_id=user_id, window=window)
    stored = exclusions_from_preferences(preferences, catalog=catalog)
    lifter = lifter_from(profile, user_id=user_id)
    return TrainingFacts(
        user_id=user_id,
        display_name=(profile.display_name if profile is not None else "") or "",
        weight_unit=user_settings.weight_unit,
        distance_unit=user_settings.distance_unit,
        location_name=location.name if location is not None else None,
        equipment=equipment,
        weights_kg=weights_on_hand(location),
        level=lifter.level,
        body_weight_kg=lifter.body_weight_kg,
        sex=lifter.sex,
        injuries=injury_rules(injuries),
        exclusions=stored.merged(said),
        recent_hours=distribution.recently_trained_muscles(
            user_id=user_id, hours=RECOVERY_HOURS_LARGE, window=window
        ),
        # With nothing logged every goal is "behind"; debt only means something once there is history.
        debt={row.name: row.debt for row in muscles.rows if row.target > 0} if muscles.total_volume else {},
        emphasis=lifter.emphasis,
        history=logged_loads(user_id=user_id, unit=user_settings.weight_unit),
        catalog=catalog,
        location_id=location.id if location is not None and location_id is not None else None,
        context=training_context_from(
            user_settings=user_settings,
            location=location,
            equipment=equipment if location is not None else {BODYWEIGHT},
            preferences=preferences,
            injuries=injuries,
        )
        if location_id is None
        else None,
    )


# --- Filters ---------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Filters:
    """Why a candidate may not be used, checked in this order."""

    equipment: frozenset[str]
    exclusions: Exclusions
    injuries: tuple[InjuryRule, ...]
    avoid_muscles: frozenset[str]  # recovering muscles the user did not ask for
    max_level: int

    def rejection(self, candidate: Candidate) -> str | None:
        """'equipment', 'preference:<label>', 'injury:<key>', 'recovery', 'level', or None when usable."""
        if any(slug not in self.equipment for slug in candidate.equipment):
            return "equipment"
        label = self.exclusions.reason(candidate)
        if label is not None:
            return f"preference:{label}"
        for rule in self.injuries:
            if rule.excludes(candidate):
                return f"injury:{rule.key}"
        if candidate.works_hard(self.avoid_muscles):
            return "recovery"
        if LEVEL_RANK.get(candidate.level, 0) > self.max_level:
            return "level"
        return None


# --- Loads and the facts on a later day ---------------------------------------------------------------------------
def _in_unit(kg: float, unit: str) -> float:
    return convert_weight(kg, from_unit="kg", to_unit=unit)


def round_load(value: float, *, implement: str, facts: TrainingFacts) -> float:
    """`workout_coaching.round_load` for this user: their unit, the weights on hand at the location."""
    return round_to_step(value, unit=facts.weight_unit, gear=implement, weights_kg=facts.weights_kg)


def step_load(load: float, *, implement: str, facts: TrainingFacts, steps: int) -> float:
    """`workout_coaching.step_load` for this user: their unit, the weights on hand at the location."""
    return step_by(load, unit=facts.weight_unit, gear=implement, steps=steps, weights_kg=facts.weights_kg)


@dataclass(frozen=True)
class LoadChoice:
    load: float | None
    note: str


def choose_load(
    candidate: Candidate, facts: TrainingFacts, *, reps: int, scale: float = 1.0, knee_work: bool = False
) -> LoadChoice:
    """The working load for sets of `reps` by `workout_coaching.working_load`: built on the last logged session if
    any, else the first load for this lifter (body weight, experience, sex); `knee_work` a moderate set of `reps`
    (`working_load`'s `knee_reps`)."""
    implement = candidate.loaded_equipment
    if implement is None:
        return LoadChoice(None, "")
    past = facts.history.get(candidate.slug) or facts.history.get(exercise_name_key(candidate.name))
    load, note = working_load(
        gear=implement,
        unit=facts.weight_unit,
        past=past,
        first_kg=first_load_kg(
            gear=implement,
            primary=candidate.primary,
            mechanic=candidate.mechanic,
            unilateral=candidate.unilateral,
            lifter=facts.lifter,
            reps=reps,
            movement_pattern=candidate.movement_pattern,
        ),
        weights_kg=facts.weights_kg,
        scale=scale,
        reps=reps,
        knee_reps=reps if knee_work else None,
        implements=candidate.implements.get("implements", 1),
    )
    return LoadChoice(load, "" if past is None and implement in ("weight_plates", "medicine_ball") else note)


def as_of(facts: TrainingFacts, *, days_ahead: int) -> TrainingFacts:
    """The facts as they will stand on a session `days_ahead` days from now: muscles trained recently have had
    that much longer to recover (a session next week is not cut short by yesterday's legs)."""
    if days_ahead <= 0:
        return facts
    hours = 24.0 * days_ahead
    return replace(facts, recent_hours={muscle: ago + hours for muscle, ago in facts.recent_hours.items()})


# --- An exercise the user names -------------------------------------------------------------------------------------
def catalog_match(name: str, facts: TrainingFacts) -> Candidate | None:
    """The catalogue exercise a name means: by name or alias, else the likeliest one whose words hold all of
    it ("bench" → a bench press the user can do here, a staple before a variation)."""
    key = exercise_name_key(name)
    found = next((c for c in facts.catalog if key in c.keys), None)
    if found is not None:
        return found
    wanted = {stem(word) for word in re.findall(r"[a-z]+", name.lower())}
    matches = [c for c in facts.catalog if wanted and wanted <= c.words]
    available = user_filters(facts)
    return min(
        matches,
        key=lambda c: (
            c.slug not in STAPLES,
            available.rejection(c) is not None,
            not wanted <= name_stems(c.name),
            len(c.name.split()),
            c.slug,
        ),
        default=None,
    )


def user_filters(facts: TrainingFacts, *, equipment: frozenset[str] | None = None) -> Filters:
    """The filters every exercise for this user must pass (no recovery rule: that depends on the request)."""
    return Filters(
        equipment=facts.equipment if equipment is None else equipment,
        exclusions=facts.exclusions,
        injuries=facts.injuries,
        avoid_muscles=frozenset(),
        max_level=max(1, LEVEL_RANK.get(facts.level, 0)),
    )


def rejection_note(candidate: Candidate, reason: str) -> str:
    """Why `candidate` is ruled out, in the user's words, from a `Filters.rejection` reason."""
    if reason == "equipment":
        needs = ", ".join(slug.replace("_", " ") for slug in candidate.equipment)
        return f"it needs {needs}, which you don't have here"
    if reason.startswith("injury:"):
        return f"it isn't a good idea with your {reason.split(':', 1)[1]}"
    if reason.startswith("preference:"):
        return f"you asked me to avoid {reason.split(':', 1)[1]}"
    if reason == "recovery":
        return "the muscles it works are still recovering"
    return "it's a step above your current level"


def why_not(wanted: str, facts: TrainingFacts) -> str | None:
    """Why the exercise the user named cannot be used here, or None when it can."""
    match = catalog_match(wanted, facts)
    if match is None:
        return "I couldn't find it in my exercise list"
    reason = user_filters(facts).rejection(match)
    return rejection_note(match, reason) if reason is not None else None


# Words that start a qualifier of a plan's exercise name ('Box squat to a high box', 'leg press in a pain-free
# range'), not part of the exercise's name.
_QUALIFIER = re.compile(r"\s+(?:to|in|into|onto|with|without|on|at|from|for|if|until|using|off)\s.*$", re.I)


def name_readings(name: str) -> tuple[str, ...]:
    """The ways to read a plan's exercise name, the fullest first: as written, without its brackets ('pull-up
    (assisted if needed)' → 'pull-up'), then without a trailing qualifier ('Box squat to a high box' → 'Box
    squat')."""
    bare = _without_brackets(name)
    return tuple(dict.fromkeys(text for text in (name, bare, _QUALIFIER.sub("", bare)) if text))


_BRACKETS = re.compile(r"\(([^()]*)\)|\[([^\]]*)\]")


def _without_brackets(name: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"\([^()]*\)?|\[[^\]]*\]?", " ", name)).strip(" ,.-")


def name_qualifier(name: str) -> str:
    """What a name says beyond the exercise, from its brackets and a trailing qualifier ('Leg Press (pain-free
    range)' → 'pain-free range', 'Box squat to a high box' → 'to a high box'); "" when nothing."""
    brackets = [" ".join(text.split()) for pair in _BRACKETS.findall(name) for text in pair if text.strip()]
    trailing = _QUALIFIER.search(_without_brackets(name))
    return "; ".join([*brackets, *([trailing.group(0).strip()] if trailing else [])])


def plan_name_match(name: str, facts: TrainingFacts) -> tuple[Candidate | None, bool]:
    """The catalogue exercise a plan's name means (`name_readings`, the fullest that names one) and whether it is
    only the closest one (`closest_match`)."""
    readings = name_readings(name)
    for reading in readings:
        found = catalog_match(reading, facts)
        if found is not None:
            return found, False
    return next((found for text in readings if (found := closest_match(text, facts))), None), True


def closest_match(name: str, facts: TrainingFacts) -> Candidate | None:
    """For a name the catalogue lacks ('GHD hip extension'): the exercise its last two or more words name ('hip
    extension'), the longest that names one; None when none does."""
    words = re.findall(r"[A-Za-z][A-Za-z'-]*", name)
    for start in range(1, len(words) - 1):
        found = catalog_match(" ".join(words[start:]), facts)
        if found is not None:
            return found
    return None
