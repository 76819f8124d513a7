"""The tool registry: registration, ordering, LLM schemas, and execute_tool's error handling."""

from __future__ import annotations

import dataclasses
import logging
from typing import Annotated, Any, Literal

import jsonschema
import pytest
from pydantic import BaseModel, Field

from sessions_app.models import AgentSession
from tools_app import registry
from tools_app.formatting import confirmation, full_data, shorten, summary, wrap_in_xml
from tools_app.registry import (
    DuplicateToolError,
    ReservedToolNameError,
    UnknownToolError,
    all_tools,
    execute_tool,
    get_tool,
    llm_input_schema,
    register,
    registry_override,
    tool_specs,
)
from tools_app.types import ObservationCategory, Tool, ToolContext, ToolOutcome, ToolResult


class EchoInput(BaseModel):
    message: str
    count: int = Field(default=1, ge=1)


def echo(args: EchoInput, ctx: ToolContext) -> ToolOutcome:
    return ToolOutcome(success=True, data={"message": args.message, "count": args.count}, text=args.message)


def make_tool(name: str = "echo", *, priority: int = 10, **overrides: Any) -> Tool[Any]:
    fields: dict[str, Any] = {
        "name": name,
        "description": f"{name} for tests",
        "input_model": EchoInput,
        "handler": echo,
        "category": "communication",
        "priority": priority,
    }
    fields.update(overrides)
    return Tool(**fields)


class RepsExercise(BaseModel):
    exercise_type: Literal["reps"]
    exercise_name: str = Field(min_length=1)
    sets: int = Field(ge=1, description="How many sets")
    reps: list[int] = Field(min_length=1)


class HoldExercise(BaseModel):
    exercise_type: Literal["hold"]
    exercise_name: str = Field(min_length=1)
    hold_sec: list[int]


class WorkoutPayload(BaseModel):
    title: str = Field(description="A property called title must survive title-stripping")
    intensity: Literal["light", "moderate", "hard"]
    exercises: list[Annotated[RepsExercise | HoldExercise, Field(discriminator="exercise_type")]]
    notes: str | None = None


class GenerateInput(BaseModel):
    workout: WorkoutPayload


def generate(args: GenerateInput, ctx: ToolContext) -> ToolOutcome:
    return ToolOutcome(success=True, data={"exercise_count": len(args.workout.exercises)})


NESTED_TOOL: Tool[Any] = Tool(
    name="generate_test_workout",
    description="nested input for tests",
    input_model=GenerateInput,
    handler=generate,
    category="workout",
    priority=100,
    observation="summary",
)


def schema_keywords(node: Any, found: set[str] | None = None) -> set[str]:
    """Every schema keyword used anywhere in a schema (property names are not keywords)."""
    found = set() if found is None else found
    if isinstance(node, dict):
        for key, value in node.items():
            found.add(key)
            if key == "properties":
                for sub in value.values():
                    schema_keywords(sub, found)
            else:
                schema_keywords(value, found)
    elif isinstance(node, list):
        for item in node:
            schema_keywords(item, found)
    return found


def test_registering_a_name_twice_raises() -> None:
    """A second tool under a taken name is refused, and the first stays registered."""
    first = make_tool("echo")
    with registry_override(first):
        with pytest.raises(DuplicateToolError, match="echo"):
            register(make_tool("echo", priority=1))
        assert get_tool("echo") is first


def test_unknown_tool_raises_with_the_seed_message() -> None:
    """get_tool raises UnknownToolError('Unknown tool: X') (docs/contracts.md §11.1 (tool execution))."""
    with registry_override(make_tool("echo")), pytest.raises(UnknownToolError) as info:
        get_tool("nope")
    assert str(info.value) == "Unknown tool: nope"


def test_execute_unknown_tool_raises(ctx: ToolContext) -> None:
    """execute_tool lets the unknown-tool error escape: it is a loop bug, not a model mistake to recover from."""
    with registry_override(), pytest.raises(UnknownToolError, match=r"^Unknown tool: ghost$"):
        execute_tool("ghost", {}, ctx)


