"""Prompt caching, measured with the simulated cache of tests/support/cache_sim.py on real request bodies."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

import pytest

from datasources_app.services import upsert_settings
from sessions_app.models import AgentSession
from tests.support.cache_sim import PromptCacheSimulator, boundaries
from tests.support.clock import freeze_now
from tests.trainer_agent.agent.scripting import (
    call,
    chest_workout,
    deliver,
    idle,
    notify,
    scripted_claude,
    serving,
)
from trainer_agent.context import build_context, trainer_tool_specs
from trainer_agent.llm.anthropic_provider import build_anthropic_body
from trainer_agent.llm.models import get_model
from trainer_agent.llm.scripted import tool_response
from trainer_agent.turns import run_turn

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.filterwarnings("ignore:The model 'claude-:DeprecationWarning"),
]


def six_iteration_script() -> list[Any]:
    return [
        call("generate_workout", {"workout": chest_workout()}),
        deliver("Here is your chest session."),
        call("adjust_exercise", {"exercise_id": "1", "adjustments": {"sets": 4}}),
        deliver("The press now has four sets."),
        notify("Warm up with light presses first."),
        idle(),
    ]


def test_six_iteration_turn_reads_at_least_80_percent_from_cache(demo_user: uuid.UUID) -> None:
    """A cold cache still gives ≥ 80% of the turn's input tokens as cache reads over six iterations (Haiku)."""
    simulator = PromptCacheSimulator(scripted_claude(*six_iteration_script()))
    with serving("claude-haiku-4-5", simulator):
        result = run_turn(user_id=demo_user, message="Give me a chest workout", model="claude-haiku-4-5")
    assert result.iterations == 6
    assert simulator.usages[1].hit_rate > 0.5
    assert simulator.hit_rate >= 0.8
    # The session's aggregate (end_session) agrees with the simulated usage the SDK passed through.
    usage = AgentSession.objects.get(pk=result.session_id).metadata["usage"]
    assert usage["cached_tokens"] == sum(u.cache_read_input_tokens for u in simulator.usages)
    assert usage["cache_hit_rate"] == pytest.approx(simulator.hit_rate)


@pytest.mark.parametrize("model", ["claude-haiku-4-5", "claude-sonnet-4-5", "claude-opus-4-5"])
def test_tools_and_system_prompt_are_shared_across_sessions(model: str, demo_user: uuid.UUID) -> None:
    """A new session of another user starts with the tools and system prompt already cached (breakpoints 1-2)."""
    simulator = PromptCacheSimulator(scripted_claude(notify("Hi"), idle(), notify("Hello"), idle()))
    with serving(model, simulator):
        run_turn(user_id=demo_user, message="Hello", model=model)
        run_turn(user_id=uuid.uuid4(), message="Hello", model=model)
    third = simulator.usages[2]  # the other user's first request: different user data
    shared_prefix = _tools_and_system_tokens(third_body := simulator_bodies(simulator)[2])
    assert third.cache_read_input_tokens == shared_prefix
    assert third.cache_read_input_tokens < sum(
        (third.input_tokens, third.cache_creation_input_tokens, third.cache_read_input_tokens)
    )
    assert third_body["system"][1]["text"].startswith("<user_data>")


def simulator_bodies(simulator: PromptCacheSimulator) -> list[dict[str, Any]]:
    transport = simulator.handler
    return transport.bodies  # type: ignore[attr-defined]


def _tools_and_system_tokens(body: dict[str, Any]) -> int:
    """Tokens of the prefix up to breakpoint 2 (the system prompt block)."""
    points = boundaries(body)
    return points[len(body["tools"])].tokens


def test_stable_prefix_is_above_every_claude_minimum(demo_user: uuid.UUID) -> None:
    """The tools alone exceed Haiku's and Opus's 4096-token minimum, so breakpoint 1 really caches.

    If the prompt ever shrinks below it, Haiku silently stops caching the tools; this test says so.
    """
    context = build_context(
        session=_session_with_message(demo_user),
        user_id=demo_user,
        tool_names=[t.name for t in trainer_tool_specs()],
    )
    body = build_anthropic_body(context.to_request(model="claude-haiku-4-5"))
    points = boundaries(body)
    tools_tokens = points[len(body["tools"]) - 1].tokens
    for model in ("claude-haiku-4-5", "claude-opus-4-5", "claude-sonnet-4-5"):
        assert tools_tokens >= get_model(model).min_cacheable_tokens, model


def _session_with_message(user_id: uuid.UUID) -> AgentSession:
    from sessions_app.services import append_event, create_session

    session = create_session(user_id=user_id)
    append_event(session=session, event_type="user_message", data={"message": "Hi"})
    return session


