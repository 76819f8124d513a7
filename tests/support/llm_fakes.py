"""Fakes for the HTTP boundary of the LLM SDKs: wire-format response builders and a scripted transport.

Typical use::

    transport = ScriptedTransport(anthropic_message([("idle", {})]))
    provider = anthropic_provider_for(transport)
    provider.complete(request)
    assert transport.bodies[0]["tool_choice"] == {"type": "any"}

The real ``anthropic``/``openai`` SDKs run unchanged (serialisation, retries, error classes); only the
network is replaced through ``httpx2.MockTransport`` (see RECIPES.md). For a run end to end through the
provider registry and ``OPENAI_BASE_URL``, ``OpenAICompatibleServer`` is a real local HTTP server instead.
"""

from __future__ import annotations

import json
import threading
import uuid
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, cast

import httpx2

from trainer_agent.llm.anthropic_provider import AnthropicProvider
from trainer_agent.llm.openai_provider import OpenAIProvider
from trainer_agent.llm.types import LLMRequest, ToolSpec

# (name, input) or (name, input, id); the input of an OpenAI call may be a raw string (e.g. invalid JSON).
type ToolCallSpec = tuple[str, Any] | tuple[str, Any, str]
type QueuedResponse = (
    dict[str, Any]
    | tuple[int, Any]
    | tuple[int, Any, Mapping[str, str]]
    | httpx2.Response
    | BaseException
    | type[httpx2.TransportError]
    | Callable[[httpx2.Request], httpx2.Response]
)


# --- A neutral request --------------------------------------------------------------------------------

WORKOUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"focus": {"type": "string"}},
    "required": ["focus"],
}
IDLE_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}


def sample_llm_request(model: str = "claude-haiku-4-5") -> LLMRequest:
    """Three messages: the user asks, the assistant calls a tool, the user turn carries its result and text."""
    return LLMRequest(
        model=model,
        system_prompt="You are a personal trainer.",
        user_data_xml="<user_data>\n<unit_preferences>\nWeight: kg\n</unit_preferences>\n</user_data>",
        messages=[
            {"role": "user", "content": "Give me a chest workout"},
            {
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": "toolu_1",
                        "name": "generate_workout",
                        "input": {"focus": "chest"},
                    }
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_1", "content": '{"ok": true}'},
                    {"type": "text", "text": '<knowledge source="workout_history">\nnone\n</knowledge>'},
                ],
            },
        ],
        tools=[
            ToolSpec("generate_workout", "Create a workout.", WORKOUT_SCHEMA),
            ToolSpec("idle", "Stop and wait.", IDLE_SCHEMA),
        ],
    )


# --- Anthropic ------------------------------------------------------------------------------------------


def anthropic_message(
    tool_calls: Iterable[ToolCallSpec] = (),
    *,
    text: str | None = None,
    input_tokens: int = 120,
    output_tokens: int = 30,
    cache_read_tokens: int | None = 0,
    cache_write_tokens: int | None = 0,
    model: str = "claude-haiku-4-5",
    stop_reason: str | None = None,
) -> dict[str, Any]:
    """A Messages API response body (the JSON the server sends) with text first, then the tool calls."""
    content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    for spec in tool_calls:
        call_id = spec[2] if len(spec) == 3 else f"toolu_{uuid.uuid4().hex[:24]}"
        content.append({"type": "tool_use", "id": call_id, "name": spec[0], "input": spec[1]})
    has_tools = any(block["type"] == "tool_use" for block in content)
    return {
        "id": f"msg_{uuid.uuid4().hex[:24]}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason or ("tool_use" if has_tools else "end_turn"),
        "stop_sequence": None,
        "usage": {
            "input_tokens": input_tokens,
            "output_tokens": output_tokens,
            "cache_creation_input_tokens": cache_write_tokens,
            "cache_read_input_tokens": cache_read_tokens,
        },
    }


