"""Refuse request bodies over MAX_REQUEST_BYTES with a JSON 413, before anything parses them; answer a view
that lost its database with a JSON 503 (`DatabaseUnavailableMiddleware`).

Both the declared size (Content-Length) and the bytes actually sent count: a chunked request has no
Content-Length, so the body is read here, at most MAX_REQUEST_BYTES + 1 bytes of it, and kept on the request
for the view. Under ASGI Django has already spooled the whole body; under WSGI the stream is bounded by
Content-Length. Works in both sync and async stacks, so streaming views stay async end to end.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from io import BytesIO

from asgiref.sync import iscoroutinefunction, markcoroutinefunction
from django.conf import settings
from django.http import HttpRequest, HttpResponseBase, JsonResponse

from trainer_agent.connection_loss import database_unavailable

logger = logging.getLogger(__name__)

BODY_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def body_too_large_response(limit: int) -> JsonResponse:
    return JsonResponse(
        {"detail": f"Request body too large: the limit is {limit} bytes ({limit // 1024} KB)."}, status=413
    )


def check_request_body(request: HttpRequest) -> JsonResponse | None:
    """A 413/400 response for an oversized or unreadable body; None when the request may go on.

    A body that fits is read into memory and stays readable by `request.body` / `request.read()`; when it
    arrived without a Content-Length, one is filled in so parsers see the body at all.
    """
    limit: int = settings.MAX_REQUEST_BYTES
    declared = request.META.get("CONTENT_LENGTH") or ""
    if declared:
        try:
            length = int(declared)
        except ValueError:
            length = -1
        if length < 0:
            return JsonResponse({"detail": "Invalid Content-Length header."}, status=400)
        if length > limit:
            return body_too_large_response(limit)
    if request.method not in BODY_METHODS or hasattr(request, "_body"):
        return None
    body = request.read(limit + 1)
    if len(body) > limit:
        return body_too_large_response(limit)
    # What HttpRequest.body does itself after reading: later readers get the same bytes.
    request._body = body
    request._stream = BytesIO(body)
    if body and not declared:
        request.META["CONTENT_LENGTH"] = str(len(body))
    return None


class RequestBodyLimitMiddleware:
    """413 `{"detail": ...}` for any request whose body exceeds MAX_REQUEST_BYTES."""

    sync_capable = True
    async_capable = True

    def __init__(
        self, get_response: Callable[[HttpRequest], HttpResponseBase | Awaitable[HttpResponseBase]]
    ) -> None:
        self.get_response = get_response
        self.is_async = iscoroutinefunction(get_response)
        if self.is_async:
            markcoroutinefunction(self)

    def __call__(self, request: HttpRequest) -> HttpResponseBase | Awaitable[HttpResponseBase]:
        if self.is_async:
            return self.__acall__(request)
        refused = check_request_body(request)
        return refused if refused is not None else self.get_response(request)

    async def __acall__(self, request: HttpRequest) -> HttpResponseBase:
        # The body is already in memory or a local spool file (ASGIHandler reads it before the middleware).
        refused = check_request_body(request)
        if refused is not None:
            return refused
        response = self.get_response(request)
        assert not isinstance(response, HttpResponseBase)
        return await response


class DatabaseUnavailableMiddleware:
    """503 `{"detail": ...}` (with Retry-After) for a view that failed because the database did not answer
    (`connection_loss.database_unavailable`: a lost connection, a restart), instead of Django's HTML 500. The request's
    connection is closed, so the next request opens a new one."""

    sync_capable = True
    async_capable = True

    def __init__(
        self, get_response: Callable[[HttpRequest], HttpResponseBase | Awaitable[HttpResponseBase]]
    ) -> None:
        self.get_response = get_response
        if iscoroutinefunction(get_response):
            markcoroutinefunction(self)

    def __call__(self, request: HttpRequest) -> HttpResponseBase | Awaitable[HttpResponseBase]:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> JsonResponse | None:
        if not database_unavailable(exception):
            return None
        logger.warning("request.database_unavailable", extra={"path": request.path}, exc_info=exception)
        return JsonResponse(
            {"detail": "The service is busy; try again shortly."}, status=503, headers={"Retry-After": "2"}
        )
