"""Running a turn here, to its end: admission then the worker's execution in this thread (the shell commands,
benchmarks, evals and tests)."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from typing import Any

from sessions_app.models import AgentSession, TurnStatus
from trainer_agent.frames import turn_frames
from trainer_agent.loop import TurnError, TurnResult
from trainer_agent.tenancy import acting_for
from trainer_agent.turns.admission import admit_turn
from trainer_agent.turns.execution import execute_turn
from trainer_agent.turns.read_model import turn_result
from trainer_agent.turns.request import TurnRequest


def run_turn(
    *,
    user_id: uuid.UUID,
    message: str,
    session: AgentSession | None = None,
    session_id: uuid.UUID | None = None,
    model: str | None = None,
    current_workout: dict[str, object] | None = None,
    current_workout_text: str | None = None,
    max_iterations: int | None = None,
    listener: Callable[[dict[str, Any]], None] | None = None,
) -> TurnResult:
    """Admit a turn and run it here, to its end (the shell commands, benchmarks and tests). Raises TurnError
    when it ends in `error` because of the model (after recording it), like `/agent/chat`'s 502. `listener`
    receives the turn's stream frames (as `/agent/stream` would send them) once it has ended."""
    with acting_for(user_id):
        request = TurnRequest(
            message=message,
            session_id=session.pk if session is not None else session_id,
            current_workout=current_workout,
            model=model,
        )
        turn = admit_turn(
            user_id=user_id,
            turn=request,
            max_iterations=max_iterations,
            current_workout_text=current_workout_text,
        )
        turn.refresh_from_db()
        if turn.finished_at is None and execute_turn(turn_id=turn.pk) is None:
            # A worker took it first (the task backend's queue): wait for its end.
            while turn.finished_at is None:
                time.sleep(0.1)
                turn.refresh_from_db()
        result = turn_result(turn)
        if listener is not None:
            for frame in turn_frames(turn):
                listener(frame)
        if result.status == TurnStatus.ERROR and result.error_kind not in {"undelivered", ""}:
            raise TurnError(
                session_id=result.session_id,
                kind=result.error_kind,
                message=result.error_message,
                retry_after=result.retry_after,
            )
        return result
