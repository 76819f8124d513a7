"""The offline model's structured answers (`complete_json`): the initializer's knowledge selection and the
sub-agents' JSON, decided from the request alone, like any model.

A call is read by its `schema_name` (the job, as a model reads its tool's name) and answered from the `user`
text it is sent and its `json_schema`: the initializer's `{"user_message", "today", "loaded_sources"}` with the
source names the schema allows, a sub-agent's `{"input": …, "user": facts}` (docs/architecture.md "The week
chain"). What a coach must work out from the user's data (the plan builder's plan, the week's sessions on the
calendar and their drafted workouts, a workout's lines) is in the request, put there by the sub-agents' input
builder for every model; this module only lays it out. It imports the provider types and the standard library,
nothing of the apps. Same request, same answer: nothing here reads the clock or a random source.
"""

from __future__ import annotations

import json
import re
from datetime import date, timedelta
from typing import Any

from trainer_agent.llm.types import LLMError, StructuredResult, Usage

WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
REJECTED = "\n\nYour previous answer was rejected"


class StructuredAnswers:
    """Mixin: the offline provider's `complete_json` (`StructuredOutputProvider`)."""

    def complete_json(
        self,
        *,
        model: str,
        system: str,
        user: str,
        json_schema: dict[str, Any],
        schema_name: str,
        max_tokens: int = 1024,
        temperature: float | None = None,
    ) -> StructuredResult:
        return answer_json(user=user, json_schema=json_schema, schema_name=schema_name)


def answer_json(*, user: str, json_schema: dict[str, Any], schema_name: str) -> StructuredResult:
    """The answer to one structured call, at zero tokens (nothing is sent anywhere); LLMError
    `invalid_response` when the request lacks what the job needs."""
    answer = ANSWERS.get(schema_name)
    if answer is None:
        raise LLMError("invalid_response", f"The offline model has no answer for {schema_name!r}")
    try:
        data = answer(user, json_schema)
    except (ValueError, KeyError, TypeError, StopIteration) as exc:
        raise LLMError("invalid_response", f"The offline model cannot answer {schema_name}: {exc!r}") from exc
    return StructuredResult(data, Usage(), {"offline": data}, 0)


# --- The initializer: knowledge selection by keywords (docs/contracts.md §9.2) ----------------------------------
_WORKOUT = re.compile(
    r"\b(workout|work out|session|train|training|exercise|routine|wod|lift|circuit|hiit|cardio|stretch|mobility|"
    r"legs?|chest|back|arms?|shoulders?|glutes?|core|abs|full[- ]body|upper|lower|push|pull|quick|minutes?|min)\b",
    re.I,
)
_GOALS = re.compile(r"\b(goals?|focus|priorit\w*|balance|distribution)\b", re.I)
_STATS = re.compile(
    r"\b(stats?|statistics|progress|history|trend\w*|volume|records?|pr|prs|how (many|much|often)|last (week|month)|"
    r"this (week|month)|improv\w*)\b",
    re.I,
)
_PREFS = re.compile(r"\b(prefer\w*|hate|don'?t like|dislike|avoid|no more|never|love)\b", re.I)
_CURRENT = re.compile(
    r"\b(swap|replace|switch|change|adjust|remove|drop|skip|log|logged|did|done|finished|completed|easier|harder|"
    r"heavier|lighter|instead|current|(?:this|that|today'?s) (?:workout|one))\b",
    re.I,
)
_CALENDAR = re.compile(
    r"\b(schedule\w*|calendar|plan|plans|program|today|tonight|tomorrow|weekend|weeks?|monday|tuesday|"
    r"wednesday|thursday|friday|saturday|sunday|mon|tues?|wed|thu|thurs?|fri|what'?s on|coming up|upcoming|"
    r"(?:first|next) (?:workout|session|day))\b",
    re.I,
)
_MILESTONES = re.compile(r"\b(milestone\w*|target|achieve\w*)\b", re.I)
# Keywords → the sources they need besides the history, in the order they are appended.
_NEEDS = (
    (_GOALS, ("category_goals", "muscle_goals")),
    (_PREFS, ("active_preferences",)),
    (_CURRENT, ("current_workout_session",)),
    (_CALENDAR, ("scheduled_workouts", "workout_plans")),
    (_MILESTONES, ("milestone_goals",)),
)
_RANGE = re.compile(r"\b(?:last|past)\s+(\d+)?\s*(day|week|month|year)s?\b", re.I)
_THIS = re.compile(r"\bthis\s+(week|month|year)\b", re.I)
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def requested_days(message: str, default: int, *, today: date | None = None) -> int:
    """How far back the user is asking about ("last month" → 30, "past 3 weeks" → 21; with `today`, "this
    week" → the days since Monday, "this month" → since the 1st)."""
    match = _RANGE.search(message)
    this = _THIS.search(message) if today is not None else None
    if not match and this is not None and today is not None:
        start = {
            "week": today - timedelta(days=today.weekday()),
            "month": today.replace(day=1),
            "year": today.replace(month=1, day=1),
        }[this.group(1).lower()]
        return (today - start).days + 1
    if not match:
        return default
    count = int(match.group(1) or 1)
    unit = match.group(2).lower()
    return min(365, count * {"day": 1, "week": 7, "month": 30, "year": 365}[unit])


