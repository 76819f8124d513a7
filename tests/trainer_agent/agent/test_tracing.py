"""OpenTelemetry traces of a turn: the turn span, its model-call, tool and sub-agent spans with the GenAI
attributes, the trace id on the turn row; and the same trace received over OTLP/HTTP by a local receiver."""

from __future__ import annotations

import gzip
import threading
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from sessions_app.models import AgentTurn
from tests.tools_app.test_calendar_tools import in_days, next_monday
from trainer_agent import tracing
from trainer_agent.llm.providers import override_provider
from trainer_agent.llm.scripted import ScriptedProvider, StructuredRequest, tool_response
from trainer_agent.llm.types import LLMRequest, LLMResponse
from trainer_agent.offline.structured import answer_json
from trainer_agent.turns import run_turn

MODEL = "claude-haiku-4-5"


class _SeesTraceId:
    """A scripted model that notes the trace id a log record of the turn would carry during each call."""

    def __init__(self, inner: ScriptedProvider) -> None:
        self.inner = inner
        self.trace_ids: list[str | None] = []

    def complete(self, request: LLMRequest) -> LLMResponse:
        self.trace_ids.append(tracing.current_trace_id.get())
        return self.inner.complete(request)

    def complete_json(self, **request: Any) -> Any:
        return self.inner.complete_json(**request)


def _plan_turn(settings: Any, user_id: uuid.UUID) -> tuple[AgentTurn, _SeesTraceId]:
    """A turn that says hello, makes a plan (the fitness_plan sub-agent, on the scripted model) and idles."""
    settings.PRIMARY_MODEL = MODEL  # the sub-agent runs on the scripted model too

    def plan(request: StructuredRequest) -> dict[str, Any]:  # what a good model answers: the offline plan
        return answer_json(
            user=request.user, json_schema=request.json_schema, schema_name=request.schema_name
        ).data

    start = next_monday(in_days(1)).isoformat()
    provider = _SeesTraceId(
        ScriptedProvider(
            [
                tool_response("message_notify_user", {"message": "Let's plan"}, cache_read_tokens=40),
                tool_response(
                    "create_workout_plan",
                    {"name": "Block", "goal": "get stronger", "days_per_week": 3, "start_date": start},
                    cache_write_tokens=7,
                ),
                tool_response("idle", {"reason": "done"}),
            ],
            json_steps=[plan],
        )
    )
    with override_provider(MODEL, provider):
        result = run_turn(user_id=user_id, message="plan my training", model=MODEL)
    assert [a.tool for a in result.actions] == ["message_notify_user", "create_workout_plan", "idle"]
    assert result.actions[1].result["success"], result.actions[1].result
    return AgentTurn.objects.get(session_id=result.session_id), provider


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = tracing.new_provider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    previous = tracing.use_provider(provider)
    yield exporter
    tracing.use_provider(previous)
    provider.shutdown()


def _by_name(finished: tuple[ReadableSpan, ...], name: str) -> list[ReadableSpan]:
    return [span for span in finished if span.name == name]


def _parent_id(span: ReadableSpan) -> int | None:
    return span.parent.span_id if span.parent is not None else None


@pytest.mark.django_db
def test_a_turn_is_one_trace_of_its_model_calls_tools_and_sub_agent(
    spans: InMemorySpanExporter, demo_user: uuid.UUID, settings: Any
) -> None:
    turn, provider = _plan_turn(settings, demo_user)
    finished = spans.get_finished_spans()

    [root] = _by_name(finished, "invoke_agent trainer")
    assert root.parent is None
    assert root.context is not None and root.attributes is not None
    trace_id = root.context.trace_id
    assert {span.context.trace_id for span in finished if span.context} == {trace_id}
    assert turn.trace_id == f"{trace_id:032x}"  # stored on the turn: the admin links to it
    assert provider.trace_ids == [turn.trace_id] * 3  # what a log record of the turn carries
    assert root.attributes["gen_ai.conversation.id"] == str(turn.session_id)
    assert root.attributes["trainer.turn.id"] == str(turn.pk)
    assert root.attributes["trainer.turn.status"] == "completed"
    assert root.attributes["trainer.turn.stop_reason"] == "idle"

    chats = [s for s in _by_name(finished, f"chat {MODEL}") if _parent_id(s) == root.context.span_id]
    assert len(chats) == 3
    first = chats[0].attributes
    assert first is not None
    assert first["gen_ai.operation.name"] == "chat"
    assert first["gen_ai.provider.name"] == first["gen_ai.system"] == "anthropic"
    assert first["gen_ai.request.model"] == MODEL
    assert first["gen_ai.usage.input_tokens"] == 100
    assert first["gen_ai.usage.output_tokens"] == 20
    assert first["gen_ai.usage.cache_read.input_tokens"] == 40
    assert chats[1].attributes is not None
    assert chats[1].attributes["gen_ai.usage.cache_creation.input_tokens"] == 7
    assert first["gen_ai.response.finish_reasons"] == ("tool_use",)

    tools = [
        s for s in finished if s.attributes and s.attributes.get("gen_ai.operation.name") == "execute_tool"
    ]
    assert [s.attributes["gen_ai.tool.name"] for s in tools if s.attributes] == [
        "message_notify_user",
        "create_workout_plan",
        "idle",
    ]
    assert {_parent_id(s) for s in tools} == {root.context.span_id}

    [subagent] = _by_name(finished, "invoke_agent fitness_plan")
    assert tools[1].context is not None and _parent_id(subagent) == tools[1].context.span_id
    [plan_call] = [s for s in finished if subagent.context and _parent_id(s) == subagent.context.span_id]
    assert plan_call.name == f"chat {MODEL}"
    assert plan_call.attributes is not None
    assert plan_call.attributes["trainer.llm.purpose"] == "subagent:fitness_plan"
    # Every span of the turn ends before (or with) the turn's.
    assert all(span.end_time and root.end_time and span.end_time <= root.end_time for span in finished)