def test_tools_are_listed_by_priority_then_name_whatever_the_registration_order() -> None:
    """The tool list is stable (prompt caching): lower priority first, ties by name."""
    tools = [make_tool("zeta", priority=5), make_tool("beta", priority=20), make_tool("alpha", priority=5)]
    with registry_override(*tools):
        forward = [tool.name for tool in all_tools()]
        specs = [spec["name"] for spec in tool_specs()]
    with registry_override(*reversed(tools)):
        backward = [tool.name for tool in all_tools()]
    assert forward == backward == specs == ["alpha", "zeta", "beta"]


def test_tool_specs_are_copies() -> None:
    """Editing a returned spec does not change what the next request sends."""
    with registry_override(make_tool("echo")):
        tool_specs()[0]["input_schema"]["properties"].clear()
        assert "message" in tool_specs()[0]["input_schema"]["properties"]


def test_tool_specs_can_be_limited_to_named_tools_in_registry_order() -> None:
    """An agent's tool subset comes back in registry order; an unknown name raises."""
    with registry_override(
        make_tool("a", priority=1), make_tool("b", priority=2), make_tool("c", priority=3)
    ):
        assert [spec["name"] for spec in tool_specs(["c", "a"])] == ["a", "c"]
        with pytest.raises(UnknownToolError):
            tool_specs(["a", "zzz"])


def test_override_restores_the_registered_tools() -> None:
    """registry_override swaps the registry for a block only; include_registered keeps the real tools."""
    registered = [tool.name for tool in all_tools()]
    with registry_override(make_tool("echo")):
        assert [tool.name for tool in all_tools()] == ["echo"]
    with registry_override(make_tool("echo", priority=-1), include_registered=True):
        assert [tool.name for tool in all_tools()] == ["echo", *registered]
    assert [tool.name for tool in all_tools()] == registered


def test_nested_schema_is_inlined_without_refs_or_titles() -> None:
    """The LLM schema has no $ref/$defs/title/discriminator/oneOf keywords but keeps a property named title."""
    schema = llm_input_schema(GenerateInput)
    keywords = schema_keywords(schema)
    assert not keywords & {"$ref", "$defs", "title", "discriminator", "oneOf", "const"}
    workout = schema["properties"]["workout"]
    assert "title" in workout["properties"]
    assert workout["properties"]["title"]["description"].startswith("A property called title")
    exercise = workout["properties"]["exercises"]["items"]
    assert [branch["properties"]["exercise_type"]["enum"] for branch in exercise["anyOf"]] == [
        ["reps"],
        ["hold"],
    ]
    assert exercise["anyOf"][0]["properties"]["sets"] == {
        "description": "How many sets",
        "minimum": 1,
        "type": "integer",
    }
    assert workout["properties"]["notes"] == {"type": "string"}
    assert workout["required"] == ["title", "intensity", "exercises"]


def test_inlined_schema_still_accepts_and_rejects_what_the_model_does() -> None:
    """The cleaned schema is valid JSON Schema and agrees with pydantic on a good and a bad input."""
    schema = llm_input_schema(GenerateInput)
    jsonschema.Draft202012Validator.check_schema(schema)
    good = {
        "workout": {
            "title": "Push",
            "intensity": "light",
            "exercises": [
                {"exercise_type": "reps", "exercise_name": "Push-up", "sets": 3, "reps": [10, 10, 8]}
            ],
        }
    }
    jsonschema.validate(good, schema)
    GenerateInput.model_validate(good)
    bad = {"workout": {**good["workout"], "intensity": "extreme"}}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, schema)


def test_recursive_input_models_are_refused() -> None:
    """A self-referencing model cannot be inlined, so registering it fails loudly."""

    class Node(BaseModel):
        children: list[Node] = []

    Node.model_rebuild()

    class TreeInput(BaseModel):
        root: Node

    with pytest.raises(TypeError, match="Recursive"):
        llm_input_schema(TreeInput)


