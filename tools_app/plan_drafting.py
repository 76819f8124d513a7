"""Drafts for the plan sub-agents, from the user's data: what any model that plans is given to start from.

`draft_plan` is the plan builder's plan for the user (their goal, a start next Monday, the equipment of the
plan's location, an endurance goal trained on the bike when their injuries rule out running);
`week_training_days` lays a plan week's sessions on the calendar as it is now; `draft_week_workouts` composes
each of those days' workout for the user (equipment of the plan's location, injuries, preferences, recovery on
the session's day, loads progressed from the last sessions), varies the main lifts between the week's sessions
and follows a strength day's prescription (`day_targets`: sets and reps of the main lifts and accessories, the
target RPE as a cue), else cuts the main sets by 40 % in a deload week. The sub-agents' input builder (`trainer_agent.agents.
subagents`) puts them in the request, so every model, the offline one included, decides from them.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass, replace
from datetime import date, timedelta
from typing import Any

from datasources_app import selectors
from datasources_app.catalog import exercise_name_key
from tools_app.plan_builder import WEEKDAYS, build_plan, classify_goal
from tools_app.training_facts import Exclusions, TrainingFacts, as_of, load_facts, round_load
from tools_app.workout_drafting import (
    EARLIER_THIS_WEEK,
    brief_for_session,
    compose_workout,
    is_main,
    resize,
)
from tools_app.workout_validation import unsafe_named_exercises, user_injuries

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
) -> dict[str, Any]:
    """The fitness_plan answer the plan builder gives for the user. ValueError for inconsistent arguments."""
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
    drafted: dict[int, dict[str, Any]] = {}
    # Monday to Sunday (a week that starts mid-week varies its later weekdays' lifts from the earlier ones).
    for index, day in sorted(enumerate(days), key=lambda item: _weekday_index(item[1]["date"])):
        on_the_day = as_of(facts, days_ahead=(date.fromisoformat(str(day["date"])) - today).days)
        brief = brief_for_session(str(day["session"]), int(day["duration_minutes"]), deload=deload)
        composed = None
        if used:
            composed = compose_workout(brief, on_the_day.with_exclusions(Exclusions(keys=dict(used))))
            if composed is not None and sum(1 for e in composed.exercises if is_main(e)) < MIN_VARIED_MAIN:
                composed = None
        composed = composed or compose_workout(brief, on_the_day)
        if composed is None:
            drafted[index] = day | {"draft": None, "draft_notes": [NOTHING_FITS]}
            continue
        targets = day_targets(str(day.get("prescription") or "")) if brief.style == "strength" else None
        for exercise in composed.exercises:
            if is_main(exercise) and exercise.get("exercise_type") == "reps":
                used[exercise_name_key(str(exercise["exercise_name"]))] = EARLIER_THIS_WEEK
            if deload and targets is None and is_main(exercise) and exercise.get("sets"):
                resize(exercise, max(1, round(int(exercise["sets"]) * DELOAD_VOLUME)))
        notes = [note for note in composed.notes if note]
        if targets is not None and follow_targets(composed.exercises, targets, on_the_day):
            notes.append(f"I followed the plan's sets, reps and effort for the day ({day['prescription']})")
        drafted[index] = day | {"draft": composed.workout, "draft_notes": notes}
    return [drafted[index] for index in range(len(days))]


def _weekday_index(value: Any) -> int:
    return date.fromisoformat(str(value)).weekday()


# --- The day's prescription -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class SetsAndReps:
    """'4×5', '3×8-10', '3 sets of 8-12 reps': sets, and the reps (a range when `high` > `low`)."""

    sets: int
    low: int
    high: int
    applies_to: str  # "main lifts" (loaded compounds), "accessories" (the rest) or "all"


@dataclass(frozen=True)
class DayTargets:
    """What a plan day's prescription says the strength work is: sets and reps by kind, and the target RPE."""

    sets_and_reps: tuple[SetsAndReps, ...]
    rpe: float | None


