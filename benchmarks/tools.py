"""Tool and data-source benchmark: latency of every registered tool, and how big each data source is.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/test .venv/bin/python benchmarks/tools.py
    .venv/bin/python benchmarks/tools.py --runs 100      # SQLite file var/bench.sqlite3, fewer runs

1. Seeds the demo user with 90 days of logged workouts (`seed_demo_user(reset=True, history_days=90)`;
   this RESETS the demo user's data in the target database), gives them a current workout, an active
   12-week plan (on the calendar) and a milestone, and measures every data source: the formatted text the
   model reads (characters and characters / 4 as tokens) beside the same raw data as JSON
   (`json.dumps` of `model_to_dict` of the rows the source fetched).
2. Runs every tool `--runs` times (default 1,000) through `execute_tool`, as the agent loop does (argument
   validation, savepoint, handler, formatting), with representative valid arguments, and reports p50 / p95
   latency. State a tool changes is put back between runs outside the timing (e.g. the current workout
   restored before each swap_exercise, the log entry removed after each log_completed_exercise), so every
   run sees the same data.
Runs with DEBUG off (no query log). Prints Markdown tables (docs/benchmarks.md keeps the recorded results).
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import datetime as dt
import json
import math
import platform
import statistics
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.event_store import describe_database, percentile, setup_django

HISTORY_DAYS = 90
DEFAULT_RUNS = 1000


@dataclass
class Case:
    """One tool's benchmark: its arguments, and untimed steps around each call that keep the data steady."""

    tool: str
    args: Callable[[], dict[str, Any]]
    before: Callable[[], None] = lambda: None
    after: Callable[[Any], object] = lambda result: None


@dataclass
class Timing:
    tool: str
    runs: int
    latencies_ms: list[float] = field(default_factory=list)


