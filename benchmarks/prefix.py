"""The prompt prefix every model call carries: its size, and how much of a turn's input the prompt cache serves.

    .venv/bin/python benchmarks/prefix.py            # SQLite file var/bench-prefix.sqlite3

Sizes are characters / 4 of what is sent: each tool spec's JSON and the system prompt. The cache figures come
from a six-iteration Claude Haiku 4.5 turn (generate, deliver, adjust, deliver, notify, idle) played through the
real Anthropic SDK against the simulated prompt cache of tests/support/cache_sim.py (Anthropic's documented
rules, the model's 4,096-token minimum), starting cold: per request, the tokens sent and the share read from
the cache. Prints Markdown (docs/benchmarks.md "Prompt prefix size" keeps the recorded results).
"""

from __future__ import annotations

import json
import logging
import os
import sys
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("DEBUG", "1")
os.environ.setdefault("DATABASE_URL", f"sqlite:///{ROOT / 'var' / 'bench-prefix.sqlite3'}")
os.environ.setdefault("TASKS_BACKEND", "immediate")
(ROOT / "var").mkdir(exist_ok=True)

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402

from datasources_app.services import seed_demo_user  # noqa: E402
from tests.support.cache_sim import PromptCacheSimulator  # noqa: E402
from tests.trainer_agent.agent.scripting import (  # noqa: E402
    call,
    chest_workout,
    deliver,
    idle,
    notify,
    scripted_claude,
    serving,
)
from tools_app.registry import tool_specs  # noqa: E402
from trainer_agent.prompts import SYSTEM_PROMPT  # noqa: E402
from trainer_agent.turns import run_turn  # noqa: E402

MODEL = "claude-haiku-4-5"


def sizes() -> None:
    specs = tool_specs()
    print("| tool | tokens |\n|---|---:|")
    total = 0
    for spec in specs:
        size = len(json.dumps(spec))
        total += size
        print(f"| `{spec['name']}` | {size // 4:,} |")
    print(f"| **{len(specs)} tools** | **{total // 4:,}** |")
    print(f"| **system prompt** | **{len(SYSTEM_PROMPT) // 4:,}** |\n")


def cache() -> None:
    user_id = uuid.uuid4()
    seed_demo_user(user_id=user_id)
    simulator = PromptCacheSimulator(
        scripted_claude(
            call("generate_workout", {"workout": chest_workout()}),
            deliver("Here is your chest session."),
            call("adjust_exercise", {"exercise_id": "1", "adjustments": {"sets": 4}}),
            deliver("The press now has four sets."),
            notify("Warm up with light presses first."),
            idle(),
        )
    )
    with serving(MODEL, simulator):
        run_turn(user_id=user_id, message="Give me a chest workout", model=MODEL)
    print("| request | input tokens | read from cache | written | hit rate |\n|---:|---:|---:|---:|---:|")
    for number, usage in enumerate(simulator.usages, start=1):
        total = usage.input_tokens + usage.cache_creation_input_tokens + usage.cache_read_input_tokens
        print(
            f"| {number} | {total:,} | {usage.cache_read_input_tokens:,} | "
            f"{usage.cache_creation_input_tokens:,} | {usage.hit_rate:.0%} |"
        )
    print(f"\nWhole turn: {simulator.hit_rate:.1%} of the input tokens read from the cache.")


if __name__ == "__main__":
    logging.disable(logging.INFO)  # the agent's console log and the task framework's lines
    call_command("migrate", verbosity=0)
    sizes()
    cache()
