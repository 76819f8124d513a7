"""The shapes every tool shares: its definition, the context it runs in, and what it returns.

A tool is data (`Tool`): a name, a description written for the model, a pydantic input model from
which the JSON schema sent to the LLM is generated, and a handler. The handler receives the validated
input and a `ToolContext` and returns a `ToolOutcome`; `registry.execute_tool` turns that into a
`ToolResult` (XML-wrapped observation, status text, artifacts, timing) for the loop.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel

if TYPE_CHECKING:
    from sessions_app.models import AgentSession

ToolCategory = Literal[
    "communication",
    "workout",
    "data",
    "location",
    "goals",
    "preferences",
    "logging",
    "timers",
    "calendar",
    "analytics",
    "state",
]

# docs/contracts.md §11.2 (observations and status messages): how much of a result the model needs to see.
#   confirmation: "ok"-style acknowledgement (~5 tokens)
#   summary:      what changed, in one line (~20 tokens)
#   full:         the data itself, because the model must reason over it
ObservationCategory = Literal["confirmation", "summary", "full"]


@dataclass
class ToolContext:
    """Who a tool runs for and in which session. Passed to every handler as its second argument."""

    user_id: uuid.UUID
    session: AgentSession
    # Lets a caller (e.g. a sub-agent or a test) supply the workout the workout tools act on instead of
    # the one persisted for the user.
    current_workout_override: dict[str, Any] | None = None
    # What the call's `Tool.prepare` returned, when the caller ran it first (`registry.prepare_call`).
    prepared: Any = None


@dataclass
class ToolOutcome:
    """What a handler returns.

    `text` is the observation the model reads (unwrapped; `execute_tool` adds the XML tags). When empty,
    a fallback is built from `data` according to the tool's observation category.
    `artifact` is a NEW artifact this call created ({artifact_id, type, schema_version, title, summary,
    auto_start, payload}); the loop stores it as an `artifact` event.
    `delivered_artifact` is an existing artifact this call hands to the user (message_notify_user);
    the loop includes it in the SSE tool_result frame.
    `tell_user` is what a good coach would tell the user about a success, in one or two plain sentences (no
    ids, in the user's units); `execute_tool` closes the observation with it (`formatting.tell_the_user`).
    """

    success: bool
    data: dict[str, Any]
    text: str = ""
    artifact: dict[str, Any] | None = None
    delivered_artifact: dict[str, Any] | None = None
    tell_user: str = ""


@dataclass
class ToolResult:
    """The outcome of one `execute_tool` call, ready to record and stream."""

    tool_name: str
    success: bool
    data: dict[str, Any]
    formatted: str
    raw_formatted: str
    artifact: dict[str, Any] | None = None
    artifact_id: str | None = None
    delivered_artifact: dict[str, Any] | None = None
    status_message: str | None = None
    terminates_loop: bool = False
    duration_ms: int = 0

    @property
    def status_phase(self) -> Literal["done", "error"]:
        """The SSE `status` phase (docs/contracts.md §7.2 (SSE frames)) matching `status_message`."""
        return "done" if self.success else "error"

    def to_dict(self) -> dict[str, Any]:
        """The seed 000 ToolOutput: `{success, data, formatted, artifact?, artifact_id?}`.

        `artifact` is the artifact delivered to the user (docs/contracts.md §7.2 (SSE frames): present only when message_notify_user delivered an artifact); a newly created artifact is announced by its id only.
        """
        out: dict[str, Any] = {"success": self.success, "data": self.data, "formatted": self.formatted}
        if self.delivered_artifact is not None:
            out["artifact"] = self.delivered_artifact
        if self.artifact_id is not None:
            out["artifact_id"] = self.artifact_id
        return out


@dataclass(frozen=True)
class Tool[InputT: BaseModel]:
    """A tool definition (docs/contracts.md §11.1 (tool execution), with a priority)."""

    name: str
    description: str
    input_model: type[InputT]
    handler: Callable[[InputT, ToolContext], ToolOutcome]
    category: ToolCategory
    # Position in the tool list sent to the model: lower first, ties broken by name. The list must not
    # change between requests, or the prompt cache misses.
    priority: int
    observation: ObservationCategory = "summary"
    status_start: str | None = None
    status_done: str | None = None
    # Shown when the call fails; only for tools that show status messages at all.
    status_error: str | None = None
    # Seed 001 argument spellings accepted on input, mapped to the canonical (seed 000) names.
    aliases: Mapping[str, str] = field(default_factory=dict)
    # The loop stops after this tool (idle, message_ask_user).
    terminates_loop: bool = False
    # The part of the call that waits on something slow and writes nothing to the user's data (a sub-agent's
    # model call: create_workout_plan's plan). The loop runs it (`registry.prepare_call`) before the
    # transaction that holds the tool's writes and its result, so no transaction waits on a model (on SQLite
    # an open transaction holds the database's write lock); the handler finds its return value in
    # `ToolContext.prepared`, and runs it itself when a caller did not (tests, evals, sub-agents).
    prepare: Callable[[InputT, ToolContext], Any] | None = None
    # Run the handler in a savepoint so a failure leaves no partial writes. Read-only tools that fan out to
    # worker threads (fetch_data) turn it off: threads cannot see rows of an open transaction, so
    # datasources_app.sources.fetch_many falls back to sequential fetching inside one.
    atomic: bool = True
    # False: the handler writes nothing to the database and returns at once (the communication tools). It runs
    # without a savepoint, inside the one transaction that stores the model's answer, the call's result and the
    # next request (trainer_agent.loop): nothing to roll back, and followers would see its call and result at the
    # same moment anyway. A database error in it fails that transaction (the turn ends in `error`) instead of
    # becoming a failed result.
    writes: bool = True
