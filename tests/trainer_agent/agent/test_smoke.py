"""The end-to-end check of docs/contracts.md §16 (end-to-end checks), with claude-haiku-4-5 played through the real anthropic SDK."""

from __future__ import annotations

import uuid

import pytest

from sessions_app.models import AgentSession, SessionStatus
from sessions_app.selectors import get_artifact, timeline
from sessions_app.services import create_session
from tests.trainer_agent.agent.scripting import (
    Frames,
    call,
    chest_workout,
    deliver,
    idle,
    leg_workout,
    scripted_claude,
    serving,
)
from trainer_agent.llm.anthropic_provider import count_cache_breakpoints
from trainer_agent.turns import run_turn

pytestmark = pytest.mark.django_db
MODEL = "claude-haiku-4-5"


def test_smoke_workout_request_end_to_end(demo_user: uuid.UUID) -> None:
    """Every assertion of docs/contracts.md §16 (end-to-end checks) holds for a scripted Haiku through the real SDK and HTTP layer."""
    transport = scripted_claude(
        call("generate_workout", {"workout": chest_workout()}),
        deliver("Here is a quick chest workout for home."),
        idle(),
        call("generate_workout", {"workout": leg_workout()}),
        deliver("Legs, knee-friendly."),
        idle(),
    )

    # 1. Setup
    session = create_session(user_id=demo_user)
    assert session.status == "active"

    # 2. Run the agent loop
    with serving(MODEL, transport):
        result = run_turn(
            user_id=demo_user, message="Give me a quick chest workout", session=session, model=MODEL
        )
    assert result.session_id == session.pk
    assert 2 <= result.iterations <= 10

    # 3. Tool sequence
    tool_names = [action.tool for action in result.actions]
    assert "generate_workout" in tool_names
    assert "message_notify_user" in tool_names
    assert tool_names.index("message_notify_user") > tool_names.index("generate_workout")

    # 4. Artifact delivery
    gen = next(a for a in result.actions if a.tool == "generate_workout")
    assert gen.result["success"] is True
    assert gen.result["artifact_id"].startswith("art_")
    notify = next(a for a in result.actions if a.tool == "message_notify_user")
    assert notify.result["artifact_id"] == gen.result["artifact_id"]
    assert notify.result["artifact"] is not None

    # 5. Events logged
    event_types = [event.event_type for event in timeline(session=session)]
    for expected in ("user_message", "tool_call", "tool_result", "artifact", "llm_request", "llm_response"):
        assert expected in event_types

    # 6. Session completion
    final = AgentSession.objects.get(pk=session.pk)
    assert final.status == SessionStatus.COMPLETED
    assert final.total_tokens > 0
    assert final.total_cost_cents > 0

    # 7. Exercise structure in the artifact
    artifact = get_artifact(session=session, artifact_id=gen.result["artifact_id"])
    assert artifact is not None
    assert artifact["type"] == "exercise_list"
    exercises = artifact["payload"]["exercises"]
    assert len(exercises) > 0
    first = exercises[0]
    assert first["exercise_name"]
    assert first["exercise_type"] in ["reps", "hold", "duration", "intervals"]
    assert len(first["muscles_utilized"]) > 0
    assert len(first["goals_addressed"]) > 0

    # 8. Streaming events (the listener is the stream's onEvent)
    frames = Frames()
    with serving(MODEL, transport):
        second = run_turn(
            user_id=demo_user,
            message="Show me a leg workout",
            session_id=session.pk,
            model=MODEL,
            listener=frames,
        )
    assert second.session_id == session.pk
    assert any(kind == "tool_start" for kind in frames.kinds)
    assert any(kind == "tool_result" for kind in frames.kinds)

    # The wire: every request had the 4 cache breakpoints and forced tool use.
    assert len(transport.bodies) == 6
    for body in transport.bodies:
        assert count_cache_breakpoints(body) == 4
        assert body["tool_choice"] == {"type": "any"}
        assert body["model"] == MODEL
        assert body["max_tokens"] == 8192


def test_smoke_second_turn_sees_the_first(demo_user: uuid.UUID) -> None:
    """The second turn's first request carries the first turn's transcript unchanged before the new message."""
    transport = scripted_claude(
        call("generate_workout", {"workout": chest_workout()}),
        deliver(),
        idle(),
        idle(),
    )
    with serving(MODEL, transport):
        first = run_turn(user_id=demo_user, message="Give me a quick chest workout", model=MODEL)
        run_turn(user_id=demo_user, message="Thanks!", session_id=first.session_id, model=MODEL)
    last_of_first, first_of_second = transport.bodies[2], transport.bodies[3]
    earlier = last_of_first["messages"]
    later = first_of_second["messages"]
    assert later[: len(earlier) - 1] == earlier[:-1]
    assert later[-1]["content"][-1]["text"] == "Thanks!"
