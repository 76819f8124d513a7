"""The one transcript reader (sessions_app.transcript): iterations, pending request and calls, the call that ran,
actions, artifacts and delivery, read from events in sequence order."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sessions_app.models import EventType
from sessions_app.transcript import Step, Transcript


@dataclass
class Event:
    event_type: str
    data: Any
    sequence_number: int = 0


def request(purpose: str | None = "trainer") -> Event:
    return Event(EventType.LLM_REQUEST, {"model": "m"} | ({"purpose": purpose} if purpose else {}))


def response(purpose: str | None = None) -> Event:
    return Event(EventType.LLM_RESPONSE, {"model": "m"} | ({"purpose": purpose} if purpose else {}))


def call(call_id: str, tool: str = "idle", **arguments: Any) -> Event:
    return Event(EventType.TOOL_CALL, {"tool_name": tool, "arguments": arguments, "call_id": call_id})


def result(call_id: str, tool: str = "idle", *, success: bool = True) -> Event:
    output = {"success": success, "data": {}, "formatted": "ok"}
    return Event(
        EventType.TOOL_RESULT, {"tool_name": tool, "result": output, "success": success, "call_id": call_id}
    )


def numbered(events: list[Event]) -> list[Event]:
    for number, event in enumerate(events):
        event.sequence_number = number
    return events


def test_the_first_call_after_a_trainer_answer_is_the_one_that_ran() -> None:
    """Of an answer's calls only the first ran; the others' results are no action."""
    transcript = Transcript()
    steps = [
        transcript.add(e)
        for e in [
            request(),
            response(),
            call("a", "fetch_data"),
            call("b"),
            result("a", "fetch_data"),
            result("b"),
        ]
    ]
    assert steps[2:] == [Step.CALL_RAN, Step.CALL_NOT_RUN, Step.RESULT_OF_RAN, Step.OTHER_RESULT]
    assert [(ran.call.call_id, ran.result and ran.result.tool_name) for ran in transcript.actions()] == [
        ("a", "fetch_data")
    ]
    assert transcript.iterations == 1 and not transcript.pending_request and not transcript.pending_calls


def test_a_sub_agent_call_in_between_changes_nothing() -> None:
    """A sub-agent's request and answer (a tool asking a model) neither count nor pick the call that ran."""
    transcript = Transcript.read(
        [
            request(),
            response(),
            call("a", "plan_week"),
            request("subagent:microcycle"),
            response("subagent:microcycle"),
            result("a", "plan_week"),
            request("initializer"),
        ]
    )
    assert transcript.iterations == 1
    assert [ran.call.call_id for ran in transcript.actions()] == ["a"]


def test_where_a_crashed_turn_stands() -> None:
    """A request without its answer is pending; an answer whose calls have no result leaves them pending."""
    assert Transcript.read([Event(EventType.USER_MESSAGE, {"message": "hi"}), request()]).pending_request
    stalled = Transcript.read(numbered([request(), response(), call("a"), call("b")]))
    assert not stalled.pending_request
    assert [c.call_id for c in stalled.pending_calls] == ["a", "b"]
    assert stalled.last_request is not None and stalled.last_request.data["purpose"] == "trainer"
    assert not Transcript.read([]).initialized


def test_delivery_artifacts_and_the_open_question() -> None:
    """A successful message to the user delivers; a failed one does not; a question stays open until answered."""
    failed = Transcript.read(
        [
            request(),
            response(),
            call("a", "message_notify_user"),
            result("a", "message_notify_user", success=False),
        ]
    )
    assert not failed.delivered
    asked = Transcript.read(
        [
            Event(EventType.ARTIFACT, {"artifact_id": "art_1", "title": "Legs"}),
            request(),
            response(),
            call("q", "message_ask_user", question="Gym or home?"),
            result("q", "message_ask_user"),
        ]
    )
    assert asked.delivered and asked.open_question == "Gym or home?"
    assert [a["artifact_id"] for a in asked.artifacts] == ["art_1"]
    asked.add(Event(EventType.USER_MESSAGE, {"message": "Gym"}))
    assert asked.open_question is None and asked.turns == 1


def test_rows_without_the_contract_shape_read_as_empty_values() -> None:
    """Partial or odd data (older rows) never fails the reader."""
    transcript = Transcript.read(
        [
            Event(EventType.LLM_RESPONSE, None),
            Event(EventType.TOOL_CALL, {"arguments": "x"}),
            Event(EventType.TOOL_RESULT, {"result": "ok"}),
        ]
    )
    assert transcript.calls[0].arguments == {} and transcript.calls[0].tool_name == ""
    ran = transcript.actions()[0].result
    assert ran is not None and ran.result == {}


def test_without_history_only_the_latest_answer_is_kept() -> None:
    """A stream's projector keeps the state of the latest answer, not every call of a long session."""
    transcript = Transcript(history=False)
    for _ in range(3):
        transcript.extend([request(), response(), call("a"), result("a")])
    assert transcript.iterations == 3 and transcript.calls == [] and len(transcript.exchanges) == 1