def wanted_sources(message: str, *, today: date | None = None) -> dict[str, int | None]:
    """The sources a message needs (in the order they are appended), with the days of history it asks for."""
    wanted: dict[str, int | None] = {}
    if _STATS.search(message):
        wanted |= {"workout_history": requested_days(message, 30, today=today), "category_goals": None}
    elif _WORKOUT.search(message):
        wanted |= {"category_goals": None, "muscle_goals": None, "active_preferences": None}
        wanted["workout_history"] = 14
    for pattern, sources in _NEEDS:
        if pattern.search(message):
            wanted |= dict.fromkeys(sources)
    return wanted


def _enum(schema: dict[str, Any], *path: str) -> list[str]:
    node: Any = schema
    for key in path:
        node = node[key]
    return [str(value) for value in node["enum"]]


def knowledge_selection(user: str, schema: dict[str, Any]) -> dict[str, Any]:
    """The sources the message needs that the schema allows: each not loaded yet is appended, one loaded with a
    shorter range is appended again wider, one loaded already is refreshed (the caller's append-only rule keeps
    the refresh only for data a conversation changes) and listed as relied on."""
    request = json.loads(user)
    item = ("properties", "append_knowledge", "items", "properties")
    allowed = set(_enum(schema, *item, "source"))
    reasons = _enum(schema, *item, "reason")
    found = _ISO_DATE.search(str(request.get("today") or ""))
    today = date.fromisoformat(found.group(0)) if found else None
    loaded = [entry for entry in request.get("loaded_sources") or [] if isinstance(entry, dict)]
    append: list[dict[str, Any]] = []
    use_existing: list[str] = []
    for source, days in wanted_sources(str(request.get("user_message") or ""), today=today).items():
        if source not in allowed:
            continue
        ranges = [
            int((entry.get("params") or {}).get("days_back") or 0)
            for entry in loaded
            if entry.get("source") == source
        ]
        if not ranges:
            reason = "not_in_context"
        elif days is not None and max(ranges) < days:
            reason = "expand_range"
        else:
            reason = "refresh_state"
            use_existing.append(source)
        if reason in reasons:
            append.append({"source": source, "reason": reason, "days_back": days})
    return {
        "reasoning": "offline keyword selection",
        "append_knowledge": append,
        "use_existing": use_existing,
    }


# --- Sub-agents: the request is {"input": ..., "user": facts} ----------------------------------------------------
def _subagent_request(user: str) -> tuple[dict[str, Any], dict[str, Any]]:
    request = json.loads(user.split(REJECTED)[0])
    return dict(request["input"]), dict(request.get("user") or {})


def _weekday(value: Any) -> str:
    return WEEKDAYS[date.fromisoformat(str(value)).weekday()]


