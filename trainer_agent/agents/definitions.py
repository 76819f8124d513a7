"""The built-in agents, defined through the registry: the trainer, the initializer and the sub-agents.

Each agent's prompt and the shape of its answer are here or below (`subagents`: the sub-agents' input and
output models and checks; `trainer_agent.prompts`: the trainer's system prompt); the code that runs them is
above (`initializer`, the loop, `subagents.run_subagent`) and reads them from the registry.
"""

from __future__ import annotations

from typing import Any

from datasources_app.sources import STABLE_PREFIX_SOURCES, all_sources
from trainer_agent.agents.registry import (
    ALL_TOOLS,
    INITIALIZER_AGENT_ID,
    TRAINER_AGENT_ID,
    AgentDefinition,
    AgentRegistry,
    RetryPolicy,
    agent_registry,
)
from trainer_agent.agents.subagents import SMS_MAX_CHARS, SPECS, register_validators
from trainer_agent.prompts import SYSTEM_PROMPT

# --- The initializer's answer (docs/contracts.md §9.1) and prompt ---------------------------------------------
REASONS: tuple[str, ...] = ("not_in_context", "expand_range", "refresh_state")


def selectable_sources() -> list[str]:
    """Sources the initializer may append (the stable prefix is always in the user data block)."""
    return [s.name for s in all_sources() if s.name not in STABLE_PREFIX_SOURCES]


def selection_schema() -> dict[str, Any]:
    """The strict JSON schema of docs/contracts.md §9.1 (initializer output) (every property required, no extras, as strict mode needs)."""
    return {
        "type": "object",
        "properties": {
            "reasoning": {"type": "string"},
            "append_knowledge": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "source": {"type": "string", "enum": selectable_sources()},
                        "reason": {"type": "string", "enum": list(REASONS)},
                        "days_back": {"type": ["integer", "null"]},
                    },
                    "required": ["source", "reason", "days_back"],
                    "additionalProperties": False,
                },
            },
            "use_existing": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["reasoning", "append_knowledge", "use_existing"],
        "additionalProperties": False,
    }


INITIALIZER_PROMPT = """You choose which user data a personal-trainer agent needs before it answers.
You get the user's message, their date today (weekday and ISO date) and the data sources already loaded in the
conversation (with their parameters). Read "this week", "last month" or "Thursday" against that date.
Rules:
- Append only what the request needs and is not already loaded with enough scope. Prefer fewer sources.
- Workout requests need category_goals, muscle_goals, active_preferences and workout_history (days_back 14).
- Goal setting needs category_goals and muscle_goals. Preferences need active_preferences.
- Statistics and progress need workout_history with a wider days_back (30-90) and category_goals.
- Changing or logging the current workout needs current_workout_session (reason refresh_state).
- Schedules and plans, and any question about a day ("what's on Thursday?", "tomorrow", "this week"), need
  scheduled_workouts and workout_plans; milestones need milestone_goals.
- Small talk needs nothing.
- If a source is loaded but with too short a range, append it again with reason expand_range and the days_back
  you need. Use refresh_state for data the conversation may have changed.
- List the loaded sources you rely on in use_existing.
Available sources:
{sources}"""


def trainer_definition() -> AgentDefinition:
    """The loop's agent: every request carries this temperature and max_tokens (`AgentContext.to_request`).

    No retry policy: a failed call is retried by the SDK (LLM_MAX_RETRIES), then ends the turn. The model is
    PRIMARY_MODEL, which the loop reads for a turn that names no model.
    """
    return AgentDefinition(
        agent_id=TRAINER_AGENT_ID,
        description="The personal trainer: one tool per iteration until idle or a question.",
        model="settings.PRIMARY_MODEL",
        prompt=SYSTEM_PROMPT,
        temperature=0.7,
        max_tokens=8192,
        tools=(ALL_TOOLS,),
        output_format="text",
    )


def initializer_definition() -> AgentDefinition:
    """Read by `initialize_context` on every turn: model, prompt, schema, temperature and max_tokens.

    No retry policy: a failed call is retried by the SDK (LLM_MAX_RETRIES); then the `offline` model answers.
    """
    return AgentDefinition(
        agent_id=INITIALIZER_AGENT_ID,
        description="Chooses the knowledge to append before each turn (strict JSON).",
        model="settings.INITIALIZER_MODEL",
        prompt=INITIALIZER_PROMPT,
        temperature=0.0,
        max_tokens=1024,
        output_format="json",
        output_schema=selection_schema(),
    )


# Sub-agents run on the primary model (the `offline` one without API keys answers from the same request).
SUBAGENT_MODEL = "settings.PRIMARY_MODEL"
SUBAGENT_RETRY = RetryPolicy(max_retries=1, retry_on=("validation_error",))

