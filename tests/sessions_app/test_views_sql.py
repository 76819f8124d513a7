"""The observability SQL views (migration 0004) return hand-computed aggregates on SQLite and PostgreSQL."""

from __future__ import annotations

import pytest
from django.db import connection

from sessions_app.models import AgentSessionSummary, DailyMetrics, DailyModelMetrics, DailyToolMetrics
from sessions_app.services import append_event
from tests.trainer_agent.observability.support import D1, D2, U1, U2, at, metrics_fixture

pytestmark = pytest.mark.django_db

VIEWS = (
    "agent_event_facts",
    "agent_session_summaries",
    "agent_daily_metrics",
    "agent_daily_model_metrics",
    "agent_daily_tool_metrics",
)


def test_every_view_exists_in_the_database() -> None:
    """Migrations created all five views (a later table rebuild that dropped them would fail here)."""
    with connection.cursor() as cursor:
        views = set(connection.introspection.table_names(cursor, include_views=True)) - set(
            connection.introspection.table_names(cursor, include_views=False)
        )
    assert set(VIEWS) <= views


def test_session_summary_counts_tokens_cost_and_duration() -> None:
    """Session A: 12 events, 3 LLM calls (1 initializer), 2 iterations, all token buckets, 2.01¢, 20 s."""
    fixture = metrics_fixture()
    a = AgentSessionSummary.objects.get(pk=fixture.a.pk)
    assert (a.user_id, a.status, a.model) == (U1, "completed", "claude-sonnet-4-5")
    assert (a.event_count, a.last_sequence) == (12, 11)
    assert (a.user_messages, a.llm_calls, a.iterations) == (1, 3, 2)
    assert (a.tool_calls, a.tool_failures, a.errors, a.artifacts, a.knowledge) == (2, 1, 0, 1, 0)
    assert (a.prompt_tokens, a.completion_tokens, a.cached_tokens, a.cache_write_tokens, a.total_tokens) == (
        1150,
        260,
        7000,
        500,
        8910,
    )
    assert a.cost_cents == pytest.approx(2.01)
    assert a.cache_hit_rate == pytest.approx(7000 / 8650)
    assert (a.first_event_at, a.last_event_at) == (at(D1, "10:00:00"), at(D1, "10:00:20"))
    assert a.duration_ms == 20_000
    assert a.created_at == fixture.a.created_at


def test_session_summary_spanning_midnight_and_odd_token_values() -> None:
    """B spans midnight (10 s) with one error; C's non-numeric tokens and cost count as 0, 200.9 as 200."""
    fixture = metrics_fixture()
    b = AgentSessionSummary.objects.get(pk=fixture.b.pk)
    assert (b.status, b.model, b.event_count, b.errors, b.iterations, b.llm_calls) == (
        "error",
        "claude-haiku-4-5",
        4,
        1,
        1,
        1,
    )
    assert (b.total_tokens, b.duration_ms, b.cache_hit_rate) == (15, 10_000, 0.0)
    assert b.cost_cents == pytest.approx(0.003)

    c = AgentSessionSummary.objects.get(pk=fixture.c.pk)
    assert (c.model, c.iterations, c.knowledge, c.tool_calls, c.tool_failures) == ("gpt-4o-mini", 1, 1, 1, 0)
    assert (c.prompt_tokens, c.completion_tokens, c.cached_tokens, c.cache_write_tokens, c.total_tokens) == (
        200,
        0,
        100,
        0,
        300,
    )
    assert c.cost_cents == 0.0
    assert c.cache_hit_rate == pytest.approx(1 / 3)
    assert c.duration_ms == 5_000


def test_session_without_events_has_zero_aggregates() -> None:
    """D (no events) is listed with zero counts, no model, last_sequence -1 and duration 0."""
    fixture = metrics_fixture()
    d = AgentSessionSummary.objects.get(pk=fixture.d.pk)
    assert (d.event_count, d.last_sequence, d.model, d.total_tokens, d.cost_cents) == (0, -1, "", 0, 0.0)
    assert (d.first_event_at, d.last_event_at, d.duration_ms, d.cache_hit_rate) == (None, None, 0, 0.0)
    assert AgentSessionSummary.objects.count() == 4


def test_summary_view_sorts_and_filters_in_the_database() -> None:
    """Ordering by cost and filtering on aggregates run as SQL on the view."""
    fixture = metrics_fixture()
    by_cost = list(
        AgentSessionSummary.objects.order_by("-cost_cents", "created_at").values_list("pk", flat=True)
    )
    assert by_cost == [fixture.a.pk, fixture.b.pk, fixture.c.pk, fixture.d.pk]
    with_errors = AgentSessionSummary.objects.filter(errors__gt=0).values_list("pk", flat=True)
    assert list(with_errors) == [fixture.b.pk]
    by_duration = list(AgentSessionSummary.objects.order_by("-duration_ms").values_list("pk", flat=True))
    assert by_duration == [fixture.a.pk, fixture.b.pk, fixture.c.pk, fixture.d.pk]