def anthropic_error(status: int, error_type: str, message: str = "error") -> tuple[int, dict[str, Any]]:
    """An Anthropic error response, e.g. ``anthropic_error(529, "overloaded_error")``."""
    return status, {"type": "error", "error": {"type": error_type, "message": message}}


# --- OpenAI ---------------------------------------------------------------------------------------------


def openai_completion(
    tool_calls: Iterable[ToolCallSpec] = (),
    *,
    content: str | None = None,
    prompt_tokens: int = 120,
    completion_tokens: int = 30,
    cached_tokens: int | None = 0,
    model: str = "gpt-4o-mini",
    finish_reason: str | None = None,
    refusal: str | None = None,
) -> dict[str, Any]:
    """A chat-completions response body. Tool inputs that are not strings are JSON-encoded."""
    calls = []
    for spec in tool_calls:
        call_id = spec[2] if len(spec) == 3 else f"call_{uuid.uuid4().hex[:24]}"
        arguments = spec[1] if isinstance(spec[1], str) else json.dumps(spec[1])
        calls.append(
            {"id": call_id, "type": "function", "function": {"name": spec[0], "arguments": arguments}}
        )
    message: dict[str, Any] = {"role": "assistant", "content": content, "refusal": refusal}
    if calls:
        message["tool_calls"] = calls
    usage: dict[str, Any] = {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }
    if cached_tokens is not None:
        usage["prompt_tokens_details"] = {"cached_tokens": cached_tokens}
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": finish_reason or ("tool_calls" if calls else "stop"),
                "logprobs": None,
            }
        ],
        "usage": usage,
    }


def openai_json_completion(data: Mapping[str, Any], **kwargs: Any) -> dict[str, Any]:
    """A structured-output response whose message content is ``data`` as JSON."""
    return openai_completion(content=json.dumps(data), **kwargs)


def openai_error(
    status: int, error_type: str, message: str = "error", code: str | None = None
) -> tuple[int, Any]:
    """An OpenAI error response, e.g. ``openai_error(429, "rate_limit_exceeded")``."""
    return status, {"error": {"message": message, "type": error_type, "param": None, "code": code}}


# --- Transport ------------------------------------------------------------------------------------------


class ScriptedTransport:
    """An ``httpx2.MockTransport`` handler that answers with queued responses and records each request.

    Queue entries: a dict (200 with that JSON), ``(status, body)`` or ``(status, body, headers)`` where body
    is a dict/list (JSON) or str/bytes (sent as is, labelled ``application/json``), an ``httpx2.Response``,
    an exception instance or an ``httpx2.TransportError`` subclass to raise (e.g. ``httpx2.ReadTimeout``), or a
    function of the request. ``default`` answers once the queue is empty; without it an empty queue raises
    ``AssertionError`` (the SDK reports it as a connection error, with the assertion in the cause chain).
    """

    def __init__(self, *responses: QueuedResponse, default: QueuedResponse | None = None) -> None:
        self._queue: deque[QueuedResponse] = deque(responses)
        self.default = default
        self.requests: list[httpx2.Request] = []
        self._lock = threading.Lock()

    def queue(self, *responses: QueuedResponse) -> ScriptedTransport:
        with self._lock:
            self._queue.extend(responses)
        return self

    @property
    def bodies(self) -> list[Any]:
        """Every request body, parsed as JSON, in the order received."""
        return [json.loads(request.content) if request.content else None for request in self.requests]

    @property
    def last_body(self) -> Any:
        return self.bodies[-1]

    @property
    def urls(self) -> list[str]:
        return [str(request.url) for request in self.requests]

    @property
    def pending(self) -> int:
        return len(self._queue)

    def client(self) -> httpx2.Client:
        """An ``httpx2.Client`` that sends everything to this transport."""
        return httpx2.Client(transport=httpx2.MockTransport(self))

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        with self._lock:
            self.requests.append(request)
            if self._queue:
                entry = self._queue.popleft()
            elif self.default is not None:
                entry = self.default
            else:
                raise AssertionError(
                    f"ScriptedTransport has no response for request #{len(self.requests)}: "
                    f"{request.method} {request.url}"
                )
        return _respond(entry, request)


