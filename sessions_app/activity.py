"""Active time of sessions: how long the agent worked, without the time it waited for the user.

A session's span (first to last event, the summaries view's `duration_ms`) includes every pause between
turns, so a session resumed the next morning lasts a day. Its active time is the span minus those waits: for
each user message after the session's first event, the time since the event before it (the end of the
previous turn). Equivalently, the sum of the turns, each from its user message to its last event.
"""

from __future__ import annotations

from collections.abc import Sequence
from uuid import UUID

from django.db.models import OuterRef, Subquery

from sessions_app.models import AgentSessionEvent, AgentSessionSummary, EventType

ACTIVE_TIME_HELP = (
    "active: the time the agent worked, i.e. the span without the waits for the user between turns "
    "(from the last event of a turn to the next user message); span: from the first to the last event."
)


def active_time_ms(*, summaries: Sequence[AgentSessionSummary]) -> dict[UUID, int]:
    """Active milliseconds of each summarised session, in one query over their user messages."""
    if not summaries:
        return {}
    previous_event_at = (
        AgentSessionEvent.objects.filter(
            session_id=OuterRef("session_id"), sequence_number__lt=OuterRef("sequence_number")
        )
        .order_by("-sequence_number")
        .values("timestamp")[:1]
    )
    waits = (
        AgentSessionEvent.objects.filter(
            session_id__in=[summary.pk for summary in summaries], event_type=EventType.USER_MESSAGE
        )
        .annotate(previous_event_at=Subquery(previous_event_at))
        .filter(previous_event_at__isnull=False)
        .values_list("session_id", "timestamp", "previous_event_at")
        .order_by()
    )
    waited_ms: dict[UUID, float] = {}
    for session_id, message_at, previous_at in waits:
        waited_ms[session_id] = waited_ms.get(session_id, 0.0) + (
            (message_at - previous_at).total_seconds() * 1000
        )
    return {
        summary.pk: max(round(summary.duration_ms - waited_ms.get(summary.pk, 0.0)), 0)
        for summary in summaries
    }
