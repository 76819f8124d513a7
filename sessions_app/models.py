"""Agent sessions and their append-only event stream (docs/contracts.md §6 (sessions and events))."""

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


# Event types the context builder reads (docs/contracts.md §6.5 (context events)).
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
    # The worker running the session's open turn (its `AgentTurn.worker`), set by its claim and cleared when the
    # session ends: a turn's writes lock this row only if it still names them (`append_events(holder=…)`).
    # Nullable (None: no turn running) so that adding the column is an ALTER TABLE on SQLite too, where a
    # NOT NULL column would rebuild the table under the observability views that read it.
    lease_holder = models.CharField(  # noqa: DJ001
        max_length=100, null=True, blank=True, help_text="The worker running the open turn"
    )

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
    # No index of its own: the unique (session, sequence_number) index leads with the session and serves every
    # lookup by session. A second one would cost every insert and could lure the planner into reading all of a
    # session's events to find its last number.
    session = models.ForeignKey(AgentSession, on_delete=models.CASCADE, related_name="events", db_index=False)
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


class TurnStatus(models.TextChoices):
    QUEUED = "queued"
    RUNNING = "running"
    COMPLETED = "completed"
    ERROR = "error"


class AgentTurn(models.Model):
    """One user message's turn: admitted by the web tier, run (and, after a crash, continued) by a worker.

    A session has at most one open turn (`finished_at` unset): that is the session's turn lock. A running turn
    holds a lease (`lease_expires_at`) that its worker's heartbeat renews; once it lapses, any worker may take
    the turn over and continue it from the session's events. `start_sequence` is the turn's `user_message`;
    `end_sequence` its last event, written in the same transaction that finishes the turn.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    session = models.ForeignKey(AgentSession, on_delete=models.CASCADE, related_name="turns")
    # The session's user, kept on the turn: a worker claims turns across users and must know whose work it runs
    # before it may read the session (row-level security on PostgreSQL; docs/architecture.md).
    user_id = models.UUIDField()
    status = models.CharField(max_length=16, choices=TurnStatus.choices, default=TurnStatus.QUEUED)
    model = models.CharField(max_length=100)
    start_sequence = models.IntegerField()
    end_sequence = models.IntegerField(null=True, blank=True)
    attempts = models.IntegerField(default=0, help_text="Workers that have started (or continued) the turn")
    worker = models.CharField(max_length=100, blank=True, help_text="The worker holding the lease")
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    enqueued_at = models.DateTimeField()
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    result = models.JSONField(default=dict, blank=True, help_text="iterations, stop reason, error kind")
    # The OpenTelemetry trace of the turn's latest attempt (32 hex digits), when tracing is on; the admin links
    # it to the tracing backend (TRACE_URL_TEMPLATE). Nullable so that adding it is an ALTER TABLE on SQLite.
    trace_id = models.CharField(  # noqa: DJ001
        max_length=32, null=True, blank=True, help_text="OpenTelemetry trace id of the latest attempt"
    )

    class Meta:
        db_table = "agent_turns"
        ordering = ("session_id", "start_sequence")
        constraints: ClassVar = [
            models.UniqueConstraint(
                fields=["session"], condition=models.Q(finished_at__isnull=True), name="agent_turn_one_open"
            ),
        ]
        indexes: ClassVar = [
            models.Index(
                fields=["status", "lease_expires_at"],
                condition=models.Q(finished_at__isnull=True),
                name="agent_turn_open_idx",
            ),
        ]

    def __str__(self) -> str:
        return f"turn {self.id} ({self.status})"

    @property
    def is_open(self) -> bool:
        return self.finished_at is None


class WorkerHeartbeat(models.Model):
    """A running worker process (`manage.py worker`): it writes `seen_at` every third of a lease, so every web
    process can tell whether any worker is alive (`selectors.live_worker_count`: seen within three leases). System
    data, no user content: one row per process, deleted when the process stops cleanly; a killed process's row
    goes stale and is removed by the next worker's beat after an hour."""

    name = models.CharField(max_length=100, primary_key=True)
    threads = models.IntegerField(help_text="Turns it runs at once")
    started_at = models.DateTimeField()
    seen_at = models.DateTimeField(db_index=True)

    class Meta:
        db_table = "agent_workers"

    def __str__(self) -> str:
        return f"worker {self.name}"


