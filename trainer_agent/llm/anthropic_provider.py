"""Anthropic Messages API provider: the wire shape of docs/contracts.md §5.5 (model request), with its 4 cache breakpoints.

No sampling parameters: the Messages API version this SDK speaks (anthropic 2.x sends ``anthropic-version:
2026-10-21``) has no ``temperature``, ``top_p`` or ``top_k``; the SDK refuses them (TypeError) and the API
answers 400 even to a default value. An agent definition's temperature therefore reaches OpenAI-compatible
models only; Claude models run at their own default.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from typing import Any

import anthropic
import httpx2
import jiter
from anthropic._streaming import SSEDecoder  # private module: the SDK's own decoder
from anthropic.types import Message
from anthropic.types import Usage as AnthropicUsage
from django.conf import settings

from trainer_agent.llm.partial import PartialToolCalls, paced_chunks
from trainer_agent.llm.types import (
    INVALID_ARGUMENTS_KEY,
    LLMError,
    LLMRequest,
    LLMResponse,
    PartialCallback,
    StructuredResult,
    ToolCall,
    Usage,
    decode_json_body,
    error_kind_for_status,
    retry_after_seconds,
)

EPHEMERAL: dict[str, str] = {"type": "ephemeral"}
CACHE_BREAKPOINTS = 4
# The HTTP status of each Anthropic error type (docs.anthropic.com "Errors"): an `error` event inside a 200
# stream carries only the type, and is classified as the same error answered before the stream would be.
ERROR_TYPE_STATUS: dict[str, int] = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "billing_error": 402,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "timeout_error": 504,
    "overloaded_error": 529,
}


def build_anthropic_body(request: LLMRequest) -> dict[str, Any]:
    """The exact keyword arguments for ``client.messages.create``; never mutates ``request``.

    Breakpoints: the last tool, the system prompt block, the user-data block, and the last content block of
    the last message. Any ``cache_control`` already present in the messages is dropped so the request never
    exceeds Anthropic's limit of 4 breakpoints.

    ``request.temperature`` is not sent (see the module docstring).
    """
    if not request.tools:
        raise ValueError("An Anthropic request needs at least one tool: tool use is forced")
    if not request.messages:
        raise ValueError("An Anthropic request needs at least one message")
    if not request.system_prompt or not request.user_data_xml:
        raise ValueError("The system prompt and the user data XML must both be non-empty text blocks")

    tools: list[dict[str, Any]] = [
        {"name": tool.name, "description": tool.description, "input_schema": copy.deepcopy(tool.input_schema)}
        for tool in request.tools
    ]
    tools[-1]["cache_control"] = dict(EPHEMERAL)

    system = [
        {"type": "text", "text": request.system_prompt, "cache_control": dict(EPHEMERAL)},
        {"type": "text", "text": request.user_data_xml, "cache_control": dict(EPHEMERAL)},
    ]

    messages = [_without_cache_control(message) for message in copy.deepcopy(request.messages)]
    last = messages[-1]
    if isinstance(last.get("content"), str):
        last["content"] = [{"type": "text", "text": last["content"]}]
    if not last.get("content"):
        raise ValueError("The last message has no content block to carry the cache breakpoint")
    last["content"][-1]["cache_control"] = dict(EPHEMERAL)

    body: dict[str, Any] = {
        "model": request.model,
        "max_tokens": request.max_tokens,
        "system": system,
        "messages": messages,
        "tools": tools,
        "tool_choice": {"type": "any"},
    }
    return body


def _without_cache_control(message: dict[str, Any]) -> dict[str, Any]:
    content = message.get("content")
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict):
                block.pop("cache_control", None)
    return message


def count_cache_breakpoints(body: Any) -> int:
    """How many ``cache_control`` markers a request body carries (anywhere in it)."""
    if isinstance(body, Mapping):
        own = 1 if "cache_control" in body else 0
        return own + sum(count_cache_breakpoints(value) for value in body.values())
    if isinstance(body, list):
        return sum(count_cache_breakpoints(item) for item in body)
    return 0


class AnthropicProvider:
    """Calls Claude through the official SDK; retries are the SDK's (``LLM_MAX_RETRIES``)."""

    def __init__(
        self,
        *,
        api_key: str,
        http_client: httpx2.Client | None = None,
        base_url: str | None = None,
        max_retries: int | None = None,
        timeout: float | None = None,
        read_interval: float | None = None,
    ) -> None:
        # How often a streamed call's reader wakes once caught up with the model (``paced_chunks``).
        self.read_interval = (
            settings.LLM_STREAM_READ_INTERVAL_SECONDS if read_interval is None else read_interval
        )
        self.client = anthropic.Anthropic(
            api_key=api_key,
            base_url=base_url or None,
            max_retries=settings.LLM_MAX_RETRIES if max_retries is None else max_retries,
            timeout=settings.LLM_TIMEOUT_SECONDS if timeout is None else timeout,
            http_client=http_client,
        )

    def complete(self, request: LLMRequest) -> LLMResponse:
        """One forced-tool-use call; raises ``LLMError`` once the SDK has given up."""
        body = build_anthropic_body(request)
        started = time.monotonic()
        with _translated_errors():
            raw_response = self.client.messages.with_raw_response.create(**body)
            raw = decode_json_body(raw_response.http_response)
            message = raw_response.parse()
        return _neutral_response(message, raw, started=started, request=request)

    def stream(self, request: LLMRequest, *, on_partial: PartialCallback | None) -> LLMResponse:
        """``complete`` through the streaming API, reporting each tool input as it grows (docs/architecture.md
        "Streaming providers").

        The SDK sends the request (``create(stream=True)``: its retries, its errors before the stream); the
        events are read as JSON with the SDK's SSE decoder, paced (``paced_chunks``: the tool input is parsed
        and reported once per read), and added up into the message a non-streamed call returns
        (``MessageAccumulator``), which is ``raw``. Not the SDK's typed
        ``messages.stream()``: building a model per event costs 3x the CPU (docs/benchmarks.md "Streaming
        providers"). A server that answers ``application/json`` instead of an event stream (a proxy that
        does not stream) is read whole, each tool call reported once, complete. Exceptions from
        ``on_partial`` propagate unchanged; the connection is closed either way.
        """
        body = build_anthropic_body(request)
        started = time.monotonic()
        calls = PartialToolCalls(on_partial, deferred=True)
        with ExitStack() as cleanup:
            with _translated_errors():
                stream = cleanup.enter_context(self.client.messages.create(**body, stream=True))
            if _is_json(stream.response):
                with _translated_errors():
                    stream.response.read()
                    raw = decode_json_body(stream.response)
                response = _neutral_response(Message.construct(**raw), raw, started=started, request=request)
                for index, call in enumerate(response.tool_calls):
                    calls.start(index, call_id=call.id, name=call.name)
                    calls.finish(index, call.arguments)
                return response
            message = MessageAccumulator(calls)
            chunks = paced_chunks(
                stream.response.iter_bytes(), interval=self.read_interval, before_wait=calls.flush
            )
            for event in _stream_events(chunks):
                message.add(event)
            raw = message.message()
        return _neutral_response(Message.construct(**raw), raw, started=started, request=request)

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
    ) -> StructuredResult:
        """Structured output through one forced tool whose input schema is ``json_schema``.

        ``temperature`` is part of the protocol but not sent (see the module docstring).
        """
        started = time.monotonic()
        with _translated_errors():
            raw_response = self.client.messages.with_raw_response.create(
                model=model,
                max_tokens=max_tokens,
                system=system,
                messages=[{"role": "user", "content": user}],
                tools=[
                    {"name": schema_name, "description": "Return the answer.", "input_schema": json_schema}
                ],
                tool_choice={"type": "tool", "name": schema_name},
            )
            raw = decode_json_body(raw_response.http_response)
            message = raw_response.parse()
        duration_ms = round((time.monotonic() - started) * 1000)
        calls = (
            _tool_calls(message) if isinstance(message, Message) and isinstance(message.content, list) else []
        )
        if not calls or calls[0].has_invalid_arguments:
            raise LLMError("invalid_response", f"The model did not return a {schema_name} object")
        return StructuredResult(calls[0].arguments, _usage(message.usage), raw, duration_ms)


