"""Drafts for the plan sub-agents, from the user's data: what any model that plans is given to start from.

`draft_plan` is the plan builder's plan for the user (their goal, a start next Monday, the equipment of the
plan's location, an endurance goal trained on the bike when their injuries rule out running);
`week_training_days` lays a plan week's sessions on the calendar as it is now; `draft_week_workouts` composes
each of those days' workout for the user (equipment of the plan's location, injuries, preferences, recovery on
the session's day, loads progressed from the last sessions), varies the main lifts between the week's sessions
and follows a strength day's prescription (`day_targets`: the lifts it names, their sets, reps and rests, the
target RPE as a cue; a "… finisher:" clause's work after the day's own lifts, `plan_finishers`), else cuts the
main sets by 40 % in a deload week. The sub-agents' input builder (`trainer_agent.agents.
subagents`) puts them in the request, so every model, the offline one included, decides from them.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field, replace
from datetime import date, timedelta
from typing import Any

from datasources_app import selectors
from datasources_app.catalog import exercise_name_key
from datasources_app.formatters import message_line
from datasources_app.workouts import is_main
from tools_app.formatting import joined
from tools_app.plan_builder import WEEKDAYS, SessionExtra, build_plan, classify_goal
from tools_app.training_facts import (
    Candidate,
    Exclusions,
    TrainingFacts,
    as_of,
    load_facts,
    plan_name_match,
    rejection_note,
    round_load,
    split_words,
    user_filters,
)
from tools_app.workout_coaching import last_time_note, load_for_reps
from tools_app.workout_drafting import (
    DEFAULT_MINUTES,
    EARLIER_THIS_WEEK,
    MAX_EXERCISES,
    OTHER_DAYS_THIS_WEEK,
    PlanDay,
    brief_for_session,
    compose_workout,
    duration_exercise,
    interval_exercise,
    length_note,
    strength_exercise,
)
from tools_app.workout_fit import FIT_OVER, FIT_UNDER, resize
from tools_app.workout_tools import estimate_duration_min
from tools_app.workout_validation import (
    KNEE_WORK_MIN_REPS,
    KNEE_WORK_REST_SEC,
    depth_cues,
    is_knee_work,
    unsafe_named_exercises,
    user_injuries,
)

DEFAULT_WEEKS = 12
DEFAULT_DAYS_PER_WEEK = 3
TRAINING_STATUSES = ("scheduled", "completed")


# --- The plan ---------------------------------------------------------------------------------------------------
def primary_goal(*, user_id: uuid.UUID) -> str:
    """The goal a plan is built around: the first active milestone, else the heaviest category goal."""
    return selectors.goal_text(user_id=user_id).split("; ")[0]


def next_monday(today: date) -> date:
    return today + timedelta(days=(7 - today.weekday()) % 7 or 7)


def _rules_out_running(user_id: uuid.UUID) -> bool:
    """Whether the user's injuries rule out running (the same rule as the workout checks)."""
    return bool(unsafe_named_exercises([("run", "Easy Run")], user_injuries(user_id=user_id)))


def draft_plan(
    *,
    user_id: uuid.UUID,
    goal: str | None = None,
    weeks: int | None = None,
    days_per_week: int | None = None,
    start_date: str | date | None = None,
    preferred_days: list[str] | None = None,
    deload_weeks: list[int] | None = None,
    location_id: uuid.UUID | None = None,
    extras: tuple[SessionExtra, ...] = (),
) -> dict[str, Any]:
    """The fitness_plan answer the plan builder gives for the user, with what they asked to add to every session
    (`extras`). ValueError for inconsistent arguments."""
    goal = goal or primary_goal(user_id=user_id)
    start = start_date or next_monday(selectors.local_today(user_id=user_id))
    # An endurance plan for a user who must not run (a knee, an ankle) trains the same engine on the bike.
    planned_goal = goal
    if classify_goal(goal) == "endurance" and _rules_out_running(user_id):
        planned_goal = f"{goal} (cycling)"
    plan = build_plan(
        goal=planned_goal,
        weeks=weeks or DEFAULT_WEEKS,
        days_per_week=days_per_week or DEFAULT_DAYS_PER_WEEK,
        start_date=date.fromisoformat(str(start)),
        preferred_days=preferred_days or None,
        deload_weeks=deload_weeks,
        extras=extras,
    )
    equipment = selectors.available_equipment_slugs(user_id=user_id, location_id=location_id)
    return {**plan, "goal": goal, "equipment": sorted(equipment)}


