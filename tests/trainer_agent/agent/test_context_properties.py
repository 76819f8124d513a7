"""Context builder properties (docs/contracts.md §8 (model context)) over random event histories, on real stored events."""

from __future__ import annotations

import copy
import itertools
import json
import uuid
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sessions_app.models import AgentSession
from sessions_app.services import append_event, create_session, update_context_start
from trainer_agent.context import EMPTY_CONTEXT_ERROR, ContextBuildError, ContextCache, build_context
from trainer_agent.llm.anthropic_provider import build_anthropic_body

pytestmark = pytest.mark.django_db

MODEL = "claude-haiku-4-5"
TOOLS = ("generate_workout", "message_notify_user", "fetch_data", "swap_exercise", "idle")
SOURCES = ("workout_history", "category_goals", "active_preferences")

safe_text = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc")) | st.sampled_from("\n\t<>&\"'"),
    min_size=1,
    max_size=40,
)
arguments = st.dictionaries(
    st.sampled_from(["message", "exercise_id", "reason", "sources"]),
    safe_text | st.integers(0, 99) | st.lists(safe_text, max_size=2),
    max_size=3,
)


@dataclass(frozen=True)
class Call:
    tool: str
    arguments: dict[str, Any]
    result: str
    success: bool
    artifact: bool


# A step is what happens between two context builds: a user turn, one executed tool call, several tool calls from
# one response (answered in the loop's order, or all calls first), a call whose result never arrived because
# the turn crashed (the next build comes with the user's next message), or stray knowledge.
user_step = st.tuples(st.just("user"), safe_text, st.lists(st.sampled_from(SOURCES), max_size=2, unique=True))
call_strategy = st.builds(
    Call,
    tool=st.sampled_from(TOOLS),
    arguments=arguments,
    result=safe_text,
    success=st.booleans(),
    artifact=st.booleans(),
)
tool_step = st.tuples(st.just("tool"), call_strategy)
multi_step = st.tuples(st.just("multi"), st.lists(call_strategy, min_size=2, max_size=3), st.booleans())
crash_step = st.tuples(st.just("crash"), call_strategy, user_step)
knowledge_step = st.tuples(st.just("knowledge"), st.sampled_from(SOURCES), safe_text)
steps = st.tuples(
    user_step, st.lists(st.one_of(user_step, tool_step, multi_step, crash_step, knowledge_step), max_size=7)
)


class History:
    """Writes steps as events of one session, with unique call and artifact ids."""

    def __init__(self) -> None:
        self.user_id = uuid.uuid4()
        self.session = create_session(user_id=self.user_id)
        self.ids = itertools.count(1)

    def record(self, event_type: str, data: dict[str, Any]) -> None:
        append_event(session=self.session, event_type=event_type, data=data)

    def write(self, step: tuple[Any, ...]) -> None:
        kind = step[0]
        if kind == "user":
            self.record("user_message", {"message": step[1]})
            for source in step[2]:
                self.record("knowledge", {"source": source, "params": {}, "data": f"{source} data"})
        elif kind == "knowledge":
            self.record("knowledge", {"source": step[1], "params": {}, "data": step[2]})
        elif kind == "tool":
            self.call_and_answer(step[1])
        elif kind == "crash":
            self.call(step[1])
            self.write(step[2])
        elif kind == "multi":
            calls, loop_order = step[1], step[2]
            if loop_order:
                for item in calls:
                    self.call_and_answer(item)
            else:
                ids = [self.call(item) for item in calls]
                for item, call_id in zip(calls, ids, strict=True):
                    self.answer(item, call_id)

    def call(self, item: Call) -> str:
        call_id = f"toolu_{next(self.ids):04d}"
        self.record("tool_call", {"tool_name": item.tool, "arguments": item.arguments, "call_id": call_id})
        return call_id

    def answer(self, item: Call, call_id: str) -> None:
        formatted = f'<tool_result name="{item.tool}">\n{item.result}\n</tool_result>'
        self.record(
            "tool_result",
            {
                "tool_name": item.tool,
                "call_id": call_id,
                "success": item.success,
                "result": {"success": item.success, "data": {}, "formatted": formatted},
            },
        )
        if item.artifact and item.success:
            artifact_id = f"art_{next(self.ids):06x}"
            self.record(
                "artifact",
                {
                    "artifact_id": artifact_id,
                    "type": "exercise_list",
                    "schema_version": "1.0",
                    "title": item.result[:20],
                    "summary": {},
                    "auto_start": False,
                    "payload": {"exercises": [{"id": "ex_1", "order": 1, "exercise_name": "Push-Up"}]},
                },
            )

    def call_and_answer(self, item: Call) -> None:
        self.answer(item, self.call(item))


