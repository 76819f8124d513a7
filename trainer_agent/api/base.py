"""What every JSON endpoint shares: Bearer auth, strict JSON bodies, the caller's id, and query validation."""

from __future__ import annotations

import uuid
from contextlib import ExitStack
from typing import Any, cast

from rest_framework import serializers
from rest_framework.exceptions import NotFound, UnsupportedMediaType
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from trainer_agent.api.errors import SESSION_NOT_FOUND, BadRequest
from trainer_agent.api.parsers import StrictJSONParser
from trainer_agent.auth import AuthenticatedUser, IsAuthenticatedUser, SupabaseJWTAuthentication
from trainer_agent.tenancy import acting_for

JSON_MEDIA_TYPE = "application/json"


class AgentApi(APIView):
    """An endpoint for a signed-in user (Supabase access token) that reads JSON bodies strictly."""

    authentication_classes = [SupabaseJWTAuthentication]
    permission_classes = [IsAuthenticatedUser]
    parser_classes = [StrictJSONParser]

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        """After authentication, the view's database work is the caller's (row-level security on PostgreSQL)."""
        self._unit_of_work = ExitStack()
        super().initial(request, *args, **kwargs)
        self._unit_of_work.enter_context(acting_for(caller_id(request)))

    def finalize_response(self, request: Request, response: Response, *args: Any, **kwargs: Any) -> Response:
        unit_of_work: ExitStack | None = getattr(self, "_unit_of_work", None)
        if unit_of_work is not None:
            unit_of_work.close()
        return super().finalize_response(request, response, *args, **kwargs)


def caller_id(request: Request) -> uuid.UUID:
    """The verified user id of the request's access token (the only user id the API trusts)."""
    return cast(AuthenticatedUser, request.user).user_id


def has_body(request: Request) -> bool:
    return bool(request._request.body)


def read_json_body(request: Request) -> Any:
    """The request's JSON body (call only when `has_body`). 415 unless it is `application/json`; 400 if malformed.

    The size was checked by RequestBodyLimitMiddleware before the view ran.
    """
    media_type = request.content_type.split(";", 1)[0].strip().lower()
    if media_type != JSON_MEDIA_TYPE:
        shown = f'"{media_type[:100]}"' if media_type else "missing"
        raise UnsupportedMediaType(
            media_type, detail=f"Content-Type {shown}: send the body as {JSON_MEDIA_TYPE}."
        )
    return request.data


def read_json_object(request: Request, *, required: bool) -> dict[str, Any]:
    """The body as a JSON object; `{}` for no body unless `required` (then 400)."""
    if not has_body(request):
        if required:
            raise BadRequest("The request body is empty: send a JSON object.")
        return {}
    body = read_json_body(request)
    if not isinstance(body, dict):
        raise BadRequest("The request body must be a JSON object.")
    return body


def parse_session_id(raw: str) -> uuid.UUID:
    """A session id from the URL; anything that is not a UUID names no session (404, like an unknown one)."""
    try:
        return uuid.UUID(raw)
    except ValueError:
        raise NotFound(SESSION_NOT_FOUND) from None


def validated_query(request: Request, serializer_class: type[serializers.Serializer]) -> dict[str, Any]:
    """Query parameters validated by `serializer_class` (400 naming the parameter otherwise)."""
    serializer = serializer_class(data=request.query_params)
    serializer.is_valid(raise_exception=True)
    return dict(serializer.validated_data)
