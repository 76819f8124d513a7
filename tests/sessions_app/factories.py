"""Factories for sessions and events; events go through append_event, so they get the next sequence number."""

from __future__ import annotations

import uuid
from typing import Any

import factory

from sessions_app.models import AgentSession, AgentSessionEvent, EventType, SessionStatus
from sessions_app.services import append_event


def default_event_data(event_type: str) -> dict[str, Any]:
    """A minimal payload of the docs/contracts.md §6.4 (event data) shape for each event type."""
    shapes: dict[str, dict[str, Any]] = {
        EventType.USER_MESSAGE: {"message": "Plan me a 30 minute workout"},
        EventType.LLM_REQUEST: {"model": "offline", "prompt": "…", "estimated_tokens": 1200},
        EventType.LLM_RESPONSE: {
            "raw_response": {"id": "msg_1"},
            "tokens": {"prompt": 100, "completion": 20, "cached": 0, "cache_write": 0, "total": 120},
            "cost_cents": 0.01,
        },
        EventType.TOOL_CALL: {"tool_name": "idle", "arguments": {}, "call_id": "call_1"},
        EventType.TOOL_RESULT: {"tool_name": "idle", "result": "ok", "success": True, "call_id": "call_1"},
        EventType.KNOWLEDGE: {"source": "user_profile", "params": {}, "data": "<user_profile/>"},
        EventType.ERROR: {"message": "boom", "stack": None, "context": None},
        EventType.ARTIFACT: {
            "artifact_id": "art_1",
            "type": "workout",
            "schema_version": "1",
            "title": "Workout",
            "summary": {},
            "auto_start": False,
            "payload": {},
        },
        EventType.CHECKPOINT: {"events_summarized": "0-0", "events": [], "current_state": {}},
    }
    return shapes[event_type]


class AgentSessionFactory(factory.django.DjangoModelFactory[AgentSession]):
    class Meta:
        model = AgentSession

    user_id = factory.LazyFunction(uuid.uuid4)
    status = SessionStatus.ACTIVE
    metadata = factory.LazyFunction(dict)


class AgentSessionEventFactory(factory.django.DjangoModelFactory[AgentSessionEvent]):
    class Meta:
        model = AgentSessionEvent

    session = factory.SubFactory(AgentSessionFactory)
    event_type = EventType.USER_MESSAGE
    data = factory.LazyAttribute(lambda event: default_event_data(event.event_type))
    duration_ms = None

    @classmethod
    def _create(cls, model_class: type[AgentSessionEvent], *args: Any, **kwargs: Any) -> AgentSessionEvent:
        return append_event(**kwargs)
