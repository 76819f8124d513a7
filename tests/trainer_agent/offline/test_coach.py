"""The offline coach at the provider boundary: one LLMRequest in, one LLMResponse out."""

from __future__ import annotations

from typing import Any

import pytest

from tests.trainer_agent.offline.conftest import DemoUser
from trainer_agent.context import trainer_tool_specs
from trainer_agent.llm.providers import get_provider
from trainer_agent.llm.types import LLMRequest, ToolSpec, total_characters
from trainer_agent.offline.coach import OfflineCoach
from trainer_agent.offline.reading import read_transcript


def _request(
    messages: list[dict[str, Any]], *, user: DemoUser | None, tools: list[ToolSpec] | None = None
) -> LLMRequest:
    return LLMRequest(
        model="offline",
        system_prompt="You are a coach.",
        user_data_xml="<user_data></user_data>",
        messages=messages,
        tools=trainer_tool_specs() if tools is None else tools,
        user_id=str(user.user_id) if user else None,
    )


def _user(*texts: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text} for text in texts]}


def _call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": [{"type": "tool_use", "id": call_id, "name": name, "input": arguments}],
    }


def _result(call_id: str, name: str, text: str, *, error: bool = False) -> dict[str, Any]:
    tag = "tool_error" if error else "tool_result"
    block: dict[str, Any] = {
        "type": "tool_result",
        "tool_use_id": call_id,
        "content": f'<{tag} name="{name}">\n{text}\n</{tag}>',
    }
    if error:
        block["is_error"] = True
    return {"role": "user", "content": [block]}


@pytest.mark.django_db
def test_response_is_one_forced_tool_call_with_honest_usage(demo: DemoUser) -> None:
    """One tool_use, a deterministic id, stop_reason tool_use, chars/4 token estimates and the decision in raw."""
    request = _request([_user("Give me a quick chest workout")], user=demo)
    response = OfflineCoach().complete(request)

    assert len(response.tool_calls) == 1
    call = response.tool_calls[0]
    assert call.name == "draft_workout"
    assert call.arguments["focus"] == ["chest"] and call.arguments["minutes"] <= 30  # "quick chest"
    assert call.id.startswith("toolu_offline_1_")
    assert response.stop_reason == "tool_use"
    assert response.model == "offline"
    assert response.usage.input_tokens == total_characters(request) // 4
    assert response.usage.output_tokens > 0
    assert response.raw["offline_coach"]["intent"] == "workout"
    assert response.raw["content"][0]["input"] == call.arguments
    assert OfflineCoach().complete(request) == response  # same request, same response


@pytest.mark.django_db
def test_injected_blocks_are_not_mistaken_for_the_user(demo: DemoUser) -> None:
    """Knowledge and artifact blocks merged into the user message do not change what was asked."""
    request = _request(
        [_user("quick chest workout", '<knowledge source="workout_history">\nhelp\n</knowledge>')], user=demo
    )
    transcript = read_transcript(request.messages)
    assert transcript.user_text == "quick chest workout"
    assert OfflineCoach().complete(request).tool_calls[0].name == "draft_workout"


def test_a_failed_draft_is_retried_once_bodyweight_only() -> None:
    """After a draft_workout error the coach reads it and asks for a bodyweight-only draft."""
    failed = "The workout was not created. Fix every problem below and call generate_workout again:\n- exercise 2 'X': needs barbell"
    messages = [
        _user("quick chest workout"),
        _call("toolu_a", "draft_workout", {"focus": ["chest"]}),
        _result("toolu_a", "draft_workout", failed, error=True),
    ]
    response = OfflineCoach().complete(_request(messages, user=None))
    call = response.tool_calls[0]
    assert call.name == "draft_workout"
    assert call.arguments["bodyweight_only"] is True and call.arguments["focus"] == ["chest"]
    assert "retrying bodyweight-only" in response.raw["offline_coach"]["reasoning"]


@pytest.mark.django_db
def test_two_failures_of_one_tool_end_with_an_apology_not_a_loop(demo: DemoUser) -> None:
    """The same tool failing twice in a turn: tell the user what went wrong instead of trying again."""
    problem = "The workout was not created:\n- exercise 1 'X': needs barbell"
    messages = [
        _user("quick chest workout"),
        _call("toolu_a", "generate_workout", {"workout": {}}),
        _result("toolu_a", "generate_workout", problem, error=True),
        _call("toolu_b", "generate_workout", {"workout": {}}),
        _result("toolu_b", "generate_workout", problem, error=True),
    ]
    call = OfflineCoach().complete(_request(messages, user=demo)).tool_calls[0]
    assert call.name == "message_notify_user"
    assert "needs barbell" in call.arguments["message"]


@pytest.mark.django_db
def test_after_delivering_the_coach_goes_idle(demo: DemoUser) -> None:
    """A successful message_notify_user in this turn is followed by idle."""
    messages = [
        _user("hi"),
        _call("toolu_a", "message_notify_user", {"message": "Hi!"}),
        _result("toolu_a", "message_notify_user", "ok"),
    ]
    assert OfflineCoach().complete(_request(messages, user=demo)).tool_calls[0].name == "idle"


@pytest.mark.django_db
def test_only_offered_tools_are_called(demo: DemoUser) -> None:
    """Without draft_workout the user is told it is not available here; with no tools at all, no call."""
    chat_only = [spec for spec in trainer_tool_specs() if spec.name in ("message_notify_user", "idle")]
    call = (
        OfflineCoach()
        .complete(_request([_user("quick chest workout")], user=demo, tools=chat_only))
        .tool_calls[0]
    )
    assert call.name == "message_notify_user"
    assert "isn't available" in call.arguments["message"]

    silent = OfflineCoach().complete(_request([_user("quick chest workout")], user=demo, tools=[]))
    assert silent.tool_calls == [] and silent.stop_reason == "end_turn"


def test_the_coach_decides_from_the_request_alone() -> None:
    """No user id and no database: the request (its user data and messages) is all the coach reads."""
    request = _request([_user("a 30 minute leg workout at home, no lunges")], user=None)
    call = OfflineCoach().complete(request).tool_calls[0]
    assert call.name == "draft_workout"
    assert call.arguments["focus"] == ["legs"] and call.arguments["minutes"] == 30
    # What to leave out goes to the tool in the user's words; the tool reads "lunges" from them.
    assert call.arguments["avoid"] == ["a 30 minute leg workout at home, no lunges"]


@pytest.mark.django_db
def test_the_offline_model_is_served_by_the_coach() -> None:
    """The app registers the coach for the offline provider kind, so `offline` works with no keys."""
    assert isinstance(get_provider("offline"), OfflineCoach)
