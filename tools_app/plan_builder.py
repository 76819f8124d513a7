"""A deterministic multi-week training plan: `build_plan(...)` is a pure function of its arguments.

The goal text picks a plan type (strength, hypertrophy, endurance, fat_loss or general) by keywords; the
number of days per week picks the split (full body, upper/lower, push/pull/legs, ...; easy/interval/tempo/
long sessions for endurance). Every week progresses on the one before it (progressive overload: more load
and effort for strength, more sets and effort for hypertrophy, ~10 % more time for endurance), except the
deload weeks (every 5th week by default: weeks 5 and 10 of a 12-week plan), which drop volume to about
60 % and effort to RPE 6 before the next build block resumes where the last one stopped.

The result is plain JSON: {"goal_type", "split", "weekdays", "deload_weeks", "progression", "weeks": [{"week",
"phase", "deload", "target_rpe", "volume_factor", "days": [{"day", "date", "weekday", "title", "session",
"focus", "duration_minutes", "prescription", "notes"}]}]}. `datasources_app.services.create_workout_plan`
stores it and puts each dated day on the calendar. What the user asked to add to every session (`extras`: core
work, a cardio finisher) ends each session's prescription as a "… finisher:" clause. Its "progression" is written from the weeks
(`describe_progression`), so it never promises a value or a deload week the weeks do not have.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator

from tools_app.formatting import joined

GoalType = Literal["strength", "hypertrophy", "endurance", "fat_loss", "general"]

MAX_WEEKS = 52
DELOAD_EVERY = 5
WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_WEEKDAY_NAMES = {name.lower(): index for index, name in enumerate(WEEKDAYS)} | {
    name: index
    for index, name in enumerate(
        ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
    )
}
# Which weekdays to train on for each number of days, spread to leave rest days between sessions.
DEFAULT_WEEKDAYS: dict[int, tuple[int, ...]] = {
    1: (0,),
    2: (0, 3),
    3: (0, 2, 4),
    4: (0, 1, 3, 4),
    5: (0, 1, 2, 3, 4),
    6: (0, 1, 2, 3, 4, 5),
    7: (0, 1, 2, 3, 4, 5, 6),
}

_KEYWORDS: tuple[tuple[GoalType, tuple[str, ...]], ...] = (
    (
        "endurance",
        (
            "run",
            "5k",
            "10k",
            "marathon",
            "endurance",
            "cardio",
            "cycl",
            "ride",
            "swim",
            "race",
            "aerobic",
            "stamina",
        ),
    ),
    ("strength", ("strength", "strong", "powerlift", "1rm", "squat", "bench", "deadlift", "lift heavier")),
    ("hypertrophy", ("hypertrophy", "muscle", "size", "bulk", "mass", "bodybuild")),
    ("fat_loss", ("fat", "lose weight", "weight loss", "lean", "cut", "tone", "toning")),
)

_FOCUS: dict[str, tuple[str, ...]] = {
    "Full Body": ("Quadriceps", "Chest", "Back", "Hamstrings", "Shoulders", "Abs"),
    "Upper": ("Chest", "Back", "Shoulders", "Biceps", "Triceps"),
    "Lower": ("Quadriceps", "Hamstrings", "Glutes", "Calves", "Abs"),
    "Push": ("Chest", "Shoulders", "Triceps"),
    "Pull": ("Back", "Biceps", "Trapezius", "Forearms"),
    "Legs": ("Quadriceps", "Hamstrings", "Glutes", "Calves"),
    "Conditioning": ("Quadriceps", "Glutes", "Abs", "Shoulders"),
    "Active Recovery": (),
}

_STRENGTH_SPLITS: dict[int, tuple[str, ...]] = {
    1: ("Full Body",),
    2: ("Full Body A", "Full Body B"),
    3: ("Full Body A", "Full Body B", "Full Body C"),
    4: ("Upper A", "Lower A", "Upper B", "Lower B"),
    5: ("Upper", "Lower", "Push", "Pull", "Legs"),
    6: ("Push A", "Pull A", "Legs A", "Push B", "Pull B", "Legs B"),
    7: ("Push A", "Pull A", "Legs A", "Push B", "Pull B", "Legs B", "Active Recovery"),
}
_HYPERTROPHY_SPLITS = {**_STRENGTH_SPLITS, 3: ("Push", "Pull", "Legs")}
_FAT_LOSS_SPLITS: dict[int, tuple[str, ...]] = {
    1: ("Full Body Circuit",),
    2: ("Full Body Circuit A", "Conditioning"),
    3: ("Full Body Circuit A", "Conditioning", "Full Body Circuit B"),
    4: ("Upper A", "Conditioning", "Lower A", "Full Body Circuit"),
    5: ("Upper", "Conditioning", "Lower", "Conditioning B", "Full Body Circuit"),
    6: ("Upper A", "Conditioning A", "Lower A", "Upper B", "Conditioning B", "Lower B"),
    7: ("Upper A", "Conditioning A", "Lower A", "Upper B", "Conditioning B", "Lower B", "Active Recovery"),
}
_ENDURANCE_SPLITS: dict[int, tuple[str, ...]] = {
    1: ("Long",),
    2: ("Easy", "Long"),
    3: ("Easy", "Intervals", "Long"),
    4: ("Easy", "Intervals", "Strength", "Long"),
    5: ("Easy", "Intervals", "Easy", "Tempo", "Long"),
    6: ("Easy", "Intervals", "Strength", "Tempo", "Easy", "Long"),
    7: ("Easy", "Intervals", "Strength", "Tempo", "Easy", "Long", "Recovery"),
}
# Endurance session minutes in week 1, before progression.
_ENDURANCE_MINUTES = {"Easy": 30, "Intervals": 35, "Tempo": 35, "Long": 45, "Strength": 40, "Recovery": 20}


# An addition to the sessions named in a goal ('get stronger, with a cardio finisher'): not what the plan is for.
_ADDITION_WORDS = re.compile(r"\b(?:cardio|conditioning|hiit|core)\s+finishers?\b", re.I)


def classify_goal(goal: str) -> GoalType:
    """The plan type a goal's words point to; 'general' when none match."""
    text = _ADDITION_WORDS.sub(" ", goal.lower())
    for goal_type, words in _KEYWORDS:
        if any(re.search(rf"\b{re.escape(word)}", text) for word in words):
            return goal_type
    return "general"


