"""The shapes of events' `data` (docs/contracts.md §6.4 (event types and their data)): one pydantic model per
event type (per purpose for the model calls), the one place those shapes are written down.

Writers build these models and hand them to `sessions_app.services.append_events` (through `NewEvent`), which
stores `to_data()`: the fields the writer set, in the order it set them, so the stored JSON is byte for byte
what the writers stored before the models existed (rows already stored are never migrated; a test validates
and round-trips a copy of them). Readers go through `sessions_app.transcript`, or read one field with the
helpers here (`purpose_of`, `trainer_purpose_q`), tolerant of rows that do not match (older data, imports).

`purpose` says which caller made a model call: `trainer` (the loop), `initializer` or `subagent:<agent id>`.
Trainer responses (and the oldest trainer requests) carry no `purpose`: `purpose_of` is where it defaults.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Literal

from django.db.models import Q
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, model_validator
from pydantic_core.core_schema import ValidatorFunctionWrapHandler

from sessions_app.models import EventType

TRAINER: Literal["trainer"] = "trainer"
INITIALIZER: Literal["initializer"] = "initializer"
SUBAGENT_PREFIX = "subagent:"
# A sub-agent's purpose: "subagent:<agent id>".
SubagentPurpose = str

Number = int | float  # kept as written: an int stays an int, a float a float (the JSON must not change)


def purpose_of(data: Mapping[str, Any] | Any) -> str:
    """The purpose of an `llm_request`/`llm_response` (or any event data): `trainer` when it names none."""
    if not isinstance(data, Mapping):
        return TRAINER
    return str(data.get("purpose", TRAINER))


def is_trainer(data: Mapping[str, Any] | Any) -> bool:
    """A model call of the trainer loop (not the initializer's, not a sub-agent's)."""
    return purpose_of(data) == TRAINER


def trainer_purpose_q() -> Q:
    """The ORM filter for events of the trainer loop (`purpose_of(data) == "trainer"`, the default included)."""
    return Q(data__purpose=TRAINER) | ~Q(data__has_key="purpose")


class EventData(BaseModel):
    """One event type's `data`. `to_data()` gives the stored JSON object: exactly the keys that were given, in
    their order (nested models too), with unknown keys refused unless the contract leaves the shape open."""

    # strict: a value of another type is refused, never converted (the stored JSON would change).
    model_config = ConfigDict(extra="forbid", strict=True)
    event_type: ClassVar[str]
    _order: tuple[str, ...] = PrivateAttr(default=())

    @model_validator(mode="wrap")
    @classmethod
    def _remember_order(cls, value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        instance = handler(value)
        if isinstance(value, Mapping) and isinstance(instance, EventData):
            instance._order = tuple(str(key) for key in value)
        return instance

    def to_data(self) -> dict[str, Any]:
        values = self.__dict__  # the fields (pydantic keeps them here)
        extra = self.__pydantic_extra__ or {}
        out: dict[str, Any] = {}
        for key in self._order or tuple(self.model_fields_set):
            if key in values:
                out[key] = _plain(values[key])
            elif key in extra:
                out[key] = _plain(extra[key])
        return out


def _plain(value: Any) -> Any:
    # Nested models are fields of their own (Tokens, ToolOutput, ToolStatus), never inside a dict or list field.
    return value.to_data() if isinstance(value, EventData) else value


class UserMessage(EventData):
    event_type = EventType.USER_MESSAGE
    message: str


class TrainerRequest(EventData):
    """A request of the trainer loop (`context_sequence`: the last event its context read)."""

    event_type = EventType.LLM_REQUEST
    model: str
    prompt: str
    estimated_tokens: int
    message_count: int
    context_sequence: int
    iteration: int
    purpose: Literal["trainer"] = TRAINER


class InitializerRequest(EventData):
    event_type = EventType.LLM_REQUEST
    model: str
    purpose: Literal["initializer"]
    prompt: str
    estimated_tokens: int


class SubagentRequest(EventData):
    event_type = EventType.LLM_REQUEST
    model: str
    purpose: SubagentPurpose = Field(pattern=r"^subagent:.+")
    attempt: int
    prompt: str
    estimated_tokens: int


class Tokens(EventData):
    """The token buckets of one call (docs/contracts.md §6.4): they never overlap; `total` is their sum."""

    event_type = EventType.LLM_RESPONSE
    prompt: int
    completion: int
    cached: int
    cache_write: int
    total: int


class TrainerResponse(EventData):
    """The trainer model's answer (it names no purpose); its tool calls follow as `tool_call` events."""

    event_type = EventType.LLM_RESPONSE
    model: str
    raw_response: dict[str, Any]
    text: str
    stop_reason: str | None
    tokens: Tokens
    cost_cents: Number
    purpose: Literal["trainer"] = TRAINER


class InitializerResponse(EventData):
    event_type = EventType.LLM_RESPONSE
    model: str
    purpose: Literal["initializer"]
    raw_response: Any
    tokens: Tokens
    cost_cents: Number


