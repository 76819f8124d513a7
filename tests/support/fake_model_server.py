"""A streaming fake model: a local HTTP server speaking Anthropic's Messages API and OpenAI's chat completions.

Test and benchmark infrastructure (not production code). The service reaches it through the real SDKs with
``ANTHROPIC_BASE_URL=http://127.0.0.1:N`` or ``OPENAI_BASE_URL=http://127.0.0.1:N/v1``:

- ``POST /v1/messages``: with ``"stream": true`` the Messages API's event stream (``event:`` and ``data:``
  lines): ``message_start``, ``ping``, then per content block ``content_block_start``, ``content_block_delta``
  (``text_delta`` / ``input_json_delta``) and ``content_block_stop``, then ``message_delta`` (stop reason,
  usage) and ``message_stop``; otherwise one JSON message.
- ``POST /v1/chat/completions``: with ``"stream": true`` ``chat.completion.chunk`` events (content and
  ``tool_calls[].function.arguments`` pieces), a last chunk holding only ``usage`` when
  ``stream_options.include_usage`` is set, then ``data: [DONE]``; otherwise one ``chat.completion``.

Pacing: the first token is sent ``ttft`` seconds after the request arrived, then output goes out at ``tps``
tokens per second, a token being 4 characters of the text or JSON the model writes (``tps=0``: no limit), in
events of ``chunk_chars`` characters. What is written is decided by a script, a function of the request
(``ModelCall``) returning an ``Answer`` (tool calls and/or text) or a ``Failure`` (an HTTP error before the
stream, or an ``error`` event after some output). The default, ``WorkoutTurnScript``, plays a workout turn
against this service the way a model would (see its docstring).

The server keeps a timeline (``time.time()``): when each request arrived, when its first token was sent, when
the model finished writing each exercise object of a tool input holding a list of exercises, and the text of
``message_notify_user`` / ``message_ask_user``, and when the response ended: ``server.marks`` in-process, one
JSON object per line in ``--marks FILE`` when run as a process::

    python -m tests.support.fake_model_server --port 8911 --ttft 0.6 --tps 150 --marks /tmp/marks.jsonl

This module imports nothing of the project (no Django): it runs beside the service as its own process.
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import IO, Any, Literal

type Api = Literal["anthropic", "openai"]
type JSONPath = tuple[str | int, ...]

CHARS_PER_TOKEN = 4
# Text blocks the service adds to a user message (docs/contracts.md §8.1): not what the person wrote.
INJECTED_PREFIXES = ("<knowledge", "<artifact", "<checkpoint", "<pending_question")
_ARTIFACT_ID = re.compile(r"\bart_[0-9a-zA-Z]+\b")
TEXT_TOOLS = {"message_notify_user": "message", "message_ask_user": "question"}


# --- What the model answers ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ToolUse:
    name: str
    input: dict[str, Any]
    id: str = ""


@dataclass(frozen=True)
class FakeUsage:
    """Token buckets as Anthropic counts them (``input_tokens`` uncached only); None: estimated from sizes."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0


@dataclass(frozen=True)
class Answer:
    """What the model writes: text (first), then tool calls."""

    tool_calls: tuple[ToolUse, ...] = ()
    text: str = ""
    usage: FakeUsage = field(default_factory=FakeUsage)
    message_id: str = ""  # empty: one made from the request number

    @classmethod
    def tool(cls, name: str, arguments: dict[str, Any], **kwargs: Any) -> Answer:
        return cls(tool_calls=(ToolUse(name, arguments),), **kwargs)


