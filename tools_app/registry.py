"""The tool registry (docs/contracts.md §11.1 (tool execution)): one place that knows every tool, its schema, and how to run it.

- `register(tool)` adds a tool (tool modules call it at import; `ToolsAppConfig.ready()` imports them).
- `all_tools()` / `tool_specs()` list tools in a stable order: by `priority`, then name. The list is part
  of the cached prompt prefix, so it must not change between requests.
  Priority bands: communication 0-99, workout 100-199, data 200-299, location 300-399, goals,
  preferences, logging, timers, calendar, analytics 400-899, state (idle) 900+.
- `tool_specs()` gives `{name, description, input_schema}` per tool. The schema is generated from the
  tool's pydantic input model, so what the model is told and what is validated cannot drift apart. It is
  cleaned to a portable subset valid as both an Anthropic `input_schema` and OpenAI function
  `parameters`: `$ref`s inlined (no `$defs`), pydantic's `title`s and discriminator hints dropped,
  `oneOf` → `anyOf`, `const` → one-value `enum`, `X | None` → `X`.
- `execute_tool(name, args, ctx)` normalises seed 001 argument spellings, validates, runs the handler
  inside a savepoint, and returns a `ToolResult`. Only an unknown tool name raises; bad arguments and
  handler exceptions come back as failed results whose text tells the model how to fix its call.
  Validation is strict about names: an argument (or a field of a nested object) the tool does not know is
  an error naming it and the accepted ones (pydantic's `extra="forbid"`, applied per call so the same
  models can still read stored data leniently), never silently dropped.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import logging
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from django.db import transaction
from pydantic import BaseModel, ValidationError

from tools_app.formatting import fallback_observation, shorten, tell_the_user, wrap_in_xml
from tools_app.types import Tool, ToolContext, ToolOutcome, ToolResult

logger = logging.getLogger(__name__)

DEFAULT_STATUS_ERROR = "Something went wrong"

# Python type names pydantic puts in error locations of smart unions, mapped to JSON schema types.
_PYTHON_TO_JSON_TYPE = {
    "str": "string",
    "int": "integer",
    "float": "number",
    "bool": "boolean",
    "none": "null",
    "list": "array",
    "dict": "object",
}


class UnknownToolError(LookupError):
    """Raised for a tool name that is not registered."""

    def __init__(self, name: str) -> None:
        super().__init__(f"Unknown tool: {name}")
        self.tool_name = name


class DuplicateToolError(ValueError):
    """Raised when a second tool is registered under a name already taken."""


# The stream's own frame types (docs/contracts.md §7.2): a tool's frames carry its name as `type`, so a tool
# under one of these names would send frames a client takes for the protocol's (a `done` while the turn runs).
RESERVED_TOOL_NAMES = frozenset(
    {"status", "knowledge", "done", "error", "message_preview", "exercise_preview", "unknown_tool"}
)


class ReservedToolNameError(ValueError):
    """Raised when a tool is registered under one of the stream's frame types (`RESERVED_TOOL_NAMES`)."""


# Bumped by every change of what the active registry holds (a registration, `clear`, an override entered or
# left): a caller that keeps something derived from the specs keeps it only for one generation.
_generation = 0


def _changed() -> None:
    global _generation
    _generation += 1


def registry_generation() -> int:
    """A number that changes whenever the active registry's tools may have (see `_generation`)."""
    return _generation


