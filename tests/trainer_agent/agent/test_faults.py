"""Faults (docs/contracts.md §5.3 (stop conditions), §5.4 (failures)): model errors, bad tool calls, no tool call, several calls, the iteration cap."""

from __future__ import annotations

import uuid
from typing import Any

import httpx2
import pytest
from pydantic import BaseModel

from sessions_app.models import AgentSession, SessionStatus
from tests.support.llm_fakes import anthropic_error
from tests.trainer_agent.agent.scripting import (
    Frames,
    call,
    calls,
    chest_workout,
    deliver,
    event_types,
    events_of,
    idle,
    notify,
    scripted_claude,
    serving,
    text_only,
    trainer_event_types,
    trainer_events_of,
)
from tools_app.registry import registry_override
from tools_app.types import Tool, ToolContext, ToolOutcome
from trainer_agent.frames import failure_detail
from trainer_agent.llm.providers import override_provider
from trainer_agent.llm.scripted import ScriptedProvider
from trainer_agent.llm.types import LLMRequest, LLMResponse
from trainer_agent.loop import APOLOGY, TurnError
from trainer_agent.turns import run_turn

pytestmark = pytest.mark.django_db
MODEL = "claude-haiku-4-5"
FAST_RETRY = {"retry-after-ms": "1"}  # the SDK honours the server's wait: no real sleeping in tests


def session_of(result_or_error: Any) -> AgentSession:
    return AgentSession.objects.get(pk=result_or_error.session_id)


def test_rate_limit_then_success_is_recovered_within_the_turn(demo_user: uuid.UUID) -> None:
    """A 429 answered by the SDK's retry is invisible: one turn, completed, no error event."""
    status, body = anthropic_error(429, "rate_limit_error", "Slow down")
    transport = scripted_claude((status, body, FAST_RETRY), notify("Hi!"), idle())
    with serving(MODEL, transport, max_retries=2):
        result = run_turn(user_id=demo_user, message="Hello", model=MODEL)
    assert len(transport.requests) == 3
    assert [a.tool for a in result.actions] == ["message_notify_user", "idle"]
    assert session_of(result).status == SessionStatus.COMPLETED
    assert "error" not in event_types(result.session_id)
    assert trainer_event_types(result.session_id).count("llm_response") == 2


def test_overloaded_on_every_try_fails_the_turn_and_keeps_every_event(demo_user: uuid.UUID) -> None:
    """529 on every retry: error event, session `error`, earlier events kept, TurnError(kind=overloaded)."""
    status, body = anthropic_error(529, "overloaded_error", "Overloaded")
    transport = scripted_claude(notify("Working on it."))
    transport.default = (status, body, FAST_RETRY)
    frames = Frames()
    with serving(MODEL, transport, max_retries=2), pytest.raises(TurnError) as caught:
        run_turn(user_id=demo_user, message="Give me a workout", model=MODEL, listener=frames)

    error = caught.value
    assert error.kind == "overloaded" and "Overloaded" in error.message
    assert len(transport.requests) == 1 + 3  # one answer, then the first try and two retries
    types = trainer_event_types(error.session_id)
    assert types[0] == "user_message"
    assert types[-4:] == ["tool_call", "tool_result", "llm_request", "error"]
    assert types.count("knowledge") == 4 and types.count("llm_response") == 1
    (failure,) = events_of(error.session_id, "error")
    assert (failure["kind"], failure["context"]) == ("overloaded", "llm_call")
    session = AgentSession.objects.get(pk=error.session_id)
    assert session.status == SessionStatus.ERROR
    assert session.total_tokens > 0  # the answered call is still accounted for
    # The client is told in our words; the provider's own text stays in the error event.
    assert frames[-1] == {"type": "error", "message": failure_detail("overloaded", MODEL)}
    assert "Overloaded" in failure["message"]


def test_timeout_becomes_a_timeout_turn_error(demo_user: uuid.UUID) -> None:
    """The transport timing out surfaces as TurnError(kind=timeout) after an error event."""
    transport = scripted_claude(httpx2.ReadTimeout)
    with serving(MODEL, transport), pytest.raises(TurnError) as caught:
        run_turn(user_id=demo_user, message="Hello", model=MODEL)
    assert caught.value.kind == "timeout"
    assert events_of(caught.value.session_id, "error")[0]["kind"] == "timeout"
    assert AgentSession.objects.get(pk=caught.value.session_id).status == SessionStatus.ERROR


