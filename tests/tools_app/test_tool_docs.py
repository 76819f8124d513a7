"""docs/tools.md is generated from the registry (`manage.py generate_tool_docs`) and must not go stale."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from pydantic import BaseModel, Field

from tools_app.management.commands.generate_tool_docs import DOCS_PATH, argument_rows, render_tool_docs
from tools_app.registry import all_tools, llm_input_schema, registry_override
from tools_app.types import Tool, ToolContext, ToolOutcome


def test_docs_tools_md_is_up_to_date() -> None:
    """The committed docs/tools.md equals what the registry generates; regenerate with `make docs`."""
    assert DOCS_PATH.read_text(encoding="utf-8") == render_tool_docs(all_tools()), (
        "docs/tools.md is stale: run `DEBUG=1 .venv/bin/python manage.py generate_tool_docs`"
    )


def test_every_tool_has_a_section_with_status_and_arguments() -> None:
    """Each tool's name, category, status messages and every top-level argument appear in the page."""
    text = render_tool_docs(all_tools())
    for tool in all_tools():
        section = text.split(f"## `{tool.name}`\n", 1)[1].split("\n## ", 1)[0]
        assert f"category `{tool.category}`" in section
        if tool.status_start:
            assert f'"{tool.status_start}" → "{tool.status_done}"' in section
        for name in llm_input_schema(tool.input_model)["properties"]:
            assert f"| `{name}` |" in section
        for alias in tool.aliases:
            assert f"`{alias}` →" in section


class _Nested(BaseModel):
    reps: list[int] = Field(description="Per set.")


class _Sample(BaseModel):
    count: int = Field(default=3, ge=1, description="How many | which.")
    kind: str = Field(json_schema_extra={"enum": ["a", "b"]}, description="The kind.")
    items: list[_Nested] = Field(description="Things.")


def _handler(args: _Sample, ctx: ToolContext) -> ToolOutcome:
    return ToolOutcome(success=True, data={})


SAMPLE = Tool(
    name="sample_tool",
    description="Does a sample thing.",
    input_model=_Sample,
    handler=_handler,
    category="data",
    priority=1,
    status_start="Sampling...",
    status_done="Sampled",
    aliases={"n": "count"},
)


def test_argument_table_flattens_nested_fields_and_escapes_pipes() -> None:
    """Types, required flags, defaults and nested list items come from the JSON schema."""
    rows = list(argument_rows(llm_input_schema(_Sample)))
    assert rows == [
        ("count", "integer (≥ 1)", False, "How many | which. Default: `3`."),
        ("kind", "string: one of `a`, `b`", True, "The kind."),
        ("items", "list of object", True, "Things."),
        ("items[].reps", "list of integer", True, "Per set."),
    ]
    with registry_override(SAMPLE):
        text = render_tool_docs(all_tools())
    assert "| `count` | integer (≥ 1) | no | How many \\| which. Default: `3`. |" in text
    assert 'status "Sampling..." → "Sampled"' in text
    assert "Also accepted (seed 001 spellings, renamed on input): `n` → `count`." in text


def test_command_writes_the_file_and_check_fails_when_stale(tmp_path: Path) -> None:
    """Without --check the file is written; --check passes on a fresh file and raises on a stale one."""
    target = tmp_path / "tools.md"
    with pytest.raises(CommandError, match="stale"):
        call_command("generate_tool_docs", "--check", "--output", str(target))
    call_command("generate_tool_docs", "--output", str(target))
    assert target.read_text(encoding="utf-8") == render_tool_docs(all_tools())
    call_command("generate_tool_docs", "--check", "--output", str(target))
    target.write_text(target.read_text(encoding="utf-8") + "edited by hand\n", encoding="utf-8")
    with pytest.raises(CommandError, match="stale"):
        call_command("generate_tool_docs", "--check", "--output", str(target))
