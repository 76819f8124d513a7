"""Retention tiers and the checkpoint event itself."""

from __future__ import annotations

import uuid

import pytest

from sessions_app.models import AgentSession, AgentSessionEvent, EventType
from sessions_app.services import append_event, create_session
from trainer_agent.checkpoint import (
    RETENTION_RULES,
    Carried,
    decay_limit,
    maybe_checkpoint,
    retained_sources,
    write_checkpoint,
)
from trainer_agent.context import build_context
from trainer_agent.sink import EventSink


def _sources(carried: list[Carried]) -> dict[str, str]:
    return {item.source: item.tier for item in carried}


def test_t1_sources_are_always_carried() -> None:
    """Goals and preferences (T1) are in every checkpoint, however old the session."""
    for number in (1, 2, 10):
        carried = _sources(
            retained_sources(checkpoint_number=number, turns_since_use={}, workout_active=False)
        )
        assert {"category_goals", "muscle_goals", "active_preferences"} <= carried.keys()


def test_t2_sources_drop_after_keep_turns_unless_used_again() -> None:
    """The schedule (T2) is carried while used within 5 turns, dropped after, back once re-requested."""
    recent = _sources(
        retained_sources(checkpoint_number=1, turns_since_use={"scheduled_workouts": 5}, workout_active=False)
    )
    stale = _sources(
        retained_sources(checkpoint_number=1, turns_since_use={"scheduled_workouts": 6}, workout_active=False)
    )
    never = _sources(retained_sources(checkpoint_number=1, turns_since_use={}, workout_active=False))
    assert recent["scheduled_workouts"] == "T2"
    assert "scheduled_workouts" not in stale and "scheduled_workouts" not in never


def test_t3_current_workout_is_carried_only_while_active() -> None:
    """The current workout (T3) is carried while one exists."""
    active = _sources(retained_sources(checkpoint_number=1, turns_since_use={}, workout_active=True))
    idle = _sources(retained_sources(checkpoint_number=1, turns_since_use={}, workout_active=False))
    assert active["current_workout_session"] == "T3"
    assert "current_workout_session" not in idle


def test_t4_workout_history_decays_15_7_5_3() -> None:
    """Workout history shows 15, 7, 5, then 3 items at successive checkpoints."""
    rule = next(rule for rule in RETENTION_RULES if rule.source == "workout_history")
    assert [decay_limit(rule, number) for number in (1, 2, 3, 4, 9)] == [15, 7, 5, 3, 3]
    carried = retained_sources(checkpoint_number=2, turns_since_use={}, workout_active=False)
    history = next(item for item in carried if item.source == "workout_history")
    assert history.params == {"limit": 7}


@pytest.mark.django_db
def test_checkpoint_summarises_and_moves_the_context_start(demo_user: uuid.UUID) -> None:
    """A checkpoint records turns, requests, tools and the open question, and starts the context at itself."""
    session = create_session(user_id=demo_user)
    append_event(session=session, event_type=EventType.USER_MESSAGE, data={"message": "Plan my week"})
    append_event(
        session=session,
        event_type=EventType.TOOL_CALL,
        data={"tool_name": "message_ask_user", "arguments": {"question": "How many days?"}, "call_id": "c1"},
    )
    append_event(
        session=session,
        event_type=EventType.TOOL_RESULT,
        data={"tool_name": "message_ask_user", "result": {"formatted": "asked"}, "call_id": "c1"},
    )
    event = write_checkpoint(session=session, user_id=demo_user, sink=EventSink(session=session))
    session.refresh_from_db()
    assert session.context_start_sequence == event.sequence_number == 3
    assert event.data["turns"] == 1 and event.data["open_question"] == "How many days?"
    assert event.data["tools_used"] == {"message_ask_user": 1}
    assert AgentSessionEvent.objects.filter(session=session).count() == 4  # nothing deleted
    context = build_context(session=session, user_id=demo_user)
    text = context.messages[0]["content"][0]["text"]
    assert text.startswith("<checkpoint>") and "How many days?" in text and "<preferences>" in text


@pytest.mark.django_db
def test_no_checkpoint_below_the_threshold(demo_user: uuid.UUID) -> None:
    """A short session below the threshold gets no checkpoint and keeps its context start."""
    session = create_session(user_id=demo_user)
    append_event(session=session, event_type=EventType.USER_MESSAGE, data={"message": "hi"})
    sink = EventSink(session=session)
    assert (
        maybe_checkpoint(session=session, user_id=demo_user, model_id="claude-haiku-4-5", sink=sink) is None
    )
    assert AgentSession.objects.get(pk=session.pk).context_start_sequence == 0


@pytest.mark.django_db
def test_threshold_zero_forces_a_checkpoint(demo_user: uuid.UUID) -> None:
    """With threshold 0 any non-empty context is checkpointed."""
    session = create_session(user_id=demo_user)
    append_event(session=session, event_type=EventType.USER_MESSAGE, data={"message": "hi"})
    sink = EventSink(session=session)
    event = maybe_checkpoint(
        session=session, user_id=demo_user, model_id="claude-haiku-4-5", sink=sink, threshold=0.0
    )
    assert event is not None and event.event_type == EventType.CHECKPOINT


@pytest.mark.django_db
def test_a_turn_with_nothing_before_it_in_the_context_is_never_checkpointed(demo_user: uuid.UUID) -> None:
    """A session's first turn (its message is the context's start) has nothing to summarise: even at threshold 0
    no empty checkpoint is written; the next turn, with the first one before it, is checkpointed."""
    session = create_session(user_id=demo_user)
    sink = EventSink(session=session)

    def turn(message: str) -> AgentSessionEvent | None:
        """A turn's message, then the check made before its first model call, at threshold 0."""
        start = append_event(session=session, event_type=EventType.USER_MESSAGE, data={"message": message})
        return maybe_checkpoint(
            session=session,
            user_id=demo_user,
            model_id="claude-haiku-4-5",
            sink=sink,
            threshold=0.0,
            keep_from=start.sequence_number,
        )

    assert turn("hi") is None
    event = turn("and now?")
    assert event is not None and event.event_type == EventType.CHECKPOINT
    assert (
        not AgentSessionEvent.objects.filter(session=session, event_type=EventType.CHECKPOINT)
        .exclude(pk=event.pk)
        .exists()
    )
