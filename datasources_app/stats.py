"""Workout statistics computed from the logs: frequency, volume, personal records and weekly trends.

Volume is tonnage: Σ reps × load over the sets actually done (twice for a dumbbell pair, whose load is per
hand: `datasources_app.loads`), converted to the unit asked for (lb↔kg at
2.20462). Estimated one-rep max uses Epley: load × (1 + reps / 30).

Working sets are the sets of reps and hold work of working entries (`distribution.is_working_entry`: done, in
the main part of the workout, not a stretch). They are what a coach counts: the muscle split is shared out by
them (cardio counts in minutes, not in the split), and the exercises trained most are those with the most.
"""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta, tzinfo
from typing import Literal

from django.utils import timezone

from datasources_app import distribution, selectors
from datasources_app.catalog import exercise_name_key
from datasources_app.distribution import entry_volume, working_sets
from datasources_app.loads import hands_loaded
from datasources_app.models import WorkoutLogEntry

LB_PER_KG = 2.20462
# A half's mean must move by more than this fraction of the other half's to count as a trend.
TREND_THRESHOLD = 0.10

TimePeriod = Literal["week", "month", "quarter", "year", "all_time"]
PERIOD_DAYS: dict[str, int | None] = {"week": 7, "month": 30, "quarter": 91, "year": 365, "all_time": None}
Direction = Literal["up", "down", "flat"]


def convert_weight(value: float, *, from_unit: str, to_unit: str) -> float:
    """`value` in `from_unit` ("kg" | "lb") expressed in `to_unit`."""
    if from_unit == to_unit:
        return float(value)
    return float(value) * LB_PER_KG if to_unit == "lb" else float(value) / LB_PER_KG


def convert_distance(value: float, *, from_unit: str, to_unit: str) -> float:
    """`value` in `from_unit` ("km" | "mi") expressed in `to_unit`."""
    km_per_mile = 1.609344
    if from_unit == to_unit:
        return float(value)
    return float(value) / km_per_mile if to_unit == "mi" else float(value) * km_per_mile


def epley_one_rep_max(load: float, reps: int) -> float:
    return load * (1 + reps / 30)


@dataclass(frozen=True)
class SetDone:
    reps: int
    load: float  # in the unit the caller asked for


def _expand(values: Sequence[float] | None, count: int) -> list[float]:
    """Per-set values from a list that may hold one value for every set."""
    items = list(values or ())
    if len(items) == 1 and count > 1:
        return items * count
    return items


def sets_done(entry: WorkoutLogEntry, *, unit: str) -> list[SetDone]:
    """The loaded sets of a reps entry as done (actual values), loads in `unit`; [] when unloaded."""
    if entry.skipped or entry.exercise_type != "reps":
        return []
    count = entry.actual_sets or max(len(entry.actual_reps or ()), len(entry.actual_load_each or ()))
    reps = _expand(entry.actual_reps, count)
    loads = _expand(entry.actual_load_each, count)
    return [
        SetDone(reps=int(r), load=convert_weight(float(load), from_unit=entry.load_unit, to_unit=unit))
        for r, load in zip(reps, loads, strict=False)
        if r and load
    ]


def entry_tonnage(entry: WorkoutLogEntry, *, unit: str) -> float:
    """Σ reps × load of the entry's sets, in `unit`; both hands of a dumbbell pair (`load_each` is per hand)."""
    hands = hands_loaded(name=entry.exercise_name, slug=entry.exercise_slug)
    return hands * sum(done.reps * done.load for done in sets_done(entry, unit=unit))


def entry_set_count(entry: WorkoutLogEntry) -> int:
    """Sets done (reps/hold), falling back to the per-set lists; 0 for other types and skipped entries."""
    if entry.skipped or entry.exercise_type not in ("reps", "hold"):
        return 0
    per_set = entry.actual_reps if entry.exercise_type == "reps" else entry.actual_hold_sec
    return int(entry.actual_sets or len(per_set or ()))


def working_set_count(entry: WorkoutLogEntry) -> int:
    """The entry's working sets (`distribution.working_sets`, the same count the goals' muscle debt uses)."""
    return round(working_sets(entry))


