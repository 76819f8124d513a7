"""The statistics tool (docs/contracts.md §11.5 (tool list)): get_training_stats, one tool with four views.

- totals: workouts, frequency, sets, volume, cardio minutes, RPE, muscle split, top exercises, best e1RMs;
- breakdown: per exercise (or per muscle, category, exercise type), one exercise's record with exercise_name;
- trends: week by week for one metric, and whether it goes up, down or flat;
- summary: a short report of the range against the same number of days before it.

Every view covers one date range: `start_date`/`end_date` (ISO dates, inclusive, in the user's time zone)
or the last `days` up to today (default 30); the observation names the range. An option of another view is
an error naming the chosen view's options. Every figure is computed from the user's logs by
`datasources_app.stats` (volume = Σ reps × load of the sets done, both hands of a dumbbell pair; a pair's
best set and 1RM are per hand and say so wherever shown; estimated 1RM by Epley), in the user's weight unit.
The muscle split and the order of the exercises are by working sets (`stats`: the main work's sets, not a
warm-up's, a cool-down's or a stretch's), the figure a coach counts; a weekly trend of totals leaves out a
week the range cuts or that is not over yet. The
observations are full data (docs/contracts.md §11.2 (observations: full)), written as compact text. Seed
001's `time_period` (week | month | quarter | year | all_time), `period`, `breakdown_type` and its trend
metrics (weight, frequency) are accepted.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from typing import Any, Literal

from django.utils import timezone
from pydantic import BaseModel, Field, model_validator

from datasources_app import selectors, stats
from datasources_app.catalog import exercise_name_key, name_covers
from datasources_app.formatters import day, number, percent
from datasources_app.loads import hands_loaded, holds_dumbbell_pair, per_hand, round_load
from datasources_app.sources import units_for
from datasources_app.stats import ExerciseStats, SetDone, WorkoutStatistics
from tools_app.formatting import counted, joined
from tools_app.registry import register
from tools_app.types import Tool, ToolContext, ToolOutcome

TOP_EXERCISES = 5
BREAKDOWN_LIMIT = 20
MUSCLE_ROWS = 8
DEFAULT_DAYS = 30
MAX_TREND_WEEKS = 52
# The weekly volume of a summary looks back at least this many weeks, so a one-week report still shows a trend.
SUMMARY_TREND_WEEKS = 4
_PERIOD_DAYS = {"week": 7, "month": 30, "quarter": 91, "year": 365, "all_time": 3650}
_SEED_001_METRICS = {"weight": "e1rm", "frequency": "sessions"}
_SEED_001_BREAKDOWNS = {"exercise_name": "exercise"}
_METRIC_LABELS = {
    "volume": "volume",
    "sessions": "sessions",
    "sets": "sets",
    "rpe": "average RPE",
    "e1rm": "best estimated 1RM",
}

StatsView = Literal["totals", "breakdown", "trends", "summary"]
TrendMetric = Literal["volume", "sessions", "sets", "rpe", "e1rm"]
GroupBy = Literal["exercise", "muscle", "category", "exercise_type"]
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
RANGE_OPTIONS = ("start_date", "end_date", "days")
VIEW_OPTIONS: dict[str, tuple[str, ...]] = {
    "totals": (),
    "breakdown": ("group_by", "exercise_name"),
    "trends": ("metric", "exercise_name"),
    "summary": (),
}


class TrainingStatsInput(BaseModel):
    view: StatsView = "totals"
    start_date: date | None = Field(default=None, description="First day (ISO date).")
    end_date: date | None = Field(default=None, description="Last day (default today).")
    days: int | None = Field(default=None, ge=1, le=3650, description="Or the last N days to today.")
    exercise_name: str | None = Field(
        default=None, description="breakdown, trends: one exercise, in the user's words."
    )
    group_by: GroupBy | None = Field(default=None, description="breakdown: default exercise.")
    metric: TrendMetric | None = Field(default=None, description="trends: default volume.")

    @model_validator(mode="before")
    @classmethod
    def _accept_seed_001_spellings(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        data = dict(data)
        for key in ("time_period", "period"):
            if key in data and "days" not in data:
                value = data.pop(key)
                data["days"] = _PERIOD_DAYS.get(value, value)  # an unknown one is reported by validation
        if "days_back" in data:
            data.setdefault("days", data.pop("days_back"))
        if "breakdown_type" in data:
            value = data.pop("breakdown_type")
            data.setdefault("group_by", _SEED_001_BREAKDOWNS.get(value, value))
        if isinstance(data.get("metric"), str):
            data["metric"] = _SEED_001_METRICS.get(data["metric"], data["metric"])
        return data


@dataclass(frozen=True)
class DateRange:
    """The days a view covers (inclusive, in the user's time zone) and the instants that bound them."""

    first: date
    last: date
    start: datetime
    end: datetime

    @property
    def days(self) -> int:
        return (self.last - self.first).days + 1

    @property
    def label(self) -> str:
        plural = "s" if self.days != 1 else ""
        return f"{day(self.first)} – {day(self.last, with_year=True)} ({self.days} day{plural})"

    def data(self) -> dict[str, Any]:
        return {"start_date": self.first.isoformat(), "end_date": self.last.isoformat(), "days": self.days}


def resolve_range(args: TrainingStatsInput, *, user_id: uuid.UUID) -> DateRange | str:
    """The range the arguments ask for (an end in the future stops today), or what is wrong with them."""
    if args.days is not None and (args.start_date or args.end_date):
        return "Give either days or start_date/end_date, not both."
    tz = selectors.user_timezone(user_id=user_id)
    now = timezone.now()
    today = now.astimezone(tz).date()
    last = min(args.end_date or today, today)
    first = args.start_date or last - timedelta(days=(args.days or DEFAULT_DAYS) - 1)
    if first > last:
        when = "today" if first > today else last.isoformat()
        return f"start_date {first.isoformat()} is after {when}; give a start on or before the end."
    start = datetime.combine(first, time.min, tzinfo=tz)
    end = min(
        now, datetime.combine(last + timedelta(days=1), time.min, tzinfo=tz) - timedelta(microseconds=1)
    )
    return DateRange(first=first, last=last, start=start, end=end)


# --- Text helpers -------------------------------------------------------------------------------------------
def _thousands(value: float) -> str:
    return f"{round(value):,}"


def _e1rm(value: float, unit: str) -> str:
    """An estimated 1RM as a coach says it, to the load step of `unit` ("91.5kg", "202lb"): Epley's estimate is
    no closer than that, and "83.3kg" reads as a measured weight."""
    return f"{number(round_load(value, unit))}{unit}"


def _up_from(value: float, before: float | None, unit: str, each: str) -> str:
    """ ", up from 90kg" after a new record; ", first record" without an earlier one; when both round to the same
    step, that it is just above the earlier best (not "100kg, up from 100kg")."""
    if not before:
        return ", first record"
    if _e1rm(value, unit) == _e1rm(before, unit):
        return ", just above the earlier best"
    return f", up from {_e1rm(before, unit)}{each}"


def _set_text(done: SetDone | None, unit: str) -> str:
    """A set as the history shows it: a load logged in the other unit at the nearest step of this one (140 kg
    reads "309lb", not "308.6lb"). The totals keep the exact loads."""
    return f"{number(round_load(done.load, unit))}{unit} × {done.reps}" if done else "-"


def _each(item: ExerciseStats) -> str:
    """ " each hand" after a load of a dumbbell pair's exercise (its loads are one dumbbell's), else nothing."""
    return per_hand(hands_loaded(name=item.name, slug=item.slug))


def _sets_done(item: ExerciseStats) -> str:
    """'16 working sets', or '2 sets' for an exercise done only as a warm-up, cool-down or stretch."""
    return counted(item.working_sets, "working set") if item.working_sets else counted(item.sets, "set")


def _most_trained(items: Sequence[ExerciseStats]) -> list[ExerciseStats]:
    """The exercises trained most (`stats.exercise_breakdown`'s order: most working sets first), leaving out
    those done only as a warm-up, cool-down or stretch unless nothing else was done."""
    working = [item for item in items if item.working_sets]
    return (working or list(items))[:TOP_EXERCISES]


def _exercise_line(item: ExerciseStats, unit: str, units: Any) -> str:
    parts = [_sets_done(item), counted(item.sessions, "session")]
    each = _each(item)
    if item.volume:
        parts.append(f"volume {_thousands(item.volume)}{unit}")
    if item.best_set:
        parts.append(f"best set {_set_text(item.best_set, unit)}{each}")
    if item.best_estimated_1rm:
        parts.append(
            f"e1RM {_e1rm(item.best_estimated_1rm, unit)}{each} ({_set_text(item.best_estimated_1rm_set, unit)})"
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
        "working_sets": item.working_sets,
        "load_per_hand": holds_dumbbell_pair(name=item.name, slug=item.slug),
        "best_estimated_1rm": round(item.best_estimated_1rm, 1) if item.best_estimated_1rm else None,
        "average_rpe": round(item.average_rpe, 2) if item.average_rpe is not None else None,
        "last_performed": item.last_performed.isoformat(),
    }


def _overview_data(result: WorkoutStatistics) -> dict[str, Any]:
    return {
        "workouts": result.workouts,
        "active_days": result.active_days,
        "exercises": result.exercises,
        "distinct_exercises": result.distinct_exercises,
        "sets": result.sets,
        "working_sets": result.working_sets,
        "total_volume": round(result.total_volume, 1),
        "total_minutes": round(result.total_minutes, 1),
        "average_rpe": round(result.average_rpe, 2) if result.average_rpe is not None else None,
        "workouts_per_week": round(result.workouts_per_week, 2),
        "unit": result.unit,
    }


def _overview_line(result: WorkoutStatistics) -> str:
    rpe = f", average RPE {number(result.average_rpe)}" if result.average_rpe is not None else ""
    minutes = f", {number(result.total_minutes)} min of cardio/intervals" if result.total_minutes else ""
    working = f" ({result.working_sets} working)" if result.working_sets != result.sets else ""
    return (
        f"{counted(result.workouts, 'workout')} ({number(result.workouts_per_week)}/week) on "
        f"{counted(result.active_days, 'day')}, {counted(result.distinct_exercises, 'exercise')}, "
        f"{counted(result.sets, 'set')}{working}, volume {_thousands(result.total_volume)}{result.unit}"
        f"{minutes}{rpe}"
    )


def _shares_line(rows: Sequence[stats.BreakdownRow], limit: int = MUSCLE_ROWS) -> str:
    return ", ".join(f"{row.name} {percent(row.volume_share)}" for row in rows[:limit]) or "none"


def _muscles_line(rows: Sequence[stats.BreakdownRow]) -> str:
    """'By muscle, working sets: Back 27 (17%), Chest 11.2 (7%)' (a set of an exercise working several muscles
    is shared out by their shares), or why there is no split."""
    if not rows:
        return "By muscle: no working sets (only cardio, warm-ups or stretches)"
    shown = ", ".join(
        f"{row.name} {number(round(row.volume, 1))} ({percent(row.volume_share)})"
        for row in rows[:MUSCLE_ROWS]
    )
    more = f", +{len(rows) - MUSCLE_ROWS} more" if len(rows) > MUSCLE_ROWS else ""
    return f"By muscle, working sets: {shown}{more}"


def _failure(message: str) -> ToolOutcome:
    return ToolOutcome(success=False, data={"error": message}, text=message)


def _nothing_logged(said: str, data: dict[str, Any], text: str = "") -> ToolOutcome:
    """A range with nothing logged (`said`): the user is told so, and how they get numbers here."""
    advice = 'Ask me for a workout and say "done" when you finish, and I\'ll keep track from there.'
    return ToolOutcome(success=True, data=data, text=text or said, tell_user=f"{said} {advice}")


def _no_such_exercise(user_id: uuid.UUID, name: str, span: DateRange) -> ToolOutcome:
    """An exercise not logged in the range: with nothing logged there at all, the user is told so (a success,
    not a name to correct); otherwise a failure listing what was logged, so the model can match the name."""
    logged = stats.exercise_breakdown(user_id=user_id, start=span.start, end=span.end)
    if not logged:
        return _nothing_logged(
            f"No workouts logged in {span.label}, so there are no {name} numbers yet.",
            {"range": span.data(), "exercise_name": name, "exercises": []},
        )
    names = ", ".join(item.name for item in logged[:BREAKDOWN_LIMIT]) or "none"
    return _failure(f"No logged '{name}' in {span.label}. Exercises logged: {names}.")


# --- Views -----------------------------------------------------------------------------------------------------
def _totals(args: TrainingStatsInput, ctx: ToolContext, span: DateRange) -> ToolOutcome:
    """Totals, frequency, volume, muscle split, top exercises and records over the range."""
    result = stats.workout_statistics(user_id=ctx.user_id, start=span.start, end=span.end)
    unit = result.unit
    units = units_for(user_id=ctx.user_id)
    if not result.workouts:
        return _nothing_logged(
            f"No workouts logged in {span.label}.", {"range": span.data(), "overview": _overview_data(result)}
        )
    top = _most_trained(stats.exercise_breakdown(user_id=ctx.user_id, start=span.start, end=span.end))
    muscles = stats.grouped_breakdown(user_id=ctx.user_id, by="muscle", start=span.start, end=span.end)
    records = sorted(
        (item for item in top if item.best_estimated_1rm), key=lambda item: -(item.best_estimated_1rm or 0)
    )
    lines = [
        f"Statistics, {span.label} (weights in {unit}):",
        _overview_line(result),
        _muscles_line(muscles),
        "Top exercises (most working sets first):",
        *(f"  {_exercise_line(item, unit, units)}" for item in top),
    ]
    if records:
        lines.append(
            "Best estimated 1RM: "
            + "; ".join(
                f"{item.name} {_e1rm(item.best_estimated_1rm or 0, unit)}{_each(item)}" for item in records
            )
        )
    data = {
        "range": span.data(),
        "overview": _overview_data(result),
        "by_muscle": [
            {"muscle": row.name, "working_sets": round(row.volume, 2), "share": round(row.volume_share, 4)}
            for row in muscles
        ],
        "top_exercises": [_exercise_data(item) for item in top],
    }
    return ToolOutcome(success=True, data=data, text="\n".join(lines))


def _breakdown(args: TrainingStatsInput, ctx: ToolContext, span: DateRange) -> ToolOutcome:
    """Per exercise (or per muscle, category, type): what was done and the personal bests."""
    group_by = args.group_by or "exercise"
    unit = selectors.get_settings(user_id=ctx.user_id).weight_unit
    if args.exercise_name or group_by == "exercise":
        items = stats.exercise_breakdown(
            user_id=ctx.user_id, start=span.start, end=span.end, exercise_name=args.exercise_name
        )
        if args.exercise_name and not items:
            return _no_such_exercise(ctx.user_id, args.exercise_name, span)
        if not items:
            return _nothing_logged(
                f"No exercises logged in {span.label}.", {"range": span.data(), "exercises": []}
            )
        units = units_for(user_id=ctx.user_id)
        shown = items[:BREAKDOWN_LIMIT]
        more = f"\n(+{len(items) - len(shown)} more exercises)" if len(items) > len(shown) else ""
        text = (
            f"Exercise breakdown, {span.label} (weights in {unit}):\n"
            + "\n".join(f"- {_exercise_line(item, unit, units)}" for item in shown)
            + more
        )
        return ToolOutcome(
            success=True,
            data={"range": span.data(), "unit": unit, "exercises": [_exercise_data(item) for item in shown]},
            text=text,
        )
    rows = stats.grouped_breakdown(user_id=ctx.user_id, by=group_by, start=span.start, end=span.end)
    if (
        not rows
        and group_by == "muscle"
        and stats.workout_statistics(user_id=ctx.user_id, start=span.start, end=span.end).workouts
    ):
        said = f"No working sets in {span.label}: only cardio, warm-ups or stretches were logged."
        return ToolOutcome(
            success=True, data={"range": span.data(), "group_by": group_by, "groups": []}, text=said
        )
    if not rows:
        return _nothing_logged(f"No exercises logged in {span.label}.", {"range": span.data(), "groups": []})
    goals: dict[str, float] = {}
    if group_by == "muscle":
        # Beside each muscle its goal share, and the goal muscles without a set: what "neglected" is against.
        muscle_goals = selectors.list_muscle_goals(user_id=ctx.user_id)
        goals = {goal.muscle.casefold(): goal.weight for goal in muscle_goals}
        trained = {row.name.casefold() for row in rows}
        unworked = [
            goal.muscle for goal in muscle_goals if goal.muscle.casefold() not in trained and goal.weight
        ]
        text = (
            f"Working sets by muscle, {span.label} (warm-ups, stretches and cardio not counted; a muscle counts "
            "as trained in a workout that gave it a set's worth):\n"
            + "\n".join(
                f"- {row.name}: {number(round(row.volume, 1))} sets, {percent(row.volume_share)}"
                + (f" (goal {percent(goals[row.name.casefold()])})" if row.name.casefold() in goals else "")
                + (
                    f", trained in {counted(row.workouts, 'workout')}"
                    if row.workouts
                    else ", no full set in a workout"
                )
                for row in rows
            )
            + "".join(
                f"\n- {muscle}: no working sets (goal {percent(goals[muscle.casefold()])})"
                for muscle in unworked
            )
        )
    else:
        text = f"Share of training by {group_by}, {span.label}:\n" + "\n".join(
            f"- {row.name}: {percent(row.volume_share)} ({counted(row.entries, 'entry', 'entries')})"
            for row in rows
        )
    groups = [
        {
            "name": row.name,
            "entries": row.entries,
            "share": round(row.volume_share, 4),
            "volume": round(row.volume, 2),
            **({"workouts": row.workouts} if row.workouts is not None else {}),
            **({"goal": goals[row.name.casefold()]} if row.name.casefold() in goals else {}),
        }
        for row in rows
    ]
    return ToolOutcome(
        success=True, data={"range": span.data(), "group_by": group_by, "groups": groups}, text=text
    )


def _weeks_spanned(first: date, last: date) -> int:
    """Calendar weeks (Monday-based) that hold at least one day of first..last."""
    return ((last - timedelta(days=last.weekday())) - (first - timedelta(days=first.weekday()))).days // 7 + 1


def _trends(args: TrainingStatsInput, ctx: ToolContext, span: DateRange) -> ToolOutcome:
    """Week-by-week figures over the range and whether the chosen metric is going up, down or flat."""
    metric = args.metric or "volume"
    if metric == "e1rm" and not args.exercise_name:
        # The best of every exercise's estimates would compare a row's with a curl's, week by week.
        return _failure(
            "metric e1rm follows one exercise's best estimated 1RM week by week: give exercise_name "
            "(the exercise the user asks about)."
        )
    weeks = _weeks_spanned(span.first, span.last)
    if weeks > MAX_TREND_WEEKS:
        return _failure(
            f"trends covers at most {MAX_TREND_WEEKS} weeks; {span.label} spans {weeks}. Shorten the range."
        )
    trend = stats.weekly_trend(
        user_id=ctx.user_id,
        weeks=weeks,
        metric=metric,
        exercise_name=args.exercise_name,
        now=span.end,
        start=span.start,
    )
    if not any(point.sessions for point in trend.weeks):
        if args.exercise_name:
            return _no_such_exercise(ctx.user_id, args.exercise_name, span)
        return _nothing_logged(
            f"No workouts logged in {span.label}.", {"range": span.data(), "metric": metric, "weeks": []}
        )
    unit = trend.unit
    what = f" of {args.exercise_name}" if args.exercise_name else ""
    # A dumbbell pair's loads (and so its 1RM) are one dumbbell's; without an exercise there is no one 1RM.
    each = per_hand(hands_loaded(name=args.exercise_name)) if args.exercise_name else ""
    lines = [f"Weekly {_METRIC_LABELS[metric]}{what}, {span.label}, {weeks} weeks (weights in {unit}):"]
    active = [point for point in trend.weeks if point.sessions]
    for point in active:  # a week without sessions says nothing but that (listed once, below)
        rpe = f", RPE {number(point.average_rpe)}" if point.average_rpe is not None else ""
        e1rm = (
            f", e1RM {_e1rm(point.best_estimated_1rm, unit)}{each}"
            if point.best_estimated_1rm and args.exercise_name and metric != "e1rm"  # said once, first
            else ""
        )
        lines.append(
            f"  w/c {day(point.week_start)}: {_metric_value(point, metric, unit + each)} | "
            f"{counted(point.sessions, 'session')}, {counted(point.sets, 'set')}, volume {_thousands(point.volume)}{unit}{rpe}{e1rm}"
        )
    if trend.unfinished_week and trend.weeks[-1].sessions:
        lines[-1] += " (week not over: so far)"
    if trend.cut_first_week and trend.weeks[0].sessions:
        lines[1] += f" (from {day(span.first)} only)"
    empty = [f"w/c {day(point.week_start)}" for point in trend.weeks if not point.sessions]
    if empty:
        lines.append(
            f"  no sessions in {joined(empty) if len(empty) <= 3 else f'the other {len(empty)} weeks'}"
        )
    lines.append(
        f"Trend: {_trend_phrase(trend) if len(active) > 1 else 'none yet (sessions in one week only)'}"
    )
    data = {
        "range": span.data(),
        "metric": metric,
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


def _metric_value(point: stats.WeekPoint, metric: str, unit: str) -> str:
    if metric == "volume":
        return f"{_thousands(point.volume)}{unit}"
    if metric == "rpe":
        return number(point.average_rpe) if point.average_rpe is not None else "-"
    if metric == "e1rm":
        return _e1rm(point.best_estimated_1rm, unit) if point.best_estimated_1rm else "-"
    return str(getattr(point, metric))


def _trend_phrase(trend: stats.Trend) -> str:
    change = (
        f" {'+' if (trend.change or 0) > 0 else ''}{percent(trend.change)}"
        if trend.change is not None
        else ""
    )
    left_out = [
        *(["the first week (cut by the range)"] if trend.cut_first_week else []),
        *(["this unfinished week"] if trend.unfinished_week else []),
    ]
    whole = (
        f", {joined(left_out)} left out"
        if left_out and trend.metric in ("volume", "sessions", "sets")
        else ""
    )
    return f"{trend.direction}{change} (second half of the weeks vs the first{whole})"


def _change(current: float, previous: float) -> str:
    if not previous:
        return "new" if current else "-"
    delta = (current - previous) / previous
    return f"{'+' if delta > 0 else ''}{percent(delta)}"


def personal_records(
    *, user_id: uuid.UUID, start: datetime, end: datetime | None = None, unit: str
) -> list[tuple[ExerciseStats, float | None]]:
    """Exercises whose best estimated 1RM in [start, end] beats every earlier one: (stats, previous best)."""
    recent = stats.exercise_breakdown(user_id=user_id, start=start, end=end, unit=unit)
    before = {
        exercise_name_key(item.name): item.best_estimated_1rm
        for item in stats.exercise_breakdown(
            user_id=user_id, end=start - timedelta(microseconds=1), unit=unit
        )
    }
    records = []
    for item in recent:
        if not item.best_estimated_1rm:
            continue
        previous = before.get(exercise_name_key(item.name))
        if previous is None or item.best_estimated_1rm > previous + 1e-9:
            records.append((item, previous))
    return sorted(records, key=lambda pair: -(pair[0].best_estimated_1rm or 0))


def _summary(args: TrainingStatsInput, ctx: ToolContext, span: DateRange) -> ToolOutcome:
    """A short report of the range against the same number of days before it, ready to show the user."""
    start, end = span.start, span.end
    unit = selectors.get_settings(user_id=ctx.user_id).weight_unit
    current = stats.workout_statistics(user_id=ctx.user_id, start=start, end=end)
    previous_start = datetime.combine(span.first - timedelta(days=span.days), time.min, tzinfo=start.tzinfo)
    previous = stats.workout_statistics(
        user_id=ctx.user_id, start=previous_start, end=start - timedelta(microseconds=1)
    )
    lines = [f"Your training, {span.label}:"]
    data: dict[str, Any] = {"range": span.data(), "unit": unit}
    if not current.workouts:
        lines.append("No workouts logged in this period.")
        data["overview"] = _overview_data(current)
        said = f"No workouts logged in {span.label}."
        return _nothing_logged(said, {**data, "summary": "\n".join(lines)}, text="\n".join(lines))
    for section in ALL_SECTIONS:
        if section == "overview":
            lines.append(
                f"- Overview: {_overview_line(current)}. vs the {span.days} days before: workouts "
                f"{_change(current.workouts, previous.workouts)}, volume {_change(current.total_volume, previous.total_volume)}"
            )
            data["overview"] = _overview_data(current)
            data["previous"] = _overview_data(previous)
        elif section == "top_exercises":
            top = _most_trained(
                stats.exercise_breakdown(user_id=ctx.user_id, start=start, end=end, unit=unit)
            )
            lines.append(
                "- Top exercises (most working sets first): "
                + "; ".join(
                    f"{item.name} {_sets_done(item)} in {counted(item.sessions, 'session')}" for item in top
                )
            )
            data["top_exercises"] = [_exercise_data(item) for item in top]
        elif section == "personal_records":
            records = personal_records(user_id=ctx.user_id, start=start, end=end, unit=unit)
            text = "; ".join(
                f"{item.name} e1RM {_e1rm(item.best_estimated_1rm or 0, unit)}{_each(item)} ({_set_text(item.best_estimated_1rm_set, unit)})"
                + _up_from(item.best_estimated_1rm or 0, before, unit, _each(item))
                for item, before in records[:TOP_EXERCISES]
            )
            lines.append(f"- New personal records: {text or 'none in this period'}")
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
            rows = stats.grouped_breakdown(user_id=ctx.user_id, by=by, start=start, end=end)
            lines.append(f"- {_muscles_line(rows)}" if by == "muscle" else f"- By {by}: {_shares_line(rows)}")
            data[section] = [
                {"name": row.name, "share": round(row.volume_share, 4), "volume": round(row.volume, 2)}
                for row in rows
            ]
        else:
            weeks = min(max(SUMMARY_TREND_WEEKS, _weeks_spanned(span.first, span.last)), MAX_TREND_WEEKS)
            trend = stats.weekly_trend(user_id=ctx.user_id, weeks=weeks, metric="volume", now=end)
            series = ", ".join(_thousands(point.volume) for point in trend.weeks)
            if trend.unfinished_week:
                series += " (this week so far)"
            lines.append(
                f"- Weekly volume ({unit}, {len(trend.weeks)} weeks to {day(span.last)}): {series}; "
                f"trend {_trend_phrase(trend)}"
            )
            data["trend"] = {
                "direction": trend.direction,
                "change": trend.change,
                "weekly_volume": [round(p.volume, 1) for p in trend.weeks],
            }
    summary_text = "\n".join(lines)
    data["summary"] = summary_text
    return ToolOutcome(success=True, data=data, text=summary_text)


_VIEWS = {"totals": _totals, "breakdown": _breakdown, "trends": _trends, "summary": _summary}


def get_training_stats(args: TrainingStatsInput, ctx: ToolContext) -> ToolOutcome:
    """One view of the user's training over a date range."""
    allowed = VIEW_OPTIONS[args.view]
    misplaced = [name for name in args.model_fields_set if name not in (*allowed, *RANGE_OPTIONS, "view")]
    if misplaced:
        options = ", ".join((*allowed, *RANGE_OPTIONS))
        return _failure(
            f"{', '.join(sorted(misplaced))} does not apply to view {args.view}; its options: {options}."
        )
    span = resolve_range(args, user_id=ctx.user_id)
    if isinstance(span, str):
        return _failure(span)
    if args.exercise_name:
        named = _logged_exercise(ctx.user_id, args.exercise_name, span)
        if isinstance(named, ToolOutcome):
            return named
        args = args.model_copy(update={"exercise_name": named})
    return _VIEWS[args.view](args, ctx, span)


def _logged_exercise(user_id: uuid.UUID, name: str, span: DateRange) -> str | ToolOutcome:
    """The logged exercise `name` means, in the user's words: its name when logged under it ("push ups" for
    "Push-Ups"), else the one logged name that holds it ("squats": "Barbell Back Squat"); a refusal naming the
    candidates when several do, or what was logged when none does."""
    logged = [item.name for item in stats.exercise_breakdown(user_id=user_id, start=span.start, end=span.end)]
    key = exercise_name_key(name)
    if any(exercise_name_key(each) == key for each in logged):
        return name
    matches = [each for each in logged if name_covers(name, each)]
    if len(matches) == 1:
        return matches[0]
    if matches:
        listed = ", ".join(matches[:BREAKDOWN_LIMIT])
        return _failure(
            f"Which exercise? '{name}' matches {len(matches)} logged in {span.label}: {listed}. "
            "Call again with one of these names, or ask the user."
        )
    return _no_such_exercise(user_id, name, span)


GET_TRAINING_STATS = register(
    Tool(
        name="get_training_stats",
        description=(
            "Training stats from the user's logs, for start_date..end_date (inclusive) or "
            "the last `days` (default 30). view: totals (frequency, sets, volume, cardio, muscle split, top "
            "exercises, e1RMs); breakdown (per exercise, or by group_by); trends (weekly, up/down/"
            "flat); summary (report vs the days before)."
        ),
        input_model=TrainingStatsInput,
        handler=get_training_stats,
        category="analytics",
        priority=700,
        observation="full",
        status_start="Crunching your numbers...",
        status_done="Stats ready",
    )
)
