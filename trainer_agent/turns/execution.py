"""Execution (the worker): claim the turn with a lease (the lease keeper renews it while the turn runs), run
the loop from where the store says the turn stands, finish it (`execute_turn`, run by `run_turn_task`).

A model failure or a bug ends the turn in `error`; a lost database connection is ridden out on a new one; a
worker that finds the turn taken over by another stops without writing anything.
"""

from __future__ import annotations

import functools
import logging
import time
import traceback
import uuid
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings

from sessions_app.models import AgentTurn, TurnStatus
from sessions_app.selectors import events_after, turn_owner
from sessions_app.services import claim_turn
from trainer_agent import metrics, tracing
from trainer_agent.agents.callbacks import callback_registry
from trainer_agent.agents.registry import TRAINER_AGENT_ID
from trainer_agent.connection_loss import connection_lost, reconnect
from trainer_agent.llm.types import LLMError
from trainer_agent.logs import log_context
from trainer_agent.loop import TurnError, TurnResult, fail_turn, run_loop
from trainer_agent.sink import EventSink, LeaseLost
from trainer_agent.tenancy import acting_for
from trainer_agent.turns.lease import lease_duration, lease_keeper, worker_name
from trainer_agent.turns.read_model import turn_outcome, turn_result

logger = logging.getLogger(__name__)


def execute_turn(*, turn_id: uuid.UUID, previews: bool = False) -> TurnResult | None:
    """Claim the turn (with a lease), run or continue it from the store, and end it; returns how it ended
    (`read_model.turn_outcome`: status, iterations, stop reason, error; what the turn did is `turn_result`'s).
    None when the turn is not ours to run (finished, gone, or leased by a live worker). With `previews` the trainer's model calls stream
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
                    result = turn_outcome(turn)
                    # The whole result (actions, response: the turn's events read back) only for a hook
                    # that reads it.
                    run.result_from = functools.partial(turn_result, turn)
                    run.error = _turn_failure(result)
            except LeaseLost:
                logger.warning("turn.lease_lost", extra={"turn_id": str(turn.pk)})
                return None
    if result is None:
        result = turn_outcome(turn)
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
