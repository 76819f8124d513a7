"""A minimal SSE client over http.client that reads the body incrementally (never buffers the whole stream)."""

from __future__ import annotations

import contextlib
import http.client
import json
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

READ_TIMEOUT_S = 30.0
# Frames of a model call while it streams (docs/contracts.md §7.5): never stored, so never replayed.
PREVIEW_TYPES = frozenset({"message_preview", "exercise_preview"})


@dataclass
class SSEEvent:
    """One SSE event (`data` joined from its data lines), or a comment block such as `: ping`."""

    data: str = ""
    id: str | None = None
    event: str = "message"
    comments: list[str] = field(default_factory=list)
    received_at: float = 0.0

    @property
    def is_comment(self) -> bool:
        return not self.data and self.id is None and bool(self.comments)

    def json(self) -> dict[str, Any]:
        value = json.loads(self.data)
        assert isinstance(value, dict)
        return value


def parse_block(block: str) -> SSEEvent:
    event = SSEEvent(received_at=time.monotonic())
    data: list[str] = []
    for line in block.split("\n"):
        if line.startswith(":"):
            event.comments.append(line[1:].strip())
            continue
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "data":
            data.append(value)
        elif name == "id":
            event.id = value
        elif name == "event":
            event.event = value
    event.data = "\n".join(data)
    return event


class SSEStream:
    """An open response: status and headers now, events as they arrive."""

    def __init__(self, conn: http.client.HTTPConnection, response: http.client.HTTPResponse) -> None:
        self.conn = conn
        self.response = response
        self.status = response.status
        self.headers = {key.lower(): value for key, value in response.getheaders()}
        self._buffer = ""

    def body_json(self) -> dict[str, Any]:
        value = json.loads(self.response.read())
        assert isinstance(value, dict)
        return value

    def events(self) -> Iterator[SSEEvent]:
        """Every block (events and comments) until the server ends the stream."""
        while True:
            while "\n\n" in self._buffer:
                block, self._buffer = self._buffer.split("\n\n", 1)
                if block.strip():
                    yield parse_block(block)
            chunk = self.response.read1(65536)
            if not chunk:
                return
            self._buffer += chunk.decode("utf-8")

    def frames(self) -> Iterator[SSEEvent]:
        """Only data events of type `message` (skips comments and any named event)."""
        for event in self.events():
            if event.data and event.event == "message":
                yield event

    def read_frames_until_done(self) -> list[SSEEvent]:
        collected: list[SSEEvent] = []
        for event in self.frames():
            collected.append(event)
            if event.json()["type"] in ("done", "error"):
                break
        return collected

    def close(self) -> None:
        """Drop the connection the way a client that goes away does."""
        sock = self.conn.sock
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        self.response.close()
        self.conn.close()


def open_stream(
    base_url: str,
    path: str,
    *,
    method: str = "GET",
    token: str | None = None,
    body: Any = None,
    raw_body: bytes | None = None,
    headers: dict[str, str] | None = None,
    timeout: float = READ_TIMEOUT_S,
) -> SSEStream:
    host, port = base_url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=timeout)
    sent_headers = {"Accept": "text/event-stream"}
    if token is not None:
        sent_headers["Authorization"] = f"Bearer {token}"
    payload = raw_body
    if body is not None:
        payload = json.dumps(body).encode()
        sent_headers["Content-Type"] = "application/json"
    sent_headers.update(headers or {})
    conn.request(method, path, body=payload, headers=sent_headers)
    return SSEStream(conn, conn.getresponse())


def post_turn(base_url: str, token: str | None, body: Any, **kwargs: Any) -> SSEStream:
    return open_stream(base_url, "/agent/stream", method="POST", token=token, body=body, **kwargs)


def follow_session(base_url: str, token: str, session_id: str, last_event_id: str | None = None) -> SSEStream:
    headers = {"Last-Event-ID": last_event_id} if last_event_id is not None else {}
    return open_stream(base_url, f"/agent/sessions/{session_id}/events", token=token, headers=headers)


def stored_frames(events: list[SSEEvent]) -> list[SSEEvent]:
    """The frames of stored events: what a client that ignores previews sees, and what a replay sends."""
    return [event for event in events if event.json().get("type") not in PREVIEW_TYPES]