@dataclass(frozen=True)
class Failure:
    """An API error: an HTTP error before the stream (``after_chars`` None), or, in a stream, an ``error``
    event once ``after_chars`` characters of the answer were sent (a JSON request gets the HTTP error)."""

    status: int
    error_type: str
    message: str = "fake model error"
    after_chars: int | None = None
    answer: Answer = field(default_factory=Answer)
    headers: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class ModelCall:
    """One request the server received."""

    number: int  # 1-based, in arrival order
    api: Api
    body: dict[str, Any]
    created: int = 0  # the server's start (OpenAI's `created`), the same for every answer

    @property
    def stream(self) -> bool:
        return bool(self.body.get("stream"))

    def prompt(self) -> dict[str, Any]:
        """The body without the transport options (``stream``, ``stream_options``): what the model reads."""
        return {key: value for key, value in self.body.items() if key not in ("stream", "stream_options")}

    @property
    def offered_tools(self) -> list[str]:
        names = []
        for tool in self.body.get("tools") or []:
            names.append(tool.get("name") or (tool.get("function") or {}).get("name"))
        return [name for name in names if name]

    def structured_schema(self) -> tuple[str, dict[str, Any]] | None:
        """(name, schema) when this is a structured-output call: OpenAI ``response_format`` json_schema, or
        Anthropic's one forced tool (``tool_choice`` type ``tool``), as the providers' ``complete_json`` send."""
        if self.api == "openai":
            response_format = self.body.get("response_format") or {}
            if response_format.get("type") == "json_schema":
                spec = response_format.get("json_schema") or {}
                return str(spec.get("name", "")), dict(spec.get("schema") or {})
            return None
        choice = self.body.get("tool_choice") or {}
        if choice.get("type") == "tool":
            for tool in self.body.get("tools") or []:
                if tool.get("name") == choice.get("name"):
                    return str(tool["name"]), dict(tool.get("input_schema") or {})
        return None

    def user_texts(self) -> list[str]:
        """What the person wrote, oldest first (the service's injected blocks left out)."""
        texts = []
        for message in self.body.get("messages") or []:
            if message.get("role") != "user":
                continue
            content = message.get("content")
            blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
            for block in blocks:
                text = str(block.get("text", "")) if block.get("type") == "text" else ""
                if text.strip() and not text.lstrip().startswith(INJECTED_PREFIXES):
                    texts.append(text.strip())
        return texts

    def steps(self) -> list[Step]:
        """The tool calls made since the person's latest message, with their results, in order."""
        calls: list[Step] = []
        results: dict[str, tuple[bool, str]] = {}
        for message in self.body.get("messages") or []:
            role, content = message.get("role"), message.get("content")
            if role == "user" and isinstance(content, str):
                if not content.lstrip().startswith(INJECTED_PREFIXES):
                    calls = []
            elif role == "user":
                for block in content or []:
                    if block.get("type") == "tool_result":
                        text = _text_of(block.get("content"))
                        failed = bool(block.get("is_error")) or text.lstrip().startswith("<tool_error")
                        results[str(block.get("tool_use_id"))] = (not failed, text)
                    elif block.get("type") == "text" and not str(block.get("text", "")).lstrip().startswith(
                        INJECTED_PREFIXES
                    ):
                        calls = []
            elif role == "tool":  # OpenAI
                text = _text_of(content)
                failed = text.lstrip().startswith(("Error", "<tool_error"))
                results[str(message.get("tool_call_id"))] = (not failed, text)
            elif role == "assistant":
                for block in content if isinstance(content, list) else []:
                    if block.get("type") == "tool_use":
                        calls.append(
                            Step(str(block.get("id")), str(block.get("name")), block.get("input") or {})
                        )
                for tool_call in message.get("tool_calls") or []:  # OpenAI
                    function = tool_call.get("function") or {}
                    try:
                        arguments = json.loads(function.get("arguments") or "{}")
                    except json.JSONDecodeError:
                        arguments = {}
                    calls.append(Step(str(tool_call.get("id")), str(function.get("name")), arguments))
        for step in calls:
            step.ok, step.result = results.get(step.call_id, (None, ""))
        return calls

    def request_text(self) -> str:
        """The person's latest message (a structured call: the ``user_message`` of its JSON)."""
        texts = self.user_texts()
        latest = texts[-1] if texts else ""
        if self.structured_schema() is not None:
            try:
                return str(json.loads(latest).get("user_message", latest))
            except (json.JSONDecodeError, AttributeError):
                return latest
        return latest


@dataclass
class Step:
    call_id: str
    name: str
    arguments: dict[str, Any]
    ok: bool | None = None
    result: str = ""


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return json.dumps(content)


type Script = Callable[[ModelCall], Answer | Failure]


class Scripted:
    """Answers requests with the given answers in order (the last one repeats)."""

    def __init__(self, *answers: Answer | Failure) -> None:
        self._answers = list(answers)
        self._lock = threading.Lock()
        self._next = 0

    def __call__(self, call: ModelCall) -> Answer | Failure:
        with self._lock:
            answer = self._answers[min(self._next, len(self._answers) - 1)]
            self._next += 1
        return answer


# --- The default script: a workout turn against this service ---------------------------------------------------------
def _exercise(
    name: str,
    muscles: dict[str, float],
    goals: dict[str, float],
    equipment: list[str],
    *,
    sets: int,
    reps: int,
    load: float | None,
    rest: int,
    reasoning: str,
    notes: str,
) -> dict[str, Any]:
    exercise: dict[str, Any] = {
        "exercise_name": name,
        "exercise_type": "reps",
        "muscles_utilized": [{"muscle": muscle, "share": share} for muscle, share in muscles.items()],
        "goals_addressed": [{"goal": goal, "share": share} for goal, share in goals.items()],
        "reasoning": reasoning,
        "equipment": equipment,
        "sets": sets,
        "reps": [reps] * sets,
        "rest_sec": rest,
        "notes": notes,
    }
    if load is not None:
        exercise |= {"load_each": [load] * sets, "load_unit": "kg"}
    return exercise


