"""The staff dashboard: date range, totals, server-side SVG charts, cost per model, tool usage, CSV export."""

from __future__ import annotations

import csv
import io
from datetime import date

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from sessions_app.admin_views import MAX_RANGE_DAYS, nice_tick_step, parse_date_range
from sessions_app.dashboards import DateRange
from tests.trainer_agent.observability.support import busy_session, login_staff, metrics_fixture

DASHBOARD = "admin:sessions_app_agentsessionsummary_dashboard"
CSV = "admin:sessions_app_agentsessionsummary_dashboard_csv"
FIXTURE_DAYS = {"start": "2025-03-10", "end": "2025-03-11"}


@pytest.fixture
def staff_client(client: Client) -> Client:
    return login_staff(client)


def _csv(client: Client, **params: str) -> list[list[str]]:
    response = client.get(reverse(CSV), params)
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/csv")
    return list(csv.reader(io.StringIO(response.content.decode())))


def test_parse_date_range_defaults_and_problems() -> None:
    """No dates: the last 30 days; bad or reversed dates fall back with a note; long ranges are capped."""
    today = date(2025, 3, 31)
    assert parse_date_range({}, today=today) == (DateRange(start=date(2025, 3, 2), end=today), None)
    assert parse_date_range({"start": "2025-03-10", "end": "2025-03-11"}, today=today) == (
        DateRange(start=date(2025, 3, 10), end=date(2025, 3, 11)),
        None,
    )
    assert parse_date_range({"start": "2025-03-30"}, today=today)[0] == DateRange(
        start=date(2025, 3, 30), end=today
    )
    fallback, problem = parse_date_range({"start": "March"}, today=today)
    assert fallback.end == today and problem is not None
    assert parse_date_range({"start": "2025-03-12", "end": "2025-03-11"}, today=today)[1] is not None
    capped, note = parse_date_range({"start": "2020-01-01", "end": "2025-03-31"}, today=today)
    assert len(capped.days) == MAX_RANGE_DAYS and note is not None


@pytest.mark.django_db
def test_dashboard_shows_totals_charts_models_and_tools(staff_client: Client) -> None:
    """For the fixture's two days: 4 sessions, $0.0201, cache hit 79.2%, error rate 25%, p50/p95 1 / 1.85."""
    metrics_fixture()
    page = staff_client.get(reverse(DASHBOARD), FIXTURE_DAYS).content.decode()
    cards = page[page.index('class="obs-cards"') : page.index('class="obs-chart-grid"')]
    for text in ("Sessions created", ">4<", "$0.0201", "79.2%", "25.0%", "1 / 1.85"):
        assert text in cards, text
    assert page.count('<svg class="obs-chart"') == 7
    for title in ("Cost per day", "Tokens per day by bucket", "Cache hit rate per day", "Tool calls per day"):
        assert title in page
    models = page[page.index('id="obs-models"') : page.index('id="obs-tools"')]
    assert models.index("claude-sonnet-4-5") < models.index("initializer") < models.index("gpt-4o-mini")
    tools = page[page.index('id="obs-tools"') : page.index('id="obs-days"')]
    assert "generate_workout" in tools and "100.0%" in tools  # idle failed once out of once
    assert 'value="2025-03-10"' in page and 'value="2025-03-11"' in page


@pytest.mark.django_db
def test_chart_bars_carry_their_values(staff_client: Client) -> None:
    """Each bar has a tooltip with its day, series and value (what the SVG draws)."""
    metrics_fixture()
    page = staff_client.get(reverse(DASHBOARD), FIXTURE_DAYS).content.decode()
    assert "<title>03-10 · cost: $0.0201</title>" in page
    assert "<title>03-11 · error rate: 50%</title>" in page
    assert "<title>03-10 · cached: 7.0K</title>" in page


@pytest.mark.django_db
def test_dashboard_warns_about_unreadable_dates(staff_client: Client) -> None:
    """An unreadable date shows a note and the default range instead of an error."""
    response = staff_client.get(reverse(DASHBOARD), {"start": "yesterday"})
    assert response.status_code == 200
    assert "Dates must look like 2025-01-31" in response.content.decode()


@pytest.mark.django_db
def test_dashboard_queries_do_not_grow_with_events(staff_client: Client) -> None:
    """The dashboard costs the same queries with 10 events as with 2,000 more."""
    busy_session(events=10)

    def count() -> int:
        with CaptureQueriesContext(connection) as queries:
            assert staff_client.get(reverse(DASHBOARD)).status_code == 200
        return len(queries)

    before = count()
    busy_session(events=2000)
    assert count() == before <= 12  # + latency per model and per day, the per-user days and their labels


@pytest.mark.django_db
def test_csv_per_day(staff_client: Client) -> None:
    """`table=days`: a header, then one row per day of the range with the same numbers as the views."""
    metrics_fixture()
    rows = _csv(staff_client, **FIXTURE_DAYS)
    header, first, second = rows
    assert header[:3] == ["day", "sessions", "sessions_with_errors"]
    by_name = dict(zip(header, first, strict=True))
    assert (by_name["day"], by_name["sessions"], by_name["total_tokens"], by_name["cost_cents"]) == (
        "2025-03-10",
        "2",
        "8925",
        "2.013",
    )
    assert dict(zip(header, second, strict=True))["error_rate"] == "0.5"


@pytest.mark.django_db
def test_csv_per_model_and_per_tool(staff_client: Client) -> None:
    """`table=models` and `table=tools` export the dashboard's other two tables; other tables are 404."""
    metrics_fixture()
    models = _csv(staff_client, table="models", **FIXTURE_DAYS)
    assert models[0][:3] == ["model", "purpose", "llm_calls"]
    assert models[1][:3] == ["claude-sonnet-4-5", "trainer", "2"]
    tools = _csv(staff_client, table="tools", **FIXTURE_DAYS)
    assert tools[0] == [
        "tool_name",
        "calls",
        "failures",
        "failure_rate",
        "average_duration_ms",
        "max_duration_ms",
    ]
    assert ["idle", "1", "1", "1.0", "5.0", "5"] in tools
    assert staff_client.get(reverse(CSV), {"table": "secrets"}).status_code == 404


@pytest.mark.parametrize(
    ("peak", "integer", "step"),
    [
        (0, False, 1),
        (3.9, False, 1),
        (5, False, 2),
        (100, False, 25),
        (0.2, False, 0.05),
        (3, True, 1),
        (7, True, 2),
    ],
)
def test_chart_ticks_are_round_numbers(peak: float, integer: bool, step: float) -> None:
    """Four ticks of 1, 2, 2.5 or 5 × 10^k cover the tallest bar; count charts only use whole steps."""
    assert nice_tick_step(peak, integer=integer) == step
    assert nice_tick_step(peak, integer=integer) * 4 >= peak
