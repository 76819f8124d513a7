"""The streaming fake model (tests/support/fake_model_server.py): its default script plays a whole workout turn
against this service through the real SDKs, and it records when the model wrote what."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.test import override_settings

from datasources_app.demo import DEMO_USER_ID
from datasources_app.services import seed_demo_user
from tests.support.fake_model_server import HOME_EXERCISES, FakeModelServer, WorkoutTurnScript
from tests.support.live_server import BASE_DIR, free_port
from tests.support.llm_fakes import sample_llm_request
from trainer_agent.llm.anthropic_provider import AnthropicProvider
from trainer_agent.llm.openai_provider import OpenAIProvider
from trainer_agent.llm.providers import override_provider
from trainer_agent.llm.types import LLMRequest, PartialToolCall, ToolSpec
from trainer_agent.turns import run_turn


def _workout_request(model: str = "claude-haiku-4-5") -> LLMRequest:
    request = sample_llm_request(model)
    request.messages = [{"role": "user", "content": "A full-body workout at home, please"}]
    request.tools = [ToolSpec("generate_workout", "Create a workout.", {"type": "object"})]
    return request


@pytest.mark.django_db
@pytest.mark.parametrize("primary", ["claude-haiku-4-5", "gpt-4o-mini"])
def test_the_default_script_plays_a_workout_turn_against_the_service(primary: str) -> None:
    """Initializer, generate_workout (6 valid exercises for the demo user), message_notify_user with the
    artifact, idle: the turn delivers the workout with no tool error."""
    seed_demo_user()
    with FakeModelServer() as fake:
        anthropic = AnthropicProvider(api_key="test", base_url=fake.base_url, max_retries=0, timeout=10)
        openai = OpenAIProvider(api_key="test", base_url=fake.openai_base_url, max_retries=0, timeout=10)
        with (
            override_provider("claude-haiku-4-5", anthropic),
            override_provider("gpt-4o-mini", openai),
            override_settings(INITIALIZER_MODEL="gpt-4o-mini"),
        ):
            result = run_turn(
                user_id=DEMO_USER_ID, message="A full-body workout at home, please", model=primary
            )

    assert [action.tool for action in result.actions] == ["generate_workout", "message_notify_user", "idle"]
    assert all(action.result.get("success") for action in result.actions), [a.result for a in result.actions]
    assert [e["exercise_name"] for e in result.response["exercises"]] == [
        e["exercise_name"] for e in HOME_EXERCISES[:6]
    ]
    assert "Romanian" in result.response["messages"][0]
    initializer, first_trainer_call = fake.calls[0], fake.calls[1]
    assert initializer.structured_schema() is not None
    loaded = json.dumps(first_trainer_call.body["messages"])
    for source in ("category_goals", "muscle_goals", "active_preferences", "workout_history"):
        assert f'source=\\"{source}\\"' in loaded  # the selection was valid and its knowledge appended


@pytest.mark.parametrize("exercises", [1, 6, 10])
def test_the_workout_has_the_number_of_exercises_asked_for(exercises: int) -> None:
    """N exercises, numbered in order."""
    workout = WorkoutTurnScript(exercises=exercises).workout()["workout"]["exercises"]
    assert [e["order"] for e in workout] == list(range(1, exercises + 1))
    with pytest.raises(ValueError):
        WorkoutTurnScript(exercises=11)


def test_the_timeline_marks_first_token_each_exercise_and_the_end_in_order() -> None:
    """request → first_token (not before the configured ttft) → exercise 0…5 → response_end."""
    with FakeModelServer(ttft=0.05, tps=4000) as fake:
        provider = AnthropicProvider(api_key="test", base_url=fake.base_url, max_retries=0, timeout=10)
        seen: list[PartialToolCall] = []
        provider.stream(_workout_request(), on_partial=seen.append)

    events = [mark["event"] for mark in fake.marks]
    assert events == ["request", "first_token", *["exercise_written"] * 6, "response_end"]
    assert [mark["index"] for mark in fake.marks_of("exercise_written")] == list(range(6))
    assert fake.marks_of("exercise_written")[0]["exercise"] == "Dumbbell Bench Press"
    times = [mark["t"] for mark in fake.marks]
    assert times == sorted(times)
    assert times[1] - times[0] >= 0.05
    assert fake.marks[0]["text"] == "A full-body workout at home, please"


@pytest.fixture
def fake_process(tmp_path: Path) -> Iterator[tuple[int, Path]]:
    port, marks = free_port(), tmp_path / "marks.jsonl"
    options = ["--port", str(port), "--ttft", "0.01", "--tps", "0", "--exercises", "3", "--marks", str(marks)]
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.support.fake_model_server", *options],
        cwd=BASE_DIR,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    assert process.stdout.readline().startswith(f"fake model server on http://127.0.0.1:{port}")
    yield port, marks
    process.terminate()
    assert process.wait(timeout=10) == 0


def test_as_a_process_it_writes_the_timeline_as_jsonl(fake_process: tuple[int, Path]) -> None:
    """`python -m tests.support.fake_model_server --marks FILE`: one JSON object per mark, with wall-clock times."""
    port, marks = fake_process
    provider = OpenAIProvider(
        api_key="test", base_url=f"http://127.0.0.1:{port}/v1", max_retries=0, timeout=10
    )
    response = provider.stream(_workout_request("gpt-4o-mini"), on_partial=lambda partial: None)

    assert len(response.tool_calls[0].arguments["workout"]["exercises"]) == 3
    lines = [json.loads(line) for line in marks.read_text().splitlines()]
    assert [line["event"] for line in lines] == [
        "request",
        "first_token",
        *["exercise_written"] * 3,
        "response_end",
    ]
    assert {line["api"] for line in lines} == {"openai"} and all(line["t"] > 1e9 for line in lines)


def test_a_message_marks_when_its_text_was_written() -> None:
    """message_notify_user's text gets a text_written mark before the response ends."""
    request = _workout_request()
    request.tools = [ToolSpec("message_notify_user", "Send a message.", {"type": "object"})]
    with FakeModelServer() as fake:
        AnthropicProvider(api_key="test", base_url=fake.base_url, max_retries=0).stream(
            request, on_partial=lambda partial: None
        )
    assert [mark["event"] for mark in fake.marks] == [
        "request",
        "first_token",
        "text_written",
        "response_end",
    ]
    assert fake.marks_of("text_written")[0]["tool"] == "message_notify_user"
