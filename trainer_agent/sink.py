"""One sink per turn: every event goes to the store, the console log and (optionally) a live listener.

The loop calls `record()`/`record_all()` for durable events (`hold()` for the model request, stored with the
answer) and `emit()` for stream frames (seed 000 §8.3); it never knows who listens. A listener that raises (a
client that went away) is dropped, never the turn.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from django.utils import timezone

from config.db import PlannedRead
from sessions_app.models import AgentSession, AgentSessionEvent
from sessions_app.services import NewEvent, append_events, append_events_then_read, event_batch
from trainer_agent.console import format_event

console_logger = logging.getLogger("agent.console")
logger = logging.getLogger(__name__)

Listener = Callable[[dict[str, Any]], None]


class EventSink:
    def __init__(self, *, session: AgentSession, listener: Listener | None = None) -> None:
        self.session = session
        self.listener = listener
        self.held: list[NewEvent] = []

    def record(
        self, event_type: str, data: dict[str, Any], *, duration_ms: int | None = None
    ) -> AgentSessionEvent:
        """Store the event (next sequence number) and log it in the console format."""
        return self.record_all([NewEvent(event_type, data, duration_ms)])[-1]

    def record_all(
        self, events: Sequence[NewEvent], *, wait_for_flush: bool = True
    ) -> list[AgentSessionEvent]:
        """Store the held events and then these at consecutive numbers, all or none (`append_events`: on
        PostgreSQL one round trip with its commit; `wait_for_flush` as there), and log these in the console
        format."""
        return self._logged(
            append_events(session=self.session, events=[*self.held, *events], wait_for_flush=wait_for_flush)
        )

    def record_all_then_read[T](
        self, events: Sequence[NewEvent], read: PlannedRead[T]
    ) -> tuple[list[AgentSessionEvent], T]:
        """`record_all`, then `read` (which sees the new events), in the same round trip on PostgreSQL."""
        stored, result = append_events_then_read(
            session=self.session, events=[*self.held, *events], read=read
        )
        return self._logged(stored), result

    def _logged(self, stored: list[AgentSessionEvent]) -> list[AgentSessionEvent]:
        held, self.held = len(self.held), []
        for event in stored[held:]:
            self._log(event.event_type, event.data, event.timestamp, event.duration_ms)
        return stored[held:]

    def hold(self, event_type: str, data: dict[str, Any]) -> None:
        """Log the event now and store it, stamped with this moment, at the front of the next `record_all`.

        For the model request: it is stored with the model's answer (or the error that ended the call), one
        commit instead of one before and one after the call. A turn always writes again after a call.
        """
        event = NewEvent(event_type, data, timestamp=timezone.now())
        self.held.append(event)
        self._log(event_type, data, event.timestamp, None)

    def _log(self, event_type: str, data: Any, timestamp: Any, duration_ms: int | None) -> None:
        if console_logger.isEnabledFor(logging.INFO):
            console_logger.info(
                format_event(
                    timestamp=timestamp,
                    session_id=self.session.pk,
                    event_type=event_type,
                    data=data,
                    duration_ms=duration_ms,
                )
            )

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Store the events recorded inside the block in one transaction (`event_batch`): one commit, one
        session lock and one sequence lookup instead of one each.

        Never hold a batch open across a model call: it keeps the session row locked until it commits.
        """
        with event_batch(session=self.session):
            yield

    def emit(self, frame: dict[str, Any]) -> None:
        """Hand one stream frame to the listener, if any; a failing listener is detached."""
        if self.listener is None:
            return
        try:
            self.listener(frame)
        except Exception:
            logger.info("sink.listener_detached", extra={"session_id": str(self.session.pk)}, exc_info=True)
            self.listener = None


NAMED_FRAME_TYPES = frozenset({"status", "knowledge", "done", "error"})


def frame_kind(frame: dict[str, Any]) -> str:
    """The seed 000 §3.1 name of a stream frame: status, knowledge, done, error, tool_start or tool_result.

    On the wire (§8.3) tool frames carry the tool's name as their `type`; a start frame is the one whose data
    says `running` and that has no `formatted` result yet.
    """
    kind = str(frame.get("type", ""))
    if kind in NAMED_FRAME_TYPES:
        return kind
    data = frame.get("data")
    if "formatted" not in frame and isinstance(data, dict) and data.get("status") == "running":
        return "tool_start"
    return "tool_result"
