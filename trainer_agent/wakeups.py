"""Waking a web process's followers when a session's events change.

PostgreSQL: one `LISTEN agent_events` connection per process (an asyncio task on the process's event loop);
`sessions_app.services.append_events` and `finish_turn` send `pg_notify('agent_events', <session id>)` in
their transaction, delivered when it commits, to every process. A follower waits on an `asyncio.Event` for its
session, re-reading the store when woken and, should a notification be missed (the listening connection
dropped), at least every `SSE_RECHECK_SECONDS`. SQLite has no push: followers poll every `SSE_POLL_SECONDS`.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections import defaultdict

import psycopg
from django.conf import settings
from django.db import connection

from sessions_app.services import EVENTS_CHANNEL

logger = logging.getLogger(__name__)

_waiters: defaultdict[str, set[asyncio.Event]] = defaultdict(set)
_listener: asyncio.Task[None] | None = None
_listening = False


def pushes() -> bool:
    return connection.vendor == "postgresql"


async def wait(session_id: uuid.UUID, *, timeout: float) -> None:
    """Return when the session changes (as far as this process hears), or after `timeout` seconds at most."""
    if not pushes():
        await asyncio.sleep(min(timeout, settings.SSE_POLL_SECONDS))
        return
    _ensure_listener()
    if not _listening:
        timeout = min(timeout, settings.SSE_POLL_SECONDS)  # not listening (yet, or any more): poll meanwhile
    key = str(session_id)
    event = asyncio.Event()
    _waiters[key].add(event)
    try:
        async with asyncio.timeout(min(timeout, settings.SSE_RECHECK_SECONDS)):
            await event.wait()
    except TimeoutError:
        pass
    finally:
        _waiters[key].discard(event)
        if not _waiters[key]:
            del _waiters[key]


def _ensure_listener() -> None:
    global _listener
    if _listener is None or _listener.done():
        _listener = asyncio.get_running_loop().create_task(_listen())


def _conninfo() -> str:
    params = connection.get_connection_params()
    params.pop("cursor_factory", None)
    params.pop("context", None)
    params.pop("prepare_threshold", None)
    return psycopg.conninfo.make_conninfo("", **{k: v for k, v in params.items() if isinstance(v, str | int)})


async def _listen() -> None:
    """Hold a LISTEN connection and wake the waiters of each notified session; reconnect after a failure."""
    global _listening
    while True:
        try:
            async with await psycopg.AsyncConnection.connect(_conninfo(), autocommit=True) as conn:
                await conn.execute(f"LISTEN {EVENTS_CHANNEL}")
                _listening = True
                _wake_all()  # anything committed while not listening
                async for note in conn.notifies():
                    for event in _waiters.get(note.payload, ()):
                        event.set()
        except asyncio.CancelledError:
            raise
        except Exception:
            logger.warning("wakeups.listener_failed", exc_info=True)
        finally:
            _listening = False
        await asyncio.sleep(1.0)


def _wake_all() -> None:
    for events in _waiters.values():
        for event in events:
            event.set()
