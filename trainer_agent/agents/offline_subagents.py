"""Deterministic offline variants of the sub-agents: pure functions of their input and the user's data.

Each returns the same JSON a model would, so `run_subagent` validates it with the same pydantic model and
validators; only the source differs. Same input, same output: nothing here reads the clock or a random source.
"""

from __future__ import annotations

import re
import uuid
from datetime import date, timedelta
from typing import Any

from datasources_app import formatters, selectors
from datasources_app.catalog import exercise_name_key
from datasources_app.loads import implements_of
from datasources_app.workouts import canonical_muscle
from tools_app.plan_builder import WEEKDAYS, build_plan, canonical_weekday, classify_goal
from tools_app.workout_drafting import (
    Exclusions,
    TrainingFacts,
    as_of,
    brief_for_session,
    compose_workout,
    is_main,
    load_facts,
    resize,
)
from tools_app.workout_validation import unsafe_named_exercises, user_injuries

SMS_MAX_CHARS = 1600
DEFAULT_WEEKS = 12
DEFAULT_DAYS_PER_WEEK = 3
KG_PER_LB = 0.45359237
KM_PER_MI = 1.609344
ELLIPSIS = "…"


# --- fitness_plan ---------------------------------------------------------------------------------------------
def goal_text(*, user_id: uuid.UUID) -> str:
    """The user's goals in words: active milestones first, then category goals by weight."""
    milestones = [goal.title for goal in selectors.list_milestone_goals(user_id=user_id, status="active")]
    categories = [goal.category for goal in selectors.list_category_goals(user_id=user_id)]
    return "; ".join([*milestones, *categories]) or "general fitness"


def primary_goal(*, user_id: uuid.UUID) -> str:
    """The goal the plan is built around: the first active milestone, else the heaviest category goal."""
    return goal_text(user_id=user_id).split("; ")[0]


def next_monday(today: date) -> date:
    return today + timedelta(days=(7 - today.weekday()) % 7 or 7)


def location_of(input: dict[str, Any]) -> uuid.UUID | None:
    value = input.get("location_id")
    return uuid.UUID(str(value)) if value else None


def _spares_running(user_id: uuid.UUID) -> bool:
    """Whether the user's injuries rule out running (the same rule as the workout checks)."""
    return bool(unsafe_named_exercises([("run", "Easy Run")], user_injuries(user_id=user_id)))


def fitness_plan(input: dict[str, Any], *, user_id: uuid.UUID) -> dict[str, Any]:
    goal = input.get("goal") or primary_goal(user_id=user_id)
    start = input.get("start_date") or next_monday(selectors.local_today(user_id=user_id)).isoformat()
    # An endurance plan for a user who must not run (a knee, an ankle) trains the same engine on the bike.
    planned_goal = goal
    if classify_goal(goal) == "endurance" and _spares_running(user_id):
        planned_goal = f"{goal} (cycling)"
    plan = build_plan(
        goal=planned_goal,
        weeks=input.get("weeks") or DEFAULT_WEEKS,
        days_per_week=input.get("days_per_week") or DEFAULT_DAYS_PER_WEEK,
        start_date=date.fromisoformat(start),
        preferred_days=input.get("preferred_days") or None,
        deload_weeks=input.get("deload_weeks"),
    )
    return {
        **plan,
        "goal": goal,
        "equipment": sorted(
            selectors.available_equipment_slugs(user_id=user_id, location_id=location_of(input))
        ),
    }


# --- microcycle -----------------------------------------------------------------------------------------------
TRAINING_STATUSES = ("scheduled", "completed")


