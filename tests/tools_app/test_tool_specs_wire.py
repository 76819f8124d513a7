"""The FULL tool list through the real anthropic and openai SDKs (HTTP replaced by httpx2.MockTransport):
what each API receives is every tool, named and described, with a valid, portable JSON schema."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import jsonschema
import pytest

from tests.support.llm_fakes import (
    ScriptedTransport,
    anthropic_message,
    anthropic_provider_for,
    openai_completion,
    openai_provider_for,
)
from tools_app.registry import all_tools, tool_specs
from trainer_agent.context import trainer_tool_specs
from trainer_agent.llm.types import LLMRequest

TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
EPHEMERAL = {"type": "ephemeral"}


def full_request(model: str) -> LLMRequest:
    return LLMRequest(
        model=model,
        system_prompt="You are a personal trainer.",
        user_data_xml="<user_data>\nWeight: kg\n</user_data>",
        messages=[{"role": "user", "content": "Plan my week"}],
        tools=trainer_tool_specs(),
    )


def keys_anywhere(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            yield key
            yield from keys_anywhere(value)
    elif isinstance(node, list):
        for item in node:
            yield from keys_anywhere(item)


def check_portable_schema(name: str, schema: dict[str, Any], description: str) -> None:
    assert schema["type"] == "object", name
    assert isinstance(schema["properties"], dict), name
    jsonschema.Draft202012Validator.check_schema(schema)
    keys = set(keys_anywhere(schema))
    assert not keys & {"$ref", "$defs", "definitions"}, f"{name} schema is not self-contained"
    for required in schema.get("required", []):
        assert required in schema["properties"], f"{name}: required {required} is not a property"
    named = set(re.findall(r"\w+", description))
    required = set(schema.get("required", []))
    for field, node in schema["properties"].items():
        # Required and structured (list, object) arguments are explained, by their own description or by the
        # tool's description naming them; an optional scalar says what it is by its name, type and bounds.
        if field in required or node.get("type") in ("array", "object"):
            assert node.get("description") or field in named, f"{name}.{field} is not explained to the model"


@pytest.fixture(scope="module")
def registered() -> list[dict[str, Any]]:
    return tool_specs()


def test_registry_holds_every_tool_of_the_seeds(registered: list[dict[str, Any]]) -> None:
    """Seed 000's and seed 001's named tools are all registered, each once."""
    names = [spec["name"] for spec in registered]
    assert len(names) == len(set(names))
    assert {
        "message_notify_user",
        "message_ask_user",
        "idle",
        "generate_workout",
        "swap_exercise",
        "adjust_exercise",
        "remove_exercise",
        "log_workout",
        "fetch_data",
        "set_current_location",
        "set_goals",
        "set_preference",
        "delete_preference",
        "log_completed_exercise",
        "undo_logged_exercise",
        "mark_exercise_complete",
        "generate_exercise_timer",
        "generate_workout_timers",
        "schedule_workout",
        "update_scheduled_workout",
        "delete_scheduled_workout",
        "create_workout_plan",
        "get_training_stats",
    } <= set(names)


def test_anthropic_receives_every_tool_with_a_valid_input_schema(registered: list[dict[str, Any]]) -> None:
    """Name, description, input_schema for every tool in registry order; cache_control on the last only."""
    transport = ScriptedTransport(anthropic_message([("idle", {"reason": "done"})]))
    anthropic_provider_for(transport).complete(full_request("claude-haiku-4-5"))
    (body,) = transport.bodies
    tools = body["tools"]
    assert [tool["name"] for tool in tools] == [spec["name"] for spec in registered]
    assert [tool["name"] for tool in tools] == [tool.name for tool in all_tools()]
    for tool, spec in zip(tools, registered, strict=True):
        assert TOOL_NAME.match(tool["name"])
        assert tool["description"] == spec["description"] and tool["description"].strip()
        assert tool["input_schema"] == spec["input_schema"]
        check_portable_schema(tool["name"], tool["input_schema"], tool["description"])
        expected_keys = {"name", "description", "input_schema"} | (
            {"cache_control"} if tool is tools[-1] else set()
        )
        assert set(tool) == expected_keys
    assert tools[-1]["cache_control"] == EPHEMERAL
    assert body["tool_choice"] == {"type": "any"}


def test_openai_receives_every_tool_as_a_function_with_valid_parameters(
    registered: list[dict[str, Any]],
) -> None:
    """Every tool is a function with name, description and parameters; no cache markers; tool use required."""
    transport = ScriptedTransport(openai_completion([("idle", {"reason": "done"})]))
    openai_provider_for(transport).complete(full_request("gpt-4o-mini"))
    (body,) = transport.bodies
    tools = body["tools"]
    assert [tool["function"]["name"] for tool in tools] == [spec["name"] for spec in registered]
    for tool, spec in zip(tools, registered, strict=True):
        assert tool["type"] == "function"
        function = tool["function"]
        assert set(function) == {"name", "description", "parameters"}
        assert TOOL_NAME.match(function["name"])
        assert function["description"] == spec["description"]
        assert function["parameters"] == spec["input_schema"]
        check_portable_schema(function["name"], function["parameters"], function["description"])
    assert "cache_control" not in set(keys_anywhere(tools))
    assert body["tool_choice"] == "required"