def parse_weekdays(names: Sequence[str]) -> list[int]:
    """Weekday numbers (Mon=0) from names like 'Monday', 'mon', 'Wed'. Raises ValueError for others."""
    days: list[int] = []
    for name in names:
        key = name.strip().lower()
        index = _WEEKDAY_NAMES.get(key, _WEEKDAY_NAMES.get(key[:3]) if len(key) >= 3 else None)
        if index is None:
            raise ValueError(f"unknown weekday {name!r}; use Monday..Sunday")
        if index in days:
            raise ValueError(f"weekday {name!r} given twice")
        days.append(index)
    return sorted(days)


def canonical_weekday(value: object) -> str:
    """The plan's spelling of a weekday ('Mon'..'Sun') from 'Monday', 'monday', 'MON', 'Mon.' or a date's
    weekday. Raises ValueError naming the accepted spellings."""
    text = str(value).strip().rstrip(".").lower()
    full = [name for name in _WEEKDAY_NAMES if len(name) > 3]
    index = next((_WEEKDAY_NAMES[name] for name in full if len(text) >= 3 and name.startswith(text)), None)
    if index is None:
        raise ValueError(f"unknown weekday {value!r}; use Monday..Sunday or Mon..Sun")
    return WEEKDAYS[index]


# A weekday in any of the obvious spellings, stored as the plan's 'Mon'..'Sun' (pydantic fields of plans).
Weekday = Annotated[str, BeforeValidator(canonical_weekday)]


def default_deload_weeks(weeks: int, every: int = DELOAD_EVERY) -> list[int]:
    """Every `every`-th week: 5 and 10 of a 12-week plan."""
    return [week for week in range(every, weeks + 1, every)]


def _session_focus(session: str) -> list[str]:
    for prefix, muscles in _FOCUS.items():
        if session.startswith(prefix):
            return list(muscles)
    return list(_FOCUS["Full Body"])


def endurance_modality(goal: str) -> str:
    """'Run', 'Ride', 'Swim' or 'Cardio': what an endurance goal's words train."""
    text = goal.lower()
    if any(word in text for word in ("cycl", "ride", "bike")):
        return "Ride"
    if "swim" in text:
        return "Swim"
    if any(word in text for word in ("run", "5k", "10k", "marathon", "race", "jog")):
        return "Run"
    return "Cardio"


