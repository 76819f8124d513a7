"""Wake-ups: a web process's followers when a session's events change, and idle workers when a task is
enqueued (`wake_workers`).

PostgreSQL: one `LISTEN agent_events` connection per process (an asyncio task on the process's event loop);
`sessions_app.services.append_events` and `finish_turn` send `pg_notify('agent_events', <session id>)` in
their transaction, delivered when it commits, to every process. A follower subscribes before its first read
(`subscribe`), clears its flag before each read and waits on it after an empty one, so a notification that
arrives while it reads is not lost; it re-reads the store anyway at least every `SSE_RECHECK_SECONDS` (a
notification missed while the listening connection reconnects). SQLite has no push: followers poll every
`SSE_POLL_SECONDS`.

The same connection listens on `agent_previews` (`trainer_agent.previews`): a worker's preview frames go to the
followers of that session that asked for them (`subscribe(…, previews=inbox)`), waking them without marking
the store changed (`Subscription.store_changed`), so a preview costs a follower no read of the store.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections import defaultdict
from collections.abc import Iterator

import psycopg
from django.conf import settings
from django.db import connection

from sessions_app.services import EVENTS_CHANNEL
from trainer_agent import previews as preview_frames
from trainer_agent.connection_pool import conninfo
from trainer_agent.previews import PreviewInbox

logger = logging.getLogger(__name__)

_subscribers: defaultdict[str, set[Subscription]] = defaultdict(set)
_listener: asyncio.Task[None] | None = None
_listening = False


class Subscription:
    """One follower's flag: set when its session changes (as far as this process hears), or when previews
    arrived for it (`previews`); `store_changed` tells the two apart."""

    def __init__(self, previews: PreviewInbox | None = None) -> None:
        self.changed = asyncio.Event()
        self.store_changed = False
        self.previews = previews

    def clear(self) -> None:
        """Call before reading the store: a change after this wakes the next `wait`."""
        self.changed.clear()
        self.store_changed = False

    def store_change(self) -> None:
        self.store_changed = True
        self.changed.set()

    async def wait(self, *, timeout: float) -> None:
        """Return when the session changed since `clear`, or after `timeout` seconds at most."""
        if not pushes():
            await asyncio.sleep(min(timeout, settings.SSE_POLL_SECONDS))
            return
        limit = min(timeout, settings.SSE_RECHECK_SECONDS)
        if not _listening:
            limit = min(limit, settings.SSE_POLL_SECONDS)  # not listening (yet, or any more): poll meanwhile
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(limit):
                await self.changed.wait()


@contextlib.contextmanager
def subscribe(session_id: uuid.UUID, *, previews: PreviewInbox | None = None) -> Iterator[Subscription]:
    subscription = Subscription(previews)
    key = str(session_id)
    if pushes():
        _ensure_listener()
    _subscribers[key].add(subscription)
    try:
        yield subscription
    finally:
        _subscribers[key].discard(subscription)
        if not _subscribers[key]:
            del _subscribers[key]


def pushes() -> bool:
    return connection.vendor == "postgresql"


def _ensure_listener() -> None:
    global _listener
    if _listener is None or _listener.done():
        _listener = asyncio.get_running_loop().create_task(_listen())


async def _listen() -> None:
    """Hold a LISTEN connection and wake the subscribers of each notified session; reconnect after a failure."""
    global _listening
    while True:
        try:
            async with await psycopg.AsyncConnection.connect(conninfo(), autocommit=True) as conn:
                await conn.execute(f"LISTEN {EVENTS_CHANNEL}")
                await conn.execute(f"LISTEN {preview_frames.PREVIEWS_CHANNEL}")
                preview_frames.forget_incomplete_notifications()
                _listening = True
                _wake_all()  # anything committed while not listening
                async for note in conn.notifies():
                    if note.channel == preview_frames.PREVIEWS_CHANNEL:
                        _deliver_previews(note.payload)
                        continue
                    for subscription in _subscribers.get(note.payload, ()):
                        subscription.store_change()
        except asyncio.CancelledError:
            raise
        except Exception:
            logger.warning("wakeups.listener_failed", exc_info=True)
        finally:
            _listening = False
        await asyncio.sleep(1.0)


def _wake_all() -> None:
    for subscriptions in _subscribers.values():
        for subscription in subscriptions:
            subscription.store_change()


def _follows_previews(session_id: str) -> bool:
    return any(subscription.previews is not None for subscription in _subscribers.get(session_id, ()))


def _deliver_previews(payload: str) -> None:
    """Hand a worker's preview frames to the session's followers that want them (keeping the latest state)."""
    received = preview_frames.receive_notification(payload, wanted=_follows_previews)
    if received is None:
        return
    session_id, request_sequence, frames = received
    for subscription in _subscribers.get(session_id, ()):
        if subscription.previews is not None:
            subscription.previews.offer(request_sequence, frames)
            subscription.changed.set()


# The channel idle worker threads LISTEN on (PostgreSQL): a task (a turn, a plan week) was enqueued.
TURNS_CHANNEL = "agent_turns"


def wake_workers(payload: str) -> None:
    """On PostgreSQL, wake idle worker loops to claim a task just enqueued (delivered when the caller's
    transaction commits); elsewhere they find it at their next poll."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_notify(%s, %s)", [TURNS_CHANNEL, payload])
