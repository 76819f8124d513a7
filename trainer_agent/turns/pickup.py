"""A turn no worker takes: a turn that waits to be taken (queued, or running under a lapsed lease) for
`TURN_PICKUP_SECONDS` while no worker is alive is ended in `error` (`no_worker`) by whoever waits for it
(`watch_open_turn`: the turn endpoints, a session stream, a new message or a delete of its session)."""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.utils import timezone

from sessions_app.models import AgentTurn, EventType, TurnStatus
from sessions_app.selectors import events_after, open_turn_of, session_exists
from sessions_app.services import NewEvent, end_stranded_turn
from trainer_agent.sink import EventSink
from trainer_agent.turns.lease import live_workers

logger = logging.getLogger(__name__)

NO_WORKER_KIND = "no_worker"
NO_WORKER_MESSAGE = "No worker is running to take the turn."


@dataclass(frozen=True)
class OpenTurnState:
    """What a follower of a session needs to know about its open turn (`watch_open_turn`)."""

    # Running under a lapsed lease (its worker died): when that lease lapsed, while it waits for another worker.
    recovering_since: Any = None
    # Seconds until the turn's state may change by time alone (a lease lapses, the pickup bound passes): when
    # to look again if nothing is written meanwhile. None: no open turn.
    recheck_in: float | None = None
    # The session is gone (deleted).
    deleted: bool = False


def watch_open_turn(*, session_id: uuid.UUID) -> OpenTurnState:
    """The session's open turn as a follower sees it; a turn that has waited `TURN_PICKUP_SECONDS` for a worker
    (queued, or running under a lapsed lease) while none is alive is ended here in `error` (`end_without_worker`),
    and its `error` event wakes the followers. The caller acts for the session's user."""
    turn = open_turn_of(session_id=session_id)
    if turn is None:
        return OpenTurnState(deleted=not session_exists(session_id=session_id))
    now = timezone.now()
    pickup = timedelta(seconds=settings.TURN_PICKUP_SECONDS)
    if (
        turn.status == TurnStatus.RUNNING
        and turn.lease_expires_at is not None
        and turn.lease_expires_at >= now
    ):
        # Running under its worker's lease; look again when that would lapse (a renewal moves it on).
        return OpenTurnState(recheck_in=(turn.lease_expires_at - now).total_seconds() + 0.1)
    recovering = turn.status == TurnStatus.RUNNING
    waiting_since = turn.lease_expires_at if recovering and turn.lease_expires_at else turn.enqueued_at
    deadline = waiting_since + pickup
    since = waiting_since if recovering else None
    if now < deadline:
        return OpenTurnState(recovering_since=since, recheck_in=(deadline - now).total_seconds() + 0.05)
    if end_without_worker(turn):
        return OpenTurnState()
    # A worker is alive: it (or its sweep) will take the turn; look again in a while.
    return OpenTurnState(recovering_since=since, recheck_in=settings.TURN_PICKUP_SECONDS)


def end_without_worker(turn: AgentTurn) -> bool:
    """End `turn` in `error` (kind `no_worker`) if no worker is alive and it has waited `TURN_PICKUP_SECONDS`
    for one; True if it was ended here. Its events stay; no worker runs it afterwards (`claim_turn` takes only
    an open turn)."""
    if settings.TASKS_BACKEND == "immediate" or live_workers():
        return False  # immediate: the web process runs its turns itself
    ended = end_stranded_turn(
        turn_id=turn.pk,
        waiting_before=timezone.now() - timedelta(seconds=settings.TURN_PICKUP_SECONDS),
        events=[
            NewEvent(
                EventType.ERROR,
                {
                    "message": NO_WORKER_MESSAGE,
                    "kind": NO_WORKER_KIND,
                    "context": "pickup",
                    "stack": None,
                    "fatal": True,
                },
            )
        ],
        result={"error_kind": NO_WORKER_KIND, "error": NO_WORKER_MESSAGE},
    )
    if ended is None:
        return False
    logger.warning("turn.no_worker", extra={"turn_id": str(turn.pk)})
    console = EventSink(session=ended.session)
    for event in events_after(
        session_id=ended.session_id, after_sequence=(ended.end_sequence or 1) - 1, limit=1
    ):
        console.log(event)
    return True


def release_stranded_turn(*, session_id: uuid.UUID) -> bool:
    """End the session's open turn if it waits for a worker that does not exist (`watch_open_turn`); True when
    the session has no open turn afterwards."""
    watch_open_turn(session_id=session_id)
    return open_turn_of(session_id=session_id) is None
