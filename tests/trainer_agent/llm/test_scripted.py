"""ScriptedProvider: plays responses in order, records requests, fails clearly when exhausted."""

from __future__ import annotations

import pytest

from tests.support.llm_fakes import sample_llm_request
from trainer_agent.llm.scripted import ScriptedProvider, text_response, tool_response
from trainer_agent.llm.types import LLMError, LLMRequest, LLMResponse, Provider, StructuredOutputProvider


def test_steps_play_in_order_and_requests_are_recorded() -> None:
    """Responses come back in script order; every request is kept; an empty model takes the request's."""
    provider = ScriptedProvider(
        [tool_response("generate_workout", {"focus": "chest"}), tool_response("idle")]
    )
    first, second = sample_llm_request("claude-haiku-4-5"), sample_llm_request("gpt-4o-mini")

    assert [provider.complete(first).tool_calls[0].name, provider.complete(second).tool_calls[0].name] == [
        "generate_workout",
        "idle",
    ]
    assert provider.requests == [first, second]
    assert provider.remaining == 0


def test_callable_steps_see_the_request() -> None:
    """A step may be a function of the request, e.g. to answer based on the conversation so far."""

    def echo_message_count(request: LLMRequest) -> LLMResponse:
        return tool_response("message_notify_user", {"message": str(len(request.messages))})

    response = ScriptedProvider([echo_message_count]).complete(sample_llm_request())
    assert response.tool_calls[0].arguments == {"message": "3"}
    assert response.model == "claude-haiku-4-5"


def test_exception_steps_are_raised() -> None:
    """An exception in the script is raised, to test how callers handle provider failures."""
    provider = ScriptedProvider([LLMError("overloaded", "busy", status_code=529)])
    with pytest.raises(LLMError) as caught:
        provider.complete(sample_llm_request())
    assert caught.value.kind == "overloaded"


def test_exhausted_script_raises_invalid_response() -> None:
    """A call beyond the script raises LLMError invalid_response instead of repeating a step."""
    provider = ScriptedProvider([tool_response("idle")])
    provider.complete(sample_llm_request())
    with pytest.raises(LLMError) as caught:
        provider.complete(sample_llm_request())
    assert caught.value.kind == "invalid_response"
    assert "exhausted" in caught.value.message
    assert provider.calls == 2


def test_cycle_repeats_the_script() -> None:
    """With cycle=True the script starts over (for load benchmarks)."""
    provider = ScriptedProvider([tool_response("a"), tool_response("b")], cycle=True)
    names = [provider.complete(sample_llm_request()).tool_calls[0].name for _ in range(5)]
    assert names == ["a", "b", "a", "b", "a"]


def test_text_response_has_no_tool_call() -> None:
    """text_response builds the 'model answered without a tool' case."""
    response = ScriptedProvider([text_response("hello")]).complete(sample_llm_request())
    assert (response.tool_calls, response.text, response.stop_reason) == ([], "hello", "end_turn")


def test_tool_response_usage_and_ids() -> None:
    """tool_response sets the usage buckets given and a fresh call id each time."""
    first = tool_response("idle", input_tokens=10, output_tokens=2, cache_read_tokens=5, cache_write_tokens=1)
    second = tool_response("idle")
    assert first.usage.as_event_tokens() == {
        "prompt": 10,
        "completion": 2,
        "cached": 5,
        "cache_write": 1,
        "total": 18,
    }
    assert first.tool_calls[0].id != second.tool_calls[0].id


def test_complete_json_plays_json_steps_and_records_them() -> None:
    """complete_json answers from json_steps and records its arguments."""
    provider = ScriptedProvider(json_steps=[{"sources": ["user_profile"]}])
    result = provider.complete_json(
        model="gpt-4o-mini", system="s", user="u", json_schema={"type": "object"}, schema_name="selection"
    )
    assert result.data == {"sources": ["user_profile"]}
    assert provider.json_requests[0].schema_name == "selection"
    with pytest.raises(LLMError):
        provider.complete_json(
            model="gpt-4o-mini", system="s", user="u", json_schema={}, schema_name="selection"
        )


def test_scripted_provider_satisfies_both_protocols() -> None:
    """ScriptedProvider can stand in for any provider, including the initializer's structured one."""
    provider = ScriptedProvider()
    assert isinstance(provider, Provider)
    assert isinstance(provider, StructuredOutputProvider)
