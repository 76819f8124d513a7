"""The statistics tools (docs/contracts.md §11.5 (tool list)): get_workout_statistics, get_exercise_breakdown,
get_progress_trends and generate_stats_summary.

Every figure is computed from the user's logs by `datasources_app.stats` (volume = Σ reps × load of the
sets done, both hands of a dumbbell pair; a pair's best set and 1RM are per hand and say so; estimated 1RM by Epley, frequency per week, weekly trends), in the user's weight unit. The
observations are full data (docs/contracts.md §11.2 (observations: full)), written as compact text. Seed 001's `time_period`
(week | month | quarter | year | all_time), `breakdown_type` and its trend metrics (weight, frequency) are
accepted besides the canonical arguments.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any, Literal

from django.utils import timezone
from pydantic import BaseModel, Field, model_validator
from pydantic.json_schema import SkipJsonSchema

from datasources_app import selectors, stats
from datasources_app.catalog import exercise_name_key
from datasources_app.formatters import day, number, percent
from datasources_app.loads import holds_dumbbell_pair
from datasources_app.sources import units_for
from datasources_app.stats import ExerciseStats, SetDone, WorkoutStatistics
from tools_app.registry import register
from tools_app.types import Tool, ToolContext, ToolOutcome

TOP_EXERCISES = 5
BREAKDOWN_LIMIT = 20
MUSCLE_ROWS = 8
_PERIOD_DAYS_BACK = {"week": 7, "month": 30, "quarter": 91, "year": 365}
_SEED_001_METRICS = {"weight": "e1rm", "frequency": "sessions"}
_SEED_001_BREAKDOWNS = {"exercise_name": "exercise"}
_METRIC_LABELS = {
    "volume": "volume",
    "sessions": "sessions",
    "sets": "sets",
    "rpe": "average RPE",
    "e1rm": "best estimated 1RM",
}

TrendMetric = Literal["volume", "sessions", "sets", "rpe", "e1rm"]
SummaryPeriod = Literal["week", "month", "quarter", "year"]
SummarySection = Literal[
    "overview", "top_exercises", "personal_records", "muscle_breakdown", "category_breakdown", "trend"
]
ALL_SECTIONS: tuple[SummarySection, ...] = (
    "overview",
    "top_exercises",
    "personal_records",
    "muscle_breakdown",
    "category_breakdown",
    "trend",
)


def _days_back_from_period(data: Any) -> Any:
    """Seed 001's `time_period` becomes days_back (all_time: no limit)."""
    if isinstance(data, dict) and "time_period" in data and "days_back" not in data:
        data = dict(data)
        period = data.pop("time_period")
        if period == "all_time":
            data["all_time"] = True
        elif period in _PERIOD_DAYS_BACK:
            data["days_back"] = _PERIOD_DAYS_BACK[period]
        else:
            data["days_back"] = period  # let validation report it
    return data


class WorkoutStatisticsInput(BaseModel):
    days_back: int = Field(default=30, ge=1, le=3650, description="How many days back from now (default 30).")
    all_time: SkipJsonSchema[bool] = False

    @model_validator(mode="before")
    @classmethod
    def _accept_time_period(cls, data: Any) -> Any:
        return _days_back_from_period(data)


class ExerciseBreakdownInput(BaseModel):
    exercise_name: str | None = Field(
        default=None,
        description="One exercise to report on (any spelling, e.g. 'bench press'); omit for all.",
    )
    days_back: int | None = Field(
        default=None, ge=1, le=3650, description="How many days back from now; omit for all logged history."
    )
    group_by: Literal["exercise", "muscle", "category", "exercise_type"] = Field(
        default="exercise",
        description="exercise: per-exercise sessions, sets, volume, best set and estimated 1RM; muscle / "
        "category / exercise_type: share of training per group.",
    )
    all_time: SkipJsonSchema[bool] = False

    @model_validator(mode="before")
    @classmethod
    def _accept_seed_001_spellings(cls, data: Any) -> Any:
        data = _days_back_from_period(data)
        if isinstance(data, dict) and "breakdown_type" in data:
            data = dict(data)
            value = data.pop("breakdown_type")
            data.setdefault("group_by", _SEED_001_BREAKDOWNS.get(value, value))
        return data


