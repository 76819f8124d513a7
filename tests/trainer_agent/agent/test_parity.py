"""The cross-model checks of docs/contracts.md §16 (end-to-end checks): every row, for each Claude model, through the real SDK."""

from __future__ import annotations

import json
import uuid
from typing import Any
from zoneinfo import ZoneInfo

import httpx2
import pytest
from django.conf import LazySettings
from django.utils import timezone

from datasources_app.demo import DEMO_SETTINGS
from datasources_app.selectors import get_current_workout
from sessions_app.models import AgentSession
from tests.support.cache_sim import PromptCacheSimulator
from tests.support.llm_fakes import (
    ScriptedTransport,
    openai_completion,
    openai_json_completion,
    openai_provider_for,
)
from tests.trainer_agent.agent.scripting import (
    CLAUDE_MODELS,
    Frames,
    band_chest_fly,
    call,
    chest_workout,
    deliver,
    events_of,
    idle,
    newest_artifact_id,
    notify,
    scripted_claude,
    serving,
    tool_uses,
    trainer_events_of,
)
from tools_app.registry import get_tool
from trainer_agent.agents.definitions import selection_schema
from trainer_agent.llm.providers import override_provider
from trainer_agent.turns import run_turn

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.parametrize("model", CLAUDE_MODELS),
    # The SDK warns that claude-sonnet-4-5 is deprecated; the model id is the seed's.
    pytest.mark.filterwarnings("ignore:The model 'claude-:DeprecationWarning"),
]

WORKOUT_SOURCES = ["category_goals", "muscle_goals", "active_preferences", "workout_history"]


def knowledge_sources_in(body: dict[str, object]) -> list[str]:
    text = json.dumps(body["messages"])
    return [source for source in WORKOUT_SOURCES if f'<knowledge source=\\"{source}\\">' in text]


def test_simple_message_notify_idle_cycle(model: str, demo_user: uuid.UUID) -> None:
    """A greeting is answered with one notify and the turn ends on idle after two model calls."""
    transport = scripted_claude(notify("Hi Alex! What shall we train today?"), idle())
    with serving(model, transport):
        result = run_turn(user_id=demo_user, message="Hello", model=model)
    assert [action.tool for action in result.actions] == ["message_notify_user", "idle"]
    assert result.iterations == 2 and result.stop_reason == "idle"
    assert result.response == {
        "messages": ["Hi Alex! What shall we train today?"],
        "exercises": None,
        "question": None,
    }
    assert AgentSession.objects.get(pk=result.session_id).status == "completed"
    assert [body["model"] for body in transport.bodies] == [model, model]


def test_workout_generation_delivers_the_artifact(model: str, demo_user: uuid.UUID) -> None:
    """generate_workout stores an artifact; the notify delivers that artifact id and the client gets its exercises."""
    transport = scripted_claude(call("generate_workout", {"workout": chest_workout()}), deliver(), idle())
    with serving(model, transport):
        result = run_turn(user_id=demo_user, message="Give me a chest workout", model=model)
    generated = result.actions[0].result
    delivered = result.actions[1].result
    assert generated["success"] and delivered["artifact_id"] == generated["artifact_id"]
    assert delivered["artifact"]["payload"]["exercises"][0]["exercise_name"] == "Dumbbell Bench Press"
    assert [e["exercise_name"] for e in result.response["exercises"]] == [
        "Dumbbell Bench Press",
        "Push-Up",
        "Dumbbell Fly",
    ]
    (artifact,) = events_of(result.session_id, "artifact")
    assert artifact["artifact_id"] == generated["artifact_id"]
    # The model saw the artifact it created, by id, in the request that delivered it.
    assert f'id=\\"{generated["artifact_id"]}\\"' in json.dumps(transport.bodies[1]["messages"])


