"""The Anthropic provider against the real SDK, with HTTP replaced by a scripted transport."""

from __future__ import annotations

import copy
from dataclasses import replace

import httpx2
import pytest

from tests.support.llm_fakes import (
    IDLE_SCHEMA,
    WORKOUT_SCHEMA,
    ScriptedTransport,
    anthropic_error,
    anthropic_message,
    anthropic_provider_for,
)
from trainer_agent.llm.anthropic_provider import build_anthropic_body, count_cache_breakpoints
from trainer_agent.llm.types import INVALID_ARGUMENTS_KEY, LLMError, LLMRequest, ToolCall, Usage

EPHEMERAL = {"type": "ephemeral"}


def test_wire_body_matches_the_seed_shape_with_four_breakpoints(llm_request: LLMRequest) -> None:
    """The JSON Anthropic receives is exactly docs/contracts.md §5.5 (model request): forced tool use and 4 cache breakpoints."""
    transport = ScriptedTransport(anthropic_message([("idle", {})]))
    anthropic_provider_for(transport).complete(llm_request)

    assert transport.urls == ["https://api.anthropic.com/v1/messages"]
    assert transport.bodies[0] == {
        "model": "claude-haiku-4-5",
        "max_tokens": 8192,
        "tools": [
            {"name": "generate_workout", "description": "Create a workout.", "input_schema": WORKOUT_SCHEMA},
            {
                "name": "idle",
                "description": "Stop and wait.",
                "input_schema": IDLE_SCHEMA,
                "cache_control": EPHEMERAL,
            },
        ],
        "tool_choice": {"type": "any"},
        "system": [
            {"type": "text", "text": "You are a personal trainer.", "cache_control": EPHEMERAL},
            {
                "type": "text",
                "text": "<user_data>\n<unit_preferences>\nWeight: kg\n</unit_preferences>\n</user_data>",
                "cache_control": EPHEMERAL,
            },
        ],
        "messages": [
            {"role": "user", "content": "Give me a chest workout"},
            {
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": "toolu_1",
                        "name": "generate_workout",
                        "input": {"focus": "chest"},
                    }
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_1", "content": '{"ok": true}'},
                    {
                        "type": "text",
                        "text": '<knowledge source="workout_history">\nnone\n</knowledge>',
                        "cache_control": EPHEMERAL,
                    },
                ],
            },
        ],
    }
    assert count_cache_breakpoints(transport.bodies[0]) == 4


def test_building_the_body_does_not_mutate_the_request(llm_request: LLMRequest) -> None:
    """Breakpoints are added to copies: the caller's messages and tool schemas stay untouched."""
    before = copy.deepcopy(llm_request)
    build_anthropic_body(llm_request)
    build_anthropic_body(llm_request)
    assert llm_request == before
    assert count_cache_breakpoints(llm_request.messages) == 0


def test_string_content_of_last_message_becomes_a_text_block(llm_request: LLMRequest) -> None:
    """A plain-string last message is turned into one text block so it can carry breakpoint 4."""
    request = replace(llm_request, messages=[{"role": "user", "content": "Hi coach"}])
    body = build_anthropic_body(request)
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "Hi coach", "cache_control": EPHEMERAL}]}
    ]
    assert request.messages == [{"role": "user", "content": "Hi coach"}]


def test_stale_cache_markers_in_messages_are_dropped(llm_request: LLMRequest) -> None:
    """Markers left in history never push the request past Anthropic's limit of 4 breakpoints."""
    messages = copy.deepcopy(llm_request.messages)
    messages[1]["content"][0]["cache_control"] = EPHEMERAL
    body = build_anthropic_body(replace(llm_request, messages=messages))
    assert count_cache_breakpoints(body) == 4
    assert "cache_control" not in body["messages"][1]["content"][0]


def test_temperature_is_never_sent_and_max_tokens_always(llm_request: LLMRequest) -> None:
    """API version 2026-10-21 has no sampling parameters (400 even at a default value, TypeError in the SDK):
    a request's temperature stays off the wire, through complete and complete_json; max_tokens is sent."""
    transport = ScriptedTransport(
        anthropic_message([("idle", {})]), anthropic_message([("answer", {"focus": "legs"})])
    )
    provider = anthropic_provider_for(transport)
    provider.complete(replace(llm_request, temperature=0.2, max_tokens=321))
    provider.complete_json(
        model="claude-haiku-4-5",
        system="Pick.",
        user="Legs?",
        json_schema=WORKOUT_SCHEMA,
        schema_name="answer",
        max_tokens=99,
        temperature=0.0,
    )
    assert [body["max_tokens"] for body in transport.bodies] == [321, 99]
    assert all("temperature" not in body for body in transport.bodies)
    assert transport.requests[0].headers["anthropic-version"] == "2026-10-21"


