"""Turns as tasks: the web tier admits a turn, a worker runs it (and another continues it if that one dies).

`admit_turn` (web): validate (`parse_turn_request`, shared by `/agent/chat` and `/agent/stream`), resolve the
session (404 for anyone else's), store the `user_message` (and the client's workout) with a queued
`AgentTurn` in one transaction (409 while another turn of the session is open), then enqueue `run_turn_task`
on Django's task framework (`TASKS`). Nothing is written for a refused request.

`execute_turn` (worker): claim the turn with a lease (a heartbeat renews it while the turn runs), run the loop
from where the store says the turn stands, finish it. `sweep_lapsed_turns` (every worker, periodically)
re-enqueues turns whose worker died: they continue from the event store.

No turn waits for a worker that does not exist: workers beat (`agent_workers`), and a turn that waits to be taken
(queued, or running under a lapsed lease) for `TURN_PICKUP_SECONDS` while no worker is alive is ended in `error`
(`watch_open_turn`, called by whoever waits for it: the turn endpoints, a session stream, a new message or a
delete of its session).
"""

from __future__ import annotations

import logging
import os
import re
import socket
import threading
import time
import traceback
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import DatabaseError, connection, transaction
from django.tasks import task
from django.utils import timezone
from pydantic import ValidationError

from datasources_app.selectors import get_current_workout
from datasources_app.services import save_current_workout
from datasources_app.sources import fetch_and_format
from sessions_app.models import AgentSession, AgentTurn, EventType, TurnStatus
from sessions_app.selectors import (
    events_after,
    get_session_for_user,
    lapsed_turns,
    live_worker_count,
    live_worker_names,
    open_turn_of,
    session_exists,
    turn_owner,
)
from sessions_app.services import (
    NewEvent,
    TurnInProgress,
    claim_turn,
    create_session,
    delete_session,
    end_stranded_turn,
    notify_session_changed,
    open_turn,
    renew_lease,
)
from sessions_app.transcript import Transcript
from tools_app.registry import json_type_name
from tools_app.workout_schema import ClientWorkout
from trainer_agent import metrics, tracing
from trainer_agent.agents.callbacks import callback_registry
from trainer_agent.agents.registry import TRAINER_AGENT_ID, get_agent
from trainer_agent.connection_loss import connection_lost, reconnect
from trainer_agent.connection_pool import give_back_connection
from trainer_agent.frames import turn_frames
from trainer_agent.llm.models import get_model, model_ids
from trainer_agent.llm.types import LLMError
from trainer_agent.logs import log_context
from trainer_agent.loop import APOLOGY, Action, TurnError, TurnResult, client_response, fail_turn, run_loop
from trainer_agent.sink import EventSink, LeaseLost
from trainer_agent.tenancy import acting_for
from trainer_agent.wakeups import wake_workers

logger = logging.getLogger(__name__)

MAX_MESSAGE_CHARS = 8000
# C0 control characters other than tab, newline and carriage return (and DEL) have no place in a message;
# PostgreSQL's jsonb also refuses U+0000.
_CONTROL_CHARS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
ALLOWED_FIELDS = frozenset({"message", "sessionId", "currentWorkout", "model", "preview"})


class TurnRequestError(ValueError):
    """The request body is invalid; `detail` is the 400 message."""

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


@dataclass(frozen=True)
class TurnRequest:
    message: str
    session_id: uuid.UUID | None
    current_workout: dict[str, Any] | None
    model: str | None
    # Whether the client wants preview frames (docs/contracts.md §7.2): only `POST /agent/stream` sends them.
    preview: bool = True


def parse_turn_request(body: Any) -> TurnRequest:
    """Validate a chat/stream body (docs/contracts.md §4.1 (POST /agent/chat)). Raises TurnRequestError naming every problem."""
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

    preview = body.get("preview", True)
    if not isinstance(preview, bool):
        problems.append(f"preview: must be a boolean, got {_json_type(preview)}.")

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
    return TurnRequest(
        message=message, session_id=session_id, current_workout=workout, model=model, preview=preview is True
    )


