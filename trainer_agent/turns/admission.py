"""Admission (the web tier): store a turn's first events and its queued row in one transaction, then enqueue it.

The request is validated before it gets here (`trainer_agent.api.chat.TurnRequestSerializer`, shared by
`/agent/chat` and `/agent/stream`). Nothing is written for a refused request.
"""

from __future__ import annotations

import uuid
from typing import Any

from django.db import transaction

from datasources_app.selectors import get_current_workout
from datasources_app.services import save_current_workout
from datasources_app.sources import fetch_and_format
from sessions_app.models import AgentSession, AgentTurn, EventType
from sessions_app.selectors import get_session_for_user
from sessions_app.services import NewEvent, TurnInProgress, create_session, open_turn
from trainer_agent.agents.registry import TRAINER_AGENT_ID, get_agent
from trainer_agent.llm.models import get_model
from trainer_agent.sink import EventSink
from trainer_agent.turns.pickup import release_stranded_turn
from trainer_agent.turns.request import TurnRequest
from trainer_agent.turns.tasks import enqueue_turn


def admit_turn(
    *,
    user_id: uuid.UUID,
    turn: TurnRequest,
    max_iterations: int | None = None,
    current_workout_text: str | None = None,
    previews: bool = False,
) -> AgentTurn:
    """Store the turn's first events and its queued row (one transaction), then enqueue it.

    SessionNotFound for a session that is not the caller's; TurnInProgress while one of its turns is open (unless
    that turn waits for a worker that does not exist: it is ended first, `release_stranded_turn`).
    Under the ImmediateBackend the turn has run when this returns. With `previews` the worker publishes preview
    frames of the trainer's model calls while they stream (`trainer_agent.previews`); only `POST /agent/stream`
    asks for them.
    """
    try:
        return _admit_turn(
            user_id=user_id,
            turn=turn,
            max_iterations=max_iterations,
            current_workout_text=current_workout_text,
            previews=previews,
        )
    except TurnInProgress:
        if turn.session_id is None or not release_stranded_turn(session_id=turn.session_id):
            raise
    return _admit_turn(
        user_id=user_id,
        turn=turn,
        max_iterations=max_iterations,
        current_workout_text=current_workout_text,
        previews=previews,
    )


def _admit_turn(
    *,
    user_id: uuid.UUID,
    turn: TurnRequest,
    max_iterations: int | None = None,
    current_workout_text: str | None = None,
    previews: bool = False,
) -> AgentTurn:
    model_id = turn.model or get_agent(TRAINER_AGENT_ID).resolved_model()  # the trainer definition's model
    get_model(model_id)  # an unknown model id fails before anything is written
    with transaction.atomic():
        if turn.session_id is None:
            session = create_session(user_id=user_id)
        else:
            session = get_session_for_user(user_id=user_id, session_id=turn.session_id)
        events = [NewEvent(EventType.USER_MESSAGE, {"message": turn.message})]
        text = current_workout_text
        if turn.current_workout is not None:
            text = adopt_client_workout(user_id=user_id, session=session, workout=turn.current_workout)
        if text:
            events.append(
                NewEvent(
                    EventType.KNOWLEDGE, {"source": "current_workout_session", "params": {}, "data": text}
                )
            )
        agent_turn, stored = open_turn(
            session=session,
            model=model_id,
            events=events,
            result={"max_iterations": max_iterations} if max_iterations is not None else None,
        )
    EventSink(session=session).observe(stored)
    enqueue_turn(agent_turn, previews=previews)
    return agent_turn


def adopt_client_workout(*, user_id: uuid.UUID, session: AgentSession, workout: dict[str, Any]) -> str:
    """Store the client's current workout as the user's current workout; return its knowledge text."""
    artifact_id = str(workout.get("artifact_id") or "client")
    stored = get_current_workout(user_id=user_id)
    if (
        "log_id" not in workout
        and stored is not None
        and stored.artifact_id == artifact_id
        and isinstance(stored.workout, dict)
        and stored.workout.get("log_id")
    ):
        # The same workout sent back: the sets logged during it still belong to its log (server state).
        workout = {**workout, "log_id": stored.workout["log_id"]}
    save_current_workout(user_id=user_id, workout=workout, artifact_id=artifact_id, session_id=session.pk)
    return fetch_and_format(user_id=user_id, source="current_workout_session").text
