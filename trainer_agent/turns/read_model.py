"""The read model of a turn: what it did, read from its events (`turn_result`)."""

from __future__ import annotations

from sessions_app.models import AgentTurn, TurnStatus
from sessions_app.selectors import events_after, trainer_requests_between
from sessions_app.transcript import Transcript
from trainer_agent.loop import APOLOGY, Action, TurnResult, client_response
from trainer_agent.tenancy import reads_together


def turn_outcome(turn: AgentTurn) -> TurnResult:
    """How the turn ended, from its row alone (status, iterations, stop reason, error): what the worker reports
    of a turn it ran. No actions and no response: `turn_result` reads those from the events."""
    turn.refresh_from_db()
    if "iterations" in (turn.result or {}):
        return _outcome(turn)
    # A turn ended by a failure (`fail_turn`) stores no count: its model calls, counted.
    counted = trainer_requests_between(
        session_id=turn.session_id, first=turn.start_sequence, last=turn.end_sequence
    )
    return _outcome(turn, counted_iterations=counted)


def _outcome(turn: AgentTurn, *, counted_iterations: int = 0) -> TurnResult:
    outcome = turn.result or {}
    return TurnResult(
        session_id=turn.session_id,
        iterations=int(outcome.get("iterations") or counted_iterations),
        stop_reason=str(outcome.get("stop_reason", "")),
        status=turn.status,
        error_kind=str(outcome.get("error_kind", "")),
        error_message=str(outcome.get("error", "")),
        retry_after=outcome.get("retry_after"),
    )


def turn_result(turn: AgentTurn) -> TurnResult:
    """What the turn did, read from its events: the actions, the client response, how it ended."""
    with reads_together():
        turn.refresh_from_db()
        events = events_after(
            session_id=turn.session_id, after_sequence=turn.start_sequence - 1, limit=100_000
        )
    transcript = Transcript.read(
        e for e in events if turn.end_sequence is None or e.sequence_number <= turn.end_sequence
    )
    actions = [
        Action(tool=ran.result.tool_name, args=dict(ran.call.arguments), result=ran.result.result)
        for ran in transcript.actions()
        if ran.result is not None
    ]
    result = _outcome(turn, counted_iterations=transcript.iterations)
    result.actions = actions
    result.response = client_response(actions)
    if result.status == TurnStatus.ERROR and not result.response["messages"]:
        result.response["messages"] = [APOLOGY]
    return result
