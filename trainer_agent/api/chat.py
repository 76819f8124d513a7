"""The turn request (`POST /agent/chat`, `POST /agent/stream`) and the OpenAPI description of `/agent/chat`
(docs/contracts.md §4.1 (POST /agent/chat)).

`TurnRequestSerializer` is the one definition of the body: both views validate with it
(`trainer_agent.streaming.read_turn_request`), and both operations document it (`ChatRequest`; `/agent/stream`
refers to it from `trainer_agent.api.schema`).

The endpoints are async views (`trainer_agent.streaming`: they wait for a worker without holding a thread,
which an APIView cannot). drf-spectacular documents views it finds through `callback.cls`: the `/agent/chat`
route carries `AgentChatApi` as its schema, so the documented request and responses stay DRF serializers.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from pydantic import ValidationError
from rest_framework import serializers
from rest_framework.fields import empty
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.settings import api_settings

from datasources_app.workouts import ClientWorkout
from tools_app.registry import json_type_name
from trainer_agent.api.base import AgentApi
from trainer_agent.api.schema import BODY_ERRORS, CONFLICT, NOT_FOUND, THROTTLED
from trainer_agent.api.throttling import AgentTurnThrottle
from trainer_agent.llm.models import model_ids
from trainer_agent.turns.request import CONTROL_CHARS, MAX_MESSAGE_CHARS, MESSAGE_PATTERN, TurnRequest

REQUEST_NOT_AN_OBJECT = "The request body must be a JSON object."
NON_FIELD_ERRORS = api_settings.NON_FIELD_ERRORS_KEY


def _json_type(value: Any) -> str:
    """ "a number", "an array", "null": the JSON type of a wrong-typed field, for the 400 detail."""
    name = json_type_name(value)
    if name == "null":
        return name
    return f"{'an' if name[0] in 'aeiou' else 'a'} {name}"


class MessageField(serializers.RegexField):
    """The user's message: a string, not blank, at most MAX_MESSAGE_CHARS, no control characters other than tab
    and newlines. Its pattern and maximum length (the validators) are what the schema states; the checks below
    are the same rules, one problem at a time, in the words of the 400 detail."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(
            regex=MESSAGE_PATTERN,
            max_length=MAX_MESSAGE_CHARS,
            trim_whitespace=False,
            error_messages={"required": "This field is required.", "null": "This field is required."},
            **kwargs,
        )

    def run_validation(self, data: Any = empty) -> Any:
        (is_empty, data) = self.validate_empty_values(data)
        if is_empty:
            return data
        if not isinstance(data, str):
            raise serializers.ValidationError(f"must be a string, got {_json_type(data)}.")
        if not data.strip():
            raise serializers.ValidationError("must not be empty.")
        if len(data) > MAX_MESSAGE_CHARS:
            raise serializers.ValidationError(
                f"must be at most {MAX_MESSAGE_CHARS} characters (got {len(data)})."
            )
        if CONTROL_CHARS.search(data):
            raise serializers.ValidationError("must not contain control characters.")
        return data


class SessionIdField(serializers.UUIDField):
    """A UUID string (DRF's UUIDField would also take an integer)."""

    def to_internal_value(self, data: Any) -> uuid.UUID:
        if not isinstance(data, str):
            raise serializers.ValidationError(f"must be a UUID string, got {_json_type(data)}.")
        try:
            return uuid.UUID(data)
        except ValueError:
            raise serializers.ValidationError("must be a UUID.") from None


class ModelIdField(serializers.ChoiceField):
    """One of the configured model ids, read when the request is validated."""

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str) or data not in model_ids():
            raise serializers.ValidationError(f"must be one of {', '.join(model_ids())}.")
        return data


class StrictBooleanField(serializers.BooleanField):
    """JSON true or false only (DRF's BooleanField would also take "yes", 1, "on"...)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(error_messages={"null": "must be a boolean, got null."}, **kwargs)

    def to_internal_value(self, data: Any) -> bool:
        if not isinstance(data, bool):
            raise serializers.ValidationError(f"must be a boolean, got {_json_type(data)}.")
        return data


class ClientWorkoutField(serializers.DictField):
    """The workout the client shows, validated as `ClientWorkout`; its problems name their place in it
    (`currentWorkout.exercises.0.sets: ...`), so the detail does not prefix them with the field's name."""

    names_its_problems = True

    def to_internal_value(self, data: Any) -> dict[str, Any]:
        if not isinstance(data, dict):
            raise serializers.ValidationError(f"currentWorkout: must be an object, got {_json_type(data)}.")
        try:
            return ClientWorkout.model_validate(data).model_dump(mode="json", exclude_none=True)
        except ValidationError as exc:
            raise serializers.ValidationError(
                "; ".join(
                    f"currentWorkout.{'.'.join(str(p) for p in err['loc'])}: {err['msg']}"
                    for err in exc.errors()[:10]
                )
            ) from None


