"""A session's staff page: totals, the timeline (icons, tokens, cost, JSON, artifacts, errors), paging, live tail."""

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
from sessions_app.models import AgentSession
from sessions_app.services import append_event
from tests.trainer_agent.observability.support import busy_session, login_staff, metrics_fixture

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff_client(client: Client) -> Client:
    return login_staff(client)


def _detail_url(session: AgentSession | uuid.UUID) -> str:
    pk = session.pk if isinstance(session, AgentSession) else session
    return reverse("admin:sessions_app_agentsessionsummary_change", args=[pk])


def _tail_url(session: AgentSession) -> str:
    return reverse("admin:sessions_app_agentsessionsummary_events_json", args=[session.pk])


def _page(client: Client, url: str, **params: str) -> str:
    response = client.get(url, params)
    assert response.status_code == 200
    return response.content.decode()


def _event(page: str, sequence: int) -> str:
    """The HTML of one timeline event."""
    start = page.rindex('<div class="obs-event', 0, page.index(f'id="e{sequence}"'))
    end = page.find('<div class="obs-event', start + 1)
    return page[start : end if end != -1 else len(page)]


def _shown_sequences(page: str) -> list[int]:
    return [int(number) for number in re.findall(r'data-sequence="(\d+)"', page)]


def test_header_shows_the_users_name_and_the_active_time(staff_client: Client) -> None:
    """The header names the user by their profile and shows the active time beside the span."""
    fixture = metrics_fixture()
    UserProfile.objects.create(user_id=fixture.a.user_id, display_name="Alex Example")
    header = _page(staff_client, _detail_url(fixture.a)).split('id="obs-timeline"')[0]
    assert f"user <strong>Alex Example</strong> <strong><code>{fixture.a.user_id}</code></strong>" in header
    assert "20.0s active · 12 events" in header


def test_header_shows_the_sessions_totals(staff_client: Client) -> None:
    """Cost, tokens by bucket, cache hit rate, iterations, tools, errors and duration head the page."""
    fixture = metrics_fixture()
    page = _page(staff_client, _detail_url(fixture.a))
    header = page[: page.index('id="obs-timeline"')]
    for text in ("$0.0201", "8,910", "prompt 1,150", "completion 260", "cached 7,000", "cache write 500"):
        assert text in header, text
    assert "80.9%" in header  # 7000 / 8650
    assert "20.0s" in header and "12 events" in header
    assert "claude-sonnet-4-5" in header and str(fixture.a.user_id) in header


def test_timeline_shows_every_event_in_order_with_console_icons(staff_client: Client) -> None:
    """Events appear by sequence number, with the console log's icons and one-line descriptions."""
    fixture = metrics_fixture()
    page = _page(staff_client, _detail_url(fixture.a))
    assert _shown_sequences(page) == list(range(12))
    assert "👤" in _event(page, 0) and "User: &quot;Plan a push day&quot;" in _event(page, 0)
    assert "📤" in _event(page, 3) and "LLM Request → claude-sonnet-4-5" in _event(page, 3)
    assert "🔧" in _event(page, 5) and "Tool Call → generate_workout" in _event(page, 5)
    assert "📦" in _event(page, 7)


def test_llm_calls_show_tokens_cost_and_duration(staff_client: Client) -> None:
    """Each LLM response shows its tokens (cached part), its cost and how long the call took."""
    fixture = metrics_fixture()
    response = _event(_page(staff_client, _detail_url(fixture.a)), 4)
    assert "4,700 tok (3,000 cached)" in response
    assert "prompt 1,000 · completion 200 · cached 3,000 · cache write 500 · total 4,700" in response
    assert "$0.0150" in response
    assert ">2.0s<" in response
    assert ">120ms<" in _event(_page(staff_client, _detail_url(fixture.a)), 6)


def test_event_data_is_expandable_json(staff_client: Client) -> None:
    """Every event carries its full data as pretty JSON inside a closed <details>."""
    fixture = metrics_fixture()
    event = _event(_page(staff_client, _detail_url(fixture.a)), 4)
    assert "<details" in event and "<details open" not in event
    assert "&quot;cache_write&quot;: 500" in event


