"""The read model of a turn: what it did, read from its events (`turn_result`)."""

from __future__ import annotations

from typing import Any

from sessions_app.models import AgentTurn, EventType, TurnStatus
from sessions_app.selectors import events_after
from trainer_agent.loop import APOLOGY, Action, TurnResult, client_response


def turn_result(turn: AgentTurn) -> TurnResult:
    """What the turn did, read from its events: the actions, the client response, how it ended."""
    turn.refresh_from_db()
    events = events_after(session_id=turn.session_id, after_sequence=turn.start_sequence - 1, limit=100_000)
    calls: dict[str, dict[str, Any]] = {}
    executed: set[str] = set()
    awaiting_first_call = False
    actions: list[Action] = []
    for event in events:
        if turn.end_sequence is not None and event.sequence_number > turn.end_sequence:
            break
        data = event.data
        if event.event_type == EventType.LLM_RESPONSE and data.get("purpose", "trainer") == "trainer":
            awaiting_first_call = True
        elif event.event_type == EventType.TOOL_CALL:
            arguments = data.get("arguments")
            calls[str(data.get("call_id"))] = arguments if isinstance(arguments, dict) else {}
            if awaiting_first_call:  # the one that ran; the others were answered "not executed"
                executed.add(str(data.get("call_id")))
                awaiting_first_call = False
        elif event.event_type == EventType.TOOL_RESULT and str(data.get("call_id")) in executed:
            result = data.get("result")
            actions.append(
                Action(
                    tool=str(data.get("tool_name")),
                    args=dict(calls.get(str(data.get("call_id")), {})),
                    result=result if isinstance(result, dict) else {},
                )
            )
    outcome = turn.result or {}
    result = TurnResult(
        session_id=turn.session_id,
        actions=actions,
        iterations=int(
            outcome.get("iterations")
            or sum(
                1
                for e in events
                if e.event_type == EventType.LLM_REQUEST and e.data.get("purpose", "trainer") == "trainer"
            )
        ),
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
