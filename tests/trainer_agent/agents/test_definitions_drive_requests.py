"""Agent definitions are the source of truth: the trainer's and the initializer's calls carry their
definition's model, prompt, temperature and max_tokens, as the real OpenAI SDK puts them on the wire."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest
from pytest_django import Settings

from tests.support.llm_fakes import (
    ScriptedTransport,
    openai_completion,
    openai_json_completion,
    openai_provider_for,
)
from trainer_agent.agents.registry import agent_registry, get_agent
from trainer_agent.llm.providers import override_provider
from trainer_agent.turns import run_turn

TRAINER_MODEL = "gpt-4o"
INITIALIZER_MODEL = "gpt-4o-mini"
SELECTION = {"reasoning": "small talk", "append_knowledge": [], "use_existing": []}


@pytest.fixture(autouse=True)
def _restore_definitions() -> Iterator[None]:
    """Tests replace the built-in definitions; the originals come back afterwards."""
    originals = [get_agent("trainer"), get_agent("initializer")]
    yield
    for definition in originals:
        agent_registry.replace(definition)


def trainer_wire() -> ScriptedTransport:
    """The trainer's model: notify, then idle."""
    return ScriptedTransport(
        openai_completion([("message_notify_user", {"message": "Hi"})], model=TRAINER_MODEL),
        openai_completion([("idle", {"reason": "done"})], model=TRAINER_MODEL),
    )


def run_turn_on(trainer: ScriptedTransport, initializer: ScriptedTransport, initializer_model: str) -> None:
    with (
        override_provider(TRAINER_MODEL, openai_provider_for(trainer)),
        override_provider(initializer_model, openai_provider_for(initializer)),
    ):
        run_turn(user_id=uuid.uuid4(), message="hello", model=TRAINER_MODEL)


def sampling(body: dict[str, Any]) -> tuple[Any, Any]:
    return body.get("temperature"), body.get("max_completion_tokens")


@pytest.mark.django_db
def test_the_built_in_definitions_reach_the_wire(settings: Settings) -> None:
    """The trainer's temperature (0.7) and max_tokens, and the initializer's (0.0, 1024), are sent."""
    settings.INITIALIZER_MODEL = INITIALIZER_MODEL
    trainer, initializer = trainer_wire(), ScriptedTransport(openai_json_completion(SELECTION))
    run_turn_on(trainer, initializer, INITIALIZER_MODEL)

    assert [sampling(body) for body in trainer.bodies] == [(0.7, 8192), (0.7, 8192)]
    assert [sampling(body) for body in initializer.bodies] == [(0.0, 1024)]
    assert initializer.bodies[0]["model"] == INITIALIZER_MODEL


@pytest.mark.django_db
def test_a_replaced_definition_changes_the_next_requests(settings: Settings) -> None:
    """registry.replace of the trainer and the initializer changes what the next turn sends: sampling, prompt,
    and the initializer's model."""
    settings.INITIALIZER_MODEL = "offline"
    agent_registry.replace(
        replace(get_agent("trainer"), prompt="You are a terse coach.", temperature=0.2, max_tokens=1234)
    )
    agent_registry.replace(
        replace(get_agent("initializer"), model="gpt-4.1-mini", temperature=0.5, max_tokens=300)
    )
    trainer, initializer = trainer_wire(), ScriptedTransport(openai_json_completion(SELECTION))
    run_turn_on(trainer, initializer, "gpt-4.1-mini")

    assert [sampling(body) for body in trainer.bodies] == [(0.2, 1234), (0.2, 1234)]
    assert trainer.bodies[0]["messages"][0]["content"].startswith("You are a terse coach.\n\n<user_data>")
    assert [sampling(body) for body in initializer.bodies] == [(0.5, 300)]
    assert initializer.bodies[0]["model"] == "gpt-4.1-mini"


@pytest.mark.django_db
def test_a_turn_without_a_model_runs_the_trainer_definition_s_model(settings: Settings) -> None:
    """With no `model` in the request the turn uses the trainer definition's model, not PRIMARY_MODEL directly:
    a definition naming gpt-4o sends the turn to gpt-4o although PRIMARY_MODEL is the offline coach."""
    settings.INITIALIZER_MODEL = "offline"
    settings.PRIMARY_MODEL = "offline"
    agent_registry.replace(replace(get_agent("trainer"), model=TRAINER_MODEL))
    trainer = trainer_wire()
    with override_provider(TRAINER_MODEL, openai_provider_for(trainer)):
        result = run_turn(user_id=uuid.uuid4(), message="hello")
    assert [body["model"] for body in trainer.bodies] == [TRAINER_MODEL, TRAINER_MODEL]
    assert result.response["messages"] == ["Hi"]


@pytest.mark.django_db
def test_the_trainers_tool_list_is_what_the_model_is_offered_and_may_run(settings: Settings) -> None:
    """A trainer definition that names its tools: the wire carries only those (in the registry's order, so the
    cached prefix is stable), and a registered tool outside the list gets the unknown-tool observation."""
    settings.INITIALIZER_MODEL = "offline"
    agent_registry.replace(replace(get_agent("trainer"), tools=("idle", "message_notify_user")))
    trainer = ScriptedTransport(
        openai_completion([("set_units", {"weight": "lb"})], model=TRAINER_MODEL),
        openai_completion([("message_notify_user", {"message": "Hi"})], model=TRAINER_MODEL),
        openai_completion([("idle", {"reason": "done"})], model=TRAINER_MODEL),
    )
    user_id = uuid.uuid4()
    with override_provider(TRAINER_MODEL, openai_provider_for(trainer)):
        run_turn(user_id=user_id, message="use pounds", model=TRAINER_MODEL)

    offered = [[tool["function"]["name"] for tool in body["tools"]] for body in trainer.bodies]
    assert offered == [["message_notify_user", "idle"]] * 3
    refusal = trainer.bodies[1]["messages"][-1]["content"]
    assert "Unknown tool: set_units" in refusal and "Available tools: message_notify_user, idle" in refusal
    from datasources_app.selectors import get_settings

    assert get_settings(user_id=user_id).weight_unit == "kg"  # the tool outside the list never ran


@pytest.mark.django_db
def test_the_built_in_trainer_is_offered_every_registered_tool(settings: Settings) -> None:
    from tools_app.registry import all_tools

    settings.INITIALIZER_MODEL = "offline"
    trainer = trainer_wire()
    with override_provider(TRAINER_MODEL, openai_provider_for(trainer)):
        run_turn(user_id=uuid.uuid4(), message="hello", model=TRAINER_MODEL)
    assert [tool["function"]["name"] for tool in trainer.bodies[0]["tools"]] == [t.name for t in all_tools()]