def _json_type(value: Any) -> str:
    """ "a number", "an array", "null": the JSON type of a wrong-typed field, for the 400 detail."""
    name = json_type_name(value)
    if name == "null":
        return name
    return f"{'an' if name[0] in 'aeiou' else 'a'} {name}"


def lease_duration() -> timedelta:
    return timedelta(seconds=settings.TURN_LEASE_SECONDS)


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


def enqueue_turn(turn: AgentTurn, *, previews: bool = False) -> None:
    """Hand the turn to the task framework (and, on PostgreSQL, wake idle workers at once).

    Called once the turn is stored. Should this fail, the turn is not lost: it stays queued and the workers'
    sweep enqueues it again within two leases (`sweep_lapsed_turns`), so the failure is logged, not raised.
    `previews` travels as the task's argument, not in the store: a turn the sweep hands to another worker
    continues without previews, its stored events exactly the same.
    """
    try:
        if previews:
            run_turn_task.enqueue(str(turn.pk), previews=True)
        else:
            run_turn_task.enqueue(str(turn.pk))
        wake_workers(str(turn.pk))
    except DatabaseError:
        logger.exception("turn.enqueue_failed", extra={"turn_id": str(turn.pk)})


@task()
def run_turn_task(turn_id: str, previews: bool = False) -> dict[str, object] | None:
    """The task a worker runs for a turn: `execute_turn`. Returns the turn's outcome (None if another worker
    has it, or it has ended)."""
    result = execute_turn(turn_id=uuid.UUID(turn_id), previews=previews)
    if result is None:
        return None
    return {"status": result.status, "iterations": result.iterations, "stop_reason": result.stop_reason}


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{threading.get_ident()}:{uuid.uuid4().hex[:8]}"


def execute_turn(*, turn_id: uuid.UUID, previews: bool = False) -> TurnResult | None:
    """Claim the turn (with a lease), run or continue it from the store, and end it. None when the turn is not
    ours to run (finished, gone, or leased by a live worker). With `previews` the trainer's model calls stream
    and publish preview frames (`trainer_agent.previews`).

    A model failure ends the turn in `error` (`TurnResult.status`); so does a turn that cannot continue: after
    `TURN_MAX_ATTEMPTS` workers started it, or a bug. A worker that finds the turn taken over by another
    (LeaseLost) stops without writing anything.
    """
    lease = lease_duration()
    # Finding the turn's user is system work (agent_turns); the claim, which takes the session's lock, and
    # every read and write after it are the user's.
    user_id = turn_owner(turn_id=turn_id)
    if user_id is None:
        return None
    with (
        acting_for(user_id),
        log_context(turn_id=str(turn_id)),
        tracing.turn_span(turn_id=str(turn_id), user_id=str(user_id)) as span,
    ):
        trace_id = tracing.trace_id_of(span)
        turn = claim_turn(turn_id=turn_id, worker=worker_name(), lease=lease, trace_id=trace_id)
        if turn is None:
            tracing.turn_not_claimed(span)
            return None
        with log_context(session_id=str(turn.session_id), **({"trace_id": trace_id} if trace_id else {})):
            metrics.turn_claimed(model=turn.model, attempts=turn.attempts)
            tracing.turn_claimed(
                span, session_id=str(turn.session_id), model=turn.model, attempt=turn.attempts
            )
            result = _execute_claimed_turn(turn, lease, previews=previews)
        if result is None:
            tracing.end_turn_span(span, status="lease_lost")
        else:
            tracing.end_turn_span(
                span,
                status=result.status,
                stop_reason=result.stop_reason,
                iterations=result.iterations,
                error_kind=result.error_kind,
                error=result.error_message,
            )
        return result


