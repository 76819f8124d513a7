"""Per-session event channels on django-eventstream: publishing stream frames and who may read them.

Every frame a turn streams on `/agent/stream` is also sent to the channel `session-<uuid>` and stored
(DjangoModelStorage), so `GET /agent/sessions/<id>/events` can replay what a client missed (Last-Event-ID)
and then follow the turn live; with EVENTSTREAM_REDIS set, the event reaches subscribers on every daphne
process. A frame's SSE id is the library's own event id, `session-<uuid>:<n>`, on both endpoints, so a client
can resume either stream with Last-Event-ID.

`publish_frame` uses the database: call it from a worker thread, never from async code.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
import uuid
from dataclasses import dataclass
from typing import Any

from django.core.serializers.json import DjangoJSONEncoder
from django.db import DEFAULT_DB_ALIAS, IntegrityError, connection, connections, transaction
from django.db.backends.base.base import BaseDatabaseWrapper
from django.http import HttpRequest
from django.utils import timezone
from django_eventstream import send_event
from django_eventstream.channelmanager import ChannelManagerBase
from django_eventstream.event import Event
from django_eventstream.models import Event as StoredFrame
from django_eventstream.models import EventCounter as StoredCounter
from django_eventstream.storage import DjangoModelStorage
from django_eventstream.utils import get_storage, make_id

from config.db import (
    Statement,
    quoted_column,
    quoted_table,
    send_together,
    sends_statements_together,
    write_together,
)
from sessions_app.models import AgentSession
from trainer_agent.auth import AuthenticatedUser

logger = logging.getLogger(__name__)

CHANNEL_PREFIX = "session-"
# The SSE event type of stored frames. "message" is what EventSource delivers to `onmessage`.
FRAME_EVENT_TYPE = "message"
_CHANNEL = re.compile(
    rf"^{CHANNEL_PREFIX}([0-9a-f]{{8}}-[0-9a-f]{{4}}-[0-9a-f]{{4}}-[0-9a-f]{{4}}-[0-9a-f]{{12}})$"
)
_EVENT_ID = re.compile(r"^(?:(?P<channel>[^:,\s]+):)?(?P<number>\d{1,18})$")
# How long a first subscriber waits for this process's Redis subscription before it starts streaming.
REDIS_SUBSCRIBE_TIMEOUT_S = 3.0


def session_channel(session_id: uuid.UUID) -> str:
    return f"{CHANNEL_PREFIX}{session_id}"


def channel_session_id(channel: str) -> uuid.UUID | None:
    """The session a channel name belongs to, or None for a name that is not a session channel."""
    match = _CHANNEL.match(channel)
    return uuid.UUID(match.group(1)) if match else None


def normalize_last_event_id(value: str, *, session_id: uuid.UUID) -> str | None:
    """`session-<uuid>:<n>` (or a bare `<n>`) for this session's channel; None when the value is not one."""
    match = _EVENT_ID.match(value.strip())
    if match is None:
        return None
    channel = session_channel(session_id)
    if match.group("channel") not in (None, channel):
        return None
    return f"{channel}:{int(match.group('number'))}"


def publish_frame(*, session_id: uuid.UUID, frame: dict[str, Any]) -> str | None:
    """Store and fan out one stream frame; its SSE id, or None if it could not be stored.

    Never raises: a failing publication must not stop the turn or the live stream.
    """
    channel = session_channel(session_id)
    try:
        send_event(channel, FRAME_EVENT_TYPE, frame)
        stored = get_storage()
        event = stored.last_appended if isinstance(stored, FrameStorage) else None
        if event is None or event.channel != channel or event.id is None:
            raise RuntimeError("EVENTSTREAM_STORAGE_CLASS must be trainer_agent.eventstream.FrameStorage")
        return str(make_id({channel: event.id}))
    except Exception:
        logger.exception("eventstream.publish_failed", extra={"session_id": str(session_id)})
        return None


