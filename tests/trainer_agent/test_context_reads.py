"""The context builder's event reads (one plain-SQL query per build) with a turn's cache."""

from __future__ import annotations

import uuid

import pytest

from sessions_app.models import AgentSession
from sessions_app.services import append_event, create_session, update_context_start
from trainer_agent.context import EMPTY_CONTEXT_ERROR, ContextBuildError, ContextCache, build_context

pytestmark = pytest.mark.django_db


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
