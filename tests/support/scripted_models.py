"""Scripted models for live-server tests and benchmarks, read from the JSON file named by AGENT_TEST_SCRIPTS.

Test-only: installed by the app `tests.support.apps.ScriptedModelsConfig`, which only the test servers' settings
(`tests.support.server_settings`, chosen by `live_server.server_env` when it is given a script) list. Production's
settings (`config.settings`) never load it, whatever the environment says. A daphne or worker subprocess started
by a test or a benchmark then serves extra model ids, e.g. ``scripted-slow``, played by ``ScriptedProvider``.
The file:

    {"models": {"scripted-slow": {"delay_s": 1.0, "steps": [
        {"tool": "message_notify_user", "args": {"message": "Working on it"}},
        {"tool": "idle", "args": {"reason": "done"}, "wait_for_file": "/tmp/gates/{user_id}-2"}]}}}

With a script installed the registry also has the tool `scripted_note` (`{text, gate}`): it stores a
preference with `text` (a write of the tool's own), then waits for the file `gate` before answering, so a test
can kill a worker while a tool runs.

Each turn plays the steps from the first: step k answers the turn's k-th model call (counted from the
request, so concurrent turns do not share a cursor), cycling if the turn asks for more. ``wait_for_file``
holds the answer until that file exists (tests use it to pause a turn at a known point). In string
arguments ``{user_id}`` is the caller and ``{last_artifact_id}`` the newest artifact in the context.
"""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from datasources_app.services import create_preference
from tools_app.registry import UnknownToolError, get_tool, register
from tools_app.types import Tool, ToolContext, ToolOutcome
from trainer_agent.llm.models import ModelConfig, register_model
from trainer_agent.llm.providers import register_provider_factory
from trainer_agent.llm.scripted import ScriptedProvider, tool_response
from trainer_agent.llm.types import LLMError, LLMRequest, LLMResponse, Provider

ENV_VAR = "AGENT_TEST_SCRIPTS"
TERMINAL_TOOLS = frozenset({"idle", "message_ask_user"})
GATE_TIMEOUT_S = 60.0
_ARTIFACT_ID = re.compile(r'<artifact type="[^"]*" id="(art_[^"]+)">')

_providers: dict[str, Provider] = {}


def install_from_env() -> list[str]:
    """Register the scripted models of $AGENT_TEST_SCRIPTS (if set); the model ids registered."""
    path = os.environ.get(ENV_VAR, "")
    return install_scripts(Path(path)) if path else []


def install_scripts(path: Path) -> list[str]:
    spec = json.loads(path.read_text())
    for model_id, script in spec["models"].items():
        register_model(
            ModelConfig(
                id=model_id,
                provider="scripted",
                display_name=f"Scripted ({model_id})",
                context_window=200_000,
                max_output_tokens=8192,
                input_per_mtok=0.0,
                output_per_mtok=0.0,
                cache_read_per_mtok=0.0,
                cache_write_per_mtok=0.0,
                min_cacheable_tokens=0,
                notes="Test/benchmark script (AGENT_TEST_SCRIPTS).",
            ),
            replace=True,
        )
        _providers[model_id] = ScriptedProvider(
            [TurnScript(script["steps"])], delay_s=float(script.get("delay_s", 0.0)), cycle=True
        )
    register_provider_factory("scripted", lambda model: _providers[model.id])
    _register_note_tool()
    return list(spec["models"])


class NoteInput(BaseModel):
    text: str
    gate: str = ""


def _note(args: NoteInput, ctx: ToolContext) -> ToolOutcome:
    preference = create_preference(user_id=ctx.user_id, preference_type="temporary", description=args.text)
    if args.gate:
        wait_for_file(Path(args.gate))
    return ToolOutcome(success=True, data={"preference_id": str(preference.pk)}, text=f"Noted: {args.text}")


def _register_note_tool() -> None:
    try:
        get_tool("scripted_note")
    except UnknownToolError:
        register(
            Tool(
                name="scripted_note",
                description="Test tool: store a note, then wait for a gate file.",
                input_model=NoteInput,
                handler=_note,
                category="data",
                priority=990,
            )
        )


class TurnScript:
    """The step callable: picks the step for this call from the request itself."""

    def __init__(self, steps: list[dict[str, Any]]) -> None:
        if not steps:
            raise ValueError("a script needs at least one step")
        self.steps = steps

    def __call__(self, request: LLMRequest) -> LLMResponse:
        step = self.steps[calls_this_turn(request) % len(self.steps)]
        values = {"user_id": request.user_id or "", "last_artifact_id": last_artifact_id(request)}
        gate = step.get("wait_for_file")
        if gate:
            wait_for_file(Path(str(gate).format(**values)))
        return tool_response(step["tool"], fill(step.get("args") or {}, values))


def calls_this_turn(request: LLMRequest) -> int:
    """Model calls already answered in the current turn: tool calls since the last terminal tool call."""
    count = 0
    for message in request.messages:
        if message.get("role") != "assistant" or not isinstance(message.get("content"), list):
            continue
        for block in message["content"]:
            if isinstance(block, dict) and block.get("type") == "tool_use":
                count = 0 if block.get("name") in TERMINAL_TOOLS else count + 1
    return count


def last_artifact_id(request: LLMRequest) -> str:
    found = ""
    for message in request.messages:
        content = message.get("content")
        blocks = content if isinstance(content, list) else [{"type": "text", "text": str(content)}]
        for block in blocks:
            if isinstance(block, dict) and block.get("type") == "text":
                matches = _ARTIFACT_ID.findall(str(block.get("text", "")))
                if matches:
                    found = matches[-1]
    return found


def fill(value: Any, values: dict[str, str]) -> Any:
    if isinstance(value, str):
        return value.format(**values)
    if isinstance(value, list):
        return [fill(item, values) for item in value]
    if isinstance(value, dict):
        return {key: fill(item, values) for key, item in value.items()}
    return value


def wait_for_file(path: Path) -> None:
    deadline = time.monotonic() + GATE_TIMEOUT_S
    while not path.exists():
        if time.monotonic() > deadline:
            raise LLMError("timeout", f"scripted gate {path} was not opened within {GATE_TIMEOUT_S:.0f} s")
        time.sleep(0.01)