def test_every_registered_tool_has_a_portable_object_schema() -> None:
    """Each real tool's schema is a valid JSON Schema object with properties, usable by Anthropic and OpenAI."""
    specs = tool_specs()
    assert {"message_notify_user", "message_ask_user", "idle"} <= {spec["name"] for spec in specs}
    for spec in specs:
        schema = spec["input_schema"]
        jsonschema.Draft202012Validator.check_schema(schema)
        assert schema["type"] == "object", spec["name"]
        assert isinstance(schema["properties"], dict), spec["name"]
        assert not schema_keywords(schema) & {"$ref", "$defs", "title", "oneOf"}, spec["name"]
        assert spec["description"].strip(), spec["name"]


def test_aliases_are_renamed_to_canonical_names(ctx: ToolContext) -> None:
    """A seed 001 spelling reaches the handler under the canonical name; if both are sent the canonical wins."""
    with registry_override(make_tool("echo", aliases={"text": "message"})):
        aliased = execute_tool("echo", {"text": "hi"}, ctx)
        both = execute_tool("echo", {"text": "alias", "message": "canonical"}, ctx)
    assert aliased.success and aliased.data["message"] == "hi"
    assert both.data["message"] == "canonical"


def test_validation_error_names_every_bad_field_with_what_it_expects(ctx: ToolContext) -> None:
    """Every invalid nested field is listed with its path and expectation, union tags left out of the path."""
    args = {
        "workout": {
            "intensity": "extreme",
            "exercises": [
                {"exercise_type": "reps", "exercise_name": "Squat", "reps": [5]},
                {"exercise_type": "hold", "exercise_name": "", "hold_sec": [30]},
                {"exercise_type": "sprint"},
            ],
        }
    }
    with registry_override(NESTED_TOOL):
        result = execute_tool("generate_test_workout", args, ctx)
    assert not result.success
    message = result.data["error"]
    assert message.startswith("Invalid arguments for generate_test_workout: ")
    assert "workout.title: Field required (expected string)" in message
    assert "workout.exercises.0.sets: Field required (expected integer ≥1)" in message
    assert (
        'workout.intensity: Input should be \'light\', \'moderate\' or \'hard\' (expected one of "light", "moderate", "hard", got "extreme")'
        in message
    )
    assert (
        'workout.exercises.1.exercise_name: String should have at least 1 character (expected non-empty string, got "")'
        in message
    )
    assert "workout.exercises.2: Input tag 'sprint'" in message
    assert 'expected object whose exercise_type is one of "reps", "hold"' in message
    assert message.count("; ") == 4
    assert result.formatted == wrap_in_xml(tool_name="generate_test_workout", text=message, is_error=True)


def test_missing_nested_object_describes_its_fields(ctx: ToolContext) -> None:
    """A missing object argument is described by its fields, optional ones marked with '?'."""
    with registry_override(NESTED_TOOL):
        result = execute_tool("generate_test_workout", {}, ctx)
    assert result.data["error"] == (
        "Invalid arguments for generate_test_workout: workout: Field required "
        "(expected object with fields title, intensity, exercises, notes?)"
    )


def test_unknown_argument_is_an_error_naming_it_and_the_accepted_ones(ctx: ToolContext) -> None:
    """An argument the tool does not know fails the call (not dropped), listing the names it accepts."""
    with registry_override(make_tool("echo")):
        result = execute_tool("echo", {"message": "hi", "start_date": "2026-01-01", "end_date": "x"}, ctx)
    assert not result.success
    assert result.data["error"] == (
        "Invalid arguments for echo: unknown argument(s) start_date, end_date (accepted: message, count)"
    )


