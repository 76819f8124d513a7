"""Reads for the staff dashboards: per-day totals, percentiles, cost per model and tool usage over a date range.

Everything comes from the SQL views of migrations 0004 and 0011 (through their unmanaged models, or SQL for the
latency views); days are UTC. Each function is one query. Sums over users, models or tools are done by the
database; latency percentiles too on PostgreSQL (`percentile_cont`), the others in Python.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, fields
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from django.db import connections, router
from django.db.models import Sum

from sessions_app.models import (
    AgentSessionSummary,
    DailyMetrics,
    DailyModelMetrics,
    DailyToolMetrics,
)

TOKEN_BUCKETS: tuple[str, ...] = ("prompt", "completion", "cached", "cache_write")
_DAILY_SUMS: tuple[str, ...] = (
    "sessions",
    "sessions_with_errors",
    "events",
    "user_messages",
    "llm_calls",
    "iterations",
    "tool_calls",
    "tool_failures",
    "errors",
    "artifacts",
    "knowledge",
    "prompt_tokens",
    "completion_tokens",
    "cached_tokens",
    "cache_write_tokens",
    "total_tokens",
    "cost_cents",
)


@dataclass(frozen=True)
class DateRange:
    """Whole UTC days from `start` to `end`, both included."""

    start: date
    end: date

    def __post_init__(self) -> None:
        if self.end < self.start:
            raise ValueError(f"the range ends ({self.end}) before it starts ({self.start})")

    @classmethod
    def last_days(cls, days: int, *, today: date) -> DateRange:
        return cls(start=today - timedelta(days=days - 1), end=today)

    @property
    def days(self) -> list[date]:
        return [self.start + timedelta(days=offset) for offset in range((self.end - self.start).days + 1)]

    @property
    def start_datetime(self) -> datetime:
        return datetime.combine(self.start, time.min, tzinfo=UTC)

    @property
    def end_datetime(self) -> datetime:
        """The first instant after the range."""
        return datetime.combine(self.end + timedelta(days=1), time.min, tzinfo=UTC)


def cache_hit_rate(*, prompt: float, cached: float, cache_write: float) -> float:
    """The share of input tokens served from the cache: cached / (prompt + cached + cache_write), a fraction in
    0..1 (0 without input tokens). The one definition: session metadata (`usage.cache_hit_rate`), the SQL
    views, the admin, the console and the API all store and return this fraction."""
    base = prompt + cached + cache_write
    return cached / base if base > 0 else 0.0


def format_cache_hit_rate(rate: float) -> str:
    """How a cache hit rate reads wherever it is shown (admin, dashboards, console): 0.8092 → "80.9%"."""
    return f"{rate * 100:.1f}%"


def percentile(values: Sequence[float], fraction: float) -> float | None:
    """The `fraction` quantile (0..1) with linear interpolation between closest ranks; None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    position = (len(ordered) - 1) * fraction
    below = math.floor(position)
    above = math.ceil(position)
    return ordered[below] + (ordered[above] - ordered[below]) * (position - below)


@dataclass
class DayTotals:
    """All users' activity on one UTC day (zeros when there was none)."""

    day: date
    sessions: int = 0
    sessions_with_errors: int = 0
    events: int = 0
    user_messages: int = 0
    llm_calls: int = 0
    iterations: int = 0
    tool_calls: int = 0
    tool_failures: int = 0
    errors: int = 0
    artifacts: int = 0
    knowledge: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    cache_write_tokens: int = 0
    total_tokens: int = 0
    cost_cents: float = 0.0
    # Iterations per session, over the sessions created that day.
    iterations_p50: float | None = None
    iterations_p95: float | None = None

    @property
    def cache_hit_rate(self) -> float:
        return cache_hit_rate(
            prompt=self.prompt_tokens, cached=self.cached_tokens, cache_write=self.cache_write_tokens
        )

    @property
    def error_rate(self) -> float:
        """Share of the day's sessions with at least one error event."""
        return self.sessions_with_errors / self.sessions if self.sessions else 0.0


CSV_DAY_COLUMNS: tuple[str, ...] = (
    *(f.name for f in fields(DayTotals)),
    "cache_hit_rate",
    "error_rate",
)


@dataclass
class RangeTotals:
    """The whole range: sums of the days, and percentiles over every session created in the range."""

    days: list[DayTotals]
    sessions_created: int = 0
    iterations_p50: float | None = None
    iterations_p95: float | None = None
    sums: dict[str, float] = field(default_factory=dict)

    @property
    def cost_cents(self) -> float:
        return self.sums.get("cost_cents", 0.0)

    @property
    def total_tokens(self) -> int:
        return int(self.sums.get("total_tokens", 0))

    @property
    def cache_hit_rate(self) -> float:
        return cache_hit_rate(
            prompt=self.sums.get("prompt_tokens", 0),
            cached=self.sums.get("cached_tokens", 0),
            cache_write=self.sums.get("cache_write_tokens", 0),
        )

    @property
    def error_rate(self) -> float:
        """Share of session-days with an error (a session active on two days counts on each)."""
        sessions = self.sums.get("sessions", 0)
        return self.sums.get("sessions_with_errors", 0) / sessions if sessions else 0.0


