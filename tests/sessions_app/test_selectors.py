"""Event-store reads: ownership, listing, context events, timeline, actions, artifacts, knowledge."""

from __future__ import annotations

import datetime as dt
import uuid

import pytest
from pytest_django import DjangoAssertNumQueries

from sessions_app.models import (
    CONTEXT_EVENT_TYPES,
    AgentSession,
    AgentSessionEvent,
    EventType,
    SessionNotFound,
)
from sessions_app.selectors import (
    context_events,
    existing_knowledge_sources,
    get_artifact,
    get_session_for_user,
    last_sequence,
    list_sessions,
    recent_actions,
    timeline,
)
from sessions_app.services import update_context_start
from tests.sessions_app.factories import AgentSessionEventFactory, AgentSessionFactory, default_event_data

pytestmark = pytest.mark.django_db

# One event of every type, twice over: sequence numbers 0..17 (user_message 0 and 9, tool_call 3 and 12, …).
ALL_TYPES_TWICE = [event_type for _ in range(2) for event_type in EventType.values]


def _session_with_all_types() -> AgentSession:
    session = AgentSessionFactory.create()
    for event_type in ALL_TYPES_TWICE:
        AgentSessionEventFactory.create(session=session, event_type=event_type)
    return session


def test_get_session_for_user_returns_own_session_and_hides_others() -> None:
    """A user gets their own session; someone else's id raises SessionNotFound."""
    session = AgentSessionFactory.create()
    assert get_session_for_user(user_id=session.user_id, session_id=session.id) == session
    with pytest.raises(SessionNotFound):
        get_session_for_user(user_id=uuid.uuid4(), session_id=session.id)


def test_list_sessions_returns_the_users_newest_sessions_up_to_the_limit() -> None:
    """list_sessions is newest first, capped at `limit`, and never shows other users' sessions."""
    user_id = uuid.uuid4()
    sessions = AgentSessionFactory.create_batch(4, user_id=user_id)
    for minutes_ago, session in enumerate(sessions):
        AgentSession.objects.filter(pk=session.pk).update(
            created_at=dt.datetime(2026, 1, 1, tzinfo=dt.UTC) - dt.timedelta(minutes=minutes_ago)
        )
    AgentSessionFactory.create()

    assert list_sessions(user_id=user_id, limit=3) == sessions[:3]
    assert list_sessions(user_id=user_id) == sessions


def test_context_events_returns_context_types_from_the_start_sequence_in_one_query(
    django_assert_num_queries: DjangoAssertNumQueries,
) -> None:
    """Only context types at or after context_start_sequence, in order, loaded in exactly one query."""
    session = _session_with_all_types()
    update_context_start(session=session, sequence=5)
    expected = list(
        AgentSessionEvent.objects.filter(
            session=session, event_type__in=CONTEXT_EVENT_TYPES, sequence_number__gte=5
        ).values_list("sequence_number", "event_type", "data")
    )

    with django_assert_num_queries(1):
        events = context_events(session=session)
        # The fields the context builder reads are loaded, not deferred (no query per event).
        loaded = [(event.sequence_number, event.event_type, event.data) for event in events]
        assert all(event.timestamp is not None for event in events)

    assert loaded == sorted(expected)
    assert {event_type for _, event_type, _ in loaded} == set(CONTEXT_EVENT_TYPES)
    assert [number for number, _, _ in loaded] == [5, 7, 8, 9, 12, 13, 14, 16, 17]


def test_context_events_follows_a_checkpoint_written_through_another_instance() -> None:
    """The context start is read from the database, so a stale session instance still honours a checkpoint."""
    session = _session_with_all_types()
    stale_copy = AgentSession.objects.get(pk=session.pk)
    update_context_start(session=session, sequence=17)
    assert stale_copy.context_start_sequence == 0
    assert [event.sequence_number for event in context_events(session=stale_copy)] == [17]


