"""The agents wired into the service at start (`TrainerAgentConfig.ready`): the top of `trainer_agent.agents`.

The package's modules import one way, each only those listed below it:

    wiring       → definitions, subagents, week, callbacks (and tools_app.plan_builder's registration hooks)
    week         → subagents, callbacks                 (the week chain, a task of its own)
    definitions  → subagents, registry                  (the built-in agents: prompts, schemas, models)
    subagents    → callbacks, registry                  (running a sub-agent; its input/output models, briefs, checks)
    callbacks    → registry                             (hooks around every agent's run)
    registry                                            (AgentDefinition, AgentRegistry, the agent ids)

Outside the package, the turn's own code (`context`, `initializer`, `loop`, `turns`) reads the registry and fires
the callbacks; nothing in the package imports it back. No caller branches on the model id: every agent asks its
definition's model through the provider interface, the built-in `offline` model included.
"""

from __future__ import annotations

from tools_app.plan_builder import set_plan_generator, set_week_preparer
from trainer_agent.agents.callbacks import register_default_callbacks
from trainer_agent.agents.definitions import load_agents
from trainer_agent.agents.subagents import plan_with_fitness_plan_agent
from trainer_agent.agents.week import enqueue_week_preparation, register_week_callbacks


def wire_agents() -> None:
    """Register and validate the built-in agents, the callbacks (logging, metrics, the week chain's
    `week.day_failed`), and the sub-agents tools_app asks for by registration: `create_workout_plan` → the
    `fitness_plan` sub-agent, `prepare_week` → the week chain as a task."""
    load_agents()
    register_default_callbacks()
    register_week_callbacks()
    set_plan_generator(plan_with_fitness_plan_agent)
    set_week_preparer(enqueue_week_preparation)