def _neutral_response(
    message: Message, raw: dict[str, Any], *, started: float, request: LLMRequest
) -> LLMResponse:
    duration_ms = round((time.monotonic() - started) * 1000)
    if not isinstance(message, Message) or not isinstance(message.content, list):
        raise LLMError("invalid_response", "The Messages API answered with something that is not a message")
    return LLMResponse(
        tool_calls=_tool_calls(message),
        text="\n".join(
            block.text for block in message.content if block.type == "text" and isinstance(block.text, str)
        ),
        usage=_usage(message.usage),
        stop_reason=message.stop_reason,
        model=message.model or request.model,
        raw=raw,
        duration_ms=duration_ms,
    )


def _tool_calls(message: Message) -> list[ToolCall]:
    return [
        ToolCall(id=block.id, name=block.name, arguments=_arguments_of(block.input))
        for block in message.content
        if block.type == "tool_use"
    ]


def _arguments_of(value: Any) -> dict[str, Any]:
    return dict(value) if isinstance(value, dict) else {INVALID_ARGUMENTS_KEY: value}


def _is_json(response: httpx2.Response) -> bool:
    """A JSON body where an event stream was asked for (the SDK's own test for a JSON response)."""
    content_type = response.headers.get("content-type", "").split(";")[0].strip().lower()
    return content_type.endswith("json")