def entry_minutes(entry: WorkoutLogEntry) -> float:
    """Minutes of continuous or interval work done (0 for reps/hold work)."""
    if entry.skipped:
        return 0.0
    if entry.exercise_type == "duration":
        return float(entry.actual_duration_min or 0)
    if entry.exercise_type == "intervals":
        return (entry.actual_rounds or 0) * (entry.actual_work_sec or entry.target_work_sec or 0) / 60
    return 0.0


def period_start(*, period: str, now: datetime | None = None) -> datetime | None:
    """Start of a named time period ending now (None for all_time). Raises ValueError if unknown."""
    if period not in PERIOD_DAYS:
        raise ValueError(f"time period must be one of {', '.join(PERIOD_DAYS)}, not {period!r}")
    days = PERIOD_DAYS[period]
    return None if days is None else (now or timezone.now()) - timedelta(days=days)


def _entries(*, user_id: uuid.UUID, start: datetime | None, end: datetime | None) -> list[WorkoutLogEntry]:
    return selectors.log_entries_between(user_id=user_id, start=start, end=end)


def _mean(values: Iterable[float]) -> float | None:
    items = list(values)
    return sum(items) / len(items) if items else None


# --- Overview ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class WorkoutStatistics:
    unit: str
    start: datetime | None
    end: datetime
    workouts: int
    exercises: int  # entries: an exercise done in two workouts counts twice
    distinct_exercises: int
    sets: int
    working_sets: int
    total_volume: float
    total_minutes: float
    average_rpe: float | None
    workouts_per_week: float
    active_days: int


def workout_statistics(
    *,
    user_id: uuid.UUID,
    start: datetime | None = None,
    end: datetime | None = None,
    unit: str | None = None,
) -> WorkoutStatistics:
    """Totals over [start, end] (start None = since the first log): workouts, sets, volume, RPE, frequency.

    Frequency is workouts per 7 days of the period (from the first log when start is None).
    """
    finish = end or timezone.now()
    weight_unit = unit or selectors.get_settings(user_id=user_id).weight_unit
    entries = _entries(user_id=user_id, start=start, end=finish)
    tz = selectors.user_timezone(user_id=user_id)
    logs = {entry.log_id for entry in entries}
    first = start or (min(entry.completed_at for entry in entries) if entries else finish)
    days = max((finish - first).total_seconds() / 86400, 1.0)
    return WorkoutStatistics(
        unit=weight_unit,
        start=start,
        end=finish,
        workouts=len(logs),
        exercises=len(entries),
        distinct_exercises=len({exercise_key(entry) for entry in entries}),
        sets=sum(entry_set_count(entry) for entry in entries),
        working_sets=sum(working_set_count(entry) for entry in entries),
        total_volume=sum(entry_tonnage(entry, unit=weight_unit) for entry in entries),
        total_minutes=sum(entry_minutes(entry) for entry in entries),
        average_rpe=_mean(entry.rpe for entry in entries if entry.rpe is not None),
        workouts_per_week=len(logs) / max(days / 7, 1.0),
        active_days=len({entry.completed_at.astimezone(tz).date() for entry in entries}),
    )


# --- Per exercise ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ExerciseStats:
    name: str
    slug: str
    exercise_type: str
    sessions: int
    sets: int
    working_sets: int
    volume: float
    best_set: SetDone | None  # heaviest load, most reps at it
    best_estimated_1rm: float | None
    best_estimated_1rm_set: SetDone | None
    last_performed: datetime
    average_rpe: float | None


def exercise_key(entry: WorkoutLogEntry) -> str:
    """Entries of one exercise share this key: the catalogue slug, else the normalised name."""
    return entry.exercise_slug or exercise_name_key(entry.exercise_name)


def _exercise_stats(entries: list[WorkoutLogEntry], *, unit: str) -> ExerciseStats:
    latest = max(entries, key=lambda entry: entry.completed_at)
    done = [item for entry in entries for item in sets_done(entry, unit=unit)]
    best = max(done, key=lambda item: (item.load, item.reps), default=None)
    best_e1rm = max(done, key=lambda item: epley_one_rep_max(item.load, item.reps), default=None)
    return ExerciseStats(
        name=latest.exercise_name,
        slug=latest.exercise_slug,
        exercise_type=latest.exercise_type,
        sessions=len({entry.log_id for entry in entries}),
        sets=sum(entry_set_count(entry) for entry in entries),
        working_sets=sum(working_set_count(entry) for entry in entries),
        volume=sum(entry_tonnage(entry, unit=unit) for entry in entries),
        best_set=best,
        best_estimated_1rm=epley_one_rep_max(best_e1rm.load, best_e1rm.reps) if best_e1rm else None,
        best_estimated_1rm_set=best_e1rm,
        last_performed=latest.completed_at,
        average_rpe=_mean(entry.rpe for entry in entries if entry.rpe is not None),
    )