def without_markers(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    stripped = copy.deepcopy(messages)
    for message in stripped:
        for block in message["content"]:
            block.pop("cache_control", None)
    return stripped


def assert_valid_transcript(messages: list[dict[str, Any]]) -> None:
    """Roles alternate from a user message; every tool_use is answered first thing in the next message."""
    assert messages and messages[0]["role"] == "user"
    for earlier, later in itertools.pairwise(messages):
        assert earlier["role"] != later["role"], "consecutive messages of one role must be merged"
    for index, message in enumerate(messages):
        uses = [b["id"] for b in message["content"] if b["type"] == "tool_use"]
        if message["role"] == "assistant":
            assert uses and all(b["type"] == "tool_use" for b in message["content"])
            answer = messages[index + 1]["content"]
            answered = [b["tool_use_id"] for b in answer[: len(uses)] if b["type"] == "tool_result"]
            assert sorted(answered) == sorted(uses)
        else:
            kinds = [b["type"] for b in message["content"]]
            results = kinds.count("tool_result")
            assert kinds[:results] == ["tool_result"] * results, "tool results come first in a user message"


def assert_prefix_extension(before: dict[str, Any], after: dict[str, Any]) -> None:
    """Tools, system and user data byte-identical; earlier messages identical but for the moving marker."""
    for key in ("tools", "system", "tool_choice", "model", "max_tokens"):
        assert json.dumps(after[key], sort_keys=True) == json.dumps(before[key], sort_keys=True), key
    old, new = without_markers(before["messages"]), without_markers(after["messages"])
    assert len(new) >= len(old)
    assert new[: len(old) - 1] == old[:-1]
    tail_before, tail_after = old[-1], new[len(old) - 1]
    assert tail_after["role"] == tail_before["role"]
    assert tail_after["content"][: len(tail_before["content"])] == tail_before["content"]
    assert new != old or after["messages"] == before["messages"]


def marker_positions(body: dict[str, Any]) -> list[tuple[int, int]]:
    return [
        (m, b)
        for m, message in enumerate(body["messages"])
        for b, block in enumerate(message["content"])
        if "cache_control" in block
    ]


@given(history_steps=steps)
def test_each_request_extends_the_previous_one(history_steps: tuple[Any, list[Any]]) -> None:
    """After every step the request is valid, cache-friendly and equal to a build from scratch, and the
    requests built before it are unchanged (builds share messages with the cache)."""
    history = History()
    cache = ContextCache()
    previous: dict[str, Any] | None = None
    built: list[tuple[list[dict[str, Any]], str]] = []
    for step in [history_steps[0], *history_steps[1]]:
        history.write(step)
        context = build_context(session=history.session, user_id=history.user_id, cache=cache)
        fresh = build_context(session=history.session, user_id=history.user_id)
        assert context.messages == fresh.messages
        built.append((context.messages, json.dumps(context.messages)))
        assert all(json.dumps(messages) == as_built for messages, as_built in built)
        assert (context.event_count, context.last_sequence) == (fresh.event_count, fresh.last_sequence)
        request = context.to_request(model=MODEL)
        assert context.estimated_tokens == request.estimated_tokens()

        body = build_anthropic_body(request)
        assert marker_positions(body) == [
            (len(body["messages"]) - 1, len(body["messages"][-1]["content"]) - 1)
        ]
        assert_valid_transcript(body["messages"])
        if previous is not None:
            assert_prefix_extension(previous, body)
        previous = body


def test_empty_session_cannot_be_built(db: None) -> None:
    """No context events (only observability ones) → "Cannot build context: no events in session"."""
    session = create_session(user_id=uuid.uuid4())
    with pytest.raises(ContextBuildError, match=EMPTY_CONTEXT_ERROR):
        build_context(session=session, user_id=session.user_id)
    append_event(
        session=session, event_type="llm_request", data={"model": MODEL, "prompt": "", "estimated_tokens": 0}
    )
    with pytest.raises(ContextBuildError, match=EMPTY_CONTEXT_ERROR):
        build_context(session=session, user_id=session.user_id, cache=ContextCache())


def test_pending_knowledge_waits_for_the_tool_result(db: None) -> None:
    """Knowledge recorded while a tool result is pending follows that result in the same user message."""
    history = History()
    history.record("user_message", {"message": "Hi"})
    history.record("tool_call", {"tool_name": "fetch_data", "arguments": {}, "call_id": "toolu_a"})
    history.record("knowledge", {"source": "workout_history", "params": {}, "data": "none"})
    history.record("user_message", {"message": "and also"})
    history.record(
        "tool_result", {"tool_name": "fetch_data", "call_id": "toolu_a", "success": True, "result": "ok"}
    )
    messages = build_context(session=history.session, user_id=history.user_id).messages
    assert [b["type"] for b in messages[2]["content"]] == ["tool_result", "text", "text"]
    assert messages[2]["content"][1]["text"].startswith('<knowledge source="workout_history">')
    assert messages[2]["content"][2]["text"] == "and also"


def test_cache_starts_over_when_a_checkpoint_moves_the_context_start(db: None) -> None:
    """A moved context_start_sequence is honoured by a cached build: earlier events disappear."""
    history = History()
    history.record("user_message", {"message": "old"})
    history.call_and_answer(Call("idle", {}, "ok", True, False))
    cache = ContextCache()
    assert build_context(session=history.session, user_id=history.user_id, cache=cache).event_count == 3
    history.record("checkpoint", {"summary": "They asked for a workout.", "events_summarised": 3})
    update_context_start(session=history.session, sequence=3)
    history.record("user_message", {"message": "new"})

    cached = build_context(session=history.session, user_id=history.user_id, cache=cache)
    fresh = build_context(session=AgentSession.objects.get(pk=history.session.pk), user_id=history.user_id)
    assert cached.messages == fresh.messages
    assert cached.checkpoints == [3] and cached.event_count == 2
    assert [b["text"] for b in cached.messages[0]["content"]] == [
        "<checkpoint>\nThey asked for a workout.\n</checkpoint>",
        "new",
    ]


def test_replayed_tool_calls_have_sorted_keys(db: None) -> None:
    """Tool call arguments come back with sorted keys, so SQLite and PostgreSQL (jsonb) build the same request."""
    history = History()
    history.record("user_message", {"message": "Hi"})
    history.call_and_answer(
        Call(
            "swap_exercise",
            {"reason": "x", "exercise_id": "2", "b": {"z": 1, "a": [{"y": 1, "x": 2}]}},
            "ok",
            True,
            False,
        )
    )
    (use,) = build_context(session=history.session, user_id=history.user_id).messages[1]["content"]
    assert (
        json.dumps(use["input"])
        == '{"b": {"a": [{"x": 2, "y": 1}], "z": 1}, "exercise_id": "2", "reason": "x"}'
    )
