"""Drafts for the plan sub-agents, from the user's data: what any model that plans is given to start from.

`draft_plan` is the plan builder's plan for the user (their goal, a start next Monday, the equipment of the
plan's location, an endurance goal trained on the bike when their injuries rule out running);
`week_training_days` lays a plan week's sessions on the calendar as it is now; `draft_week_workouts` composes
each of those days' workout for the user (equipment of the plan's location, injuries, preferences, recovery on
the session's day, loads progressed from the last sessions), varies the main lifts between the week's sessions
and cuts the main sets by 40 % in a deload week. The sub-agents' input builder (`trainer_agent.agents.
subagents`) puts them in the request, so every model, the offline one included, decides from them.
"""

from __future__ import annotations

import uuid
from datetime import date, timedelta
from typing import Any

from datasources_app import selectors
from datasources_app.catalog import exercise_name_key
from tools_app.plan_builder import WEEKDAYS, build_plan, classify_goal
from tools_app.training_facts import Exclusions, as_of, load_facts
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
        for exercise in composed.exercises:
            if is_main(exercise) and exercise.get("exercise_type") == "reps":
                used[exercise_name_key(str(exercise["exercise_name"]))] = EARLIER_THIS_WEEK
            if deload and is_main(exercise) and exercise.get("sets"):
                resize(exercise, max(1, round(int(exercise["sets"]) * DELOAD_VOLUME)))
        notes = [note for note in composed.notes if note]
        drafted[index] = day | {"draft": composed.workout, "draft_notes": notes}
    return [drafted[index] for index in range(len(days))]


def _weekday_index(value: Any) -> int:
    return date.fromisoformat(str(value)).weekday()
