"""OpenAI chat-completions provider (also any OpenAI-compatible server through ``OPENAI_BASE_URL``).

The neutral request carries Anthropic-shaped messages; ``build_openai_body`` translates them:
- assistant ``tool_use`` blocks become ``tool_calls`` (arguments as a JSON string), assistant text the content;
- user ``tool_result`` blocks become ``role: "tool"`` messages, and the text blocks of that same user message
  (knowledge, artifacts, the next user message) follow as one user message, because OpenAI requires the tool
  messages to come right after the assistant message that called them;
- the system prompt and the user-data XML become one system message.
"""

from __future__ import annotations

import copy
import json
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Any, Literal

import httpx2
import openai
from django.conf import settings
from openai._streaming import SSEDecoder  # the SDK's own decoder; its typed chunks cost 3x the CPU
from openai.types import CompletionUsage
from openai.types.chat import ChatCompletion

from trainer_agent.llm.partial import PartialToolCalls, paced_chunks
from trainer_agent.llm.types import (
    INVALID_ARGUMENTS_KEY,
    ErrorKind,
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

OPENAI_DEFAULT_BASE_URL = "https://api.openai.com/v1"
MaxTokensField = Literal["max_completion_tokens", "max_tokens"]


def build_openai_body(
    request: LLMRequest, *, max_tokens_field: MaxTokensField = "max_completion_tokens"
) -> dict[str, Any]:
    """The exact keyword arguments for ``client.chat.completions.create``; never mutates ``request``."""
    if not request.tools:
        raise ValueError("An OpenAI request needs at least one tool: tool use is forced")
    system = {"role": "system", "content": f"{request.system_prompt}\n\n{request.user_data_xml}"}
    body: dict[str, Any] = {
        "model": request.model,
        "messages": [system, *translate_messages(request.messages)],
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": tool.name,
                    "description": tool.description,
                    "parameters": copy.deepcopy(tool.input_schema),
                },
            }
            for tool in request.tools
        ],
        "tool_choice": "required",
        # The loop runs exactly one tool per iteration; do not invite several.
        "parallel_tool_calls": False,
        max_tokens_field: request.max_tokens,
    }
    if request.temperature is not None:
        body["temperature"] = request.temperature
    return body