def to_jsonable(value: Any) -> Any:
    """Rows as their JSON form: model instances via model_to_dict (a log with its entries, M2M as dicts)."""
    from django.db import models
    from django.forms.models import model_to_dict

    from datasources_app.models import WorkoutLog

    if isinstance(value, models.Model):
        row = {key: to_jsonable(item) for key, item in model_to_dict(value).items()}
        row["id"] = str(value.pk)
        if isinstance(value, WorkoutLog):
            row["entries"] = [to_jsonable(entry) for entry in value.entries.all()]
        return row
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {item.name: to_jsonable(getattr(value, item.name)) for item in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {str(key): to_jsonable(item) for key, item in value.items()}
    if isinstance(value, list | tuple | set):
        return [to_jsonable(item) for item in value]
    return value


def source_sizes(user_id: uuid.UUID) -> list[tuple[str, int, int]]:
    """(source and params, formatted characters, JSON characters) for every data source."""
    from datasources_app.sources import all_sources, units_for

    units = units_for(user_id=user_id)
    requests: list[tuple[str, dict[str, Any]]] = [(source.name, {}) for source in all_sources()]
    requests.insert(
        [name for name, _ in requests].index("workout_history") + 1,
        ("workout_history", {"days_back": HISTORY_DAYS, "limit": 100}),
    )
    rows = []
    for name, params in requests:
        source = next(item for item in all_sources() if item.name == name)
        parsed = source.parse_params(params)
        raw = source.fetch(user_id, parsed)
        text = source.format(raw, units)
        raw_json = json.dumps(to_jsonable(raw), default=str)
        label = name + (
            " (" + ", ".join(f"{key}={value}" for key, value in params.items()) + ")" if params else ""
        )
        rows.append((label, len(text), len(raw_json)))
    return rows


def demo_workout() -> dict[str, Any]:
    """A valid five-exercise workout for the demo user's Home (dumbbells, bench, bands), kg."""
    muscles_press = [{"muscle": "Chest", "share": 0.7}, {"muscle": "Triceps", "share": 0.3}]
    return {
        "title": "Home Push & Core",
        "exercises": [
            {
                "exercise_name": "Dumbbell Bench Press",
                "exercise_type": "reps",
                "order": 1,
                "sets": 4,
                "reps": [10, 10, 8, 8],
                "load_each": [20, 20, 22.5, 22.5],
                "load_unit": "kg",
                "rest_sec": 90,
                "muscles_utilized": muscles_press,
                "goals_addressed": [
                    {"goal": "strength", "share": 0.6},
                    {"goal": "hypertrophy", "share": 0.4},
                ],
                "reasoning": "Main press.",
                "equipment": ["dumbbells", "bench"],
            },
            {
                "exercise_name": "Push-Up",
                "exercise_type": "reps",
                "order": 2,
                "sets": 3,
                "reps": [15, 12, 10],
                "rest_sec": 60,
                "muscles_utilized": muscles_press,
                "goals_addressed": [{"goal": "hypertrophy", "share": 1.0}],
                "reasoning": "Bodyweight finisher.",
                "equipment": [],
            },
            {
                "exercise_name": "Plank",
                "exercise_type": "hold",
                "order": 3,
                "sets": 3,
                "hold_sec": [30, 45, 60],
                "rest_sec": 30,
                "muscles_utilized": [{"muscle": "Abs", "share": 1.0}],
                "goals_addressed": [{"goal": "stability", "share": 1.0}],
                "reasoning": "Core.",
            },
            {
                # The demo user's knee rules out running and mountain climbers (issue 17's guardrails).
                "exercise_name": "Outdoor Walk",
                "exercise_type": "duration",
                "order": 4,
                "duration_min": 20,
                "distance": 2,
                "distance_unit": "km",
                "muscles_utilized": [
                    {"muscle": "Quadriceps", "share": 0.6},
                    {"muscle": "Calves", "share": 0.4},
                ],
                "goals_addressed": [{"goal": "endurance", "share": 1.0}],
                "reasoning": "Aerobic base.",
            },
            {
                "exercise_name": "Shadow Boxing",
                "exercise_type": "intervals",
                "order": 5,
                "rounds": 8,
                "work_sec": 20,
                "rest_sec": 10,
                "muscles_utilized": [{"muscle": "Shoulders", "share": 0.5}, {"muscle": "Abs", "share": 0.5}],
                "goals_addressed": [{"goal": "endurance", "share": 1.0}],
                "reasoning": "Finisher.",
            },
        ],
    }


def build_cases(ctx: Any) -> list[Case]:
    """Representative valid calls for every registered tool, with the untimed resets each needs."""
    from datasources_app import selectors, services
    from datasources_app.models import CurrentWorkout, MilestoneGoal, Preference, ScheduledWorkout, WorkoutLog
    from sessions_app.services import append_event
    from tools_app.registry import all_tools, execute_tool

    user_id = ctx.user_id
    created = execute_tool("generate_workout", {"workout": demo_workout()}, ctx)
    assert created.success and created.artifact is not None, created.formatted
    artifact = created.artifact
    append_event(session=ctx.session, event_type="artifact", data=artifact)
    first_id = artifact["payload"]["exercises"][0]["id"]
    home = selectors.current_location(user_id=user_id)
    assert home is not None
    gym = next(location for location in selectors.list_locations(user_id=user_id) if not location.is_current)
    milestone = services.create_milestone_goal(
        user_id=user_id, title="Bench 40 kg dumbbells", target_value=40
    )
    scheduled = services.schedule_workout(
        user_id=user_id,
        scheduled_date=selectors.local_today(user_id=user_id) + dt.timedelta(days=2),
        title="Legs",
    )
    tomorrow = (selectors.local_today(user_id=user_id) + dt.timedelta(days=1)).isoformat()
    locations = [home.name, gym.name]

    def restore_workout() -> None:
        services.save_current_workout(
            user_id=user_id,
            workout=copy.deepcopy(artifact),
            artifact_id=artifact["artifact_id"],
            session_id=ctx.session.pk,
        )

    def delete_log(result: Any) -> None:
        WorkoutLog.objects.filter(id=result.data["log_id"]).delete()

    def delete_entry(result: Any) -> None:
        services.undo_log_entry(user_id=user_id, entry_id=uuid.UUID(result.data["log_entry_id"]))

    def make_preference() -> None:
        pending["preference"] = str(
            services.create_preference(
                user_id=user_id, preference_type="permanent", description="Temp", guidance="-"
            ).id
        )

    def log_entry() -> None:
        entry = services.log_single_exercise(
            user_id=user_id,
            entry={"exercise_name": "Goblet Squat", "actual_reps": [10]},
            session_id=ctx.session.pk,
        )
        pending["entry"] = str(entry.id)

    def make_scheduled() -> None:
        pending["scheduled"] = str(
            services.schedule_workout(
                user_id=user_id, scheduled_date=dt.date.fromisoformat(tomorrow), title="Temp"
            ).id
        )

    pending: dict[str, str] = {}
    switches = iter(range(10**9))
    cases = [
        Case(
            "message_notify_user", lambda: {"message": "Here it is", "artifact_id": artifact["artifact_id"]}
        ),
        Case("message_ask_user", lambda: {"question": "How long?", "options": ["30 min", "45 min"]}),
        Case("idle", lambda: {"reason": "done"}),
        Case("generate_workout", lambda: {"workout": demo_workout()}, before=restore_workout),
        Case(
            "swap_exercise",
            lambda: {
                "exercise_id": "2",
                "replacement_name": "Diamond Push-Up",
            },
            before=restore_workout,
        ),
        Case(
            "adjust_exercise",
            lambda: {
                "exercise_id": first_id,
                "adjustments": {"sets": 3, "reps": [8, 8, 8], "load_each": [22.5, 22.5, 22.5]},
            },
            before=restore_workout,
        ),
        Case("remove_exercise", lambda: {"exercise_id": "3"}, before=restore_workout),
        Case(
            "log_workout",
            lambda: {"completed_exercises": [{"exercise_id": "1", "rpe": 8}, {"exercise_id": "3"}]},
            before=restore_workout,
            after=delete_log,
        ),
        Case(
            "fetch_data",
            lambda: {
                "sources": ["workout_history", "muscle_goals", "active_preferences"],
                "params": {"workout_history": {"limit": 5}},
            },
        ),
        Case("set_current_location", lambda: {"location_name": locations[next(switches) % 2]}),
        Case(
            "set_goals",
            lambda: {
                "goal_type": "category",
                "category_goals": {"strength": 40, "hypertrophy": 30, "endurance": 20, "mobility": 10},
            },
        ),
        Case(
            "create_milestone_goal",
            lambda: {"title": "Run 5 km", "target_value": 5, "unit": "km"},
            after=lambda result: MilestoneGoal.objects.filter(id=result.data["milestone"]["id"]).delete(),
        ),
        Case("update_milestone_goal", lambda: {"milestone_id": str(milestone.id), "current_value": 30}),
        Case(
            "set_preference",
            lambda: {
                "description": "No burpees",
                "guidance": "Use squat thrusts",
                "exclude_exercises": ["Burpee"],
            },
            after=lambda result: Preference.objects.filter(id=result.data["preference"]["id"]).delete(),
        ),
        Case("delete_preference", lambda: {"preference_id": pending["preference"]}, before=make_preference),
        Case(
            "log_completed_exercise",
            lambda: {
                "exercise_name": "Goblet Squat",
                "reps": [12, 12, 10],
                "load_each": [16, 16, 16],
                "rpe": 7,
            },
            after=delete_entry,
        ),
        Case(
            "mark_exercise_complete",
            lambda: {"exercise_id": first_id, "rpe": 8},
            before=restore_workout,
            after=delete_entry,
        ),
        Case("undo_logged_exercise", lambda: {"exercise_id": pending["entry"]}, before=log_entry),
        Case("generate_exercise_timer", lambda: {"exercise_id": "1"}, before=restore_workout),
        Case("generate_workout_timers", lambda: {}, before=restore_workout),
        Case(
            "schedule_workout",
            lambda: {"date": tomorrow, "time": "18:00", "title": "Upper Body", "duration_minutes": 45},
            after=lambda result: ScheduledWorkout.objects.filter(
                id=result.data["scheduled_workout"]["workout_id"]
            ).delete(),
        ),
        Case(
            "update_scheduled_workout",
            lambda: {"workout_id": str(scheduled.id), "time": "07:30", "notes": "early"},
        ),
        Case("delete_scheduled_workout", lambda: {"workout_id": pending["scheduled"]}, before=make_scheduled),
        Case(
            "create_workout_plan",
            lambda: {"name": "12-Week Strength", "goal": "get stronger", "weeks": 12, "days_per_week": 3},
            after=lambda result: services.delete_workout_plan(
                user_id=user_id, plan_id=uuid.UUID(result.data["plan_id"])
            ),
        ),
        Case("get_training_stats", lambda: {"view": "summary", "days": 30}),
    ]
    missing = {tool.name for tool in all_tools()} - {case.tool for case in cases}
    if missing:
        raise SystemExit(f"No benchmark case for: {', '.join(sorted(missing))}")
    CurrentWorkout.objects.filter(user_id=user_id).delete()
    restore_workout()
    return sorted(cases, key=lambda case: [tool.name for tool in all_tools()].index(case.tool))


def time_tool(case: Case, ctx: Any, runs: int) -> Timing:
    from tools_app.registry import execute_tool

    timing = Timing(case.tool, runs)
    for run in range(runs + 1):  # the first call warms caches and is not counted
        case.before()
        args = case.args()
        began = time.perf_counter()
        result = execute_tool(case.tool, args, ctx)
        elapsed = (time.perf_counter() - began) * 1000
        if not result.success:
            raise SystemExit(f"{case.tool} failed on run {run}: {result.raw_formatted}")
        case.after(result)
        if run:
            timing.latencies_ms.append(elapsed)
    return timing


def prepare_demo_user() -> Any:
    """The demo user with 90 days of logs, a current workout, an active plan and a milestone; a session."""
    from datasources_app import services
    from datasources_app.demo import DEMO_USER_ID
    from sessions_app.services import create_session
    from tools_app.registry import execute_tool
    from tools_app.types import ToolContext

    services.load_exercise_catalog()
    services.seed_demo_user(reset=True, history_days=HISTORY_DAYS)
    session = create_session(user_id=DEMO_USER_ID, metadata={"benchmark": "tools"})
    ctx = ToolContext(user_id=DEMO_USER_ID, session=session)
    plan = execute_tool(
        "create_workout_plan", {"name": "Strength Block", "goal": "get stronger", "days_per_week": 3}, ctx
    )
    assert plan.success, plan.formatted
    services.create_milestone_goal(
        user_id=DEMO_USER_ID, title="Run 5 km", target_value=5, unit="km", current_value=3
    )
    workout = execute_tool("generate_workout", {"workout": demo_workout()}, ctx)
    assert workout.success, workout.formatted
    return ctx


def clean_up(ctx: Any) -> None:
    """Put the demo user back to the seeded state and drop the benchmark session."""
    from datasources_app import services
    from datasources_app.models import MilestoneGoal, ScheduledWorkout, WorkoutPlan
    from sessions_app.services import delete_session

    ScheduledWorkout.objects.filter(user_id=ctx.user_id).delete()
    WorkoutPlan.objects.filter(user_id=ctx.user_id).delete()
    MilestoneGoal.objects.filter(user_id=ctx.user_id).delete()
    services.clear_current_workout(user_id=ctx.user_id)
    services.seed_demo_user(reset=True, history_days=HISTORY_DAYS)
    delete_session(session=ctx.session)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=DEFAULT_RUNS, help="Timed calls per tool (default 1000).")
    parser.add_argument("--only", nargs="*", help="Only these tools.")
    options = parser.parse_args()
    setup_django()
    import django
    from django.db import connection

    from datasources_app.models import WorkoutLog

    ctx = prepare_demo_user()
    try:
        logs = WorkoutLog.objects.filter(user_id=ctx.user_id).count()
        sizes = source_sizes(ctx.user_id)
        cases = [case for case in build_cases(ctx) if not options.only or case.tool in options.only]
        began = time.perf_counter()
        timings = [time_tool(case, ctx, options.runs) for case in cases]
        wall = time.perf_counter() - began
    finally:
        clean_up(ctx)
        connection.close()

    print(
        f"database: {describe_database()}; Python {platform.python_version()}; Django {django.get_version()}"
    )
    print(
        f"demo user: {logs} logged workouts over {HISTORY_DAYS} days; {options.runs} timed runs per tool, {wall:.0f} s"
    )
    print()
    print("| tool | runs | p50 (ms) | p95 (ms) | max (ms) |")
    print("|---|---:|---:|---:|---:|")
    for timing in timings:
        values = timing.latencies_ms
        print(
            f"| `{timing.tool}` | {timing.runs} | {statistics.median(values):.2f} | {percentile(values, 0.95):.2f} "
            f"| {max(values):.2f} |"
        )
    print()
    print(
        "| data source | formatted chars | formatted tokens (chars/4) | JSON chars | JSON tokens | formatted / JSON |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    for label, chars, json_chars in sizes:
        print(
            f"| `{label}` | {chars} | {math.ceil(chars / 4)} | {json_chars} | {math.ceil(json_chars / 4)} "
            f"| {chars / json_chars:.0%} |"
        )
    # The total counts every source once, with its default parameters (the extra history row is left out).
    defaults = [(chars, json_chars) for label, chars, json_chars in sizes if "(" not in label]
    total_chars = sum(chars for chars, _ in defaults)
    total_json = sum(json_chars for _, json_chars in defaults)
    print(
        f"| **all sources, default params** | {total_chars} | {math.ceil(total_chars / 4)} | {total_json} | "
        f"{math.ceil(total_json / 4)} | {total_chars / total_json:.0%} |"
    )


if __name__ == "__main__":
    main()
