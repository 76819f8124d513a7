"""OpenTelemetry traces of turns: a span per turn, children per model call, tool and sub-agent run.

Off unless ``OTEL_EXPORTER_OTLP_ENDPOINT`` (or ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``) is set; then spans go
over OTLP/HTTP (protobuf) to ``{endpoint}/v1/traces``, with the standard OTel variables honoured by the SDK
(``OTEL_EXPORTER_OTLP_HEADERS``, ``OTEL_RESOURCE_ATTRIBUTES``, ``OTEL_BSP_*``, ``OTEL_SDK_DISABLED``).
``OTEL_SERVICE_NAME`` defaults to "trainer-agent". Off, every helper here is a no-op costing one check.

Attribute names follow the OpenTelemetry GenAI semantic conventions (as in
``opentelemetry.semconv._incubating.attributes.gen_ai_attributes``): a turn is ``invoke_agent trainer``, a model
call ``chat {model}`` (``gen_ai.operation.name`` = chat, ``gen_ai.provider.name`` and the older
``gen_ai.system``, ``gen_ai.request.model``, ``gen_ai.usage.*`` with the cache buckets,
``gen_ai.response.finish_reasons``), a tool ``execute_tool {name}``, a sub-agent ``invoke_agent {agent}``.
No prompt or message content is put on a span.

The turn's trace id is stored on its row (`AgentTurn.trace_id`, shown in the admin) and, while the turn runs,
in the context variable `current_trace_id` (for log records).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from opentelemetry import trace
from opentelemetry.trace import SpanKind, Status, StatusCode

from trainer_agent.connection_pool import give_back_connection

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.trace import Span

    from trainer_agent.llm.models import ModelConfig
    from trainer_agent.llm.types import StructuredOutputProvider, StructuredResult, Usage

DEFAULT_SERVICE_NAME = "trainer-agent"
INSTRUMENTATION_SCOPE = "trainer_agent"

# The trace id (32 hex digits) of the turn this thread is running, or None: set where the turn span starts, for
# log records of the turn (a logging filter reads it).
current_trace_id: ContextVar[str | None] = ContextVar("trainer_current_trace_id", default=None)

_provider: TracerProvider | None = None


def enabled() -> bool:
    return _provider is not None


def configure_from_env() -> bool:
    """Trace when the standard OTel environment names an OTLP endpoint; True if tracing is on. Called once per
    process at start (the app's `ready`)."""
    if _provider is not None:
        return True
    provider = provider_from_env()
    if provider is None:
        return False
    use_provider(provider)
    trace.set_tracer_provider(provider)  # the Anthropic SDK's own HTTP call spans nest under ours
    return True


def provider_from_env() -> TracerProvider | None:
    """A tracer provider exporting over OTLP/HTTP (protobuf) in batches, or None when
    OTEL_EXPORTER_OTLP_ENDPOINT (and OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) are unset or OTEL_SDK_DISABLED is
    true. The exporter reads the endpoint, headers, timeout and compression from the standard variables."""
    environ = os.environ
    endpoint = environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") or environ.get("OTEL_EXPORTER_OTLP_ENDPOINT")
    if not endpoint or environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return None
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    provider = new_provider()
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    return provider


def new_provider() -> TracerProvider:
    """A tracer provider with the service's resource (OTEL_SERVICE_NAME, else "trainer-agent")."""
    from opentelemetry.sdk.resources import SERVICE_NAME, Resource
    from opentelemetry.sdk.trace import TracerProvider

    attributes = {} if os.environ.get("OTEL_SERVICE_NAME") else {SERVICE_NAME: DEFAULT_SERVICE_NAME}
    return TracerProvider(resource=Resource.create(attributes))


def use_provider(provider: TracerProvider | None) -> TracerProvider | None:
    """Make this module trace to `provider` (None: off); returns the previous one (tests restore it)."""
    global _provider
    previous, _provider = _provider, provider
    return previous


def _tracer() -> trace.Tracer | None:
    provider = _provider
    return provider.get_tracer(INSTRUMENTATION_SCOPE) if provider is not None else None


def trace_id_of(span: Span | None) -> str:
    """The span's trace id as the 32 hex digits tracing backends show ("" without a recording span)."""
    if span is None:
        return ""
    context = span.get_span_context()
    return trace.format_trace_id(context.trace_id) if context.is_valid else ""


@contextmanager
def turn_span(*, turn_id: str, user_id: str) -> Iterator[Span | None]:
    """The span of one worker's attempt at a turn, from its claim to its end (a worker that continues a turn
    after a crash starts a new trace). Sets `current_trace_id` for its duration."""
    tracer = _tracer()
    if tracer is None:
        yield None
        return
    attributes = {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "trainer",
        "trainer.turn.id": turn_id,
        "trainer.user.id": user_id,
    }
    with tracer.start_as_current_span(
        "invoke_agent trainer", kind=SpanKind.INTERNAL, attributes=attributes
    ) as span:
        token = current_trace_id.set(trace_id_of(span))
        try:
            yield span
        finally:
            current_trace_id.reset(token)


def turn_claimed(span: Span | None, *, session_id: str, model: str, attempt: int) -> None:
    if span is not None:
        span.set_attribute("gen_ai.conversation.id", session_id)
        span.set_attribute("gen_ai.request.model", model)
        span.set_attribute("trainer.turn.attempt", attempt)


def turn_not_claimed(span: Span | None) -> None:
    """The turn had ended, or another worker holds it: this attempt did nothing."""
    if span is not None:
        span.set_attribute("trainer.turn.claimed", False)


def end_turn_span(
    span: Span | None,
    *,
    status: str,
    stop_reason: str = "",
    iterations: int = 0,
    error_kind: str = "",
    error: str = "",
) -> None:
    """Record how the turn ended on its span (an error status for a turn that ended in `error`)."""
    if span is None:
        return
    span.set_attribute("trainer.turn.status", status)
    span.set_attribute("trainer.turn.iterations", iterations)
    if stop_reason:
        span.set_attribute("trainer.turn.stop_reason", stop_reason)
    if error_kind:
        span.set_attribute("error.type", error_kind)
    if status == "error":
        span.set_status(Status(StatusCode.ERROR, (error or error_kind)[:500]))


class ModelCallSpan:
    """What a model-call span records once the call answers (`record`) or fails (`fail`)."""

    def __init__(self, span: Span | None) -> None:
        self.span = span

    def record(
        self,
        *,
        usage: Usage,
        response_model: str = "",
        finish_reason: str | None = None,
        response_id: str = "",
    ) -> None:
        span = self.span
        if span is None:
            return
        span.set_attribute("gen_ai.usage.input_tokens", usage.input_tokens)
        span.set_attribute("gen_ai.usage.output_tokens", usage.output_tokens)
        span.set_attribute("gen_ai.usage.cache_read.input_tokens", usage.cache_read_tokens)
        span.set_attribute("gen_ai.usage.cache_creation.input_tokens", usage.cache_write_tokens)
        if response_model:
            span.set_attribute("gen_ai.response.model", response_model)
        if finish_reason:
            span.set_attribute("gen_ai.response.finish_reasons", [finish_reason])
        if response_id:
            span.set_attribute("gen_ai.response.id", response_id)

    def fail(self, kind: str, message: str) -> None:
        if self.span is not None:
            self.span.set_attribute("error.type", kind)
            self.span.set_status(Status(StatusCode.ERROR, message[:500]))


@contextmanager
def model_call_span(
    model: ModelConfig, *, purpose: str, max_tokens: int | None = None
) -> Iterator[ModelCallSpan]:
    """A `chat {model}` client span around one model call (`purpose`: trainer, initializer, subagent:…).

    Every model call passes here, so here the thread gives its pooled connection back for the call's duration
    (`connection_pool`; not inside a transaction): the turn's next statement borrows one again, unchecked if
    it is back within moments."""
    give_back_connection(lend_unchecked=True)
    tracer = _tracer()
    if tracer is None:
        yield ModelCallSpan(None)
        return
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": model.provider,
        "gen_ai.system": model.provider,
        "gen_ai.request.model": model.id,
        "trainer.llm.purpose": purpose,
    }
    if max_tokens is not None:
        attributes["gen_ai.request.max_tokens"] = max_tokens
    with tracer.start_as_current_span(
        f"chat {model.id}", kind=SpanKind.CLIENT, attributes=attributes
    ) as span:
        yield ModelCallSpan(span)