# Ten exercises the demo user (`manage.py seed_demo`: at Home with a bench, dumbbells of 5-25 kg and bands, a knee
# that dislikes deep lunges, no burpees) can do; a workout takes the first N. Catalogue names, valid shares.
HOME_EXERCISES: tuple[dict[str, Any], ...] = (
    _exercise(
        "Dumbbell Bench Press",
        {"Chest": 0.7, "Shoulders": 0.15, "Triceps": 0.15},
        {"strength": 0.6, "hypertrophy": 0.4},
        ["bench", "dumbbells"],
        sets=3,
        reps=10,
        load=20,
        rest=90,
        reasoning="Main press first while you are fresh: chest is one of your priority muscles this week.",
        notes="Feet flat, shoulder blades pinched together; lower for two seconds and press up and slightly in.",
    ),
    _exercise(
        "Bent-Over Dumbbell Row",
        {"Back": 0.7, "Shoulders": 0.15, "Biceps": 0.15},
        {"strength": 0.6, "hypertrophy": 0.4},
        ["dumbbells"],
        sets=3,
        reps=10,
        load=20,
        rest=90,
        reasoning="Balances the pressing with a heavy pull; back has the largest share of your muscle goals.",
        notes="Hinge until your torso is almost parallel to the floor, brace, and pull the elbows towards your hips.",
    ),
    _exercise(
        "Dumbbell Romanian Deadlift",
        {"Hamstrings": 0.7, "Lower Back": 0.15, "Glutes": 0.15},
        {"strength": 0.7, "hypertrophy": 0.3},
        ["dumbbells"],
        sets=3,
        reps=10,
        load=22.5,
        rest=90,
        reasoning="A hip hinge trains hamstrings and glutes hard without deep knee bending, so it suits your knee.",
        notes="Soft knees, push the hips back and keep the dumbbells close to your legs; stop when the back wants to round.",
    ),
    _exercise(
        "Dumbbell Shoulder Press",
        {"Shoulders": 0.7, "Triceps": 0.3},
        {"hypertrophy": 0.6, "strength": 0.4},
        ["dumbbells"],
        sets=3,
        reps=10,
        load=12.5,
        rest=75,
        reasoning="Overhead work for the shoulders, seated on the bench to keep the lower back out of it.",
        notes="Ribs down and glutes tight; press straight up without arching and lower to ear height under control.",
    ),
    _exercise(
        "Glute Bridge",
        {"Glutes": 0.7, "Hamstrings": 0.3},
        {"endurance": 0.5, "hypertrophy": 0.5},
        [],
        sets=3,
        reps=15,
        load=None,
        rest=45,
        reasoning="Knee-friendly glute work with a long squeeze at the top of every rep to finish the legs.",
        notes="Heels close to the hips, push through the heels and hold the top for two seconds without arching the back.",
    ),
    _exercise(
        "Hammer Curl",
        {"Biceps": 1.0},
        {"hypertrophy": 1.0},
        ["dumbbells"],
        sets=3,
        reps=12,
        load=12.5,
        rest=60,
        reasoning="Arm work to finish the pulling; the neutral grip is easy on the elbows and wrists.",
        notes="Elbows pinned to your sides, palms facing each other; no swinging, lower slowly for three seconds.",
    ),
    _exercise(
        "Dumbbell Lateral Raise",
        {"Shoulders": 1.0},
        {"hypertrophy": 1.0},
        ["dumbbells"],
        sets=3,
        reps=12,
        load=7.5,
        rest=60,
        reasoning="Light raises for the side of the shoulders; stop each set two reps short of failure.",
        notes="Lead with the elbows, raise to shoulder height with a slight bend in the arms, and pause at the top.",
    ),
    _exercise(
        "Dumbbell Triceps Kickback",
        {"Triceps": 1.0},
        {"hypertrophy": 1.0},
        ["dumbbells"],
        sets=3,
        reps=12,
        load=7.5,
        rest=60,
        reasoning="Isolation for the triceps after the presses, with a pause at full extension.",
        notes="Hinge forward with the upper arm parallel to the floor; only the forearm moves, squeeze at lockout.",
    ),
    _exercise(
        "Dead Bug",
        {"Abs": 1.0},
        {"endurance": 0.6, "mobility": 0.4},
        [],
        sets=3,
        reps=10,
        load=None,
        rest=45,
        reasoning="Core stability with the lower back pressed into the floor; slow and controlled.",
        notes="Press the lower back into the floor and breathe out as the opposite arm and leg reach away from each other.",
    ),
    _exercise(
        "Dumbbell Calf Raise",
        {"Calves": 1.0},
        {"endurance": 0.5, "hypertrophy": 0.5},
        ["dumbbells"],
        sets=3,
        reps=15,
        load=20,
        rest=45,
        reasoning="Calves finish the session; a full stretch at the bottom of every rep.",
        notes="Stand on a step if you have one; rise onto the balls of the feet, pause, then lower into a full stretch.",
    ),
)
# Sources a workout needs (the initializer's rules in trainer_agent/initializer.py), with their days_back.
WORKOUT_SOURCES: dict[str, int | None] = {
    "category_goals": None,
    "muscle_goals": None,
    "active_preferences": None,
    "workout_history": 14,
}


