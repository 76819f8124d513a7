"""A call the model corrects on its next iteration is not shown to the user as an error."""

from __future__ import annotations

import json
import uuid

import pytest
from django.test import Client
from django.urls import reverse

from sessions_app.models import AgentTurn
from tests.trainer_agent.agent.scripting import (
    Frames,
    call,
    chest_workout,
    deliver,
    events_of,
    idle,
    scripted_claude,
    serving,
)
from tests.trainer_agent.observability.support import login_staff
from tools_app.registry import DEFAULT_STATUS_ERROR
from trainer_agent.frames import FAILED_CALL_STATUS, turn_frames
from trainer_agent.turns import run_turn

pytestmark = pytest.mark.django_db

MODEL = "claude-haiku-4-5"


def test_a_failed_generate_workout_fixed_next_iteration_shows_progress_not_an_error(
    demo_user: uuid.UUID, client: Client
) -> None:
    """generate_workout fails validation, the model sends it again correctly and delivers: the client's frames
    say "Adjusting..." (no "Something went wrong") and end with the delivered workout and `done`; the failed
    call and its error are still in the events and on the admin's timeline."""
    broken = {**chest_workout(), "exercises": []}
    transport = scripted_claude(
        call("generate_workout", {"workout": broken}),
        call("generate_workout", {"workout": chest_workout()}),
        deliver("Here is your chest session."),
        idle(),
    )
    frames = Frames()
    with serving(MODEL, transport):
        result = run_turn(user_id=demo_user, message="Chest workout please", model=MODEL, listener=frames)

    turn = AgentTurn.objects.get(session_id=result.session_id)
    for shown in (list(frames), turn_frames(turn)):  # live, and as the stream replays it
        text = json.dumps(shown, ensure_ascii=False)
        assert DEFAULT_STATUS_ERROR not in text and "Something went wrong" not in text
        statuses = [
            f["data"]["message"]
            for f in shown
            if f["type"] == "status" and f["data"]["tool"] == "generate_workout"
        ]
        assert statuses == [
            "Creating your workout...",
            FAILED_CALL_STATUS,
            "Creating your workout...",
            "Workout ready",
        ]
        delivered = [f for f in shown if f["type"] == "message_notify_user" and f.get("artifact")]
        assert delivered and delivered[-1]["artifact"]["payload"]["exercises"]
        assert shown[-1] == {"type": "done", "sessionId": str(result.session_id)}

    failed, succeeded = events_of(result.session_id, "tool_result")[:2]
    assert failed["success"] is False and "exercises" in failed["result"]["formatted"]
    assert succeeded["success"] is True
    page = login_staff(client).get(
        reverse("admin:sessions_app_agentsessionsummary_change", args=[result.session_id])
    )
    assert page.status_code == 200
    assert "generate_workout" in page.content.decode()
    assert failed["result"]["data"]["error"].split("\n")[0][:60] in page.content.decode()