_SETS_X_REPS = re.compile(
    r"(\d+)\s*[x×]\s*(\d+)(?![\d.])(?:\s*[-–]\s*(\d+)(?![\d.]))?(?!\s*[-–]\s*\d)(?!\s*(?:s\b|sec|min|%))",
    re.I,
)
_SETS_OF_REPS = re.compile(r"(\d+)\s+(?:sets|rounds)\s+of\b.*?(\d+)(?:\s*[-–]\s*(\d+))?\s+reps", re.I)
_RPE = re.compile(r"\bRPE\s*(\d+(?:\.\d+)?)(?!\s*[-–]\s*\d)", re.I)


def day_targets(prescription: str) -> DayTargets | None:
    """The sets, reps and RPE a plan day's prescription gives its strength work ('main lifts 4×5 @ 70% 1RM, RPE
    7; accessories 3×8-10', '4x6 main lifts at RPE 7, 3x8-10 accessories', '5-6 exercises × 3 sets of 8-12
    reps, RPE 7', '3 rounds of 5-6 exercises × 10-15 reps'); None when it gives none."""
    found: list[SetsAndReps] = []
    for clause in re.split(r"[;,]", prescription):
        lowered = clause.lower()
        kind = "accessories" if "accessor" in lowered else "main lifts" if "main" in lowered else "all"
        match = _SETS_OF_REPS.search(clause) or _SETS_X_REPS.search(clause)
        if match is None:
            continue
        sets, low = int(match[1]), int(match[2])
        high = int(match[3]) if match[3] else low
        if 1 <= sets <= 10 and 1 <= low <= high <= 30:
            found.append(SetsAndReps(sets, low, high, kind))
    if any(item.applies_to == "accessories" for item in found):
        found = [
            replace(item, applies_to="main lifts") if item.applies_to == "all" else item for item in found
        ]
    rpe = _RPE.search(prescription)
    if not found and rpe is None:
        return None
    return DayTargets(tuple(found), float(rpe[1]) if rpe else None)


def follow_targets(exercises: list[dict[str, Any]], targets: DayTargets, facts: TrainingFacts) -> bool:
    """Give the draft's main reps exercises the day's sets and reps (a load moved to match the new reps, by the
    Epley estimate, so the effort stays what the load was chosen for) and its target RPE as a cue. Whether any
    exercise changed."""
    by_key = {key: candidate for candidate in facts.catalog for key in candidate.keys}
    changed = False
    for exercise in exercises:
        if not is_main(exercise) or exercise.get("exercise_type") != "reps" or not exercise.get("reps"):
            continue
        candidate = by_key.get(exercise_name_key(str(exercise["exercise_name"])))
        lift = candidate is not None and candidate.mechanic == "compound" and candidate.loaded_equipment
        kind = "main lifts" if lift else "accessories"
        rule = next((item for item in targets.sets_and_reps if item.applies_to in (kind, "all")), None)
        if rule is not None:
            before = int(exercise["reps"][0])
            reps = min(max(before, rule.low), rule.high)
            loads = exercise.get("load_each")
            resize(exercise, rule.sets)
            exercise["reps"] = [reps] * rule.sets
            if loads and reps != before and candidate is not None and candidate.loaded_equipment:
                moved = float(loads[0]) * (1 + before / 30) / (1 + reps / 30)
                load = round_load(moved, implement=candidate.loaded_equipment, facts=facts)
                exercise["load_each"] = [load] * rule.sets
            if reps <= 6:
                exercise["rest_sec"] = max(int(exercise.get("rest_sec") or 0), 120)
            changed = True
        if targets.rpe is not None:
            cue = f"Work at about RPE {targets.rpe:g}."
            exercise["notes"] = f"{exercise.get('notes') or ''} {cue}".strip()
            changed = True
    return changed