def test_missing_api_key_is_an_auth_turn_error(demo_user: uuid.UUID) -> None:
    """Without ANTHROPIC_API_KEY (and no override) the turn fails as kind=auth, with the user's message kept."""
    with pytest.raises(TurnError) as caught:
        run_turn(user_id=demo_user, message="Hello", model=MODEL)
    assert caught.value.kind == "auth" and "ANTHROPIC_API_KEY" in caught.value.message
    assert event_types(caught.value.session_id)[0] == "user_message"
    assert event_types(caught.value.session_id)[-1] == "error"


def test_invalid_tool_input_is_a_failed_result_the_model_recovers_from(demo_user: uuid.UUID) -> None:
    """Garbage and then an impossible workout are refused with the problems named; the third call succeeds."""
    impossible = chest_workout()
    impossible["exercises"][0].update(exercise_name="Barbell Bench Press", load_each=[60, 60, 60])
    transport = scripted_claude(
        call("generate_workout", {"workout": {"title": 5, "exercises": "lots"}}),
        call("generate_workout", {"workout": impossible}),
        call("generate_workout", {"workout": chest_workout()}),
        deliver(),
        idle(),
    )
    with serving(MODEL, transport):
        result = run_turn(user_id=demo_user, message="Chest workout", model=MODEL)

    assert [a.result["success"] for a in result.actions] == [False, False, True, True, True]
    garbage, impossible_result = (a.result["formatted"] for a in result.actions[:2])
    assert "Invalid arguments for generate_workout" in garbage and "workout.exercises" in garbage
    assert "barbell" in impossible_result and "not available at Home" in impossible_result
    seen = transport.bodies[1]["messages"][-1]["content"][0]
    assert seen["type"] == "tool_result" and seen["is_error"] is True
    assert "workout.exercises" in seen["content"]
    assert session_of(result).status == SessionStatus.COMPLETED
    assert len(events_of(result.session_id, "artifact")) == 1


def test_unknown_tool_is_a_failed_result_and_an_error_event(demo_user: uuid.UUID) -> None:
    """An unknown tool name gets an error result listing the tools; the loop goes on."""
    transport = scripted_claude(
        call("do_a_backflip", {"height": 2}), notify("Sorry, let's stay grounded."), idle()
    )
    with serving(MODEL, transport):
        result = run_turn(user_id=demo_user, message="Hello", model=MODEL)
    unknown = result.actions[0].result
    assert not unknown["success"] and "Unknown tool: do_a_backflip" in unknown["formatted"]
    assert "message_notify_user" in unknown["formatted"]
    (error,) = events_of(result.session_id, "error")
    assert error["message"] == "Unknown tool: do_a_backflip" and error["context"] == "tool_execution"
    assert [a.tool for a in result.actions] == ["do_a_backflip", "message_notify_user", "idle"]
    assert session_of(result).status == SessionStatus.COMPLETED


def test_response_without_tool_call_stops_the_loop(demo_user: uuid.UUID) -> None:
    """Plain text instead of a tool call: error event, loop stops; nothing reached the user, so the session
    ends in `error` and the client gets an apology."""
    transport = scripted_claude(text_only("Sure, here is a workout: squats."))
    with serving(MODEL, transport):
        result = run_turn(user_id=demo_user, message="Hello", model=MODEL)
    assert (result.iterations, result.actions, result.stop_reason) == (1, [], "no_tool_call")
    error, undelivered = events_of(result.session_id, "error")
    assert error["message"] == "No tool call in response"
    assert undelivered["kind"] == "undelivered" and "without calling a tool" in undelivered["message"]
    assert event_types(result.session_id)[-3:] == ["llm_response", "error", "error"]
    assert session_of(result).status == SessionStatus.ERROR
    assert result.response["messages"] == [APOLOGY]
    assert (
        trainer_events_of(result.session_id, "llm_response")[0]["text"] == "Sure, here is a workout: squats."
    )


