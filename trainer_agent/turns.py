"""Starting a turn from an API request: validate the body, resolve the session, hold the per-session turn lock.

Shared by `/agent/chat` and `/agent/stream`. Nothing is written for a request that fails validation, names a
session that is not the caller's, or finds a turn already running (409).
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db import transaction
from django.utils import timezone
from pydantic import ValidationError

from config.db import write_together
from datasources_app.services import save_current_workout
from datasources_app.sources import fetch_and_format
from sessions_app.models import AgentSession, SessionNotFound
from sessions_app.selectors import get_session_for_user
from sessions_app.services import planned_session
from tools_app.registry import json_type_name
from tools_app.workout_schema import ClientWorkout
from trainer_agent.eventstream import first_frame_statements, publish_frame
from trainer_agent.llm.models import model_ids
from trainer_agent.loop import TurnResult, run_turn
from trainer_agent.sink import Listener

MAX_MESSAGE_CHARS = 8000
TURN_LOCK_KEY = "turn_running_since"
# A lock older than this belongs to a worker that died mid-turn; the next request may take it over.
STALE_TURN_AFTER = timedelta(minutes=15)
# C0 control characters other than tab, newline and carriage return (and DEL) have no place in a message;
# PostgreSQL's jsonb also refuses U+0000.
_CONTROL_CHARS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
ALLOWED_FIELDS = frozenset({"message", "sessionId", "currentWorkout", "model"})


class TurnRequestError(ValueError):
    """The request body is invalid; `detail` is the 400 message."""

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


class TurnInProgress(RuntimeError):
    """Another turn is running in this session (409)."""


@dataclass(frozen=True)
class TurnRequest:
    message: str
    session_id: uuid.UUID | None
    current_workout: dict[str, Any] | None
    model: str | None


def parse_turn_request(body: Any) -> TurnRequest:
    """Validate a chat/stream body (seed 000 §10.2). Raises TurnRequestError naming every problem."""
    if not isinstance(body, dict):
        raise TurnRequestError("The request body must be a JSON object.")
    problems: list[str] = []
    unknown = sorted(str(key) for key in body if key not in ALLOWED_FIELDS)
    if unknown:
        problems.append(f"unknown field(s): {', '.join(unknown)[:200]}")

    message = body.get("message")
    if message is None:
        problems.append("message: This field is required.")
    elif not isinstance(message, str):
        problems.append(f"message: must be a string, got {_json_type(message)}.")
    elif not message.strip():
        problems.append("message: must not be empty.")
    elif len(message) > MAX_MESSAGE_CHARS:
        problems.append(f"message: must be at most {MAX_MESSAGE_CHARS} characters (got {len(message)}).")
    elif _CONTROL_CHARS.search(message):
        problems.append("message: must not contain control characters.")

    session_id: uuid.UUID | None = None
    raw_session = body.get("sessionId")
    if raw_session is not None:
        if not isinstance(raw_session, str):
            problems.append(f"sessionId: must be a UUID string, got {_json_type(raw_session)}.")
        else:
            try:
                session_id = uuid.UUID(raw_session)
            except ValueError:
                problems.append("sessionId: must be a UUID.")

    model = body.get("model")
    if model is not None and (not isinstance(model, str) or model not in model_ids()):
        problems.append(f"model: must be one of {', '.join(model_ids())}.")

    workout: dict[str, Any] | None = None
    raw_workout = body.get("currentWorkout")
    if raw_workout is not None:
        if not isinstance(raw_workout, dict):
            problems.append(f"currentWorkout: must be an object, got {_json_type(raw_workout)}.")
        else:
            try:
                workout = ClientWorkout.model_validate(raw_workout).model_dump(mode="json", exclude_none=True)
            except ValidationError as exc:
                details = "; ".join(
                    f"currentWorkout.{'.'.join(str(p) for p in err['loc'])}: {err['msg']}"
                    for err in exc.errors()[:10]
                )
                problems.append(details)

    if problems:
        raise TurnRequestError(" ".join(problems))
    assert isinstance(message, str)
    return TurnRequest(message=message, session_id=session_id, current_workout=workout, model=model)


def _json_type(value: Any) -> str:
    """ "a number", "an array", "null": the JSON type of a wrong-typed field, for the 400 detail."""
    name = json_type_name(value)
    if name == "null":
        return name
    return f"{'an' if name[0] in 'aeiou' else 'a'} {name}"


def admit_turn(
    *, user_id: uuid.UUID, session_id: uuid.UUID | None, first_frame: dict[str, Any] | None = None
) -> tuple[AgentSession, str | None]:
    """The session an admitted request's turn runs in, already claimed for it (release with `release_turn`), and
    the SSE id of `first_frame` once stored on the session's channel (None without a frame, or if it could not
    be stored).

    The caller's given session (SessionNotFound for anyone else's; TurnInProgress while another turn runs in
    it), or a new session created with the claim in place and the first frame, in one transaction (one round
    trip on PostgreSQL).
    """
    if session_id is None:
        session, insert = planned_session(
            user_id=user_id, metadata={TURN_LOCK_KEY: timezone.now().isoformat()}
        )
        frame_rows, frame_id = (
            first_frame_statements(session_id=session.pk, frame=first_frame) if first_frame else ([], None)
        )
        write_together([insert, *frame_rows])
        return session, frame_id
    session = get_session_for_user(user_id=user_id, session_id=session_id)
    claim_turn(session)
    return session, (publish_frame(session_id=session.pk, frame=first_frame) if first_frame else None)


def check_session(*, user_id: uuid.UUID, session_id: uuid.UUID | None) -> None:
    """Raise SessionNotFound / TurnInProgress without writing anything (used before a stream starts)."""
    if session_id is None:
        return
    session = get_session_for_user(user_id=user_id, session_id=session_id)
    if _lock_held(session.metadata):
        raise TurnInProgress(f"a turn is already running in session {session.pk}")


def _lock_held(metadata: Any) -> bool:
    since = metadata.get(TURN_LOCK_KEY) if isinstance(metadata, dict) else None
    if not since:
        return False
    try:
        started = datetime.fromisoformat(since)
    except (TypeError, ValueError):
        return False
    return timezone.now() - started < STALE_TURN_AFTER


def claim_turn(session: AgentSession) -> None:
    """Mark a turn as running in the session (row-locked check-and-set); TurnInProgress if one already is."""
    with transaction.atomic():
        metadata = (
            AgentSession.objects.select_for_update()
            .filter(pk=session.pk)
            .values_list("metadata", flat=True)
            .first()
        )
        if metadata is None:
            raise SessionNotFound(f"session {session.pk} not found")
        if _lock_held(metadata):
            raise TurnInProgress(f"a turn is already running in session {session.pk}")
        updated = {**metadata, TURN_LOCK_KEY: timezone.now().isoformat()}
        AgentSession.objects.filter(pk=session.pk).update(metadata=updated)
        session.metadata = updated


def release_turn(session: AgentSession) -> None:
    with transaction.atomic():
        metadata = (
            AgentSession.objects.select_for_update()
            .filter(pk=session.pk)
            .values_list("metadata", flat=True)
            .first()
        )
        if isinstance(metadata, dict) and TURN_LOCK_KEY in metadata:
            remaining = {k: v for k, v in metadata.items() if k != TURN_LOCK_KEY}
            AgentSession.objects.filter(pk=session.pk).update(metadata=remaining)
            session.metadata = remaining


def adopt_client_workout(*, user_id: uuid.UUID, session: AgentSession, workout: dict[str, Any]) -> str:
    """Store the client's current workout as the user's current workout; return its knowledge text."""
    artifact_id = str(workout.get("artifact_id") or "client")
    save_current_workout(user_id=user_id, workout=workout, artifact_id=artifact_id, session_id=session.pk)
    return fetch_and_format(user_id=user_id, source="current_workout_session").text


def run_requested_turn(
    *, user_id: uuid.UUID, session: AgentSession, turn: TurnRequest, listener: Listener | None = None
) -> TurnResult:
    """Run an admitted request's turn: adopt the client's current workout (if sent), then the loop.

    The caller holds the turn lock. Raises TurnError like `run_turn`.
    """
    workout_text = (
        adopt_client_workout(user_id=user_id, session=session, workout=turn.current_workout)
        if turn.current_workout is not None
        else None
    )
    return run_turn(
        user_id=user_id,
        message=turn.message,
        session=session,
        model=turn.model,
        listener=listener,
        current_workout_text=workout_text,
    )
