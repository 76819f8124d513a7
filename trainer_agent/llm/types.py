"""Provider-neutral request, response and error types shared by every LLM provider.

Messages use Anthropic's native multi-turn shape (docs/contracts.md §8.1 (events to messages)): ``{"role": "user" | "assistant",
"content": str | [block, ...]}`` with ``text``, ``tool_use`` and ``tool_result`` blocks. Providers for other
APIs translate from this shape; the context builder never needs to know which provider runs.
"""

from __future__ import annotations

import email.utils
import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, Protocol, get_args, runtime_checkable

if TYPE_CHECKING:
    import httpx2

DEFAULT_MAX_TOKENS = 8192

ErrorKind = Literal[
    "rate_limited", "overloaded", "timeout", "bad_request", "auth", "server", "invalid_response"
]
ERROR_KINDS: frozenset[str] = frozenset(get_args(ErrorKind))

# A tool call whose arguments are not a JSON object is still returned (so the loop can answer it with an
# is_error tool result the model can correct from); the undecodable value is kept under this key.
INVALID_ARGUMENTS_KEY = "__invalid_json__"


@dataclass(frozen=True)
class ToolSpec:
    """One tool offered to the model: its name, what it does, and the JSON schema of its input."""

    name: str
    description: str
    input_schema: dict[str, Any]


@dataclass
class LLMRequest:
    """One call to a chat model. Tool use is always forced (Anthropic ``any``, OpenAI ``required``)."""

    model: str
    system_prompt: str
    user_data_xml: str
    messages: list[dict[str, Any]]
    tools: list[ToolSpec]
    max_tokens: int = DEFAULT_MAX_TOKENS
    # None leaves the provider's default; agents send their definition's value (AgentContext.to_request).
    temperature: float | None = None
    # Who the call is for. Never sent on the wire; the built-in offline coach reads the user's data with it.
    user_id: str | None = None

    def estimated_tokens(self) -> int:
        """Rough size before the call (docs/contracts.md §8.4 (token estimate)): every character of the request divided by 4."""
        return total_characters(self) // 4


def total_characters(request: LLMRequest) -> int:
    """Characters of the system prompt, user data, messages and tool definitions together."""
    chars = len(request.system_prompt) + len(request.user_data_xml)
    for tool in request.tools:
        chars += len(tool.name) + len(tool.description) + len(repr(tool.input_schema))
    for message in request.messages:
        chars += _content_characters(message.get("content", ""))
    return chars


def _content_characters(content: Any) -> int:
    if isinstance(content, str):
        return len(content)
    chars = 0
    for block in content or []:
        if not isinstance(block, Mapping):
            continue
        kind = block.get("type")
        if kind == "text":
            chars += len(str(block.get("text", "")))
        elif kind == "tool_use":
            chars += len(str(block.get("name", ""))) + len(repr(block.get("input", {})))
        elif kind == "tool_result":
            chars += _content_characters(block.get("content", ""))
    return chars


@dataclass(frozen=True)
class ToolCall:
    """A tool the model asked to run. ``arguments`` is always a dict (see ``INVALID_ARGUMENTS_KEY``)."""

    id: str
    name: str
    arguments: dict[str, Any]

    @property
    def has_invalid_arguments(self) -> bool:
        return INVALID_ARGUMENTS_KEY in self.arguments


@dataclass(frozen=True)
class Usage:
    """Token buckets of one call, none counted twice.

    ``input_tokens`` are uncached input tokens only (Anthropic reports them that way; for OpenAI the
    provider subtracts ``cached_tokens`` from ``prompt_tokens``).
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.cache_read_tokens + self.cache_write_tokens + self.output_tokens

    def as_event_tokens(self) -> dict[str, int]:
        """The ``tokens`` object stored on ``llm_response`` events (DESIGN.md "Contracts", Cost)."""
        return {
            "prompt": self.input_tokens,
            "completion": self.output_tokens,
            "cached": self.cache_read_tokens,
            "cache_write": self.cache_write_tokens,
            "total": self.total_tokens,
        }

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_read_tokens=self.cache_read_tokens + other.cache_read_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
        )


@dataclass
class LLMResponse:
    """What one call produced: every tool call in order, any text, usage, and the raw wire JSON."""

    tool_calls: list[ToolCall]
    text: str
    usage: Usage
    stop_reason: str | None
    model: str
    raw: dict[str, Any] = field(default_factory=dict)
    duration_ms: int = 0

    @property
    def first_tool_call(self) -> ToolCall | None:
        """The call the loop executes (docs/contracts.md §5.5 (model request) takes the first ``tool_use`` block)."""
        return self.tool_calls[0] if self.tool_calls else None


class StructuredResult(NamedTuple):
    """Result of a structured-output call (the initializer): the decoded JSON object and its cost data."""

    data: dict[str, Any]
    usage: Usage
    raw: dict[str, Any]
    duration_ms: int


class LLMError(Exception):
    """A failed model call, after the SDK's own retries, classified so callers can react by ``kind``."""

    def __init__(
        self,
        kind: ErrorKind,
        message: str,
        *,
        status_code: int | None = None,
        retry_after: float | None = None,
    ) -> None:
        if kind not in ERROR_KINDS:
            raise ValueError(f"Unknown LLMError kind {kind!r}; expected one of {sorted(ERROR_KINDS)}")
        super().__init__(f"[{kind}] {message}")
        self.kind: ErrorKind = kind
        self.message = message
        self.status_code = status_code
        self.retry_after = retry_after

    def __reduce__(self) -> tuple[Any, ...]:
        # Keyword-only fields would be lost by Exception's default pickling (errors cross process pools).
        return (_rebuild_llm_error, (self.kind, self.message, self.status_code, self.retry_after))

    def as_event_data(self) -> dict[str, Any]:
        """JSON-safe description for an ``error`` event."""
        return {
            "kind": self.kind,
            "message": self.message,
            "status_code": self.status_code,
            "retry_after": self.retry_after,
        }