# --- Read-only SQL views (migration 0004; docs/contracts.md §15.2 (SQL views)) ----------------------------------------------------
# Unmanaged: Django never creates or alters these; the migration's CREATE VIEW statements define them.
# Token counts and cost are summed over llm_response events; cache_hit_rate is a fraction in 0..1.


class UsageColumns(models.Model):
    """Token buckets, cost and cache hit rate, shared by every usage view."""

    prompt_tokens = models.BigIntegerField()
    completion_tokens = models.BigIntegerField()
    cached_tokens = models.BigIntegerField()
    cache_write_tokens = models.BigIntegerField()
    total_tokens = models.BigIntegerField()
    cost_cents = models.FloatField()
    cache_hit_rate = models.FloatField()

    class Meta:
        abstract = True


class EventCountColumns(models.Model):
    """Counts of events by kind, shared by the session summary and the daily metrics."""

    user_messages = models.IntegerField()
    llm_calls = models.IntegerField()
    iterations = models.IntegerField(
        help_text="LLM requests of the trainer loop (initializer calls excluded)"
    )
    tool_calls = models.IntegerField()
    tool_failures = models.IntegerField()
    errors = models.IntegerField()
    artifacts = models.IntegerField()
    knowledge = models.IntegerField()

    class Meta:
        abstract = True


class AgentSessionSummary(EventCountColumns, UsageColumns):
    """One row per session of the `agent_session_summaries` view: the session with its event aggregates."""

    id = models.UUIDField(primary_key=True)
    user_id = models.UUIDField()
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()
    status = models.CharField(max_length=16, choices=SessionStatus.choices)
    context_start_sequence = models.IntegerField()
    metadata = models.JSONField(default=dict)
    model = models.CharField(max_length=100, blank=True, help_text="Model of the latest trainer LLM request")
    event_count = models.IntegerField()
    last_sequence = models.IntegerField(help_text="-1 when the session has no events")
    first_event_at = models.DateTimeField(null=True)
    last_event_at = models.DateTimeField(null=True)
    duration_ms = models.BigIntegerField(help_text="From the first to the last event (0 without events)")

    class Meta:
        managed = False
        db_table = "agent_session_summaries"
        ordering = ("-created_at",)
        verbose_name = "session"
        verbose_name_plural = "sessions"

    def __str__(self) -> str:
        return f"{self.id} ({self.status})"


class DailyMetrics(EventCountColumns, UsageColumns):
    """`agent_daily_metrics`: per UTC day (of the events) and user."""

    pk = models.CompositePrimaryKey("day", "user_id")
    day = models.DateField()
    user_id = models.UUIDField()
    sessions = models.IntegerField(help_text="Sessions with at least one event that day")
    sessions_with_errors = models.IntegerField()
    events = models.IntegerField()

    class Meta:
        managed = False
        db_table = "agent_daily_metrics"
        ordering = ("day", "user_id")
        verbose_name_plural = "daily metrics"

    def __str__(self) -> str:
        return f"{self.day} {self.user_id}"


class DailyModelMetrics(UsageColumns):
    """`agent_daily_model_metrics`: llm_response events per UTC day, model and purpose."""

    pk = models.CompositePrimaryKey("day", "model", "purpose")
    day = models.DateField()
    model = models.CharField(max_length=100)
    purpose = models.CharField(max_length=32)
    llm_calls = models.IntegerField()
    total_duration_ms = models.BigIntegerField()

    class Meta:
        managed = False
        db_table = "agent_daily_model_metrics"
        ordering = ("day", "model", "purpose")
        verbose_name_plural = "daily model metrics"

    def __str__(self) -> str:
        return f"{self.day} {self.model} ({self.purpose})"


class DailyToolMetrics(models.Model):
    """`agent_daily_tool_metrics`: tool_result events per UTC day and tool."""

    pk = models.CompositePrimaryKey("day", "tool_name")
    day = models.DateField()
    tool_name = models.CharField(max_length=100)
    calls = models.IntegerField()
    failures = models.IntegerField()
    total_duration_ms = models.BigIntegerField()
    max_duration_ms = models.IntegerField(null=True)

    class Meta:
        managed = False
        db_table = "agent_daily_tool_metrics"
        ordering = ("day", "tool_name")
        verbose_name_plural = "daily tool metrics"

    def __str__(self) -> str:
        return f"{self.day} {self.tool_name}"
