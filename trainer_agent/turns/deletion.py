"""Deleting a session from the API (`DELETE /agent/sessions/<id>`): the session is sessions_app's
(`sessions_app.services.delete_idle_session`); what the turn edge adds is a turn that waits for a worker that
does not exist (ended first) and its turns' task rows (deleted in the same transaction)."""

from __future__ import annotations

from sessions_app.models import AgentSession
from sessions_app.services import delete_idle_session
from trainer_agent.turns.pickup import release_stranded_turn
from trainer_agent.turns.tasks import delete_task_rows


def delete_session_everywhere(*, session: AgentSession) -> int:
    """Delete the session (its events and turns) and its turns' task rows, in one transaction; TurnInProgress
    while one of its turns is open (`delete_idle_session`), unless that turn waits for a worker that does not
    exist (`release_stranded_turn` ends it first). Its followers are woken: their stream ends with an `error`
    frame saying the session was deleted. Returns the number of events deleted."""
    release_stranded_turn(session_id=session.pk)
    return delete_idle_session(session=session, on_delete=delete_task_rows)
