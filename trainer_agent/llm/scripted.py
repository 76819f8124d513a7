"""A provider that plays back a script: for tests and benchmarks at the provider boundary (no HTTP at all)."""

from __future__ import annotations

import itertools
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from trainer_agent.llm.simulated_stream import replay_as_stream
from trainer_agent.llm.types import (
    LLMError,
    LLMRequest,
    LLMResponse,
    PartialCallback,
    StructuredResult,
    ToolCall,
    Usage,
)

type Step = LLMResponse | Callable[[LLMRequest], LLMResponse] | BaseException
type JSONStep = dict[str, Any] | Callable[[StructuredRequest], dict[str, Any]] | BaseException


@dataclass(frozen=True)
class StructuredRequest:
    """The arguments of one ``complete_json`` call, as recorded by ``ScriptedProvider``."""

    model: str
    system: str
    user: str
    json_schema: dict[str, Any]
    schema_name: str
    max_tokens: int
    temperature: float | None = None


class ScriptedProvider:
    """Answers each call with the next scripted step and records every request it received.

    A step is an ``LLMResponse``, a function of the request returning one, or an exception to raise (e.g. an
    ``LLMError`` to test failure handling). When the script runs out the provider raises
    ``LLMError("invalid_response")`` unless ``cycle=True``, which starts the script again (load benchmarks).
    ``delay_s`` sleeps before answering, to imitate a slow model. ``stream`` replays the answer's tool inputs
    in pieces, ``stream_delay_s`` apart (None: ``OFFLINE_STREAM_DELAY_SECONDS``). Safe to share between threads.
    """

    def __init__(
        self,
        steps: Sequence[Step] = (),
        *,
        delay_s: float = 0.0,
        cycle: bool = False,
        json_steps: Sequence[JSONStep] = (),
        stream_delay_s: float | None = None,
    ) -> None:
        self._steps = list(steps)
        self._json_steps = list(json_steps)
        self._cycle = cycle
        self.delay_s = delay_s
        self.stream_delay_s = stream_delay_s
        self.requests: list[LLMRequest] = []
        self.json_requests: list[StructuredRequest] = []
        self._counter = itertools.count()
        self._json_counter = itertools.count()
        self._lock = threading.Lock()

    @property
    def calls(self) -> int:
        return len(self.requests)

    @property
    def remaining(self) -> int:
        """Steps not yet played (meaningless with ``cycle=True``)."""
        return max(len(self._steps) - len(self.requests), 0)

    def complete(self, request: LLMRequest) -> LLMResponse:
        with self._lock:
            index = next(self._counter)
            self.requests.append(request)
        step = self._pick(self._steps, index, what="complete()")
        started = time.monotonic()
        if self.delay_s:
            time.sleep(self.delay_s)
        if isinstance(step, BaseException):
            raise step
        response = step(request) if callable(step) else step
        changes: dict[str, Any] = {}
        if not response.model:
            changes["model"] = request.model
        if self.delay_s:
            changes["duration_ms"] = round((time.monotonic() - started) * 1000)
        return replace(response, **changes) if changes else response

    def stream(self, request: LLMRequest, *, on_partial: PartialCallback | None) -> LLMResponse:
        """``complete``, then its tool inputs replayed a word at a time (``simulated_stream``; at once when
        nobody watches)."""
        if on_partial is None:
            return self.complete(request)
        return replay_as_stream(self.complete(request), on_partial, delay_s=self.stream_delay_s)

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
        recorded = StructuredRequest(model, system, user, json_schema, schema_name, max_tokens, temperature)
        with self._lock:
            index = next(self._json_counter)
            self.json_requests.append(recorded)
        step = self._pick(self._json_steps, index, what="complete_json()")
        if isinstance(step, BaseException):
            raise step
        data = step(recorded) if callable(step) else step
        return StructuredResult(dict(data), Usage(input_tokens=50, output_tokens=10), {"scripted": data}, 0)

    def _pick[T](self, steps: list[T], index: int, *, what: str) -> T:
        if not steps:
            raise LLMError("invalid_response", f"ScriptedProvider has no steps for {what}")
        if index >= len(steps) and not self._cycle:
            raise LLMError(
                "invalid_response",
                f"ScriptedProvider script exhausted: call {index + 1} to {what}, {len(steps)} steps",
            )
        return steps[index % len(steps)]


def scripted_response(
    *,
    tool_calls: Sequence[tuple[str, dict[str, Any]]] = (),
    text: str = "",
    input_tokens: int = 100,
    output_tokens: int = 20,
    cache_read_tokens: int = 0,
    cache_write_tokens: int = 0,
    stop_reason: str | None = None,
    model: str = "",
) -> LLMResponse:
    """A complete ``LLMResponse``; ``model`` left empty is filled with the request's model when played."""
    calls = [
        ToolCall(id=f"toolu_scripted_{uuid.uuid4().hex[:16]}", name=name, arguments=dict(arguments))
        for name, arguments in tool_calls
    ]
    blocks: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    blocks += [{"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments} for c in calls]
    usage = Usage(
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        cache_read_tokens=cache_read_tokens,
        cache_write_tokens=cache_write_tokens,
    )
    return LLMResponse(
        tool_calls=calls,
        text=text,
        usage=usage,
        stop_reason=stop_reason or ("tool_use" if calls else "end_turn"),
        model=model,
        raw={"type": "scripted", "content": blocks, "usage": usage.as_event_tokens()},
        duration_ms=0,
    )


def tool_response(
    name: str,
    arguments: dict[str, Any] | None = None,
    *,
    text: str = "",
    input_tokens: int = 100,
    output_tokens: int = 20,
    cache_read_tokens: int = 0,
    cache_write_tokens: int = 0,
    model: str = "",
) -> LLMResponse:
    """A response carrying exactly one tool call, e.g. ``tool_response("idle")``."""
    return scripted_response(
        tool_calls=[(name, arguments or {})],
        text=text,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        cache_read_tokens=cache_read_tokens,
        cache_write_tokens=cache_write_tokens,
        model=model,
    )


def text_response(
    text: str, *, input_tokens: int = 100, output_tokens: int = 20, model: str = ""
) -> LLMResponse:
    """A response with text and no tool call (the loop treats this as an error and stops)."""
    return scripted_response(text=text, input_tokens=input_tokens, output_tokens=output_tokens, model=model)
