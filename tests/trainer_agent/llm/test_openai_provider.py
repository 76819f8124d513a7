"""The OpenAI provider against the real SDK, with HTTP replaced by a scripted transport."""

from __future__ import annotations

import copy
from dataclasses import replace
from typing import Any

import httpx2
import pytest
from django.test import override_settings

from tests.support.llm_fakes import (
    IDLE_SCHEMA,
    WORKOUT_SCHEMA,
    ScriptedTransport,
    openai_completion,
    openai_error,
    openai_json_completion,
    openai_provider_for,
)
from trainer_agent.llm.openai_provider import build_openai_body, parse_tool_arguments, translate_messages
from trainer_agent.llm.types import INVALID_ARGUMENTS_KEY, LLMError, LLMRequest, ToolCall, Usage

SYSTEM_TEXT = "You are a personal trainer.\n\n<user_data>\n<unit_preferences>\nWeight: kg\n</unit_preferences>\n</user_data>"


def test_wire_body_translates_messages_and_forces_tools(llm_request: LLMRequest) -> None:
    """The JSON OpenAI receives: one system message, translated tool turns, tool_choice required."""
    transport = ScriptedTransport(openai_completion([("idle", {})]))
    openai_provider_for(transport).complete(replace(llm_request, model="gpt-4o-mini"))

    assert transport.urls == ["https://api.openai.com/v1/chat/completions"]
    assert transport.bodies[0] == {
        "model": "gpt-4o-mini",
        "messages": [
            {"role": "system", "content": SYSTEM_TEXT},
            {"role": "user", "content": "Give me a chest workout"},
            {
                "role": "assistant",
                "tool_calls": [
                    {
                        "id": "toolu_1",
                        "type": "function",
                        "function": {"name": "generate_workout", "arguments": '{"focus": "chest"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "toolu_1", "content": '{"ok": true}'},
            {"role": "user", "content": '<knowledge source="workout_history">\nnone\n</knowledge>'},
        ],
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "generate_workout",
                    "description": "Create a workout.",
                    "parameters": WORKOUT_SCHEMA,
                },
            },
            {
                "type": "function",
                "function": {"name": "idle", "description": "Stop and wait.", "parameters": IDLE_SCHEMA},
            },
        ],
        "tool_choice": "required",
        "parallel_tool_calls": False,
        "max_completion_tokens": 8192,
    }


def test_building_the_body_does_not_mutate_the_request(llm_request: LLMRequest) -> None:
    """Translation works on copies: the Anthropic-shaped messages stay as they were."""
    before = copy.deepcopy(llm_request)
    build_openai_body(llm_request)
    assert llm_request == before


def test_error_tool_results_and_assistant_text_translate() -> None:
    """is_error results are prefixed 'Error:', assistant text rides with its tool call, list content is joined."""
    messages: list[dict[str, Any]] = [
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Let me log that."},
                {"type": "tool_use", "id": "c1", "name": "log_workout", "input": {}},
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "c1",
                    "content": [{"type": "text", "text": "workout_id is required"}],
                    "is_error": True,
                }
            ],
        },
    ]
    assert translate_messages(messages) == [
        {
            "role": "assistant",
            "content": "Let me log that.",
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "log_workout", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "Error: workout_id is required"},
    ]


def test_response_parses_tool_calls_and_cached_tokens(llm_request: LLMRequest) -> None:
    """cached_tokens are taken out of prompt_tokens so no bucket is counted twice."""
    wire = openai_completion(
        [("generate_workout", {"focus": "legs"}, "call_1")],
        prompt_tokens=5000,
        completion_tokens=200,
        cached_tokens=3000,
    )
    response = openai_provider_for(ScriptedTransport(wire)).complete(llm_request)

    assert response.tool_calls == [
        ToolCall(id="call_1", name="generate_workout", arguments={"focus": "legs"})
    ]
    assert response.usage == Usage(
        input_tokens=2000, output_tokens=200, cache_read_tokens=3000, cache_write_tokens=0
    )
    assert response.usage.as_event_tokens()["total"] == 5200
    assert response.stop_reason == "tool_calls"
    assert response.model == "gpt-4o-mini"
    assert response.raw == wire


def test_usage_without_prompt_details_has_no_cached_tokens(llm_request: LLMRequest) -> None:
    """Servers that omit prompt_tokens_details (many local ones) report every prompt token as uncached."""
    wire = openai_completion([("idle", {})], prompt_tokens=900, cached_tokens=None)
    usage = openai_provider_for(ScriptedTransport(wire)).complete(llm_request).usage
    assert (usage.input_tokens, usage.cache_read_tokens) == (900, 0)