class TurnRequestSerializer(serializers.Serializer[Any]):
    """The body of `POST /agent/chat` and `POST /agent/stream`: a JSON object with these fields only."""

    # The one definition of the body: it validates it (`read`, used by both views) and documents it (the
    # `ChatRequest` schema of both operations; the docstring above is its description).

    default_error_messages = {"invalid": REQUEST_NOT_AN_OBJECT, "unknown": "unknown field(s): {names}"}
    # The order the 400 detail names the problems in.
    PROBLEM_ORDER = ("unknown", "message", "sessionId", "model", "preview", "currentWorkout")

    message = MessageField(
        help_text="The user's message: not blank, no control characters other than tab and newlines.",
    )
    sessionId = SessionIdField(
        required=False, allow_null=True, help_text="Continue this session (yours); omit to start a new one."
    )
    currentWorkout = ClientWorkoutField(
        required=False,
        allow_null=True,
        help_text="The workout the client is showing (`{title?, exercises: [...], summary?, auto_start?}`, "
        "the shape of `generate_workout`); validated, then used as the user's current workout.",
    )
    model = ModelIdField(
        choices=model_ids(),
        required=False,
        allow_null=True,
        help_text="Model override; default PRIMARY_MODEL.",
    )
    preview = StrictBooleanField(
        required=False,
        default=True,
        help_text="`POST /agent/stream` only: send preview frames (`message_preview`, `exercise_preview`) while "
        "the model writes; `false` gives the stream without them. Ignored by `/agent/chat`. JSON true or false.",
    )

    class Meta:
        ref_name = "ChatRequest"

    def to_internal_value(self, data: Any) -> dict[str, Any]:
        problems: dict[str, Any] = {}
        if isinstance(data, Mapping):
            unknown = sorted(str(key) for key in data if key not in self.fields)
            if unknown:
                problems["unknown"] = [self.error_messages["unknown"].format(names=", ".join(unknown)[:200])]
        try:
            values: dict[str, Any] = super().to_internal_value(data)
        except serializers.ValidationError as exc:
            if not isinstance(exc.detail, dict):
                raise
            problems.update(exc.detail)
        if problems:
            raise serializers.ValidationError(problems)
        return values

    @classmethod
    def read(cls, body: Any) -> TurnRequest:
        """The validated request; TurnRequestInvalid (its `detail` naming every problem) otherwise."""
        if not isinstance(body, dict):  # DRF reports a null body as "No data provided"
            raise TurnRequestInvalid(REQUEST_NOT_AN_OBJECT)
        serializer = cls(data=body)
        if not serializer.is_valid():
            raise TurnRequestInvalid(cls.detail_of(serializer.errors))
        values = serializer.validated_data
        return TurnRequest(
            message=values["message"],
            session_id=values.get("sessionId"),
            current_workout=values.get("currentWorkout"),
            model=values.get("model"),
            preview=values.get("preview", True),
        )

    @classmethod
    def detail_of(cls, errors: Mapping[str, Any]) -> str:
        """The 400 detail: every problem, one sentence each, `field: problem`, in `PROBLEM_ORDER`."""
        if NON_FIELD_ERRORS in errors:
            return " ".join(str(problem) for problem in errors[NON_FIELD_ERRORS])
        problems: list[str] = []
        for name in cls.PROBLEM_ORDER:
            field = cls._declared_fields.get(name)
            named = name == "unknown" or getattr(field, "names_its_problems", False)
            problems.extend(str(p) if named else f"{name}: {p}" for p in errors.get(name, ()))
        return " ".join(problems)


class TurnRequestInvalid(ValueError):
    """The body of a turn request is invalid; `detail` is the 400 message."""

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


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
    """Run a turn for the caller and answer with what the client should show: the schema of the async view
    `trainer_agent.streaming.agent_chat`, which the route serves (see the module's docstring)."""

    throttle_classes = [AgentTurnThrottle]

    @extend_schema(
        operation_id="agent_chat",
        summary="Run one turn (non-streaming)",
        description="Runs the agent on the message to completion and returns what to show. Nothing is "
        "written when the request is refused (4xx).",
        request=TurnRequestSerializer,
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
        """What drf-spectacular documents (it lists the methods a view class has). DRF never dispatches here:
        the route's callback is `agent_chat`; were this class routed by mistake, the answer would be a 405."""
        return self.http_method_not_allowed(request)