class ToolRegistry:
    """A set of tools keyed by name, with their LLM-facing specs generated once at registration."""

    def __init__(self, tools: Iterable[Tool[Any]] = ()) -> None:
        self._tools: dict[str, Tool[Any]] = {}
        self._specs: dict[str, dict[str, Any]] = {}
        for tool in tools:
            self.register(tool)

    def register(self, tool: Tool[Any]) -> Tool[Any]:
        if tool.name in RESERVED_TOOL_NAMES:
            reserved = ", ".join(sorted(RESERVED_TOOL_NAMES))
            raise ReservedToolNameError(
                f"A tool cannot be named {tool.name!r}: the stream's frame types are reserved ({reserved})"
            )
        if tool.name in self._tools:
            raise DuplicateToolError(f"A tool named {tool.name} is already registered")
        spec = {
            "name": tool.name,
            "description": tool.description,
            "input_schema": llm_input_schema(tool.input_model),
        }
        self._tools[tool.name] = tool
        self._specs[tool.name] = spec
        _changed()
        return tool

    def get(self, name: str) -> Tool[Any]:
        try:
            return self._tools[name]
        except KeyError:
            raise UnknownToolError(name) from None

    def all(self) -> list[Tool[Any]]:
        return sorted(self._tools.values(), key=lambda tool: (tool.priority, tool.name))

    def specs(self, names: Iterable[str] | None = None) -> list[dict[str, Any]]:
        if names is None:
            chosen = self.all()
        else:
            wanted = {self.get(name).name for name in names}
            chosen = [tool for tool in self.all() if tool.name in wanted]
        # Copies, so a caller that edits a spec cannot change what the next request sends.
        return [copy.deepcopy(self._specs[tool.name]) for tool in chosen]

    def clear(self) -> None:
        self._tools.clear()
        self._specs.clear()
        _changed()


_active = ToolRegistry()


def register(tool: Tool[Any]) -> Tool[Any]:
    """Add a tool to the registry. A name registered twice raises `DuplicateToolError`, one of the stream's
    frame types (`RESERVED_TOOL_NAMES`) `ReservedToolNameError`."""
    return _active.register(tool)


def get_tool(name: str) -> Tool[Any]:
    """The tool called `name`; raises `UnknownToolError("Unknown tool: {name}")` when there is none."""
    return _active.get(name)


def all_tools() -> list[Tool[Any]]:
    """Every registered tool, ordered by priority then name."""
    return _active.all()


def tool_specs(names: Iterable[str] | None = None) -> list[dict[str, Any]]:
    """`{name, description, input_schema}` for every tool (or the named ones), in registry order."""
    return _active.specs(names)


def clear() -> None:
    """Remove every tool from the active registry. For tests; prefer `registry_override`."""
    _active.clear()


def replace(tools: Iterable[Tool[Any]]) -> None:
    """Make `tools` the whole content of the active registry. For tests; prefer `registry_override`."""
    _active.clear()
    for tool in tools:
        _active.register(tool)


@contextmanager
def registry_override(*tools: Tool[Any], include_registered: bool = False) -> Iterator[ToolRegistry]:
    """Run a block against a registry holding only `tools` (plus the registered ones if asked)."""
    global _active
    previous = _active
    _active = ToolRegistry([*(previous.all() if include_registered else ()), *tools])
    _changed()
    try:
        yield _active
    finally:
        _active = previous
        _changed()


# ---------------------------------------------------------------------------------------------------
# Execution


def prepare_call(name: str, args: Any, ctx: ToolContext) -> ToolContext:
    """The context to run this call with (`execute_tool`): for a tool with a `prepare` step, that step run
    now, outside the caller's transaction, its value in `prepared` (a failure of it: a failed ToolOutcome the
    handler returns). The context as it is for any other tool, or for arguments `execute_tool` will refuse."""
    try:
        tool = get_tool(name)
    except UnknownToolError:
        return ctx
    if tool.prepare is None or not isinstance(args, dict):
        return ctx
    try:
        parsed = _parsed(tool, args)
    except ValidationError:
        return ctx
    try:
        prepared = tool.prepare(parsed, ctx)
    except Exception as exc:
        logger.exception(
            "tool.prepare_failed", extra={"tool_name": tool.name, "session_id": str(ctx.session.pk)}
        )
        prepared = _failure(f"Tool {tool.name} failed: {type(exc).__name__}: {exc}")
    return dataclasses.replace(ctx, prepared=prepared)


