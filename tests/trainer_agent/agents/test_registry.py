"""Agent registry validation, replace(), and callbacks around agent runs."""

from __future__ import annotations

from dataclasses import replace

import pytest

from trainer_agent.agents.callbacks import AgentMetrics, AgentRun, CallbackRegistry
from trainer_agent.agents.definitions import load_agents
from trainer_agent.agents.registry import AgentConfigError, AgentDefinition, AgentRegistry, SubAgentRef
from trainer_agent.prompts import SYSTEM_PROMPT


def agent(agent_id: str, **changes: object) -> AgentDefinition:
    base = AgentDefinition(agent_id=agent_id, model="offline", prompt="Do the thing.")
    return replace(base, **changes)  # type: ignore[arg-type]


def test_builtin_agents_load_and_the_trainer_uses_the_tool_registry() -> None:
    """The trainer and initializer validate; the trainer's prompt and tools come from the project."""
    registry = load_agents(AgentRegistry())
    trainer = registry.get("trainer")
    assert trainer.prompt == SYSTEM_PROMPT
    assert trainer.tool_names() is None  # every registered tool, message_notify_user and idle included
    assert registry.get("initializer").output_format == "json"


@pytest.mark.parametrize(
    ("definitions", "message"),
    [
        ([agent("a", tools=("no_such_tool",))], "Agent 'a': unknown tool 'no_such_tool'"),
        ([agent("b", model="gpt-9000")], "Agent 'b': Unknown model 'gpt-9000'"),
        ([agent("c", prompt="  ")], "Agent 'c': missing prompt"),
        ([agent("d", sub_agents=(SubAgentRef("ghost"),))], "Agent 'd': unknown sub-agent 'ghost'"),
        ([agent("e", output_format="json")], "Agent 'e': output_format 'json' needs an output_schema"),
        ([agent("f", validators=("nope",))], "Agent 'f': unknown validator 'nope'"),
        (
            [agent("j", output_format="json", output_schema={"type": "object"}, tools=("idle",))],
            "Agent 'j': an agent with output_format 'json' runs no tools; remove its tools",
        ),
        (
            [agent("x", sub_agents=(SubAgentRef("y"),)), agent("y", sub_agents=(SubAgentRef("x"),))],
            "sub-agent cycle x → y → x",
        ),
        (
            [agent("g", sub_agents=(SubAgentRef("h", transform="missing"),)), agent("h")],
            "Agent 'g': unknown input transform 'missing'",
        ),
    ],
)
def test_invalid_configurations_are_rejected_with_a_clear_message(
    definitions: list[AgentDefinition], message: str
) -> None:
    """Each invalid definition fails validation with a message naming the agent and the problem."""
    registry = AgentRegistry()
    for definition in definitions:
        registry.register(definition)
    with pytest.raises(AgentConfigError, match=message):
        registry.validate()


def test_replace_swaps_one_agent_and_leaves_the_others() -> None:
    """replace() changes one definition; the other agents are the same objects as before."""
    registry = AgentRegistry()
    first, second = registry.register(agent("one")), registry.register(agent("two"))
    registry.replace(agent("one", prompt="Mocked."))
    assert registry.get("one").prompt == "Mocked." and registry.get("one") is not first
    assert registry.get("two") is second
    registry.clear()
    assert registry.ids() == []


def test_callbacks_fire_in_order_on_success() -> None:
    """On success the on_success and always hooks run in registration order; on_failure does not."""
    fired: list[str] = []
    callbacks = CallbackRegistry()
    callbacks.register("first", lambda run: fired.append("first"), when="always")
    callbacks.register("ok", lambda run: fired.append("ok"), when="on_success")
    callbacks.register("bad", lambda run: fired.append("bad"), when="on_failure")
    callbacks.register("last", lambda run: fired.append("last"), when="always")
    assert callbacks.run_agent("a", lambda: 42) == 42
    assert fired == ["first", "ok", "last"]


def test_callbacks_fire_in_order_on_failure_and_the_error_propagates() -> None:
    """On failure the on_failure and always hooks run in order and the exception still propagates."""
    fired: list[str] = []
    callbacks = CallbackRegistry()
    callbacks.register("ok", lambda run: fired.append("ok"), when="on_success")
    callbacks.register("bad", lambda run: fired.append(f"bad:{run.error}"), when="on_failure")
    callbacks.register("always", lambda run: fired.append("always"), when="always")

    def boom() -> None:
        raise RuntimeError("model down")

    with pytest.raises(RuntimeError, match="model down"):
        callbacks.run_agent("a", boom)
    assert fired == ["bad:model down", "always"]


def test_metrics_callback_counts_runs_failures_and_duration() -> None:
    """The metrics callback counts runs and failures per agent."""
    metrics = AgentMetrics()
    metrics.record(AgentRun("plan", True, 5))
    metrics.record(AgentRun("plan", False, 7))
    metrics.record(AgentRun("sms", True, 1))
    assert metrics.snapshot() == {
        "plan": {"runs": 2, "failures": 1, "duration_ms": 12},
        "sms": {"runs": 1, "failures": 0, "duration_ms": 1},
    }


def test_a_failing_callback_does_not_break_the_run() -> None:
    """A hook that raises is logged and the next hooks still run."""
    fired: list[str] = []
    callbacks = CallbackRegistry()

    def broken(run: AgentRun) -> None:
        raise ZeroDivisionError("hook bug")

    callbacks.register("broken", broken, when="always")
    callbacks.register("after", lambda run: fired.append("after"), when="always")
    assert callbacks.run_agent("a", lambda: "ok") == "ok"
    assert fired == ["after"]
