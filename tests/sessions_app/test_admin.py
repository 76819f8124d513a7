"""Staff admin for sessions: list, search, read-only event inline, deletion through delete_session."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from sessions_app.models import AgentSession, AgentSessionEvent, EventType
from tests.sessions_app.factories import AgentSessionEventFactory, AgentSessionFactory

pytestmark = pytest.mark.django_db


def _changelist_url() -> str:
    return reverse("admin:sessions_app_agentsession_changelist")


def _change_url(session: AgentSession) -> str:
    return reverse("admin:sessions_app_agentsession_change", args=[session.pk])


def _count_queries(client: Client, url: str) -> int:
    with CaptureQueriesContext(connection) as queries:
        assert client.get(url).status_code == 200
    return len(queries)


def test_changelist_shows_sessions_with_a_constant_number_of_queries(admin_client: Client) -> None:
    """The session list renders its columns, and 6 sessions cost no more queries than 1."""
    first = AgentSessionFactory.create(total_tokens=1234)
    one_session = _count_queries(admin_client, _changelist_url())
    AgentSessionFactory.create_batch(5)
    assert _count_queries(admin_client, _changelist_url()) == one_session
    page = admin_client.get(_changelist_url()).content.decode()
    assert str(first.user_id) in page
    assert "1,234" in page or "1234" in page


def test_search_by_session_id_finds_it_and_ignores_non_uuid_terms(admin_client: Client) -> None:
    """Searching a session id lists that session only; a term that is not a UUID matches nothing, without error."""
    wanted, other = AgentSessionFactory.create(), AgentSessionFactory.create()
    page = admin_client.get(_changelist_url(), {"q": str(wanted.id)}).content.decode()
    assert str(wanted.id) in page
    assert str(other.id) not in page
    response = admin_client.get(_changelist_url(), {"q": "not-a-uuid"})
    assert response.status_code == 200
    assert str(wanted.id) not in response.content.decode()


def test_session_page_lists_events_read_only_in_sequence_order(admin_client: Client) -> None:
    """The session page shows its events in order with a data preview, offers no event editing, and
    costs the same number of queries for 3 events as for 30."""
    session = AgentSessionFactory.create()
    AgentSessionEventFactory.create(
        session=session, event_type=EventType.USER_MESSAGE, data={"message": "first words"}
    )
    AgentSessionEventFactory.create(session=session, event_type=EventType.TOOL_CALL)
    AgentSessionEventFactory.create(session=session, event_type=EventType.ERROR, data={"message": "x" * 500})
    page = admin_client.get(_change_url(session)).content.decode()

    assert page.index("first words") < page.index("tool_call") < page.index("xxxx")
    assert "x" * 200 not in page  # long data is cut short in the preview
    assert 'name="events-MAX_NUM_FORMS" value="0"' in page  # no event can be added
    assert 'name="events-0-DELETE"' not in page  # nor deleted
    assert 'name="events-0-data"' not in page  # nor edited

    three_events = _count_queries(admin_client, _change_url(session))
    AgentSessionEventFactory.create_batch(27, session=session)
    assert _count_queries(admin_client, _change_url(session)) == three_events


def test_deleting_a_session_in_the_admin_removes_it_and_its_events(admin_client: Client) -> None:
    """The admin delete action goes through delete_session, which the append-only trigger lets through."""
    session = AgentSessionFactory.create()
    AgentSessionEventFactory.create_batch(2, session=session)
    response = admin_client.post(
        _changelist_url(), {"action": "delete_selected", "_selected_action": [str(session.pk)], "post": "yes"}
    )
    assert response.status_code == 302
    assert not AgentSession.objects.filter(pk=session.pk).exists()
    assert not AgentSessionEvent.objects.exists()