def daily_totals(*, date_range: DateRange) -> list[DayTotals]:
    """One row per day of the range, summed over users, with iteration percentiles. Two queries."""
    rows = (
        DailyMetrics.objects.filter(day__gte=date_range.start, day__lte=date_range.end)
        .order_by()
        .values("day")
        .annotate(**{name: Sum(name) for name in _DAILY_SUMS})
    )
    by_day = {day: DayTotals(day=day) for day in date_range.days}
    for values in rows:
        row: dict[str, Any] = dict(values)
        totals = by_day.get(_as_date(row["day"]))
        if totals is None:
            continue
        for name in _DAILY_SUMS:
            value = row[name] or 0
            setattr(totals, name, float(value) if name == "cost_cents" else int(value))
    for day, iterations in session_iterations_by_day(date_range=date_range).items():
        if day in by_day:
            by_day[day].iterations_p50 = percentile(iterations, 0.5)
            by_day[day].iterations_p95 = percentile(iterations, 0.95)
    return list(by_day.values())


def range_totals(*, days: list[DayTotals], date_range: DateRange) -> RangeTotals:
    """Totals of `days` (from daily_totals) plus iteration percentiles over all sessions in the range."""
    sums: dict[str, float] = dict.fromkeys(_DAILY_SUMS, 0)
    for day in days:
        for name in _DAILY_SUMS:
            sums[name] += getattr(day, name)
    iterations = [
        value for values in session_iterations_by_day(date_range=date_range).values() for value in values
    ]
    return RangeTotals(
        days=days,
        sessions_created=len(iterations),
        iterations_p50=percentile(iterations, 0.5),
        iterations_p95=percentile(iterations, 0.95),
        sums=sums,
    )


def session_iterations_by_day(*, date_range: DateRange) -> dict[date, list[int]]:
    """Iterations of each session created in the range, grouped by its UTC creation day. One query."""
    rows = AgentSessionSummary.objects.filter(
        created_at__gte=date_range.start_datetime, created_at__lt=date_range.end_datetime
    ).values_list("created_at", "iterations")
    grouped: dict[date, list[int]] = defaultdict(list)
    for created_at, iterations in rows:
        grouped[created_at.astimezone(UTC).date()].append(int(iterations))
    return dict(grouped)


@dataclass
class ModelUsage:
    model: str
    purpose: str
    llm_calls: int
    prompt_tokens: int
    completion_tokens: int
    cached_tokens: int
    cache_write_tokens: int
    total_tokens: int
    cost_cents: float
    total_duration_ms: int

    @property
    def cache_hit_rate(self) -> float:
        return cache_hit_rate(
            prompt=self.prompt_tokens, cached=self.cached_tokens, cache_write=self.cache_write_tokens
        )

    @property
    def average_latency_ms(self) -> float:
        return self.total_duration_ms / self.llm_calls if self.llm_calls else 0.0


_MODEL_SUMS = (
    "llm_calls",
    "prompt_tokens",
    "completion_tokens",
    "cached_tokens",
    "cache_write_tokens",
    "total_tokens",
    "cost_cents",
    "total_duration_ms",
)


def model_usage(*, date_range: DateRange) -> list[ModelUsage]:
    """LLM calls, tokens and cost per model and purpose over the range, the most expensive first."""
    rows = (
        DailyModelMetrics.objects.filter(day__gte=date_range.start, day__lte=date_range.end)
        .order_by()
        .values("model", "purpose")
        .annotate(**{name: Sum(name) for name in _MODEL_SUMS})
    )
    usages = []
    for values in rows:
        row: dict[str, Any] = dict(values)
        sums: dict[str, Any] = {
            name: (float(row[name] or 0) if name == "cost_cents" else int(row[name] or 0))
            for name in _MODEL_SUMS
        }
        usages.append(ModelUsage(model=str(row["model"]), purpose=str(row["purpose"]), **sums))
    return sorted(usages, key=lambda usage: (-usage.cost_cents, usage.model, usage.purpose))


@dataclass
class ToolUsage:
    tool_name: str
    calls: int = 0
    failures: int = 0
    total_duration_ms: int = 0
    max_duration_ms: int | None = None
    calls_by_day: dict[date, int] = field(default_factory=dict)

    @property
    def failure_rate(self) -> float:
        return self.failures / self.calls if self.calls else 0.0

    @property
    def average_duration_ms(self) -> float:
        return self.total_duration_ms / self.calls if self.calls else 0.0


def tool_usage(*, date_range: DateRange) -> list[ToolUsage]:
    """Calls, failures and durations per tool over the range (with calls per day), most used first."""
    rows = DailyToolMetrics.objects.filter(day__gte=date_range.start, day__lte=date_range.end).values(
        "day", "tool_name", "calls", "failures", "total_duration_ms", "max_duration_ms"
    )
    tools: dict[str, ToolUsage] = {}
    for row in rows:
        usage = tools.setdefault(row["tool_name"], ToolUsage(tool_name=row["tool_name"]))
        usage.calls += int(row["calls"])
        usage.failures += int(row["failures"] or 0)
        usage.total_duration_ms += int(row["total_duration_ms"] or 0)
        if row["max_duration_ms"] is not None:
            usage.max_duration_ms = max(usage.max_duration_ms or 0, int(row["max_duration_ms"]))
        day = _as_date(row["day"])
        usage.calls_by_day[day] = usage.calls_by_day.get(day, 0) + int(row["calls"])
    return sorted(tools.values(), key=lambda usage: (-usage.calls, usage.tool_name))