def fitness_plan(user: str, schema: dict[str, Any]) -> dict[str, Any]:
    """The plan builder's draft, as drafted for this user (goal, start, equipment, injuries)."""
    input, _ = _subagent_request(user)
    draft: dict[str, Any] = input["draft"]
    return draft


def microcycle(user: str, schema: dict[str, Any]) -> dict[str, Any]:
    """The 7 days of one plan week: the week's training days on their dates (the calendar's, as laid out in the
    input), rest on the others; with `workouts`, each training day's drafted workout written as markdown."""
    input, _ = _subagent_request(user)
    number = input["week"]
    week = next(item for item in input["plan"]["weeks"] if item["week"] == number)
    training = input.get("training_days")
    sessions = {_weekday(day["date"]): day for day in (training if training is not None else week["days"])}
    rest = {"rest": True, "focus": "Rest", "session": None, "duration_minutes": 0}
    days: list[dict[str, Any]] = []
    for weekday in WEEKDAYS:
        session = sessions.get(weekday)
        if session is None:
            days.append({"weekday": weekday, **rest})
            continue
        day = {
            "weekday": weekday,
            "rest": False,
            "focus": ", ".join(session.get("focus") or []) or session["session"],
            "session": session["session"],
            "duration_minutes": session["duration_minutes"],
            "prescription": session.get("prescription") or "",
            "date": str(session["date"]),
        }
        if input.get("workouts"):
            day["markdown"] = day_markdown(day, session, week)
        days.append(day)
    return {
        "week": number,
        "deload": week["deload"],
        "days_per_week": sum(1 for day in days if not day["rest"]),
        "target_rpe": week["target_rpe"],
        "days": days,
    }


SECTIONS = {"warmup": "Warm-Up", "cooldown": "Cool Down"}


def day_markdown(day: dict[str, Any], session: dict[str, Any], week: dict[str, Any]) -> str:
    """A training day as seed 003's markdown workout: its drafted workout's exercises by section, the
    prescription and the draft's notes."""
    title = (
        f"{day['weekday']} {day['session']} (week {week['week']}{', deload' if week.get('deload') else ''})"
    )
    sections: dict[str, list[str]] = {"Warm-Up": [], "Main Workout": [], "Cool Down": []}
    draft = session.get("draft") or {}
    for exercise in draft.get("exercises") or []:
        role = (exercise.get("group") or {}).get("type")
        sections[SECTIONS.get(str(role), "Main Workout")].append(markdown_exercise(exercise))
    notes = [str(day.get("prescription") or ""), *(str(note) for note in session.get("draft_notes") or [])]
    lines = [f"# {title}"]
    for heading, entries in sections.items():
        lines += ["", f"## {heading}"]
        lines += [f"{number}. {entry}" for number, entry in enumerate(entries, 1)] or ["- easy movement"]
    lines += ["", "## Notes", *(f"- {note}" for note in notes if note)]
    return "\n".join(lines)


def markdown_exercise(exercise: dict[str, Any]) -> str:
    """'Goblet Squat — 3x10 @ 16kg, rest 90s' (the line a workout_structure reads back)."""
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


# --- workout_message ----------------------------------------------------------------------------------------
SMS_FALLBACK_LIMIT = 1600


def markdown_lines(
    markdown: str, *, headings: bool = True, skip_notes: bool = False
) -> tuple[str | None, list[str]]:
    """The markdown's first heading (the title) and its other lines, list markers dropped."""
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


def workout_message(user: str, schema: dict[str, Any]) -> dict[str, Any]:
    """The workout's lines (as the input gives them, else the markdown's) under its title, as many as fit the
    schema's length limit, then "…and N more"."""
    input, _ = _subagent_request(user)
    limit = int(schema.get("properties", {}).get("message", {}).get("maxLength") or SMS_FALLBACK_LIMIT)
    heading, lines = markdown_lines(input.get("markdown") or "")
    lines = [str(line) for line in input["lines"]] if input.get("lines") is not None else lines
    title = (input.get("workout") or {}).get("title") or input.get("title") or heading or "Today's workout"
    message = ""
    for kept in range(len(lines), -1, -1):
        more = [f"…and {len(lines) - kept} more"] if kept < len(lines) else []
        message = "\n".join([f"🏋️ {title}", *lines[:kept], *more, "💪 Reply when done!"])
        if len(message) <= limit:
            break
    return {"message": message[:limit]}