def test_request_without_tools_is_refused(llm_request: LLMRequest) -> None:
    """Tool use is forced, so a request with no tools is a programming error caught before the call."""
    with pytest.raises(ValueError, match="at least one tool"):
        build_anthropic_body(replace(llm_request, tools=[]))


def test_response_parses_tool_call_usage_and_raw(llm_request: LLMRequest) -> None:
    """A tool_use response yields the call, every usage bucket, the stop reason and the wire JSON."""
    wire = anthropic_message(
        [("generate_workout", {"focus": "chest"}, "toolu_9")],
        input_tokens=50,
        output_tokens=40,
        cache_read_tokens=3000,
        cache_write_tokens=1200,
        model="claude-haiku-4-5-20251001",
    )
    response = anthropic_provider_for(ScriptedTransport(wire)).complete(llm_request)

    assert response.tool_calls == [
        ToolCall(id="toolu_9", name="generate_workout", arguments={"focus": "chest"})
    ]
    assert response.usage == Usage(
        input_tokens=50, output_tokens=40, cache_read_tokens=3000, cache_write_tokens=1200
    )
    assert response.usage.as_event_tokens() == {
        "prompt": 50,
        "completion": 40,
        "cached": 3000,
        "cache_write": 1200,
        "total": 4290,
    }
    assert response.stop_reason == "tool_use"
    assert response.model == "claude-haiku-4-5-20251001"
    assert response.raw == wire
    assert response.text == ""
    assert response.duration_ms >= 0


def test_missing_cache_buckets_count_as_zero(llm_request: LLMRequest) -> None:
    """Null cache_creation/cache_read fields (no caching happened) become 0, not None."""
    wire = anthropic_message([("idle", {})], cache_read_tokens=None, cache_write_tokens=None)
    usage = anthropic_provider_for(ScriptedTransport(wire)).complete(llm_request).usage
    assert (usage.cache_read_tokens, usage.cache_write_tokens) == (0, 0)


def test_multiple_tool_calls_are_returned_in_order(llm_request: LLMRequest) -> None:
    """Every tool_use block is returned, in the order the model produced them; text is kept too."""
    wire = anthropic_message(
        [("message_notify_user", {"message": "Here it is"}, "toolu_a"), ("idle", {}, "toolu_b")],
        text="Planning",
    )
    response = anthropic_provider_for(ScriptedTransport(wire)).complete(llm_request)
    assert [call.id for call in response.tool_calls] == ["toolu_a", "toolu_b"]
    assert response.first_tool_call == ToolCall("toolu_a", "message_notify_user", {"message": "Here it is"})
    assert response.text == "Planning"


def test_text_only_response_has_no_tool_calls(llm_request: LLMRequest) -> None:
    """A response with only text yields no tool calls (the loop logs an error and stops)."""
    wire = anthropic_message(text="I think you should rest.")
    response = anthropic_provider_for(ScriptedTransport(wire)).complete(llm_request)
    assert response.tool_calls == []
    assert response.first_tool_call is None
    assert response.text == "I think you should rest."
    assert response.stop_reason == "end_turn"


def test_non_object_tool_input_is_kept_as_invalid(llm_request: LLMRequest) -> None:
    """A tool_use whose input is not an object is still returned, flagged for an is_error tool result."""
    wire = anthropic_message([("idle", ["not", "an", "object"], "toolu_x")])
    call = anthropic_provider_for(ScriptedTransport(wire)).complete(llm_request).tool_calls[0]
    assert call.arguments == {INVALID_ARGUMENTS_KEY: ["not", "an", "object"]}
    assert call.has_invalid_arguments


def test_rate_limit_is_retried_by_the_sdk_then_reported(llm_request: LLMRequest) -> None:
    """429 twice with max_retries=1: the SDK sends 2 requests, then LLMError rate_limited with retry_after."""
    status, body = anthropic_error(429, "rate_limit_error", "Slow down")
    transport = ScriptedTransport(
        (status, body, {"retry-after": "0.001"}), (status, body, {"retry-after": "0.001"})
    )
    with pytest.raises(LLMError) as caught:
        anthropic_provider_for(transport, max_retries=1).complete(llm_request)
    assert len(transport.requests) == 2
    assert caught.value.kind == "rate_limited"
    assert caught.value.status_code == 429
    assert caught.value.retry_after == pytest.approx(0.001)
    assert "Slow down" in caught.value.message