class WorkoutTurnScript:
    """Plays a workout turn the way a model does, deciding from the conversation (the tool results so far):

    1. the initializer's structured call (``knowledge_selection``): the sources a workout needs that are not
       loaded yet, valid for the schema the request carries;
    2. the person's message → ``generate_workout`` with ``exercises`` exercises (default 6, at most 10) valid for
       the demo user at Home;
    3. after the workout was created → ``message_notify_user`` delivering it (``artifact_id`` from the tool's
       result, as its contract requires), naming the exercises; after a failure, a short apology instead;
    4. after the message → ``idle``.
    """

    def __init__(self, exercises: int = 6, *, draft: bool = False) -> None:
        if not 1 <= exercises <= len(HOME_EXERCISES):
            raise ValueError(f"exercises must be from 1 to {len(HOME_EXERCISES)}")
        self.exercises = exercises
        # draft: ask `draft_workout` for the workout with a brief instead of writing it out (when offered).
        self.draft = draft

    def __call__(self, call: ModelCall) -> Answer:
        structured = call.structured_schema()
        if structured is not None:
            name, schema = structured
            selection = self.knowledge_selection(call, schema)
            if call.api == "openai":
                return Answer(text=json.dumps(selection))
            return Answer.tool(name, selection)
        steps = [step for step in call.steps() if step.ok is not None]
        offered = set(call.offered_tools)
        last = steps[-1] if steps else None
        if last is None and self.draft and "draft_workout" in offered:
            return Answer.tool("draft_workout", self.brief())
        if last is None and "generate_workout" in offered:
            return Answer.tool("generate_workout", self.workout())
        if last is not None and last.name in ("generate_workout", "draft_workout"):
            found = _ARTIFACT_ID.search(last.result)
            if last.ok and found:
                names = [
                    e.get("exercise_name", "") for e in last.arguments.get("workout", {}).get("exercises", [])
                ]
                return Answer.tool(
                    "message_notify_user", {"message": self.delivery(names), "artifact_id": found.group(0)}
                )
            return Answer.tool(
                "message_notify_user",
                {"message": "Sorry, I could not put that workout together just now. Please ask me again."},
            )
        if last is None:
            return Answer.tool("message_notify_user", {"message": "What would you like to train today?"})
        return Answer.tool("idle", {"reason": "Workout delivered."})

    def workout(self) -> dict[str, Any]:
        exercises = [
            dict(exercise, order=order) for order, exercise in enumerate(HOME_EXERCISES[: self.exercises], 1)
        ]
        return {"workout": {"title": "Full Body Dumbbells at Home", "exercises": exercises}}

    @staticmethod
    def brief() -> dict[str, Any]:
        """The brief a model writes for `draft_workout` (~15 output tokens instead of the whole workout)."""
        return {"focus": ["full body"], "minutes": 35}

    @staticmethod
    def delivery(names: Sequence[str]) -> str:
        listed = ", ".join(names[:-1]) + f" and {names[-1]}" if len(names) > 1 else "".join(names)
        return (
            f"Here's your full-body session for today at home{': ' + listed if listed else ''}. Warm up for five minutes first, keep "
            "two reps in reserve on every set, and rest as long as each card says. The Romanian deadlift and "
            "the bridges keep your knee out of deep bends. Tell me how it felt when you're done and I'll "
            "adjust the loads for next time."
        )

    @staticmethod
    def knowledge_selection(call: ModelCall, schema: dict[str, Any]) -> dict[str, Any]:
        item = ((schema.get("properties") or {}).get("append_knowledge") or {}).get("items") or {}
        allowed = ((item.get("properties") or {}).get("source") or {}).get("enum")
        try:
            loaded = json.loads(call.user_texts()[-1]).get("loaded_sources") or []
        except (IndexError, json.JSONDecodeError, AttributeError):
            loaded = []
        loaded_names = {str(source.get("source")) for source in loaded if isinstance(source, dict)}
        append = [
            {"source": source, "reason": "not_in_context", "days_back": days}
            for source, days in WORKOUT_SOURCES.items()
            if source not in loaded_names and (allowed is None or source in allowed)
        ]
        return {
            "reasoning": "A workout request: goals, preferences and the last two weeks of training.",
            "append_knowledge": append,
            "use_existing": sorted(loaded_names & set(WORKOUT_SOURCES)),
        }