class MessageAccumulator:
    """Adds up the Messages API's stream events (JSON) into the message a non-streamed call returns.

    ``message_start`` gives the message; ``content_block_start`` appends a block, its deltas grow it (text,
    tool input JSON, thinking, signature, citations), ``content_block_stop`` parses a tool block's input
    (jiter, as the SDK does); ``message_delta`` sets the stop reason and overwrites the usage counts it
    carries (they are totals); ``message_stop`` ends it. The SDK's own accumulator does the same to its
    typed events (``anthropic.lib.streaming._messages.accumulate_event``). Tool calls are reported to
    ``calls`` as they start, grow and end.
    """

    def __init__(self, calls: PartialToolCalls) -> None:
        self._calls = calls
        self._message: dict[str, Any] | None = None
        self._inputs: dict[int, list[str]] = {}
        self._positions: dict[int, int] = {}  # content block index -> position among the tool calls
        self.stopped = False

    def add(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "message_start":
            self._message = dict(event.get("message") or {})
            self._message["content"] = list(self._message.get("content") or [])
            return
        if self._message is None:
            raise LLMError("invalid_response", f"Anthropic stream: {kind} before message_start")
        if kind == "content_block_start":
            block = dict(event.get("content_block") or {})
            self._message["content"].append(block)
            if block.get("type") == "tool_use":
                index = len(self._message["content"]) - 1
                self._positions[index] = position = len(self._positions)
                self._calls.start(position, call_id=str(block.get("id", "")), name=str(block.get("name", "")))
        elif kind == "content_block_delta":
            index, delta = self._index(event), event.get("delta") or {}
            block = self._message["content"][index]
            match delta.get("type"):
                case "input_json_delta":
                    piece = str(delta.get("partial_json", ""))
                    self._inputs.setdefault(index, []).append(piece)
                    if index in self._positions:
                        self._calls.feed(self._positions[index], piece)
                case "text_delta":
                    block["text"] = block.get("text", "") + str(delta.get("text", ""))
                case "thinking_delta":
                    block["thinking"] = block.get("thinking", "") + str(delta.get("thinking", ""))
                case "signature_delta":
                    block["signature"] = delta.get("signature")
                case "citations_delta":
                    block["citations"] = [*(block.get("citations") or []), delta.get("citation")]
        elif kind == "content_block_stop":
            index = self._index(event)
            block = self._message["content"][index]
            text = "".join(self._inputs.pop(index, []))
            if text:
                try:
                    block["input"] = jiter.from_json(text.encode())
                except ValueError as exc:
                    raise LLMError("invalid_response", f"Tool input is not JSON: {text[:200]!r}") from exc
            if index in self._positions:
                self._calls.finish(self._positions[index], _arguments_of(block.get("input")))
        elif kind == "message_delta":
            for key, value in (event.get("delta") or {}).items():
                if key != "container" or value is not None:
                    self._message[key] = value
            usage = self._message.setdefault("usage", {})
            usage.update(
                {key: value for key, value in (event.get("usage") or {}).items() if value is not None}
            )
        elif kind == "message_stop":
            self.stopped = True

    def _index(self, event: dict[str, Any]) -> int:
        """The event's content block index, one of a block already started."""
        index = event.get("index")
        assert self._message is not None
        if not isinstance(index, int) or not 0 <= index < len(self._message["content"]):
            raise LLMError("invalid_response", f"Anthropic stream: an event for content block {index!r}")
        return index

    def message(self) -> dict[str, Any]:
        """The finished message; a stream that ended before ``message_stop`` is a server error."""
        if self._message is None or not self.stopped:
            raise LLMError("server", "The Anthropic stream ended before message_stop")
        return self._message


def _stream_events(chunks: Iterator[bytes]) -> Iterator[dict[str, Any]]:
    """The stream's events as JSON; an ``error`` event raises the ``LLMError`` its type's HTTP status would."""
    events = SSEDecoder().iter_bytes(chunks)
    while True:
        with _translated_stream_errors():
            sse = next(events, None)
            if sse is None:
                return
            if sse.event == "ping" or not sse.data:
                continue
            data = sse.json()
        if not isinstance(data, dict):
            raise LLMError(
                "invalid_response", f"Anthropic stream: an event that is not an object: {sse.data[:200]!r}"
            )
        if sse.event == "error" or data.get("type") == "error":
            raise _stream_error(data)
        yield data


def _stream_error(data: Any) -> LLMError:
    """An ``error`` event inside a stream that began 200: classified as the HTTP error of its type."""
    error = data.get("error") if isinstance(data, dict) else None
    error = error if isinstance(error, dict) else {}
    error_type = str(error.get("type") or "api_error")
    status_code = ERROR_TYPE_STATUS.get(error_type, 500)
    return LLMError(
        error_kind_for_status(status_code, error_type=error_type),
        f"Anthropic API error {status_code}: {error.get('message') or error_type}",
        status_code=status_code,
    )


@contextmanager
def _translated_stream_errors() -> Iterator[None]:
    """Failures while a stream is read: the SDK wraps the network's only while it sends a request."""
    try:
        yield
    except httpx2.TimeoutException as exc:
        raise LLMError("timeout", f"Anthropic stream timed out: {exc}") from exc
    except httpx2.TransportError as exc:
        raise LLMError("server", f"Anthropic stream broke off: {exc}") from exc
    except ValueError as exc:  # an event whose data is not JSON
        raise LLMError("invalid_response", f"Anthropic stream: {exc}") from exc


def _usage(usage: AnthropicUsage | None) -> Usage:
    if usage is None:
        return Usage()
    return Usage(
        input_tokens=usage.input_tokens or 0,
        output_tokens=usage.output_tokens or 0,
        cache_read_tokens=usage.cache_read_input_tokens or 0,
        cache_write_tokens=usage.cache_creation_input_tokens or 0,
    )


@contextmanager
def _translated_errors() -> Iterator[None]:
    """Turn the SDK's exceptions into ``LLMError`` with a ``kind`` the loop can act on."""
    try:
        yield
    except LLMError:
        raise
    except anthropic.APITimeoutError as exc:
        raise LLMError("timeout", "Anthropic request timed out") from exc
    except anthropic.APIConnectionError as exc:
        raise LLMError("server", f"Could not reach the Anthropic API: {exc.message}") from exc
    except anthropic.APIStatusError as exc:
        error_type = exc.type if isinstance(exc.type, str) else None
        kind = error_kind_for_status(exc.status_code, error_type=error_type)
        raise LLMError(
            kind,
            f"Anthropic API error {exc.status_code}: {exc.api_message or exc.message}",
            status_code=exc.status_code,
            retry_after=retry_after_seconds(exc.response.headers),
        ) from exc
    except anthropic.APIResponseValidationError as exc:
        raise LLMError("invalid_response", exc.message, status_code=exc.status_code) from exc
    except anthropic.CredentialsError as exc:
        raise LLMError("auth", str(exc)) from exc
    except anthropic.AnthropicError as exc:
        raise LLMError("server", f"Anthropic SDK error: {exc}") from exc