def test_multiple_tool_calls_keep_their_order(llm_request: LLMRequest) -> None:
    """Several tool calls come back in the order the model produced them."""
    wire = openai_completion([("message_notify_user", {"message": "hi"}, "a"), ("idle", {}, "b")])
    response = openai_provider_for(ScriptedTransport(wire)).complete(llm_request)
    assert [call.name for call in response.tool_calls] == ["message_notify_user", "idle"]


def test_text_only_response_has_no_tool_calls(llm_request: LLMRequest) -> None:
    """A plain text answer yields no tool calls and keeps the text."""
    wire = openai_completion(content="Rest today.")
    response = openai_provider_for(ScriptedTransport(wire)).complete(llm_request)
    assert response.tool_calls == []
    assert response.text == "Rest today."
    assert response.stop_reason == "stop"


def test_invalid_json_arguments_are_kept_for_an_error_result(llm_request: LLMRequest) -> None:
    """Arguments that are not valid JSON keep the call, with the raw string under the invalid key."""
    wire = openai_completion([("generate_workout", '{"focus": "chest"', "call_bad")])
    call = openai_provider_for(ScriptedTransport(wire)).complete(llm_request).tool_calls[0]
    assert call == ToolCall("call_bad", "generate_workout", {INVALID_ARGUMENTS_KEY: '{"focus": "chest"'})
    assert call.has_invalid_arguments


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("", {}),
        (None, {}),
        ('{"a": 1}', {"a": 1}),
        ("[1, 2]", {INVALID_ARGUMENTS_KEY: "[1, 2]"}),
        ("nope", {INVALID_ARGUMENTS_KEY: "nope"}),
    ],
)
def test_parse_tool_arguments(raw: str | None, expected: dict[str, object]) -> None:
    """Empty arguments mean no arguments; only a JSON object is accepted as arguments."""
    assert parse_tool_arguments(raw) == expected


def test_complete_json_sends_a_strict_schema_and_decodes_the_object() -> None:
    """Structured output uses response_format json_schema with strict=true and returns the parsed object."""
    schema = {
        "type": "object",
        "properties": {"sources": {"type": "array", "items": {"type": "string"}}},
        "required": ["sources"],
        "additionalProperties": False,
    }
    transport = ScriptedTransport(openai_json_completion({"sources": ["workout_history"]}, cached_tokens=0))
    result = openai_provider_for(transport).complete_json(
        model="gpt-4o-mini",
        system="Pick data.",
        user="legs today",
        json_schema=schema,
        schema_name="selection",
    )

    assert transport.bodies[0] == {
        "model": "gpt-4o-mini",
        "messages": [{"role": "system", "content": "Pick data."}, {"role": "user", "content": "legs today"}],
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": "selection", "strict": True, "schema": schema},
        },
        "max_completion_tokens": 1024,
    }
    assert result.data == {"sources": ["workout_history"]}
    _data, usage, raw, duration_ms = result
    assert usage == Usage(input_tokens=120, output_tokens=30)
    assert raw["object"] == "chat.completion"
    assert duration_ms >= 0


def test_temperature_is_sent_when_the_request_sets_one(llm_request: LLMRequest) -> None:
    """complete and complete_json put the caller's temperature on the wire, and leave it out when unset."""
    transport = ScriptedTransport(
        openai_completion([("idle", {})]),
        openai_completion([("idle", {})]),
        openai_json_completion({"ok": True}),
        openai_json_completion({"ok": True}),
    )
    provider = openai_provider_for(transport)
    provider.complete(replace(llm_request, model="gpt-4o-mini", temperature=0.3))
    provider.complete(replace(llm_request, model="gpt-4o-mini"))
    for temperature in (0.0, None):
        provider.complete_json(
            model="gpt-4o-mini",
            system="s",
            user="u",
            json_schema={"type": "object"},
            schema_name="x",
            temperature=temperature,
        )
    assert [body.get("temperature", "absent") for body in transport.bodies] == [0.3, "absent", 0.0, "absent"]