def test_timeline_returns_all_types_from_a_sequence_with_a_limit() -> None:
    """timeline lists every event type in sequence order from `from_sequence`, at most `limit` events."""
    session = _session_with_all_types()
    AgentSessionEventFactory.create(session=AgentSessionFactory.create())  # another session's event
    assert [event.sequence_number for event in timeline(session=session)] == list(range(18))
    assert [event.sequence_number for event in timeline(session=session, from_sequence=7, limit=3)] == [
        7,
        8,
        9,
    ]
    assert [event.event_type for event in timeline(session=session, limit=9)] == EventType.values


def test_recent_actions_returns_the_latest_tool_events_oldest_first() -> None:
    """recent_actions keeps only tool_call/tool_result events: the latest `limit`, in chronological order."""
    session = _session_with_all_types()
    actions = recent_actions(session=session, limit=3)
    assert [(event.sequence_number, event.event_type) for event in actions] == [
        (4, EventType.TOOL_RESULT),
        (12, EventType.TOOL_CALL),
        (13, EventType.TOOL_RESULT),
    ]
    assert len(recent_actions(session=session)) == 4


def test_get_artifact_finds_the_latest_artifact_with_that_id_in_the_session() -> None:
    """get_artifact returns the data of the session's newest artifact event with the id, else None."""
    session = AgentSessionFactory.create()
    first = {**default_event_data(EventType.ARTIFACT), "artifact_id": "w1", "title": "First"}
    revised = {**first, "title": "Revised"}
    AgentSessionEventFactory.create(session=session, event_type=EventType.ARTIFACT, data=first)
    AgentSessionEventFactory.create(
        session=session, event_type=EventType.TOOL_RESULT, data={"artifact_id": "w2"}
    )
    AgentSessionEventFactory.create(session=session, event_type=EventType.ARTIFACT, data=revised)
    other_session = AgentSessionFactory.create()
    AgentSessionEventFactory.create(
        session=other_session, event_type=EventType.ARTIFACT, data={**first, "artifact_id": "w3"}
    )

    assert get_artifact(session=session, artifact_id="w1") == revised
    assert get_artifact(session=session, artifact_id="w2") is None  # not an artifact event
    assert get_artifact(session=session, artifact_id="w3") is None  # another session's artifact
    assert get_artifact(session=session, artifact_id="missing") is None


def test_existing_knowledge_sources_lists_source_and_params_since_the_checkpoint() -> None:
    """Knowledge before context_start_sequence is forgotten; missing params read as {}; each says when it was
    loaded."""
    session = AgentSessionFactory.create()
    AgentSessionEventFactory.create(
        session=session,
        event_type=EventType.KNOWLEDGE,
        data={"source": "workout_history", "params": {"days_back": 14}, "data": "old"},
    )
    checkpoint = AgentSessionEventFactory.create(session=session, event_type=EventType.CHECKPOINT)
    update_context_start(session=session, sequence=checkpoint.sequence_number)
    AgentSessionEventFactory.create(
        session=session, event_type=EventType.KNOWLEDGE, data={"source": "user_profile"}
    )
    AgentSessionEventFactory.create(session=session, event_type=EventType.USER_MESSAGE)
    latest = AgentSessionEventFactory.create(
        session=session,
        event_type=EventType.KNOWLEDGE,
        data={"source": "workout_history", "params": {"days_back": 30}, "data": "x" * 1000},
    )

    loaded = existing_knowledge_sources(session=session)
    assert [{"source": item["source"], "params": item["params"]} for item in loaded] == [
        {"source": "user_profile", "params": {}},
        {"source": "workout_history", "params": {"days_back": 30}},
    ]
    assert (
        loaded[1]["loaded_at"] == latest.timestamp
    )  # when it was loaded: what the user has been shown since


def test_last_sequence_is_minus_one_for_an_empty_session_then_the_highest_number() -> None:
    """last_sequence is -1 before the first event and the newest event's number after."""
    session = AgentSessionFactory.create()
    assert last_sequence(session=session) == -1
    AgentSessionEventFactory.create_batch(3, session=session)
    assert last_sequence(session=session) == 2