# --- JSON text with the spans of its parts ---------------------------------------------------------------------------
def encode_with_spans(value: Any) -> tuple[str, dict[JSONPath, tuple[int, int]]]:
    """``json.dumps(value, ensure_ascii=False)`` and the (start, end) character offsets of every value in it."""
    parts: list[str] = []
    spans: dict[JSONPath, tuple[int, int]] = {}
    length = 0

    def write(text: str) -> None:
        nonlocal length
        parts.append(text)
        length += len(text)

    def encode(item: Any, path: JSONPath) -> None:
        start = length
        if isinstance(item, dict):
            write("{")
            for position, (key, child) in enumerate(item.items()):
                write(("" if position == 0 else ", ") + json.dumps(str(key), ensure_ascii=False) + ": ")
                encode(child, (*path, str(key)))
            write("}")
        elif isinstance(item, list | tuple):
            write("[")
            for position, child in enumerate(item):
                if position:
                    write(", ")
                encode(child, (*path, position))
            write("]")
        else:
            write(json.dumps(item, ensure_ascii=False))
        spans[path] = (start, length)

    encode(value, ())
    return "".join(parts), spans


def _milestones(tool: ToolUse) -> list[tuple[int, dict[str, Any]]]:
    """(end offset in the input's JSON, mark) for each exercise of an exercise list and for a message text."""
    _, spans = encode_with_spans(tool.input)
    found: list[tuple[int, dict[str, Any]]] = []
    for list_path in (("workout", "exercises"), ("exercises",)):
        exercises = _at(tool.input, list_path)
        if isinstance(exercises, list):
            for index, exercise in enumerate(exercises):
                name = exercise.get("exercise_name") if isinstance(exercise, dict) else None
                end = spans[(*list_path, index)][1]
                found.append((end, {"event": "exercise_written", "index": index, "exercise": name}))
            break
    key = TEXT_TOOLS.get(tool.name)
    if key and isinstance(tool.input.get(key), str):
        found.append((spans[(key,)][1], {"event": "text_written", "chars": len(tool.input[key])}))
    return sorted(found, key=lambda pair: pair[0])


def _at(value: Any, path: JSONPath) -> Any:
    for key in path:
        if not isinstance(value, dict):
            return None
        value = value.get(str(key))
    return value


# --- The wire ---------------------------------------------------------------------------------------------------------
def _usage_numbers(call: ModelCall, answer: Answer) -> FakeUsage:
    output = len(answer.text) + sum(len(json.dumps(t.input)) + len(t.name) for t in answer.tool_calls)
    return FakeUsage(
        input_tokens=(
            answer.usage.input_tokens
            if answer.usage.input_tokens is not None
            else max(1, len(json.dumps(call.prompt())) // CHARS_PER_TOKEN)
        ),
        output_tokens=(
            answer.usage.output_tokens
            if answer.usage.output_tokens is not None
            else max(1, output // CHARS_PER_TOKEN)
        ),
        cache_read_tokens=answer.usage.cache_read_tokens,
        cache_write_tokens=answer.usage.cache_write_tokens,
    )


def _with_ids(call: ModelCall, answer: Answer) -> Answer:
    prefix = "toolu_fake_" if call.api == "anthropic" else "call_fake_"
    calls = tuple(
        tool if tool.id else ToolUse(tool.name, tool.input, f"{prefix}{call.number:05d}_{position}")
        for position, tool in enumerate(answer.tool_calls)
    )
    message_id = answer.message_id or (
        f"msg_fake_{call.number:05d}" if call.api == "anthropic" else f"chatcmpl-fake-{call.number:05d}"
    )
    return Answer(tool_calls=calls, text=answer.text, usage=answer.usage, message_id=message_id)


def anthropic_message(call: ModelCall, answer: Answer) -> dict[str, Any]:
    """The non-streamed Messages API response for ``answer``."""
    usage = _usage_numbers(call, answer)
    content: list[dict[str, Any]] = [{"type": "text", "text": answer.text}] if answer.text else []
    content += [{"type": "tool_use", "id": t.id, "name": t.name, "input": t.input} for t in answer.tool_calls]
    return {
        "id": answer.message_id,
        "type": "message",
        "role": "assistant",
        "model": call.body.get("model", "claude-haiku-4-5"),
        "content": content,
        "stop_reason": "tool_use" if answer.tool_calls else "end_turn",
        "stop_sequence": None,
        "stop_details": None,
        "usage": _anthropic_usage(usage),
    }


def _anthropic_usage(usage: FakeUsage, *, output_tokens: int | None = None) -> dict[str, Any]:
    return {
        "input_tokens": usage.input_tokens,
        "cache_creation_input_tokens": usage.cache_write_tokens,
        "cache_read_input_tokens": usage.cache_read_tokens,
        "output_tokens": usage.output_tokens if output_tokens is None else output_tokens,
    }


def openai_completion(call: ModelCall, answer: Answer) -> dict[str, Any]:
    """The non-streamed chat completion for ``answer`` (its ``usage.prompt_tokens`` include cached tokens)."""
    message: dict[str, Any] = {"role": "assistant", "content": answer.text or None, "refusal": None}
    if answer.tool_calls:
        message["tool_calls"] = [
            {
                "id": t.id,
                "type": "function",
                "function": {"name": t.name, "arguments": encode_with_spans(t.input)[0]},
            }
            for t in answer.tool_calls
        ]
    return {
        "id": answer.message_id,
        "object": "chat.completion",
        "created": call.created,
        "model": call.body.get("model", "gpt-4o-mini"),
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if answer.tool_calls else "stop",
                "logprobs": None,
            }
        ],
        "usage": _openai_usage(_usage_numbers(call, answer)),
    }


