"""Staff session list on the summaries view: columns, search, filters, sorting, bounded queries, deletion."""

from __future__ import annotations

import re
import uuid

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from datasources_app.models import UserProfile
from sessions_app import admin_registry
from sessions_app.activity import active_time_ms
from sessions_app.admin import AgentSessionSummaryAdmin
from sessions_app.models import AgentSession, AgentSessionEvent, AgentSessionSummary, EventType
from tests.trainer_agent.observability.support import (
    D1,
    U1,
    add_event,
    at,
    busy_session,
    login_staff,
    make_session,
    metrics_fixture,
)

pytestmark = pytest.mark.django_db

CHANGELIST = "admin:sessions_app_agentsessionsummary_changelist"


@pytest.fixture
def staff_client(client: Client) -> Client:
    return login_staff(client)


def _list(client: Client, **params: str) -> str:
    response = client.get(reverse(CHANGELIST), params)
    assert response.status_code == 200
    return response.content.decode()


def _queries(client: Client, url: str) -> int:
    with CaptureQueriesContext(connection) as queries:
        assert client.get(url).status_code == 200
    return len(queries)


def _row(page: str, session: AgentSession) -> str:
    """The HTML of one session's row."""
    row = page[page.index(f"{session.pk}/change/") :]
    return row[: row.index("</tr>")]


def _two_turns_half_an_hour_apart() -> AgentSession:
    """Turn 1 from 10:00:00 to 10:00:04, the user comes back at 10:30:00, turn 2 ends at 10:30:03."""
    session = make_session(user_id=uuid.uuid4(), created_at=at(D1, "10:00:00"))
    add_event(session, 0, EventType.USER_MESSAGE, {"message": "Plan a push day"}, at(D1, "10:00:00"))
    add_event(session, 1, EventType.TOOL_CALL, {"tool_name": "idle"}, at(D1, "10:00:01.5"))
    add_event(session, 2, EventType.TOOL_RESULT, {"tool_name": "idle"}, at(D1, "10:00:04"))
    add_event(session, 3, EventType.USER_MESSAGE, {"message": "Swap the dips"}, at(D1, "10:30:00"))
    add_event(session, 4, EventType.TOOL_RESULT, {"tool_name": "idle"}, at(D1, "10:30:03"))
    return session


def _listed(page: str) -> list[str]:
    """Session ids in the order the rows appear (the row link holds the full id)."""
    return re.findall(r"agentsessionsummary/([0-9a-f-]{36})/change/", page)


def test_list_shows_each_sessions_aggregates(staff_client: Client) -> None:
    """A row shows user, status, model, iterations, tokens, cache hit %, cost, duration and errors."""
    fixture = metrics_fixture()
    page = _list(staff_client)
    row = page[page.index(f"{fixture.a.pk}/change/") :]
    row = row[: row.index("</tr>")]
    for text in (
        str(fixture.a.user_id),
        "claude-sonnet-4-5",
        "obs-status-completed",
        "8,910",
        "80.9%",
        "$0.0201",
        "20.0s",
    ):
        assert text in row, text
    b_row = page[page.index(f"{fixture.b.pk}/change/") :]
    assert 'class="obs-error-count">1<' in b_row[: b_row.index("</tr>")]
    assert reverse("admin:sessions_app_agentsessionsummary_dashboard") in page


def test_search_by_session_id_or_user_id(staff_client: Client) -> None:
    """A full session id or user id finds its sessions; a term that is not a UUID matches nothing, without error."""
    fixture = metrics_fixture()
    assert _listed(_list(staff_client, q=str(fixture.b.pk))) == [str(fixture.b.pk)]
    assert set(_listed(_list(staff_client, q=str(fixture.c.user_id)))) == {
        str(fixture.c.pk),
        str(fixture.d.pk),
    }
    assert _listed(_list(staff_client, q="not-a-uuid")) == []


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"status__exact": "error"}, {"b"}),
        ({"model": "claude-sonnet-4-5"}, {"a"}),
        ({"has_errors": "yes"}, {"b"}),
        ({"has_errors": "no"}, {"a", "c", "d"}),
        ({"created_from": "2025-03-11"}, {"c", "d"}),
        ({"created_to": "2025-03-10"}, {"a", "b"}),
        ({"created_from": "2025-03-10", "created_to": "2025-03-10", "status__exact": "completed"}, {"a"}),
        ({"created_from": "garbage"}, {"a", "b", "c", "d"}),
    ],
)
def test_filters(staff_client: Client, params: dict[str, str], expected: set[str]) -> None:
    """Status, model, has-errors and the created date range (UTC days, both ends included) filter the list."""
    fixture = metrics_fixture()
    names = {str(fixture.a.pk): "a", str(fixture.b.pk): "b", str(fixture.c.pk): "c", str(fixture.d.pk): "d"}
    assert {names[pk] for pk in _listed(_list(staff_client, **params))} == expected


def test_date_range_form_keeps_other_filters(staff_client: Client) -> None:
    """The date range form resubmits the other active filters as hidden fields."""
    metrics_fixture()
    page = _list(staff_client, status__exact="completed", created_from="2025-03-10")
    assert '<input type="hidden" name="status__exact" value="completed">' in page
    assert 'name="created_from" value="2025-03-10"' in page