def test_artifacts_render_as_exercise_tables(staff_client: Client) -> None:
    """An artifact event shows its exercises: prescription per type, rest, muscle shares, group."""
    fixture = metrics_fixture()
    artifact = _event(_page(staff_client, _detail_url(fixture.a)), 7)
    assert "Push Day" in artifact and "art_abc123" in artifact
    assert "<td>Goblet Squat</td>" in artifact
    assert "3×10/10/8 @ 16/16/18kg" in artifact  # one dumbbell (no implements): not "each hand"
    assert "Quadriceps 70%, Glutes 30%" in artifact
    assert "3×45s" in artifact and "superset · superset-1 #1, 3 rounds" in artifact
    assert "estimated duration min: <strong>25</strong>" in artifact


def test_errors_and_failed_tool_results_are_highlighted(staff_client: Client) -> None:
    """Error events and unsuccessful tool results carry the error style; others do not."""
    fixture = metrics_fixture()
    page_a = _page(staff_client, _detail_url(fixture.a))
    assert "obs-is-error" in _event(page_a, 11).split(">")[0]  # idle failed
    assert "obs-is-error" not in _event(page_a, 6).split(">")[0]  # generate_workout succeeded
    page_b = _page(staff_client, _detail_url(fixture.b))
    assert "obs-is-error" in _event(page_b, 3).split(">")[0]
    assert "❌" in _event(page_b, 3)


def test_trainer_requests_link_to_their_step_replay(staff_client: Client) -> None:
    """Trainer llm_requests link to the step replay; the initializer's request and other events do not."""
    fixture = metrics_fixture()
    page = _page(staff_client, _detail_url(fixture.a))
    replay = reverse("admin:sessions_app_agentsessionsummary_event_action", args=[fixture.a.pk, 3, "replay"])
    assert replay in _event(page, 3)
    assert "Replay step" not in _event(page, 1)
    assert page.count("Replay step") == 2


def test_long_sessions_are_paged(staff_client: Client) -> None:
    """450 events make 3 pages of at most 200; ?seq=N opens the page holding event N."""
    session = busy_session(events=450)
    first = _page(staff_client, _detail_url(session))
    assert _shown_sequences(first) == list(range(200))
    assert "of 3" in first
    assert _shown_sequences(_page(staff_client, _detail_url(session), page="3")) == list(range(400, 450))
    assert _shown_sequences(_page(staff_client, _detail_url(session), seq="250"))[0] == 200
    assert _shown_sequences(_page(staff_client, _detail_url(session), page="99"))[-1] == 449


def test_detail_queries_do_not_grow_with_events(staff_client: Client) -> None:
    """A 2,000-event session's page costs as many queries as a 10-event one, and renders one page of events."""
    small, large = busy_session(events=10), busy_session(events=2000)

    def count(url: str) -> tuple[int, str]:
        with CaptureQueriesContext(connection) as queries:
            response = staff_client.get(url)
        assert response.status_code == 200
        return len(queries), response.content.decode()

    small_queries, _ = count(_detail_url(small))
    large_queries, page = count(_detail_url(large))
    assert large_queries == small_queries <= 7  # the 7th: the turns' traces
    assert len(_shown_sequences(page)) == 200
    last_queries, last_page = count(_detail_url(large) + "?page=10")
    assert last_queries == small_queries
    assert _shown_sequences(last_page)[-1] == 1999


def test_unknown_or_malformed_session_ids_are_not_found(staff_client: Client) -> None:
    """A session id that does not exist, or is not a UUID, answers 404."""
    assert staff_client.get(_detail_url(uuid.uuid4())).status_code == 404
    url = _detail_url(uuid.uuid4()).replace(str(uuid.UUID(int=0))[:8], "zzzzzzzz")
    assert staff_client.get(url.replace(url.split("/")[-3], "not-a-uuid")).status_code == 404


