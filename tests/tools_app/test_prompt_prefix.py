"""The cached prompt prefix (issue 23 item 8): the tool specs and the system prompt every model call carries.

Size contracts, measured as characters / 4 (a fair token estimate for English and JSON), for the full tool list
as sent and for the system prompt; and the prefix is byte-identical from one build to the next, or the prompt
cache misses on every request.
"""

from __future__ import annotations

import json

from tests.support.llm_fakes import ScriptedTransport, anthropic_message, anthropic_provider_for
from tools_app.registry import ToolRegistry, all_tools, tool_specs
from trainer_agent.context import trainer_tool_specs
from trainer_agent.llm.types import LLMRequest
from trainer_agent.prompts import SYSTEM_PROMPT

# 6,500 → 6,550 for schedule_workout's artifact_id, which spares a model re-typing a made workout (1,000+ output
# tokens each time) to put it on a day.
# 6,650 → 6,700 and 2,000 → 2,025 for log_workout's and log_completed_exercise's artifact_id and the "done" line:
# a trial's legs lifts went into a log titled after tomorrow's cardio, the current workout, with no way to name
# the workout done.
# 6,700 → 6,725 for draft_workout's date (merged beside the above; each branch fitted its own budget): a workout
# drafted for tomorrow counted recovery to today, warning "Quadriceps trained hard 0 h ago" for an easy ride.
TOOLS_TOKEN_BUDGET = 6_725
SYSTEM_PROMPT_TOKEN_BUDGET = 2_025


def estimated_tokens(text: str) -> int:
    return len(text) // 4


def test_the_tool_specs_sent_fit_the_budget() -> None:
    """Every tool spec together (as JSON) stays within 6,650 tokens, so the prefix stays cheap to send."""
    specs = [
        {"name": spec.name, "description": spec.description, "input_schema": spec.input_schema}
        for spec in trainer_tool_specs()
    ]
    sizes = {spec["name"]: estimated_tokens(json.dumps(spec)) for spec in specs}
    total = estimated_tokens("".join(json.dumps(spec) for spec in specs))
    assert total <= TOOLS_TOKEN_BUDGET, (
        f"tool specs are {total} tokens: {sorted(sizes.items(), key=lambda i: -i[1])}"
    )


def test_the_system_prompt_fits_the_budget() -> None:
    """The system prompt stays within 2,000 tokens."""
    assert estimated_tokens(SYSTEM_PROMPT) <= SYSTEM_PROMPT_TOKEN_BUDGET, estimated_tokens(SYSTEM_PROMPT)


def test_tool_specs_are_byte_identical_across_builds() -> None:
    """A registry built afresh from the same tools generates the same bytes as the active one."""
    rebuilt = ToolRegistry(all_tools()).specs()
    assert json.dumps(rebuilt).encode() == json.dumps(tool_specs()).encode()


def test_the_cached_prefix_of_two_requests_is_byte_identical() -> None:
    """Two requests for different users and messages send the same tools and system prompt, byte for byte."""
    bodies = []
    for user_data, message in (
        ("<user_data>\nWeight: kg\n</user_data>", "Plan my week"),
        ("<user_data>\nWeight: lb\n</user_data>", "Swap 2"),
    ):
        transport = ScriptedTransport(anthropic_message([("idle", {"reason": "done"})]))
        anthropic_provider_for(transport).complete(
            LLMRequest(
                model="claude-haiku-4-5",
                system_prompt=SYSTEM_PROMPT,
                user_data_xml=user_data,
                messages=[{"role": "user", "content": message}],
                tools=trainer_tool_specs(),
            )
        )
        (body,) = transport.bodies
        bodies.append(body)
    first, second = bodies
    assert json.dumps(first["tools"]).encode() == json.dumps(second["tools"]).encode()
    assert first["system"][0] == second["system"][0] and SYSTEM_PROMPT in first["system"][0]["text"]