def _openai_usage(usage: FakeUsage) -> dict[str, Any]:
    prompt = (usage.input_tokens or 0) + usage.cache_read_tokens + usage.cache_write_tokens
    return {
        "prompt_tokens": prompt,
        "completion_tokens": usage.output_tokens,
        "total_tokens": prompt + (usage.output_tokens or 0),
        "prompt_tokens_details": {"cached_tokens": usage.cache_read_tokens},
    }


def error_body(api: Api, failure: Failure) -> dict[str, Any]:
    if api == "anthropic":
        return {"type": "error", "error": {"type": failure.error_type, "message": failure.message}}
    return {"error": {"message": failure.message, "type": failure.error_type, "param": None, "code": None}}


@dataclass
class _Piece:
    """Part of a streamed response: ``text`` the model writes, paced and sent in slices through ``render``;
    with no text, one fixed event (a content block's start or stop)."""

    text: str
    render: Callable[[str], bytes]
    milestones: list[tuple[int, dict[str, Any]]] = field(default_factory=list)


def _fixed(event: bytes) -> _Piece:
    return _Piece("", lambda _: event)


def sse(data: Any, event: str | None = None) -> bytes:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(data)}\n\n".encode()


def anthropic_events(call: ModelCall, answer: Answer) -> tuple[bytes, list[_Piece], bytes]:
    """The Messages API stream for ``answer``: its opening events, its pieces, its closing events."""
    message = anthropic_message(call, answer)
    usage = _usage_numbers(call, answer)
    opening_message = dict(message, content=[], stop_reason=None, stop_details=None)
    opening_message["usage"] = _anthropic_usage(usage, output_tokens=1)
    opening = sse({"type": "message_start", "message": opening_message}, "message_start")
    opening += sse({"type": "ping"}, "ping")

    def delta(index: int, kind: str, key: str) -> Callable[[str], bytes]:
        def render(text: str) -> bytes:
            event = {"type": "content_block_delta", "index": index, "delta": {"type": kind, key: text}}
            return sse(event, "content_block_delta")

        return render

    pieces: list[_Piece] = []
    for index, block in enumerate(message["content"]):
        if block["type"] == "text":
            start_block: dict[str, Any] = {"type": "text", "text": ""}
            written = _Piece(block["text"], delta(index, "text_delta", "text"))
        else:
            tool = ToolUse(block["name"], block["input"], block["id"])
            start_block = {"type": "tool_use", "id": tool.id, "name": tool.name, "input": {}}
            written = _Piece(
                encode_with_spans(tool.input)[0],
                delta(index, "input_json_delta", "partial_json"),
                _tagged(_milestones(tool), tool.name),
            )
        start = {"type": "content_block_start", "index": index, "content_block": start_block}
        pieces.append(_fixed(sse(start, "content_block_start")))
        pieces.append(written)
        pieces.append(_fixed(sse({"type": "content_block_stop", "index": index}, "content_block_stop")))
    stop = {"stop_reason": message["stop_reason"], "stop_sequence": None, "stop_details": None}
    closing = sse({"type": "message_delta", "delta": stop, "usage": message["usage"]}, "message_delta")
    closing += sse({"type": "message_stop"}, "message_stop")
    return opening, pieces, closing


def _tagged(milestones: list[tuple[int, dict[str, Any]]], tool: str) -> list[tuple[int, dict[str, Any]]]:
    return [(offset, {**mark, "tool": tool}) for offset, mark in milestones]


