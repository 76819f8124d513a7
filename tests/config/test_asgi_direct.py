"""DirectViewHandler speaks ASGI for one async view: bodies, responses, streams, disconnects and failures.

Driven with real ASGI messages through in-memory queues, as an ASGI server would; the live-daphne tests in
tests/trainer_agent/streaming drive the same handler behind `/agent/stream` over TCP.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from django.conf import settings
from django.http import HttpRequest, HttpResponseBase, JsonResponse, StreamingHttpResponse

from config.asgi_direct import DirectViewHandler

LIMIT = 1024
BODY_LIMIT_MIDDLEWARE = ["trainer_agent.middleware.RequestBodyLimitMiddleware"]


def scope(method: str = "POST", headers: list[tuple[bytes, bytes]] | None = None) -> dict[str, Any]:
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": "/agent/stream",
        "raw_path": b"/agent/stream",
        "query_string": b"",
        "root_path": "",
        "headers": headers or [(b"content-type", b"application/json")],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
    }


class Client:
    """The server side of one connection: what the client sends, and what the app sent back."""

    def __init__(self, chunks: list[bytes], *, disconnect_after_body: bool = False) -> None:
        self.incoming: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        for index, chunk in enumerate(chunks):
            self.incoming.put_nowait(
                {"type": "http.request", "body": chunk, "more_body": index < len(chunks) - 1}
            )
        if disconnect_after_body:
            self.incoming.put_nowait({"type": "http.disconnect"})
        self.sent: list[dict[str, Any]] = []
        self.body_sent = asyncio.Event()

    async def receive(self) -> dict[str, Any]:
        return await self.incoming.get()

    async def send(self, message: dict[str, Any]) -> None:
        self.sent.append(message)
        if message["type"] == "http.response.body" and message.get("body"):
            self.body_sent.set()

    @property
    def status(self) -> int:
        return int(self.sent[0]["status"])

    @property
    def headers(self) -> dict[str, str]:
        return {k.decode().lower(): v.decode() for k, v in self.sent[0]["headers"]}

    @property
    def body(self) -> bytes:
        return b"".join(m.get("body", b"") for m in self.sent[1:])


def run(handler: DirectViewHandler, client: Client, asgi_scope: dict[str, Any] | None = None) -> None:
    asyncio.run(handler(asgi_scope or scope(), client.receive, client.send))


async def echo_view(request: HttpRequest) -> HttpResponseBase:
    return JsonResponse({"method": request.method, "length": len(request.body), "type": request.content_type})


def test_a_body_sent_in_chunks_reaches_the_view_whole_with_a_content_length() -> None:
    client = Client([b'{"message": ', b'"hi"}'])
    run(DirectViewHandler(echo_view, middleware=BODY_LIMIT_MIDDLEWARE, max_body_bytes=LIMIT), client)
    assert client.status == 200
    assert json.loads(client.body) == {"method": "POST", "length": 17, "type": "application/json"}
    assert client.headers["content-length"] == str(len(client.body))
    assert client.sent[-1].get("more_body", False) is False


def test_an_oversized_body_without_content_length_is_refused_and_not_kept() -> None:
    """A 1 MB chunked body: the handler keeps one byte over the limit, the body-size middleware answers 413."""
    seen: list[int] = []

    async def view(request: HttpRequest) -> HttpResponseBase:
        seen.append(len(request.body))
        return JsonResponse({})

    client = Client([b"x" * 64 * 1024] * 16)
    handler = DirectViewHandler(
        view, middleware=BODY_LIMIT_MIDDLEWARE, max_body_bytes=settings.MAX_REQUEST_BYTES
    )
    run(handler, client)
    assert client.status == 413
    assert "Request body too large" in json.loads(client.body)["detail"]
    assert seen == []


def test_a_client_gone_before_its_body_is_complete_gets_nothing() -> None:
    calls: list[HttpRequest] = []

    async def view(request: HttpRequest) -> HttpResponseBase:
        calls.append(request)
        return JsonResponse({})

    client = Client([])
    client.incoming.put_nowait({"type": "http.request", "body": b"{", "more_body": True})
    client.incoming.put_nowait({"type": "http.disconnect"})
    run(DirectViewHandler(view, middleware=[], max_body_bytes=LIMIT), client)
    assert calls == [] and client.sent == []


def test_a_view_that_fails_is_a_json_500_and_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    async def view(request: HttpRequest) -> HttpResponseBase:
        raise RuntimeError("boom")

    client = Client([b"{}"])
    run(DirectViewHandler(view, middleware=[], max_body_bytes=LIMIT), client)
    assert client.status == 500
    assert json.loads(client.body) == {"detail": "Internal server error."}
    assert any("direct_view.failed" in record.message for record in caplog.records)


def test_a_stream_is_sent_chunk_by_chunk_and_ends_with_an_empty_body() -> None:
    async def frames() -> AsyncIterator[str]:
        for n in range(3):
            yield f"data: {n}\n\n"

    async def view(request: HttpRequest) -> HttpResponseBase:
        response = StreamingHttpResponse(frames(), content_type="text/event-stream")
        response["X-Session-Id"] = "s-1"
        return response

    client = Client([b"{}"])
    run(DirectViewHandler(view, middleware=[], max_body_bytes=LIMIT), client)
    assert client.status == 200
    assert client.headers["content-type"] == "text/event-stream"
    assert client.headers["x-session-id"] == "s-1"
    assert "content-length" not in client.headers
    bodies = [m for m in client.sent[1:]]
    assert [m["body"] for m in bodies] == [b"data: 0\n\n", b"data: 1\n\n", b"data: 2\n\n", b""]
    assert [m.get("more_body", False) for m in bodies] == [True, True, True, False]


def test_a_disconnect_mid_stream_stops_the_stream_and_runs_its_cleanup() -> None:
    """The generator is cancelled (its `finally` runs, as FrameQueue.frames detaches there); nothing more is sent."""
    cleaned_up = asyncio.Event()

    async def frames() -> AsyncIterator[str]:
        try:
            yield "data: first\n\n"
            await asyncio.sleep(3600)  # a turn that would go on for long
            yield "data: never\n\n"
        finally:
            cleaned_up.set()

    async def view(request: HttpRequest) -> HttpResponseBase:
        return StreamingHttpResponse(frames(), content_type="text/event-stream")

    async def scenario() -> Client:
        client = Client([b"{}"])
        handler = DirectViewHandler(view, middleware=[], max_body_bytes=LIMIT)
        serving = asyncio.ensure_future(handler(scope(), client.receive, client.send))
        await asyncio.wait_for(client.body_sent.wait(), timeout=5)
        client.incoming.put_nowait({"type": "http.disconnect"})
        await asyncio.wait_for(serving, timeout=5)
        assert cleaned_up.is_set()
        return client

    client = asyncio.run(scenario())
    assert client.body == b"data: first\n\n"


def test_the_handler_keeps_one_byte_over_its_limit_at_most() -> None:
    seen: list[int] = []

    async def view(request: HttpRequest) -> HttpResponseBase:
        seen.append(len(request.body))
        return JsonResponse({})

    run(DirectViewHandler(view, middleware=[], max_body_bytes=LIMIT), Client([b"x" * 700] * 3))
    run(DirectViewHandler(view, middleware=[], max_body_bytes=LIMIT), Client([b"x" * 1000, b"y" * 24]))
    assert seen == [LIMIT + 1, LIMIT]
