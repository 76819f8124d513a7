"""The agent registry: every agent is configuration, validated at start (seeds 003 and 004).

An `AgentDefinition` names its model, prompt, tools (from the tool registry), output format, validators,
sub-agents (with an input transform and a run condition, both by name) and retry policy. Nothing in it is
code: validators, transforms and conditions are registered functions referenced by name, so a definition
can be checked as a whole before anything runs. `validate()` raises `AgentConfigError` naming the agent.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal

from django.conf import settings
from pydantic import BaseModel

from tools_app.registry import UnknownToolError, get_tool
from trainer_agent.llm.models import UnknownModel, get_model

OutputFormat = Literal["text", "markdown", "json"]
RetryOn = Literal["validation_error", "model_error"]
SETTING_PREFIX = "settings."
ALWAYS = "always"
ON_DEMAND = "on_demand"
# The two agents a turn runs itself (`turns` and `initializer`); every other registered agent is a sub-agent.
TRAINER_AGENT_ID = "trainer"
INITIALIZER_AGENT_ID = "initializer"
TURN_AGENTS = frozenset({TRAINER_AGENT_ID, INITIALIZER_AGENT_ID})

type Validator = Callable[[Any], list[str]]
type Transform = Callable[[Any], Any]
type Condition = Callable[[Any], bool]


class AgentConfigError(ValueError):
    """An agent definition that cannot run; the message names the agent and the problem."""


class UnknownAgentError(LookupError):
    """No agent with this id is registered."""


@dataclass(frozen=True)
class RetryPolicy:
    """How often a sub-agent asks its model again (`run_subagent`): on `validation_error`, with the problems
    appended to the prompt; on `model_error`, once the SDK's own retries have given up."""

    max_retries: int = 0
    retry_on: tuple[RetryOn, ...] = ("validation_error",)


@dataclass(frozen=True)
class SubAgentRef:
    """A sub-agent run on the parent's output: `transform` shapes its input, `condition` decides if it runs."""

    agent_id: str
    transform: str | None = None
    condition: str = ALWAYS


# In an agent's `tools`: every registered tool, in the registry's stable order (the trainer's, so a tool a
# deployment or a test registers reaches it without a second list to keep in step).
ALL_TOOLS = "*"


@dataclass(frozen=True)
class AgentDefinition:
    agent_id: str
    model: str  # a model id, or "settings.NAME" to read the id from a setting when the agent runs
    prompt: str
    description: str = ""
    temperature: float = 0.7
    max_tokens: int = 4096
    tools: tuple[str, ...] = ()
    output_format: OutputFormat = "text"
    output_schema: type[BaseModel] | dict[str, Any] | None = None
    validators: tuple[str, ...] = ()
    sub_agents: tuple[SubAgentRef, ...] = ()
    # Only sub-agents re-ask their model. Without a policy an agent's calls are retried by the SDK alone, on
    # transient errors (rate limits, overload, timeouts), LLM_MAX_RETRIES times: the trainer and initializer.
    retry_policy: RetryPolicy | None = None

    def tool_names(self) -> tuple[str, ...] | None:
        """The tools this agent is offered and may run; None for every registered tool (`ALL_TOOLS`)."""
        return None if ALL_TOOLS in self.tools else self.tools

    def resolved_model(self) -> str:
        if self.model.startswith(SETTING_PREFIX):
            return str(getattr(settings, self.model.removeprefix(SETTING_PREFIX)))
        return self.model


