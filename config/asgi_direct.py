"""Serving one async Django view straight from the ASGI server's event loop.

`DirectViewHandler` does for a single async view what Django's `ASGIHandler` does for all of them, minus what
the view does not need and a burst of requests pays for: the `request_started` / `request_finished` signals
(their receivers are synchronous, so each request hops twice to the one thread asgiref keeps for
thread-sensitive code, and a burst queues there), URL resolution and the full middleware stack. It still
builds Django's own `ASGIRequest`, runs the given async-capable middleware, streams a `StreamingHttpResponse`
chunk by chunk and cancels the view when the client disconnects, as Django does.

The view must release any database connection it opens itself: no `request_finished` closes them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Sequence
from io import BytesIO
from typing import Any

from django.core.handlers.asgi import ASGIRequest, get_script_prefix
from django.http import HttpRequest, HttpResponseBase, JsonResponse
from django.urls import set_script_prefix
from django.utils.module_loading import import_string

logger = logging.getLogger(__name__)

AsyncView = Callable[[HttpRequest], Awaitable[HttpResponseBase]]


class DirectViewHandler:
    """An ASGI app for one async view, behind the given async-capable middleware (dotted paths, outermost first).

    The request body is read into memory, at most `max_body_bytes` + 1 bytes of it (the rest is drained and
    dropped), so a body-size middleware still sees that it is too large.
    """

    def __init__(self, view: AsyncView, *, middleware: Sequence[str], max_body_bytes: int) -> None:
        handler: Any = view
        for path in reversed(middleware):
            handler = import_string(path)(handler)
        self.handler: AsyncView = handler
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        assert scope["type"] == "http"
        body = await self._read_body(receive)
        if body is None:
            return  # the client went away before its request was complete
        set_script_prefix(get_script_prefix(scope))
        request = ASGIRequest(scope, BytesIO(body))
        responding = asyncio.ensure_future(self._respond(request, send))
        disconnected = asyncio.ensure_future(_wait_for_disconnect(receive))
        try:
            await asyncio.wait({responding, disconnected}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (responding, disconnected):
                if not task.done():
                    task.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await task
        if responding.done() and not responding.cancelled():
            responding.result()

    async def _read_body(self, receive: Any) -> bytes | None:
        parts: list[bytes] = []
        kept = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return None
            room = self.max_body_bytes + 1 - kept
            if room > 0:
                chunk = message.get("body", b"")[:room]
                parts.append(chunk)
                kept += len(chunk)
            if not message.get("more_body", False):
                return b"".join(parts)

    async def _respond(self, request: ASGIRequest, send: Any) -> None:
        try:
            response = await self.handler(request)
        except Exception:
            logger.exception("direct_view.failed", extra={"path": request.path})
            response = JsonResponse({"detail": "Internal server error."}, status=500)
        try:
            await _send_response(response, send)
        finally:
            for closer in response._resource_closers:  # type: ignore[attr-defined]  # what close() runs, no signal
                closer()


async def _send_response(response: HttpResponseBase, send: Any) -> None:
    headers = [(name.encode("latin-1"), value.encode("latin-1")) for name, value in response.items()]
    headers += [
        (b"Set-Cookie", c.output(header="").encode("ascii").strip()) for c in response.cookies.values()
    ]
    if not response.streaming and not response.has_header("Content-Length"):
        headers.append((b"Content-Length", str(len(response.content)).encode("ascii")))  # type: ignore[attr-defined]
    await send({"type": "http.response.start", "status": response.status_code, "headers": headers})
    if not response.streaming:
        await send({"type": "http.response.body", "body": response.content})  # type: ignore[attr-defined]
        return
    async for part in response:  # type: ignore[attr-defined]  # an async StreamingHttpResponse
        await send({"type": "http.response.body", "body": part, "more_body": True})
    await send({"type": "http.response.body", "body": b""})


async def _wait_for_disconnect(receive: Any) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass
