"""Streaming providers (issue 25) at the provider boundary: how soon a finished exercise reaches `on_partial`, and
what a streamed call costs in CPU against a non-streamed one.

    .venv/bin/python benchmarks/stream_provider.py [--calls 20] [--concurrency 10] [--ttft 0.6] [--tps 150]
        [--read-interval 0.1]

The streaming fake model (tests/support/fake_model_server.py) runs as its own process and writes a 6-exercise
generate_workout input at `--ttft` / `--tps`, marking (wall clock) when it sent the first token and when it had
written each exercise. Each call goes through the real SDK (AnthropicProvider / OpenAIProvider): with `stream` the
benchmark notes when `on_partial` first showed each exercise whole and the call's first report; with `complete`
only when the response arrived. CPU is this process's (the SDK, the partial parser, the callback), per call.
Prints Markdown (docs/benchmarks.md "Streaming providers" keeps the recorded results).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("DEBUG", "1")
os.environ.setdefault("LOG_LEVEL", "WARNING")

import django  # noqa: E402

django.setup()

from tests.support.fake_model_server import WorkoutTurnScript  # noqa: E402
from tests.support.live_server import free_port  # noqa: E402
from trainer_agent.llm.anthropic_provider import AnthropicProvider  # noqa: E402
from trainer_agent.llm.openai_provider import OpenAIProvider  # noqa: E402
from trainer_agent.llm.types import LLMRequest, PartialToolCall, ToolSpec  # noqa: E402

EXERCISES = WorkoutTurnScript(6).workout()["workout"]["exercises"]


def request(model: str, tag: int) -> LLMRequest:
    return LLMRequest(
        model=model,
        system_prompt="You are a personal trainer.",
        user_data_xml="<user_data></user_data>",
        messages=[{"role": "user", "content": f"A full-body workout at home, please (#{tag})"}],
        tools=[ToolSpec("generate_workout", "Create a workout.", {"type": "object"})],
    )


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def run(
    api: str, mode: str, *, port: int, calls: int, concurrency: int, marks: Path, read_interval: float
) -> dict[str, Any]:
    if api == "anthropic":
        provider: Any = AnthropicProvider(
            api_key="bench", base_url=f"http://127.0.0.1:{port}", max_retries=0, read_interval=read_interval
        )
        model = "claude-haiku-4-5"
    else:
        provider = OpenAIProvider(
            api_key="bench",
            base_url=f"http://127.0.0.1:{port}/v1",
            max_retries=0,
            read_interval=read_interval,
        )
        model = "gpt-4o-mini"
    seen: dict[int, dict[str, float]] = {}
    lock = threading.Lock()

    def one(tag: int) -> None:
        times: dict[str, float] = {"sent": time.time()}

        def on_partial(partial: PartialToolCall) -> None:
            now = time.time()
            times.setdefault("first_report", now)
            shown = (partial.arguments.get("workout") or {}).get("exercises") or []
            for index, exercise in enumerate(shown):
                if exercise == EXERCISES[index]:
                    times.setdefault(f"exercise_{index}", now)

        if mode == "stream":
            provider.stream(request(model, tag), on_partial=on_partial)
        elif mode == "unwatched":
            provider.stream(request(model, tag), on_partial=None)
        else:
            provider.complete(request(model, tag))
        times["done"] = time.time()
        with lock:
            seen[tag] = times

    marks.write_text("")
    cpu = time.process_time()
    with ThreadPoolExecutor(concurrency) as pool:
        list(pool.map(one, range(calls)))
    cpu_per_call_ms = (time.process_time() - cpu) / calls * 1000
    by_request: dict[int, dict[str, float]] = {}
    texts: dict[int, int] = {}
    for line in marks.read_text().splitlines():
        mark = json.loads(line)
        if mark["event"] == "request":
            texts[mark["request"]] = int(mark["text"].rsplit("#", 1)[1].rstrip(")"))
        key = mark["event"] if mark["event"] != "exercise_written" else f"exercise_{mark['index']}"
        by_request.setdefault(mark["request"], {})[key] = mark["t"]
    first_lag: list[float] = []
    exercise_lag: list[float] = []
    first_exercise: list[float] = []
    done: list[float] = []
    for number, server in by_request.items():
        client = seen[texts[number]]
        done.append(client["done"] - client["sent"])
        if mode != "stream":
            continue
        first_lag.append(client["first_report"] - server["first_token"])
        first_exercise.append(client["exercise_0"] - client["sent"])
        exercise_lag += [client[f"exercise_{i}"] - server[f"exercise_{i}"] for i in range(len(EXERCISES))]
    result = {"api": api, "mode": mode, "cpu_ms": cpu_per_call_ms, "done_p95": p95(done)}
    if mode == "stream":
        result |= {
            "first_lag_p95": p95(first_lag),
            "exercise_lag_p95": p95(exercise_lag),
            "exercise_lag_median": statistics.median(exercise_lag),
            "first_exercise_p95": p95(first_exercise),
        }
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--concurrency", type=int, default=10)
    parser.add_argument("--ttft", type=float, default=0.6)
    parser.add_argument("--tps", type=float, default=150)
    parser.add_argument(
        "--read-interval", type=float, default=0.1, help="the paced reader's interval (0: a read per event)"
    )
    args = parser.parse_args()
    port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        marks = Path(tmp) / "marks.jsonl"
        options = ["--port", str(port), "--ttft", str(args.ttft), "--tps", str(args.tps)]
        options += ["--marks", str(marks)]
        server = subprocess.Popen(
            [sys.executable, "-m", "tests.support.fake_model_server", *options],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert server.stdout is not None
            server.stdout.readline()
            commit = subprocess.run(
                ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=False
            ).stdout.strip()
            print(
                f"commit {commit}, {args.calls} calls, {args.concurrency} at a time, ttft {args.ttft} s, "
                f"{args.tps} tok/s, read interval {args.read_interval} s, "
                f"load average {os.getloadavg()[0]:.2f}\n"
            )
            print(
                "| provider | call | done p95 | first report − first token p95 | exercise shown − written "
                "p95 (median) | first exercise after the request p95 | CPU per call |"
            )
            print("|---|---|---:|---:|---:|---:|---:|")
            for api in ("anthropic", "openai"):
                for mode in ("complete", "unwatched", "stream"):
                    r = run(
                        api,
                        mode,
                        port=port,
                        calls=args.calls,
                        concurrency=args.concurrency,
                        marks=marks,
                        read_interval=args.read_interval,
                    )
                    streamed = mode == "stream"
                    print(
                        f"| {api} | {mode} | {r['done_p95']:.2f} s | "
                        + (f"{r['first_lag_p95'] * 1000:.1f} ms | " if streamed else "– | ")
                        + (
                            f"{r['exercise_lag_p95'] * 1000:.1f} ms ({r['exercise_lag_median'] * 1000:.1f}) | "
                            if streamed
                            else "– | "
                        )
                        + (f"{r['first_exercise_p95']:.2f} s | " if streamed else "– | ")
                        + f"{r['cpu_ms']:.1f} ms |"
                    )
        finally:
            server.terminate()
            server.wait(timeout=10)


if __name__ == "__main__":
    main()