# --- A plan week on the calendar ----------------------------------------------------------------------------------
def week_training_days(week: dict[str, Any], calendar: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    """The week's training days: without a calendar the plan's; with one, each scheduled or completed calendar
    day with the plan session of its title (a moved day keeps it), else the one planned for its date, else the
    next unused one."""
    if calendar is None:
        return [dict(day) for day in week["days"]]
    unused = list(week["days"])
    placed: list[dict[str, Any]] = []
    for item in sorted(calendar, key=lambda entry: str(entry["date"])):
        if item.get("status") not in TRAINING_STATUSES:
            continue
        found = next((day for day in unused if day.get("title") == item.get("title")), None)
        found = found or next((day for day in unused if str(day.get("date")) == str(item["date"])), None)
        found = found or (unused[0] if unused else None)
        if found is not None:
            unused.remove(found)
        session = (
            dict(found)
            if found is not None
            else {
                "title": item.get("title"),
                "session": str(item.get("title") or "Full Body"),
                "focus": [],
                "duration_minutes": 45,
                "prescription": "",
            }
        )
        when = date.fromisoformat(str(item["date"]))
        placed.append(session | {"date": when.isoformat(), "weekday": WEEKDAYS[when.weekday()]})
    return placed


# --- The week's workouts ----------------------------------------------------------------------------------------
DELOAD_VOLUME = 0.6  # seed 003: deload weeks cut volume by 40 %
MIN_VARIED_MAIN = 3  # a varied session keeps at least this many main exercises, else it repeats the lifts
NOTHING_FITS = "Nothing in the catalogue fits the equipment here; ask the coach for an alternative."


def draft_week_workouts(
    *,
    user_id: uuid.UUID,
    week: dict[str, Any],
    days: list[dict[str, Any]],
    location_id: uuid.UUID | None,
) -> list[dict[str, Any]]:
    """`days` (a plan week's training days, in date order) each with its drafted workout (`draft`, None when
    nothing fits) and what the draft left out or changed (`draft_notes`)."""
    facts = load_facts(user_id=user_id, location_id=location_id)
    today = selectors.local_today(user_id=user_id)
    deload = bool(week.get("deload"))
    used: dict[str, str] = {}  # main lifts of the week so far: the next session of the same kind varies them
    named_keys = {index: _named_keys(day, facts) for index, day in enumerate(days)}
    drafted: dict[int, dict[str, Any]] = {}
    # Monday to Sunday (a week that starts mid-week varies its later weekdays' lifts from the earlier ones).
    for index, day in sorted(enumerate(days), key=lambda item: _weekday_index(item[1]["date"])):
        on_the_day = as_of(facts, days_ahead=(date.fromisoformat(str(day["date"])) - today).days)
        brief = brief_for_session(str(day["session"]), int(day["duration_minutes"]), deload=deload)
        targets = day_targets(str(day.get("prescription") or "")) if brief.style == "strength" else None
        minutes = brief.minutes or DEFAULT_MINUTES[brief.style or "strength"]
        # The day's finishers and cardio are drafted first: the lifts are chosen for the minutes they leave, and
        # the day, the plan's sets in, is fitted to its minutes once (`PlanDay`).
        plan_day, after_notes = plan_day_for(targets, on_the_day) if targets is not None else (None, [])
        # The lifts a day names are its exercises (the week's variety gives way to them); a day naming three or
        # more, with no sets for a kind of work besides ('accessories 3×8-10'), gets nothing else.
        named = targets.names if targets is not None else ()
        only_named = len(named) >= MIN_VARIED_MAIN and not (targets is not None and targets.by_kind)
        after = {str(exercise["exercise_name"]) for exercise in plan_day.after} if plan_day else set()
        composed = None
        if used and not named:
            composed = compose_workout(
                brief, on_the_day.with_exclusions(Exclusions(keys=dict(used))), plan=plan_day
            )
            if composed is not None and composed.drawn < MIN_VARIED_MAIN:
                composed = None
        if named and not only_named:
            # What fills the day (or stands in for a named lift) is none of the week's other main lifts: those
            # drafted earlier, those the plan gives other days; the day's own named lifts stay.
            others = {
                key: OTHER_DAYS_THIS_WEEK for i, keys in named_keys.items() if i != index for key in keys
            }
            others |= used
            keep = named_keys[index]
            exclusions = Exclusions(keys={key: why for key, why in others.items() if key not in keep})
            on_the_day = on_the_day.with_exclusions(exclusions)
        composed = composed or compose_workout(
            brief, on_the_day, named=named, only_named=only_named, plan=plan_day
        )
        if composed is None:
            drafted[index] = day | {"draft": None, "draft_notes": [NOTHING_FITS]}
            continue
        for exercise in composed.exercises:
            name = str(exercise["exercise_name"])
            if is_main(exercise) and exercise.get("exercise_type") == "reps" and name not in after:
                used[exercise_name_key(name)] = EARLIER_THIS_WEEK
            if deload and targets is None and is_main(exercise) and exercise.get("sets"):
                resize(exercise, max(1, round(int(exercise["sets"]) * DELOAD_VOLUME)))
        notes = [note for note in composed.notes if note]
        if targets is not None and isinstance(composed.followed, Followed):
            # The length is said against the day's minutes, the plan's sets and cardio in.
            notes = [note for note in notes if note != composed.length_note]
            followed = composed.followed.without(composed.dropped)
            if followed.kept_moderate:  # plan_notes says the knee work is kept moderate, and against what
                notes = [
                    composed.knee_rule_note if note == composed.knee_note else note
                    for note in notes
                    if note != composed.knee_note or composed.knee_rule_note
                ]
            notes += plan_notes(targets, followed, composed.named_as)
            notes += after_notes
            notes += day_length_notes(composed.exercises, minutes=minutes)
        drafted[index] = day | {"draft": composed.workout, "draft_notes": notes}
    return [drafted[index] for index in range(len(days))]


def _named_keys(day: dict[str, Any], facts: TrainingFacts) -> frozenset[str]:
    """The catalogue name keys of the lifts a plan day's prescription names."""
    targets = day_targets(str(day.get("prescription") or ""))
    if targets is None:
        return frozenset()
    found = (plan_name_match(name, facts)[0] for name in targets.names)
    return frozenset(key for candidate in found if candidate is not None for key in candidate.keys)


def _weekday_index(value: Any) -> int:
    return date.fromisoformat(str(value)).weekday()


# --- The day's prescription -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class SetsAndReps:
    """'4×5', '3×8-10', '3 sets of 8-12 reps': sets, and the reps (a range when `high` > `low`), for the exercises
    it names ('Bench Press and Romanian Deadlift 4×5') or a kind of them."""

    sets: int
    low: int
    high: int
    applies_to: str  # "named" (`names`), "main lifts" (loaded compounds), "accessories" (the rest) or "all"
    names: tuple[str, ...] = ()
    percent_1rm: float | None = None  # '@ 70% 1RM'
    rest_sec: int | None = None  # 'rest 60-90 s': the middle of the range

    def rest_words(self) -> str:
        return "" if self.rest_sec is None else f" (rest {self.rest_sec} s)"

    def words(self) -> str:
        reps = f"{self.low}" if self.low == self.high else f"{self.low}-{self.high}"
        return f"{self.sets}×{reps}"


@dataclass(frozen=True)
class DayTargets:
    """What a plan day's prescription says the strength work is: sets and reps by named exercises or by kind,
    named extras without sets ('plank'), the target RPE and the % of 1RM."""

    sets_and_reps: tuple[SetsAndReps, ...]
    rpe: float | None
    extras: tuple[str, ...] = ()
    timed: tuple[tuple[str, Timing], ...] = ()  # an extra given by time ('plank 3×30s') → its timing
    # What a "… finisher:" clause names ('core finisher: plank 3×30s, dead bug 3×10'): work after the main work,
    # added to the session (`plan_finishers`), not lifts of the session itself.
    finishers: tuple[str, ...] = ()

    def timing(self, name: str) -> Timing | None:
        """How the plan times the extra `name` ('plank 3×30s' → 3 sets of 30 s), None when it gives no time."""
        return next((timing for extra, timing in self.timed if extra == name), None)

    @property
    def cardio(self) -> tuple[str, ...]:
        """The extras that are cardio on a machine or on foot ('bike intervals', '10 min row', 'easy spin')."""
        return tuple(name for name in self.extras if cardio_slugs(name))

    @property
    def named(self) -> tuple[SetsAndReps, ...]:
        return tuple(item for item in self.sets_and_reps if item.applies_to == "named")

    @property
    def by_kind(self) -> tuple[SetsAndReps, ...]:
        return tuple(item for item in self.sets_and_reps if item.applies_to != "named")

    @property
    def names(self) -> tuple[str, ...]:
        """Every strength exercise the prescription names, in its order (the groups', then the extras; not the
        cardio, which `cardio_finisher` drafts, nor the finishers)."""
        extras = (name for name in self.extras if name not in self.cardio)
        names = dict.fromkeys([*(name for item in self.named for name in item.names), *extras])
        return tuple(name for name in names if name not in self.finishers)

    @property
    def percent_1rm(self) -> float | None:
        return next((item.percent_1rm for item in self.sets_and_reps if item.percent_1rm), None)


@dataclass(frozen=True)
class Timing:
    """How a plan gives an exercise by time: '3×30s' (sets of a 30 s hold, or rounds of 30 s work), '30s hard /
    90s easy' (a round's work and easy parts), '10 min' (the whole block)."""

    sets: int | None = None
    seconds: int | None = None  # the hold of a set, or the hard part of a round
    easy_sec: int | None = None  # the easy part of a round
    minutes: int | None = None


_SECONDS_UNIT = r"(s|secs?|seconds?|mins?|minutes?)\b"
_SETS_X_TIME = re.compile(r"(\d+)\s*[x×]\s*(\d+)\s*" + _SECONDS_UNIT, re.I)
_ROUNDS = re.compile(r"(\d+)\s*(?:rounds|intervals|sprints)\b", re.I)
_HARD_EASY = re.compile(r"(\d+)\s*" + _SECONDS_UNIT + r"[^/\d]*/\s*(\d+)\s*" + _SECONDS_UNIT, re.I)
_MINUTES = re.compile(r"(\d+)\s*(?:mins?|minutes?)\b", re.I)


def _in_seconds(value: str, unit: str) -> int:
    return int(value) * (60 if unit.lower().startswith("m") else 1)


def timing_in(piece: str) -> Timing:
    """The timing a piece gives ('plank 3×30s', '10 min bike intervals 30s hard / 90s easy', '6×30s hard / 90s
    easy'); empty when it gives none."""
    sets = seconds = easy = minutes = None
    if match := _HARD_EASY.search(piece):
        seconds, easy = _in_seconds(match[1], match[2]), _in_seconds(match[3], match[4])
    if match := _SETS_X_TIME.search(piece):
        sets, seconds = int(match[1]), seconds or _in_seconds(match[2], match[3])
    elif match := _ROUNDS.search(piece):
        sets = int(match[1])
    if match := _MINUTES.search(_SETS_X_TIME.sub(" ", piece)):
        minutes = int(match[1])
    return Timing(sets, seconds, easy, minutes)


# Plan words for cardio ('bike intervals', '10 min row', 'easy spin') → the catalogue's entries for it, the likeliest
# first. A name made only of these words and `_CARDIO_WORDS` is cardio ('cable row' is not).
_CARDIO_MACHINES: tuple[tuple[frozenset[str], tuple[str, ...]], ...] = (
    (
        frozenset(["bike", "bikes", "biking", "cycle", "cycling", "spin", "spinning", "airdyne", "assault"]),
        ("stationary-bike", "recumbent-bike"),
    ),
    (frozenset(["row", "rowing", "rower", "erg", "ergometer"]), ("rowing-machine",)),
    (
        frozenset(["run", "runs", "running", "sprint", "sprints", "jog", "jogging", "treadmill"]),
        ("treadmill-run", "outdoor-run"),
    ),
    (frozenset(["elliptical"]), ("elliptical-trainer",)),
    (frozenset(["stair", "stairs", "stairmaster", "stepper", "climber"]), ("stair-climber",)),
    (frozenset(["walk", "walking"]), ("treadmill-walk",)),
)
_CARDIO_WORDS = frozenset(
    split_words(
        """interval intervals easy steady hard machine indoor stationary cardio conditioning finisher zone flush
    recumbent upright air low impact bodyweight"""
    )
)
# A cardio entry that stands in when the one the plan names is not here or not for this user (a knee and running):
# a machine, else bodyweight cardio (a home), low impact when the impact moves are out.
_ANY_CARDIO = (
    "stationary-bike",
    "rowing-machine",
    "elliptical-trainer",
    "recumbent-bike",
    "high-knees",
    "jumping-jacks",
    "marching-high-knees",
    "step-jacks",
)
_IMPACT_CARDIO = frozenset({"high-knees", "jumping-jacks"})


def cardio_slugs(name: str) -> tuple[str, ...]:
    """The catalogue's entries for a plan's cardio wording, the likeliest first; none when `name` is not cardio."""
    words = set(re.findall(r"[a-z]+", name.lower()))
    machines = [slugs for stems, slugs in _CARDIO_MACHINES if words & stems]
    known = set().union(*(stems for stems, _ in _CARDIO_MACHINES)) | _CARDIO_WORDS
    if not words <= known:
        return ()
    if not machines and words & {"cardio", "conditioning"}:
        # 'cardio intervals', 'low-impact cardio finisher': whatever cardio is here, a machine or bodyweight.
        low_impact = {"low", "impact"} <= words
        return tuple(slug for slug in _ANY_CARDIO if not (low_impact and slug in _IMPACT_CARDIO))
    if not machines:
        return ()
    return tuple(dict.fromkeys(slug for slugs in machines for slug in slugs))


_SETS_X_REPS = re.compile(
    r"(\d+)\s*[x×]\s*(\d+)(?![\d.])(?:\s*[-–]\s*(\d+)(?![\d.]))?(?!\s*[-–]\s*\d)(?!\s*(?:s\b|sec|min|%))",
    re.I,
)
_SETS_OF_REPS = re.compile(r"(\d+)\s+(?:sets|rounds)\s+of\b.*?(\d+)(?:\s*[-–]\s*(\d+))?\s+reps", re.I)
_RPE = re.compile(r"\bRPE\s*(\d+(?:\.\d+)?)(?!\s*[-–]\s*\d)", re.I)
_PERCENT_1RM = re.compile(r"(\d+(?:\.\d+)?)\s*%\s*(?:of\s+)?(?:your\s+)?(?:1\s*RM|one[- ]rep max)", re.I)
# A piece that qualifies the work rather than naming an exercise ('RPE 7', '@ 70% 1RM', 'rest 60-90 s').
_MODIFIER = re.compile(
    r"\bRPE\b|%|\b1\s*RM\b|\brests?\b|/\s*10\b|\bpain\b(?!-)|\btempo\b|\d\s*(?:s|sec|min)\b", re.I
)
# 'rest 60-90 s', 'rest 2-3 min', '90 s rest': the rest between sets.
_REST = re.compile(
    r"\brests?\s*(?:of\s*)?(\d+)(?:\s*[-–]\s*(\d+))?\s*(s|secs?|seconds?|mins?|minutes?)\b"
    r"|(\d+)(?:\s*[-–]\s*(\d+))?\s*(s|secs?|seconds?|mins?|minutes?)\s+rests?\b",
    re.I,
)
# Words that say what kind of work a group is, not which exercise ('main lifts', 'full body strength', '5-6
# exercises'): a group or extra made only of these (and numbers) names no exercise.
_KIND_WORDS = frozenset(
    split_words(
        """main lift lifts accessory accessories exercise exercises movement movements work full body strength upper
    lower compound compounds isolation circuit round rounds set sets rep reps easy mobility conditioning intervals
    interval and or of the a at with for to on each then plus short light heavy"""
    )
)


def _names_in(text: str) -> tuple[str, ...]:
    """The exercise names a group's text gives ('Bench Press and Romanian Deadlift', 'Main lifts: Squat'), none
    when it only says a kind of work."""
    names = text.rpartition(":")[2]
    found = []
    for part in re.split(r",|\band\b|&|\+|\bthen\b", names, flags=re.I):
        # A name keeps its brackets ('pull-up (assisted if needed)'): the catalogue match reads past them.
        name = re.sub(r"\s[x×]$", "", part.strip(" .-–—×@\t\n")).strip()
        if (name.startswith("(") and name.endswith(")")) or ")" not in name:
            name = name.lstrip("(")
        if name.endswith(")") and "(" not in name:
            name = name.rstrip(")")
        name = name.strip()
        words = re.findall(r"[a-z]+", name.lower())
        if words and not set(words) <= _KIND_WORDS and not re.search(r"\d", name):
            found.append(name)
    return tuple(found)


# What a timed piece says besides the exercise ('3×30s', '6×30s hard / 90s easy', '10 min', 'finish with a').
_TIMED = re.compile(
    r"\d+(?:\s*[-–x×/]\s*\d+)*\s*(?:s|secs?|seconds?|mins?|minutes?|rounds?)?\b|\b(?:hard|easy|moderate|steady)\b|/",
    re.I,
)
_LEAD_IN = re.compile(r"^(?:(?:finish|finisher|end|then|plus|with|a|an|the|and)\b\s*)+", re.I)
_NOT_AN_EXERCISE = re.compile(r"\bRPE\b|%|\b1\s*RM\b|\brests?\b|/\s*10\b|\bpain\b(?!-)|\btempo\b", re.I)


def _timed_names(piece: str) -> list[str]:
    """The exercises a piece gives by time ('plank 3×30s', 'finish with a plank and 10 min bike intervals'),
    none for a piece that only qualifies the work ('rest 90 s', 'RPE 7', 'tempo 3 s down')."""
    if _NOT_AN_EXERCISE.search(piece):
        return []
    names = (" ".join(_LEAD_IN.sub("", name).split()) for name in _names_in(_TIMED.sub(" ", piece)))
    return [name for name in names if name]


def _rest_in(text: str) -> int | None:
    """The rest in seconds `text` gives ('rest 2-3 min' → 150), the middle of a range; None when none."""
    match = _REST.search(text)
    if match is None:
        return None
    low, high, unit = (match[1], match[2], match[3]) if match[1] else (match[4], match[5], match[6])
    seconds = (int(low) + int(high or low)) / 2 * (60 if unit.lower().startswith("m") else 1)
    return int(seconds) if 0 < seconds <= 600 else None


# A clause of work added after the main work: 'core finisher: plank 3×30s', 'finisher: farmer carry 3×40s'.
_FINISHER = re.compile(r"^\s*(?:[a-z]+\s+)?finisher\s*:", re.I)
_DAY_CLAUSES = re.compile(r"[;\n]|(?<!\be\.g)(?<!\bi\.e)(?<!\betc)(?<!\bvs)(?<!\bapprox)\.\s+", re.IGNORECASE)


def day_targets(prescription: str) -> DayTargets | None:
    """The sets, reps and RPE a plan day's prescription gives its strength work, by the exercises it names ('Bench
    Press and Romanian Deadlift 4×5 @ 70% 1RM, RPE 7; Barbell Row, Hip Thrust 3×8-10; plank') or by kind ('main
    lifts 4×5 @ 70% 1RM, RPE 7; accessories 3×8-10', '4x6 main lifts at RPE 7, 3x8-10 accessories', '5-6
    exercises × 3 sets of 8-12 reps, RPE 7'); None when it gives none."""
    found: list[SetsAndReps] = []
    extras: list[str] = []
    timed: list[tuple[str, Timing]] = []
    finishers: list[str] = []
    # Clauses end at ';', a line or a sentence ('core: ab wheel. Main lifts 4×5'), never inside a number or after
    # an abbreviation ('pull-up (e.g. band) 3×8').
    # The last group, which a following '@ 70% 1RM' or rest qualifies ('… 4×5 @ 70% 1RM. Rest 2-3 min').
    last: int | None = None
    for clause in _DAY_CLAUSES.split(prescription):
        groups_before, extras_before = len(found), len(extras)
        pending: list[str] = []  # pieces before the clause's next sets×reps: the names it applies to
        listing = False  # the last group's names follow it ('accessories 3×8-10: leg curl, plank')
        for piece in clause.split(","):
            match = _SETS_OF_REPS.search(piece) or _SETS_X_REPS.search(piece)
            if match is None:
                percent = _PERCENT_1RM.search(piece)
                if percent and last is not None:
                    found[last] = replace(found[last], percent_1rm=float(percent[1]))
                rest = _rest_in(piece)
                if rest is not None and last is not None:
                    found[last] = replace(found[last], rest_sec=rest)
                if _MODIFIER.search(piece):
                    # 'plank 3×30s', '10 min bike intervals': an exercise given by time, not by sets and reps,
                    # is still one of the day's (kept, or the notes say why not); 'rest 90 s' names none.
                    given_by_time = _timed_names(piece)
                    extras += given_by_time
                    timed += [(name, timing_in(piece)) for name in given_by_time]
                    continue
                if listing and last is not None and (more := _names_in(piece)):
                    found[last] = replace(found[last], names=(*found[last].names, *more))
                    continue
                pending.append(piece)
                continue
            head = ", ".join([*pending, piece[: match.start()]])
            pending = []
            label = f"{head} {piece[match.end() :]}".lower()
            sets, low = int(match[1]), int(match[2])
            high = int(match[3]) if match[3] else low
            if not (1 <= sets <= 10 and 1 <= low <= high <= 30):
                continue
            tail = piece[match.end() :]
            listing = tail.lstrip().startswith(":")
            names = _names_in(tail) if listing else _names_in(head)
            kind = (
                "named"
                if names
                else "accessories"
                if "accessor" in label
                else "main"
                if "main" in label
                else "all"
            )
            percent = _PERCENT_1RM.search(piece)
            found.append(
                SetsAndReps(
                    sets,
                    low,
                    high,
                    "main lifts" if kind == "main" else kind,
                    names,
                    float(percent[1]) if percent else None,
                    _rest_in(piece),
                )
            )
            last = len(found) - 1
        extras += [name for piece in pending for name in _names_in(piece)]
        if _FINISHER.match(clause):
            named = [name for item in found[groups_before:] for name in item.names]
            named += [name for name in extras[extras_before:] if not cardio_slugs(name)]
            finishers += sorted(named, key=lambda name: clause.lower().find(name.lower()))  # the plan's order
    if any(item.applies_to == "accessories" for item in found):
        found = [
            replace(item, applies_to="main lifts") if item.applies_to == "all" else item for item in found
        ]
    rpe = _RPE.search(prescription)
    if not found and rpe is None and not extras:
        return None
    return DayTargets(
        tuple(found), float(rpe[1]) if rpe else None, tuple(extras), tuple(timed), tuple(finishers)
    )


@dataclass(frozen=True)
class Followed:
    """How far a draft follows its day's prescription, by the drafted exercise's name: those that do, each as
    '<name> <sets>×<reps>' (a hold or a named exercise the plan gives no sets by its name), and the main reps
    exercises the plan gives no sets for (added to fill the session)."""

    exercises: dict[str, str] = field(default_factory=dict)
    unprescribed: dict[str, str] = field(default_factory=dict)
    added: dict[str, str] = field(
        default_factory=dict
    )  # on a day that names its lifts, the others, with the sets and reps of their kind
    # Knee work the plan gives a strength set for, kept moderate for the user's knee: '<name> 4×12' and the plan's reps.
    kept_moderate: dict[str, tuple[str, str]] = field(default_factory=dict)
    # The exercises whose rest is set (by the plan, or the knee rule's moderate set): the day's fit keeps it.
    rests_given: list[str] = field(default_factory=list)

    def without(self, names: Collection[str]) -> Followed:
        """The same, without the exercises of these names (left out to fit the day's minutes)."""

        def kept(entries: dict[str, Any]) -> dict[str, Any]:
            return {name: words for name, words in entries.items() if name not in names}

        return replace(
            self,
            exercises=kept(self.exercises),
            unprescribed=kept(self.unprescribed),
            added=kept(self.added),
            kept_moderate=kept(self.kept_moderate),
        )


def follow_targets(
    exercises: list[dict[str, Any]], targets: DayTargets, facts: TrainingFacts, named_as: dict[str, str]
) -> Followed:
    """Give the draft's main reps exercises the day's sets, reps and rest (a named exercise, or its stand-in, its
    own group's, else its kind's like the others; a load moved to match the new reps, by the Epley estimate, so
    the effort stays what the load was chosen for) and its target RPE as a cue."""
    by_key = {key: candidate for candidate in facts.catalog for key in candidate.keys}
    groups = {exercise_name_key(name): item for item in targets.named for name in item.names}
    followed: dict[str, str] = {}
    unprescribed: dict[str, str] = {}
    added: dict[str, str] = {}
    kept_moderate: dict[str, tuple[str, str]] = {}
    injured = {rule.key for rule in facts.injuries}
    rests_given: list[str] = []
    for exercise in exercises:
        if not is_main(exercise) or exercise.get("exercise_type") not in ("reps", "hold"):
            continue
        name = str(exercise["exercise_name"])
        candidate = by_key.get(exercise_name_key(name))
        named = named_as.get(name)
        if exercise.get("exercise_type") == "hold" or not exercise.get("reps"):
            if named is not None:
                followed[name] = _follow_hold(exercise, targets.timing(named))
            continue
        rule = groups.get(exercise_name_key(named)) if named is not None else None
        if rule is None:  # 'Box squat, bench press; core: ab wheel. Main lifts 4×5; accessories 3×8-10'
            lift = candidate is not None and candidate.mechanic == "compound" and candidate.loaded_equipment
            kind = "main lifts" if lift else "accessories"
            rule = next((item for item in targets.by_kind if item.applies_to in (kind, "all")), None)
        if rule is not None:
            before = int(exercise["reps"][0])
            reps = before if rule.low <= before <= rule.high else (rule.low + rule.high) // 2
            knee_work = candidate is not None and is_knee_work(candidate.movement_pattern, injured)
            moderate = knee_work and reps < KNEE_WORK_MIN_REPS
            if moderate:
                # A strength set of knee work for a knee that complains: the top of the plan's range when it
                # reaches a moderate set, else the drafted moderate set, in the plan's number of sets; the knee
                # rule's rest either way, which the day's fit keeps.
                exercise["rest_sec"] = KNEE_WORK_REST_SEC
                rests_given.append(name)
                if rule.high >= KNEE_WORK_MIN_REPS:
                    reps = rule.high
                else:
                    resize(exercise, rule.sets)
                    kept_moderate[name] = (f"{name} {rule.sets}×{before}", rule.words())
                    continue
            loads = exercise.get("load_each")
            resize(exercise, rule.sets)
            exercise["reps"] = [reps] * rule.sets
            if loads and reps != before and candidate is not None and candidate.loaded_equipment:
                moved = load_for_reps(float(loads[0]), from_reps=before, to_reps=reps)
                load = round_load(moved, implement=candidate.loaded_equipment, facts=facts)
                exercise["load_each"] = [load] * rule.sets
                _say_last_time(exercise, candidate, facts, before=(float(loads[0]), before), knee=knee_work)
            if (
                rule.rest_sec is not None and not moderate
            ):  # knee work's moderate set keeps the knee rule's rest
                exercise["rest_sec"] = rule.rest_sec
                rests_given.append(name)
            elif reps <= 6:
                exercise["rest_sec"] = max(int(exercise.get("rest_sec") or 0), 120)
            entry = f"{name} {rule.sets}×{reps}{'' if moderate else rule.rest_words()}"
            (added if named is None and targets.names else followed)[name] = entry
        elif named is not None:
            followed[name] = name
        else:
            unprescribed[name] = name
        if targets.rpe is not None:
            cue = f"Work at about RPE {targets.rpe:g}."
            exercise["notes"] = f"{exercise.get('notes') or ''} {cue}".strip()
    return Followed(followed, unprescribed, added, kept_moderate, rests_given)


def _say_last_time(
    exercise: dict[str, Any],
    candidate: Candidate,
    facts: TrainingFacts,
    *,
    before: tuple[float, int],
    knee: bool,
) -> None:
    """The draft's "last time" words for the load and reps it had (`workout_coaching.last_time_note`), said again
    for the ones the plan gave it: "Up from 65 kg × 6 last time." beside 3×10 @ 60 kg reads wrong, "65 kg × 6 last
    time; 60 kg for 10 reps." says what happened."""
    past = facts.history.get(candidate.slug) or facts.history.get(exercise_name_key(candidate.name))
    if past is None:
        return
    implements = int(exercise.get("implements") or 1)
    unit = facts.weight_unit
    said = last_time_note(past, load=before[0], reps=before[1], unit=unit, implements=implements, knee=knee)
    now = last_time_note(
        past,
        load=float(exercise["load_each"][0]),
        reps=int(exercise["reps"][0]),
        unit=unit,
        implements=implements,
        knee=knee,
    )
    exercise["reasoning"] = str(exercise.get("reasoning") or "").replace(said, now)


def _follow_hold(exercise: dict[str, Any], timing: Timing | None) -> str:
    """Give a hold the plan times ('plank 3×30s') its sets and seconds; '<name> 3×30 s', or its name alone when
    the plan gives it no time."""
    name = str(exercise["exercise_name"])
    if timing is None or timing.seconds is None or exercise.get("exercise_type") != "hold":
        return name
    sets = timing.sets or int(exercise.get("sets") or 1)
    resize(exercise, sets)
    exercise["hold_sec"] = [timing.seconds] * sets
    return f"{name} {sets}×{timing.seconds} s"


def plan_notes(targets: DayTargets, followed: Followed, named_as: dict[str, str]) -> list[str]:
    """What the draft's notes say of the prescription: what it follows, never more (the composer's notes say
    which named exercise was swapped or left out, and why; these name them again), what the plan gives no sets
    for, and the % 1RM it does not follow."""
    notes: list[str] = []
    effort = f" at about RPE {targets.rpe:g}" if targets.rpe is not None else ""
    kept = {exercise_name_key(name) for name in named_as.values()}
    missing = [name for name in targets.names if exercise_name_key(name) not in kept]
    whole = not missing and not followed.unprescribed and not followed.added
    if targets.names:
        if followed.exercises and whole:
            notes.append(
                f"I followed the plan's lifts, sets and reps for the day: {joined(list(followed.exercises.values()))}"
            )
        elif followed.exercises:
            notes.append(
                f"I followed the plan's lifts, sets and reps for {joined(list(followed.exercises.values()))}"
            )
        if missing:
            notes.append(f"I couldn't follow the plan for {joined(missing)}, as said above")
        if followed.added:
            notes.append(
                f"To fill the session I added {joined(list(followed.added.values()))}, as the plan sets that kind of work"
            )
        if effort:
            notes.append(f"Every main exercise is{effort}")
    elif followed.exercises:
        kinds = "; ".join(f"{item.applies_to} {item.words()}{item.rest_words()}" for item in targets.by_kind)
        if whole:
            notes.append(f"I followed the plan's sets, reps and effort for the day ({kinds}{effort})")
        else:
            notes.append(
                f"I followed the plan's sets and reps ({kinds}) for {joined(list(followed.exercises.values()))}"
            )
            if effort:
                notes.append(f"Every main exercise is{effort}")
    elif effort:
        notes.append(f"I followed the plan's effort for the day:{effort}")
    for lift, plan_words in followed.kept_moderate.values():
        notes.append(
            f"I kept {lift} rather than the plan's {plan_words}: knee work stays moderate for your knee (a lighter "
            "load for more reps, lowered slowly)"
        )
    if followed.unprescribed:
        notes.append(
            f"The plan gives no sets and reps for {joined(list(followed.unprescribed.values()))}: I added them"
        )
    if targets.percent_1rm is not None:
        notes.append(
            f"The loads come from your logged sessions (a careful first-time start where there are none), not "
            f"{targets.percent_1rm:g}% of a 1RM: I have no 1RM on record for you"
        )
    return notes


# --- The day's finishers -----------------------------------------------------------------------------------------
def plan_day_for(targets: DayTargets, facts: TrainingFacts) -> tuple[PlanDay, list[str]]:
    """What a strength day's prescription asks of its draft besides its named lifts (`PlanDay`): its sets, reps and
    rests (`follow_targets`), its finishers and its cardio at the end; and the notes that say which finishers and
    cardio it keeps, swaps or leaves out."""
    finishers, finisher_notes = plan_finishers(targets, facts)
    cardio, cardio_notes = plan_cardio(targets, facts)

    def follow(main: list[dict[str, Any]], named_as: Mapping[str, str]) -> Followed:
        return follow_targets(main, targets, facts, dict(named_as))

    plan_day = PlanDay(
        follow=follow,
        after=tuple(exercise for exercise, _ in finishers) + tuple(cardio),
        finishers=tuple(candidate for _, candidate in finishers),
    )
    return plan_day, finisher_notes + cardio_notes


def plan_finishers(
    targets: DayTargets, facts: TrainingFacts
) -> tuple[list[tuple[dict[str, Any], Candidate]], list[str]]:
    """The day's finisher work ('core finisher: plank 3×30s, dead bug 3×10') as exercises, each with its catalogue
    entry, with the plan's sets and reps or holds; the notes say what was added, and what was left out and why.
    Cardio is `plan_cardio`'s."""
    filters = user_filters(facts)
    groups = {exercise_name_key(name): item for item in targets.named for name in item.names}
    finishers: list[tuple[dict[str, Any], Candidate]] = []
    added: list[str] = []
    notes: list[str] = []
    for name in targets.finishers:
        candidate = plan_name_match(name, facts)[0]
        reason = filters.rejection(candidate) if candidate is not None else None
        if candidate is None or reason is not None:
            why = (
                rejection_note(candidate, reason) if candidate and reason else "I couldn't find it in my list"
            )
            notes.append(f"I left out the plan's {name} at the end: {why}")
            continue
        exercise = strength_exercise(
            candidate, facts, rank=MAX_EXERCISES, light=True, intensity=None, why=f"From your plan ({name})."
        )
        rule = groups.get(exercise_name_key(name))
        if exercise["exercise_type"] == "reps" and rule is not None:
            resize(exercise, rule.sets)
            exercise["reps"] = [rule.high] * rule.sets
            added.append(f"{exercise['exercise_name']} {rule.sets}×{rule.high}")
        else:
            added.append(_follow_hold(exercise, targets.timing(name)))
        finishers.append((exercise, candidate))
    if added:
        notes.insert(0, f"I ended with the plan's finisher: {joined(added)}")
    return finishers, notes


# --- The day's cardio -------------------------------------------------------------------------------------------
DEFAULT_CARDIO_MINUTES = 10  # 'easy spin', 'bike intervals': a plan that gives no time


def plan_cardio(targets: DayTargets, facts: TrainingFacts) -> tuple[list[dict[str, Any]], list[str]]:
    """The day's cardio ('10 min bike intervals 30s hard / 90s easy', 'easy spin') as exercises on the catalogue's
    machine for it here with the plan's timing (another machine when this one is not here or not for the user: a
    knee and running; bodyweight cardio where there is no machine), and the notes that say what was kept, swapped
    or left out."""
    cardio: list[dict[str, Any]] = []
    notes: list[str] = []
    filters = user_filters(facts)
    by_slug = {candidate.slug: candidate for candidate in facts.catalog}
    for name in targets.cardio:
        wanted = [by_slug[slug] for slug in cardio_slugs(name) if slug in by_slug]
        others = [by_slug[slug] for slug in _ANY_CARDIO if slug in by_slug and by_slug[slug] not in wanted]
        usable = next((c for c in [*wanted, *others] if filters.rejection(c) is None), None)
        first = wanted[0] if wanted else None
        why = rejection_note(first, filters.rejection(first) or "equipment") if first is not None else ""
        if usable is None:
            notes.append(f"I left out {name}: {why or 'no cardio machine here fits'}")
            continue
        exercise, words = _cardio_exercise(usable, targets.timing(name) or Timing(), facts, plan_name=name)
        cardio.append(exercise)
        if usable in wanted:
            notes.append(f"I kept the plan's {name} on the {usable.name}: {words}")
        else:
            notes.append(
                f"{name} swapped for the {usable.name} ({words}): for the {first.name if first else name}, {why}"
            )
    return cardio, notes


# --- The day's length -------------------------------------------------------------------------------------------
def day_length_notes(exercises: list[dict[str, Any]], *, minutes: int) -> list[str]:
    """What the user should know of the day's length: that it runs over or short of the day's minutes."""
    estimate = estimate_duration_min(exercises)
    if estimate > minutes + FIT_OVER:
        return [
            f"it comes to about {estimate} min, over the {minutes} planned: the plan's lifts, sets and cardio "
            "take that long"
        ]
    if estimate < minutes - FIT_UNDER:
        return [length_note(estimate, minutes)]
    return []


def _cardio_exercise(
    candidate: Candidate, timing: Timing, facts: TrainingFacts, *, plan_name: str
) -> tuple[dict[str, Any], str]:
    """The plan's cardio as an exercise on `candidate`: intervals (hard and easy seconds, rounds from the sets or
    the minutes) or a steady block of the plan's minutes; and how it reads ('5 rounds of 30 s hard / 90 s easy')."""
    why = f"From your plan ({plan_name})."
    if timing.easy_sec is not None or "interval" in plan_name.lower() or (timing.sets and timing.seconds):
        work = timing.seconds or 30
        easy = timing.easy_sec or work
        minutes = timing.minutes or DEFAULT_CARDIO_MINUTES
        rounds = timing.sets or max(1, round(minutes * 60 / (work + easy)))
        exercise = interval_exercise(candidate, work_sec=work, rest_sec=easy, why=why)
        exercise["rounds"] = rounds
        return exercise, f"{rounds} rounds of {work} s hard / {easy} s easy"
    minutes = timing.minutes or DEFAULT_CARDIO_MINUTES
    exercise = duration_exercise(candidate, facts, minutes=minutes, why=f"{why} An easy, steady pace.")
    given = "" if timing.minutes else " (the plan gives no time)"
    return exercise, f"{minutes} min{given}"


# --- A drafted day written out, as the week's sub-agents are given it -------------------------------------------
_DAY_SECTIONS = {"warmup": "Warm-Up", "cooldown": "Cool Down"}
UNSAFE_DRAFT = "The drafted workout was left out: {problem}"


def draft_markdown(day: dict[str, Any]) -> str | None:
    """A drafted training day as the week's markdown workout (`# Title`, `## Warm-Up`, `## Main Workout`,
    `## Cool Down`), each exercise by the app's one rendering; a lift the draft keeps short of a deep
    bend carries its depth in its name ("Leg Press (pain-free range): 3×12 @ 142.5kg (rest 75s)"), so that the text
    passes the week's check as the draft passes generate_workout's. None without a draft."""
    draft = day.get("draft")
    if not draft:
        return None
    sections: dict[str, list[dict[str, Any]]] = {"Warm-Up": [], "Main Workout": [], "Cool Down": []}
    for exercise in sorted(draft.get("exercises") or [], key=lambda item: item.get("order") or 0):
        role = str((exercise.get("group") or {}).get("type"))
        name = str(exercise.get("exercise_name") or "")
        cues = depth_cues(str(exercise.get("notes") or ""))
        if cues and not depth_cues(name):
            exercise = exercise | {"exercise_name": f"{name} ({cues})"}
        sections[_DAY_SECTIONS.get(role, "Main Workout")].append(exercise)
    lines = [f"# {day.get('title') or draft.get('title') or day.get('session')}"]
    for heading, exercises in sections.items():
        lines += [f"## {heading}", *(message_line(n, e) for n, e in enumerate(exercises, start=1))]
    # The draft's notes stay beside it (`draft_notes`): they name lifts with their numbers and no depth cue.
    return "\n".join(lines)


def written_out_days(days: list[dict[str, Any]], *, user_id: uuid.UUID) -> list[dict[str, Any]]:
    """Each drafted day with its `markdown` (`draft_markdown`), offered only when it passes the week's check of the
    exercises its text names against the user's injuries (`unsafe_named_exercises`): a draft that would be refused
    is not offered (no draft, no markdown, a note saying why), so copying what the app drafted is never refused."""
    injuries = user_injuries(user_id=user_id)
    written: list[dict[str, Any]] = []
    for day in days:
        markdown = draft_markdown(day)
        problems = unsafe_named_exercises([(str(day.get("weekday")), markdown)], injuries) if markdown else []
        if problems:
            note = UNSAFE_DRAFT.format(problem=problems[0].split(": ", 1)[-1])
            day = day | {"draft": None, "draft_notes": [*day.get("draft_notes", []), note]}
            markdown = None
        written.append(day | {"markdown": markdown})
    return written


def fresh_week_days(
    *,
    user_id: uuid.UUID,
    plan: dict[str, Any],
    week: int,
    calendar: list[dict[str, Any]] | None,
    location_id: uuid.UUID | None,
) -> list[dict[str, Any]]:
    """The plan week's training days on the calendar as it is now, each drafted from the user's injuries,
    preferences and equipment as they are now and written out (`written_out_days`); [] for a week the plan lacks."""
    found = next((item for item in plan.get("weeks") or [] if item.get("week") == week), None)
    if found is None:
        return []
    days = draft_week_workouts(
        user_id=user_id, week=found, days=week_training_days(found, calendar), location_id=location_id
    )
    return written_out_days(days, user_id=user_id)