def test_daily_metrics_per_day_and_user() -> None:
    """Events count on their own UTC day: B's error lands on D2, its LLM call on D1."""
    metrics_fixture()
    rows = {(row.day, row.user_id): row for row in DailyMetrics.objects.all()}
    assert set(rows) == {(D1, U1), (D2, U1), (D2, U2)}

    d1 = rows[(D1, U1)]
    assert (d1.sessions, d1.sessions_with_errors, d1.events) == (2, 0, 15)
    assert (d1.user_messages, d1.llm_calls, d1.iterations, d1.tool_calls, d1.tool_failures) == (2, 4, 3, 2, 1)
    assert (d1.errors, d1.artifacts, d1.knowledge) == (0, 1, 0)
    assert (
        d1.prompt_tokens,
        d1.completion_tokens,
        d1.cached_tokens,
        d1.cache_write_tokens,
        d1.total_tokens,
    ) == (
        1160,
        265,
        7000,
        500,
        8925,
    )
    assert d1.cost_cents == pytest.approx(2.013)
    assert d1.cache_hit_rate == pytest.approx(7000 / 8660)

    late = rows[(D2, U1)]
    assert (late.sessions, late.sessions_with_errors, late.events, late.errors, late.llm_calls) == (
        1,
        1,
        1,
        1,
        0,
    )
    assert (late.total_tokens, late.cost_cents, late.cache_hit_rate) == (0, 0.0, 0.0)

    u2 = rows[(D2, U2)]
    assert (u2.sessions, u2.events, u2.llm_calls, u2.iterations, u2.knowledge) == (1, 6, 1, 1, 1)
    assert (u2.prompt_tokens, u2.cached_tokens, u2.total_tokens) == (200, 100, 300)
    assert u2.cache_hit_rate == pytest.approx(1 / 3)


def test_daily_model_metrics_split_by_model_and_purpose() -> None:
    """LLM responses per day, model and purpose, with latency sums; a response without a purpose is trainer's."""
    metrics_fixture()
    rows = {(row.day, row.model, row.purpose): row for row in DailyModelMetrics.objects.all()}
    assert set(rows) == {
        (D1, "claude-haiku-4-5", "initializer"),
        (D1, "claude-haiku-4-5", "trainer"),
        (D1, "claude-sonnet-4-5", "trainer"),
        (D2, "gpt-4o-mini", "trainer"),
    }
    sonnet = rows[(D1, "claude-sonnet-4-5", "trainer")]
    assert (sonnet.llm_calls, sonnet.prompt_tokens, sonnet.completion_tokens, sonnet.cached_tokens) == (
        2,
        1100,
        250,
        7000,
    )
    assert (sonnet.cache_write_tokens, sonnet.total_tokens, sonnet.total_duration_ms) == (500, 8850, 3000)
    assert sonnet.cost_cents == pytest.approx(2.0)
    assert sonnet.cache_hit_rate == pytest.approx(7000 / 8600)
    initializer = rows[(D1, "claude-haiku-4-5", "initializer")]
    assert (initializer.llm_calls, initializer.total_tokens, initializer.total_duration_ms) == (1, 60, 400)
    assert initializer.cost_cents == pytest.approx(0.01)
    mini = rows[(D2, "gpt-4o-mini", "trainer")]
    assert (mini.prompt_tokens, mini.cached_tokens, mini.cost_cents, mini.total_duration_ms) == (
        200,
        100,
        0.0,
        1500,
    )


def test_daily_tool_metrics_count_calls_failures_and_durations() -> None:
    """Tool results per day and tool: calls, failures (success false), total and max duration."""
    metrics_fixture()
    rows = {
        (row.day, row.tool_name): (row.calls, row.failures, row.total_duration_ms, row.max_duration_ms)
        for row in DailyToolMetrics.objects.all()
    }
    assert rows == {
        (D1, "generate_workout"): (1, 0, 120, 120),
        (D1, "idle"): (1, 1, 5, 5),
        (D2, "message_notify_user"): (1, 0, 3, 3),
    }


def test_views_follow_new_events_immediately() -> None:
    """Views are computed on read: an event appended now shows up in the next query."""
    fixture = metrics_fixture()
    append_event(
        session=fixture.d, event_type="error", data={"message": "late", "stack": None, "context": None}
    )
    d = AgentSessionSummary.objects.get(pk=fixture.d.pk)
    assert (d.event_count, d.errors, d.last_sequence) == (1, 1, 0)
    assert d.last_event_at is not None and d.last_event_at > d.created_at
