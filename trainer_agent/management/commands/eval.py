"""manage.py eval: run conversation scenarios against a model and report what the user got (docs/evals.md)."""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from trainer_agent.evals import (
    SCRIPTED_MODEL,
    TrialFormatError,
    TrialReport,
    load_trials,
    run_trial,
    summarize,
)
from trainer_agent.llm.models import UnknownModel, get_model
from trainer_agent.sink import console_logger

DEFAULT_SCENARIOS = Path(settings.BASE_DIR) / "evals" / "scenarios.json"


class Command(BaseCommand):
    help = (
        "Run conversation scenarios (evals/scenarios.json, or trial fixtures) against a model, each in a "
        "throw-away user and session, and report per scenario: hard-constraint violations in delivered "
        "workouts, whether a workout was delivered when asked, tool errors, iterations, tokens, cost and "
        "latency per turn. `--model scripted` replays the recorded answers of trial fixtures. Exits 1 when a "
        "scenario fails a check."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--model", default=None, help="model id, `offline`, or `scripted` (default: PRIMARY_MODEL)"
        )
        parser.add_argument(
            "--scenarios",
            type=Path,
            default=DEFAULT_SCENARIOS,
            help="a scenario/trial JSON file, or a folder of them (default: evals/scenarios.json)",
        )
        parser.add_argument("--repeat", type=int, default=1, help="runs of each scenario (default 1)")
        parser.add_argument("--json", action="store_true", help="print the results as one JSON document")

    def handle(self, *args: Any, **options: Any) -> None:
        # The turns' INFO records (the task framework, tools, the console log) would bury the report; -v 2 shows them.
        # Restored afterwards: the command also runs inside a process that goes on (call_command, the shell).
        previous = logging.root.manager.disable
        if options["verbosity"] < 2:
            logging.disable(logging.INFO)
        try:
            self._evaluate(options)
        finally:
            logging.disable(previous)

    def _evaluate(self, options: dict[str, Any]) -> None:
        model: str = options["model"] or settings.PRIMARY_MODEL
        repeat: int = options["repeat"]
        if repeat < 1:
            raise CommandError("--repeat must be at least 1")
        if model != SCRIPTED_MODEL:
            try:
                get_model(model)
            except UnknownModel as exc:
                raise CommandError(f"{exc} (or `scripted` to replay recorded answers)") from exc
        try:
            trials = load_trials(options["scenarios"])
        except TrialFormatError as exc:
            raise CommandError(str(exc)) from exc

        started = time.monotonic()
        reports: list[TrialReport] = []
        quiet = options["verbosity"] < 2
        previous, console_logger.disabled = console_logger.disabled, quiet or console_logger.disabled
        try:
            for trial in trials:
                for run in range(1, repeat + 1):
                    report = run_trial(trial, model=model)
                    reports.append(report)
                    if not options["json"]:
                        self._print(report, run=run, repeat=repeat)
        finally:
            console_logger.disabled = previous
        overall = summarize(reports)
        overall["wall_s"] = round(time.monotonic() - started, 2)
        if options["json"]:
            runs = [{**report.as_dict(), "run": 1 + index % repeat} for index, report in enumerate(reports)]
            document = {"model": model, "repeat": repeat, "scenarios": runs, "overall": overall}
            self.stdout.write(json.dumps(document, indent=2, ensure_ascii=False))
        else:
            self._print_overall(overall, model=model)
        if overall["failed"]:
            raise CommandError(f"{len(overall['failed'])} of {len(reports)} scenario runs failed")

    def _print(self, report: TrialReport, *, run: int, repeat: int) -> None:
        data = report.as_dict()
        turns = len(report.turns) or 1
        asked = [turn for turn in report.turns if turn.asked_for_workout]
        delivered = sum(turn.delivered_workout for turn in asked)
        name = report.name + (f" #{run}" if repeat > 1 else "")
        verdict = self.style.SUCCESS("PASS") if report.passed else self.style.ERROR("FAIL")
        self.stdout.write(
            f"{verdict} {name:<28} violations {data['violations']}  delivered {delivered}/{len(asked)}  "
            f"tool errors {data['tool_errors']}  iterations {data['iterations']}  tokens {data['tokens']}  "
            f"cost {data['cost_cents']:.4f}¢  latency {data['latency_s'] / turns:.2f} s/turn"
        )
        for problem in report.problems:
            self.stdout.write(f"     {problem}")
        for number, turn in enumerate(report.turns, start=1):
            for violation in turn.violations:
                self.stdout.write(
                    f"     turn {number} violation [{violation['kind']}] {violation['problem']}"
                )
            for failure in turn.failed_checks:
                self.stdout.write(f"     turn {number} ({turn.message[:40]!r}): {failure}")

    def _print_overall(self, overall: dict[str, Any], *, model: str) -> None:
        latency = overall["latency_s_per_turn"]
        self.stdout.write(
            f"Overall on {model}: {overall['passed']}/{overall['scenarios']} passed, {overall['turns']} turns, "
            f"violations {overall['violations']}, tool errors {overall['tool_errors']}, iterations "
            f"{overall['iterations']}, tokens {overall['tokens']}, cost {overall['cost_cents']:.4f}¢, latency "
            f"{latency['mean']:.2f} s/turn (max {latency['max']:.2f}), {overall['wall_s']:.1f} s in all"
        )
