"""The providers' ``stream``: the real SDKs against the streaming fake model (a local HTTP server) or a mock
transport; partial tool input on the way, and the same neutral response ``complete`` gives for the same answer."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import httpx2
import pytest

from tests.support.fake_model_server import (
    Answer,
    Failure,
    FakeModelServer,
    FakeUsage,
    Scripted,
    ToolUse,
    WorkoutTurnScript,
)
from tests.support.llm_fakes import (
    ScriptedTransport,
    anthropic_message,
    openai_completion,
    sample_llm_request,
)
from trainer_agent.llm.anthropic_provider import AnthropicProvider
from trainer_agent.llm.cost import cost_cents
from trainer_agent.llm.models import get_model
from trainer_agent.llm.openai_provider import OpenAIProvider
from trainer_agent.llm.types import LLMError, LLMRequest, LLMResponse, PartialToolCall, StreamingProvider

WORKOUT = WorkoutTurnScript(exercises=6).workout()
MESSAGE = {
    "message": "Here's your full-body session: six exercises, about forty minutes.",
    "artifact_id": "art_1",
}
type Api = str


@pytest.fixture
def fake() -> Iterator[FakeModelServer]:
    with FakeModelServer(Scripted(Answer.tool("idle", {"reason": "x"})), chunk_chars=7) as server:
        yield server


def _provider(api: Api, fake: FakeModelServer) -> AnthropicProvider | OpenAIProvider:
    if api == "anthropic":
        return AnthropicProvider(api_key="test", base_url=fake.base_url, max_retries=0, timeout=5)
    return OpenAIProvider(api_key="test", base_url=fake.openai_base_url, max_retries=0, timeout=5)


def _request(api: Api) -> LLMRequest:
    return sample_llm_request("claude-haiku-4-5" if api == "anthropic" else "gpt-4o-mini")


def _same_answer(
    *tools: tuple[str, dict[str, Any]], text: str = "", usage: FakeUsage | None = None
) -> Answer:
    """An answer with fixed ids, so two calls (streamed and not) get byte-identical responses."""
    return Answer(
        tool_calls=tuple(ToolUse(name, arguments, f"call_{n}") for n, (name, arguments) in enumerate(tools)),
        text=text,
        usage=usage or FakeUsage(),
        message_id="msg_same",
    )


def _without_duration(response: LLMResponse) -> LLMResponse:
    return replace(response, duration_ms=0)


APIS = pytest.mark.parametrize("api", ["anthropic", "openai"])


@APIS
def test_a_workout_streams_exercise_by_exercise_and_ends_complete(api: Api, fake: FakeModelServer) -> None:
    """Reports come in order, the list of exercises only grows, and the last report is the complete call."""
    fake.script = Scripted(Answer.tool("generate_workout", WORKOUT))
    provider = _provider(api, fake)
    assert isinstance(provider, StreamingProvider)
    seen: list[PartialToolCall] = []

    response = provider.stream(_request(api), on_partial=seen.append)

    final = response.tool_calls[0]
    exercises = WORKOUT["workout"]["exercises"]
    assert final.arguments == WORKOUT
    shown = [len((p.arguments.get("workout") or {}).get("exercises") or []) for p in seen]
    assert shown == sorted(shown) and shown[-1] == len(exercises)
    whole = [  # how many finished exercises each report shows exactly as the model wrote them
        sum(
            1
            for got, want in zip(
                (p.arguments.get("workout") or {}).get("exercises") or [], exercises, strict=False
            )
            if got == want
        )
        for p in seen
    ]
    assert set(range(1, len(exercises) + 1)) <= set(whole)  # each exercise was visible whole on its own
    assert [p.complete for p in seen] == [False] * (len(seen) - 1) + [True]
    assert seen[-1] == PartialToolCall(0, final.id, "generate_workout", WORKOUT, True)
    assert len(seen) > 50  # many small reports, not one at the end
    assert all(a.arguments != b.arguments for a, b in itertools.pairwise(seen[:-1]))  # only on change


@APIS
def test_a_paced_reader_reports_a_model_writing_steadily_in_batches(api: Api) -> None:
    """With a read interval (production's default), a reader caught up with a model that writes an event every
    few milliseconds reads what gathered meanwhile in one go: the workout is reported in far fewer steps than
    the pieces it was written in, still growing exercise by exercise, and ends exactly as written."""
    with FakeModelServer(Scripted(Answer.tool("generate_workout", WORKOUT)), tps=800, chunk_chars=12) as fake:
        provider = _provider(api, fake)
        provider.read_interval = 0.05
        seen: list[PartialToolCall] = []

        response = provider.stream(_request(api), on_partial=seen.append)

    assert response.tool_calls[0].arguments == WORKOUT
    pieces = len(json.dumps(WORKOUT)) // 12
    assert len(seen) < pieces / 3, (len(seen), pieces)
    shown = [len((p.arguments.get("workout") or {}).get("exercises") or []) for p in seen]
    assert shown == sorted(shown) and len(set(shown)) >= 4  # it grew in steps, not all at the end
    assert seen[-1].complete and seen[-1].arguments == WORKOUT


@APIS
def test_nobody_watching_a_stream_gets_the_same_response(api: Api, fake: FakeModelServer) -> None:
    """`on_partial=None` (a turn without previews): the call streams and returns what a watched one does."""
    fake.script = Scripted(_same_answer(("generate_workout", WORKOUT)))
    provider = _provider(api, fake)
    watched = provider.stream(_request(api), on_partial=lambda partial: None)
    unwatched = provider.stream(_request(api), on_partial=None)
    assert _without_duration(unwatched) == _without_duration(watched)


@APIS
def test_a_message_grows_word_by_word(api: Api, fake: FakeModelServer) -> None:
    """The text of message_notify_user is visible as it is written, each report extending the last."""
    fake.script = Scripted(Answer.tool("message_notify_user", MESSAGE))
    seen: list[PartialToolCall] = []

    _provider(api, fake).stream(_request(api), on_partial=seen.append)

    texts = [p.arguments["message"] for p in seen if "message" in p.arguments]
    assert len(set(texts)) >= 8
    assert all(later.startswith(earlier) for earlier, later in itertools.pairwise(texts))
    assert texts[-1] == MESSAGE["message"] and seen[-1].complete


@APIS
def test_the_streamed_response_is_the_one_complete_returns(api: Api, fake: FakeModelServer) -> None:
    """Tool calls, text, usage (cache buckets too), stop reason, model and raw are identical; so is the cost."""
    usage = FakeUsage(input_tokens=120, output_tokens=950, cache_read_tokens=2048, cache_write_tokens=512)
    fake.script = Scripted(_same_answer(("generate_workout", WORKOUT), usage=usage))
    provider = _provider(api, fake)

    streamed = provider.stream(_request(api), on_partial=lambda partial: None)
    completed = provider.complete(_request(api))

    assert _without_duration(streamed) == _without_duration(completed)
    assert streamed.raw == completed.raw
    if api == "anthropic":
        assert streamed.usage.as_event_tokens() == {
            "prompt": 120, "completion": 950, "cached": 2048, "cache_write": 512, "total": 3630,
        }  # fmt: skip
        assert streamed.raw["type"] == "message" and streamed.raw["content"][0]["type"] == "tool_use"
    else:
        assert streamed.raw["object"] == "chat.completion"
        assert streamed.usage.cache_read_tokens == 2048
    model = get_model(_request(api).model)
    assert cost_cents(model, streamed.usage) == cost_cents(model, completed.usage) > 0
    assert fake.calls[0].body["stream"] is True and "stream" not in fake.calls[1].body


def test_anthropic_text_and_two_calls_are_reported_by_call_position() -> None:
    """A text block does not count: the calls are 0 and 1, each ends complete, in order; text is kept."""
    answer = _same_answer(("message_notify_user", MESSAGE), ("idle", {"reason": "done"}), text="Let me see.")
    with FakeModelServer(Scripted(answer), chunk_chars=5) as fake:
        provider = _provider("anthropic", fake)
        seen: list[PartialToolCall] = []
        streamed = provider.stream(_request("anthropic"), on_partial=seen.append)
        completed = provider.complete(_request("anthropic"))

    assert _without_duration(streamed) == _without_duration(completed)
    assert streamed.text == "Let me see."
    assert [(p.index, p.name) for p in seen if p.complete] == [(0, "message_notify_user"), (1, "idle")]
    first_idle = next(i for i, p in enumerate(seen) if p.index == 1)
    assert all(p.index == 0 for p in seen[:first_idle]) and seen[first_idle - 1].complete


@APIS
def test_the_wire_body_is_completes_plus_streaming(api: Api, fake: FakeModelServer) -> None:
    """Same model, messages, tools and cache breakpoints as complete; only the streaming options are added."""
    provider = _provider(api, fake)
    provider.complete(_request(api))
    provider.stream(_request(api), on_partial=lambda partial: None)

    plain, streamed = fake.calls[0].body, fake.calls[1].body
    added = (
        {"stream": True}
        if api == "anthropic"
        else {"stream": True, "stream_options": {"include_usage": True}}
    )
    assert streamed == plain | added


@pytest.mark.parametrize(
    ("api", "failure", "kind", "status"),
    [
        ("anthropic", Failure(429, "rate_limit_error", headers=(("retry-after", "7"),)), "rate_limited", 429),
        ("anthropic", Failure(529, "overloaded_error"), "overloaded", 529),
        ("anthropic", Failure(500, "api_error"), "server", 500),
        ("openai", Failure(429, "rate_limit_exceeded", headers=(("retry-after", "7"),)), "rate_limited", 429),
        ("openai", Failure(503, "server_error"), "server", 503),
    ],
)
def test_an_error_before_the_stream_is_the_error_complete_gives(
    api: Api, failure: Failure, kind: str, status: int, fake: FakeModelServer
) -> None:
    """The HTTP error answered instead of a stream becomes the same LLMError kind, status and retry-after."""
    fake.script = Scripted(failure)
    provider = _provider(api, fake)
    seen: list[PartialToolCall] = []

    with pytest.raises(LLMError) as streamed:
        provider.stream(_request(api), on_partial=seen.append)
    with pytest.raises(LLMError) as completed:
        provider.complete(_request(api))

    assert (streamed.value.kind, streamed.value.status_code) == (kind, status)
    assert (streamed.value.kind, streamed.value.status_code, streamed.value.retry_after) == (
        completed.value.kind,
        completed.value.status_code,
        completed.value.retry_after,
    )
    assert seen == []


def test_an_overloaded_error_in_the_middle_of_an_anthropic_stream_is_overloaded(
    fake: FakeModelServer,
) -> None:
    """An `error` event after some input was written: what was shown stays shown, the call fails as a 529 would."""
    answer = Answer.tool("message_notify_user", MESSAGE)
    fake.script = Scripted(Failure(529, "overloaded_error", "Overloaded", after_chars=40, answer=answer))
    seen: list[PartialToolCall] = []

    with pytest.raises(LLMError) as raised:
        _provider("anthropic", fake).stream(_request("anthropic"), on_partial=seen.append)

    assert raised.value.kind == "overloaded" and raised.value.status_code == 529
    assert "Overloaded" in raised.value.message
    assert seen and not any(p.complete for p in seen)
    assert seen[-1].arguments["message"].startswith("Here's")


@pytest.mark.parametrize(
    ("error_type", "kind"), [("api_error", "server"), ("rate_limit_error", "rate_limited")]
)
def test_other_anthropic_stream_errors_are_classified_by_their_type(
    error_type: str, kind: str, fake: FakeModelServer
) -> None:
    """The event carries only a type: it is classified as the HTTP error of that type would be."""
    fake.script = Scripted(
        Failure(500, error_type, after_chars=10, answer=Answer.tool("idle", {"reason": "x" * 40}))
    )
    with pytest.raises(LLMError) as raised:
        _provider("anthropic", fake).stream(_request("anthropic"), on_partial=lambda partial: None)
    assert raised.value.kind == kind


def test_an_error_in_the_middle_of_an_openai_stream_fails_the_call(fake: FakeModelServer) -> None:
    """An `error` object among the chunks is a server error, not a truncated answer."""
    answer = Answer.tool("message_notify_user", MESSAGE)
    fake.script = Scripted(Failure(500, "server_error", "upstream died", after_chars=40, answer=answer))
    with pytest.raises(LLMError) as raised:
        _provider("openai", fake).stream(_request("openai"), on_partial=lambda partial: None)
    assert raised.value.kind == "server" and "upstream died" in raised.value.message


@APIS
def test_an_exception_from_on_partial_propagates_unchanged(api: Api, fake: FakeModelServer) -> None:
    """The preview side's failure is not the model's: no LLMError, the same exception object."""
    fake.script = Scripted(Answer.tool("generate_workout", WORKOUT))

    class PublisherDown(Exception):
        pass

    failure = PublisherDown("preview transport is down")

    def on_partial(partial: PartialToolCall) -> None:
        if partial.arguments.get("workout"):
            raise failure

    with pytest.raises(PublisherDown) as raised:
        _provider(api, fake).stream(_request(api), on_partial=on_partial)
    assert raised.value is failure


@APIS
def test_a_server_that_answers_json_to_a_stream_request_still_works(api: Api) -> None:
    """A proxy that does not stream (e.g. model-relay): the whole message, each call reported once, complete."""
    if api == "anthropic":
        body = anthropic_message(
            [("message_notify_user", MESSAGE, "toolu_1"), ("idle", {"reason": "done"}, "toolu_2")],
            cache_read_tokens=900,
        )
        transport = ScriptedTransport(body, body)
        provider: AnthropicProvider | OpenAIProvider = AnthropicProvider(
            api_key="test",
            http_client=transport.client(),
            base_url="https://api.anthropic.com",
            max_retries=0,
        )
    else:
        body = openai_completion([("message_notify_user", MESSAGE, "call_1")], cached_tokens=900)
        transport = ScriptedTransport(body, body)
        provider = OpenAIProvider(api_key="test", http_client=transport.client(), max_retries=0)
    seen: list[PartialToolCall] = []

    streamed = provider.stream(_request(api), on_partial=seen.append)
    completed = provider.complete(_request(api))

    assert transport.bodies[0]["stream"] is True
    assert _without_duration(streamed) == _without_duration(completed)
    assert streamed.raw == body
    assert [(p.index, p.complete, p.arguments) for p in seen] == [
        (index, True, call.arguments) for index, call in enumerate(completed.tool_calls)
    ]


def _sse(*events: tuple[str, dict[str, Any]]) -> httpx2.Response:
    text = "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events)
    return httpx2.Response(200, content=text.encode(), headers={"content-type": "text/event-stream"})


def test_an_anthropic_stream_cut_off_before_message_stop_is_a_server_error() -> None:
    """A stream that just ends (a proxy closed it) is not taken for a finished answer."""
    message = anthropic_message([], model="claude-haiku-4-5") | {"content": [], "stop_reason": None}
    start_block = {"type": "tool_use", "id": "toolu_1", "name": "idle", "input": {}}
    delta = {"type": "input_json_delta", "partial_json": '{"reason": "do'}
    transport = ScriptedTransport(
        lambda request: _sse(
            ("message_start", {"type": "message_start", "message": message}),
            (
                "content_block_start",
                {"type": "content_block_start", "index": 0, "content_block": start_block},
            ),
            ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
        )
    )
    provider = AnthropicProvider(
        api_key="test", http_client=transport.client(), base_url="https://api.anthropic.com", max_retries=0
    )
    seen: list[PartialToolCall] = []
    with pytest.raises(LLMError) as raised:
        provider.stream(_request("anthropic"), on_partial=seen.append)
    assert raised.value.kind == "server"
    assert [p.arguments for p in seen] == [{"reason": "do"}]


def test_tool_input_that_is_not_json_is_an_invalid_response() -> None:
    """The SDK cannot parse the accumulated input: invalid_response, as a garbled answer is."""
    message = anthropic_message([], model="claude-haiku-4-5") | {"content": [], "stop_reason": None}
    start_block = {"type": "tool_use", "id": "toolu_1", "name": "idle", "input": {}}
    delta = {"type": "input_json_delta", "partial_json": '{"reason": ]]'}
    transport = ScriptedTransport(
        lambda request: _sse(
            ("message_start", {"type": "message_start", "message": message}),
            (
                "content_block_start",
                {"type": "content_block_start", "index": 0, "content_block": start_block},
            ),
            ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            ("message_stop", {"type": "message_stop"}),
        )
    )
    provider = AnthropicProvider(
        api_key="test", http_client=transport.client(), base_url="https://api.anthropic.com", max_retries=0
    )
    with pytest.raises(LLMError) as raised:
        provider.stream(_request("anthropic"), on_partial=lambda partial: None)
    assert raised.value.kind == "invalid_response"


def test_openai_calls_complete_one_after_another() -> None:
    """Call 0 is complete once call 1 starts; both end complete with their final arguments."""
    answer = _same_answer(("message_notify_user", MESSAGE), ("idle", {"reason": "done"}))
    with FakeModelServer(Scripted(answer), chunk_chars=5) as fake:
        provider = _provider("openai", fake)
        seen: list[PartialToolCall] = []
        streamed = provider.stream(_request("openai"), on_partial=seen.append)
        completed = provider.complete(_request("openai"))

    assert _without_duration(streamed) == _without_duration(completed)
    assert [(p.index, p.arguments) for p in seen if p.complete] == [(0, MESSAGE), (1, {"reason": "done"})]
    first_idle = next(i for i, p in enumerate(seen) if p.index == 1)
    assert seen[first_idle - 1].complete and seen[first_idle - 1].index == 0


class _StallingBody(httpx2.SyncByteStream):
    """Some events, then the read times out (the model stopped sending)."""

    def __init__(self, first: bytes) -> None:
        self.first = first

    def __iter__(self) -> Iterator[bytes]:
        yield self.first
        raise httpx2.ReadTimeout("no event for LLM_TIMEOUT_SECONDS")


@APIS
def test_a_stream_that_stops_sending_is_a_timeout(api: Api) -> None:
    """A read timeout in the middle of the stream is `timeout`, as one before the answer is."""
    if api == "anthropic":
        message = anthropic_message([], model="claude-haiku-4-5") | {"content": [], "stop_reason": None}
        first = f"event: message_start\ndata: {json.dumps({'type': 'message_start', 'message': message})}\n\n"
    else:
        chunk = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4o-mini"}
        first = f"data: {json.dumps(chunk | {'choices': [{'index': 0, 'delta': {'role': 'assistant'}}]})}\n\n"
    transport = ScriptedTransport(
        lambda request: httpx2.Response(
            200, stream=_StallingBody(first.encode()), headers={"content-type": "text/event-stream"}
        )
    )
    provider: AnthropicProvider | OpenAIProvider = (
        AnthropicProvider(
            api_key="test",
            http_client=transport.client(),
            base_url="https://api.anthropic.com",
            max_retries=0,
        )
        if api == "anthropic"
        else OpenAIProvider(api_key="test", http_client=transport.client(), max_retries=0)
    )
    with pytest.raises(LLMError) as raised:
        provider.stream(_request(api), on_partial=lambda partial: None)
    assert raised.value.kind == "timeout"
