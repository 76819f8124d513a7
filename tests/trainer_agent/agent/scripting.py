"""Scripted Claude turns through the real SDKs: workouts for the demo user, reply steps, body readers.

A step is a function of the request body (the exact JSON the SDK sent) returning a Messages API reply, so a
reply can depend on what the model would have seen, e.g. deliver the artifact id that generate_workout
returned one iteration earlier. ``scripted_claude(*steps)`` turns steps into a ``ScriptedTransport`` that
records every body, and ``claude(transport)`` wires a real ``AnthropicProvider`` to any handler.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import httpx2

from sessions_app.models import AgentSessionEvent
from tests.support.llm_fakes import ScriptedTransport, anthropic_message
from trainer_agent.frames import frame_kind
from trainer_agent.llm.anthropic_provider import AnthropicProvider
from trainer_agent.llm.providers import override_provider

CLAUDE_MODELS = ("claude-haiku-4-5", "claude-sonnet-4-5", "claude-opus-4-5")
ARTIFACT_ID = re.compile(r"\bart_[0-9a-f]{6,}\b")

type Body = dict[str, Any]
type Step = Callable[[Body], Body]
type Arguments = dict[str, Any] | Callable[[Body], dict[str, Any]]


# --- Workouts the demo user can do at Home (dumbbells 5-25 kg, bench, bands; no burpees) -------------------


def _reps(order: int, name: str, muscles: dict[str, float], *, load: float | None, **extra: Any) -> Body:
    exercise: Body = {
        "exercise_name": name,
        "exercise_type": "reps",
        "order": order,
        "sets": 3,
        "reps": [10, 10, 10],
        "rest_sec": 75,
        "muscles_utilized": [{"muscle": muscle, "share": share} for muscle, share in muscles.items()],
        "goals_addressed": [{"goal": "hypertrophy", "share": 0.6}, {"goal": "strength", "share": 0.4}],
        "reasoning": f"{name} fits the equipment at home.",
    }
    if load is not None:
        exercise.update(load_each=[load] * 3, load_unit="kg")
    exercise.update(extra)
    return exercise


def chest_workout() -> Body:
    """A valid three-exercise chest session for the demo user at Home."""
    return {
        "title": "Quick Chest",
        "exercises": [
            _reps(1, "Dumbbell Bench Press", {"Chest": 0.7, "Triceps": 0.2, "Shoulders": 0.1}, load=20),
            _reps(2, "Push-Up", {"Chest": 0.6, "Triceps": 0.3, "Shoulders": 0.1}, load=None),
            _reps(3, "Dumbbell Fly", {"Chest": 0.9, "Shoulders": 0.1}, load=10),
        ],
    }


def leg_workout() -> Body:
    """A valid leg session for the demo user at Home (no squats or lunges: the left knee)."""
    return {
        "title": "Home Legs",
        "exercises": [
            _reps(1, "Single-Leg Glute Bridge", {"Glutes": 0.7, "Hamstrings": 0.3}, load=None),
            _reps(
                2,
                "Dumbbell Romanian Deadlift",
                {"Hamstrings": 0.6, "Glutes": 0.3, "Lower Back": 0.1},
                load=22.5,
            ),
            _reps(3, "Glute Bridge", {"Glutes": 0.8, "Hamstrings": 0.2}, load=None),
        ],
    }


def band_chest_fly() -> Body:
    """A replacement exercise for swap_exercise (resistance bands, which Home has)."""
    exercise = _reps(1, "Band Chest Fly", {"Chest": 0.7, "Shoulders": 0.15, "Biceps": 0.15}, load=None)
    exercise.pop("order")
    return exercise


# --- Reading what the model was sent -------------------------------------------------------------------------


def last_tool_result_text(body: Body) -> str:
    """The text of the newest tool_result in the request (what the model just observed)."""
    for message in reversed(body["messages"]):
        for block in reversed(message["content"] if isinstance(message["content"], list) else []):
            if block.get("type") == "tool_result":
                content = block["content"]
                return content if isinstance(content, str) else json.dumps(content)
    raise AssertionError("the request carries no tool_result")


def newest_artifact_id(body: Body) -> str:
    """The artifact id the newest tool result announced (generate/swap/adjust/remove return one)."""
    found = ARTIFACT_ID.findall(last_tool_result_text(body))
    assert found, f"no artifact id in the last tool result: {last_tool_result_text(body)[:300]}"
    return str(found[0])


def tool_uses(body: Body) -> list[Body]:
    return [
        block
        for message in body["messages"]
        if message["role"] == "assistant"
        for block in message["content"]
        if block.get("type") == "tool_use"
    ]


# --- Steps -----------------------------------------------------------------------------------------------------


def call(name: str, arguments: Arguments | None = None, *, call_id: str | None = None, **usage: Any) -> Step:
    """A reply with one tool call; ``arguments`` may be a function of the request body."""

    def step(body: Body) -> Body:
        args = arguments(body) if callable(arguments) else dict(arguments or {})
        spec: tuple[str, Any] | tuple[str, Any, str] = (
            (name, args) if call_id is None else (name, args, call_id)
        )
        return anthropic_message([spec], model=body["model"], **usage)

    return step


def deliver(message: str = "Here is your workout.", **usage: Any) -> Step:
    """message_notify_user with the artifact id the previous tool returned."""
    return call(
        "message_notify_user",
        lambda body: {"message": message, "artifact_id": newest_artifact_id(body)},
        **usage,
    )


def notify(message: str, **usage: Any) -> Step:
    return call("message_notify_user", {"message": message}, **usage)


def idle(**usage: Any) -> Step:
    return call("idle", {"reason": "done"}, **usage)


def calls(*specs: tuple[str, dict[str, Any]], **usage: Any) -> Step:
    """A reply with several tool_use blocks at once."""
    return lambda body: anthropic_message(list(specs), model=body["model"], **usage)


def text_only(text: str) -> Step:
    return lambda body: anthropic_message([], text=text, model=body["model"])


def as_handler(step: Step) -> Callable[[httpx2.Request], httpx2.Response]:
    return lambda request: httpx2.Response(200, json=step(json.loads(request.content)))


def scripted_claude(*steps: Step | Any) -> ScriptedTransport:
    """A transport answering each request with the next step (other queue entries, e.g. errors, as they are)."""
    return ScriptedTransport(
        *(as_handler(step) if callable(step) and not isinstance(step, type) else step for step in steps)
    )


def chest_turn_with_cache_usage() -> ScriptedTransport:
    """generate → deliver → idle with known usage: input 1000/150/80, cache writes 5000/300/120, cache reads
    0/5000/5300, output 200/50/20 (totals: input 1230, cache writes 5420, cache reads 10300, output 270)."""
    return scripted_claude(
        call(
            "generate_workout",
            {"workout": chest_workout()},
            input_tokens=1000,
            cache_write_tokens=5000,
            cache_read_tokens=0,
            output_tokens=200,
        ),
        deliver(input_tokens=150, cache_write_tokens=300, cache_read_tokens=5000, output_tokens=50),
        idle(input_tokens=80, cache_write_tokens=120, cache_read_tokens=5300, output_tokens=20),
    )


def claude(
    handler: Callable[[httpx2.Request], httpx2.Response], *, max_retries: int = 0
) -> AnthropicProvider:
    """A real AnthropicProvider whose HTTP goes to ``handler``."""
    return AnthropicProvider(
        api_key="test-key",
        http_client=httpx2.Client(transport=httpx2.MockTransport(handler)),
        max_retries=max_retries,
        timeout=5.0,
        base_url="https://api.anthropic.com",
    )


@contextmanager
def serving(
    model: str, handler: Callable[[httpx2.Request], httpx2.Response], **kwargs: Any
) -> Iterator[None]:
    """Serve ``model`` through the real Anthropic SDK talking to ``handler`` inside the block."""
    with override_provider(model, claude(handler, **kwargs)):
        yield


# --- Observing a turn ---------------------------------------------------------------------------------------------


class Frames(list[dict[str, Any]]):
    """A listener that keeps every stream frame; ``kinds`` names them as docs/contracts.md §7.2 (SSE frames) does."""

    def __call__(self, frame: dict[str, Any]) -> None:
        self.append(frame)

    @property
    def kinds(self) -> list[str]:
        return [frame_kind(frame) for frame in self]


def event_types(session_id: Any) -> list[str]:
    return list(
        AgentSessionEvent.objects.filter(session_id=session_id)
        .order_by("sequence_number")
        .values_list("event_type", flat=True)
    )


def events_of(session_id: Any, event_type: str) -> list[Body]:
    return list(
        AgentSessionEvent.objects.filter(session_id=session_id, event_type=event_type)
        .order_by("sequence_number")
        .values_list("data", flat=True)
    )


def trainer_events_of(session_id: Any, event_type: str) -> list[Body]:
    """The trainer's model calls (`llm_request`/`llm_response`), not the initializer's or a sub-agent's."""
    return [data for data in events_of(session_id, event_type) if data.get("purpose", "trainer") == "trainer"]


def trainer_event_types(session_id: Any) -> list[str]:
    """`event_types` without the initializer's and sub-agents' model calls."""
    return [
        event.event_type
        for event in AgentSessionEvent.objects.filter(session_id=session_id).order_by("sequence_number")
        if event.event_type not in ("llm_request", "llm_response")
        or event.data.get("purpose", "trainer") == "trainer"
    ]