def _week_parameters(goal_type: GoalType, step: int, deload: bool) -> dict[str, Any]:
    """Targets of one week: `step` counts the build weeks before it (progression survives deloads)."""
    if deload:
        return {
            "target_rpe": 6.0,
            "volume_factor": 0.6,
            "intensity_pct": 60 if goal_type == "strength" else None,
        }
    rpe = min(7.0 + 0.5 * step, 9.5)
    if goal_type == "strength":
        return {"target_rpe": rpe, "volume_factor": 1.0, "intensity_pct": min(70 + 2.5 * step, 92.5)}
    if goal_type == "hypertrophy":
        return {
            "target_rpe": min(7.0 + 0.25 * step, 9.0),
            "volume_factor": 1.0 + 0.1 * min(step, 6),
            "intensity_pct": None,
        }
    if goal_type == "endurance":
        return {
            "target_rpe": min(6.0 + 0.25 * step, 8.0),
            "volume_factor": round(1.1**step, 3),
            "intensity_pct": None,
        }
    return {
        "target_rpe": min(6.5 + 0.25 * step, 8.5),
        "volume_factor": 1.0 + 0.05 * min(step, 6),
        "intensity_pct": None,
    }


def _rpe(value: float) -> str:
    return f"{value:g}"


def _strength_day(session: str, params: dict[str, Any], deload: bool) -> tuple[str, int, str]:
    if session.startswith("Active Recovery"):
        return "20-30 min easy movement and mobility", 30, "Keep it easy; no load."
    sets = 2 if deload else 4
    reps = 5
    text = f"main lifts {sets}×{reps} @ {params['intensity_pct']:g}% 1RM, RPE {_rpe(params['target_rpe'])}; accessories 3×8-10"
    note = (
        "Deload: lighter and fewer sets; leave plenty in the tank."
        if deload
        else "Add load when every set hits the target reps at or below the RPE."
    )
    return text, 45 if deload else 60, note


def _hypertrophy_sets(volume_factor: float) -> int:
    """A build week's sets per exercise: one more for about every 20 % more volume, at most 6."""
    return min(3 + round((volume_factor - 1.0) * 10) // 2, 6)


def _general_rounds(volume_factor: float) -> int:
    """A build week's circuit rounds: a round more once volume is up 15 %."""
    return 3 + (1 if volume_factor >= 1.15 else 0)


def _hypertrophy_day(session: str, params: dict[str, Any], deload: bool) -> tuple[str, int, str]:
    if session.startswith("Active Recovery"):
        return "20-30 min easy movement and mobility", 30, "Keep it easy; no load."
    sets = 2 if deload else _hypertrophy_sets(params["volume_factor"])
    text = f"5-6 exercises × {sets} sets of 8-12 reps, RPE {_rpe(params['target_rpe'])}, rest 60-90 s"
    note = (
        "Deload: half the sets at an easy effort."
        if deload
        else "Add a rep or a little load each week; stop 1-3 reps short of failure."
    )
    return text, 45 if deload else 60, note


# A build week's note by the week before it: none (the first week), a deload, or a build week (the default).
_ENDURANCE_BUILD_NOTES = {
    "none": "First week: settle into an easy rhythm; time grows from here.",
    "deload": "Back to building after the lighter week, a little longer than before it.",
}


def _endurance_day(
    session: str, params: dict[str, Any], deload: bool, modality: str, before: str
) -> tuple[str, int, str]:
    minutes = int(5 * round(_ENDURANCE_MINUTES.get(session, 30) * params["volume_factor"] / 5))
    if session == "Strength":
        sets = 2 if deload else 3
        return (
            f"full body strength {sets}×8-10, RPE {_rpe(params['target_rpe'])}",
            40,
            "Supports injury-free mileage.",
        )
    descriptions = {
        "Easy": f"easy {modality.lower()} {minutes} min, conversational pace (RPE 4-5)",
        "Intervals": f"{modality.lower()} intervals: 10 min warm-up, {max(4, minutes // 6)}×2 min hard / 2 min easy, cool-down",
        "Tempo": f"tempo {modality.lower()} {minutes} min with {max(10, minutes // 2)} min comfortably hard (RPE 7)",
        "Long": f"long {modality.lower()} {minutes} min at an easy pace",
        "Recovery": f"recovery {modality.lower()} {minutes} min, very easy",
    }
    note = (
        "Deload: shorter sessions, easy effort."
        if deload
        else _ENDURANCE_BUILD_NOTES.get(before, "About 10 % more time than last week.")
    )
    return descriptions.get(session, f"{modality.lower()} {minutes} min"), minutes, note


def _general_day(session: str, params: dict[str, Any], deload: bool) -> tuple[str, int, str]:
    if session.startswith("Active Recovery"):
        return "20-30 min easy movement and mobility", 30, "Keep it easy."
    rounds = 2 if deload else _general_rounds(params["volume_factor"])
    if session.startswith("Conditioning"):
        text = f"conditioning intervals {rounds * 3}×40 s work / 20 s rest, RPE {_rpe(params['target_rpe'])}"
    else:
        text = f"{rounds} rounds of 5-6 exercises × 10-15 reps, RPE {_rpe(params['target_rpe'])}, short rests"
    note = (
        "Deload: fewer rounds, easy effort." if deload else "Shorten rests or add a round as it gets easier."
    )
    return text, 35 if deload else 45, note


def _sessions(goal_type: GoalType, days_per_week: int, modality: str) -> tuple[str, ...]:
    if goal_type == "endurance":
        return tuple(
            f"{name} {modality}" if name not in ("Strength",) else "Strength"
            for name in _ENDURANCE_SPLITS[days_per_week]
        )
    if goal_type == "hypertrophy":
        return _HYPERTROPHY_SPLITS[days_per_week]
    if goal_type == "fat_loss":
        return _FAT_LOSS_SPLITS[days_per_week]
    return _STRENGTH_SPLITS[days_per_week]


def _day_content(
    goal_type: GoalType, session: str, params: dict[str, Any], deload: bool, modality: str, before: str
) -> tuple[str, int, str]:
    """A day's prescription, minutes and note; `before` is the week before: 'none', 'deload' or 'build'."""
    if goal_type == "endurance":
        return _endurance_day(session.removesuffix(f" {modality}"), params, deload, modality, before)
    if goal_type == "strength":
        return _strength_day(session, params, deload)
    if goal_type == "hypertrophy":
        return _hypertrophy_day(session, params, deload)
    return _general_day(session, params, deload)


# --- What the user asked to add to every session -------------------------------------------------------------------
# The user's words for an addition to every session ('core work at the end', 'a cardio finisher') → the plan's words
# for it, as a coach writes them in a day's prescription (the week's drafts follow them: `plan_drafting.day_targets`
# reads a "… finisher:" clause as work added after the main work). The first that matches; a deload week does 2 sets
# of the core work, and a shorter cardio finisher.
_SESSION_EXTRAS: tuple[tuple[str, re.Pattern[str], str, str], ...] = (
    (
        "core",
        re.compile(r"\b(?:core|abs|ab|abdominals?|planks?|six[- ]?pack|midsection|trunk|obliques?)\b", re.I),
        "core finisher: plank 3×30s, dead bug 3×10",
        "core finisher: plank 2×30s, dead bug 2×10",
    ),
    (
        "cardio",
        re.compile(
            r"\b(?:cardio|conditioning|finisher|hiit|intervals?|metcon|sprints?|bike|rower?|rowing)\b", re.I
        ),
        "cardio finisher: 10 min bike intervals 30s hard / 90s easy",
        "cardio finisher: 6 min easy spin",
    ),
)


def takes_extras(session: str) -> bool:
    """Whether a session gets what the user asked to add to every session: not a recovery day, which stays easy."""
    return not session.startswith(("Active Recovery", "Recovery"))


@dataclass(frozen=True)
class SessionExtra:
    """What one of the user's asks adds to every session: its kind ('core', 'cardio') and the plan's words for it
    in a build and in a deload week."""

    asked: str
    kind: str
    build: str
    deload: str

    def clause(self, *, deload: bool) -> str:
        return self.deload if deload else self.build


def session_extras(asked: Sequence[str]) -> tuple[SessionExtra, ...]:
    """What each of the user's asks adds to every session, one of each kind (parsed once, where the asks come in,
    and carried from there). Raises ValueError naming an ask it cannot put in a session."""
    extras: list[SessionExtra] = []
    for words in asked:
        found = next((extra for extra in _SESSION_EXTRAS if extra[1].search(words)), None)
        if found is None:
            raise ValueError(
                f"extras: I can add core work or a cardio finisher to every session, not {words!r}; name the "
                "exercises in the goal instead"
            )
        kind, _, build, deload = found
        if all(extra.kind != kind for extra in extras):
            extras.append(SessionExtra(asked=words, kind=kind, build=build, deload=deload))
    return tuple(extras)


# What each kind of addition is, in a coach's words to the user.
_EXTRAS_SAID = {
    "core": "core work (plank and dead bugs)",
    "cardio": "a 10-minute cardio finisher (bike intervals, or bodyweight cardio where there is no bike)",
}


def extras_sentence(extras: Sequence[SessionExtra]) -> str:
    """'Every session ends with core work (plank and dead bugs).' for what the user asked to add; "" for none."""
    said = [_EXTRAS_SAID[extra.kind] for extra in extras]
    return f"Every session ends with {joined(said)}." if said else ""


# --- The progression in words, from the weeks ---------------------------------------------------------------------
def week_list(numbers: Sequence[int]) -> str:
    """'week 5', 'weeks 5 and 10', 'weeks 4, 8 and 12'."""
    return f"week{'s' if len(numbers) > 1 else ''} {joined([str(number) for number in numbers])}"


def _climb(label: str, values: Sequence[tuple[int, str]]) -> str:
    """'RPE 7 in week 1 to 8.5 in week 4', 'RPE 6 in week 1 to 8.5 by week 11, held there to week 12', or 'RPE 7
    throughout': a value over the build weeks (week, value), as the weeks have it."""
    (first_week, first), (last_week, last) = values[0], values[-1]
    if first == last:
        return f"{label} {first} throughout"
    reached = next(week for week, value in values if value == last)
    held = f", held there to week {last_week}" if reached != last_week else ""
    return f"{label} {first} in week {first_week} to {last} {'by' if held else 'in'} week {reached}{held}"


def _deload_words(deloads: Sequence[dict[str, Any]]) -> str:
    if not deloads:
        return "No deload week in this block."
    numbers = [int(week["week"]) for week in deloads]
    which = "is a lighter deload week" if len(numbers) == 1 else "are lighter deload weeks"
    first = deloads[0]
    return (
        f"{week_list(numbers).capitalize()} {which} (about {round(first['volume_factor'] * 100)} % of the "
        f"volume at RPE {_rpe(first['target_rpe'])}) before building again."
    )


# "week 4 is a deload", "week 4 (deload)", "deload in week 4", "deload week 4": a week named as a deload. Ranges and
# other mentions are left alone ("build through week 4, deload in week 5" names week 5 only): a false alarm would
# cost the plan sub-agent its one retry.
_NAMED_DELOADS = (
    re.compile(
        r"\bweek\s+(\d+)\s*(?:\(|:|is|=)?\s*(?:a|an|the|your)?\s*(?:lighter|easy|easier|recovery)?\s*deload\b",
        re.I,
    ),
    re.compile(
        r"\bdeload(?:s|ing)?\s+(?:week\s+)?(?:in|on|at|for)?\s*week\s+(\d+)\b(?!\s*(?:-|–|to)\s*\d)", re.I
    ),
)


def progression_problems(progression: str, deload_weeks: Sequence[int]) -> list[str]:
    """Where a plan's progression text (a model's) contradicts its deload weeks: a week named as a deload that is
    not one, or "no deload" when there is one."""
    named = sorted({int(match[1]) for pattern in _NAMED_DELOADS for match in pattern.finditer(progression)})
    wrong = [week for week in named if week not in deload_weeks]
    problems = []
    if wrong:
        problems.append(
            f"progression names {week_list(wrong)} as a deload, but the deload weeks are "
            f"{list(deload_weeks) or 'none'}: describe the weeks as they are"
        )
    if deload_weeks and re.search(r"\bno deload", progression, re.I):
        problems.append(f"progression says there is no deload, but weeks {list(deload_weeks)} are deloads")
    return problems


def describe_progression(goal_type: GoalType, weeks: Sequence[dict[str, Any]], split: Sequence[str]) -> str:
    """The plan's progression in a sentence or two, read from its weeks: the values the build weeks start and end
    at, and the deload weeks that are in `weeks` (never a rule the weeks do not follow)."""
    build = [week for week in weeks if not week["deload"]]
    deloads = [week for week in weeks if week["deload"]]
    if not build:
        return "Every week is a lighter deload week (about 60 % of the volume at RPE 6)."
    rpe = _climb("RPE", [(week["week"], _rpe(week["target_rpe"])) for week in build])
    split_names = {session.split()[0] for session in split}
    if goal_type == "strength":
        load = _climb(
            "main lifts 4×5 at", [(week["week"], f"{week['intensity_pct']:g}% 1RM") for week in build]
        )
        text = f"{load[:1].upper()}{load[1:]}; {rpe}."
    elif goal_type == "hypertrophy":
        sets = _climb(
            "8-12 reps,",
            [(week["week"], f"{_hypertrophy_sets(week['volume_factor'])} sets") for week in build],
        )
        text = f"{sets[:1].upper()}{sets[1:]}; {rpe}."
    elif goal_type == "endurance":
        hard = [word for name, word in (("Intervals", "interval"), ("Tempo", "tempo")) if name in split_names]
        kind = f", with {' and '.join(f'one {word} day' for word in hard)}" if hard else ""
        minutes = _climb(
            "the longest session",
            [(week["week"], f"{max(day['duration_minutes'] for day in week['days'])} min") for week in build],
        )
        text = f"Session time grows about 10 % each build week ({minutes}); mostly easy{kind}."
    else:
        rounds = _climb(
            "circuits of",
            [(week["week"], f"{_general_rounds(week['volume_factor'])} rounds") for week in build],
        )
        text = f"{rounds[:1].upper()}{rounds[1:]}; {rpe}."
    return f"{text} {_deload_words(deloads)}"


def build_plan(
    *,
    goal: str,
    weeks: int,
    days_per_week: int,
    start_date: date,
    preferred_days: Sequence[str] | None = None,
    deload_weeks: Sequence[int] | None = None,
    extras: Sequence[SessionExtra] = (),
) -> dict[str, Any]:
    """The plan's weeks and dated days, each session with the `extras` the user asked for in every session ('core
    work at the end', `session_extras`). Raises ValueError naming the problem for invalid arguments."""
    if not 1 <= weeks <= MAX_WEEKS:
        raise ValueError(f"weeks must be from 1 to {MAX_WEEKS}, not {weeks}")
    if not 1 <= days_per_week <= 7:
        raise ValueError(f"days_per_week must be from 1 to 7, not {days_per_week}")
    weekdays = parse_weekdays(preferred_days) if preferred_days else list(DEFAULT_WEEKDAYS[days_per_week])
    if len(weekdays) != days_per_week:
        raise ValueError(f"preferred_days lists {len(weekdays)} days but days_per_week is {days_per_week}")
    deloads = sorted(set(deload_weeks)) if deload_weeks is not None else default_deload_weeks(weeks)
    outside = [week for week in deloads if not 1 <= week <= weeks]
    if outside:
        raise ValueError(f"deload weeks {outside} are outside weeks 1..{weeks}")

    goal_type = classify_goal(goal)
    modality = endurance_modality(goal)
    sessions = _sessions(goal_type, days_per_week, modality)
    # Week k runs from start_date + 7(k-1); each training weekday falls once in those 7 days.
    offsets = sorted((weekday - start_date.weekday()) % 7 for weekday in weekdays)
    plan_weeks = []
    step = 0
    for week in range(1, weeks + 1):
        deload = week in deloads
        params = _week_parameters(goal_type, step, deload)
        week_start = start_date + timedelta(weeks=week - 1)
        days = []
        for number, (offset, session) in enumerate(zip(offsets, sessions, strict=True), start=1):
            when = week_start + timedelta(days=offset)
            before = "none" if week == 1 else "deload" if week - 1 in deloads else "build"
            prescription, minutes, note = _day_content(goal_type, session, params, deload, modality, before)
            if takes_extras(session):
                prescription = "; ".join([prescription, *(extra.clause(deload=deload) for extra in extras)])
            days.append(
                {
                    "day": number,
                    "date": when.isoformat(),
                    "weekday": WEEKDAYS[when.weekday()],
                    "title": f"{session} (week {week}{', deload' if deload else ''})",
                    "session": session,
                    "focus": _session_focus(session)
                    if goal_type != "endurance" or session == "Strength"
                    else [],
                    "duration_minutes": minutes,
                    "prescription": prescription,
                    "notes": f"{prescription}. {note}",
                }
            )
        plan_weeks.append(
            {
                "week": week,
                "phase": "deload" if deload else "build",
                "deload": deload,
                "target_rpe": params["target_rpe"],
                "volume_factor": params["volume_factor"],
                **(
                    {"intensity_pct": params["intensity_pct"]}
                    if params.get("intensity_pct") is not None
                    else {}
                ),
                "days": days,
            }
        )
        if not deload:
            step += 1
    return {
        "goal_type": goal_type,
        "split": list(sessions),
        "days_per_week": days_per_week,
        "weekdays": [WEEKDAYS[day] for day in weekdays],
        "deload_weeks": deloads,
        **({"extras": [extra.asked for extra in extras]} if extras else {}),
        "progression": describe_progression(goal_type, plan_weeks, sessions),
        "start_date": start_date.isoformat(),
        "end_date": (start_date + timedelta(weeks=weeks, days=-1)).isoformat(),
        "weeks": plan_weeks,
    }


# --- Who builds plans ---------------------------------------------------------------------------------------
# tools_app may not import trainer_agent, so the fitness_plan sub-agent plugs itself in here at start-up
# (TrainerAgentConfig.ready). Without it (tools used on their own, some tests) plans come from build_plan.
PlanGenerator = Callable[..., dict[str, Any]]
_plan_generator: PlanGenerator | None = None


def set_plan_generator(generator: PlanGenerator | None) -> None:
    """Route create_workout_plan through `generator(user_id=, session=, **build_plan_arguments)`."""
    global _plan_generator
    _plan_generator = generator


def generate_plan(*, user_id: Any, session: Any, **arguments: Any) -> dict[str, Any]:
    """The plan for create_workout_plan: the registered generator's, else build_plan's. ValueError on problems."""
    if _plan_generator is None:
        return build_plan(**arguments)
    return _plan_generator(user_id=user_id, session=session, **arguments)


# --- A plan's weeks ---------------------------------------------------------------------------------------------
def week_dates(plan: dict[str, Any], week: int) -> tuple[date, date]:
    """First and last day of the plan's week `week` (week 1 starts on the plan's start date)."""
    start = date.fromisoformat(str(plan["start_date"])) + timedelta(weeks=week - 1)
    return start, start + timedelta(days=6)


def week_containing(plan: dict[str, Any], day: date) -> int:
    """The plan week `day` falls in: 1 before the plan starts, 0 after it has ended."""
    start = date.fromisoformat(str(plan["start_date"]))
    if day < start:
        return 1
    week = (day - start).days // 7 + 1
    return week if week <= len(plan.get("weeks") or []) else 0


# --- Who prepares a plan's weeks --------------------------------------------------------------------------------
# The week chain (microcycle → workout_structure → workout_message) lives in trainer_agent, which registers
# here at start-up how to start it (as a background task). Without it the tools cannot prepare weeks.
WeekPreparer = Callable[..., None]
_week_preparer: WeekPreparer | None = None


def set_week_preparer(preparer: WeekPreparer | None) -> None:
    """Route prepare_week (and create_workout_plan's first week) to `preparer(user_id=, plan_id=, week=, session=)`
    (and `workout_ids=`, the days to prepare again on their own, when there are some)."""
    global _week_preparer
    _week_preparer = preparer


def can_prepare_weeks() -> bool:
    return _week_preparer is not None


def request_week_preparation(
    *, user_id: Any, plan_id: Any, week: int, session: Any, workout_ids: list[Any] | None = None
) -> None:
    """Ask for the week (or only its days `workout_ids`, prepared again on their own) to be prepared once the
    caller's transaction commits (the preparer decides how)."""
    if _week_preparer is None:
        raise RuntimeError("no week preparer is registered (trainer_agent registers one at start-up)")
    if workout_ids is None:
        _week_preparer(user_id=user_id, plan_id=plan_id, week=week, session=session)
    else:
        _week_preparer(user_id=user_id, plan_id=plan_id, week=week, session=session, workout_ids=workout_ids)