def test_unknown_nested_field_is_named_with_its_path(ctx: ToolContext) -> None:
    """A field a nested object does not know is named with its path and that object's fields."""
    args = {
        "workout": {
            "title": "T",
            "intensity": "light",
            "exercises": [
                {"exercise_type": "reps", "exercise_name": "Squat", "sets": 3, "reps": [5], "tempo": "3-1-1"}
            ],
        }
    }
    with registry_override(NESTED_TOOL):
        result = execute_tool("generate_test_workout", args, ctx)
    assert not result.success
    assert result.data["error"] == (
        "Invalid arguments for generate_test_workout: workout.exercises.0: unknown field(s) tempo "
        "(accepted: exercise_type, exercise_name, sets, reps)"
    )


def test_aliases_stay_accepted_under_strict_validation(ctx: ToolContext) -> None:
    """A seed 001 spelling mapped by the tool's aliases is not an unknown argument."""
    with registry_override(make_tool("echo", aliases={"text": "message"})):
        result = execute_tool("echo", {"text": "hi", "count": 2}, ctx)
    assert result.success and result.data == {"message": "hi", "count": 2}


@pytest.mark.parametrize(
    ("args", "got"), [(None, "null"), (["hi"], "array"), ("hi", "string"), (3, "number")]
)
def test_arguments_that_are_not_an_object_fail(ctx: ToolContext, args: Any, got: str) -> None:
    """Arguments that are not a JSON object give a failed result, not an exception."""
    with registry_override(make_tool("echo")):
        result = execute_tool("echo", args, ctx)
    assert not result.success
    assert result.data == {
        "error": f"Invalid arguments for echo: expected a JSON object of named arguments, got {got}"
    }


def test_handler_exception_becomes_a_failed_result_and_is_logged(
    ctx: ToolContext, caplog: pytest.LogCaptureFixture
) -> None:
    """A raising handler yields 'Tool X failed: Type: msg' and a tool.failed log with the traceback."""

    def explode(args: EchoInput, ctx: ToolContext) -> ToolOutcome:
        raise RuntimeError("kaput")

    with (
        registry_override(make_tool("boom", handler=explode)),
        caplog.at_level(logging.ERROR, logger="tools_app"),
    ):
        result = execute_tool("boom", {"message": "x"}, ctx)
    assert not result.success
    assert result.data == {"error": "Tool boom failed: RuntimeError: kaput"}
    assert (
        result.formatted == '<tool_error name="boom">\nTool boom failed: RuntimeError: kaput\n</tool_error>'
    )
    (record,) = [r for r in caplog.records if r.getMessage() == "tool.failed"]
    assert record.tool_name == "boom"  # type: ignore[attr-defined]
    assert record.session_id == str(ctx.session.pk)  # type: ignore[attr-defined]
    assert record.exc_info is not None and record.exc_info[0] is RuntimeError


def test_handler_writes_are_rolled_back_when_it_raises(ctx: ToolContext) -> None:
    """A handler that fails half-way leaves no partial writes, and the database stays usable."""

    def write_then_fail(args: EchoInput, ctx: ToolContext) -> ToolOutcome:
        AgentSession.objects.create(user_id=ctx.user_id, metadata={"marker": args.message})
        raise ValueError("after the write")

    with registry_override(make_tool("half", handler=write_then_fail)):
        result = execute_tool("half", {"message": "half-way"}, ctx)
    assert not result.success
    assert not AgentSession.objects.filter(metadata__marker="half-way").exists()
    assert AgentSession.objects.filter(pk=ctx.session.pk).exists()


def test_result_carries_status_messages_timing_and_termination(ctx: ToolContext) -> None:
    """Done text on success, an error text on failure (only for tools with status), and the loop-stop flag."""
    with_status = make_tool("busy", status_start="Working...", status_done="Done", terminates_loop=True)
    with registry_override(with_status, make_tool("quiet")):
        ok = execute_tool("busy", {"message": "x"}, ctx)
        failed = execute_tool("busy", {}, ctx)
        quiet_failed = execute_tool("quiet", {}, ctx)
    assert (ok.status_message, ok.status_phase, ok.terminates_loop) == ("Done", "done", True)
    assert (failed.status_message, failed.status_phase, failed.terminates_loop) == (
        registry.DEFAULT_STATUS_ERROR,
        "error",
        False,
    )
    assert quiet_failed.status_message is None
    assert isinstance(ok.duration_ms, int) and ok.duration_ms >= 0