def translate_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Anthropic-shaped messages to chat-completions messages (see the module docstring)."""
    translated: list[dict[str, Any]] = []
    for message in messages:
        role = message["role"]
        content = message.get("content", "")
        if isinstance(content, str):
            translated.append({"role": role, "content": content})
        elif role == "assistant":
            translated.append(_assistant_message(content))
        elif role == "user":
            translated.extend(_user_messages(content))
        else:
            raise ValueError(f"Unsupported message role {role!r}")
    return translated


def _assistant_message(blocks: list[dict[str, Any]]) -> dict[str, Any]:
    texts: list[str] = []
    tool_calls: list[dict[str, Any]] = []
    for block in blocks:
        kind = block.get("type")
        if kind == "text":
            texts.append(block["text"])
        elif kind == "tool_use":
            tool_calls.append(
                {
                    "id": block["id"],
                    "type": "function",
                    "function": {"name": block["name"], "arguments": json.dumps(block.get("input", {}))},
                }
            )
        else:
            raise ValueError(f"Unsupported assistant content block {kind!r}")
    message: dict[str, Any] = {"role": "assistant"}
    if texts:
        message["content"] = "\n\n".join(texts)
    if tool_calls:
        message["tool_calls"] = tool_calls
    if "content" not in message and "tool_calls" not in message:
        message["content"] = ""
    return message


def _user_messages(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    tool_messages: list[dict[str, Any]] = []
    texts: list[str] = []
    for block in blocks:
        kind = block.get("type")
        if kind == "tool_result":
            text = _tool_result_text(block.get("content", ""))
            if block.get("is_error") and not text.lower().startswith("error"):
                text = f"Error: {text}"
            tool_messages.append({"role": "tool", "tool_call_id": block["tool_use_id"], "content": text})
        elif kind == "text":
            texts.append(block["text"])
        else:
            raise ValueError(f"Unsupported user content block {kind!r}")
    if texts:
        tool_messages.append({"role": "user", "content": "\n\n".join(texts)})
    return tool_messages


def _tool_result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return json.dumps(content)


def parse_tool_arguments(raw: str | None) -> dict[str, Any]:
    """Decode tool-call arguments; undecodable or non-object JSON is kept under ``INVALID_ARGUMENTS_KEY``."""
    if raw is None or raw.strip() == "":
        return {}
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        return {INVALID_ARGUMENTS_KEY: raw}
    if not isinstance(value, dict):
        return {INVALID_ARGUMENTS_KEY: raw}
    return value


class OpenAIProvider:
    """Calls chat completions through the official SDK; retries are the SDK's (``LLM_MAX_RETRIES``).

    ``base_url`` defaults to ``settings.OPENAI_BASE_URL`` (e.g. a local vLLM, Ollama or llama.cpp server).
    Such servers get ``max_tokens`` (which they all understand); api.openai.com gets ``max_completion_tokens``.
    """

    def __init__(
        self,
        *,
        api_key: str,
        base_url: str | None = None,
        http_client: httpx2.Client | None = None,
        max_retries: int | None = None,
        timeout: float | None = None,
        max_tokens_field: MaxTokensField | None = None,
        read_interval: float | None = None,
    ) -> None:
        # How often a streamed call's reader wakes once caught up with the model (``paced_chunks``).
        self.read_interval = (
            settings.LLM_STREAM_READ_INTERVAL_SECONDS if read_interval is None else read_interval
        )
        resolved_base_url = base_url or settings.OPENAI_BASE_URL or OPENAI_DEFAULT_BASE_URL
        self.max_tokens_field: MaxTokensField = max_tokens_field or (
            "max_completion_tokens" if resolved_base_url == OPENAI_DEFAULT_BASE_URL else "max_tokens"
        )
        self.client = openai.OpenAI(
            api_key=api_key,
            base_url=resolved_base_url,
            max_retries=settings.LLM_MAX_RETRIES if max_retries is None else max_retries,
            timeout=settings.LLM_TIMEOUT_SECONDS if timeout is None else timeout,
            http_client=http_client,
        )

    def complete(self, request: LLMRequest) -> LLMResponse:
        """One forced-tool-use call; raises ``LLMError`` once the SDK has given up."""
        body = build_openai_body(request, max_tokens_field=self.max_tokens_field)
        completion, raw, duration_ms = self._create(body)
        return _neutral_response(completion, raw, duration_ms, request)

    def stream(self, request: LLMRequest, *, on_partial: PartialCallback | None) -> LLMResponse:
        """``complete`` with ``stream=True`` and usage included, reporting each tool input as it grows.

        The SDK sends the request (its retries, its errors before the stream); the chunks are read as JSON
        with the SDK's SSE decoder, paced (``paced_chunks``: the tool input is parsed and reported once per
        read), and added up into the ``chat.completion`` the same answer has unstreamed
        (``ChatCompletionAccumulator``), which is ``raw``. Not the SDK's typed chunks: a model per chunk costs
        3x the CPU (docs/benchmarks.md "Streaming providers"). A server that answers JSON instead of an event
        stream is read whole, each call reported once, complete. Exceptions from ``on_partial`` propagate
        unchanged; the connection is closed either way.
        """
        body = build_openai_body(request, max_tokens_field=self.max_tokens_field)
        body |= {"stream": True, "stream_options": {"include_usage": True}}
        started = time.monotonic()
        calls = PartialToolCalls(on_partial, deferred=True)
        with ExitStack() as cleanup:
            with _translated_errors():
                chunks = cleanup.enter_context(self.client.chat.completions.create(**body))
            if _is_json(chunks.response):
                with _translated_errors():
                    chunks.response.read()
                    raw = decode_json_body(chunks.response)
                response = _neutral_response(
                    _completion(raw), raw, round((time.monotonic() - started) * 1000), request
                )
                for index, call in enumerate(response.tool_calls):
                    calls.start(index, call_id=call.id, name=call.name)
                    calls.finish(index, call.arguments)
                return response
            accumulator = ChatCompletionAccumulator(calls)
            paced = paced_chunks(
                chunks.response.iter_bytes(), interval=self.read_interval, before_wait=calls.flush
            )
            for chunk in _stream_chunks(paced):
                accumulator.add(chunk)
            raw = accumulator.completion()
        duration_ms = round((time.monotonic() - started) * 1000)
        return _neutral_response(_completion(raw), raw, duration_ms, request)

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
        """One JSON object matching ``json_schema`` through strict structured output."""
        body: dict[str, Any] = {
            "model": model,
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": schema_name, "strict": True, "schema": json_schema},
            },
            self.max_tokens_field: max_tokens,
        }
        if temperature is not None:
            body["temperature"] = temperature
        completion, raw, duration_ms = self._create(body)
        message = completion.choices[0].message
        if message.refusal:
            raise LLMError("invalid_response", f"The model refused: {message.refusal}")
        try:
            data = json.loads(message.content or "")
        except json.JSONDecodeError as exc:
            raise LLMError(
                "invalid_response", f"Structured output is not JSON: {(message.content or '')[:200]!r}"
            ) from exc
        if not isinstance(data, dict):
            raise LLMError("invalid_response", "Structured output is not a JSON object")
        return StructuredResult(data, _usage(completion.usage), raw, duration_ms)

    def _create(self, body: dict[str, Any]) -> tuple[ChatCompletion, dict[str, Any], int]:
        started = time.monotonic()
        with _translated_errors():
            raw_response = self.client.chat.completions.with_raw_response.create(**body)
            raw = decode_json_body(raw_response.http_response)
            completion = raw_response.parse()
        duration_ms = round((time.monotonic() - started) * 1000)
        if not isinstance(completion, ChatCompletion) or not completion.choices:
            raise LLMError("invalid_response", "The chat-completions API answered without a choice")
        return completion, raw, duration_ms


class ChatCompletionAccumulator:
    """Adds up ``chat.completion.chunk`` events (JSON) into the ``chat.completion`` of the same answer unstreamed.

    The result: the chunks' ``id``, ``created``, ``model`` (and ``system_fingerprint`` / ``service_tier`` when
    sent), ``object: "chat.completion"``, one choice (index 0) whose ``message`` has the role, the ``content``
    and ``refusal`` joined from the deltas (None when there were none) and the ``tool_calls`` (id, type,
    name, the joined ``arguments``) in index order, its ``finish_reason`` and ``logprobs: null``, and the
    ``usage`` of the last chunk (``stream_options.include_usage``). Other choices are ignored: the service
    asks for one. Tool calls are reported to ``calls``: a call starts with its first delta and is complete
    when the next one starts or the choice finishes (calls arrive one after another).
    """

    def __init__(self, calls: PartialToolCalls) -> None:
        self._calls = calls
        self._head: dict[str, Any] = {}
        self._role = "assistant"
        self._content: list[str] = []
        self._refusal: list[str] = []
        self._tool_calls: dict[int, dict[str, Any]] = {}
        self._finish_reason: str | None = None
        self._usage: dict[str, Any] | None = None

    def add(self, chunk: dict[str, Any]) -> None:
        if not self._head:
            self._head = {
                "id": chunk.get("id", ""),
                "object": "chat.completion",
                "created": chunk.get("created", 0),
                "model": "",
            }
        if chunk.get("model"):
            self._head["model"] = chunk["model"]
        for optional in ("system_fingerprint", "service_tier"):
            if chunk.get(optional) is not None:
                self._head[optional] = chunk[optional]
        if chunk.get("usage") is not None:
            self._usage = chunk["usage"]
        for choice in chunk.get("choices") or []:
            if choice.get("index", 0) == 0:
                self._add_choice(choice)

    def _add_choice(self, choice: dict[str, Any]) -> None:
        delta = choice.get("delta") or {}
        if delta.get("role"):
            self._role = delta["role"]
        if delta.get("content"):
            self._content.append(delta["content"])
        if delta.get("refusal"):
            self._refusal.append(delta["refusal"])
        for piece in delta.get("tool_calls") or []:
            index = int(piece.get("index", 0))
            call = self._tool_calls.get(index)
            if call is None:
                for earlier in self._calls.unfinished():
                    self._finish(earlier)
                call = self._tool_calls[index] = {
                    "id": "",
                    "type": "function",
                    "function": {"name": "", "arguments": ""},
                }
            function = piece.get("function") or {}
            call["id"] = piece.get("id") or call["id"]
            call["type"] = piece.get("type") or call["type"]
            call["function"]["name"] += function.get("name") or ""
            if index not in self._calls and call["function"]["name"]:
                self._calls.start(index, call_id=call["id"], name=call["function"]["name"])
            if function.get("arguments"):
                call["function"]["arguments"] += function["arguments"]
                if index in self._calls:
                    self._calls.feed(index, function["arguments"])
        if choice.get("finish_reason") is not None:
            self._finish_reason = choice["finish_reason"]
            for index in self._calls.unfinished():
                self._finish(index)

    def _finish(self, index: int) -> None:
        self._calls.finish(index, parse_tool_arguments(self._tool_calls[index]["function"]["arguments"]))

    def completion(self) -> dict[str, Any]:
        """The finished completion; a stream that ended without a ``finish_reason`` is a server error."""
        if self._finish_reason is None:
            raise LLMError("server", "The chat-completions stream ended without a finish_reason")
        message: dict[str, Any] = {
            "role": self._role,
            "content": "".join(self._content) if self._content else None,
            "refusal": "".join(self._refusal) if self._refusal else None,
        }
        if self._tool_calls:
            message["tool_calls"] = [self._tool_calls[index] for index in sorted(self._tool_calls)]
        choice = {"index": 0, "message": message, "finish_reason": self._finish_reason, "logprobs": None}
        completion = {**self._head, "choices": [choice]}
        if self._usage is not None:
            completion["usage"] = self._usage
        return completion


def _completion(raw: dict[str, Any]) -> ChatCompletion:
    """The SDK's model of a chat.completion dict, built leniently as the SDK builds a response."""
    return ChatCompletion.construct(**raw)