class SubagentResponse(EventData):
    event_type = EventType.LLM_RESPONSE
    model: str
    purpose: SubagentPurpose = Field(pattern=r"^subagent:.+")
    attempt: int
    valid: bool
    problems: list[str]
    raw_response: Any
    tokens: Tokens
    cost_cents: Number


class ToolCallData(EventData):
    event_type = EventType.TOOL_CALL
    tool_name: str
    arguments: dict[str, Any]
    call_id: str


class ToolOutput(EventData):
    """A tool's result as stored (docs/contracts.md §11.1): `artifact` only when a workout was delivered."""

    event_type = EventType.TOOL_RESULT
    success: bool
    data: Any
    formatted: str
    artifact: dict[str, Any] | None = None
    artifact_id: str | None = None


class ToolStatus(EventData):
    event_type = EventType.TOOL_RESULT
    message: str
    phase: Literal["done", "error"] | None


class ToolResultData(EventData):
    event_type = EventType.TOOL_RESULT
    tool_name: str
    result: ToolOutput
    success: bool
    call_id: str
    status: ToolStatus | None = None


class KnowledgeData(EventData):
    """Fetched data the model reads; `reason` is the initializer's (absent for the client's workout)."""

    event_type = EventType.KNOWLEDGE
    source: str
    params: dict[str, Any]
    reason: str | None = None
    data: str


class ErrorData(EventData):
    """An error: `kind` and `fatal` on the ones that end a turn; the week chain's add what failed."""

    event_type = EventType.ERROR
    message: str
    context: str
    stack: str | None
    kind: str | None = None
    fatal: bool | None = None
    retry_after: Number | None = None
    # A week being prepared (trainer_agent.agents.week): which sub-agent, plan, week and day failed.
    purpose: str | None = None
    plan_id: str | None = None
    week: int | None = None
    scheduled_workout_id: str | None = None


class ArtifactData(EventData):
    """A workout made for the user (docs/contracts.md §12.5)."""

    event_type = EventType.ARTIFACT
    artifact_id: str
    type: str
    schema_version: str
    title: str
    summary: dict[str, Any]
    auto_start: bool
    payload: dict[str, Any]


class CheckpointData(EventData):
    """A summary of the context so far (docs/contracts.md §13); the contract leaves the rest of its shape open."""

    model_config = ConfigDict(extra="allow", strict=True)
    event_type = EventType.CHECKPOINT
    checkpoint_number: int
    events_summarized: str
    summary: str


REQUEST_MODELS: dict[str, type[EventData]] = {TRAINER: TrainerRequest, INITIALIZER: InitializerRequest}
RESPONSE_MODELS: dict[str, type[EventData]] = {TRAINER: TrainerResponse, INITIALIZER: InitializerResponse}
MODELS: dict[str, type[EventData]] = {
    EventType.USER_MESSAGE: UserMessage,
    EventType.TOOL_CALL: ToolCallData,
    EventType.TOOL_RESULT: ToolResultData,
    EventType.KNOWLEDGE: KnowledgeData,
    EventType.ERROR: ErrorData,
    EventType.ARTIFACT: ArtifactData,
    EventType.CHECKPOINT: CheckpointData,
}


def model_for(event_type: str, data: Mapping[str, Any]) -> type[EventData]:
    """The model of `data` for an event of `event_type` (model calls: by their purpose)."""
    if event_type in (EventType.LLM_REQUEST, EventType.LLM_RESPONSE):
        purpose = purpose_of(data)
        if purpose.startswith(SUBAGENT_PREFIX):
            return SubagentRequest if event_type == EventType.LLM_REQUEST else SubagentResponse
        models = REQUEST_MODELS if event_type == EventType.LLM_REQUEST else RESPONSE_MODELS
        if purpose not in models:
            raise ValueError(f"unknown purpose {purpose!r}")
        return models[purpose]
    try:
        return MODELS[event_type]
    except KeyError:
        raise ValueError(f"unknown event type {event_type!r}") from None


def parse_event_data(event_type: str, data: Mapping[str, Any]) -> EventData:
    """`data` as its model; ValueError (pydantic's ValidationError) when it does not have the contract's shape."""
    return model_for(event_type, data).model_validate(data)


__all__ = [
    "INITIALIZER",
    "TRAINER",
    "ArtifactData",
    "CheckpointData",
    "ErrorData",
    "EventData",
    "InitializerRequest",
    "InitializerResponse",
    "KnowledgeData",
    "SubagentRequest",
    "SubagentResponse",
    "Tokens",
    "ToolCallData",
    "ToolOutput",
    "ToolResultData",
    "ToolStatus",
    "TrainerRequest",
    "TrainerResponse",
    "UserMessage",
    "ValidationError",
    "is_trainer",
    "model_for",
    "parse_event_data",
    "purpose_of",
    "trainer_purpose_q",
]