def test_success_is_wrapped_in_tool_result_tags(ctx: ToolContext) -> None:
    """The formatted observation is the handler's text inside <tool_result name="X">; raw_formatted is unwrapped."""
    with registry_override(make_tool("echo")):
        result = execute_tool("echo", {"message": "hello"}, ctx)
    assert result.raw_formatted == "hello"
    assert result.formatted == '<tool_result name="echo">\nhello\n</tool_result>'
    assert result.to_dict() == {
        "success": True,
        "data": {"message": "hello", "count": 1},
        "formatted": result.formatted,
    }


@pytest.mark.parametrize(
    ("observation", "expected"),
    [("confirmation", "ok"), ("summary", "done: exercise_count=1"), ("full", '{\n "exercise_count": 1\n}')],
)
def test_handlers_without_text_get_an_observation_of_their_category(
    ctx: ToolContext, observation: ObservationCategory, expected: str
) -> None:
    """An empty handler text falls back to the tool's observation category (docs/contracts.md §11.2 (observations and status messages))."""
    tool = dataclasses.replace(NESTED_TOOL, observation=observation)
    args = {
        "workout": {
            "title": "t",
            "intensity": "light",
            "exercises": [{"exercise_type": "hold", "exercise_name": "Plank", "hold_sec": [30]}],
        }
    }
    with registry_override(tool):
        result = execute_tool(tool.name, args, ctx)
    assert result.raw_formatted == expected


def test_observation_helpers() -> None:
    """The three observation sizes: bare confirmation, one-line summary (long values cut), full JSON."""
    assert confirmation() == "ok"
    assert confirmation("deleted", note="was temporary") == "deleted (was temporary)"
    assert summary("saved", "preference", None, "x" * 200) == f"saved: preference, {'x' * 79}…"
    assert full_data({"a": [1]}) == '{\n "a": [\n  1\n ]\n}'
    assert full_data("already text") == "already text"


def test_a_shortened_text_ends_at_a_word() -> None:
    """A cut preference or note reads "…stop if the knee…", not half a word, in the limit it is given."""
    note = "Pain-free range, stop if the knee aches and keep the box high"
    assert shorten(note, 30) == "Pain-free range, stop if the…"
    assert shorten(note, 100) == note
    assert len(shorten(note, 30)) <= 30


def test_result_to_dict_includes_delivered_artifact_and_id() -> None:
    """to_dict gives the seed 000 ToolOutput, with the delivered artifact and its id when present."""
    artifact = {"artifact_id": "art_1", "type": "exercise_list"}
    result = ToolResult(
        tool_name="message_notify_user",
        success=True,
        data={"message": "m"},
        formatted="f",
        raw_formatted="r",
        artifact_id="art_1",
        delivered_artifact=artifact,
    )
    assert result.to_dict() == {
        "success": True,
        "data": {"message": "m"},
        "formatted": "f",
        "artifact": artifact,
        "artifact_id": "art_1",
    }


@pytest.mark.parametrize(
    "name", ["status", "knowledge", "done", "error", "message_preview", "exercise_preview", "unknown_tool"]
)
def test_a_tool_named_like_a_stream_frame_type_is_refused(name: str) -> None:
    """A tool's frames carry its name as `type` (docs/contracts.md §7.2), so the protocol's own frame types
    cannot be tool names: registering one raises, naming the reserved names, and nothing is registered."""
    with registry_override():
        with pytest.raises(ReservedToolNameError, match=f"'{name}'.*reserved"):
            register(make_tool(name))
        with pytest.raises(UnknownToolError):
            get_tool(name)