def first_frame_statements(*, session_id: uuid.UUID, frame: dict[str, Any]) -> tuple[list[Statement], str]:
    """The statements that store `frame` as the first event of a session's new channel, and its SSE id.

    For a session being created: run them with its INSERT (`config.db.write_together`), so the session and its
    first frame are stored together. The rows are the ones `publish_frame` stores (counter, the library's
    placeholder event 0, the frame as event 1); nothing is fanned out, since nobody can be subscribed to the
    channel of a session that does not exist yet (a later subscriber replays the stored frame).
    """
    conn = connections[DEFAULT_DB_ALIAS]
    statements = _frame_statements(conn)
    channel = session_channel(session_id)
    now = StoredFrame._meta.get_field("created").get_db_prep_value(timezone.now(), conn)
    text = _stored_text(json.dumps(frame, cls=DjangoJSONEncoder))  # send_event encodes the frame once itself
    return _first_frame_rows(statements, channel, FRAME_EVENT_TYPE, text, now), str(make_id({channel: 1}))


def _first_frame_rows(
    statements: _FrameStatements, channel: str, event_type: str, text: str, now: Any
) -> list[Statement]:
    """A channel's first frame: its counter at 1, the library's placeholder event 0 (its replay reads "from 0"
    through it) and the frame as event 1."""
    return [
        (statements.create_counter, [channel, now]),
        (statements.insert, [channel, "", "", 0, now]),
        (statements.insert, [channel, event_type, text, 1, now]),
    ]


def _stored_text(data: Any) -> str:
    """The `data` column of a frame's row, as FrameStorage stores what send_event hands it."""
    return json.dumps(data, cls=DjangoJSONEncoder)


class FrameStorage(DjangoModelStorage):
    """DjangoModelStorage that stores a frame with `store_frame_row`, remembers it, and trims old events less
    often.

    The library's own append (`Event.save`) takes six or seven queries per frame: read the channel's counter,
    lock it, insert, save the counter, then delete events older than a day. Here the counter's
    `UPDATE … RETURNING` (its row lock orders concurrent writers to the channel) feeds the insert at that
    number, one statement on PostgreSQL; the rows are the library's own, so its replay (`get_events`) reads
    them unchanged. The first frame of a channel also creates the counter and the library's placeholder
    event 0.

    django-eventstream keeps one storage object per thread, so `last_appended` is the event this thread's
    `send_event` just stored: its id is the frame's SSE id, with no extra query and no race with other
    writers. Old events are trimmed on every TRIM_EVERY-th append of a thread.
    """

    TRIM_EVERY = 100

    def __init__(self) -> None:
        super().__init__()
        self.last_appended: Event | None = None
        self._appends = 0

    def append_event(self, channel: str, event_type: str, data: Any) -> Event:
        self.last_appended = None
        eid = store_frame_row(channel, event_type, _stored_text(data))
        self.trim_event_log()
        event = Event(channel, event_type, data, id=eid)
        self.last_appended = event
        return event

    def trim_event_log(self) -> None:
        self._appends += 1
        if self._appends % self.TRIM_EVERY == 1:
            super().trim_event_log()


def store_frame_row(channel: str, event_type: str, text: str) -> int:
    """Insert one `django_eventstream_event` row at the channel's next number and return that number.

    The channel's counter is bumped and the row inserted at the new value (on PostgreSQL in one statement and
    one round trip: `WITH … UPDATE … RETURNING` feeding the INSERT; elsewhere in one transaction). A channel
    without a counter gets its first frame with the counter and the placeholder event 0 (`_first_frame_rows`,
    one message on PostgreSQL); if another writer created the counter first, that fails as a whole and the
    bump runs again.
    """
    statements = _frame_statements(connection)
    now = StoredFrame._meta.get_field("created").get_db_prep_value(timezone.now(), connection)
    eid = _bump_and_insert(statements, channel, event_type, text, now)
    if eid is not None:
        return eid
    try:
        # Inside a caller's transaction a savepoint keeps a failed attempt from aborting it.
        with transaction.atomic() if connection.in_atomic_block else contextlib.nullcontext():
            write_together(_first_frame_rows(statements, channel, event_type, text, now))
        return 1
    except IntegrityError:
        eid = _bump_and_insert(statements, channel, event_type, text, now)
        assert eid is not None  # the counter exists: the other writer created it
        return eid


