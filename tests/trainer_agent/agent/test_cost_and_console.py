"""Cost per call and per session (DESIGN.md "Contracts", Cost) and the console log of docs/contracts.md §15.1 (console log)."""

from __future__ import annotations

import re
import uuid

import pytest

from sessions_app.models import AgentSession, AgentSessionEvent
from tests.support.llm_fakes import ScriptedTransport, openai_completion, openai_provider_for
from tests.trainer_agent.agent.scripting import (
    call,
    chest_turn_with_cache_usage,
    chest_workout,
    deliver,
    idle,
    scripted_claude,
    serving,
    trainer_events_of,
)
from trainer_agent.llm.providers import override_provider
from trainer_agent.turns import run_turn

pytestmark = pytest.mark.django_db


def test_session_totals_equal_the_hand_computed_sum(demo_user: uuid.UUID) -> None:
    """Haiku at $1 in / $5 out / $1.25 cache write / $0.10 cache read per MTok, three calls with known buckets."""
    transport = chest_turn_with_cache_usage()
    with serving("claude-haiku-4-5", transport):
        result = run_turn(user_id=demo_user, message="Chest workout", model="claude-haiku-4-5")

    responses = trainer_events_of(result.session_id, "llm_response")
    assert [r["tokens"] for r in responses] == [
        {"prompt": 1000, "completion": 200, "cached": 0, "cache_write": 5000, "total": 6200},
        {"prompt": 150, "completion": 50, "cached": 5000, "cache_write": 300, "total": 5500},
        {"prompt": 80, "completion": 20, "cached": 5300, "cache_write": 120, "total": 5520},
    ]
    # 1000·1 + 5000·1.25 + 200·5 = 8250 µ$ ; 150 + 375 + 500 + 250 = 1275 ; 80 + 150 + 530 + 100 = 860
    assert [r["cost_cents"] for r in responses] == pytest.approx([0.825, 0.1275, 0.086])

    session = AgentSession.objects.get(pk=result.session_id)
    assert session.total_tokens == 17220
    assert session.cached_tokens == 10300
    assert session.total_cost_cents == pytest.approx(1.0385)
    usage = session.metadata["usage"]
    assert (usage["prompt_tokens"], usage["completion_tokens"], usage["cache_write_tokens"]) == (
        1230,
        270,
        5420,
    )
    assert (
        usage["llm_calls"] == 4
    )  # the initializer's (the offline model's, at no cost) and the trainer's three
    assert usage["cache_hit_rate"] == pytest.approx(10300 / (1230 + 10300 + 5420))


def test_openai_cached_tokens_are_taken_out_of_prompt_tokens(demo_user: uuid.UUID) -> None:
    """gpt-4o-mini as the trainer: 2000 prompt tokens of which 1500 cached are billed 500·$0.15 + 1500·$0.075."""
    transport = ScriptedTransport(
        openai_completion(
            [("idle", {"reason": "done"})], prompt_tokens=2000, cached_tokens=1500, completion_tokens=100
        )
    )
    with override_provider("gpt-4o-mini", openai_provider_for(transport)):
        result = run_turn(user_id=demo_user, message="Hello", model="gpt-4o-mini")
    (response,) = trainer_events_of(result.session_id, "llm_response")
    assert response["tokens"] == {
        "prompt": 500,
        "completion": 100,
        "cached": 1500,
        "cache_write": 0,
        "total": 2100,
    }
    assert response["cost_cents"] == pytest.approx((500 * 0.15 + 1500 * 0.075 + 100 * 0.6) / 1e4)
    body = transport.bodies[0]
    assert body["tool_choice"] == "required" and body["model"] == "gpt-4o-mini"


CONSOLE_LINE = re.compile(r"^\d\d:\d\d:\d\d\.\d{3} \[[0-9a-f]{8}\] (\S+) (.*)$")


def test_console_log_follows_the_seed_format(demo_user: uuid.UUID, caplog: pytest.LogCaptureFixture) -> None:
    """Every event is one agent.console line: time, short session id, icon, details with K tokens, $ and timings."""
    transport = scripted_claude(
        call(
            "generate_workout",
            {"workout": chest_workout()},
            input_tokens=1200,
            cache_read_tokens=2800,
            output_tokens=400,
        ),
        deliver(),
        idle(),
    )
    with caplog.at_level("INFO", logger="agent.console"), serving("claude-haiku-4-5", transport):
        result = run_turn(user_id=demo_user, message="Give me a chest workout", model="claude-haiku-4-5")
    lines = [r.getMessage() for r in caplog.records if r.name == "agent.console"]
    parsed = [CONSOLE_LINE.match(line) for line in lines]
    assert all(parsed), lines
    short_id = str(result.session_id)[:8]
    assert all(f"[{short_id}]" in line for line in lines)
    details = [(m.group(1), m.group(2)) for m in parsed if m]
    assert details[0] == ("👤", 'User: "Give me a chest workout"')
    # The initializer's call (the offline model's, at no cost) comes before the knowledge it chose.
    assert details[1] == (
        "📤",
        "LLM Request → offline (initializer)  est. " + details[1][1].split("est. ")[1],
    )
    assert details[2][0] == "📥" and details[3][0] == "📚" and details[3][1].startswith("Knowledge ← ")
    request = next(d for icon, d in details if icon == "📤" and "(initializer)" not in d)
    assert re.fullmatch(r"LLM Request → claude-haiku-4-5  est\. \d+\.\dK tokens", request)
    response = next(d for icon, d in details[3:] if icon == "📥")
    assert re.fullmatch(
        r"LLM Response ← stop: tool_use → generate_workout  4\.4K tokens \(2\.8K cached\) \| \$0\.\d{4} \| \d+(ms|\.\ds)",
        response,
    )
    assert ("🔧", 'Tool Call → message_notify_user  {"message":"Here is your workout.","artifact_id":"') in [
        (
            icon,
            d[: len('Tool Call → message_notify_user  {"message":"Here is your workout.","artifact_id":"')],
        )
        for icon, d in details
    ]
    assert any(re.fullmatch(r"Tool Result ← generate_workout: ✓  \d+(ms|\.\ds)", d) for _, d in details)
    assert ("📦", 'Artifact ← exercise_list  "Quick Chest"') in details
    # Every stored event has its line, the turn's last ones (stored with the turn's end) included.
    assert len(lines) == AgentSessionEvent.objects.filter(session_id=result.session_id).count()
    assert re.fullmatch(r"Tool Result ← idle: ✓  \d+(ms|\.\ds)", details[-1][1]), details[-1]