def _execute_claimed_turn(turn: AgentTurn, lease: timedelta, *, previews: bool) -> TurnResult | None:
    admitted_at = None
    result: TurnResult | None = None
    if turn.attempts > settings.TURN_MAX_ATTEMPTS:
        fail_turn(
            turn,
            kind="internal",
            message=f"The turn could not be completed after {turn.attempts - 1} attempts.",
            context="recovery",
        )
    else:
        sink = EventSink(session=turn.session, turn=turn, lease=lease)
        with lease_keeper.held(turn, lease):
            try:
                # The agent callbacks hear this run of the trainer: it fails when the turn ends in `error`.
                with callback_registry.running(TRAINER_AGENT_ID, context=_trainer_run_context(turn)) as run:
                    admitted_at = _run_or_fail(turn, sink, previews=previews)
                    run.result = result = turn_result(turn)
                    run.error = _turn_failure(result)
            except LeaseLost:
                logger.warning("turn.lease_lost", extra={"turn_id": str(turn.pk)})
                return None
    if result is None:
        result = turn_result(turn)
    metrics.turn_finished(
        model=turn.model, status=result.status, admitted_at=admitted_at, finished_at=turn.finished_at
    )
    return result


def _trainer_run_context(turn: AgentTurn) -> dict[str, Any]:
    """What the agent callbacks are told about a trainer run besides its outcome."""
    return {
        "turn_id": turn.pk,
        "session_id": turn.session_id,
        "user_id": turn.session.user_id,
        "model": turn.model,
        "attempt": turn.attempts,
    }


def _turn_failure(result: TurnResult) -> TurnError | None:
    if result.status != TurnStatus.ERROR:
        return None
    return TurnError(
        session_id=result.session_id,
        kind=result.error_kind,
        message=result.error_message,
        retry_after=result.retry_after,
    )


# How often a worker reconnects and continues a turn whose database connection was lost, and how long it waits
# before each try (doubling): past these the error is raised and the lease hands the turn on.
TURN_RECONNECTS = 5
TURN_RECONNECT_DELAY_S = 0.2


def _run_or_fail(turn: AgentTurn, sink: EventSink, *, previews: bool) -> datetime | None:
    """The loop; a model failure or a bug ends the turn in `error` (LeaseLost if it is no longer ours).
    Returns when the turn's user message was stored.

    A lost database connection is neither: the worker opens a new one and continues the turn from the store
    (what committed before the loss is there; what did not is done again), still holding its lease. Should
    the database stay away, the error leaves the turn open: its lease lapses and a worker continues it later.
    """
    admitted_at: datetime | None = None
    reconnects = 0
    while True:
        try:
            events = events_after(
                session_id=turn.session_id, after_sequence=turn.start_sequence - 1, limit=100_000
            )
            admitted_at = events[0].timestamp if events else None
            if turn.attempts <= 1:
                sink.admitted_at = admitted_at
            run_loop(turn=turn, sink=sink, events=events, previews=previews)
            return admitted_at
        except LeaseLost:
            raise
        except LLMError as exc:
            fail_turn(
                turn, kind=exc.kind, message=exc.message, context="llm_call", retry_after=exc.retry_after
            )
            return admitted_at
        except Exception as exc:
            if not connection_lost(exc):
                _fail_with_bug(turn, exc)
                return admitted_at
            if reconnects >= TURN_RECONNECTS:
                logger.error("turn.database_lost", extra={"turn_id": str(turn.pk)}, exc_info=True)
                raise
            logger.warning("turn.database_reconnect", extra={"turn_id": str(turn.pk)}, exc_info=True)
            reconnect()
            time.sleep(TURN_RECONNECT_DELAY_S * 2**reconnects)
            reconnects += 1