# --- workout_structure --------------------------------------------------------------------------------------------
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
_GOAL_OF_TYPE = {"reps": "strength", "hold": "stability", "duration": "endurance", "intervals": "cardio"}
_TABATA = (8, 20, 10)


def _rest(found: re.Match[str] | None, default: int) -> int:
    """The rest written ("rest 90s", "rest 2 min") in seconds, else the default."""
    if found is None:
        return default
    return int(found.group(1)) * (60 if (found.group(2) or "").lower().startswith("min") else 1)


def _muscles(name: str, kind: str) -> list[dict[str, Any]]:
    cardio = kind == "duration" or any(word in name.lower() for word in _CARDIO_WORDS)
    return [
        {"muscle": muscle, "share": share}
        for muscle, share in (_CARDIO_MUSCLES if cardio else _FULL_BODY_MUSCLES)
    ]


def parse_line(line: str) -> dict[str, Any] | None:
    """One exercise from a line like "Goblet Squat — 3x10 @ 16kg, rest 90s", "Plank 3x45s", "Run 20 min"
    (loads and distances in the units written; the caller converts them to the user's)."""
    text = _LIST_MARKER.sub("", line).strip()
    if not text or text.startswith("#"):
        return None
    split = _FIRST_NUMBER.search(" " + text)
    name = (text[: split.start() - 1] if split else text).strip(" —–-:,") or text
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
        exercise["rest_sec"] = _rest(rest, 30)
    elif sets:
        count = int(sets.group(1))
        exercise |= {"exercise_type": "reps", "sets": count, "reps": [int(sets.group(2))] * count}
        exercise["rest_sec"] = _rest(rest, 60)
        load = _LOAD.search(text)
        if load:
            unit = "lb" if load.group(2).lower().startswith("lb") else "kg"
            exercise |= {"load_each": [float(load.group(1))] * count, "load_unit": unit}
    else:
        minutes, distance = _MINUTES.search(text), _DISTANCE.search(text)
        if not minutes and not distance:
            return None
        exercise["exercise_type"] = "duration"
        exercise["duration_min"] = float(minutes.group(1)) if minutes else 30.0
        if distance:
            unit = "km" if distance.group(2).lower() == "km" else "mi"
            exercise |= {"distance": float(distance.group(1)), "distance_unit": unit}
    kind = exercise["exercise_type"]
    return {
        "exercise_name": name,
        **exercise,
        "muscles_utilized": _muscles(name, kind),
        "goals_addressed": [{"goal": _GOAL_OF_TYPE[kind], "share": 1.0}],
        "reasoning": f"{name} as written in the workout.",
    }


def workout_structure(user: str, schema: dict[str, Any]) -> dict[str, Any]:
    """The day's drafted workout when the input has one (it respects the user's constraints); else the
    markdown's exercise lines read one by one (skipping `## Notes`)."""
    input, _ = _subagent_request(user)
    draft = input.get("draft")
    if draft:
        return {**draft, "title": input.get("title") or draft.get("title") or "Workout"}
    title, lines = markdown_lines(input.get("markdown") or "", headings=False, skip_notes=True)
    parsed = [exercise for line in lines if (exercise := parse_line(line)) is not None]
    exercises = [{"order": order, **exercise} for order, exercise in enumerate(parsed, 1)]
    return {"title": input.get("title") or title or "Workout", "exercises": exercises}


ANSWERS = {
    "knowledge_selection": knowledge_selection,
    "fitness_plan": fitness_plan,
    "microcycle": microcycle,
    "workout_message": workout_message,
    "workout_structure": workout_structure,
}