def _neutral_response(
    completion: ChatCompletion, raw: dict[str, Any], duration_ms: int, request: LLMRequest
) -> LLMResponse:
    if not isinstance(completion, ChatCompletion) or not completion.choices:
        raise LLMError("invalid_response", "The chat-completions API answered without a choice")
    message = completion.choices[0].message
    tool_calls = [
        ToolCall(id=call.id, name=call.function.name, arguments=parse_tool_arguments(call.function.arguments))
        for call in message.tool_calls or []
        if call.type == "function"
    ]
    return LLMResponse(
        tool_calls=tool_calls,
        text=message.content or message.refusal or "",
        usage=_usage(completion.usage),
        stop_reason=completion.choices[0].finish_reason,
        model=completion.model or request.model,
        raw=raw,
        duration_ms=duration_ms,
    )


def _is_json(response: httpx2.Response) -> bool:
    """A JSON body where an event stream was asked for (a server that does not stream)."""
    content_type = response.headers.get("content-type", "").split(";")[0].strip().lower()
    return content_type.endswith("json")


def _stream_chunks(chunks: Iterator[bytes]) -> Iterator[dict[str, Any]]:
    """The stream's chunks as JSON, up to ``data: [DONE]``; an ``error`` object among them raises."""
    events = SSEDecoder().iter_bytes(chunks)
    while True:
        with _translated_stream_errors():
            sse = next(events, None)
            if sse is None or sse.data.startswith("[DONE]"):
                return
            if not sse.data:
                continue
            data = sse.json()
        if isinstance(data, dict) and data.get("error"):
            raise _stream_error(data["error"])
        if isinstance(data, dict):
            yield data