def execute_tool(name: str, args: Any, ctx: ToolContext) -> ToolResult:
    """Run one tool call (docs/contracts.md §11.1 (tool execution)). Raises only `UnknownToolError`."""
    tool = get_tool(name)
    started = time.perf_counter()
    outcome = _run(tool, args, ctx)
    duration_ms = round((time.perf_counter() - started) * 1000)

    raw_formatted = outcome.text or fallback_observation(tool.observation, outcome.data)
    artifact_id = _artifact_id(outcome)
    if outcome.success:
        raw_formatted = tell_the_user(raw_formatted, outcome.tell_user)
        status_message = tool.status_done
    else:
        status_message = (tool.status_error or DEFAULT_STATUS_ERROR) if tool.status_start else None
    logger.info(
        "tool.executed",
        extra={
            "tool_name": tool.name,
            "success": outcome.success,
            "duration_ms": duration_ms,
            "session_id": str(ctx.session.pk),
            "artifact_id": artifact_id,
        },
    )
    return ToolResult(
        tool_name=tool.name,
        success=outcome.success,
        data=outcome.data,
        formatted=wrap_in_xml(tool_name=tool.name, text=raw_formatted, is_error=not outcome.success),
        raw_formatted=raw_formatted,
        artifact=outcome.artifact,
        artifact_id=artifact_id,
        delivered_artifact=outcome.delivered_artifact,
        status_message=status_message,
        terminates_loop=tool.terminates_loop and outcome.success,
        duration_ms=duration_ms,
    )


def _run(tool: Tool[Any], args: Any, ctx: ToolContext) -> ToolOutcome:
    if not isinstance(args, dict):
        return _failure(
            f"Invalid arguments for {tool.name}: expected a JSON object of named arguments, "
            f"got {json_type_name(args)}"
        )
    try:
        parsed = _parsed(tool, args)
    except ValidationError as exc:
        return _failure(describe_validation_error(tool, exc))
    try:
        # A savepoint: a handler that fails half-way leaves no partial writes, and on PostgreSQL the
        # surrounding transaction stays usable for recording the failure. A tool that writes nothing needs none.
        if not tool.atomic or not tool.writes:
            return tool.handler(parsed, ctx)
        with transaction.atomic():
            return tool.handler(parsed, ctx)
    except Exception as exc:
        logger.exception(
            "tool.failed",
            extra={
                "tool_name": tool.name,
                "session_id": str(ctx.session.pk),
                "user_id": str(ctx.user_id),
                "error_type": type(exc).__name__,
            },
        )
        return _failure(f"Tool {tool.name} failed: {type(exc).__name__}: {exc}")


def _parsed(tool: Tool[Any], args: dict[str, Any]) -> BaseModel:
    """The call's arguments as the tool's input model (seed 001 spellings mapped); ValidationError if not."""
    return tool.input_model.model_validate(normalise_arguments(tool, args), extra="forbid")


def _failure(message: str) -> ToolOutcome:
    return ToolOutcome(success=False, data={"error": message}, text=message)


def _artifact_id(outcome: ToolOutcome) -> str | None:
    for artifact in (outcome.artifact, outcome.delivered_artifact):
        if artifact and artifact.get("artifact_id"):
            return str(artifact["artifact_id"])
    return None


def normalise_arguments(tool: Tool[Any], args: dict[str, Any]) -> dict[str, Any]:
    """Rename seed 001 argument spellings to the canonical ones; the canonical name wins if both are given."""
    normalised = dict(args)
    for alias, canonical in tool.aliases.items():
        if alias in normalised:
            value = normalised.pop(alias)
            normalised.setdefault(canonical, value)
    return normalised


def describe_validation_error(tool: Tool[Any], exc: ValidationError) -> str:
    """One message naming every bad field and what it expects, so the model can correct its call.

    e.g. "Invalid arguments for generate_workout: workout.exercises.0.sets: Field required
    (expected integer ≥1)"; unknown names are grouped per object with the names it accepts, e.g.
    "unknown argument(s) start_date (accepted: days_back)".
    """
    schema = tool.input_model.model_json_schema()
    defs = schema.get("$defs", {})
    problems = []
    unknown: dict[tuple[int | str, ...], list[str]] = {}
    for error in exc.errors(include_url=False):
        if error["type"] == "extra_forbidden" and error["loc"]:
            unknown.setdefault(error["loc"][:-1], []).append(str(error["loc"][-1]))
            continue
        path, node = _locate(schema, defs, error["loc"])
        expected = _describe_schema(node, defs) if node is not None else None
        hints = []
        if expected:
            hints.append(f"expected {expected}")
        if error["type"] != "missing":
            hints.append(f"got {_preview(error.get('input'))}")
        hint = f" ({', '.join(hints)})" if hints else ""
        problems.append(f"{path or '(arguments)'}: {error['msg']}{hint}")
    named = [_unknown_names_problem(schema, defs, parent, names) for parent, names in unknown.items()]
    return f"Invalid arguments for {tool.name}: " + "; ".join([*named, *problems])