# The prompts say what to do; the shape of the answer is the output model's JSON schema (sent with every request,
# its field descriptions included), and the checks that may reject it are the registered validators. Every
# request's user message is {"input": ..., "user": facts}, the facts being `subagents.user_facts`.
USER_FACTS = """The user's facts (today, goals, injuries, preferences, recent_training, location and its equipment,
units) are in "user": train around every injury (never an exercise it rules out, not even suggested in notes; saying
what is left out, "no squats for the knee", is fine), follow the preferences, use only that equipment."""

FITNESS_PLAN_PROMPT = f"""You design multi-week training plans. From the input (goal, weeks, days_per_week, deload_weeks,
preferred_days, start_date, extras) return one JSON plan: weeks numbered from 1; week k runs from start_date + 7(k-1)
days for 7 days and has exactly days_per_week sessions on the training weekdays, each with its ISO date and that date's
weekday; progressive overload from week to week; lighter deload weeks (volume about 60 %, RPE 6) exactly on
deload_weeks (every 5th week when not given); what the user asked to add to every session (extras) at the end of each
session's prescription, as the draft words it. {USER_FACTS}"""

MICROCYCLE_PROMPT = f"""You lay out one week of a training plan. Return the seven days Monday to Sunday: each either a
rest day (rest true, duration_minutes 0) or a training day with its ISO date, focus, session, duration and
prescription. The training days are exactly input.calendar's scheduled and completed sessions, on their dates as they
are now (a session the user moved is trained on its new date); without a calendar, the plan week's days. days_per_week
is the number of training days; a deload week is lighter. With input.workouts true, write each training day's workout
in markdown, progressing from the recent training; a training day's markdown, when given, is its draft written out and
passes every check: start from it and keep each lift's name as it is written there ("Leg Press (pain-free range)").
{USER_FACTS}"""

WORKOUT_MESSAGE_PROMPT = f"""Turn the day's workout into one SMS of at most {SMS_MAX_CHARS} characters: a title line,
one short line per exercise ("1. Dumbbell Row: 3×10 @ 16kg (rest 90s)"; "each hand" after a load only when its implements
is 2; a circuit's or superset's rounds said once, its exercises without sets or rest), and a short motivating last line.
Abbreviate rather than cut; if it still does not fit, end the list with "…and N more". Loads in the user's units."""

WORKOUT_STRUCTURE_PROMPT = f"""Extract the workout in the markdown as JSON: title and exercises in order (order 1..N),
each with exercise_name, exercise_type (reps, hold, duration, intervals) and that type's fields, muscles_utilized and
goals_addressed with shares summing to 1, and a one-sentence reasoning. Loads and distances in the user's units.
{USER_FACTS} Replace an exercise that breaks these with a safe one for the same muscles. The input's draft, when
given, is a workout for this day in the output's schema that already respects all of these: start from it, keep the
markdown's exercises and numbers where they are safe, and take the draft's exercises, muscles, goals and loads where
the markdown leaves something out or breaks a rule."""


def subagent_definitions() -> list[AgentDefinition]:
    def subagent(
        agent_id: str, description: str, prompt: str, validator: str, *, temperature: float, max_tokens: int
    ) -> AgentDefinition:
        return AgentDefinition(
            agent_id=agent_id,
            description=description,
            model=SUBAGENT_MODEL,
            prompt=prompt,
            temperature=temperature,
            max_tokens=max_tokens,
            output_format="json",
            output_schema=SPECS[agent_id].output_model,
            validators=(validator,),
            retry_policy=SUBAGENT_RETRY,
        )

    return [
        subagent(
            "fitness_plan",
            "A multi-week plan (default 12 weeks, deloads in weeks 5 and 10) from goals, schedule, equipment.",
            FITNESS_PLAN_PROMPT,
            "fitness_plan.consistent",
            temperature=0.4,
            max_tokens=16_384,
        ),
        subagent(
            "microcycle",
            "The 7 days of one plan week: focus or rest per day.",
            MICROCYCLE_PROMPT,
            "microcycle.week",
            temperature=0.3,
            max_tokens=8192,
        ),
        subagent(
            "workout_message",
            f"The day's workout as one SMS of at most {SMS_MAX_CHARS} characters.",
            WORKOUT_MESSAGE_PROMPT,
            "workout_message.sms_length",
            temperature=0.3,
            max_tokens=1024,
        ),
        subagent(
            "workout_structure",
            "A markdown workout as JSON that passes the workout validation for the user.",
            WORKOUT_STRUCTURE_PROMPT,
            "workout_structure.valid_workout",
            temperature=0.1,
            max_tokens=4096,
        ),
    ]


def builtin_definitions() -> list[AgentDefinition]:
    return [trainer_definition(), initializer_definition(), *subagent_definitions()]


def load_agents(registry: AgentRegistry = agent_registry) -> AgentRegistry:
    """Register the built-in agents (replacing earlier copies) and validate the whole registry."""
    register_validators(registry)
    for definition in builtin_definitions():
        if definition.agent_id in registry.ids():
            registry.replace(definition)
        else:
            registry.register(definition)
    registry.validate()
    return registry
