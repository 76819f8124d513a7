"""The turn request: one serializer validates and documents the body of both turn endpoints."""

from __future__ import annotations

import json
import re
import uuid
from typing import Any

import pytest
from django.test import Client

from tests.trainer_agent.api.support import ApiUser
from trainer_agent.api.chat import TurnRequestInvalid, TurnRequestSerializer
from trainer_agent.turns import TurnRequest
from trainer_agent.turns.request import CONTROL_CHARS, MAX_MESSAGE_CHARS

BAD_BODIES: list[Any] = [
    {},
    {"message": None},
    {"message": 5, "sessionId": 7, "model": "gpt-17", "preview": "yes", "currentWorkout": []},
    {"message": " \n", "userId": "x", "admin": True},
    {"message": "ding\u0007"},
    {"message": "a" * (MAX_MESSAGE_CHARS + 1)},
    {"message": "hi", "sessionId": "abc", "preview": None},
    {"message": "hi", "currentWorkout": {"exercises": [{"exercise_name": "Push-Up"}]}},
]


@pytest.mark.parametrize("body", BAD_BODIES)
@pytest.mark.django_db
def test_both_endpoints_refuse_a_body_with_the_same_detail(alice: ApiUser, body: Any) -> None:
    """/agent/chat and /agent/stream give the same 400 detail for the same body: one serializer validates both."""
    raw = json.dumps(body).encode()
    chat = alice.send("POST", "/agent/chat", raw)
    stream = alice.send("POST", "/agent/stream", raw, HTTP_ACCEPT="text/event-stream")
    assert chat.status_code == stream.status_code == 400
    assert chat.json() == stream.json() == {"detail": _detail(body)}


def _detail(body: Any) -> str:
    with pytest.raises(TurnRequestInvalid) as refused:
        TurnRequestSerializer.read(body)
    return refused.value.detail


def test_every_problem_is_named_in_one_detail() -> None:
    """A body with several problems gets one detail naming each, unknown fields first."""
    detail = _detail({"message": 5, "sessionId": "abc", "preview": 1, "extra": 1})
    assert detail == (
        "unknown field(s): extra message: must be a string, got a number. sessionId: must be a UUID. "
        "preview: must be a boolean, got a number."
    )


@pytest.mark.parametrize("body", [None, [], "hi", 3])
def test_a_body_that_is_not_an_object_is_refused(body: Any) -> None:
    """Anything but a JSON object is one clear sentence."""
    assert _detail(body) == "The request body must be a JSON object."


def test_a_valid_body_is_the_turn_request() -> None:
    """The validated body is what admission takes; `preview` defaults to true."""
    session_id = uuid.uuid4()
    turn = TurnRequestSerializer.read({"message": "hi\tthere\n", "sessionId": str(session_id), "model": None})
    assert turn == TurnRequest(message="hi\tthere\n", session_id=session_id, current_workout=None, model=None)


@pytest.mark.django_db
def test_the_documented_message_rules_are_the_enforced_ones() -> None:
    """The schema's pattern and maxLength for `message` accept exactly the messages the serializer accepts."""
    schema = json.loads(Client().get("/api/schema/", {"format": "json"}).content)
    message = schema["components"]["schemas"]["ChatRequest"]["properties"]["message"]
    assert message["maxLength"] == MAX_MESSAGE_CHARS
    pattern = re.compile(message["pattern"])
    for text in ["hi", " hi ", "tab\tand\r\nnewlines", "", "  \n\t", "nul\u0000", "bell\u0007", "del\u007f"]:
        documented = pattern.fullmatch(text) is not None
        try:
            TurnRequestSerializer.read({"message": text})
            enforced = True
        except TurnRequestInvalid:
            enforced = False
        assert documented == enforced, text
    assert all(
        CONTROL_CHARS.search(chr(c)) for c in [*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0x7F]
    )