@pytest.mark.parametrize(
    "wire",
    [
        openai_completion(content="not json"),
        openai_completion(content="[1]"),
        openai_completion(refusal="I can't help with that."),
    ],
)
def test_complete_json_rejects_non_objects_and_refusals(wire: dict[str, object]) -> None:
    """Structured output that is not a JSON object, or a refusal, is invalid_response."""
    with pytest.raises(LLMError) as caught:
        openai_provider_for(ScriptedTransport(wire)).complete_json(
            model="gpt-4o-mini", system="s", user="u", json_schema={"type": "object"}, schema_name="x"
        )
    assert caught.value.kind == "invalid_response"


def test_base_url_is_honoured_and_local_servers_get_max_tokens(llm_request: LLMRequest) -> None:
    """A configured base URL receives the request; OpenAI-compatible servers get the max_tokens field."""
    transport = ScriptedTransport(openai_completion([("idle", {})]))
    openai_provider_for(transport, base_url="http://127.0.0.1:11434/v1").complete(llm_request)
    assert transport.urls == ["http://127.0.0.1:11434/v1/chat/completions"]
    assert transport.bodies[0]["max_tokens"] == 8192
    assert "max_completion_tokens" not in transport.bodies[0]


@override_settings(OPENAI_BASE_URL="http://llm.internal:8000/v1")
def test_base_url_defaults_to_the_setting(llm_request: LLMRequest) -> None:
    """Without an explicit base_url the provider uses settings.OPENAI_BASE_URL."""
    transport = ScriptedTransport(openai_completion([("idle", {})]))
    openai_provider_for(transport).complete(llm_request)
    assert httpx2.URL(transport.urls[0]).host == "llm.internal"


def test_rate_limit_is_retried_then_reported(llm_request: LLMRequest) -> None:
    """429 twice with max_retries=1: two requests reach the server, then LLMError rate_limited."""
    status, body = openai_error(429, "requests", "Rate limit reached", code="rate_limit_exceeded")
    transport = ScriptedTransport(
        (status, body, {"retry-after": "0.001"}), (status, body, {"retry-after": "0.001"})
    )
    with pytest.raises(LLMError) as caught:
        openai_provider_for(transport, max_retries=1).complete(llm_request)
    assert len(transport.requests) == 2
    assert caught.value.kind == "rate_limited"
    assert caught.value.retry_after == pytest.approx(0.001)


def test_rate_limit_then_success_recovers(llm_request: LLMRequest) -> None:
    """A 429 followed by a 200 returns the 200's tool call."""
    status, body = openai_error(429, "requests")
    transport = ScriptedTransport((status, body, {"retry-after": "0.001"}), openai_completion([("idle", {})]))
    response = openai_provider_for(transport, max_retries=1).complete(llm_request)
    assert response.tool_calls[0].name == "idle"
    assert len(transport.requests) == 2


@pytest.mark.parametrize(
    ("status", "kind"),
    [
        (400, "bad_request"),
        (401, "auth"),
        (403, "auth"),
        (404, "bad_request"),
        (500, "server"),
        (502, "server"),
    ],
)
def test_http_errors_map_to_kinds(llm_request: LLMRequest, status: int, kind: str) -> None:
    """Each OpenAI error status maps to one LLMError kind."""
    transport = ScriptedTransport(openai_error(status, "some_error", "details here"))
    with pytest.raises(LLMError) as caught:
        openai_provider_for(transport).complete(llm_request)
    assert (caught.value.kind, caught.value.status_code) == (kind, status)
    assert "details here" in caught.value.message


def test_timeout_maps_to_timeout(llm_request: LLMRequest) -> None:
    """A read timeout in the transport surfaces as LLMError kind timeout."""
    with pytest.raises(LLMError) as caught:
        openai_provider_for(ScriptedTransport(httpx2.ReadTimeout)).complete(llm_request)
    assert caught.value.kind == "timeout"


def test_garbage_body_is_invalid_response(llm_request: LLMRequest) -> None:
    """A 200 whose body is not JSON is invalid_response, without retries."""
    transport = ScriptedTransport((200, "{{{", {"content-type": "application/json"}))
    with pytest.raises(LLMError) as caught:
        openai_provider_for(transport, max_retries=2).complete(llm_request)
    assert caught.value.kind == "invalid_response"
    assert len(transport.requests) == 1


def test_response_without_choices_is_invalid_response(llm_request: LLMRequest) -> None:
    """A completion with an empty choices list is invalid_response."""
    wire = openai_completion([("idle", {})])
    wire["choices"] = []
    with pytest.raises(LLMError) as caught:
        openai_provider_for(ScriptedTransport(wire)).complete(llm_request)
    assert caught.value.kind == "invalid_response"