def _small_body(model: str) -> dict[str, Any]:
    """About 2,000 tokens in all: under Haiku's 4096-token minimum, over Sonnet's 1024."""
    return {
        "model": model,
        "tools": [
            {
                "name": "idle",
                "description": "x" * 6000,
                "input_schema": {"type": "object"},
                "cache_control": {"type": "ephemeral"},
            }
        ],
        "system": [
            {"type": "text", "text": "s" * 1000, "cache_control": {"type": "ephemeral"}},
            {"type": "text", "text": "u" * 500, "cache_control": {"type": "ephemeral"}},
        ],
        "messages": [
            {
                "role": "user",
                "content": [{"type": "text", "text": "Hi", "cache_control": {"type": "ephemeral"}}],
            }
        ],
    }


def test_simulator_respects_each_model_minimum_cacheable_length() -> None:
    """A prefix below the model's minimum is never written: Haiku gets no reads where Sonnet does."""
    haiku = PromptCacheSimulator(lambda request: None)  # type: ignore[arg-type,return-value]
    first = haiku.account(_small_body("claude-haiku-4-5"))
    again = haiku.account(_small_body("claude-haiku-4-5"))
    assert (first.cache_creation_input_tokens, again.cache_read_input_tokens) == (0, 0)
    assert again.input_tokens == first.input_tokens > 1024

    sonnet = PromptCacheSimulator(lambda request: None)  # type: ignore[arg-type,return-value]
    written = sonnet.account(_small_body("claude-sonnet-4-5"))
    read = sonnet.account(_small_body("claude-sonnet-4-5"))
    assert written.cache_creation_input_tokens == written.prompt_total
    assert read.cache_read_input_tokens == read.prompt_total and read.input_tokens == 0


def test_simulator_reads_the_longest_written_prefix_when_the_marker_moves() -> None:
    """The last-message marker moving to a new block still hits the prefix the previous request wrote."""
    simulator = PromptCacheSimulator(lambda request: None)  # type: ignore[arg-type,return-value]
    body = _small_body("claude-sonnet-4-5")
    simulator.account(body)
    longer = _small_body("claude-sonnet-4-5")
    del longer["messages"][0]["content"][0]["cache_control"]
    longer["messages"].append(
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "idle", "input": {}}]}
    )
    longer["messages"].append(
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "t1",
                    "content": "ok",
                    "cache_control": {"type": "ephemeral"},
                }
            ],
        }
    )
    usage = simulator.account(longer)
    assert usage.cache_read_input_tokens == boundaries(body)[-1].tokens
    assert usage.cache_creation_input_tokens == boundaries(longer)[-1].tokens - usage.cache_read_input_tokens
    assert usage.input_tokens == 0

    changed_system = _small_body("claude-sonnet-4-5")
    changed_system["system"][1]["text"] = "v" * 500
    after_change = simulator.account(changed_system)
    # Tools and the system prompt still hit; the changed user data and everything after it are written anew.
    assert after_change.cache_read_input_tokens == boundaries(changed_system)[1].tokens


def test_scripted_usage_is_not_the_simulators_business() -> None:
    """Sanity: scripted responses at the provider boundary keep their own usage (the simulator is HTTP-only)."""
    assert tool_response("idle", {"reason": "x"}, cache_read_tokens=7).usage.cache_read_tokens == 7


def test_user_data_block_changes_only_when_the_users_date_does(
    demo_user: uuid.UUID, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Breakpoint 3 (the user data) holds all day: two builds on the same day give the identical block, the first
    build after midnight in the user's time zone (Europe/London) names the new date."""
    clock = freeze_now(monkeypatch, datetime(2025, 11, 13, 8, 0, tzinfo=UTC))  # Thursday, 08:00 in London
    session = _session_with_message(demo_user)
    morning = build_context(session=session, user_id=demo_user).user_data_xml
    clock.moment = datetime(2025, 11, 13, 23, 59, tzinfo=UTC)
    evening = build_context(session=session, user_id=demo_user).user_data_xml
    assert evening == morning
    assert "Date: Thursday 13 November 2025 (2025-11-13)\nTime zone: Europe/London" in morning
    clock.moment = datetime(2025, 11, 14, 0, 1, tzinfo=UTC)
    friday = build_context(session=session, user_id=demo_user).user_data_xml
    assert "Date: Friday 14 November 2025 (2025-11-14)" in friday
    assert friday.replace("Friday 14 November 2025 (2025-11-14)", "") == morning.replace(
        "Thursday 13 November 2025 (2025-11-13)", ""
    ), "only the date line changed"


def test_the_users_time_zone_decides_the_date(demo_user: uuid.UUID, monkeypatch: pytest.MonkeyPatch) -> None:
    """At 23:30 UTC it is already tomorrow in Tokyo: after the user sets that zone, the block says so."""
    freeze_now(monkeypatch, datetime(2025, 11, 13, 23, 30, tzinfo=UTC))
    session = _session_with_message(demo_user)
    assert "Date: Thursday 13 November" in build_context(session=session, user_id=demo_user).user_data_xml
    upsert_settings(user_id=demo_user, timezone="Asia/Tokyo")
    xml = build_context(session=session, user_id=demo_user).user_data_xml
    assert "Date: Friday 14 November 2025 (2025-11-14)\nTime zone: Asia/Tokyo" in xml