def openai_events(call: ModelCall, answer: Answer) -> tuple[bytes, list[_Piece], bytes]:
    """The chat-completions stream for ``answer`` (``data:`` lines only, no event names)."""
    completion = openai_completion(call, answer)
    include_usage = bool((call.body.get("stream_options") or {}).get("include_usage"))
    base = {k: completion[k] for k in ("id", "created", "model")} | {"object": "chat.completion.chunk"}

    def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}
        data = dict(base, choices=[choice])
        if include_usage:
            data["usage"] = None
        return sse(data)

    def arguments(position: int) -> Callable[[str], bytes]:
        return lambda text: chunk({"tool_calls": [{"index": position, "function": {"arguments": text}}]})

    opening = chunk({"role": "assistant", "content": "" if answer.text else None, "refusal": None})
    pieces: list[_Piece] = []
    if answer.text:
        pieces.append(_Piece(answer.text, lambda text: chunk({"content": text})))
    for position, tool in enumerate(answer.tool_calls):
        function = {"name": tool.name, "arguments": ""}
        head = {"index": position, "id": tool.id, "type": "function", "function": function}
        pieces.append(_fixed(chunk({"tool_calls": [head]})))
        json_text = encode_with_spans(tool.input)[0]
        pieces.append(_Piece(json_text, arguments(position), _tagged(_milestones(tool), tool.name)))
    closing = chunk({}, completion["choices"][0]["finish_reason"])
    if include_usage:
        closing += sse(dict(base, choices=[], usage=completion["usage"]))
    closing += b"data: [DONE]\n\n"
    return opening, pieces, closing


# --- The server -------------------------------------------------------------------------------------------------------
class FakeModelServer:
    """The fake model on 127.0.0.1 in threads of this process; ``start()``/``stop()`` or a ``with`` block."""

    def __init__(
        self,
        script: Script | None = None,
        *,
        ttft: float = 0.0,
        tps: float = 0.0,
        chunk_chars: int = 12,
        host: str = "127.0.0.1",
        port: int = 0,
        marks_file: IO[str] | None = None,
    ) -> None:
        self.script: Script = script or WorkoutTurnScript()
        self.ttft = ttft
        self.tps = tps
        self.chunk_chars = max(1, chunk_chars)
        self.calls: list[ModelCall] = []
        self.created = int(time.time())
        self.marks: list[dict[str, Any]] = []
        self._marks_file = marks_file
        self._lock = threading.Lock()
        self._numbers = itertools.count(1)
        self._server = _Server((host, port), _handler(self))
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        """For ``ANTHROPIC_BASE_URL`` (the SDK adds ``/v1/messages``)."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def openai_base_url(self) -> str:
        """For ``OPENAI_BASE_URL`` (the SDK adds ``/chat/completions``)."""
        return f"{self.base_url}/v1"

    def start(self) -> FakeModelServer:
        self._thread = threading.Thread(target=self.serve_forever, name="fake-model", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join()

    def serve_forever(self) -> None:
        self._server.serve_forever(poll_interval=0.05)

    def __enter__(self) -> FakeModelServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def marks_of(self, event: str) -> list[dict[str, Any]]:
        with self._lock:
            return [mark for mark in self.marks if mark["event"] == event]

    def mark(self, call: ModelCall, event: str, *, at: float | None = None, **fields: Any) -> None:
        """A point of the timeline, at `time.time()` now (or at `at`, a `time.time()` taken earlier)."""
        record = {
            "t": time.time() if at is None else at,
            "event": event,
            "request": call.number,
            "api": call.api,
            **fields,
        }
        with self._lock:
            self.marks.append(record)
            if self._marks_file is not None:
                self._marks_file.write(json.dumps(record) + "\n")
                self._marks_file.flush()

    def receive(self, api: Api, body: dict[str, Any], *, arrived: float | None = None) -> ModelCall:
        """Record a call; its "request" mark is when it `arrived` (before its body was read and parsed, the
        moment the first token's delay counts from), else now."""
        with self._lock:
            call = ModelCall(next(self._numbers), api, body, self.created)
            self.calls.append(call)
        self.mark(call, "request", at=arrived, stream=call.stream, text=call.request_text()[:200])
        return call


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024  # a burst of concurrent turns must not wait for SYN retries


def _handler(fake: FakeModelServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def setup(self) -> None:
            super().setup()
            # Events are small writes: without this, Nagle's algorithm holds them back for the client's ACK.
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            received, arrived = time.monotonic(), time.time()
            raw = self.rfile.read(int(self.headers.get("content-length") or 0))
            path = self.path.split("?")[0].rstrip("/")
            api: Api | None = (
                "anthropic"
                if path.endswith("/v1/messages")
                else "openai"
                if path.endswith("/chat/completions")
                else None
            )
            if api is None:
                self._json(404, {"error": {"type": "not_found_error", "message": f"no route {self.path}"}})
                return
            try:
                body = json.loads(raw or b"{}")
            except json.JSONDecodeError:
                self._json(400, error_body(api, Failure(400, "invalid_request_error", "body is not JSON")))
                return
            call = fake.receive(api, body, arrived=arrived)
            scripted = fake.script(call)
            failure = scripted if isinstance(scripted, Failure) else None
            if failure is not None and (failure.after_chars is None or not call.stream):
                self._sleep_until(received + fake.ttft)
                self._json(failure.status, error_body(api, failure), headers=failure.headers)
                fake.mark(call, "response_end", status=failure.status)
                return
            answer = _with_ids(call, scripted if isinstance(scripted, Answer) else scripted.answer)
            try:
                self._play(call, answer, failure, received)
            except (BrokenPipeError, ConnectionResetError):
                fake.mark(call, "client_gone")

        def _play(self, call: ModelCall, answer: Answer, failure: Failure | None, received: float) -> None:
            """Write ``answer`` at the server's pace: as events when streaming, else whole at the end (the
            timeline is the same either way: the model writes at the same speed)."""
            opening, pieces, closing = (anthropic_events if call.api == "anthropic" else openai_events)(
                call, answer
            )
            self._sleep_until(received + fake.ttft)
            if call.stream:
                self.send_response(200)
                self.send_header("content-type", "text/event-stream; charset=utf-8")
                self.send_header("cache-control", "no-cache")
                self.send_header("transfer-encoding", "chunked")
                self.end_headers()
                self._chunk(opening)
            started = time.monotonic()
            written = 0
            for piece in pieces:
                for start, end in _slices(len(piece.text), fake.chunk_chars):
                    if (
                        failure is not None
                        and end > start
                        and written + (end - start) > (failure.after_chars or 0)
                    ):
                        self._chunk(self._error_event(call.api, failure))
                        self._chunk(b"")
                        fake.mark(call, "response_end", status=failure.status)
                        return
                    self._sleep_until(started + written / _chars_per_second(fake))
                    if call.stream:
                        self._chunk(piece.render(piece.text[start:end]))
                    if written == 0 and end > start:
                        fake.mark(
                            call, "first_token", tool=answer.tool_calls[0].name if answer.tool_calls else None
                        )
                    written += end - start
                    for offset, mark in piece.milestones:
                        if start < offset <= end:
                            fake.mark(call, **mark)
            if call.stream:
                self._chunk(closing)
                self._chunk(b"")
            else:
                payload = (
                    anthropic_message(call, answer)
                    if call.api == "anthropic"
                    else openai_completion(call, answer)
                )
                self._json(200, payload)
            fake.mark(call, "response_end", status=200)

        @staticmethod
        def _error_event(api: Api, failure: Failure) -> bytes:
            if api == "anthropic":
                return sse(error_body(api, failure), "error")
            return sse(error_body(api, failure))

        def _chunk(self, data: bytes) -> None:
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")

        def _json(self, status: int, payload: Any, headers: Sequence[tuple[str, str]] = ()) -> None:
            encoded = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(encoded)))
            for name, value in headers:
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(encoded)

        @staticmethod
        def _sleep_until(deadline: float) -> None:
            delay = deadline - time.monotonic()
            if delay > 0:
                time.sleep(delay)

    return Handler


