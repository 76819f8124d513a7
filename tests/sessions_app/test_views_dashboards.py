"""Dashboard reads over the SQL views: per-day totals, range totals, percentiles, cost per model, tool usage."""

from __future__ import annotations

from datetime import date

import pytest

from sessions_app.dashboards import (
    CSV_DAY_COLUMNS,
    DateRange,
    daily_totals,
    day_rows_for_csv,
    model_usage,
    percentile,
    range_totals,
    session_models,
    tool_usage,
)
from tests.trainer_agent.observability.support import D1, D2, metrics_fixture

FIXTURE_RANGE = DateRange(start=D1, end=D2)


def test_percentile_interpolates_linearly_between_ranks() -> None:
    """p50 and p95 of [1, 2, 3, 4, 10] are 3 and 8.8; one value is its own percentile; none gives None."""
    assert percentile([10, 1, 4, 3, 2], 0.5) == 3
    assert percentile([10, 1, 4, 3, 2], 0.95) == pytest.approx(8.8)
    assert percentile([7], 0.95) == 7
    assert percentile([], 0.5) is None


def test_date_range_lists_its_days_and_refuses_a_reversed_range() -> None:
    """A range covers whole UTC days, both ends included."""
    assert DateRange(start=date(2025, 1, 30), end=date(2025, 2, 1)).days == [
        date(2025, 1, 30),
        date(2025, 1, 31),
        date(2025, 2, 1),
    ]
    assert DateRange.last_days(7, today=date(2025, 1, 7)).start == date(2025, 1, 1)
    with pytest.raises(ValueError, match="ends"):
        DateRange(start=date(2025, 1, 2), end=date(2025, 1, 1))


@pytest.mark.django_db
def test_daily_totals_sum_users_and_fill_empty_days() -> None:
    """Each day of the range gets a row (zeros on quiet days) with sums, rates and iteration percentiles."""
    metrics_fixture()
    days = daily_totals(date_range=DateRange(start=date(2025, 3, 9), end=D2))
    assert [day.day for day in days] == [date(2025, 3, 9), D1, D2]
    quiet, first, second = days
    assert (quiet.sessions, quiet.cost_cents, quiet.iterations_p50, quiet.cache_hit_rate) == (
        0,
        0.0,
        None,
        0.0,
    )

    assert (first.sessions, first.llm_calls, first.iterations, first.total_tokens) == (2, 4, 3, 8925)
    assert first.cost_cents == pytest.approx(2.013)
    assert first.cache_hit_rate == pytest.approx(7000 / 8660)
    assert first.error_rate == 0.0
    # Sessions created on D1: A (2 iterations) and B (1).
    assert (first.iterations_p50, first.iterations_p95) == (pytest.approx(1.5), pytest.approx(1.95))

    # D2: B's error and C's activity; B and C were active, one of them with an error.
    assert (second.sessions, second.sessions_with_errors, second.errors) == (2, 1, 1)
    assert second.error_rate == 0.5
    assert (second.prompt_tokens, second.cached_tokens, second.total_tokens) == (200, 100, 300)
    # Sessions created on D2: C (1 iteration) and D (0).
    assert (second.iterations_p50, second.iterations_p95) == (pytest.approx(0.5), pytest.approx(0.95))


@pytest.mark.django_db
def test_range_totals_over_the_whole_range() -> None:
    """Range sums, cache hit rate over all input tokens, error rate over session-days, p50/p95 of 4 sessions."""
    metrics_fixture()
    days = daily_totals(date_range=FIXTURE_RANGE)
    totals = range_totals(days=days, date_range=FIXTURE_RANGE)
    assert totals.sessions_created == 4
    assert totals.cost_cents == pytest.approx(2.013)
    assert totals.total_tokens == 8925 + 300
    assert totals.cache_hit_rate == pytest.approx(7100 / 8960)
    assert totals.error_rate == pytest.approx(1 / 4)
    # Iterations [2, 1, 1, 0] → p50 1, p95 1.85.
    assert totals.iterations_p50 == pytest.approx(1.0)
    assert totals.iterations_p95 == pytest.approx(1.85)


@pytest.mark.django_db
def test_range_bounds_are_inclusive_utc_days() -> None:
    """A one-day range holds only that day's events and sessions created that day."""
    metrics_fixture()
    days = daily_totals(date_range=DateRange(start=D2, end=D2))
    totals = range_totals(days=days, date_range=DateRange(start=D2, end=D2))
    assert [day.day for day in days] == [D2]
    assert totals.sessions_created == 2
    assert totals.total_tokens == 300


@pytest.mark.django_db
def test_model_usage_is_sorted_by_cost() -> None:
    """Cost per model and purpose over the range, the most expensive first, with average latency."""
    metrics_fixture()
    usage = model_usage(date_range=FIXTURE_RANGE)
    assert [(u.model, u.purpose, u.llm_calls) for u in usage] == [
        ("claude-sonnet-4-5", "trainer", 2),
        ("claude-haiku-4-5", "initializer", 1),
        ("claude-haiku-4-5", "trainer", 1),
        ("gpt-4o-mini", "trainer", 1),
    ]
    sonnet = usage[0]
    assert sonnet.cost_cents == pytest.approx(2.0)
    assert sonnet.average_latency_ms == 1500
    assert sonnet.cache_hit_rate == pytest.approx(7000 / 8600)


@pytest.mark.django_db
def test_tool_usage_per_tool_with_calls_per_day() -> None:
    """Tools over the range, most used first, with failure rate, durations and calls per day."""
    metrics_fixture()
    usage = {u.tool_name: u for u in tool_usage(date_range=FIXTURE_RANGE)}
    assert set(usage) == {"generate_workout", "idle", "message_notify_user"}
    assert (usage["idle"].calls, usage["idle"].failures, usage["idle"].failure_rate) == (1, 1, 1.0)
    assert usage["generate_workout"].average_duration_ms == 120
    assert usage["message_notify_user"].calls_by_day == {D2: 1}


@pytest.mark.django_db
def test_session_models_lists_each_model_once() -> None:
    """The model filter's choices: distinct models of sessions, sessions without requests left out."""
    metrics_fixture()
    assert session_models() == ["claude-haiku-4-5", "claude-sonnet-4-5", "gpt-4o-mini"]


@pytest.mark.django_db
def test_csv_rows_have_a_header_and_one_row_per_day() -> None:
    """The CSV table: header of column names, then per-day values with rates as fractions."""
    metrics_fixture()
    rows = day_rows_for_csv(daily_totals(date_range=FIXTURE_RANGE))
    assert rows[0] == list(CSV_DAY_COLUMNS)
    assert [row[0] for row in rows[1:]] == ["2025-03-10", "2025-03-11"]
    second = dict(zip(rows[0], rows[2], strict=True))
    assert (second["sessions"], second["error_rate"], second["total_tokens"]) == (2, 0.5, 300)