def _respond(entry: QueuedResponse, request: httpx2.Request) -> httpx2.Response:
    if isinstance(entry, httpx2.Response):
        return entry
    if isinstance(entry, BaseException):
        raise entry
    if isinstance(entry, type) and issubclass(entry, httpx2.TransportError):
        raise entry(f"scripted {entry.__name__}", request=request)
    if isinstance(entry, dict):
        return httpx2.Response(200, json=entry)
    if isinstance(entry, tuple):
        status, body, *rest = entry
        headers = dict(rest[0]) if rest else {}
        if isinstance(body, (str, bytes)):
            headers.setdefault("content-type", "application/json")
            return httpx2.Response(status, content=body, headers=headers)
        return httpx2.Response(status, json=body, headers=headers)
    if callable(entry):
        handler = cast(Callable[[httpx2.Request], httpx2.Response], entry)
        return handler(request)
    raise TypeError(f"Unsupported scripted response: {entry!r}")


# --- A real OpenAI-compatible HTTP server ---------------------------------------------------------------


class OpenAICompatibleServer:
    """A chat-completions server on 127.0.0.1 in a thread, for end-to-end runs through ``OPENAI_BASE_URL``.

    Like vLLM, Ollama or llama.cpp: ``POST <base_url>/chat/completions`` answers each request with the next
    queued body (e.g. ``openai_completion(...)``), 500 once the queue is empty. Use as a context manager::

        with OpenAICompatibleServer(openai_completion([("idle", {})])) as server:
            settings.OPENAI_BASE_URL = server.base_url
    """

    def __init__(self, *responses: dict[str, Any]) -> None:
        self._queue: deque[dict[str, Any]] = deque(responses)
        self.bodies: list[Any] = []
        self.headers: list[dict[str, str]] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> OpenAICompatibleServer:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    def _answer(self, path: str, headers: dict[str, str], raw: bytes) -> tuple[int, Any]:
        if path != "/v1/chat/completions":
            return 404, {"error": {"message": f"no route {path}", "type": "not_found"}}
        with self._lock:
            self.bodies.append(json.loads(raw))
            self.headers.append(headers)
            if not self._queue:
                return 500, {"error": {"message": "no scripted response left", "type": "server_error"}}
            return 200, self._queue.popleft()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                status, body = server._answer(self.path, {k.lower(): v for k, v in self.headers.items()}, raw)
                encoded = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(encoded)))
                self.end_headers()
                self.wfile.write(encoded)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        return Handler


# --- Providers wired to a transport ---------------------------------------------------------------------


def anthropic_provider_for(
    transport: ScriptedTransport, *, max_retries: int = 0, base_url: str = "https://api.anthropic.com"
) -> AnthropicProvider:
    """A real ``AnthropicProvider`` whose HTTP goes to ``transport`` (no retries unless asked).

    The base URL is explicit so a developer's ``ANTHROPIC_BASE_URL`` does not change what tests see.
    """
    return AnthropicProvider(
        api_key="test-key",
        http_client=transport.client(),
        max_retries=max_retries,
        timeout=5.0,
        base_url=base_url,
    )


def openai_provider_for(
    transport: ScriptedTransport, *, max_retries: int = 0, base_url: str | None = None
) -> OpenAIProvider:
    """A real ``OpenAIProvider`` whose HTTP goes to ``transport`` (no retries unless asked)."""
    return OpenAIProvider(
        api_key="test-key",
        base_url=base_url,
        http_client=transport.client(),
        max_retries=max_retries,
        timeout=5.0,
    )


def tool_names(body: Mapping[str, Any]) -> Sequence[str]:
    """Names of the tools offered in an Anthropic or OpenAI request body."""
    return [tool.get("name") or tool["function"]["name"] for tool in body.get("tools", [])]