def _stream_error(error: Any) -> LLMError:
    """An error object inside a stream that began 200: a server error, or what its numeric ``code`` says."""
    error = error if isinstance(error, dict) else {"message": str(error)}
    code = str(error.get("code") or "")
    label = f"{code} {error.get('type') or ''}"
    kind: ErrorKind = (
        error_kind_for_status(int(code))
        if code.isdigit()
        else "rate_limited"
        if "rate_limit" in label
        else "server"
    )
    return LLMError(kind, f"OpenAI stream error: {error.get('message') or label.strip()}")


@contextmanager
def _translated_stream_errors() -> Iterator[None]:
    """Failures while a stream is read: the SDK wraps the network's only while it sends a request."""
    try:
        yield
    except httpx2.TimeoutException as exc:
        raise LLMError("timeout", f"OpenAI stream timed out: {exc}") from exc
    except httpx2.TransportError as exc:
        raise LLMError("server", f"OpenAI stream broke off: {exc}") from exc
    except ValueError as exc:  # a chunk that is not JSON
        raise LLMError("invalid_response", f"OpenAI stream: {exc}") from exc


def _usage(usage: CompletionUsage | None) -> Usage:
    """Disjoint buckets: OpenAI's ``cached_tokens`` are part of ``prompt_tokens`` and are taken out of it."""
    if usage is None:
        return Usage()
    details = usage.prompt_tokens_details
    cached = (details.cached_tokens if details else None) or 0
    prompt = usage.prompt_tokens or 0
    return Usage(
        input_tokens=max(prompt - cached, 0),
        output_tokens=usage.completion_tokens or 0,
        cache_read_tokens=cached,
        cache_write_tokens=0,
    )


@contextmanager
def _translated_errors() -> Iterator[None]:
    """Turn the SDK's exceptions into ``LLMError`` with a ``kind`` the loop can act on."""
    try:
        yield
    except LLMError:
        raise
    except openai.APITimeoutError as exc:
        raise LLMError("timeout", "OpenAI request timed out") from exc
    except openai.APIConnectionError as exc:
        raise LLMError("server", f"Could not reach the OpenAI API: {exc.message}") from exc
    except openai.APIStatusError as exc:
        raise LLMError(
            error_kind_for_status(exc.status_code, error_type=exc.type),
            f"OpenAI API error {exc.status_code}: {exc.message}",
            status_code=exc.status_code,
            retry_after=retry_after_seconds(exc.response.headers),
        ) from exc
    except openai.APIResponseValidationError as exc:
        raise LLMError("invalid_response", exc.message, status_code=exc.status_code) from exc
    except openai.OpenAIError as exc:
        raise LLMError("server", f"OpenAI SDK error: {exc}") from exc