def test_several_tool_calls_run_the_first_and_answer_the_rest(demo_user: uuid.UUID) -> None:
    """Only the first tool_use runs; the others get error results, and the next request is a valid transcript."""
    transport = scripted_claude(
        calls(("message_notify_user", {"message": "First"}), ("message_notify_user", {"message": "Second"})),
        idle(),
    )
    with serving(MODEL, transport):
        result = run_turn(user_id=demo_user, message="Hello", model=MODEL)
    assert [a.tool for a in result.actions] == ["message_notify_user", "idle"]
    assert result.response["messages"] == ["First"]
    assert result.iterations == 2

    messages = transport.bodies[1]["messages"]
    assistant, answer = messages[-2], messages[-1]
    uses = [b["id"] for b in assistant["content"]]
    assert len(uses) == 2 and all(b["type"] == "tool_use" for b in assistant["content"])
    assert [b["tool_use_id"] for b in answer["content"]] == uses
    assert answer["content"][0].get("is_error") is None
    assert answer["content"][1]["is_error"] is True and "one tool per turn" in answer["content"][1]["content"]


def test_iteration_cap_stops_after_ten_model_calls(demo_user: uuid.UUID) -> None:
    """A model that never stops gets exactly 10 calls, then an error event; the session still completes."""
    transport = scripted_claude()
    transport.default = lambda request: httpx2.Response(200, json=notify("Still going")({"model": MODEL}))
    with serving(MODEL, transport):
        result = run_turn(user_id=demo_user, message="Hello", model=MODEL)
    assert len(transport.requests) == 10 and result.iterations == 10
    assert result.stop_reason == "max_iterations"
    (error,) = events_of(result.session_id, "error")
    assert error["message"] == "Max iterations (10) reached"
    assert trainer_event_types(result.session_id).count("llm_request") == 10
    assert session_of(result).status == SessionStatus.COMPLETED


class _NoInput(BaseModel):
    pass


def _explode(args: _NoInput, ctx: ToolContext) -> ToolOutcome:
    raise RuntimeError("the database of squats is on fire")


def test_tool_that_raises_is_a_failed_result_not_a_crash(demo_user: uuid.UUID) -> None:
    """A handler exception becomes an error tool_result the model sees; the turn carries on."""
    broken = Tool(
        name="broken_tool",
        description="Breaks.",
        input_model=_NoInput,
        handler=_explode,
        category="data",
        priority=250,
    )
    provider = ScriptedProvider(
        [lambda r: _call(r, "broken_tool"), lambda r: _call(r, "idle", reason="gave up")]
    )
    with registry_override(broken, include_registered=True), override_provider(MODEL, provider):
        result = run_turn(user_id=demo_user, message="Hello", model=MODEL)
    assert not result.actions[0].result["success"]
    assert "on fire" in result.actions[0].result["formatted"]
    assert result.stop_reason == "idle"


def _call(request: LLMRequest, name: str, **arguments: Any) -> LLMResponse:
    from trainer_agent.llm.scripted import tool_response

    return tool_response(name, arguments)


def test_provider_bug_is_reported_as_a_server_turn_error(demo_user: uuid.UUID) -> None:
    """A provider raising something other than LLMError still ends the turn cleanly as kind=server."""
    provider = ScriptedProvider([KeyError("content")])
    with override_provider(MODEL, provider), pytest.raises(TurnError) as caught:
        run_turn(user_id=demo_user, message="Hello", model=MODEL)
    assert caught.value.kind == "server"
    assert AgentSession.objects.get(pk=caught.value.session_id).status == SessionStatus.ERROR


def test_internal_bug_is_recorded_and_propagates(
    demo_user: uuid.UUID, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An unexpected exception in the loop leaves an error event and status `error`; the caller gets TurnError."""
    import trainer_agent.loop as loop_module

    def broken_build(**kwargs: Any) -> Any:
        raise ZeroDivisionError("oops")

    monkeypatch.setattr(loop_module, "build_locked_context", broken_build)
    with override_provider(MODEL, ScriptedProvider([])), pytest.raises(TurnError) as caught:
        run_turn(user_id=demo_user, message="Hello", model=MODEL)
    assert caught.value.kind == "internal"
    session = AgentSession.objects.get(user_id=demo_user)
    assert session.status == SessionStatus.ERROR
    (error,) = events_of(session.pk, "error")
    assert error["kind"] == "internal" and "ZeroDivisionError" in error["stack"]