def _unknown_names_problem(
    schema: dict[str, Any], defs: dict[str, Any], parent: tuple[int | str, ...], names: list[str]
) -> str:
    """'unknown argument(s) foo (accepted: a, b)' for the top level; 'x.0: unknown field(s) ...' below it."""
    path, node = _locate(schema, defs, parent)
    accepted = list(_unwrap_optional(node, defs).get("properties", {})) if node is not None else []
    listed = f"accepted: {', '.join(accepted)}" if accepted else "it takes none"
    if not path:
        return f"unknown argument(s) {', '.join(names)} ({listed})"
    return f"{path}: unknown field(s) {', '.join(names)} ({listed})"


def _locate(
    schema: dict[str, Any], defs: dict[str, Any], loc: tuple[int | str, ...]
) -> tuple[str, dict[str, Any] | None]:
    """Follow an error location through the schema: the dotted path to show, and the field's schema.

    Union branch selectors that pydantic puts in locations (discriminator tags, type names) pick the
    branch and are left out of the path shown to the model.
    """
    shown: list[str] = []
    node: dict[str, Any] | None = _deref(schema, defs)
    for segment in loc:
        if node is None:
            shown.append(str(segment))
            continue
        branch = _union_branch(node, defs, segment)
        if branch is not None:
            node = branch
            continue
        node = _unwrap_optional(node, defs)
        if isinstance(segment, int):
            items = node.get("items")
            node = _deref(items, defs) if isinstance(items, dict) else None
        else:
            props = node.get("properties", {})
            node = _deref(props[segment], defs) if segment in props else None
        shown.append(str(segment))
    return ".".join(shown), node


def _union_branch(node: dict[str, Any], defs: dict[str, Any], segment: int | str) -> dict[str, Any] | None:
    """The branch of a union `segment` selects, when `segment` is a tag or type name rather than a field."""
    branches = [_deref(b, defs) for b in node.get("oneOf", node.get("anyOf", []))]
    if not branches or not isinstance(segment, str):
        return None
    tag_field = node.get("discriminator", {}).get("propertyName")
    for branch in branches:
        if tag_field and branch.get("properties", {}).get(tag_field, {}).get("const") == segment:
            return branch
        if branch.get("title") == segment:
            return branch
        base = segment.split("[", 1)[0].lower()
        if branch.get("type") == _PYTHON_TO_JSON_TYPE.get(base):
            return branch
    return None


