"""The simulated stream of providers that have the whole answer at once: the offline coach and scripted models."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest
from django.test import override_settings

from datasources_app.demo import DEMO_USER_ID
from datasources_app.services import seed_demo_user
from trainer_agent.context import trainer_tool_specs
from trainer_agent.llm.scripted import ScriptedProvider, tool_response
from trainer_agent.llm.simulated_stream import json_pieces, replay_as_stream
from trainer_agent.llm.types import LLMRequest, PartialToolCall, StreamingProvider
from trainer_agent.offline.coach import OfflineCoach


def _request(text: str, *, user_id: str | None = None) -> LLMRequest:
    return LLMRequest(
        model="offline",
        system_prompt="You are a coach.",
        user_data_xml="<user_data></user_data>",
        messages=[{"role": "user", "content": [{"type": "text", "text": text}]}],
        tools=trainer_tool_specs(),
        user_id=user_id,
    )


def _whole_exercises(seen: list[PartialToolCall], final: list[dict[str, Any]]) -> list[int]:
    """For each report, how many of the final exercises it already shows whole, from the first on."""
    counts = []
    for call in seen:
        shown = (call.arguments.get("workout") or {}).get("exercises") or []
        whole = 0
        while whole < min(len(shown), len(final)) and shown[whole] == final[whole]:
            whole += 1
        counts.append(whole)
    return counts


def test_pieces_are_words_of_strings_and_join_back_to_the_json() -> None:
    """Each piece ends with one word of a string value; together they are the whole JSON text."""
    value = {"message": 'Here\'s your "upper body"\nplan', "sets": [3, 2.5, None, True], "empty": {}}
    pieces = json_pieces(value)
    assert "".join(pieces) == json.dumps(value, ensure_ascii=False)
    assert pieces[:4] == ['{"message": "Here\'s ', "your ", '\\"upper ', 'body\\"\\nplan"']


def test_a_message_grows_word_by_word_and_the_response_is_unchanged() -> None:
    """The scripted provider's stream reports the message growing, ends complete, returns complete()'s answer."""
    answer = tool_response(
        "message_notify_user", {"message": "Here is your leg day plan", "artifact_id": "art_1"}
    )
    provider = ScriptedProvider([answer])
    seen: list[PartialToolCall] = []

    assert isinstance(provider, StreamingProvider)
    response = provider.stream(_request("hi"), on_partial=seen.append)

    assert response == ScriptedProvider([answer]).complete(_request("hi"))
    texts = [call.arguments.get("message") for call in seen if "message" in call.arguments]
    assert texts[:5] == ["Here ", "Here is ", "Here is your ", "Here is your leg ", "Here is your leg day "]
    assert seen[-1].complete and seen[-1].arguments == answer.tool_calls[0].arguments
    assert not any(call.complete for call in seen[:-1])
    assert {call.call_id for call in seen} == {answer.tool_calls[0].id}


def test_the_delay_setting_spaces_the_pieces(monkeypatch: pytest.MonkeyPatch) -> None:
    """OFFLINE_STREAM_DELAY_SECONDS is slept between pieces (counted, not timed)."""
    slept: list[float] = []
    monkeypatch.setattr("trainer_agent.llm.simulated_stream.time.sleep", slept.append)
    answer = tool_response("message_notify_user", {"message": "one two three"})
    with override_settings(OFFLINE_STREAM_DELAY_SECONDS=0.05):
        replay_as_stream(answer, lambda call: None)
    assert slept == [0.05] * (len(json_pieces(answer.tool_calls[0].arguments)) - 1)
    assert len(slept) == 3  # '{"message": "one ', 'two ', 'three"', '}'
    slept.clear()
    replay_as_stream(answer, lambda call: None)  # 0 under pytest
    assert slept == []


def _exercise(order: int, name: str) -> dict[str, Any]:
    return {"exercise_name": name, "exercise_type": "reps", "order": order, "sets": 3, "reps": [10, 10, 10]}


def test_a_simulated_workout_streams_exercise_by_exercise() -> None:
    """A whole workout answered at once (a scripted model's generate_workout): the input shows 1, 2, …
    exercises finished, in order, then complete."""
    names = ("Push-Up", "Plank", "Glute Bridge", "Bodyweight Squat")
    workout = {
        "workout": {"title": "Anywhere", "exercises": [_exercise(i, n) for i, n in enumerate(names, 1)]}
    }
    request = _request("Give me a 30 minute workout")
    seen: list[PartialToolCall] = []

    response = ScriptedProvider([tool_response("generate_workout", workout)]).stream(
        request, on_partial=seen.append
    )

    final: list[dict[str, Any]] = response.tool_calls[0].arguments["workout"]["exercises"]
    counts = _whole_exercises(seen, final)
    assert counts == sorted(counts)  # exercises only ever get added
    assert set(range(1, len(final) + 1)) <= set(counts)  # each one became visible whole on its own
    assert counts.index(len(final)) < len(seen) - 1  # the last one before the call's complete report
    assert seen[-1].complete and seen[-1].arguments == response.tool_calls[0].arguments


@pytest.mark.django_db
def test_the_offline_coach_streams_its_message() -> None:
    """A message_notify_user answer grows word by word."""
    seed_demo_user()
    request = _request("hi", user_id=str(DEMO_USER_ID))
    response = OfflineCoach().complete(request)
    call = response.tool_calls[0]
    assert call.name in ("message_notify_user", "message_ask_user")
    key = "message" if call.name == "message_notify_user" else "question"
    seen: list[PartialToolCall] = []

    OfflineCoach().stream(request, on_partial=seen.append)

    texts = [p.arguments[key] for p in seen if key in p.arguments]
    assert len(set(texts)) >= 2
    assert all(later.startswith(earlier) for earlier, later in itertools.pairwise(texts))
    assert texts[-1] == call.arguments[key]
