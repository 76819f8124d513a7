"""Typed event data (sessions_app.events): stored events validate and round-trip byte for byte; writers' models
store exactly the JSON the dict writers stored; the trainer purpose defaults in one place."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from sessions_app.events import (
    ErrorData,
    KnowledgeData,
    SubagentRequest,
    Tokens,
    ToolCallData,
    TrainerRequest,
    TrainerResponse,
    UserMessage,
    is_trainer,
    parse_event_data,
    purpose_of,
    trainer_purpose_q,
)
from sessions_app.models import AgentSessionEvent, EventType
from sessions_app.services import NewEvent, append_event, create_session

# A copy of events stored before the models existed: every trainer, initializer and sub-agent request and
# response shape, tool calls and results (with and without status, artifact and artifact_id), knowledge,
# artifacts, a checkpoint and the errors of the loop, the pickup and the week chain.
STORED_EVENTS: list[dict[str, Any]] = json.loads(
    (Path(__file__).parent / "stored_events.json").read_text(encoding="utf-8")
)


@pytest.mark.parametrize("stored", STORED_EVENTS, ids=lambda e: str(e["event_type"]))
def test_a_stored_event_validates_and_round_trips_unchanged(stored: dict[str, Any]) -> None:
    """Old rows read as their model without a migration, and the model gives back the very same JSON text."""
    model = parse_event_data(stored["event_type"], stored["data"])
    assert json.dumps(model.to_data(), ensure_ascii=False) == json.dumps(stored["data"], ensure_ascii=False)


def test_the_stored_copy_covers_every_event_type() -> None:
    """The round-trip test sees each event type (and each purpose of the model calls)."""
    assert {e["event_type"] for e in STORED_EVENTS} == set(EventType.values)
    purposes = {
        purpose_of(e["data"]).split(":")[0] for e in STORED_EVENTS if e["event_type"] == "llm_request"
    }
    assert purposes == {"trainer", "initializer", "subagent"}


@pytest.mark.django_db
def test_a_model_is_stored_as_the_json_its_writer_stored_as_a_dict() -> None:
    """The writer takes the model and stores its fields in the order they were given, nothing added."""
    session = create_session(user_id=uuid.uuid4())
    written = {
        "message": "Max iterations (10) reached",
        "context": "agent_loop",
        "stack": None,
    }
    data = ErrorData(message="Max iterations (10) reached", context="agent_loop", stack=None)
    assert json.dumps(NewEvent(EventType.ERROR, data).data) == json.dumps(written)  # the text SQLite keeps
    stored = append_event(session=session, event_type=EventType.ERROR, data=data)
    stored.refresh_from_db()
    assert stored.data == written  # PostgreSQL's jsonb keeps the keys in an order of its own
    knowledge = KnowledgeData(source="current_workout_session", params={}, data="text")
    assert NewEvent(EventType.KNOWLEDGE, knowledge).data == {
        "source": "current_workout_session",
        "params": {},
        "data": "text",
    }


def test_a_model_of_another_event_type_is_refused() -> None:
    """A user message's data cannot be written as a tool call."""
    with pytest.raises(ValueError, match="UserMessage"):
        NewEvent(EventType.TOOL_CALL, UserMessage(message="hi"))


@pytest.mark.parametrize(
    ("event_type", "data"),
    [
        (EventType.TOOL_CALL, {"tool_name": "idle", "arguments": {}, "call_id": "c", "extra": 1}),
        (EventType.USER_MESSAGE, {"message": 3}),
        (
            EventType.LLM_REQUEST,
            {"model": "m", "purpose": "subagent:", "attempt": 1, "prompt": "", "estimated_tokens": 0},
        ),
        (EventType.LLM_RESPONSE, {"model": "m", "purpose": "nobody", "raw_response": {}}),
        (EventType.ARTIFACT, {"artifact_id": "art_1"}),
    ],
)
def test_data_outside_the_contract_is_refused(event_type: str, data: dict[str, Any]) -> None:
    """Unknown keys (where the contract fixes the shape), wrong types and unknown purposes do not validate."""
    with pytest.raises((ValidationError, ValueError)):
        parse_event_data(event_type, data)


def test_values_are_never_converted() -> None:
    """Strict models: an int cost stays an int, and a string count is refused rather than converted."""
    tokens = Tokens(prompt=1, completion=1, cached=0, cache_write=0, total=2)
    response = TrainerResponse(
        model="m", raw_response={}, text="", stop_reason=None, tokens=tokens, cost_cents=0
    )
    assert response.to_data()["cost_cents"] == 0 and isinstance(response.to_data()["cost_cents"], int)
    with pytest.raises(ValidationError):
        ToolCallData.model_validate({"tool_name": "idle", "arguments": {}, "call_id": 7})


def test_the_trainer_purpose_is_the_default() -> None:
    """A model call naming no purpose is the trainer's (trainer responses never name one)."""
    assert purpose_of({}) == "trainer" and is_trainer({"model": "m"})
    assert (
        purpose_of(
            TrainerRequest(
                model="m", prompt="", estimated_tokens=0, message_count=1, context_sequence=0, iteration=1
            ).to_data()
        )
        == "trainer"
    )
    assert not is_trainer(
        SubagentRequest(
            model="m", purpose="subagent:microcycle", attempt=1, prompt="", estimated_tokens=0
        ).to_data()
    )
    assert not is_trainer({"purpose": "initializer"}) and is_trainer(None)


@pytest.mark.django_db
def test_the_trainer_filter_matches_the_default() -> None:
    """`trainer_purpose_q` selects the events `is_trainer` accepts, those naming no purpose included."""
    session = create_session(user_id=uuid.uuid4())
    datas = [
        {"model": "a"},
        {"model": "b", "purpose": "trainer"},
        {"model": "c", "purpose": "initializer"},
        {"model": "d", "purpose": "subagent:x"},
    ]
    for data in datas:
        append_event(session=session, event_type=EventType.LLM_RESPONSE, data=data)
    found = AgentSessionEvent.objects.filter(trainer_purpose_q(), session=session).values_list(
        "data", flat=True
    )
    assert sorted(d["model"] for d in found) == ["a", "b"]
    assert sorted(d["model"] for d in datas if is_trainer(d)) == ["a", "b"]