def _fail_with_bug(turn: AgentTurn, exc: Exception) -> None:
    logger.error("turn.failed", extra={"turn_id": str(turn.pk)}, exc_info=exc)
    fail_turn(
        turn,
        kind="internal",
        message=f"{type(exc).__name__}: {exc}",
        context="agent_loop",
        stack="".join(traceback.format_exception(exc)),
    )


class LeaseKeeper:
    """Renews the leases of the turns this process is running, every third of a lease, from one thread and one
    database connection per process, borrowed for each round when pooled (through model calls and tools; the
    loop's own writes renew them too)."""

    def __init__(self) -> None:
        self.running: dict[uuid.UUID, tuple[AgentTurn, timedelta]] = {}
        self.lock = threading.Lock()
        self.thread: threading.Thread | None = None

    @contextmanager
    def held(self, turn: AgentTurn, lease: timedelta) -> Iterator[None]:
        with self.lock:
            self.running[turn.pk] = (turn, lease)
            if self.thread is None or not self.thread.is_alive():
                self.thread = threading.Thread(target=self._run, name="lease-keeper", daemon=True)
                self.thread.start()
        try:
            yield
        finally:
            with self.lock:
                self.running.pop(turn.pk, None)

    def _run(self) -> None:
        while True:
            time.sleep(settings.TURN_LEASE_SECONDS / 3)
            with self.lock:
                running = list(self.running.values())
            for turn, lease in running:
                try:
                    renew_lease(turn=turn, lease=lease)
                except Exception:
                    logger.warning(
                        "turn.lease_renewal_failed", extra={"turn_id": str(turn.pk)}, exc_info=True
                    )
                    connection.close()  # a connection the database dropped is replaced on the next renewal
            give_back_connection()  # pooled: held only for the round's renewals


lease_keeper = LeaseKeeper()


def turn_result(turn: AgentTurn) -> TurnResult:
    """What the turn did, read from its events: the actions, the client response, how it ended."""
    turn.refresh_from_db()
    events = events_after(session_id=turn.session_id, after_sequence=turn.start_sequence - 1, limit=100_000)
    transcript = Transcript.read(
        e for e in events if turn.end_sequence is None or e.sequence_number <= turn.end_sequence
    )
    actions = [
        Action(tool=ran.result.tool_name, args=dict(ran.call.arguments), result=ran.result.result)
        for ran in transcript.actions()
        if ran.result is not None
    ]
    outcome = turn.result or {}
    result = TurnResult(
        session_id=turn.session_id,
        actions=actions,
        iterations=int(outcome.get("iterations") or transcript.iterations),
        stop_reason=str(outcome.get("stop_reason", "")),
        status=turn.status,
        error_kind=str(outcome.get("error_kind", "")),
        error_message=str(outcome.get("error", "")),
        retry_after=outcome.get("retry_after"),
    )
    result.response = client_response(actions)
    if result.status == TurnStatus.ERROR and not result.response["messages"]:
        result.response["messages"] = [APOLOGY]
    return result


def sweep_lapsed_turns() -> int:
    """Re-enqueue the open turns whose worker died (lease lapsed) or that no worker took within two leases:
    a worker continues each from the store. Returns how many were re-enqueued."""
    now = timezone.now()
    lease = lease_duration()
    found = lapsed_turns(now=now, queued_before=now - 2 * lease)
    enqueued = 0
    for turn_id in found:
        # Compare-and-set on enqueued_at: of the sweeps of every worker process, one enqueues the turn, and a
        # turn gets at most one more task per lease however slow the queue is.
        if AgentTurn.objects.filter(pk=turn_id, finished_at__isnull=True, enqueued_at__lt=now - lease).update(
            enqueued_at=now
        ):
            enqueue_turn(AgentTurn(pk=turn_id))
            enqueued += 1
            logger.info("turn.reenqueued", extra={"turn_id": str(turn_id)})
    return enqueued


# --- a turn no worker takes ------------------------------------------------------------------------------

NO_WORKER_KIND = "no_worker"
NO_WORKER_MESSAGE = "No worker is running to take the turn."


