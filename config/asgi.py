"""ASGI entry point (daphne).

Three handlers share the process. `POST /agent/stream` is served straight from the event loop by
`config.asgi_direct.DirectViewHandler` (no request signals, no URL resolution: a burst of turns reaches its first
frame sooner). `GET /agent/sessions/<id>/events` goes through a Django handler whose middleware stack is only
`STREAM_MIDDLEWARE` (async-native): Django's session, CSRF, auth, messages and security middleware are
sync-only, and under ASGI each of them costs a request two hops to a worker thread and back. Both use
`STREAM_MIDDLEWARE` and are async views authenticated by a Bearer token. Everything else (the JSON API, the
admin, the demo page) goes through the ordinary handler with the full `MIDDLEWARE`.
"""

import os
import re
from typing import Any

from django.conf import settings
from django.core.asgi import get_asgi_application
from django.core.handlers.asgi import ASGIHandler

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django_application = get_asgi_application()

from config.asgi_direct import DirectViewHandler  # noqa: E402  (after Django is set up)
from trainer_agent.streaming import agent_stream  # noqa: E402

STREAMING_PATH = re.compile(r"^/agent/(?:stream|sessions/[^/]+/events)$")
TURN_STREAM_PATH = "/agent/stream"


class StreamingASGIHandler(ASGIHandler):
    """Django's ASGI handler with `settings.STREAM_MIDDLEWARE` instead of `settings.MIDDLEWARE`."""

    def load_middleware(self, is_async: bool = False) -> None:
        # BaseHandler.load_middleware reads settings.MIDDLEWARE; swap it for the duration (once, at start-up).
        full = settings.MIDDLEWARE
        settings.MIDDLEWARE = settings.STREAM_MIDDLEWARE
        try:
            super().load_middleware(is_async)
        finally:
            settings.MIDDLEWARE = full


streaming_application = StreamingASGIHandler()
turn_stream_application = DirectViewHandler(
    agent_stream, middleware=settings.STREAM_MIDDLEWARE, max_body_bytes=settings.MAX_REQUEST_BYTES
)


async def application(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] == "http" and scope.get("path") == TURN_STREAM_PATH:
        await turn_stream_application(scope, receive, send)
    elif scope["type"] == "http" and STREAMING_PATH.match(scope.get("path", "")):
        await streaming_application(scope, receive, send)
    else:
        await django_application(scope, receive, send)