def _sessions_on_calendar(week: dict[str, Any], calendar: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The week's sessions where the calendar has them now: each calendar day gets the plan day with its
    title (a moved day keeps it), else the one planned for its date, else the next unused one."""
    unused = list(week["days"])
    placed: dict[str, dict[str, Any]] = {}
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
                "session": str(item.get("title") or "Full Body"),
                "focus": [],
                "duration_minutes": 45,
                "prescription": "",
            }
        )
        when = date.fromisoformat(str(item["date"]))
        placed[WEEKDAYS[when.weekday()]] = session | {"date": when.isoformat()}
    return placed


def microcycle(input: dict[str, Any], *, user_id: uuid.UUID) -> dict[str, Any]:
    """The 7 days of one plan week: the sessions on their days (the calendar's, when given), rest on the
    others."""
    week_number = input["week"]
    plan = input.get("plan") or fitness_plan(
        {key: input.get(key) for key in ("goal", "days_per_week", "deload_weeks", "preferred_days")}
        | {"weeks": max(week_number, input.get("weeks") or DEFAULT_WEEKS)},
        user_id=user_id,
    )
    week = next(item for item in plan["weeks"] if item["week"] == week_number)
    calendar = input.get("calendar")
    by_weekday = (
        _sessions_on_calendar(week, calendar)
        if calendar is not None
        else {canonical_weekday(day["weekday"]): day for day in week["days"]}
    )
    days = []
    for weekday in WEEKDAYS:
        session = by_weekday.get(weekday)
        if session is None:
            days.append(
                {"weekday": weekday, "rest": True, "focus": "Rest", "session": None, "duration_minutes": 0}
            )
            continue
        focus = ", ".join(session.get("focus") or []) or session["session"]
        days.append(
            {
                "weekday": weekday,
                "rest": False,
                "focus": focus,
                "session": session["session"],
                "duration_minutes": session["duration_minutes"],
                "prescription": session.get("prescription") or "",
                "date": session["date"],
            }
        )
    if input.get("workouts"):
        facts = load_facts(user_id=user_id, location_id=location_of(input))
        today = selectors.local_today(user_id=user_id)
        # Main lifts of the week so far: the next session of the same kind varies them.
        used: dict[str, str] = {}
        for day in days:
            if not day["rest"]:
                on_the_day = as_of(facts, days_ahead=(date.fromisoformat(str(day["date"])) - today).days)
                day["markdown"] = day_markdown(day, week, on_the_day, vary=used)
    return {
        "week": week_number,
        "deload": week["deload"],
        "days_per_week": sum(1 for day in days if not day["rest"]),
        "target_rpe": week["target_rpe"],
        "days": days,
    }


DELOAD_VOLUME = 0.6  # seed 003: deload weeks cut volume by 40 %
MIN_VARIED_MAIN = 3  # a varied session keeps at least this many main exercises, else it repeats the lifts


def day_markdown(
    day: dict[str, Any], week: dict[str, Any], facts: TrainingFacts, *, vary: dict[str, str] | None = None
) -> str:
    """One training day as the markdown workout of seed 003: composed from the catalogue for the user
    (equipment, injuries, preferences, loads progressed from their last sessions), trimmed in a deload week.
    Main lifts named in `vary` (earlier days of the week) are left out when enough others fit; the day's own
    main lifts are added to it."""
    deload = bool(week.get("deload"))
    ask = brief_for_session(str(day["session"]), int(day["duration_minutes"]), deload=deload)
    composed = None
    if vary:
        composed = compose_workout(ask, facts.with_exclusions(Exclusions(keys=dict(vary))))
        if composed is not None and sum(1 for e in composed.exercises if is_main(e)) < MIN_VARIED_MAIN:
            composed = None
    composed = composed or compose_workout(ask, facts)
    if composed is not None and vary is not None:
        for exercise in composed.exercises:
            if is_main(exercise) and exercise.get("exercise_type") == "reps":
                vary[exercise_name_key(str(exercise["exercise_name"]))] = "earlier this week"
    title = f"{day['weekday']} {day['session']} (week {week['week']}{', deload' if deload else ''})"
    sections: dict[str, list[str]] = {"Warm-Up": [], "Main Workout": [], "Cool Down": []}
    notes = [str(day.get("prescription") or "")]
    if composed is not None:
        for exercise in composed.exercises:
            role = (exercise.get("group") or {}).get("type")
            if deload and is_main(exercise) and exercise.get("sets"):
                resize(exercise, max(1, round(int(exercise["sets"]) * DELOAD_VOLUME)))
            section = {"warmup": "Warm-Up", "cooldown": "Cool Down"}.get(str(role), "Main Workout")
            sections[section].append(_markdown_exercise(exercise))
        notes += [note for note in composed.notes if note]
    else:
        notes.append("Nothing in the catalogue fits the equipment here; ask the coach for an alternative.")
    lines = [f"# {title}"]
    for heading, entries in sections.items():
        lines += ["", f"## {heading}"]
        lines += [f"{number}. {entry}" for number, entry in enumerate(entries, start=1)] or [
            "- easy movement"
        ]
    lines += ["", "## Notes", *(f"- {note}" for note in notes if note)]
    return "\n".join(lines)


def _markdown_exercise(exercise: dict[str, Any]) -> str:
    """'Goblet Squat — 3x10 @ 16kg, rest 90s' (the line workout_structure reads back)."""
    name = exercise["exercise_name"]
    kind = exercise["exercise_type"]
    rest = f", rest {exercise.get('rest_sec') or 0}s"
    if kind == "reps":
        reps = (exercise.get("reps") or [10])[0]
        loads = exercise.get("load_each") or []
        load = f" @ {loads[0]:g}{exercise.get('load_unit') or ''}" if loads and loads[0] else ""
        return f"{name} — {exercise['sets']}x{reps}{load}{rest}"
    if kind == "hold":
        return f"{name} — {exercise['sets']}x{(exercise.get('hold_sec') or [30])[0]}s{rest}"
    if kind == "intervals":
        return f"{name} — {exercise['rounds']} rounds {exercise['work_sec']}/{exercise['rest_sec']}"
    distance = f", {exercise['distance']:g} {exercise['distance_unit']}" if exercise.get("distance") else ""
    return f"{name} — {exercise.get('duration_min') or 20:g} min{distance}"


# --- workout_message ------------------------------------------------------------------------------------------
def _exercise_line(number: int, exercise: dict[str, Any]) -> str:
    name = exercise.get("exercise_name") or exercise.get("name") or "Exercise"
    parts: list[str] = []
    sets, reps, holds = exercise.get("sets"), exercise.get("reps"), exercise.get("hold_sec")
    if sets and reps:
        parts.append(f"{sets}×{reps[0] if isinstance(reps, list) else reps}")
    elif sets and holds:
        parts.append(f"{sets}×{holds[0] if isinstance(holds, list) else holds}s")
    if exercise.get("duration_min"):
        parts.append(f"{exercise['duration_min']:g} min")
    if exercise.get("rounds") and exercise.get("work_sec"):
        parts.append(
            f"{exercise['rounds']} rounds {exercise['work_sec']}s on/{exercise.get('rest_sec', 0)}s off"
        )
    loads = exercise.get("load_each")
    if loads:
        unit = str(exercise.get("load_unit") or "kg")
        first = [loads[0] if isinstance(loads, list) else loads]
        load = formatters.loads(
            first, from_unit=unit, units=formatters.Units(weight=unit), implements=implements_of(exercise)
        )
        parts.append(load.strip())
    if exercise.get("rest_sec") and not exercise.get("rounds"):
        parts.append(f"(rest {exercise['rest_sec']}s)")
    return f"{number}. {name}" + (f": {' '.join(parts)}" if parts else "")


def _markdown_lines(
    markdown: str, *, headings: bool = True, skip_notes: bool = False
) -> tuple[str | None, list[str]]:
    title: str | None = None
    lines: list[str] = []
    in_notes = False
    for raw in markdown.splitlines():
        line = " ".join(raw.split())
        if not line:
            continue
        if line.startswith("#"):
            heading = line.lstrip("#").strip()
            in_notes = heading.lower().startswith("notes")
            if title is None and heading:
                title = heading
            elif heading and headings:
                lines.append(heading.upper())
            continue
        if in_notes and skip_notes:
            continue
        lines.append(line.lstrip("-*• ").strip() or line)
    return title, lines


def _cut_words(text: str, limit: int) -> str:
    """`text` shortened to at most `limit` characters at a word boundary, with an ellipsis when cut."""
    if len(text) <= limit:
        return text
    if limit <= len(ELLIPSIS):
        return ELLIPSIS[:limit]
    room = limit - len(ELLIPSIS)
    cut = text[: room + 1]
    boundary = cut.rfind(" ")
    # A single word longer than the room cannot be kept whole: then (only then) it is cut.
    kept = cut[:boundary].rstrip() if boundary > 0 else text[:room]
    return kept + ELLIPSIS


def fit_sms(header: str, lines: list[str], footer: str, *, limit: int = SMS_MAX_CHARS) -> str:
    """Header, as many whole lines as fit, "…and N more" for the rest, footer: never above `limit`."""
    header = _cut_words(header, limit // 4)
    footer = _cut_words(footer, limit // 8)
    line_limit = limit // 2
    lines = [_cut_words(line, line_limit) for line in lines]

    def compose(kept: list[str], dropped: int) -> str:
        body = list(kept)
        if dropped:
            body.append(f"{ELLIPSIS}and {dropped} more")
        return "\n".join([header, *body, footer]).strip()

    kept: list[str] = []
    for index, line in enumerate(lines):
        remaining = len(lines) - index - 1
        if len(compose([*kept, line], remaining)) > limit:
            return compose(kept, len(lines) - index)
        kept.append(line)
    return compose(kept, 0)


def workout_message(input: dict[str, Any], *, user_id: uuid.UUID) -> dict[str, Any]:
    workout = input.get("workout")
    if workout:
        title = workout.get("title") or input.get("title") or "Today's workout"
        exercises = sorted(workout.get("exercises") or [], key=lambda item: item.get("order") or 0)
        lines = [_exercise_line(number, exercise) for number, exercise in enumerate(exercises, start=1)]
    else:
        heading, lines = _markdown_lines(input.get("markdown") or "")
        title = input.get("title") or heading or "Today's workout"
    message = fit_sms(f"🏋️ {title}", lines, "💪 Reply when done!")
    return {"message": message}


# --- workout_structure ----------------------------------------------------------------------------------------
_LIST_MARKER = re.compile(r"^\s*(?:\d+[.)]|[-*•])\s*")
_SETS = re.compile(r"(\d+)\s*[x×]\s*(\d+)\s*(s|sec|secs|seconds)?\b", re.IGNORECASE)
_LOAD = re.compile(r"@\s*(\d+(?:\.\d+)?)\s*(kg|kgs|lb|lbs)\b", re.IGNORECASE)
_REST = re.compile(r"rest\s*(\d+)\s*(s|sec|secs|seconds|min|mins|minutes)?\b", re.IGNORECASE)
_ROUNDS = re.compile(r"(\d+)\s*rounds?\b", re.IGNORECASE)
_WORK_REST = re.compile(r"(\d+)\s*/\s*(\d+)")
_MINUTES = re.compile(r"(\d+(?:\.\d+)?)\s*(min|mins|minutes)\b", re.IGNORECASE)
_DISTANCE = re.compile(r"(\d+(?:\.\d+)?)\s*(km|mi|miles?)\b", re.IGNORECASE)
_FIRST_NUMBER = re.compile(r"\s[—–:\-,]?\s*\d|\s[—–:\-,]\s|@")
_CARDIO_WORDS = ("run", "jog", "bike", "cycl", "ride", "row", "swim", "walk", "cardio")
_CARDIO_MUSCLES = (("Quadriceps", 0.35), ("Hamstrings", 0.25), ("Glutes", 0.2), ("Calves", 0.2))
_FULL_BODY_MUSCLES = (("Quadriceps", 0.25), ("Chest", 0.25), ("Back", 0.25), ("Abs", 0.25))
_GOALS = {"reps": "strength", "hold": "stability", "duration": "endurance", "intervals": "cardio"}
_TABATA = (8, 20, 10)


def _seconds(value: str, unit: str | None) -> int:
    return int(value) * 60 if unit and unit.lower().startswith("min") else int(value)


def _convert_load(value: float, unit: str, user_unit: str) -> float:
    unit = "lb" if unit.lower().startswith("lb") else "kg"
    if unit == user_unit:
        return value
    converted = value * KG_PER_LB if unit == "lb" else value / KG_PER_LB
    return round(converted * 2) / 2


def _convert_distance(value: float, unit: str, user_unit: str) -> float:
    unit = "km" if unit.lower() == "km" else "mi"
    if unit == user_unit:
        return value
    return round(value * KM_PER_MI if unit == "mi" else value / KM_PER_MI, 2)


def _catalogue_muscles(name: str) -> tuple[str, list[dict[str, Any]] | None]:
    """The catalogue's name and muscle shares for `name` (tried without a leading style word too)."""
    words = name.split()
    for candidate in (name, " ".join(words[1:])):
        exercise = selectors.find_exercise_by_name(name=candidate) if candidate else None
        if exercise is None:
            continue
        order = [*exercise.primary_muscles, *exercise.secondary_muscles]
        shares = exercise.muscle_shares or {}
        ranked = [muscle for muscle in order if muscle in shares] + sorted(set(shares) - set(order))
        muscles = [{"muscle": canonical_muscle(m), "share": round(float(shares[m]), 4)} for m in ranked]
        return exercise.name, muscles or None
    return name, None


def _fallback_muscles(name: str, kind: str) -> list[dict[str, Any]]:
    cardio = kind == "duration" or any(word in name.lower() for word in _CARDIO_WORDS)
    return [
        {"muscle": muscle, "share": share}
        for muscle, share in (_CARDIO_MUSCLES if cardio else _FULL_BODY_MUSCLES)
    ]


def _parse_line(line: str, *, weight_unit: str, distance_unit: str) -> dict[str, Any] | None:
    text = _LIST_MARKER.sub("", line).strip()
    if not text or text.startswith("#"):
        return None
    split = _FIRST_NUMBER.search(" " + text)
    name = (text[: split.start() - 1] if split else text).strip(" —–-:,")
    name = name or text
    exercise: dict[str, Any] = {}
    sets, rounds, rest = _SETS.search(text), _ROUNDS.search(text), _REST.search(text)
    if rounds or "tabata" in text.lower():
        work_rest = _WORK_REST.search(text)
        default_rounds, default_work, default_rest = _TABATA
        exercise |= {
            "exercise_type": "intervals",
            "rounds": int(rounds.group(1)) if rounds else default_rounds,
            "work_sec": int(work_rest.group(1)) if work_rest else default_work,
            "rest_sec": int(work_rest.group(2)) if work_rest else default_rest,
        }
    elif sets and sets.group(3):
        count = int(sets.group(1))
        exercise |= {"exercise_type": "hold", "sets": count, "hold_sec": [int(sets.group(2))] * count}
        exercise["rest_sec"] = _seconds(rest.group(1), rest.group(2)) if rest else 30
    elif sets:
        count = int(sets.group(1))
        exercise |= {"exercise_type": "reps", "sets": count, "reps": [int(sets.group(2))] * count}
        exercise["rest_sec"] = _seconds(rest.group(1), rest.group(2)) if rest else 60
        load = _LOAD.search(text)
        if load:
            value = _convert_load(float(load.group(1)), load.group(2), weight_unit)
            exercise |= {"load_each": [value] * count, "load_unit": weight_unit}
    else:
        minutes, distance = _MINUTES.search(text), _DISTANCE.search(text)
        if not minutes and not distance:
            return None
        exercise["exercise_type"] = "duration"
        exercise["duration_min"] = float(minutes.group(1)) if minutes else 30.0
        if distance:
            value = _convert_distance(float(distance.group(1)), distance.group(2), distance_unit)
            exercise |= {"distance": value, "distance_unit": distance_unit}
    catalogue_name, muscles = _catalogue_muscles(name)
    kind = exercise["exercise_type"]
    return {
        "exercise_name": catalogue_name,
        **exercise,
        "muscles_utilized": muscles or _fallback_muscles(name, kind),
        "goals_addressed": [{"goal": _GOALS[kind], "share": 1.0}],
        "reasoning": f"{catalogue_name} as written in the workout.",
    }


def workout_structure(input: dict[str, Any], *, user_id: uuid.UUID) -> dict[str, Any]:
    """Parse lines like "1. Goblet Squat — 3x10 @ 16kg, rest 90s", "Plank 3x45s", "Run 20 min"."""
    user_settings = selectors.get_settings(user_id=user_id)
    title, lines = _markdown_lines(input.get("markdown") or "", headings=False, skip_notes=True)
    exercises: list[dict[str, Any]] = []
    for line in lines:
        parsed = _parse_line(
            line, weight_unit=user_settings.weight_unit, distance_unit=user_settings.distance_unit
        )
        if parsed is not None:
            exercises.append({"order": len(exercises) + 1, **parsed})
    return {"title": input.get("title") or title or "Workout", "exercises": exercises}