@pytest.mark.parametrize("column", ["cost", "duration"])
def test_sortable_by_cost_and_duration(staff_client: Client, column: str) -> None:
    """Clicking the cost or duration header sorts the view in SQL, descending then ascending."""
    fixture = metrics_fixture()
    index = AgentSessionSummaryAdmin.list_display.index(column) + 1
    descending = _listed(_list(staff_client, o=f"-{index}"))
    assert descending[0] == str(fixture.a.pk)
    ascending = _listed(_list(staff_client, o=str(index)))
    assert ascending[-1] == str(fixture.a.pk)


def test_list_queries_do_not_grow_with_sessions_or_events(staff_client: Client) -> None:
    """The list costs the same queries for 1 session as for 6, one of them with 2,000 events."""
    busy_session(events=3)
    one = _queries(staff_client, reverse(CHANGELIST))
    busy_session(events=2000)
    for _ in range(4):
        busy_session(events=5)
    assert _queries(staff_client, reverse(CHANGELIST)) == one
    assert one <= 8


def test_rows_open_the_session_timeline(staff_client: Client) -> None:
    """Each row links to the session's detail page."""
    fixture = metrics_fixture()
    page = _list(staff_client)
    assert reverse("admin:sessions_app_agentsessionsummary_change", args=[fixture.a.pk]) in page


def test_deleting_from_the_list_removes_sessions_and_events(staff_client: Client) -> None:
    """The delete action goes through delete_session, which the append-only trigger lets through."""
    fixture = metrics_fixture()
    response = staff_client.post(
        reverse(CHANGELIST),
        {
            "action": "delete_selected",
            "_selected_action": [str(fixture.a.pk), str(fixture.b.pk)],
            "post": "yes",
        },
    )
    assert response.status_code == 302
    assert set(AgentSession.objects.values_list("pk", flat=True)) == {fixture.c.pk, fixture.d.pk}
    assert not AgentSessionEvent.objects.filter(session_id__in=[fixture.a.pk, fixture.b.pk]).exists()


def test_nothing_can_be_added_or_edited(staff_client: Client) -> None:
    """There is no add page, and a session's page has no form to submit."""
    fixture = metrics_fixture()
    assert staff_client.get(reverse("admin:sessions_app_agentsessionsummary_add")).status_code == 403
    page = staff_client.get(reverse("admin:sessions_app_agentsessionsummary_change", args=[fixture.a.pk]))
    assert "<form" not in page.content.decode().split('id="content-main"')[1].split("obs-timeline")[0]


def test_staff_pages_need_a_staff_login(client: Client) -> None:
    """Anonymous visitors are sent to the admin login for the list, dashboard and live tail."""
    session_id = uuid.uuid4()
    for url in (
        reverse(CHANGELIST),
        reverse("admin:sessions_app_agentsessionsummary_dashboard"),
        reverse("admin:sessions_app_agentsessionsummary_events_json", args=[session_id]),
    ):
        response = client.get(url)
        assert response.status_code == 302
        assert "/admin/login/" in response["Location"]


def test_users_show_by_their_profile_name_with_the_full_id_on_hover(staff_client: Client) -> None:
    """A user with a profile shows by its display name (full id in the title); one without, by a short id."""
    fixture = metrics_fixture()
    UserProfile.objects.create(user_id=U1, display_name="Alex Example")
    page = _list(staff_client)
    assert f'<span title="{U1}">Alex Example</span>' in _row(page, fixture.a)
    assert f'<span title="{U1}">Alex Example</span>' in _row(page, fixture.b)
    assert f'<span title="{fixture.c.user_id}">{str(fixture.c.user_id)[:8]}…</span>' in _row(page, fixture.c)


def test_users_show_by_id_when_no_labeller_is_registered(
    staff_client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    """sessions_app works alone: without a registered labeller every user shows by a short id."""
    fixture = metrics_fixture()
    UserProfile.objects.create(user_id=U1, display_name="Alex Example")
    monkeypatch.setattr(admin_registry, "_user_labellers", [])
    row = _row(_list(staff_client), fixture.a)
    assert f'<span title="{U1}">{str(U1)[:8]}…</span>' in row
    assert "Alex Example" not in row


def test_active_time_leaves_out_the_wait_between_turns(staff_client: Client) -> None:
    """Two 4 s and 3 s turns half an hour apart: active 7.0s beside a span of 30m 03s, with the definition."""
    session = _two_turns_half_an_hour_apart()
    single_turn = metrics_fixture().a
    page = _list(staff_client)
    row = _row(page, session)
    assert ">7.0s</span>" in row and "30m 03s" in row
    assert 'title="active: the time the agent worked' in row
    assert "Active: the time the agent worked" in page  # the note under the list
    single = _row(page, single_turn)
    assert ">20.0s</span>" in single and single.count("20.0s") == 2  # one turn: active = span


def test_active_time_of_sessions_with_and_without_events() -> None:
    """active_time_ms: span minus each wait before a later user message; 0 without events."""
    busy = _two_turns_half_an_hour_apart()
    empty = make_session(user_id=uuid.uuid4(), created_at=at(D1, "11:00:00"))
    summaries = list(AgentSessionSummary.objects.filter(pk__in=[busy.pk, empty.pk]))
    assert active_time_ms(summaries=summaries) == {busy.pk: 7000, empty.pk: 0}
    assert active_time_ms(summaries=[]) == {}