# A worker beats every third of a lease; it counts as alive until it has missed about nine beats, so a worker
# starved of CPU by a burst of turns is not taken for dead (its task rows failed, /healthz saying not ready).
WORKER_ALIVE_LEASES = 3


def workers_seen_after(now: datetime) -> datetime:
    """A worker whose last heartbeat is after this is alive."""
    return now - WORKER_ALIVE_LEASES * lease_duration()


def live_workers() -> int:
    """Worker processes alive now (`workers_seen_after`)."""
    return live_worker_count(seen_after=workers_seen_after(timezone.now()))


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


def delete_session_everywhere(*, session: AgentSession) -> int:
    """Delete the session (its events and turns) and its turns' task rows, in one transaction; TurnInProgress
    while one of its turns is open (checked under the session's lock, which admitting a turn also takes), unless
    that turn waits for a worker that does not exist (`release_stranded_turn` ends it first). Its followers are
    woken: their stream ends with an `error` frame saying the session was deleted."""
    release_stranded_turn(session_id=session.pk)
    with transaction.atomic():
        AgentSession.objects.select_for_update().filter(pk=session.pk).exists()
        if session.turns.filter(finished_at__isnull=True).exists():
            raise TurnInProgress(f"a turn is running in session {session.pk}")
        turn_ids = [str(pk) for pk in session.turns.values_list("pk", flat=True)]
        _delete_task_rows(turn_ids)
        deleted = delete_session(session=session)
        notify_session_changed(session_id=session.pk)
        return deleted


class WorkerDied(Exception):
    """The exception a task row of a killed worker is marked failed with (`fail_orphaned_task_rows`)."""


def worker_process_of(worker_id: str) -> str:
    """The worker process (its `agent_workers` name) of one of its loops' task-runner ids (`<name>-<index>`)."""
    return worker_id.rsplit("-", 1)[0]


def fail_orphaned_task_rows() -> int:
    """Mark `FAILED` the task rows left `RUNNING` by worker processes that are no longer alive (killed: their
    heartbeat lapsed or is gone), so every task row of a dead worker ends in a terminal state. A turn such a
    row ran is not lost: the sweep hands it to another worker (a task row of its own). Returns how many."""
    if "django_tasks_db" not in settings.INSTALLED_APPS:
        return 0
    from django.tasks import TaskResultStatus as TaskStatus
    from django_tasks_db.models import DBTaskResult

    now = timezone.now()
    alive = set(live_worker_names(seen_after=workers_seen_after(now)))
    running = DBTaskResult.objects.filter(status=TaskStatus.RUNNING, started_at__lt=now - lease_duration())
    orphaned: dict[str, list[Any]] = {}
    for pk, worker_ids in running.values_list("pk", "worker_ids")[:1000]:
        last = str(worker_ids[-1]) if isinstance(worker_ids, list) and worker_ids else ""
        process = worker_process_of(last)
        if process not in alive:
            orphaned.setdefault(process, []).append(pk)
    failed = 0
    for process, pks in orphaned.items():
        failed += DBTaskResult.objects.filter(pk__in=pks, status=TaskStatus.RUNNING).update(
            status=TaskStatus.FAILED,
            finished_at=now,
            return_value=None,
            exception_class_path=f"{WorkerDied.__module__}.{WorkerDied.__qualname__}",
            traceback=f"WorkerDied: the worker process {process or '(unknown)'} stopped while running this task",
        )
    if failed:
        logger.warning("worker.orphaned_tasks_failed", extra={"count": failed})
    return failed


def _delete_task_rows(turn_ids: list[str]) -> None:
    if not turn_ids or "django_tasks_db" not in settings.INSTALLED_APPS:
        return
    from django_tasks_db.models import DBTaskResult

    DBTaskResult.objects.filter(args_kwargs__args__0__in=turn_ids).delete()
