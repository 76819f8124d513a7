"""The pending question as a real model sees it: Claude played through the real anthropic SDK (HTTP replaced),
asked "Which exercise was that?" in one turn, gets the user's reply in the next with the question right before
it on the wire, and a model that reads it completes the log."""

from __future__ import annotations

import re
from typing import Any

import pytest

from sessions_app.services import create_session
from tests.coaching.convo.conftest import Chat
from tests.trainer_agent.agent.scripting import (
    Body,
    call,
    chest_workout,
    deliver,
    idle,
    notify,
    scripted_claude,
    serving,
)
from trainer_agent.turns import run_turn

pytestmark = pytest.mark.django_db
MODEL = "claude-haiku-4-5"
QUESTION = "Which exercise was that?"


def user_texts(body: Body) -> list[str]:
    """The text blocks of the last user message of a Messages API request."""
    last = body["messages"][-1]
    assert last["role"] == "user"
    return [block["text"] for block in last["content"] if block.get("type") == "text"]


def log_what_the_answer_names(body: Body) -> dict[str, Any]:
    """A model that reads the pending question: the reply after it names the exercise of the pending log."""
    texts = user_texts(body)
    index = next(i for i, text in enumerate(texts) if text.startswith("<pending_question>"))
    assert QUESTION in texts[index]
    return {"exercise_name": texts[index + 1], "sets": 3, "reps": [10, 10, 10], "load_each": [20, 20, 20]}


def test_the_reply_to_a_question_reaches_the_model_as_its_answer(chat: Chat) -> None:
    """On the wire the question and its options come right before the reply; the log it completes is stored."""
    chat.say("hello")  # the demo user exists and has a session history of its own
    transport = scripted_claude(
        call("generate_workout", {"workout": chest_workout()}),
        deliver(),
        idle(),
        call("message_ask_user", {"question": QUESTION, "options": ["Dumbbell Bench Press", "Push-Up"]}),
        call("log_completed_exercise", log_what_the_answer_names),
        notify("Logged: Dumbbell Bench Press 3×10 @ 20 kg each hand."),
        idle(),
    )
    session = create_session(user_id=chat.user_id)

    with serving(MODEL, transport):
        for message in (
            "Give me a quick chest workout",
            "I did 3 sets of 10 at 20 kg",
            "Dumbbell Bench Press",
        ):
            result = run_turn(user_id=chat.user_id, message=message, session=session, model=MODEL)
            assert result.status == "completed", result.error_message

    asked_body, answered_body = transport.bodies[3], transport.bodies[4]
    assert not any("<pending_question>" in text for text in user_texts(asked_body))
    texts = user_texts(answered_body)
    assert texts[-1] == "Dumbbell Bench Press"
    block = texts[-2]
    assert block.startswith("<pending_question>") and QUESTION in block
    assert re.search(r"Dumbbell Bench Press \| Push-Up", block)
    (entry,) = chat.entries("Dumbbell Bench Press")
    assert entry.actual_load_each == [20, 20, 20]
    assert entry.log.title, "logged into the titled workout entry"