class ProgressTrendsInput(BaseModel):
    weeks: int = Field(
        default=8, ge=1, le=52, description="How many calendar weeks, the current one last (default 8)."
    )
    metric: TrendMetric = Field(
        default="volume",
        description="volume (Σ reps × load), sessions, sets, rpe (average), e1rm (best estimated 1RM).",
    )
    exercise_name: str | None = Field(
        default=None, description="Only this exercise (e.g. 'squat'); omit for all."
    )

    @model_validator(mode="before")
    @classmethod
    def _accept_seed_001_spellings(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        data = dict(data)
        if isinstance(data.get("metric"), str):
            data["metric"] = _SEED_001_METRICS.get(data["metric"], data["metric"])
        period = data.pop("time_period", None)
        if period in ("month", "quarter", "year") and "weeks" not in data:
            data["weeks"] = {"month": 4, "quarter": 13, "year": 52}[period]
        return data


class StatsSummaryInput(BaseModel):
    period: SummaryPeriod = Field(
        default="week", description="The period to summarise, ending now (default week)."
    )
    include_sections: list[SummarySection] | None = Field(
        default=None, description="Sections to include (default all): " + ", ".join(ALL_SECTIONS) + "."
    )


# --- Text helpers -------------------------------------------------------------------------------------------
def _thousands(value: float) -> str:
    return f"{round(value):,}"


def _set_text(done: SetDone | None, unit: str) -> str:
    return f"{number(done.load)}{unit} × {done.reps}" if done else "-"


def _window(*, days_back: int | None, all_time: bool) -> tuple[datetime | None, str]:
    if all_time or days_back is None:
        return None, "all logged history"
    return timezone.now() - timedelta(days=days_back), f"last {days_back} days"


def _exercise_line(item: ExerciseStats, unit: str, units: Any) -> str:
    parts = [f"{item.sessions} sessions", f"{item.sets} sets"]
    each = " each hand" if holds_dumbbell_pair(name=item.name) else ""  # loads of one dumbbell of a pair
    if item.volume:
        parts.append(f"volume {_thousands(item.volume)}{unit}")
    if item.best_set:
        parts.append(f"best set {_set_text(item.best_set, unit)}{each}")
    if item.best_estimated_1rm:
        parts.append(
            f"e1RM {number(item.best_estimated_1rm)}{unit}{each} ({_set_text(item.best_estimated_1rm_set, unit)})"
        )
    if item.average_rpe is not None:
        parts.append(f"RPE {number(item.average_rpe)}")
    parts.append(f"last {day(item.last_performed, units)}")
    return f"{item.name} ({item.exercise_type}): " + ", ".join(parts)


def _exercise_data(item: ExerciseStats) -> dict[str, Any]:
    return {
        "name": item.name,
        "exercise_type": item.exercise_type,
        "sessions": item.sessions,
        "sets": item.sets,
        "volume": round(item.volume, 1),
        "best_set": {"load": item.best_set.load, "reps": item.best_set.reps} if item.best_set else None,
        "load_per_hand": holds_dumbbell_pair(name=item.name),
        "best_estimated_1rm": round(item.best_estimated_1rm, 1) if item.best_estimated_1rm else None,
        "average_rpe": round(item.average_rpe, 2) if item.average_rpe is not None else None,
        "last_performed": item.last_performed.isoformat(),
    }


def _overview_data(result: WorkoutStatistics) -> dict[str, Any]:
    return {
        "workouts": result.workouts,
        "active_days": result.active_days,
        "exercises": result.exercises,
        "sets": result.sets,
        "total_volume": round(result.total_volume, 1),
        "total_minutes": round(result.total_minutes, 1),
        "average_rpe": round(result.average_rpe, 2) if result.average_rpe is not None else None,
        "workouts_per_week": round(result.workouts_per_week, 2),
        "unit": result.unit,
    }


def _overview_line(result: WorkoutStatistics) -> str:
    rpe = f", average RPE {number(result.average_rpe)}" if result.average_rpe is not None else ""
    minutes = f", {number(result.total_minutes)} min of cardio/intervals" if result.total_minutes else ""
    return (
        f"{result.workouts} workouts ({number(result.workouts_per_week)}/week) on {result.active_days} days, "
        f"{result.exercises} exercises, {result.sets} sets, volume {_thousands(result.total_volume)}{result.unit}"
        f"{minutes}{rpe}"
    )


def _shares_line(rows: Sequence[stats.BreakdownRow], limit: int = MUSCLE_ROWS) -> str:
    return ", ".join(f"{row.name} {percent(row.volume_share)}" for row in rows[:limit]) or "none"


def _failure(message: str) -> ToolOutcome:
    return ToolOutcome(success=False, data={"error": message}, text=message)


def _no_such_exercise(user_id: uuid.UUID, name: str, start: datetime | None, scope: str) -> ToolOutcome:
    logged = stats.exercise_breakdown(user_id=user_id, start=start)
    names = ", ".join(item.name for item in logged[:BREAKDOWN_LIMIT]) or "none"
    return _failure(f"No logged '{name}' in {scope}. Exercises logged: {names}.")


# --- Handlers --------------------------------------------------------------------------------------------------
def get_workout_statistics(args: WorkoutStatisticsInput, ctx: ToolContext) -> ToolOutcome:
    """Totals, frequency, volume, muscle split, top exercises and records over a window."""
    start, scope = _window(days_back=args.days_back, all_time=args.all_time)
    result = stats.workout_statistics(user_id=ctx.user_id, start=start)
    unit = result.unit
    units = units_for(user_id=ctx.user_id)
    if not result.workouts:
        text = f"No workouts logged in {scope}."
        return ToolOutcome(success=True, data={"scope": scope, "overview": _overview_data(result)}, text=text)
    top = stats.exercise_breakdown(user_id=ctx.user_id, start=start)[:TOP_EXERCISES]
    muscles = stats.grouped_breakdown(user_id=ctx.user_id, by="muscle", start=start)
    records = sorted(
        (item for item in top if item.best_estimated_1rm), key=lambda item: -(item.best_estimated_1rm or 0)
    )
    lines = [
        f"Statistics, {scope} (weights in {unit}):",
        _overview_line(result),
        f"By muscle: {_shares_line(muscles)}",
        "Top exercises:",
        *(f"  {_exercise_line(item, unit, units)}" for item in top),
    ]
    if records:
        lines.append(
            "Best estimated 1RM: "
            + "; ".join(f"{item.name} {number(item.best_estimated_1rm or 0)}{unit}" for item in records)
        )
    data = {
        "scope": scope,
        "overview": _overview_data(result),
        "by_muscle": [{"muscle": row.name, "share": round(row.volume_share, 4)} for row in muscles],
        "top_exercises": [_exercise_data(item) for item in top],
    }
    return ToolOutcome(success=True, data=data, text="\n".join(lines))


def get_exercise_breakdown(args: ExerciseBreakdownInput, ctx: ToolContext) -> ToolOutcome:
    """Per exercise (or per muscle, category, type): what was done and the personal bests."""
    start, scope = _window(days_back=args.days_back, all_time=args.all_time)
    unit = selectors.get_settings(user_id=ctx.user_id).weight_unit
    if args.exercise_name or args.group_by == "exercise":
        items = stats.exercise_breakdown(user_id=ctx.user_id, start=start, exercise_name=args.exercise_name)
        if args.exercise_name and not items:
            return _no_such_exercise(ctx.user_id, args.exercise_name, start, scope)
        if not items:
            return ToolOutcome(
                success=True, data={"scope": scope, "exercises": []}, text=f"No exercises logged in {scope}."
            )
        units = units_for(user_id=ctx.user_id)
        shown = items[:BREAKDOWN_LIMIT]
        more = f"\n(+{len(items) - len(shown)} more exercises)" if len(items) > len(shown) else ""
        text = (
            f"Exercise breakdown, {scope} (weights in {unit}):\n"
            + "\n".join(f"- {_exercise_line(item, unit, units)}" for item in shown)
            + more
        )
        return ToolOutcome(
            success=True,
            data={"scope": scope, "unit": unit, "exercises": [_exercise_data(item) for item in shown]},
            text=text,
        )
    rows = stats.grouped_breakdown(user_id=ctx.user_id, by=args.group_by, start=start)
    if not rows:
        return ToolOutcome(
            success=True, data={"scope": scope, "groups": []}, text=f"No exercises logged in {scope}."
        )
    text = f"Share of training by {args.group_by}, {scope}:\n" + "\n".join(
        f"- {row.name}: {percent(row.volume_share)} ({row.entries} entries)" for row in rows
    )
    groups = [{"name": row.name, "entries": row.entries, "share": round(row.volume_share, 4)} for row in rows]
    return ToolOutcome(
        success=True, data={"scope": scope, "group_by": args.group_by, "groups": groups}, text=text
    )


def _metric_value(point: stats.WeekPoint, metric: str, unit: str) -> str:
    if metric == "volume":
        return f"{_thousands(point.volume)}{unit}"
    if metric == "rpe":
        return number(point.average_rpe) if point.average_rpe is not None else "-"
    if metric == "e1rm":
        return f"{number(point.best_estimated_1rm)}{unit}" if point.best_estimated_1rm else "-"
    return str(getattr(point, metric))


def _trend_phrase(trend: stats.Trend) -> str:
    change = (
        f" {'+' if (trend.change or 0) > 0 else ''}{percent(trend.change)}"
        if trend.change is not None
        else ""
    )
    return f"{trend.direction}{change} (second half of the weeks vs the first)"


def get_progress_trends(args: ProgressTrendsInput, ctx: ToolContext) -> ToolOutcome:
    """Week-by-week figures and whether the chosen metric is going up, down or flat."""
    trend = stats.weekly_trend(
        user_id=ctx.user_id, weeks=args.weeks, metric=args.metric, exercise_name=args.exercise_name
    )
    if args.exercise_name and not any(point.sessions for point in trend.weeks):
        start = timezone.now() - timedelta(weeks=args.weeks)
        return _no_such_exercise(ctx.user_id, args.exercise_name, start, f"the last {args.weeks} weeks")
    unit = trend.unit
    what = f" of {args.exercise_name}" if args.exercise_name else ""
    lines = [f"Weekly {_METRIC_LABELS[args.metric]}{what}, last {args.weeks} weeks (weights in {unit}):"]
    for point in trend.weeks:
        rpe = f", RPE {number(point.average_rpe)}" if point.average_rpe is not None else ""
        e1rm = f", e1RM {number(point.best_estimated_1rm)}{unit}" if point.best_estimated_1rm else ""
        lines.append(
            f"  w/c {day(point.week_start)}: {_metric_value(point, args.metric, unit)} | {point.sessions} sessions, "
            f"{point.sets} sets, volume {_thousands(point.volume)}{unit}{rpe}{e1rm}"
        )
    lines.append(f"Trend: {_trend_phrase(trend)}")
    data = {
        "metric": args.metric,
        "exercise_name": args.exercise_name,
        "unit": unit,
        "direction": trend.direction,
        "change": round(trend.change, 4) if trend.change is not None else None,
        "weeks": [
            {
                "week_start": point.week_start.isoformat(),
                "sessions": point.sessions,
                "sets": point.sets,
                "volume": round(point.volume, 1),
                "average_rpe": round(point.average_rpe, 2) if point.average_rpe is not None else None,
                "best_estimated_1rm": round(point.best_estimated_1rm, 1)
                if point.best_estimated_1rm
                else None,
            }
            for point in trend.weeks
        ],
    }
    return ToolOutcome(success=True, data=data, text="\n".join(lines))


def _change(current: float, previous: float) -> str:
    if not previous:
        return "new" if current else "-"
    delta = (current - previous) / previous
    return f"{'+' if delta > 0 else ''}{percent(delta)}"


def personal_records(
    *, user_id: uuid.UUID, start: datetime, unit: str
) -> list[tuple[ExerciseStats, float | None]]:
    """Exercises whose best estimated 1RM since `start` beats every earlier one: (stats, previous best)."""
    recent = stats.exercise_breakdown(user_id=user_id, start=start, unit=unit)
    before = {
        exercise_name_key(item.name): item.best_estimated_1rm
        for item in stats.exercise_breakdown(user_id=user_id, end=start, unit=unit)
    }
    records = []
    for item in recent:
        if not item.best_estimated_1rm:
            continue
        previous = before.get(exercise_name_key(item.name))
        if previous is None or item.best_estimated_1rm > previous + 1e-9:
            records.append((item, previous))
    return sorted(records, key=lambda pair: -(pair[0].best_estimated_1rm or 0))


def generate_stats_summary(args: StatsSummaryInput, ctx: ToolContext) -> ToolOutcome:
    """A short report of the period, ready to show the user."""
    sections = list(dict.fromkeys(args.include_sections or ALL_SECTIONS))
    now = timezone.now()
    days = _PERIOD_DAYS_BACK[args.period]
    start = now - timedelta(days=days)
    unit = selectors.get_settings(user_id=ctx.user_id).weight_unit
    units = units_for(user_id=ctx.user_id)
    current = stats.workout_statistics(user_id=ctx.user_id, start=start, end=now)
    previous = stats.workout_statistics(user_id=ctx.user_id, start=start - timedelta(days=days), end=start)
    lines = [f"Your {args.period} ({day(start, units)} – {day(now, units)}):"]
    data: dict[str, Any] = {"period": args.period, "unit": unit}
    if not current.workouts:
        lines.append("No workouts logged in this period.")
        data["overview"] = _overview_data(current)
        return ToolOutcome(success=True, data={**data, "summary": "\n".join(lines)}, text="\n".join(lines))
    for section in sections:
        if section == "overview":
            lines.append(
                f"- Overview: {_overview_line(current)}. vs previous {args.period}: workouts "
                f"{_change(current.workouts, previous.workouts)}, volume {_change(current.total_volume, previous.total_volume)}"
            )
            data["overview"] = _overview_data(current)
            data["previous"] = _overview_data(previous)
        elif section == "top_exercises":
            top = stats.exercise_breakdown(user_id=ctx.user_id, start=start, unit=unit)[:TOP_EXERCISES]
            lines.append(
                "- Top exercises: "
                + "; ".join(f"{item.name} {item.sessions}× ({item.sets} sets)" for item in top)
            )
            data["top_exercises"] = [_exercise_data(item) for item in top]
        elif section == "personal_records":
            records = personal_records(user_id=ctx.user_id, start=start, unit=unit)
            text = "; ".join(
                f"{item.name} e1RM {number(item.best_estimated_1rm or 0)}{unit} ({_set_text(item.best_estimated_1rm_set, unit)})"
                + (f", up from {number(before)}{unit}" if before else ", first record")
                for item, before in records[:TOP_EXERCISES]
            )
            lines.append(f"- New personal records: {text or 'none this ' + args.period}")
            data["personal_records"] = [
                {
                    "name": item.name,
                    "estimated_1rm": round(item.best_estimated_1rm or 0, 1),
                    "previous": round(before, 1) if before else None,
                }
                for item, before in records
            ]
        elif section in ("muscle_breakdown", "category_breakdown"):
            by: Literal["muscle", "category"] = "muscle" if section == "muscle_breakdown" else "category"
            rows = stats.grouped_breakdown(user_id=ctx.user_id, by=by, start=start)
            lines.append(f"- By {by}: {_shares_line(rows)}")
            data[section] = [{"name": row.name, "share": round(row.volume_share, 4)} for row in rows]
        else:
            weeks = max(2, round(days / 7)) if days >= 14 else 4
            trend = stats.weekly_trend(user_id=ctx.user_id, weeks=min(weeks, 52), metric="volume", now=now)
            series = ", ".join(_thousands(point.volume) for point in trend.weeks)
            lines.append(
                f"- Weekly volume ({unit}, last {len(trend.weeks)} weeks): {series}; trend {_trend_phrase(trend)}"
            )
            data["trend"] = {
                "direction": trend.direction,
                "change": trend.change,
                "weekly_volume": [round(p.volume, 1) for p in trend.weeks],
            }
    summary_text = "\n".join(lines)
    data["summary"] = summary_text
    return ToolOutcome(success=True, data=data, text=summary_text)


GET_WORKOUT_STATISTICS = register(
    Tool(
        name="get_workout_statistics",
        description=(
            "Compute the user's training statistics over the last days_back days (default 30): workouts, "
            "frequency per week, sets, volume (Σ reps × load) in their unit, cardio minutes, average RPE, "
            "split by muscle, top exercises with best sets and estimated 1RMs."
        ),
        input_model=WorkoutStatisticsInput,
        handler=get_workout_statistics,
        category="analytics",
        priority=700,
        observation="full",
        status_start="Crunching your numbers...",
        status_done="Stats ready",
    )
)

GET_EXERCISE_BREAKDOWN = register(
    Tool(
        name="get_exercise_breakdown",
        description=(
            "Break the user's logged training down per exercise (sessions, sets, volume, best set, estimated "
            "1RM, average RPE, last done) or by muscle, category or exercise type (share of training). Give "
            "exercise_name for one exercise's record."
        ),
        input_model=ExerciseBreakdownInput,
        handler=get_exercise_breakdown,
        category="analytics",
        priority=701,
        observation="full",
        status_start="Analyzing your exercises...",
        status_done="Breakdown ready",
    )
)

GET_PROGRESS_TRENDS = register(
    Tool(
        name="get_progress_trends",
        description=(
            "Show week-by-week progress over the last `weeks` weeks (default 8) for one metric (volume, "
            "sessions, sets, rpe or e1rm), for all training or one exercise, and whether it trends up, down "
            "or flat."
        ),
        input_model=ProgressTrendsInput,
        handler=get_progress_trends,
        category="analytics",
        priority=702,
        observation="full",
        status_start="Checking your progress...",
        status_done="Trends ready",
    )
)

GENERATE_STATS_SUMMARY = register(
    Tool(
        name="generate_stats_summary",
        description=(
            "Write a short report of the user's last week or month (overview vs the period before, top "
            "exercises, new personal records, muscle and category split, weekly volume trend), ready to pass "
            "on with message_notify_user."
        ),
        input_model=StatsSummaryInput,
        handler=generate_stats_summary,
        category="analytics",
        priority=703,
        observation="full",
        status_start="Summarizing your training...",
        status_done="Summary ready",
        aliases={"time_period": "period"},
    )
)