def test_rate_limit_then_success_recovers(llm_request: LLMRequest) -> None:
    """A 429 followed by a 200 is invisible to the caller: the SDK's retry returns the response."""
    status, body = anthropic_error(429, "rate_limit_error")
    transport = ScriptedTransport((status, body, {"retry-after": "0.001"}), anthropic_message([("idle", {})]))
    response = anthropic_provider_for(transport, max_retries=1).complete(llm_request)
    assert len(transport.requests) == 2
    assert response.first_tool_call is not None
    assert response.first_tool_call.name == "idle"
    assert transport.bodies[0] == transport.bodies[1]


def test_retry_after_header_in_seconds_is_reported(llm_request: LLMRequest) -> None:
    """Without retries left, the server's retry-after (seconds) is passed on for the caller to honour."""
    status, body = anthropic_error(429, "rate_limit_error")
    transport = ScriptedTransport((status, body, {"retry-after": "7"}))
    with pytest.raises(LLMError) as caught:
        anthropic_provider_for(transport).complete(llm_request)
    assert caught.value.retry_after == 7.0


@pytest.mark.parametrize(
    ("status", "error_type", "kind"),
    [
        (529, "overloaded_error", "overloaded"),
        (500, "overloaded_error", "overloaded"),
        (400, "invalid_request_error", "bad_request"),
        (404, "not_found_error", "bad_request"),
        (401, "authentication_error", "auth"),
        (403, "permission_error", "auth"),
        (500, "api_error", "server"),
        (503, "api_error", "server"),
    ],
)
def test_http_errors_map_to_kinds(llm_request: LLMRequest, status: int, error_type: str, kind: str) -> None:
    """Each Anthropic error status (and overloaded_error type) maps to one LLMError kind."""
    transport = ScriptedTransport(anthropic_error(status, error_type, "details here"))
    with pytest.raises(LLMError) as caught:
        anthropic_provider_for(transport).complete(llm_request)
    assert caught.value.kind == kind
    assert caught.value.status_code == status
    assert "details here" in caught.value.message


def test_timeout_maps_to_timeout(llm_request: LLMRequest) -> None:
    """A read timeout in the transport surfaces as LLMError kind timeout."""
    transport = ScriptedTransport(httpx2.ReadTimeout)
    with pytest.raises(LLMError) as caught:
        anthropic_provider_for(transport).complete(llm_request)
    assert caught.value.kind == "timeout"
    assert caught.value.status_code is None


def test_timeout_is_retried_before_failing(llm_request: LLMRequest) -> None:
    """Timeouts are retried by the SDK like other transient failures; a later success is returned."""
    transport = ScriptedTransport(httpx2.ReadTimeout, anthropic_message([("idle", {})]))
    response = anthropic_provider_for(transport, max_retries=1).complete(llm_request)
    assert len(transport.requests) == 2
    assert response.tool_calls[0].name == "idle"


def test_connection_error_maps_to_server(llm_request: LLMRequest) -> None:
    """A refused connection is not a timeout: it is reported as kind server."""
    transport = ScriptedTransport(httpx2.ConnectError)
    with pytest.raises(LLMError) as caught:
        anthropic_provider_for(transport).complete(llm_request)
    assert caught.value.kind == "server"


@pytest.mark.parametrize("content_type", ["application/json", "text/plain"])
def test_garbage_body_is_invalid_response(llm_request: LLMRequest, content_type: str) -> None:
    """A 200 whose body is not JSON is invalid_response, raised at once (the SDK does not retry it)."""
    transport = ScriptedTransport((200, "<html>oops", {"content-type": content_type}))
    with pytest.raises(LLMError) as caught:
        anthropic_provider_for(transport, max_retries=2).complete(llm_request)
    assert caught.value.kind == "invalid_response"
    assert len(transport.requests) == 1


def test_json_that_is_not_a_message_is_invalid_response(llm_request: LLMRequest) -> None:
    """A JSON body without message content is invalid_response rather than an AttributeError."""
    transport = ScriptedTransport({"unexpected": True})
    with pytest.raises(LLMError) as caught:
        anthropic_provider_for(transport).complete(llm_request)
    assert caught.value.kind == "invalid_response"


def test_complete_json_forces_one_schema_tool() -> None:
    """Structured output on Claude is one forced tool whose input schema is the requested schema."""
    schema = {"type": "object", "properties": {"sources": {"type": "array"}}, "required": ["sources"]}
    transport = ScriptedTransport(anthropic_message([("selection", {"sources": ["user_profile"]})]))
    result = anthropic_provider_for(transport).complete_json(
        model="claude-haiku-4-5",
        system="Pick data.",
        user="chest day",
        json_schema=schema,
        schema_name="selection",
    )
    assert result.data == {"sources": ["user_profile"]}
    assert transport.last_body["tool_choice"] == {"type": "tool", "name": "selection"}
    assert transport.last_body["tools"][0]["input_schema"] == schema
    assert result.usage.input_tokens == 120
