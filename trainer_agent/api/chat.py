"""The OpenAPI description of POST /agent/chat (docs/contracts.md §4.1 (POST /agent/chat)).

The endpoint is the async view `trainer_agent.streaming.agent_chat` (it waits for a worker without holding a
thread, which an APIView cannot). drf-spectacular documents views it finds through `callback.cls`: the route
carries `AgentChatApi` as its schema, so the documented request and responses stay DRF serializers.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from trainer_agent.api.base import AgentApi
from trainer_agent.api.schema import BODY_ERRORS, CONFLICT, NOT_FOUND, THROTTLED
from trainer_agent.api.throttling import AgentTurnThrottle
from trainer_agent.llm.models import model_ids
from trainer_agent.turns import MAX_MESSAGE_CHARS


class ChatRequestSerializer(serializers.Serializer[Any]):
    """Documents the body; `trainer_agent.turns.parse_turn_request` validates it (shared with /agent/stream)."""

    message = serializers.RegexField(
        # Not blank, and no control characters other than tab, newline and carriage return.
        regex=r"^[^\x00-\x08\x0b\x0c\x0e-\x1f\x7f]*[^\s\x00-\x08\x0b\x0c\x0e-\x1f\x7f][^\x00-\x08\x0b\x0c\x0e-\x1f\x7f]*$",
        max_length=MAX_MESSAGE_CHARS,
        help_text="The user's message: not blank, no control characters other than tab and newlines.",
    )
    sessionId = serializers.UUIDField(
        required=False, allow_null=True, help_text="Continue this session (yours); omit to start a new one."
    )
    currentWorkout = serializers.DictField(
        required=False,
        allow_null=True,
        help_text="The workout the client is showing (`{title?, exercises: [...], summary?, auto_start?}`, "
        "the shape of `generate_workout`); validated, then used as the user's current workout.",
    )
    model = serializers.ChoiceField(
        choices=model_ids(),
        required=False,
        allow_null=True,
        help_text="Model override; default PRIMARY_MODEL.",
    )
    preview = serializers.BooleanField(
        required=False,
        default=True,
        help_text="`POST /agent/stream` only: send preview frames (`message_preview`, `exercise_preview`) while "
        "the model writes; `false` gives the stream without them. Ignored by `/agent/chat`. JSON true or false.",
    )

    class Meta:
        ref_name = "ChatRequest"


class QuestionSerializer(serializers.Serializer[Any]):
    question = serializers.CharField()
    options = serializers.ListField(child=serializers.CharField())

    class Meta:
        ref_name = "Question"


class ClientResponseSerializer(serializers.Serializer[Any]):
    messages = serializers.ListField(child=serializers.CharField(), help_text="Agent messages to display.")
    exercises = serializers.ListField(
        child=serializers.DictField(),
        allow_null=True,
        help_text="The exercises of a workout delivered in this turn, if any.",
    )
    question = QuestionSerializer(allow_null=True, help_text="A pending question, if the agent asked one.")

    class Meta:
        ref_name = "ClientResponse"


class ChatResponseSerializer(serializers.Serializer[Any]):
    sessionId = serializers.UUIDField()
    response = ClientResponseSerializer()
    iterations = serializers.IntegerField(min_value=0)

    class Meta:
        ref_name = "ChatResponse"


class ChatFailureSerializer(serializers.Serializer[Any]):
    detail = serializers.CharField()
    sessionId = serializers.UUIDField()

    class Meta:
        ref_name = "ChatFailure"


class AgentChatApi(AgentApi):
    """Run a turn for the caller and answer with what the client should show (schema only; see above)."""

    throttle_classes = [AgentTurnThrottle]

    @extend_schema(
        operation_id="agent_chat",
        summary="Run one turn (non-streaming)",
        description="Runs the agent on the message to completion and returns what to show. Nothing is "
        "written when the request is refused (4xx).",
        request=ChatRequestSerializer,
        parameters=[
            OpenApiParameter(
                "Retry-After",
                int,
                OpenApiParameter.HEADER,
                response=[429, 502],
                description="Seconds to wait before retrying (429 always; 502 when the provider said).",
            )
        ],
        responses={
            200: ChatResponseSerializer,
            **BODY_ERRORS,
            404: NOT_FOUND,
            409: CONFLICT,
            429: THROTTLED,
            502: OpenApiResponse(
                ChatFailureSerializer,
                description="The model could not be called (or the turn could not be completed); the session "
                "is in status `error` and keeps every event of the failed turn. `response.messages` holds a "
                "short apology the client can show.",
            ),
            503: OpenApiResponse(
                ChatFailureSerializer,
                description="No worker took the turn within TURN_PICKUP_SECONDS because none is running: "
                '`detail` is "No worker is running to take the turn. Please try again later."; the turn and '
                "session are `error`, the message is kept and no worker runs that turn later. (Also 503 "
                "`{detail}` when the database could not admit the turn.)",
            ),
            504: OpenApiResponse(
                description="The turn did not end within AGENT_CHAT_WAIT_SECONDS: `{detail, sessionId}`; the "
                "turn goes on in its worker and the session's event stream shows it.",
            ),
        },
        tags=["agent"],
    )
    def post(self, request: Request) -> Response:
        raise NotImplementedError("served by trainer_agent.streaming.agent_chat")
