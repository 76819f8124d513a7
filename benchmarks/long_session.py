"""Long-session benchmark: tokens sent and cost per turn over many turns, with and without checkpointing.

    .venv/bin/python benchmarks/long_session.py              # 300 turns, SQLite file var/bench.sqlite3
    LONG_TURNS=100 LONG_WINDOW=40000 .venv/bin/python benchmarks/long_session.py

Each turn is one user message answered by a ScriptedProvider with `message_notify_user` then `idle` (two model
calls). The model is a registered scripted model with Claude Haiku 4.5's prices and a 60k-token window, so a
long session has to checkpoint. Every call reports the request's estimated size (characters / 4) as its input
tokens, uncached: the numbers are what is sent, and the cost is an upper bound (no prompt-cache discount).
The session runs twice: with `CHECKPOINT_THRESHOLD=0.8` and with a threshold above 1 (checkpointing off).
Prints a Markdown table (docs/benchmarks.md, "Long sessions", keeps the recorded results).
"""

from __future__ import annotations

import logging
import os
import platform
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

BASE_DIR = Path(__file__).resolve().parent.parent
if str(BASE_DIR) not in sys.path:
    sys.path.insert(0, str(BASE_DIR))

os.environ.setdefault("PRIMARY_MODEL", "offline")
os.environ.setdefault("INITIALIZER_MODEL", "offline")

from benchmarks.event_store import describe_database, setup_django  # noqa: E402

if TYPE_CHECKING:
    from trainer_agent.llm.types import LLMRequest, LLMResponse

TURNS = int(os.environ.get("LONG_TURNS", "300"))
REPORT_TURNS = (1, 50, 100, 200, 300)
MODEL_ID = "haiku-60k"
WINDOW = int(os.environ.get("LONG_WINDOW", "60000"))
OUTPUT_TOKENS = 60
WITH_CHECKPOINTS = 0.8
WITHOUT_CHECKPOINTS = 10.0  # the threshold is never reached: no checkpoint is ever written
MESSAGES = (
    "Give me a quick upper body workout with dumbbells",
    "How did my training go last month? Show my progress",
    "Can you swap the push-ups for something easier on the wrists",
    "What should I focus on this week?",
    "I finished the first three exercises, log them please",
    "Thanks! Any tips for sleep and recovery after leg day?",
    "Schedule a leg session for next Monday",
)


@dataclass
class Run:
    threshold: float
    tokens: list[int] = field(default_factory=list)  # input tokens sent per turn (both calls)
    cost_cents: list[float] = field(default_factory=list)
    largest_request: int = 0
    checkpoints: int = 0
    seconds: float = 0.0


def play(threshold: float) -> Run:
    from django.conf import settings

    from datasources_app.demo import DEMO_USER_ID
    from sessions_app.models import AgentSessionEvent, EventType
    from sessions_app.services import create_session
    from trainer_agent.llm.cost import cost_cents
    from trainer_agent.llm.models import ModelConfig, registered_model
    from trainer_agent.llm.providers import override_provider
    from trainer_agent.llm.scripted import ScriptedProvider, tool_response
    from trainer_agent.llm.types import Usage
    from trainer_agent.turns import delete_session_everywhere, run_turn

    model = ModelConfig(
        id=MODEL_ID,
        provider="scripted",
        display_name=f"Haiku 4.5 prices, {WINDOW:,}-token window (benchmark)",
        context_window=WINDOW,
        max_output_tokens=1024,
        input_per_mtok=1.00,
        output_per_mtok=5.00,
        cache_read_per_mtok=0.10,
        cache_write_per_mtok=1.25,
        min_cacheable_tokens=4096,
    )
    run = Run(threshold)
    sent: list[int] = []

    def answer(name: str, arguments: dict[str, str]) -> Callable[[LLMRequest], LLMResponse]:
        def step(request: LLMRequest) -> LLMResponse:
            size = request.estimated_tokens()
            sent.append(size)
            return tool_response(name, arguments, input_tokens=size, output_tokens=OUTPUT_TOKENS)

        return step

    steps = []
    for turn in range(1, TURNS + 1):
        steps.append(answer("message_notify_user", {"message": f"Reply {turn}: " + "ok, done. " * 8}))
        steps.append(answer("idle", {"reason": "answered"}))
    provider = ScriptedProvider(steps)
    settings.CHECKPOINT_THRESHOLD = threshold
    session = create_session(user_id=DEMO_USER_ID, metadata={"benchmark": "long_session"})
    started = time.perf_counter()
    try:
        with registered_model(model), override_provider(MODEL_ID, provider):
            for turn in range(1, TURNS + 1):
                before = len(sent)
                message = f"{MESSAGES[turn % len(MESSAGES)]} (turn {turn})"
                run_turn(user_id=DEMO_USER_ID, message=message, session=session, model=MODEL_ID)
                turn_tokens = sent[before:]
                run.tokens.append(sum(turn_tokens))
                run.cost_cents.append(
                    sum(
                        cost_cents(model, Usage(input_tokens=size, output_tokens=OUTPUT_TOKENS))
                        for size in turn_tokens
                    )
                )
        run.seconds = time.perf_counter() - started
        run.largest_request = max(sent)
        run.checkpoints = AgentSessionEvent.objects.filter(
            session=session, event_type=EventType.CHECKPOINT
        ).count()
    finally:
        delete_session_everywhere(session=session)
    return run


def report(with_cp: Run, without_cp: Run) -> str:
    rows = [
        "| Turn | Tokens sent (checkpoints on) | Cost ¢ (on) | Tokens sent (checkpoints off) | Cost ¢ (off) |",
        "|---:|---:|---:|---:|---:|",
    ]
    for turn in REPORT_TURNS:
        if turn > TURNS:
            continue
        index = turn - 1
        rows.append(
            f"| {turn} | {with_cp.tokens[index]:,} | {with_cp.cost_cents[index]:.3f} | "
            f"{without_cp.tokens[index]:,} | {without_cp.cost_cents[index]:.3f} |"
        )
    rows.append(
        f"| **total ({TURNS} turns)** | **{sum(with_cp.tokens):,}** | **{sum(with_cp.cost_cents):.2f}** | "
        f"**{sum(without_cp.tokens):,}** | **{sum(without_cp.cost_cents):.2f}** |"
    )
    rows.append("")
    for name, run in (("on", with_cp), ("off", without_cp)):
        over = sum(1 for tokens in run.tokens if tokens / 2 > WINDOW)
        rows.append(
            f"- checkpoints {name} (threshold {run.threshold:g}): {run.checkpoints} checkpoints, largest request "
            f"{run.largest_request:,} tokens (window {WINDOW:,}), turns whose average request exceeds the "
            f"window: {over}, run time {run.seconds:.1f} s"
        )
    return "\n".join(rows)


def main() -> None:
    # The turns run here, through the worker's code path (claim, lease, loop, end), with no task rows left behind.
    os.environ["TASKS_BACKEND"] = "immediate"
    setup_django()
    logging.getLogger("agent.console").setLevel(logging.WARNING)  # 600 model calls of console lines otherwise
    from datasources_app.services import seed_demo_user

    seed_demo_user()
    with_cp = play(WITH_CHECKPOINTS)
    without_cp = play(WITHOUT_CHECKPOINTS)
    print(f"Machine: {platform.machine()} {platform.processor() or ''} · Python {platform.python_version()}")
    print(f"Database: {describe_database()} · {os.cpu_count()} CPUs")
    print(report(with_cp, without_cp))


if __name__ == "__main__":
    main()
