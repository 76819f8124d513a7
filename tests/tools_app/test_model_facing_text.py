"""What a model is sent (tool specs, the agents' prompts and answer schemas) names none of our docs: a model never
sees docs/contracts.md, so "docs/contracts.md §12.3" in a description only costs tokens and invites a guess."""

from __future__ import annotations

import json

import pytest

from trainer_agent.agents.registry import agent_registry
from trainer_agent.context import trainer_tool_specs
from trainer_agent.initializer import _sources_catalogue
from trainer_agent.prompts import SYSTEM_PROMPT

DOC_REFERENCES = ("docs/", "§")


def sent_to_a_model() -> dict[str, str]:
    """Every text a model call carries besides the conversation, by what it is."""
    texts = {
        f"tool {spec.name}": json.dumps(spec.__dict__, ensure_ascii=False) for spec in trainer_tool_specs()
    }
    texts["trainer system prompt"] = SYSTEM_PROMPT
    texts["initializer's sources"] = _sources_catalogue()
    for agent_id in agent_registry.ids():
        agent = agent_registry.get(agent_id)
        texts[f"{agent_id} prompt"] = agent.prompt or ""
        schema = agent.output_schema
        if schema is not None:
            as_json = schema if isinstance(schema, dict) else schema.model_json_schema()
            texts[f"{agent_id} answer schema"] = json.dumps(as_json, ensure_ascii=False)
    return texts


def test_every_sub_agent_and_the_trainer_are_covered() -> None:
    """The check reads the tools, the trainer's and initializer's prompts and each sub-agent's schema."""
    texts = sent_to_a_model()
    assert {"trainer system prompt", "workout_structure answer schema", "fitness_plan answer schema"} <= set(
        texts
    )
    assert sum(name.startswith("tool ") for name in texts) > 10


@pytest.mark.parametrize("reference", DOC_REFERENCES)
def test_nothing_sent_to_a_model_names_our_docs(reference: str) -> None:
    """No tool schema, sub-agent schema or prompt holds 'docs/' or '§' (those stay in code comments)."""
    found = [name for name, text in sent_to_a_model().items() if reference in text]
    assert found == []
