"""manage.py chat: an interactive terminal conversation that prints the console log and the replies."""

from __future__ import annotations

import io
import uuid

import pytest
from django.core.management import CommandError, call_command

from sessions_app.models import AgentSession
from tests.trainer_agent.agent.scripting import call, chest_workout, deliver, idle, scripted_claude, serving
from trainer_agent.llm.providers import registered_provider_kinds

pytestmark = pytest.mark.django_db


def chat(lines: str, **options: object) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("chat", stdin=io.StringIO(lines), stdout=out, stderr=err, **options)
    return out.getvalue(), err.getvalue()


def test_chat_prints_log_workout_and_question_then_exits(demo_user: uuid.UUID) -> None:
    """Two turns in one session: console lines, the numbered workout, a question with options; 'exit' stops."""
    transport = scripted_claude(
        call("generate_workout", {"workout": chest_workout()}),
        deliver("Here is your chest workout."),
        idle(),
        call("message_ask_user", {"question": "How long do you have?", "options": ["20 min", "40 min"]}),
    )
    with serving("claude-haiku-4-5", transport):
        out, err = chat(
            "Give me a chest workout\nMake it longer\nexit\nnever read\n", model="claude-haiku-4-5"
        )

    assert err == ""
    assert "Chatting with Claude Haiku 4.5 (claude-haiku-4-5) as user" in out
    assert '👤 User: "Give me a chest workout"' in out and "📤 LLM Request → claude-haiku-4-5" in out
    assert "coach> Here is your chest workout." in out
    assert "  1. Dumbbell Bench Press — 3×10 @ 20kg each hand, rest 75s\n" in out
    assert "  2. Push-Up — 3×10, rest 75s\n" in out
    assert "coach? How long do you have?\n  1) 20 min\n  2) 40 min\n" in out
    assert "never read" not in out
    (session,) = AgentSession.objects.filter(user_id=demo_user)
    assert f"Session {session.pk}: {session.total_tokens} tokens" in out
    assert len(transport.requests) == 4


def test_chat_with_the_offline_coach_needs_no_key(demo_user: uuid.UUID) -> None:
    """With the built-in offline model the conversation runs with no API key; end of input ends it."""
    if "offline" not in registered_provider_kinds():
        pytest.skip("the offline coach is not registered")
    out, err = chat("Give me a quick chest workout\n", model="offline")
    assert err == ""
    assert "coach> " in out and "\n  1. " in out
    assert "🔧 Tool Call → draft_workout" in out


def test_chat_continues_a_given_session_and_reports_model_failures(demo_user: uuid.UUID) -> None:
    """--session continues that session; a model that cannot be called is reported and the chat goes on."""
    session = AgentSession.objects.create(user_id=demo_user)
    out, err = chat(
        "Hello\nStill there?\n", model="claude-haiku-4-5", session=str(session.pk), user=str(demo_user)
    )
    assert f"Continuing session {session.pk}." in out
    assert err.count("The model could not answer (auth)") == 2
    assert AgentSession.objects.filter(user_id=demo_user).count() == 1


def test_chat_refuses_unknown_model_and_foreign_session(demo_user: uuid.UUID) -> None:
    """Bad options fail before any turn: an unknown model lists the allowed ones; a session must be the user's."""
    with pytest.raises(CommandError, match=r"Allowed models: .*claude-haiku-4-5"):
        chat("", model="gpt-17")
    other = AgentSession.objects.create(user_id=uuid.uuid4())
    with pytest.raises(CommandError, match="not found"):
        chat("", session=str(other.pk))
