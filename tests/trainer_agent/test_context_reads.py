"""The context builder's event reads (one plain-SQL query per build) with a turn's cache."""

from __future__ import annotations

import uuid

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from config.db import read_together
from datasources_app.demo import DEMO_USER_ID
from datasources_app.selectors import plan_user_data_sources, user_data_sources
from datasources_app.services import seed_demo_user
from datasources_app.sources import user_data_xml_of
from sessions_app.models import AgentSession
from sessions_app.selectors import context_events_after, plan_context_events_after
from sessions_app.services import append_event, create_session, update_context_start
from trainer_agent.context import EMPTY_CONTEXT_ERROR, ContextBuildError, ContextCache, build_context

pytestmark = pytest.mark.django_db


@pytest.fixture
def demo_user() -> uuid.UUID:
    seed_demo_user()
    return DEMO_USER_ID


def _session_with_a_turn() -> AgentSession:
    session = create_session(user_id=uuid.uuid4())
    append_event(session=session, event_type="user_message", data={"message": "Hi"})
    append_event(
        session=session, event_type="tool_call", data={"tool_name": "idle", "arguments": {}, "call_id": "t1"}
    )
    append_event(
        session=session,
        event_type="tool_result",
        data={"tool_name": "idle", "call_id": "t1", "success": True, "result": {"formatted": "ok"}},
    )
    return session


def test_a_cached_build_with_nothing_new_equals_the_previous_one() -> None:
    session = _session_with_a_turn()
    cache = ContextCache()
    first = build_context(session=session, user_id=session.user_id, cache=cache)
    append_event(
        session=session, event_type="llm_request", data={"model": "m", "prompt": "", "estimated_tokens": 0}
    )
    again = build_context(session=session, user_id=session.user_id, cache=cache)
    assert again.messages == first.messages
    assert (again.event_count, again.last_sequence) == (first.event_count, first.last_sequence) == (3, 2)


def test_a_start_moved_by_another_worker_past_every_event_empties_a_cached_build() -> None:
    """The start is read from the database on each build (not from the caller's session object)."""
    session = _session_with_a_turn()
    cache = ContextCache()
    assert build_context(session=session, user_id=session.user_id, cache=cache).event_count == 3
    update_context_start(session=AgentSession.objects.get(pk=session.pk), sequence=3)  # another worker's copy
    with pytest.raises(ContextBuildError, match=EMPTY_CONTEXT_ERROR):
        build_context(session=session, user_id=session.user_id, cache=cache)


def test_new_events_after_a_moved_start_are_read_from_that_start() -> None:
    session = _session_with_a_turn()
    cache = ContextCache()
    build_context(session=session, user_id=session.user_id, cache=cache)
    update_context_start(session=AgentSession.objects.get(pk=session.pk), sequence=1)
    append_event(session=session, event_type="user_message", data={"message": "More"})
    cached = build_context(session=session, user_id=session.user_id, cache=cache)
    fresh = build_context(session=session, user_id=session.user_id)
    assert cached.messages == fresh.messages
    assert (cached.event_count, cached.last_sequence) == (3, 3)


def test_events_and_user_data_read_together_equal_each_read_alone(demo_user: uuid.UUID) -> None:
    """`read_together` (one message on PostgreSQL) gives each selector exactly what it gives alone."""
    session = _session_with_a_turn()
    together_events, together_sources = read_together(
        plan_context_events_after(session=session, after_sequence=0),
        plan_user_data_sources(user_id=demo_user),
    )
    alone_events = context_events_after(session=session, after_sequence=0)
    alone_sources = user_data_sources(user_id=demo_user)
    assert together_events is not None and alone_events is not None
    assert [(e.pk, e.sequence_number, e.data) for e in together_events[0]] == [
        (e.pk, e.sequence_number, e.data) for e in alone_events[0]
    ]
    assert together_events[1] == alone_events[1] == 0
    assert "Home" in user_data_xml_of(together_sources)
    assert user_data_xml_of(together_sources) == user_data_xml_of(alone_sources)


@pytest.mark.skipif(connection.vendor != "postgresql", reason="several statements per message: PostgreSQL")
def test_a_build_reads_its_new_events_and_the_fresh_user_data_in_one_round_trip(demo_user: uuid.UUID) -> None:
    session = create_session(user_id=demo_user)
    append_event(session=session, event_type="user_message", data={"message": "Hi"})
    cache = ContextCache()
    build_context(session=session, user_id=demo_user, cache=cache)
    append_event(session=session, event_type="user_message", data={"message": "More"})
    with CaptureQueriesContext(connection) as queries:
        context = build_context(session=session, user_id=demo_user, cache=cache)
    assert len(queries) == 1
    assert context.event_count == 2 and "Home" in context.user_data_xml


def test_each_build_shows_the_users_data_as_it_is_now(demo_user: uuid.UUID) -> None:
    """User data is read on every build; an unchanged read reuses what the last build made of it, and any change
    (a location's equipment, a setting) shows in the next build exactly as a fresh read shows it."""
    from datasources_app.models import Location
    from datasources_app.services import set_location_equipment, upsert_settings

    session = create_session(user_id=demo_user)
    append_event(session=session, event_type="user_message", data={"message": "Hi"})
    cache = ContextCache()
    first = build_context(session=session, user_id=demo_user, cache=cache)
    sources = cache.sources
    again = build_context(session=session, user_id=demo_user, cache=cache)
    assert again.user_data_xml == first.user_data_xml
    assert cache.sources is sources  # the same rows: nothing made again

    home = Location.objects.get(user_id=demo_user, is_current=True)
    set_location_equipment(location=home, equipment_slugs=["kettlebell"])
    equipment_changed = build_context(session=session, user_id=demo_user, cache=cache)
    assert equipment_changed.user_data_xml != first.user_data_xml
    assert equipment_changed.user_data_xml == user_data_xml_of(user_data_sources(user_id=demo_user))
    assert "Kettlebell" in equipment_changed.user_data_xml

    upsert_settings(user_id=demo_user, weight_unit="lb")
    units_changed = build_context(session=session, user_id=demo_user, cache=cache)
    assert units_changed.user_data_xml != equipment_changed.user_data_xml
    assert units_changed.user_data_xml == user_data_xml_of(user_data_sources(user_id=demo_user))