def _bump_and_insert(
    statements: _FrameStatements, channel: str, event_type: str, text: str, now: Any
) -> int | None:
    """The frame's row at the channel's next number, that number; None (nothing written) without a counter."""
    with connection.cursor() as cursor:
        if sends_statements_together(connection):
            send_together(
                cursor, [(statements.bump_and_insert, [now, channel, channel, event_type, text, now])]
            )
            row = cursor.fetchone()
            return int(row[0]) if row is not None else None
        with transaction.atomic():
            cursor.execute(statements.bump, [now, channel])
            row = cursor.fetchone()
            if row is None:
                return None
            cursor.execute(statements.insert, [channel, event_type, text, row[0], now])
            return int(row[0])


@dataclass(frozen=True)
class _FrameStatements:
    bump: str  # the channel's counter + 1, returning the new value (no row: the channel has no counter yet)
    create_counter: str
    insert: str  # one event row: channel, type, data, eid, created
    bump_and_insert: str  # bump + insert in one statement, returning the eid (no row: no counter yet)


_FRAME_STATEMENTS: dict[str, _FrameStatements] = {}  # per vendor (quoting is all that differs)


def _frame_statements(conn: BaseDatabaseWrapper) -> _FrameStatements:
    made = _FRAME_STATEMENTS.get(conn.vendor)
    if made is not None:
        return made
    counters, events = quoted_table(conn, StoredCounter), quoted_table(conn, StoredFrame)
    name, value, updated = (quoted_column(conn, StoredCounter, f) for f in ("name", "value", "updated"))
    columns = ", ".join(
        quoted_column(conn, StoredFrame, f) for f in ("channel", "type", "data", "eid", "created")
    )
    eid = quoted_column(conn, StoredFrame, "eid")
    bump = f"UPDATE {counters} SET {value} = {value} + 1, {updated} = %s WHERE {name} = %s RETURNING {value}"
    create_counter = f"INSERT INTO {counters} ({name}, {value}, {updated}) VALUES (%s, 1, %s)"
    insert_into = f"INSERT INTO {events} ({columns})"
    made = _FRAME_STATEMENTS[conn.vendor] = _FrameStatements(
        bump=bump,
        create_counter=create_counter,
        insert=f"{insert_into} VALUES (%s, %s, %s, %s, %s)",
        bump_and_insert=(
            f"WITH bumped AS ({bump}) {insert_into} SELECT %s, %s, %s, {value}, %s FROM bumped RETURNING {eid}"
        ),
    )
    return made


def session_belongs_to(*, session_id: uuid.UUID, user_id: uuid.UUID) -> bool:
    return AgentSession.objects.filter(pk=session_id, user_id=user_id).exists()


class SessionChannelManager(ChannelManagerBase):
    """One channel per session (from the URL), readable only by the user who owns the session."""

    def get_channels_for_request(self, request: HttpRequest, view_kwargs: dict[str, Any]) -> set[str]:
        session_id = view_kwargs.get("session_id")
        return {session_channel(session_id)} if isinstance(session_id, uuid.UUID) else set()

    def can_read_channel(self, user: Any, channel: str) -> bool:
        session_id = channel_session_id(channel)
        if session_id is None or not isinstance(user, AuthenticatedUser):
            return False
        return session_belongs_to(session_id=session_id, user_id=user.user_id)

    def is_channel_reliable(self, channel: str) -> bool:
        return True


_redis_listener_task: asyncio.Task[None] | None = None


async def ensure_cross_process_listener() -> None:
    """Start this process's Redis subscription (when EVENTSTREAM_REDIS is set) and wait until it is active.

    django-eventstream starts it lazily with the first subscriber and does not wait for it, so events sent
    in the first moments would be lost to that subscriber; waiting here closes that gap.
    """
    global _redis_listener_task
    from django_eventstream.views import get_listener_manager

    manager = get_listener_manager()
    redis_listener = manager.redis_listener
    if redis_listener is None:
        return
    with manager.lock:
        if not manager.redis_listener_started:
            _redis_listener_task = asyncio.get_running_loop().create_task(manager.start_redis_listener())
            manager.redis_listener_started = True
    try:
        async with asyncio.timeout(REDIS_SUBSCRIBE_TIMEOUT_S):
            while not redis_listener.pubsub.subscribed:
                await asyncio.sleep(0.005)
    except TimeoutError:
        logger.warning("eventstream.redis_subscribe_slow")
