"""Acceptance: a 300-turn scripted session stays inside a small window by checkpointing."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from datasources_app.services import save_current_workout
from sessions_app.models import AgentSession, AgentSessionEvent, EventType
from sessions_app.services import create_session
from trainer_agent.context import AgentContext, build_context, trainer_tool_specs
from trainer_agent.llm.models import ModelConfig, registered_model
from trainer_agent.llm.providers import override_provider
from trainer_agent.llm.scripted import ScriptedProvider, tool_response
from trainer_agent.llm.types import LLMRequest, LLMResponse
from trainer_agent.prompts import SYSTEM_PROMPT
from trainer_agent.turns import run_turn

TURNS = int(__import__("os").environ.get("LONG_TURNS", "300"))
# Conversation room between the fixed part of the request (tools, system prompt) and the checkpoint threshold:
# small enough that a long session must checkpoint many times.
CONVERSATION_ROOM = 5_000
THRESHOLD = 0.8
CATEGORY_CHOICES = (
    {"Strength": 50, "Hypertrophy": 30, "Mobility": 20},
    {"Endurance": 40, "Strength": 40, "Balance": 20},
    {"Power": 60, "Mobility": 40},
)
MESSAGES = (
    "Give me a quick upper body workout with dumbbells",
    "How did my training go last month? Show my progress",
    "Can you swap the push-ups for something easier on the wrists",
    "What should I focus on this week?",
    "I finished the first three exercises, log them please",
    "Thanks! Any tips for sleep and recovery after leg day?",
    "Schedule a leg session for next Monday",
)


def tiny_model(window: int) -> ModelConfig:
    return ModelConfig(
        id="tiny-context",
        provider="scripted",
        display_name="Tiny context (tests)",
        context_window=window,
        max_output_tokens=1024,
        input_per_mtok=1.0,
        output_per_mtok=5.0,
        cache_read_per_mtok=0.1,
        cache_write_per_mtok=1.25,
        min_cacheable_tokens=0,
    )


def turn_script(turn: int) -> tuple[str, list[LLMResponse], dict[str, Any]]:
    """The user's message, the model's responses and the state the turn changes (for the assertions)."""
    changes: dict[str, Any] = {}
    steps: list[LLMResponse] = []
    if turn % 10 == 3:
        description = f"No jumping exercises, note {turn}"
        changes["preference"] = description
        steps.append(
            tool_response(
                "set_preference",
                {"description": description, "guidance": "Avoid jumps and plyometrics."},
            )
        )
        message = f"I prefer no jumping from now on (turn {turn})"
    elif turn % 10 == 7:
        goals = CATEGORY_CHOICES[(turn // 10) % len(CATEGORY_CHOICES)]
        changes["goals"] = goals
        steps.append(tool_response("set_goals", {"goal_type": "category", "category_goals": goals}))
        message = f"Change my goals to {', '.join(goals)} please (turn {turn})"
    else:
        message = f"{MESSAGES[turn % len(MESSAGES)]} (turn {turn})"
    steps.append(tool_response("message_notify_user", {"message": f"Reply {turn}: " + "ok, done. " * 8}))
    steps.append(tool_response("idle", {"reason": "answered"}))
    return message, steps, changes


def context_text(context: AgentContext) -> str:
    parts = [context.user_data_xml]
    for message in context.messages:
        content = message["content"]
        for block in content if isinstance(content, list) else [{"type": "text", "text": content}]:
            if block.get("type") == "text":
                parts.append(str(block.get("text", "")))
            elif block.get("type") == "tool_result":
                parts.append(str(block.get("content", "")))
    return "\n".join(parts)


def workout(title: str) -> dict[str, Any]:
    return {
        "title": title,
        "exercises": [
            {
                "order": 1,
                "exercise_name": "Goblet Squat",
                "exercise_type": "reps",
                "sets": 3,
                "reps": [10] * 3,
            },
            {
                "order": 2,
                "exercise_name": "Dumbbell Row",
                "exercise_type": "reps",
                "sets": 3,
                "reps": [12] * 3,
            },
        ],
    }


@pytest.mark.django_db
def test_three_hundred_turns_stay_inside_the_window_and_keep_the_state(
    demo_user: uuid.UUID, settings: Any
) -> None:
    """300 turns never exceed the window; each checkpoint advances the start and keeps goals, prefs, workout."""
    settings.CHECKPOINT_THRESHOLD = THRESHOLD
    fixed = LLMRequest(
        model="tiny-context",
        system_prompt=SYSTEM_PROMPT,
        user_data_xml="",
        messages=[],
        tools=trainer_tool_specs(),
    ).estimated_tokens()
    window = int((fixed + CONVERSATION_ROOM) / THRESHOLD)
    session = create_session(user_id=demo_user)
    save_current_workout(user_id=demo_user, workout=workout("Checkpoint Legs A"), artifact_id="art_aaaaaa01")
    expected: dict[str, Any] = {"workout": "Checkpoint Legs A", "preference": "No burpees", "goals": None}
    script = [turn_script(turn) for turn in range(1, TURNS + 1)]
    provider = ScriptedProvider([step for _, steps, _ in script for step in steps])

    starts: list[int] = []
    event_count = 0
    checkpoints_seen = 0
    with registered_model(tiny_model(window)), override_provider("tiny-context", provider):
        for turn, (message, _, changes) in enumerate(script, start=1):
            if turn == 150:
                save_current_workout(
                    user_id=demo_user, workout=workout("Checkpoint Legs B"), artifact_id="art_bbbbbb02"
                )
                expected["workout"] = "Checkpoint Legs B"
            run_turn(user_id=demo_user, message=message, session=session, model="tiny-context")
            expected.update({key: value for key, value in changes.items()})

            count = AgentSessionEvent.objects.filter(session=session).count()
            assert count > event_count  # append-only: the history only grows
            event_count = count
            checkpoints = AgentSessionEvent.objects.filter(session=session, event_type=EventType.CHECKPOINT)
            if checkpoints.count() == checkpoints_seen:
                continue
            checkpoints_seen = checkpoints.count()
            start = AgentSession.objects.get(pk=session.pk).context_start_sequence
            # The context starts at the turn's own message (stored before the worker checkpoints), then the checkpoint.
            latest = checkpoints.order_by("-sequence_number").first()
            assert latest is not None and start == latest.sequence_number - 1
            assert (
                AgentSessionEvent.objects.get(session=session, sequence_number=start).event_type
                == "user_message"
            )
            assert not starts or start > starts[-1]
            starts.append(start)
            text = context_text(build_context(session=session, user_id=demo_user))
            assert "<checkpoint>" in text
            assert expected["workout"] in text
            assert expected["preference"] in text
            assert "<category_goals" in text and "<muscle_goals" in text
            if expected["goals"]:
                assert all(name.lower() in text.lower() for name in expected["goals"])

    assert provider.calls == sum(len(steps) for _, steps, _ in script)
    sizes = [request.estimated_tokens() for request in provider.requests]
    assert max(sizes) <= window, f"largest request {max(sizes)} tokens > window {window}"
    assert len(starts) >= 5, f"only {len(starts)} checkpoints in {TURNS} turns"
    last = AgentSessionEvent.objects.filter(session=session).order_by("-sequence_number").first()
    assert last is not None and last.sequence_number == event_count - 1  # contiguous: nothing deleted