def _chars_per_second(fake: FakeModelServer) -> float:
    return fake.tps * CHARS_PER_TOKEN if fake.tps > 0 else float("inf")


def _slices(length: int, size: int) -> Iterator[tuple[int, int]]:
    """(start, end) of each event's slice of a piece's text; a piece with no text is one empty slice."""
    if length == 0:
        yield 0, 0
    for start in range(0, length, size):
        yield start, min(start + size, length)


# --- As a process -----------------------------------------------------------------------------------------------------
def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m tests.support.fake_model_server",
        description="A streaming fake model (Anthropic Messages and OpenAI chat completions) playing a workout turn.",
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0: any free port (printed)")
    parser.add_argument("--ttft", type=float, default=0.0, help="seconds to the first token")
    parser.add_argument(
        "--tps", type=float, default=0.0, help="output tokens per second (4 chars each); 0: no limit"
    )
    parser.add_argument("--chunk-chars", type=int, default=12, help="characters of output per streamed event")
    parser.add_argument("--exercises", type=int, default=6, help="exercises of the generated workout (1-10)")
    parser.add_argument("--marks", type=Path, help="append the timeline here, one JSON object per line")
    args = parser.parse_args(argv)
    marks_file = args.marks.open("a", encoding="utf-8") if args.marks else None
    server = FakeModelServer(
        WorkoutTurnScript(args.exercises),
        ttft=args.ttft,
        tps=args.tps,
        chunk_chars=args.chunk_chars,
        host=args.host,
        port=args.port,
        marks_file=marks_file,
    )

    def stop(signum: int, frame: object) -> None:
        threading.Thread(target=server._server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    print(
        f"fake model server on {server.base_url} (ttft {args.ttft}s, {args.tps or 'unlimited'} tok/s)",
        flush=True,
    )
    try:
        server.serve_forever()
    finally:
        server._server.server_close()
        if marks_file is not None:
            marks_file.close()


if __name__ == "__main__":
    main(sys.argv[1:])
