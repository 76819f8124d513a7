"""What staff see next in the admin: latency p50/p95 per model and day (model calls, time to first frame, turn
duration), sessions found by a word of a user message, tool call or error, and the per-user daily view."""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest
from django.test import Client
from django.urls import reverse

from sessions_app.dashboards import DateRange, latency_percentiles
from sessions_app.models import AgentSession, AgentTurn, EventType
from tests.trainer_agent.observability.support import (
    add_event,
    login_staff,
    make_session,
    request_data,
    response_data,
    tool_call,
    tool_result,
)

pytestmark = pytest.mark.django_db

MODEL = "claude-haiku-4-5"
CHANGELIST = "admin:sessions_app_agentsessionsummary_changelist"
DASHBOARD = "admin:sessions_app_agentsessionsummary_dashboard"


@dataclass
class LatencyFixture:
    deadlift: AgentSession  # its user asked about their deadlift lockout
    squat: AgentSession  # its tool call swapped in a Bulgarian split squat
    overloaded: AgentSession  # its turn failed: the provider was overloaded
    user_id: uuid.UUID


def _turn(session: AgentSession, *, start: datetime, ttff_ms: int, duration_ms: int, calls: list[int]) -> int:
    """A finished turn: the user message, one model call per `calls` duration, its tool call (the first at
    `ttff_ms`), and its end at `duration_ms`. Returns the next sequence number."""
    add_event(session, 0, EventType.USER_MESSAGE, {"message": session.metadata["message"]}, start)
    sequence = 1
    for index, call_ms in enumerate(calls):
        moment = start + timedelta(milliseconds=ttff_ms if index == 0 else ttff_ms + 10 * index)
        add_event(
            session, sequence, EventType.LLM_REQUEST, request_data(MODEL), moment - timedelta(milliseconds=5)
        )
        add_event(
            session,
            sequence + 1,
            EventType.LLM_RESPONSE,
            response_data(MODEL, prompt=100, completion=20, total=120, cost_cents=0.5),
            moment,
            call_ms,
        )
        arguments = session.metadata.get("arguments", {"message": "ok"})
        add_event(
            session,
            sequence + 2,
            EventType.TOOL_CALL,
            tool_call("swap_exercise", f"c{index}", arguments),
            moment,
        )
        add_event(
            session,
            sequence + 3,
            EventType.TOOL_RESULT,
            tool_result("swap_exercise", f"c{index}", success=True),
            moment,
        )
        sequence += 4
    AgentTurn(
        session=session,
        user_id=session.user_id,
        status="completed",
        model=MODEL,
        start_sequence=0,
        end_sequence=sequence - 1,
        attempts=1,
        enqueued_at=start,
        started_at=start,
        finished_at=start + timedelta(milliseconds=duration_ms),
    ).save()
    return sequence


def latency_fixture() -> LatencyFixture:
    """Today: model calls of 100, 200, 300 ms (one turn) and 400, 1000 ms (another): p50 300ms, p95 880ms.
    Those turns show their first frame after 400 and 800 ms (p50 600ms, p95 780ms) and take 2 and 4 s (p50
    3.0s, p95 3.9s). A third session only failed (no model call, no turn)."""
    today = datetime.now(UTC).replace(hour=0, minute=1, second=0, microsecond=0)
    user_id = uuid.uuid4()
    deadlift = make_session(
        user_id=user_id, created_at=today, metadata={"message": "How do I fix my deadlift lockout?"}
    )
    _turn(deadlift, start=today, ttff_ms=400, duration_ms=2000, calls=[100, 200, 300])
    squat = make_session(
        user_id=uuid.uuid4(),
        created_at=today + timedelta(minutes=5),
        metadata={
            "message": "Swap the lunges please",
            "arguments": {"new_exercise": "Bulgarian split squat"},
        },
    )
    _turn(squat, start=today + timedelta(minutes=5), ttff_ms=800, duration_ms=4000, calls=[400, 1000])
    overloaded = make_session(user_id=user_id, created_at=today + timedelta(minutes=9), status="error")
    add_event(
        overloaded, 0, EventType.USER_MESSAGE, {"message": "Plan my week"}, today + timedelta(minutes=9)
    )
    add_event(
        overloaded,
        1,
        EventType.ERROR,
        {"message": "The provider is overloaded", "kind": "overloaded", "context": "llm_call", "fatal": True},
        today + timedelta(minutes=9, seconds=1),
    )
    return LatencyFixture(deadlift=deadlift, squat=squat, overloaded=overloaded, user_id=user_id)


