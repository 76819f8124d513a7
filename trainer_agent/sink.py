"""One sink per turn: every event goes to the store and the console log.

The loop calls `record()`/`record_all()` for durable events; it never knows who listens: stream frames are a
projection of the stored events (`trainer_agent.frames`). A sink that runs a worker's turn (`turn` set) writes
only while the session still names that worker as its `lease_holder`, checked by the statement that locks the
session (`append_events(holder=…)`): a worker presumed dead whose turn another worker took over cannot write a
second copy of anything. The lease itself is renewed by the worker's lease keeper (`trainer_agent.turns.lease`), and by
a write that finds less than half of it left (the keeper stalled: a busy SQLite, a starved process), so a
turn that is still writing does not lose its lease to a stalled keeper.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import Any

from django.utils import timezone

from sessions_app.events import EventData
from sessions_app.models import AgentSession, AgentSessionEvent, AgentTurn
from sessions_app.selectors import StateQuery
from sessions_app.services import NewEvent, ThenAppend, TurnTakenOver, append_events, renew_lease
from trainer_agent import metrics
from trainer_agent.console import format_event

console_logger = logging.getLogger("agent.console")


# Another worker took the turn over (this one was presumed dead), or it has ended: stop without writing.
LeaseLost = TurnTakenOver


_deferred = threading.local()


@contextmanager
def deferred_writes(session: AgentSession) -> Iterator[list[NewEvent]]:
    """Events any sink records for `session` inside the block are kept here instead of written; the caller
    writes them (with a tool's result, after the tool). A tool that asks a model itself (a sub-agent records its
    own request and answer) then holds no session lock across that call."""
    held: list[NewEvent] = []
    _deferred.target = (session.pk, held)
    try:
        yield held
    finally:
        _deferred.target = None


class EventSink:
    def __init__(
        self, *, session: AgentSession, turn: AgentTurn | None = None, lease: timedelta | None = None
    ) -> None:
        self.session = session
        self.turn = turn
        self.lease = lease
        # When the turn's user message was stored (a worker's first attempt sets it): the first event this sink
        # stores is the turn's first frame after "Message received" (`metrics.first_frame`).
        self.admitted_at: datetime | None = None
        # Every event stored through this sink (`observe`): what this attempt of the turn wrote.
        self.stored: list[AgentSessionEvent] = []

    def record(
        self, event_type: str, data: Mapping[str, Any] | EventData, *, duration_ms: int | None = None
    ) -> AgentSessionEvent:
        """Store the event (next sequence number) and log it in the console format."""
        return self.record_all([NewEvent(event_type, data, duration_ms)])[-1]

    def record_all(
        self,
        events: Sequence[NewEvent],
        *,
        then: ThenAppend | None = None,
        read: StateQuery | None = None,
    ) -> list[AgentSessionEvent]:
        """Store the events at consecutive numbers, all or none, and log them in the console format. `then` and
        `read`: what `append_events` adds under the session's lock, from the session's state."""
        if not events and then is None:
            return []
        target = getattr(_deferred, "target", None)
        if target is not None and target[0] == self.session.pk and then is None:
            target[1].extend(events)
            return [
                AgentSessionEvent(
                    session=self.session, event_type=e.event_type, data=e.data, duration_ms=e.duration_ms
                )
                for e in events
            ]
        holder = None
        if self.turn is not None:
            holder = self.turn.worker
            self._renew_if_due(self.turn)
        # LeaseLost if not ours
        stored = append_events(session=self.session, events=events, holder=holder, then=then, read=read)
        if self.admitted_at is not None and self.turn is not None and stored:
            metrics.first_frame(model=self.turn.model, admitted_at=self.admitted_at, at=stored[0].timestamp)
            self.admitted_at = None
        self.observe(stored)
        return stored

    def observe(self, stored: Sequence[AgentSessionEvent]) -> None:
        """What follows the storing of events, wherever they were stored (here, or with the turn's end by
        `finish_turn`): the console log line of each and its metrics."""
        self.stored.extend(stored)
        for event in stored:
            self.log(event)
            metrics.observe_event(event.event_type, event.data, event.duration_ms)

    def _renew_if_due(self, turn: AgentTurn) -> None:
        """Renew the lease if less than half of it is left (the lease keeper renews every third: it is late); LeaseLost
        if the turn is no longer ours. One statement, only when the keeper has fallen behind."""
        if self.lease is None or turn.lease_expires_at is None:
            return
        if turn.lease_expires_at - timezone.now() < self.lease / 2 and not renew_lease(
            turn=turn, lease=self.lease
        ):
            raise LeaseLost(f"turn {turn.pk} was taken over by another worker")

    def log(self, event: AgentSessionEvent) -> None:
        """The console line (docs/contracts.md "Console log"); under LOG_FORMAT=json the record also carries the
        event's type and sequence number."""
        if console_logger.isEnabledFor(logging.INFO):
            console_logger.info(
                format_event(
                    timestamp=event.timestamp,
                    session_id=self.session.pk,
                    event_type=event.event_type,
                    data=event.data,
                    duration_ms=event.duration_ms,
                ),
                extra={
                    "session_id": str(self.session.pk),
                    "event_type": event.event_type,
                    "sequence": event.sequence_number,
                },
            )