@pytest.mark.django_db
def test_without_an_otlp_endpoint_nothing_is_traced(demo_user: uuid.UUID, settings: Any) -> None:
    assert not tracing.enabled()
    turn, provider = _plan_turn(settings, demo_user)
    assert turn.trace_id is None
    assert provider.trace_ids == [None] * 3


@pytest.mark.django_db
def test_a_failed_model_call_marks_its_span_and_the_turn_in_error(
    spans: InMemorySpanExporter, demo_user: uuid.UUID
) -> None:
    from trainer_agent.llm.types import LLMError

    with override_provider(MODEL, ScriptedProvider([LLMError("overloaded", "Overloaded")])):
        run_turn_error = None
        try:
            run_turn(user_id=demo_user, message="hello", model=MODEL)
        except Exception as exc:
            run_turn_error = exc
    assert run_turn_error is not None
    finished = spans.get_finished_spans()
    [root] = _by_name(finished, "invoke_agent trainer")
    [chat] = _by_name(finished, f"chat {MODEL}")
    assert chat.attributes is not None and chat.attributes["error.type"] == "overloaded"
    assert not chat.status.is_ok and not root.status.is_ok
    assert root.attributes is not None and root.attributes["error.type"] == "overloaded"


class _Receiver(BaseHTTPRequestHandler):
    """An OTLP/HTTP trace receiver: POST /v1/traces with a protobuf ExportTraceServiceRequest."""

    received: list[tuple[str, ExportTraceServiceRequest]]

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if self.headers.get("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        self.received.append((self.path, request))
        answer = ExportTraceServiceResponse().SerializeToString()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.mark.django_db
def test_the_trace_of_a_turn_arrives_over_otlp_http(
    demo_user: uuid.UUID, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    received: list[tuple[str, ExportTraceServiceRequest]] = []
    handler = type("Receiver", (_Receiver,), {"received": received})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", f"http://127.0.0.1:{server.server_port}")
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", raising=False)
    monkeypatch.delenv("OTEL_SERVICE_NAME", raising=False)
    provider = tracing.provider_from_env()
    assert provider is not None
    previous = tracing.use_provider(provider)
    try:
        turn, _ = _plan_turn(settings, demo_user)
        assert provider.force_flush(10_000)
    finally:
        tracing.use_provider(previous)
        provider.shutdown()
        server.shutdown()
        server.server_close()

    assert received and {path for path, _ in received} == {"/v1/traces"}
    arrived = [
        (resource_spans.resource, span)
        for _, request in received
        for resource_spans in request.resource_spans
        for scope_spans in resource_spans.scope_spans
        for span in scope_spans.spans
    ]
    names = sorted(span.name for _, span in arrived)
    assert names == sorted(
        [
            "invoke_agent trainer",
            "chat offline",  # the initializer's
            *[f"chat {MODEL}"] * 4,
            "execute_tool message_notify_user",
            "execute_tool create_workout_plan",
            "execute_tool idle",
            "invoke_agent fitness_plan",
        ]
    )
    assert {span.trace_id.hex() for _, span in arrived} == {turn.trace_id}
    service = {
        attribute.value.string_value
        for resource, _ in arrived
        for attribute in resource.attributes
        if attribute.key == "service.name"
    }
    assert service == {"trainer-agent"}
    chat = next(span for _, span in arrived if span.name == f"chat {MODEL}")
    attributes = {attribute.key: attribute.value for attribute in chat.attributes}
    assert attributes["gen_ai.operation.name"].string_value == "chat"
    assert attributes["gen_ai.usage.input_tokens"].int_value == 100