def test_latency_percentiles_per_model_over_the_range_and_per_day() -> None:
    latency_fixture()
    today = datetime.now(UTC).date()
    date_range = DateRange.last_days(7, today=today)
    for rows in (
        latency_percentiles(date_range=date_range, by_day=False),
        latency_percentiles(date_range=date_range, by_day=True),
    ):
        [row] = rows
        assert row.model == MODEL
        calls, first, turns = (row.metrics[name] for name in ("model_call", "first_frame", "turn_duration"))
        assert (calls.samples, calls.p50_ms, calls.p95_ms) == (5, 300, pytest.approx(880))
        assert (first.samples, first.p50_ms, first.p95_ms) == (2, pytest.approx(600), pytest.approx(780))
        assert (turns.samples, turns.p50_ms, turns.p95_ms) == (2, pytest.approx(3000), pytest.approx(3900))
    assert latency_percentiles(date_range=date_range, by_day=True)[0].day == today
    yesterday = DateRange(start=today - timedelta(days=1), end=today - timedelta(days=1))
    assert latency_percentiles(date_range=yesterday, by_day=False) == []


def test_the_dashboard_shows_latency_percentiles_and_the_per_user_days(client: Client) -> None:
    fixture = latency_fixture()
    page = login_staff(client).get(reverse(DASHBOARD)).content.decode()
    table = page.split('id="obs-latency"')[1].split("</table>")[0]
    cells = re.findall(r'data-metric="(\w+)">([^<]+)<', table)
    assert cells == [
        ("model_call", "300ms / 880ms"),
        ("first_frame", "600ms / 780ms"),
        ("turn_duration", "3.0s / 3.9s"),
    ]
    users = page.split('id="obs-user-days"')[1].split("</table>")[0]
    assert f'title="{fixture.user_id}"' in users
    assert users.count("<tr>") == 1 + 2  # the header and today's two users


def _found(client: Client, term: str) -> set[str]:
    response = client.get(reverse(CHANGELIST), {"q": term})
    assert response.status_code == 200
    return set(re.findall(r"/agentsessionsummary/([0-9a-f-]{36})/change/", response.content.decode()))


def test_a_session_is_found_by_a_word_of_its_user_message_tool_arguments_or_error(client: Client) -> None:
    fixture = latency_fixture()
    staff = login_staff(client)
    assert _found(staff, "deadlift") == {str(fixture.deadlift.pk)}
    assert _found(staff, "Lockout DEADLIFT") == {str(fixture.deadlift.pk)}
    assert _found(staff, "bulgarian") == {str(fixture.squat.pk)}
    assert _found(staff, "overloaded") == {str(fixture.overloaded.pk)}
    assert _found(staff, "kettlebell") == set()
    # A full UUID still finds a session, or a user's sessions, exactly.
    assert _found(staff, str(fixture.squat.pk)) == {str(fixture.squat.pk)}
    assert _found(staff, str(fixture.user_id)) == {str(fixture.deadlift.pk), str(fixture.overloaded.pk)}


def test_postgresql_search_reads_the_full_text_index() -> None:
    """The search's expression is the GIN index's (migration 0011), so PostgreSQL can answer it from the index."""
    from django.db import connection, transaction

    from sessions_app.selectors import sessions_mentioning

    if connection.vendor != "postgresql":
        pytest.skip("full-text search and its index are PostgreSQL's")
    sql, params = sessions_mentioning(text="deadlift").query.sql_with_params()
    with transaction.atomic(), connection.cursor() as cursor:
        # Whether the full-text index CAN answer the match, whatever the table's statistics: with scans of the
        # table and plain index scans off, and the btree indexes holding the event type gone (inside this
        # transaction, rolled back below); on a small test table the planner otherwise may take one of those
        # for the query's `event_type IN (…)` and apply the match as a filter.
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("SET LOCAL enable_indexscan = off")
        cursor.execute("DROP INDEX agent_evt_type_time_idx, agent_evt_session_type_idx")
        cursor.execute(f"EXPLAIN {sql}", params)
        plan = "\n".join(row[0] for row in cursor.fetchall())
        transaction.set_rollback(True)
    assert "agent_evt_search_idx" in plan, plan
