"""DRF exception handler: the seed's 401 `{"error": ...}` bodies, and `{"detail": "<one string>"}` otherwise."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from rest_framework import status
from rest_framework.exceptions import APIException, AuthenticationFailed, NotAuthenticated, NotFound
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler
from rest_framework.views import set_rollback

from sessions_app.models import SessionNotFound
from sessions_app.services import TurnInProgress
from trainer_agent.auth import ACCESS_TOKEN_REQUIRED, INVALID_TOKEN, TokenInvalid, TokenMissing

NON_FIELD_KEYS = frozenset({"non_field_errors", "detail"})
SESSION_NOT_FOUND = "Session not found."


class BadRequest(APIException):
    status_code = status.HTTP_400_BAD_REQUEST
    default_detail = "Invalid request."
    default_code = "invalid"


class Conflict(APIException):
    status_code = status.HTTP_409_CONFLICT
    default_detail = "A turn is already running in this session; wait for it to finish."
    default_code = "conflict"


def translate_domain_error(exc: Exception) -> Exception:
    """The API error for an exception raised below the views (turns, selectors); others unchanged."""
    if isinstance(exc, SessionNotFound):
        # One answer for unknown and someone else's sessions, so ids cannot be probed.
        return NotFound(SESSION_NOT_FOUND)
    if isinstance(exc, TurnInProgress):
        return Conflict()
    return exc


def unauthorized_response(message: str) -> Response:
    """401 with the seed's body and the scheme the client should use."""
    return Response(
        {"error": message},
        status=status.HTTP_401_UNAUTHORIZED,
        headers={"WWW-Authenticate": "Bearer"},
    )


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """Map auth failures to the seed's 401 bodies and every other API error to {"detail": str}.

    Returns None for exceptions DRF does not know, so real bugs surface as 500s (and fail tests).
    """
    if isinstance(exc, TokenMissing | NotAuthenticated):
        set_rollback()
        return unauthorized_response(ACCESS_TOKEN_REQUIRED)
    if isinstance(exc, TokenInvalid | AuthenticationFailed):
        set_rollback()
        return unauthorized_response(INVALID_TOKEN)
    response = drf_exception_handler(translate_domain_error(exc), context)
    if response is None:
        return None
    response.data = {"detail": flatten_error_detail(response.data)}
    return response


def flatten_error_detail(detail: Any) -> str:
    """One readable sentence from DRF's error detail, naming fields: "message: This field is required." """
    parts = [f"{path}: {message}" if path else message for path, message in _walk(detail, "")]
    return " ".join(parts) or "Invalid request."


def _walk(detail: Any, path: str) -> Iterator[tuple[str, str]]:
    if isinstance(detail, dict):
        for key, value in detail.items():
            name = str(key)
            child = path if name in NON_FIELD_KEYS else (f"{path}.{name}" if path else name)
            yield from _walk(value, child)
    elif isinstance(detail, list | tuple):
        for index, value in enumerate(detail):
            # Nested serializers report per-item errors as lists of dicts: name the item's index.
            child = (f"{path}.{index}" if path else str(index)) if isinstance(value, dict) else path
            yield from _walk(value, child)
    elif detail is not None:
        text = str(detail)
        if text:
            yield path, text
