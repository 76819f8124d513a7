"""The caller's agent sessions: list, create, read with recent actions, delete (docs/contracts.md §4.4 (sessions API))."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from sessions_app.selectors import get_session_for_user, list_sessions, recent_actions
from sessions_app.services import create_session
from trainer_agent.api.base import AgentApi, caller_id, parse_session_id, read_json_object, validated_query
from trainer_agent.api.errors import BadRequest
from trainer_agent.api.schema import AUTH_ERRORS, BODY_ERRORS, CONFLICT, NOT_FOUND, QUERY_ERRORS
from trainer_agent.api.serializers import EventSerializer, SessionSerializer
from trainer_agent.turns import delete_session_everywhere

RECENT_ACTIONS_LIMIT = 20
SESSION_ID = OpenApiParameter(
    "session_id", str, OpenApiParameter.PATH, description="The session's UUID (anything else is 404)."
)


class SessionEnvelopeSerializer(serializers.Serializer[Any]):
    session = SessionSerializer()

    class Meta:
        ref_name = "SessionEnvelope"


class SessionListCreateApi(AgentApi):
    """The caller's sessions: list them, or start a new one."""

    class FilterSerializer(serializers.Serializer[Any]):
        limit = serializers.IntegerField(min_value=1, max_value=100, default=10, required=False)

        class Meta:
            ref_name = "SessionListFilter"

    class OutputSerializer(serializers.Serializer[Any]):
        sessions = SessionSerializer(many=True)

        class Meta:
            ref_name = "SessionList"

    @extend_schema(
        operation_id="agent_sessions_list",
        summary="List your sessions, newest first",
        parameters=[
            OpenApiParameter(
                "limit",
                {"type": "integer", "minimum": 1, "maximum": 100, "default": 10},
                description="How many sessions (1-100, default 10); anything else is 400.",
            )
        ],
        responses={200: OutputSerializer, **QUERY_ERRORS},
        tags=["agent"],
    )
    def get(self, request: Request) -> Response:
        query = validated_query(request, self.FilterSerializer)
        sessions = list_sessions(user_id=caller_id(request), limit=query["limit"])
        return Response(self.OutputSerializer({"sessions": sessions}).data)

    @extend_schema(
        operation_id="agent_sessions_create",
        summary="Start a new session",
        description="Takes no body (or `{}`). The session starts `active` with context from sequence 0.",
        request=None,
        responses={201: SessionEnvelopeSerializer, **BODY_ERRORS},
        tags=["agent"],
    )
    def post(self, request: Request) -> Response:
        if read_json_object(request, required=False):
            raise BadRequest("POST /agent/sessions takes no fields: send no body or {}.")
        session = create_session(user_id=caller_id(request))
        return Response(SessionEnvelopeSerializer({"session": session}).data, status=status.HTTP_201_CREATED)


class SessionRetrieveDeleteApi(AgentApi):
    """One of the caller's sessions: read it with its recent actions, or delete it."""

    class OutputSerializer(serializers.Serializer[Any]):
        session = SessionSerializer()
        recentActions = EventSerializer(
            many=True,
            help_text=f"The latest {RECENT_ACTIONS_LIMIT} tool_call/tool_result events, oldest first.",
        )

        class Meta:
            ref_name = "SessionDetail"

    @extend_schema(
        operation_id="agent_sessions_retrieve",
        summary="A session with its recent actions",
        parameters=[SESSION_ID],
        responses={200: OutputSerializer, **AUTH_ERRORS, 404: NOT_FOUND},
        tags=["agent"],
    )
    def get(self, request: Request, session_id: str) -> Response:
        session = get_session_for_user(user_id=caller_id(request), session_id=parse_session_id(session_id))
        actions = recent_actions(session=session, limit=RECENT_ACTIONS_LIMIT)
        return Response(self.OutputSerializer({"session": session, "recentActions": actions}).data)

    @extend_schema(
        operation_id="agent_sessions_destroy",
        summary="Delete a session and all its events",
        parameters=[SESSION_ID],
        request=None,
        responses={
            204: OpenApiResponse(description="Deleted."),
            **AUTH_ERRORS,
            404: NOT_FOUND,
            409: CONFLICT,
        },
        tags=["agent"],
    )
    def delete(self, request: Request, session_id: str) -> Response:
        user_id = caller_id(request)
        parsed = parse_session_id(session_id)
        # A running turn would fail mid-way writing into a deleted session: refused instead (409).
        delete_session_everywhere(session=get_session_for_user(user_id=user_id, session_id=parsed))
        return Response(status=status.HTTP_204_NO_CONTENT)