# Latency metrics of the `agent_latency_samples` view (migration 0011), in the order the dashboard shows them.
LATENCY_METRICS: tuple[tuple[str, str], ...] = (
    ("model_call", "Model call"),
    ("first_frame", "Time to first frame"),
    ("turn_duration", "Turn duration"),
)


@dataclass(frozen=True)
class Latency:
    """p50 / p95 (ms, linear interpolation as PostgreSQL's percentile_cont) of one metric's samples."""

    samples: int
    p50_ms: float | None
    p95_ms: float | None


@dataclass
class ModelLatency:
    """One model's latency percentiles, over the whole range (`day` None) or on one UTC day."""

    model: str
    day: date | None
    metrics: dict[str, Latency] = field(default_factory=dict)


def latency_percentiles(*, date_range: DateRange, by_day: bool) -> list[ModelLatency]:
    """p50 / p95 of model-call latency, time to first frame and turn duration per model, over the range or per
    day of it (newest day first). PostgreSQL computes them (`percentile_cont`: the `agent_daily_latency` view
    per day, the samples view over the range); elsewhere they are computed here over the same samples. One
    query."""
    connection = connections[router.db_for_read(DailyModelMetrics)]
    bounds = [date_range.start.isoformat(), date_range.end.isoformat()]
    rows: list[tuple[Any, str, str, int, float | None, float | None]]
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            if by_day:
                cursor.execute(
                    "SELECT day, model, metric, samples, p50_ms, p95_ms FROM agent_daily_latency "
                    "WHERE day BETWEEN %s AND %s",
                    bounds,
                )
            else:
                cursor.execute(
                    "SELECT NULL, model, metric, COUNT(*), "
                    "percentile_cont(0.5) WITHIN GROUP (ORDER BY value_ms), "
                    "percentile_cont(0.95) WITHIN GROUP (ORDER BY value_ms) "
                    "FROM agent_latency_samples WHERE day BETWEEN %s AND %s GROUP BY model, metric",
                    bounds,
                )
            rows = list(cursor.fetchall())
        else:
            cursor.execute(
                "SELECT day, model, metric, value_ms FROM agent_latency_samples WHERE day BETWEEN %s AND %s",
                bounds,
            )
            grouped: dict[tuple[Any, str, str], list[float]] = defaultdict(list)
            for day, model, metric, value in cursor.fetchall():
                if value is not None:
                    grouped[(day if by_day else None, model, metric)].append(float(value))
            rows = [
                (day, model, metric, len(values), percentile(values, 0.5), percentile(values, 0.95))
                for (day, model, metric), values in grouped.items()
            ]
    table: dict[tuple[date | None, str], ModelLatency] = {}
    for day, model, metric, samples, p50, p95 in rows:
        key = (_as_date(day) if day is not None else None, str(model))
        entry = table.setdefault(key, ModelLatency(model=key[1], day=key[0]))
        entry.metrics[str(metric)] = Latency(
            samples=int(samples),
            p50_ms=float(p50) if p50 is not None else None,
            p95_ms=float(p95) if p95 is not None else None,
        )
    return sorted(table.values(), key=lambda row: (-(row.day or date.min).toordinal(), row.model))


USER_DAYS_SHOWN = 200


def user_days(*, date_range: DateRange, limit: int = USER_DAYS_SHOWN) -> list[DailyMetrics]:
    """The `agent_daily_metrics` rows (per UTC day and user) of the range: newest day first, the most
    expensive user first within a day; at most `limit`."""
    return list(
        DailyMetrics.objects.filter(day__gte=date_range.start, day__lte=date_range.end).order_by(
            "-day", "-cost_cents", "user_id"
        )[:limit]
    )


def session_models() -> list[str]:
    """The distinct models sessions ran on (for the admin's model filter)."""
    values = (
        AgentSessionSummary.objects.exclude(model="")
        .order_by("model")
        .values_list("model", flat=True)
        .distinct()
    )
    return [str(value) for value in values]


def day_rows_for_csv(days: Iterable[DayTotals]) -> list[list[Any]]:
    """The dashboard's per-day table as CSV rows (header first); rates are fractions in 0..1."""
    rows: list[list[Any]] = [list(CSV_DAY_COLUMNS)]
    for day in days:
        rows.append(
            [
                day.day.isoformat() if name == "day" else _csv_value(getattr(day, name))
                for name in CSV_DAY_COLUMNS
            ]
        )
    return rows


def _csv_value(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, float):
        return round(value, 6)
    return value


def _as_date(value: date | datetime | str) -> date:
    """A view's day column as a date (SQLite may hand back text for an aggregated expression)."""
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    return date.fromisoformat(str(value)[:10])