class AgentRegistry:
    def __init__(self) -> None:
        self._agents: dict[str, AgentDefinition] = {}
        self._validators: dict[str, Validator] = {}
        self._transforms: dict[str, Transform] = {}
        self._conditions: dict[str, Condition] = {
            ALWAYS: lambda result: True,
            ON_DEMAND: lambda result: False,
        }
        self._lock = threading.Lock()

    # --- agents ---------------------------------------------------------------------------------------
    def register(self, definition: AgentDefinition) -> AgentDefinition:
        with self._lock:
            if definition.agent_id in self._agents:
                raise AgentConfigError(f"Agent {definition.agent_id!r} is already registered; use replace()")
            self._agents[definition.agent_id] = definition
        return definition

    def replace(self, definition: AgentDefinition) -> AgentDefinition:
        """Swap one registered agent for another with the same id (tests), leaving the others alone."""
        with self._lock:
            if definition.agent_id not in self._agents:
                raise UnknownAgentError(f"Cannot replace unknown agent {definition.agent_id!r}")
            self._agents[definition.agent_id] = definition
        return definition

    def get(self, agent_id: str) -> AgentDefinition:
        try:
            return self._agents[agent_id]
        except KeyError:
            raise UnknownAgentError(
                f"Unknown agent {agent_id!r}. Registered agents: {', '.join(sorted(self._agents)) or 'none'}"
            ) from None

    def ids(self) -> list[str]:
        return list(self._agents)

    def clear(self) -> None:
        with self._lock:
            self._agents.clear()

    # --- named helpers --------------------------------------------------------------------------------
    def register_validator(self, name: str, validator: Validator) -> None:
        self._validators[name] = validator

    def register_transform(self, name: str, transform: Transform) -> None:
        self._transforms[name] = transform

    def register_condition(self, name: str, condition: Condition) -> None:
        self._conditions[name] = condition

    def validator(self, name: str) -> Validator:
        return self._validators[name]

    def transform(self, name: str) -> Transform:
        return self._transforms[name]

    def condition(self, name: str) -> Condition:
        return self._conditions[name]

    # --- validation -----------------------------------------------------------------------------------
    def validate(self, agent_ids: Iterable[str] | None = None) -> None:
        """Check every (or the named) definition; the first problem raises AgentConfigError."""
        for agent_id in agent_ids if agent_ids is not None else list(self._agents):
            self._validate_one(self.get(agent_id))
        self._check_cycles()

    def _validate_one(self, agent: AgentDefinition) -> None:
        def fail(problem: str) -> AgentConfigError:
            return AgentConfigError(f"Agent {agent.agent_id!r}: {problem}")

        if not agent.prompt.strip():
            raise fail("missing prompt")
        try:
            get_model(agent.resolved_model())
        except UnknownModel as exc:
            raise fail(str(exc)) from None
        for tool in agent.tool_names() or ():
            try:
                get_tool(tool)
            except UnknownToolError:
                raise fail(f"unknown tool {tool!r}") from None
        if not 0.0 <= agent.temperature <= 2.0:
            raise fail(f"temperature {agent.temperature} is outside 0-2")
        if agent.max_tokens <= 0:
            raise fail(f"max_tokens must be positive, got {agent.max_tokens}")
        if agent.output_format == "json" and agent.output_schema is None:
            raise fail("output_format 'json' needs an output_schema")
        if agent.output_format == "json" and agent.tools:
            # One structured answer, no tool loop: tools listed here would be silently ignored.
            raise fail("an agent with output_format 'json' runs no tools; remove its tools")
        if agent.retry_policy is not None and agent.retry_policy.max_retries < 0:
            raise fail("retry_policy.max_retries must be >= 0")
        for name in agent.validators:
            if name not in self._validators:
                raise fail(f"unknown validator {name!r}")
        for sub in agent.sub_agents:
            if sub.agent_id not in self._agents:
                raise fail(f"unknown sub-agent {sub.agent_id!r}")
            if sub.transform is not None and sub.transform not in self._transforms:
                raise fail(f"unknown input transform {sub.transform!r} for sub-agent {sub.agent_id!r}")
            if sub.condition not in self._conditions:
                raise fail(f"unknown run condition {sub.condition!r} for sub-agent {sub.agent_id!r}")

    def _check_cycles(self) -> None:
        done: set[str] = set()

        def visit(agent_id: str, path: list[str]) -> None:
            if agent_id in path:
                cycle = " → ".join([*path[path.index(agent_id) :], agent_id])
                raise AgentConfigError(f"Agent {agent_id!r}: sub-agent cycle {cycle}")
            if agent_id in done or agent_id not in self._agents:
                return
            for sub in self._agents[agent_id].sub_agents:
                visit(sub.agent_id, [*path, agent_id])
            done.add(agent_id)

        for agent_id in list(self._agents):
            visit(agent_id, [])

    def dependency_graph(self) -> dict[str, dict[str, list[str]]]:
        return {
            agent.agent_id: {"tools": list(agent.tools), "sub_agents": [s.agent_id for s in agent.sub_agents]}
            for agent in self._agents.values()
        }


agent_registry = AgentRegistry()


def get_agent(agent_id: str) -> AgentDefinition:
    return agent_registry.get(agent_id)