def _rebuild_llm_error(
    kind: ErrorKind, message: str, status_code: int | None, retry_after: float | None
) -> LLMError:
    return LLMError(kind, message, status_code=status_code, retry_after=retry_after)


def error_kind_for_status(status_code: int, *, error_type: str | None = None) -> ErrorKind:
    """Classify an HTTP error status (plus Anthropic's ``error.type``) the same way for every provider."""
    if status_code == 529 or error_type == "overloaded_error":
        return "overloaded"
    if status_code == 429:
        return "rate_limited"
    if status_code == 408:
        return "timeout"
    if status_code in (401, 403):
        return "auth"
    if status_code >= 500:
        return "server"
    return "bad_request"


def retry_after_seconds(headers: Mapping[str, str] | None) -> float | None:
    """Seconds the server asked us to wait (``retry-after-ms``, ``retry-after`` seconds or HTTP date)."""
    if not headers:
        return None
    milliseconds = headers.get("retry-after-ms")
    if milliseconds is not None:
        try:
            return float(milliseconds) / 1000
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        parsed = email.utils.parsedate_tz(value)
        if parsed is None:
            return None
        return max(0.0, float(email.utils.mktime_tz(parsed) - time.time()))


def decode_json_body(response: httpx2.Response) -> dict[str, Any]:
    """The response's JSON object as sent on the wire (stored as ``raw``); ``invalid_response`` otherwise.

    The SDKs decode bodies after their retry loop, so a garbled 200 body is not retried: it fails at once.
    """
    try:
        data = response.json()
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise LLMError(
            "invalid_response",
            f"Response body is not JSON: {response.text[:200]!r}",
            status_code=response.status_code,
        ) from exc
    if not isinstance(data, dict):
        raise LLMError(
            "invalid_response", "Response body is not a JSON object", status_code=response.status_code
        )
    return data


@runtime_checkable
class Provider(Protocol):
    """Turns one neutral request into one neutral response, or raises ``LLMError``."""

    def complete(self, request: LLMRequest) -> LLMResponse: ...


@dataclass(frozen=True)
class PartialToolCall:
    """A tool call while the model is still writing it (docs/architecture.md "Previews").

    ``arguments`` is the call's input parsed so far, incomplete strings included (jiter's partial mode with
    trailing strings): ``{"message": "Here's yo"}``. ``complete`` is True once the model has finished the call's
    input. Previews only: what is stored, costed and run is the ``LLMResponse`` the same call returns.
    """

    index: int  # the call's position among the response's tool calls
    call_id: str
    name: str
    arguments: dict[str, Any]
    complete: bool


type PartialCallback = Callable[[PartialToolCall], None]


@runtime_checkable
class StreamingProvider(Protocol):
    """A provider that can report a call's tool input while the model writes it.

    ``stream`` returns exactly what ``complete`` returns for the same answer (tool calls, usage, stop reason,
    raw); on the way it calls ``on_partial`` (on the calling thread) each time the input grew. An exception
    raised by ``on_partial`` is not the model's failure: providers let it propagate unchanged.
    """

    def stream(self, request: LLMRequest, *, on_partial: PartialCallback | None) -> LLMResponse: ...


@runtime_checkable
class StructuredOutputProvider(Protocol):
    """A provider that can also return one JSON object matching a schema (used by the initializer)."""

    def complete_json(
        self,
        *,
        model: str,
        system: str,
        user: str,
        json_schema: dict[str, Any],
        schema_name: str,
        max_tokens: int = 1024,
        temperature: float | None = None,
    ) -> StructuredResult: ...