def test_active_sessions_are_followed_live(staff_client: Client) -> None:
    """The last page of an active session starts with live following on; a completed one starts with it off."""
    fixture = metrics_fixture()
    active = _page(staff_client, _detail_url(fixture.c))
    assert 'id="obs-follow" checked' in active
    assert f'data-tail-url="{_tail_url(fixture.c)}"' in active and 'data-after="5"' in active
    assert 'id="obs-follow" checked' not in _page(staff_client, _detail_url(fixture.a))


def test_live_tail_returns_events_after_a_sequence(staff_client: Client) -> None:
    """The tail endpoint returns the session's status and the events after `after`, rendered as timeline rows."""
    fixture = metrics_fixture()
    append_event(session=fixture.c, event_type="user_message", data={"message": "And now?"})
    body = staff_client.get(_tail_url(fixture.c), {"after": "4"}).json()
    assert body["status"] == "active"
    assert [event["sequence"] for event in body["events"]] == [5, 6]
    assert body["last_sequence"] == 6 and body["more"] is False
    assert "And now?" in body["events"][1]["html"] and 'id="e6"' in body["events"][1]["html"]
    assert staff_client.get(_tail_url(fixture.c), {"after": "6"}).json()["events"] == []


def test_live_tail_is_bounded(staff_client: Client) -> None:
    """At most 200 events per answer (with `more` set), in two queries whatever the session's size."""
    session = busy_session(events=2000, status="active")
    with CaptureQueriesContext(connection) as queries:
        body = staff_client.get(_tail_url(session), {"after": "-1"}).json()
    assert len(body["events"]) == 200 and body["more"] is True and body["last_sequence"] == 199
    with CaptureQueriesContext(connection) as later_queries:
        staff_client.get(_tail_url(session), {"after": "1990"})
    assert len(later_queries) == len(queries)
    assert (
        staff_client.get(
            reverse("admin:sessions_app_agentsessionsummary_events_json", args=[uuid.uuid4()])
        ).status_code
        == 404
    )


def test_a_failing_console_describer_does_not_break_the_timeline(
    staff_client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    """If the registered description raises for odd data, the event shows its type instead of a 500."""

    def broken(event_type: str, data: dict[str, object], duration_ms: int | None) -> str:
        raise KeyError("surprise")

    fixture = metrics_fixture()
    monkeypatch.setattr(
        admin_registry,
        "_console",
        [admin_registry.ConsoleFormat(icons={"user_message": "👤"}, describe=broken)],
    )
    page = _page(staff_client, _detail_url(fixture.a))
    assert '<span class="obs-desc" title="user_message">user_message</span>' in _event(page, 0)


def test_a_traced_turn_links_to_its_trace(staff_client: Client, settings: object) -> None:
    """A turn run with tracing on shows its trace id, linked to the tracing backend by TRACE_URL_TEMPLATE."""
    from datetime import timedelta

    from sessions_app.models import EventType
    from sessions_app.services import NewEvent, claim_turn, create_session, open_turn

    settings.TRACE_URL_TEMPLATE = "https://jaeger.example/trace/{trace_id}"  # type: ignore[attr-defined]
    session = create_session(user_id=uuid.uuid4())
    turn, _ = open_turn(
        session=session, model="offline", events=[NewEvent(EventType.USER_MESSAGE, {"message": "hi"})]
    )
    trace_id = "4bf92f3577b34da6a3ce929d0e0e4736"
    claim_turn(turn_id=turn.pk, worker="w", lease=timedelta(seconds=10), trace_id=trace_id)
    page = _page(staff_client, _detail_url(session))
    assert f'href="https://jaeger.example/trace/{trace_id}"' in page
    assert "Traces (1 turn)" in page

    settings.TRACE_URL_TEMPLATE = ""  # type: ignore[attr-defined]
    page = _page(staff_client, _detail_url(session))
    assert f"<code>{trace_id}</code>" in page and "jaeger.example" not in page