def exercise_breakdown(
    *,
    user_id: uuid.UUID,
    start: datetime | None = None,
    end: datetime | None = None,
    unit: str | None = None,
    exercise_name: str | None = None,
) -> list[ExerciseStats]:
    """Per exercise: sessions, sets, volume, best set, personal records; the most trained first: most working
    sets (what a coach counts, bodyweight work included, which volume in kg leaves out), then sessions, volume.

    `exercise_name` keeps only that exercise (matched ignoring case, hyphens and plurals).
    """
    weight_unit = unit or selectors.get_settings(user_id=user_id).weight_unit
    groups: dict[str, list[WorkoutLogEntry]] = defaultdict(list)
    wanted = exercise_name_key(exercise_name) if exercise_name else None
    for entry in _entries(user_id=user_id, start=start, end=end):
        if wanted and wanted not in (
            exercise_name_key(entry.exercise_name),
            exercise_name_key(entry.exercise_slug),
        ):
            continue
        groups[exercise_key(entry)].append(entry)
    stats = [_exercise_stats(entries, unit=weight_unit) for entries in groups.values()]
    return sorted(
        stats,
        key=lambda item: (
            -item.working_sets,
            -item.sessions,
            -item.volume,
            -item.sets,
            -item.last_performed.timestamp(),
            item.name,
        ),
    )


@dataclass(frozen=True)
class BreakdownRow:
    name: str
    entries: int
    volume_share: float  # of `volume`
    volume: float  # muscles: working sets (shared out by the muscles' shares); else distribution.entry_volume
    workouts: int | None = None  # muscles: the workouts that trained it (`distribution.Tally.workouts`)


def grouped_breakdown(
    *,
    user_id: uuid.UUID,
    by: Literal["muscle", "category", "exercise_type", "exercise_name"],
    start: datetime | None = None,
    end: datetime | None = None,
) -> list[BreakdownRow]:
    """Share of training per muscle, goal category, exercise type or exercise; largest first.

    Muscles and categories are split by `distribution.tally`, the split the goals' debt uses: muscles get working
    sets only (a coach's split, where a warm-up, a stretch or a run is no set for the muscle); categories, like
    types and exercises, the volume proxy (`distribution.entry_volume`) of every entry done: mobility and
    cardio are goal categories of their own.
    """
    entries = _entries(user_id=user_id, start=start, end=end)
    if by in ("muscle", "category"):
        split = distribution.tally(entries, by)
        # Muscles by their display spelling; categories lower-cased, as goals name them.
        names = split.spelling if by == "muscle" else {folded: folded for folded in split.volumes}
        volumes = {names[folded]: volume for folded, volume in split.volumes.items()}
        counts = {names[folded]: count for folded, count in split.entries.items()}
        workouts = (
            {names[folded]: count for folded, count in split.workouts.items()} if by == "muscle" else {}
        )
    else:
        volumes, counts, workouts = defaultdict(float), defaultdict(int), {}
        for entry in entries:
            if volume := entry_volume(entry):
                name = entry.exercise_type if by == "exercise_type" else entry.exercise_name
                volumes[name] += volume
                counts[name] += 1
    total = sum(volumes.values())
    rows = [
        BreakdownRow(
            name, counts[name], volumes[name] / total if total else 0.0, volumes[name], workouts.get(name)
        )
        for name in volumes
        if volumes[name] > 0
    ]
    return sorted(rows, key=lambda row: (-row.volume_share, -row.entries, row.name))


# --- Weekly trend ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class WeekPoint:
    week_start: date  # Monday, in the user's time zone
    sessions: int
    sets: int
    volume: float
    average_rpe: float | None
    best_estimated_1rm: float | None


@dataclass(frozen=True)
class Trend:
    unit: str
    exercise_name: str | None
    weeks: tuple[WeekPoint, ...]
    metric: str
    direction: Direction
    change: float | None  # relative change of the second half's mean over the first half's
    unfinished_week: bool = False  # the last week is not over at `now`: its totals are so far
    cut_first_week: bool = False  # `start` falls after the first week's Monday: its totals miss days


