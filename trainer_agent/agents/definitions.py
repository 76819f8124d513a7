"""The built-in agents, defined through the registry: the trainer and the initializer."""

from __future__ import annotations

from tools_app.registry import all_tools
from trainer_agent.agents.callbacks import register_default_callbacks
from trainer_agent.agents.registry import AgentDefinition, AgentRegistry, RetryPolicy, agent_registry
from trainer_agent.initializer import INITIALIZER_PROMPT, selection_schema
from trainer_agent.prompts import SYSTEM_PROMPT


def trainer_definition() -> AgentDefinition:
    return AgentDefinition(
        agent_id="trainer",
        description="The personal trainer: one tool per iteration until idle or a question.",
        model="settings.PRIMARY_MODEL",
        prompt=SYSTEM_PROMPT,
        temperature=0.7,
        max_tokens=8192,
        tools=tuple(tool.name for tool in all_tools()),
        output_format="text",
        retry_policy=RetryPolicy(max_retries=0, retry_on=("model_error",)),
    )


def initializer_definition() -> AgentDefinition:
    return AgentDefinition(
        agent_id="initializer",
        description="Chooses the knowledge to append before each turn (strict JSON).",
        model="settings.INITIALIZER_MODEL",
        prompt=INITIALIZER_PROMPT,
        temperature=0.0,
        max_tokens=1024,
        output_format="json",
        output_schema=selection_schema(),
    )


def builtin_definitions() -> list[AgentDefinition]:
    return [trainer_definition(), initializer_definition()]


def load_agents(registry: AgentRegistry = agent_registry) -> AgentRegistry:
    """Register the built-in agents (replacing earlier copies) and validate the whole registry."""
    for definition in builtin_definitions():
        if definition.agent_id in registry.ids():
            registry.replace(definition)
        else:
            registry.register(definition)
    registry.validate()
    register_default_callbacks()
    return registry
