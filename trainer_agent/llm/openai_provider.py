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
from collections.abc import Iterable, Iterator
from contextlib import ExitStack, contextmanager
from typing import Any, Literal

import httpx2
import openai
from django.conf import settings
from openai.types import CompletionUsage
from openai.types.chat import ChatCompletion, ChatCompletionChunk

from trainer_agent.llm.partial import PartialToolCalls
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
    ) -> None:
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

    def stream(self, request: LLMRequest, *, on_partial: PartialCallback) -> LLMResponse:
        """``complete`` with ``stream=True`` and usage included, reporting each tool input as it grows.

        ``raw`` is the ``chat.completion`` the chunks add up to (``ChatCompletionAccumulator``), so stored,
        costed and replayed events look as they do without streaming. A server that answers JSON instead of
        an event stream is read whole, each call reported once, complete. Exceptions from ``on_partial``
        propagate unchanged; the connection is closed either way.
        """
        body = build_openai_body(request, max_tokens_field=self.max_tokens_field)
        body |= {"stream": True, "stream_options": {"include_usage": True}}
        started = time.monotonic()
        calls = PartialToolCalls(on_partial)
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
            accumulator = ChatCompletionAccumulator()
            for chunk in _translated_stream(chunks):
                pieces = accumulator.add(chunk)
                for index in accumulator.call_indexes():
                    if index not in calls:
                        # Calls arrive one after another: a new one means the ones before it are written.
                        for earlier in calls.unfinished():
                            calls.finish(earlier, parse_tool_arguments(calls.text(earlier)))
                        call_id, name = accumulator.call_head(index)
                        calls.start(index, call_id=call_id, name=name)
                for index, piece in pieces:
                    calls.feed(index, piece)
                if accumulator.finished:
                    for index in calls.unfinished():
                        calls.finish(index, parse_tool_arguments(calls.text(index)))
        if not accumulator.finished:
            raise LLMError("server", "The chat-completions stream ended without a finish_reason")
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
    """Adds up ``chat.completion.chunk`` events into the ``chat.completion`` the same answer has unstreamed.

    The result: ``id``, ``created``, ``model`` (and ``system_fingerprint`` / ``service_tier`` when sent) of the
    chunks, ``object: "chat.completion"``, one choice (index 0) whose ``message`` has the role, the
    ``content`` and ``refusal`` joined from the deltas (None when there were none) and the ``tool_calls``
    (id, type, name and the joined ``arguments``) in index order, its ``finish_reason`` and ``logprobs:
    null``, and the ``usage`` of the last chunk (``stream_options.include_usage``). Choices other than 0
    are ignored: the service asks for one.
    """

    def __init__(self) -> None:
        self._head: dict[str, Any] = {}
        self._role = "assistant"
        self._content: list[str] = []
        self._refusal: list[str] = []
        self._calls: dict[int, dict[str, Any]] = {}
        self._finish_reason: str | None = None
        self._usage: dict[str, Any] | None = None

    @property
    def finished(self) -> bool:
        return self._finish_reason is not None

    def add(self, chunk: ChatCompletionChunk) -> list[tuple[int, str]]:
        """Take one chunk; returns the (tool call index, arguments piece) pairs it carried."""
        if not self._head:
            self._head = {"id": chunk.id, "object": "chat.completion", "created": chunk.created}
        self._head["model"] = chunk.model or self._head.get("model", "")
        for optional in ("system_fingerprint", "service_tier"):
            if getattr(chunk, optional, None) is not None:
                self._head[optional] = getattr(chunk, optional)
        if chunk.usage is not None:
            self._usage = chunk.usage.to_dict(mode="json")
        pieces: list[tuple[int, str]] = []
        for choice in chunk.choices:
            if choice.index != 0:
                continue
            delta = choice.delta
            if delta.role:
                self._role = delta.role
            if delta.content:
                self._content.append(delta.content)
            if delta.refusal:
                self._refusal.append(delta.refusal)
            for tool_call in delta.tool_calls or []:
                call = self._calls.setdefault(
                    tool_call.index, {"id": "", "type": "function", "function": {"name": "", "arguments": ""}}
                )
                if tool_call.id:
                    call["id"] = tool_call.id
                if tool_call.type:
                    call["type"] = tool_call.type
                function = tool_call.function
                if function is not None and function.name:
                    call["function"]["name"] += function.name
                if function is not None and function.arguments:
                    call["function"]["arguments"] += function.arguments
                    pieces.append((tool_call.index, function.arguments))
            if choice.finish_reason is not None:
                self._finish_reason = choice.finish_reason
        return pieces

    def call_indexes(self) -> list[int]:
        return sorted(self._calls)

    def call_head(self, index: int) -> tuple[str, str]:
        """The id and function name of tool call ``index`` (sent with its first piece)."""
        call = self._calls[index]
        return str(call["id"]), str(call["function"]["name"])

    def completion(self) -> dict[str, Any]:
        message: dict[str, Any] = {
            "role": self._role,
            "content": "".join(self._content) if self._content else None,
            "refusal": "".join(self._refusal) if self._refusal else None,
        }
        if self._calls:
            message["tool_calls"] = [self._calls[index] for index in sorted(self._calls)]
        completion = {
            **self._head,
            "choices": [
                {"index": 0, "message": message, "finish_reason": self._finish_reason, "logprobs": None}
            ],
        }
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


def _translated_stream[T](events: Iterable[T]) -> Iterator[T]:
    """``events`` with the SDK's failures while reading them translated; the consumer's own code runs outside."""
    iterator = iter(events)
    while True:
        with _translated_errors():
            try:
                event = next(iterator)
            except StopIteration:
                return
        yield event


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
    except openai.APIError as exc:
        # An `error` object in the middle of a stream that began 200 (the SDK raises it without a status).
        code = str(exc.code or "")
        kind = (
            error_kind_for_status(int(code))
            if code.isdigit()
            else "rate_limited"
            if "rate_limit" in f"{code} {exc.type or ''}"
            else "server"
        )
        raise LLMError(kind, f"OpenAI stream error: {exc.message}", status_code=None) from exc
    except openai.OpenAIError as exc:
        raise LLMError("server", f"OpenAI SDK error: {exc}") from exc
