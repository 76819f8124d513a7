"""Content negotiation that never answers 406: a client that accepts nothing we render gets JSON.

Mobile SSE clients send `Accept: text/event-stream` to every endpoint, including the JSON ones, and error
responses of the streaming endpoint are JSON too. Refusing them with 406 would hide the real answer.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rest_framework.exceptions import NotAcceptable
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import BaseRenderer
from rest_framework.request import Request


class JSONFallbackNegotiation(DefaultContentNegotiation):
    """DRF's negotiation, falling back to the view's first renderer instead of raising NotAcceptable."""

    def select_renderer(
        self, request: Request, renderers: Iterable[BaseRenderer], format_suffix: str | None = None
    ) -> tuple[BaseRenderer, str] | Any:
        candidates = list(renderers)
        try:
            return super().select_renderer(request, candidates, format_suffix)
        except NotAcceptable:
            fallback = candidates[0]
            return fallback, fallback.media_type