def test_multi_turn_swap_adjust_remove(model: str, demo_user: uuid.UUID) -> None:
    """Three turns in one session change the same workout; each delivers the newest version."""
    transport = scripted_claude(
        call("generate_workout", {"workout": chest_workout()}),
        deliver(),
        idle(),
        call(
            "swap_exercise", {"exercise_id": "3", "new_exercise": band_chest_fly(), "reason": "no fly setup"}
        ),
        call("adjust_exercise", {"exercise_id": "1", "adjustments": {"sets": 4}}),
        deliver("Swapped the fly and added a set to the press."),
        idle(),
        call("remove_exercise", {"exercise_id": "2", "reason": "short on time"}),
        deliver("Push-ups are out."),
        idle(),
    )
    with serving(model, transport):
        first = run_turn(user_id=demo_user, message="Give me a chest workout", model=model)
        second = run_turn(
            user_id=demo_user,
            message="Swap the flyes for something with bands and make the press 4 sets",
            session_id=first.session_id,
            model=model,
        )
        third = run_turn(
            user_id=demo_user, message="Remove the push-ups", session_id=first.session_id, model=model
        )

    assert [a.tool for a in second.actions] == [
        "swap_exercise",
        "adjust_exercise",
        "message_notify_user",
        "idle",
    ]
    assert all(a.result["success"] for a in [*first.actions, *second.actions, *third.actions])
    adjusted_id = second.actions[1].result["artifact_id"]
    assert second.actions[2].result["artifact_id"] == adjusted_id
    assert third.actions[1].result["artifact_id"] == third.actions[0].result["artifact_id"]

    final = third.response["exercises"]
    assert [e["exercise_name"] for e in final] == ["Dumbbell Bench Press", "Band Chest Fly"]
    assert final[0]["sets"] == 4 and final[0]["reps"] == [10, 10, 10, 10]
    current = get_current_workout(user_id=demo_user)
    assert current is not None and current.artifact_id == third.actions[0].result["artifact_id"]

    # The third turn's first request carries the whole conversation, in order.
    names = [block["name"] for block in tool_uses(transport.bodies[7])]
    assert names == [
        "generate_workout",
        "message_notify_user",
        "idle",
        "swap_exercise",
        "adjust_exercise",
        "message_notify_user",
        "idle",
    ]
    assert newest_artifact_id(transport.bodies[8]) == third.actions[0].result["artifact_id"]


def test_context_initialization_selects_workout_data(model: str, demo_user: uuid.UUID) -> None:
    """The offline selector appends goals, preferences and history before the first model call, and only once."""
    transport = scripted_claude(notify("On it."), idle(), notify("Again."), idle())
    with serving(model, transport):
        result = run_turn(user_id=demo_user, message="Give me a 30 minute workout", model=model)
        run_turn(
            user_id=demo_user, message="Another workout please", session_id=result.session_id, model=model
        )
    knowledge = events_of(result.session_id, "knowledge")
    first_turn = [k["source"] for k in knowledge[:4]]
    assert sorted(first_turn) == sorted(WORKOUT_SOURCES)
    assert next(k for k in knowledge if k["source"] == "workout_history")["params"] == {"days_back": 14}
    # Append-only: the second turn re-fetches only the state that may have changed.
    assert [k["source"] for k in knowledge[4:]] == ["active_preferences"]
    assert knowledge[4]["reason"] == "refresh_state"
    assert sorted(knowledge_sources_in(transport.bodies[0])) == sorted(WORKOUT_SOURCES)


def test_openai_initializer_selects_data_through_structured_output(
    model: str, demo_user: uuid.UUID, settings: LazySettings
) -> None:
    """gpt-4o-mini gets a strict json_schema request; its chosen sources become knowledge events and frames."""
    settings.INITIALIZER_MODEL = "gpt-4o-mini"
    choice = {
        "reasoning": "A workout request needs goals and recent training.",
        "append_knowledge": [
            {"source": "muscle_goals", "reason": "not_in_context", "days_back": None},
            {"source": "workout_history", "reason": "not_in_context", "days_back": 7},
        ],
        "use_existing": [],
    }
    openai_transport = ScriptedTransport(
        openai_json_completion(choice, prompt_tokens=400, completion_tokens=60)
    )
    claude_transport = scripted_claude(notify("Planning it now."), idle())
    frames = Frames()
    with (
        override_provider("gpt-4o-mini", openai_provider_for(openai_transport)),
        serving(model, claude_transport),
    ):
        result = run_turn(user_id=demo_user, message="Plan my legs session", model=model, listener=frames)

    (request,) = openai_transport.bodies
    assert request["model"] == "gpt-4o-mini"
    assert request["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "knowledge_selection", "strict": True, "schema": selection_schema()},
    }
    london_today = timezone.now().astimezone(ZoneInfo(DEMO_SETTINGS["timezone"])).date()
    assert json.loads(request["messages"][1]["content"]) == {
        "user_message": "Plan my legs session",
        "today": f"{london_today:%A} {london_today.isoformat()}",  # the user's date, in their time zone
        "loaded_sources": [],
    }
    knowledge = events_of(result.session_id, "knowledge")
    assert [(k["source"], k["params"], k["reason"]) for k in knowledge] == [
        ("muscle_goals", {}, "not_in_context"),
        ("workout_history", {"days_back": 7}, "not_in_context"),
    ]
    assert [f["data"]["source"] for f in frames if f["type"] == "knowledge"] == [
        "muscle_goals",
        "workout_history",
    ]
    purposes = [r.get("purpose") for r in events_of(result.session_id, "llm_request")]
    assert purposes == ["initializer", "trainer", "trainer"]
    assert sorted(knowledge_sources_in(claude_transport.bodies[0])) == ["muscle_goals", "workout_history"]