@contextmanager
def tool_span(*, name: str, call_id: str) -> Iterator[Span | None]:
    """An `execute_tool {name}` span; `tool_failed` marks a failed result."""
    tracer = _tracer()
    if tracer is None:
        yield None
        return
    attributes = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": name,
        "gen_ai.tool.call.id": call_id,
        "gen_ai.tool.type": "function",
    }
    with tracer.start_as_current_span(
        f"execute_tool {name}", kind=SpanKind.INTERNAL, attributes=attributes
    ) as span:
        yield span


def tool_failed(span: Span | None, message: str) -> None:
    if span is not None:
        span.set_attribute("error.type", "tool_error")
        span.set_status(Status(StatusCode.ERROR, message[:500]))


@contextmanager
def subagent_span(*, agent_id: str, model: str) -> Iterator[Span | None]:
    """An `invoke_agent {agent_id}` span around one sub-agent run (its model calls are its children)."""
    tracer = _tracer()
    if tracer is None:
        yield None
        return
    attributes = {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": agent_id,
        "gen_ai.request.model": model,
    }
    with tracer.start_as_current_span(
        f"invoke_agent {agent_id}", kind=SpanKind.INTERNAL, attributes=attributes
    ) as span:
        yield span


def complete_json(
    provider: StructuredOutputProvider, model: ModelConfig, *, purpose: str, **request: Any
) -> StructuredResult:
    """`provider.complete_json(model=model.id, **request)` in a `chat` span (the initializer, sub-agents)."""
    from trainer_agent.llm.types import LLMError

    with model_call_span(model, purpose=purpose, max_tokens=request.get("max_tokens")) as span:
        try:
            result = provider.complete_json(model=model.id, **request)
        except LLMError as exc:
            span.fail(exc.kind, exc.message)
            raise
        span.record(usage=result.usage, response_model=str(result.raw.get("model") or ""))
        return result