def _unwrap_optional(node: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    """For `X | None`, the schema of X; any other node unchanged."""
    branches = node.get("anyOf")
    if branches:
        non_null = [_deref(b, defs) for b in branches if b.get("type") != "null"]
        if len(non_null) == 1:
            return non_null[0]
    return node


def _deref(node: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    ref = node.get("$ref")
    if not ref:
        return node
    target = defs[ref.rsplit("/", 1)[-1]]
    siblings = {key: value for key, value in node.items() if key != "$ref"}
    return {**target, **siblings}


def _describe_schema(node: dict[str, Any], defs: dict[str, Any]) -> str:
    """A short human description of what a schema node accepts, e.g. 'integer ≥1' or 'non-empty string'."""
    node = _deref(node, defs)
    if "const" in node:
        return json.dumps(node["const"])
    if "enum" in node:
        return "one of " + ", ".join(json.dumps(value) for value in node["enum"])
    branches = node.get("oneOf") or node.get("anyOf")
    if branches:
        tag_field = node.get("discriminator", {}).get("propertyName")
        if tag_field:
            tags = [_deref(b, defs).get("properties", {}).get(tag_field, {}).get("const") for b in branches]
            return f"object whose {tag_field} is one of " + ", ".join(json.dumps(tag) for tag in tags)
        return " or ".join(_describe_schema(branch, defs) for branch in branches)
    kind = node.get("type")
    if kind == "string":
        return _describe_string(node)
    if kind in ("integer", "number"):
        bounds = [
            f"{symbol}{node[key]}"
            for key, symbol in (
                ("minimum", "≥"),
                ("exclusiveMinimum", ">"),
                ("maximum", "≤"),
                ("exclusiveMaximum", "<"),
            )
            if key in node
        ]
        return " ".join([kind, ", ".join(bounds)]) if bounds else kind
    if kind == "array":
        items = node.get("items")
        described = f"list of {_describe_schema(items, defs)}" if isinstance(items, dict) else "list"
        if "minItems" in node:
            described += f" (at least {node['minItems']})"
        return described
    if kind == "object":
        props = node.get("properties", {})
        required = set(node.get("required", []))
        if not props:
            return "object"
        fields = [f"{name}{'' if name in required else '?'}" for name in props]
        return "object with fields " + ", ".join(fields)
    return str(kind) if kind else "a value"


def _describe_string(node: dict[str, Any]) -> str:
    described = "string"
    if node.get("minLength") == 1:
        described = "non-empty string"
    elif "minLength" in node:
        described = f"string of at least {node['minLength']} characters"
    if "maxLength" in node:
        described += f" of at most {node['maxLength']} characters"
    if "pattern" in node:
        described += f" matching {node['pattern']}"
    if "format" in node:
        described += f" ({node['format']})"
    return described


def _preview(value: Any) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        text = repr(value)
    return shorten(text, 60)


def json_type_name(value: Any) -> str:
    """The JSON type of a decoded value ("null", "boolean", "number", "string", "array", "object")."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


# ---------------------------------------------------------------------------------------------------
# Schemas for the LLM APIs


def llm_input_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The model's JSON schema, reduced to what both Anthropic and OpenAI tool schemas accept."""
    raw = model.model_json_schema()
    defs = raw.get("$defs", {})
    schema = _clean_schema(raw, defs, ())
    if schema.get("type") != "object":
        raise TypeError(f"Tool input model {model.__name__} must produce an object schema")
    schema.setdefault("properties", {})
    return schema


def _clean_schema(node: dict[str, Any], defs: dict[str, Any], seen: tuple[str, ...]) -> dict[str, Any]:
    ref = node.get("$ref")
    if ref:
        name = ref.rsplit("/", 1)[-1]
        if name in seen:
            raise TypeError(f"Recursive model {name} cannot be inlined into a tool schema")
        target = _clean_schema(defs[name], defs, (*seen, name))
        siblings = _clean_schema({k: v for k, v in node.items() if k != "$ref"}, defs, seen)
        return {**target, **siblings}

    cleaned: dict[str, Any] = {}
    for key, value in node.items():
        if key in ("title", "discriminator", "$defs"):
            continue
        if key == "default" and value is None:
            continue
        if key == "properties":
            cleaned[key] = {name: _clean_schema(sub, defs, seen) for name, sub in value.items()}
        elif key in ("items", "additionalProperties", "not") and isinstance(value, dict):
            cleaned[key] = _clean_schema(value, defs, seen)
        elif key in ("anyOf", "oneOf", "allOf", "prefixItems"):
            target_key = "anyOf" if key == "oneOf" else key
            cleaned[target_key] = [_clean_schema(sub, defs, seen) for sub in value]
        elif key == "const":
            cleaned.setdefault("enum", [value])
        else:
            cleaned[key] = value

    branches = cleaned.get("anyOf")
    if branches and len(branches) == 2 and {"type": "null"} in branches:
        # `X | None` with a None default: the model omits the argument instead of sending null.
        (other,) = [branch for branch in branches if branch != {"type": "null"}]
        del cleaned["anyOf"]
        cleaned = {**other, **cleaned}
    all_of = cleaned.get("allOf")
    if all_of and len(all_of) == 1:
        del cleaned["allOf"]
        cleaned = {**all_of[0], **cleaned}
    return cleaned