def trend_direction(
    values: Sequence[float], *, threshold: float = TREND_THRESHOLD
) -> tuple[Direction, float | None]:
    """Compare the mean of the second half with the first (the middle value of an odd count is left out)."""
    half = len(values) // 2
    if half == 0:
        return "flat", None
    first = sum(values[:half]) / half
    second = sum(values[-half:]) / half
    if first == 0:
        return ("up", None) if second > 0 else ("flat", None)
    change = (second - first) / first
    if change > threshold:
        return "up", change
    if change < -threshold:
        return "down", change
    return "flat", change


def _week_start(moment: datetime, tz: tzinfo) -> date:
    day = moment.astimezone(tz).date()
    return day - timedelta(days=day.weekday())


def weekly_trend(
    *,
    user_id: uuid.UUID,
    weeks: int = 8,
    metric: Literal["volume", "sessions", "sets", "rpe", "e1rm"] = "volume",
    exercise_name: str | None = None,
    unit: str | None = None,
    now: datetime | None = None,
    start: datetime | None = None,
) -> Trend:
    """The last `weeks` calendar weeks (Monday-based, the current one last), and the metric's direction.

    `start` leaves out entries before it (a range that begins mid-week). With `exercise_name` only that
    exercise's entries count. Weeks without data count as 0 for volume,
    sessions and sets, and are left out of the rpe / e1rm direction. A last week not over at `now`, and a first
    week that `start` cuts, are left out of the direction of the totals (volume, sessions, sets): on a Monday
    this week holds a day's training at most, and against whole weeks it would always read "down" (a range
    starting on a Thursday, "up").
    """
    if weeks < 1:
        raise ValueError("weeks must be at least 1")
    moment = now or timezone.now()
    weight_unit = unit or selectors.get_settings(user_id=user_id).weight_unit
    tz = selectors.user_timezone(user_id=user_id)
    this_week = _week_start(moment, tz)
    starts = [this_week - timedelta(weeks=back) for back in range(weeks - 1, -1, -1)]
    first = datetime.combine(starts[0], datetime.min.time(), tzinfo=tz)
    wanted = exercise_name_key(exercise_name) if exercise_name else None
    by_week: dict[date, list[WorkoutLogEntry]] = defaultdict(list)
    for entry in _entries(user_id=user_id, start=max(first, start or first), end=moment):
        if wanted and wanted not in (
            exercise_name_key(entry.exercise_name),
            exercise_name_key(entry.exercise_slug),
        ):
            continue
        by_week[_week_start(entry.completed_at, tz)].append(entry)
    points = []
    for monday in starts:
        entries = by_week.get(monday, [])
        done = [item for entry in entries for item in sets_done(entry, unit=weight_unit)]
        points.append(
            WeekPoint(
                week_start=monday,
                sessions=len({entry.log_id for entry in entries}),
                sets=sum(entry_set_count(entry) for entry in entries),
                volume=sum(entry_tonnage(entry, unit=weight_unit) for entry in entries),
                average_rpe=_mean(entry.rpe for entry in entries if entry.rpe is not None),
                best_estimated_1rm=max(
                    (epley_one_rep_max(item.load, item.reps) for item in done), default=None
                ),
            )
        )
    # A range's end is its last day's final microsecond (tools_app.analytics_tools.resolve_range).
    week_end = datetime.combine(this_week + timedelta(days=7), datetime.min.time(), tzinfo=tz)
    unfinished = moment + timedelta(microseconds=1) < week_end
    cut_first = start is not None and start > first
    series: list[float]
    if metric == "rpe":
        series = [point.average_rpe for point in points if point.average_rpe is not None]
    elif metric == "e1rm":
        series = [point.best_estimated_1rm for point in points if point.best_estimated_1rm is not None]
    else:
        whole = points[1 if cut_first else 0 : -1 if unfinished else None]
        whole = whole or points
        series = [float(getattr(point, metric)) for point in whole]
    direction, change = trend_direction(series)
    return Trend(
        unit=weight_unit,
        exercise_name=exercise_name,
        weeks=tuple(points),
        metric=metric,
        direction=direction,
        change=change,
        unfinished_week=unfinished,
        cut_first_week=cut_first,
    )