def test_cache_hit_rate_above_half_on_second_iteration(model: str, demo_user: uuid.UUID) -> None:
    """With a simulated prompt cache, the second request of a turn reads more than half its input from cache."""
    simulator = PromptCacheSimulator(
        scripted_claude(call("generate_workout", {"workout": chest_workout()}), deliver(), idle())
    )
    with serving(model, simulator):
        result = run_turn(user_id=demo_user, message="Give me a chest workout", model=model)
    first, second, third = simulator.usages
    assert first.cache_read_input_tokens == 0 and first.cache_creation_input_tokens > 0
    assert second.hit_rate > 0.5
    assert third.hit_rate > 0.5
    tokens = [e["tokens"] for e in trainer_events_of(result.session_id, "llm_response")]
    assert tokens[1]["cached"] == second.cache_read_input_tokens
    assert tokens[1]["cache_write"] == second.cache_creation_input_tokens


def test_stream_frames_arrive_in_order(model: str, demo_user: uuid.UUID) -> None:
    """ "Message received" first, then knowledge; per tool status start → tool_start → tool_result → status
    done; done last."""
    transport = scripted_claude(call("generate_workout", {"workout": chest_workout()}), deliver(), idle())
    frames = Frames()
    with serving(model, transport):
        result = run_turn(user_id=demo_user, message="Give me a chest workout", model=model, listener=frames)

    expected = ["status"] + ["knowledge"] * 4
    for action in result.actions:
        tool = get_tool(action.tool)
        expected += ["status"] if tool.status_start else []
        expected += ["tool_start", "tool_result"]
        expected += ["status"] if tool.status_done else []
    expected.append("done")
    assert frames.kinds == expected

    tool_frames = [f for f in frames if f["type"] not in ("knowledge", "status", "done")]
    assert [(f["type"], frames.kinds[frames.index(f)]) for f in tool_frames] == [
        ("generate_workout", "tool_start"),
        ("generate_workout", "tool_result"),
        ("message_notify_user", "tool_start"),
        ("message_notify_user", "tool_result"),
        ("idle", "tool_start"),
        ("idle", "tool_result"),
    ]
    start, done = (
        f["data"] for f in frames if f["type"] == "status" and f["data"]["tool"] == "generate_workout"
    )
    assert (start["phase"], start["message"]) == ("start", "Creating your workout...")
    assert (done["phase"], done["message"]) == ("done", "Workout ready")
    delivered = tool_frames[3]
    assert (
        delivered["status"] == "done" and delivered["artifact_id"] == result.actions[0].result["artifact_id"]
    )
    assert delivered["artifact"]["type"] == "exercise_list"
    assert frames[-1] == {"type": "done", "sessionId": str(result.session_id)}


@pytest.mark.parametrize(
    "failure",
    [
        openai_json_completion(
            {
                "reasoning": "?",
                "append_knowledge": [{"source": "horoscope", "reason": "not_in_context", "days_back": None}],
                "use_existing": [],
            }
        ),
        {"__content__": "not json"},
        (500, {"error": {"message": "boom", "type": "server_error", "param": None, "code": None}}),
        httpx2.ReadTimeout,
    ],
    ids=["unknown-source", "invalid-json", "server-error", "timeout"],
)
def test_initializer_failure_is_logged_and_the_turn_goes_on(
    model: str, demo_user: uuid.UUID, settings: LazySettings, failure: Any
) -> None:
    """Any initializer failure is an error event (context_init); the built-in selector fills in and the turn runs."""
    settings.INITIALIZER_MODEL = "gpt-4o-mini"
    if isinstance(failure, dict) and "__content__" in failure:
        failure = openai_completion(content=failure["__content__"])
    with (
        override_provider("gpt-4o-mini", openai_provider_for(ScriptedTransport(failure))),
        serving(model, scripted_claude(notify("Here we go."), idle())),
    ):
        result = run_turn(user_id=demo_user, message="Give me a workout", model=model)
    (error,) = events_of(result.session_id, "error")
    assert error["context"] == "context_init" and error["message"].startswith("initializer failed")
    assert sorted(k["source"] for k in events_of(result.session_id, "knowledge")) == sorted(WORKOUT_SOURCES)
    assert result.stop_reason == "idle"
    assert AgentSession.objects.get(pk=result.session_id).status == "completed"
