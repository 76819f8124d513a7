"""`manage.py import_session <file>`: load a session exported by `replay_session --format jsonl`.

The export format is defined here, next to its reader: the first line is the session row, every further line
one event, each a JSON object with every column (UUIDs as strings, timestamps in ISO 8601 with microseconds).
Rows are inserted as they are, ids, sequence numbers and timestamps included (a raw save, so `auto_now`
fields keep the exported values), in one transaction. A session that already exists is refused.
"""

from __future__ import annotations

import json
import sys
import uuid
from collections.abc import Iterable, Iterator
from datetime import datetime
from typing import Any, TextIO

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import IntegrityError, transaction

from sessions_app.models import AgentSession, AgentSessionEvent, EventType, SessionStatus
from sessions_app.staff import staff_work

FORMAT_VERSION = 1
SESSION_FIELDS: tuple[str, ...] = (
    "id",
    "user_id",
    "created_at",
    "updated_at",
    "status",
    "context_start_sequence",
    "total_tokens",
    "cached_tokens",
    "total_cost_cents",
    "metadata",
)
EVENT_FIELDS: tuple[str, ...] = ("id", "sequence_number", "event_type", "timestamp", "duration_ms", "data")


class InvalidExport(ValueError):
    """A line of the file is not a session or event record this version can load."""


def _plain(value: Any) -> Any:
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, datetime):
        return value.isoformat()  # all six fractional digits, unlike DjangoJSONEncoder
    return value


def session_record(session: AgentSession) -> dict[str, Any]:
    """The export's first line: every column of the session row."""
    return {"kind": "session", "format": FORMAT_VERSION} | {
        name: _plain(getattr(session, name)) for name in SESSION_FIELDS
    }


def event_record(event: AgentSessionEvent) -> dict[str, Any]:
    """One event line: every column of the event row but its session."""
    return {"kind": "event"} | {name: _plain(getattr(event, name)) for name in EVENT_FIELDS}


def _uuid(record: dict[str, Any], name: str) -> uuid.UUID:
    try:
        return uuid.UUID(str(record[name]))
    except (KeyError, ValueError) as exc:
        raise InvalidExport(f"{name} must be a UUID, got {record.get(name)!r}") from exc


def _moment(record: dict[str, Any], name: str) -> datetime:
    try:
        moment = datetime.fromisoformat(str(record[name]))
    except (KeyError, ValueError) as exc:
        raise InvalidExport(f"{name} must be an ISO 8601 timestamp, got {record.get(name)!r}") from exc
    if moment.tzinfo is None:
        raise InvalidExport(f"{name} must carry a time zone, got {record[name]!r}")
    return moment


def _integer(record: dict[str, Any], name: str) -> int:
    value = record.get(name)
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidExport(f"{name} must be an integer, got {value!r}")
    return value


def _optional_integer(record: dict[str, Any], name: str) -> int | None:
    return None if record.get(name) is None else _integer(record, name)


def _build_session(record: dict[str, Any]) -> AgentSession:
    if record.get("kind") != "session":
        raise InvalidExport("the first line must be the session record (kind 'session')")
    if record.get("format") != FORMAT_VERSION:
        raise InvalidExport(f"unsupported export format {record.get('format')!r}; expected {FORMAT_VERSION}")
    if record.get("status") not in SessionStatus.values:
        raise InvalidExport(
            f"status must be one of {', '.join(SessionStatus.values)}, got {record.get('status')!r}"
        )
    metadata = record.get("metadata")
    if not isinstance(metadata, dict):
        raise InvalidExport("metadata must be a JSON object")
    cost = record.get("total_cost_cents")
    if isinstance(cost, bool) or not isinstance(cost, int | float):
        raise InvalidExport(f"total_cost_cents must be a number, got {cost!r}")
    return AgentSession(
        id=_uuid(record, "id"),
        user_id=_uuid(record, "user_id"),
        created_at=_moment(record, "created_at"),
        updated_at=_moment(record, "updated_at"),
        status=record["status"],
        context_start_sequence=_integer(record, "context_start_sequence"),
        total_tokens=_integer(record, "total_tokens"),
        cached_tokens=_integer(record, "cached_tokens"),
        total_cost_cents=float(cost),
        metadata=metadata,
    )


def _build_event(record: dict[str, Any], session: AgentSession) -> AgentSessionEvent:
    if record.get("kind") != "event":
        raise InvalidExport(f"expected an event record (kind 'event'), got kind {record.get('kind')!r}")
    if record.get("event_type") not in EventType.values:
        raise InvalidExport(f"unknown event type {record.get('event_type')!r}")
    if not isinstance(record.get("data"), dict):
        raise InvalidExport("event data must be a JSON object")
    sequence = _integer(record, "sequence_number")
    if sequence < 0:
        raise InvalidExport(f"sequence_number must be >= 0, got {sequence!r}")
    return AgentSessionEvent(
        id=_uuid(record, "id"),
        session=session,
        sequence_number=sequence,
        event_type=record["event_type"],
        timestamp=_moment(record, "timestamp"),
        duration_ms=_optional_integer(record, "duration_ms"),
        data=record["data"],
    )


def import_records(records: Iterable[dict[str, Any]]) -> tuple[AgentSession, int]:
    """Insert the exported session and its events exactly as recorded. Returns the session and event count.

    Raises InvalidExport for a malformed record or duplicate sequence number, and ValueError when the
    session already exists; nothing is written then.
    """
    iterator = iter(records)
    first = next(iterator, None)
    if first is None:
        raise InvalidExport("the file is empty")
    session = _build_session(first)
    # Any user's session: staff work, on the staff login when STAFF_DATABASE_URL is set (sessions_app.staff).
    with staff_work() as using, transaction.atomic(using=using):
        if AgentSession.objects.filter(pk=session.pk).exists():
            raise ValueError(f"session {session.pk} already exists; delete it first to import it again")
        # raw=True: keep created_at/updated_at/timestamp as exported instead of auto_now(_add).
        session.save_base(raw=True, force_insert=True)
        seen: set[int] = set()
        for record in iterator:
            event = _build_event(record, session)
            if event.sequence_number in seen:
                raise InvalidExport(f"sequence number {event.sequence_number} appears twice")
            seen.add(event.sequence_number)
            try:
                event.save_base(raw=True, force_insert=True)
            except IntegrityError as exc:  # e.g. an event id already used by another session
                raise ValueError(f"event #{event.sequence_number} cannot be stored: {exc}") from exc
    return session, len(seen)


def read_jsonl(stream: TextIO) -> Iterator[dict[str, Any]]:
    for number, line in enumerate(stream, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InvalidExport(f"line {number} is not JSON: {exc}") from exc
        if not isinstance(record, dict):
            raise InvalidExport(f"line {number} is not a JSON object")
        yield record


class Command(BaseCommand):
    help = "Load a session exported with `replay_session <id> --format jsonl` (ids and timestamps kept)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", help="the .jsonl export, or - for standard input")

    def handle(self, *args: Any, **options: Any) -> None:
        path: str = options["file"]
        try:
            if path == "-":
                session, count = import_records(read_jsonl(sys.stdin))
            else:
                with open(path, encoding="utf-8") as stream:
                    session, count = import_records(read_jsonl(stream))
        except OSError as exc:
            raise CommandError(f"cannot read {path}: {exc}") from exc
        except ValueError as exc:  # InvalidExport included
            raise CommandError(str(exc)) from exc
        self.stdout.write(f"Imported session {session.pk} with {count} events.")
