"""Agent sessions and their append-only event stream (seed 000 §7)."""

from __future__ import annotations

import uuid
from typing import Any, ClassVar

from django.db import models


class SessionStatus(models.TextChoices):
    ACTIVE = "active"
    COMPLETED = "completed"
    ERROR = "error"


class EventType(models.TextChoices):
    USER_MESSAGE = "user_message"
    LLM_REQUEST = "llm_request"
    LLM_RESPONSE = "llm_response"
    TOOL_CALL = "tool_call"
    TOOL_RESULT = "tool_result"
    KNOWLEDGE = "knowledge"
    ERROR = "error"
    ARTIFACT = "artifact"
    CHECKPOINT = "checkpoint"


# Event types the context builder reads (seed 000 §7.4, plus seed 001's checkpoint summary).
CONTEXT_EVENT_TYPES: tuple[str, ...] = (
    EventType.USER_MESSAGE,
    EventType.TOOL_CALL,
    EventType.TOOL_RESULT,
    EventType.KNOWLEDGE,
    EventType.ARTIFACT,
    EventType.CHECKPOINT,
)


class AppendOnlyError(Exception):
    """Raised when code tries to change or delete a stored event."""


class SessionNotFound(Exception):
    """The session does not exist or belongs to another user (deliberately indistinguishable)."""


class AgentSession(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    user_id = models.UUIDField(db_index=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    context_start_sequence = models.IntegerField(default=0)
    total_tokens = models.IntegerField(default=0)
    cached_tokens = models.IntegerField(default=0)
    total_cost_cents = models.FloatField(default=0.0)
    status = models.CharField(max_length=16, choices=SessionStatus.choices, default=SessionStatus.ACTIVE)
    metadata = models.JSONField(default=dict, blank=True)

    class Meta:
        db_table = "agent_sessions"
        ordering = ("-created_at",)
        indexes: ClassVar = [
            models.Index(fields=["user_id", "status", "-created_at"], name="agent_sess_user_status_idx"),
            models.Index(fields=["-created_at"], name="agent_sess_created_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.id} ({self.status})"


class AgentSessionEventQuerySet(models.QuerySet["AgentSessionEvent"]):
    def update(self, **kwargs: Any) -> int:
        raise AppendOnlyError("agent session events are append-only; they cannot be updated")

    def delete(self) -> tuple[int, dict[str, int]]:
        raise AppendOnlyError("agent session events are append-only; they cannot be deleted")


class AgentSessionEvent(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    session = models.ForeignKey(AgentSession, on_delete=models.CASCADE, related_name="events")
    sequence_number = models.IntegerField()
    event_type = models.CharField(max_length=20, choices=EventType.choices)
    timestamp = models.DateTimeField(auto_now_add=True)
    duration_ms = models.IntegerField(null=True, blank=True)
    data = models.JSONField(default=dict)

    objects = AgentSessionEventQuerySet.as_manager()

    class Meta:
        db_table = "agent_session_events"
        unique_together = (("session", "sequence_number"),)
        # session_id, not session: ordering by the relation would join agent_sessions for its ordering.
        ordering = ("session_id", "sequence_number")
        indexes: ClassVar = [
            models.Index(
                fields=["session", "event_type", "sequence_number"], name="agent_evt_session_type_idx"
            ),
            models.Index(fields=["event_type", "timestamp"], name="agent_evt_type_time_idx"),
        ]

    def __str__(self) -> str:
        return f"#{self.sequence_number} {self.event_type}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if not self._state.adding:
            raise AppendOnlyError("agent session events are append-only; an existing event cannot be saved")
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> tuple[int, dict[str, int]]:
        raise AppendOnlyError("agent session events are append-only; they cannot be deleted")
