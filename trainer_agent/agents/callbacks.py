"""Callbacks around agent runs (seed 004): deterministic hooks that always fire per their timing.

`on_success` hooks run when the agent returns, `on_failure` hooks when it raises (or, through `running`, when
its caller says the run failed), `always` hooks in both cases; all in registration order, once the run has
ended. `run_agent` (and `running`, for a run that is not one call) wraps a run with them; a failing hook is
logged, never raised, so observability cannot break a turn.

Every agent's runs are wrapped: each sub-agent run (`subagents.run_subagent`), each initializer run
(`initializer.initialize_context`) and each worker's run of a trainer turn (`turns`), whose outcome is the
turn's: it fails when the turn ends in `error`.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from trainer_agent import metrics
from trainer_agent.agents.registry import TURN_AGENTS

logger = logging.getLogger(__name__)

When = Literal["on_success", "on_failure", "always"]


@dataclass(frozen=True)
class AgentRun:
    """What a callback is told about one run."""

    agent_id: str
    success: bool
    duration_ms: int
    result: Any = None
    error: BaseException | None = None
    # What the caller passed along for the hooks (e.g. the week chain's scheduled workout id).
    context: Mapping[str, Any] = field(default_factory=dict)


type Hook = Callable[[AgentRun], None]


@dataclass(frozen=True)
class Callback:
    name: str
    when: When
    hook: Hook
    agents: tuple[str, ...] = ()  # the agents whose runs it hears; empty: every agent
    # False for a hook that never reads `AgentRun.result`: a run whose result costs work to make (a trainer
    # turn's, read back from its events) makes it only when a hook that fires reads it.
    reads_result: bool = True

    def hears(self, run: AgentRun) -> bool:
        return not self.agents or run.agent_id in self.agents


class CallbackRegistry:
    def __init__(self) -> None:
        self._callbacks: list[Callback] = []
        self._lock = threading.Lock()

    def register(
        self,
        name: str,
        hook: Hook,
        *,
        when: When = "on_success",
        agents: tuple[str, ...] = (),
        reads_result: bool = True,
    ) -> Callback:
        with self._lock:
            if any(c.name == name for c in self._callbacks):
                raise ValueError(f"Callback {name!r} is already registered; use replace()")
            callback = Callback(name, when, hook, agents, reads_result)
            self._callbacks.append(callback)
        return callback

    def replace(self, name: str, hook: Hook, *, when: When = "on_success") -> Callback:
        with self._lock:
            for index, existing in enumerate(self._callbacks):
                if existing.name == name:
                    self._callbacks[index] = Callback(name, when, hook)
                    return self._callbacks[index]
        raise KeyError(f"Unknown callback {name!r}")

    def unregister(self, name: str) -> None:
        """Remove a callback (tests); unknown names are ignored."""
        with self._lock:
            self._callbacks = [c for c in self._callbacks if c.name != name]

    def names(self) -> list[str]:
        return [c.name for c in self._callbacks]

    def clear(self) -> None:
        with self._lock:
            self._callbacks.clear()

    def fire(self, run: AgentRun, *, result_from: Callable[[], Any] | None = None) -> None:
        """Call the hooks that hear `run`; with `result_from`, the run's result is made by it, once, and only
        if one of them reads results."""
        timing = "on_success" if run.success else "on_failure"
        hooks = [c for c in list(self._callbacks) if c.when in (timing, "always") and c.hears(run)]
        if result_from is not None and any(c.reads_result for c in hooks):
            try:
                run = replace(run, result=result_from())
            except Exception:
                logger.exception("agent.callback_result_failed", extra={"agent_id": run.agent_id})
        for callback in hooks:
            try:
                callback.hook(run)
            except Exception:
                logger.exception("agent.callback_failed", extra={"callback": callback.name})

    def run_agent[T](
        self, agent_id: str, run: Callable[[], T], *, context: Mapping[str, Any] | None = None
    ) -> T:
        """Call `run()` and fire the callbacks with its outcome (and `context`); the run's exception propagates."""
        with self.running(agent_id, context=context) as outcome:
            outcome.result = run()
        return outcome.result

    @contextmanager
    def running(self, agent_id: str, *, context: Mapping[str, Any] | None = None) -> Iterator[RunOutcome]:
        """The callbacks around the block: it sets `outcome.result`, and `outcome.error` for a run that
        returned but failed (a turn that ended in `error`); an exception fails the run and propagates."""
        started = time.monotonic()
        extra = dict(context or {})
        outcome = RunOutcome()
        try:
            yield outcome
        except BaseException as exc:
            self.fire(
                AgentRun(
                    agent_id, False, _elapsed_ms(started), result=outcome.result, error=exc, context=extra
                )
            )
            raise
        self.fire(
            AgentRun(
                agent_id,
                outcome.error is None,
                _elapsed_ms(started),
                result=outcome.result,
                error=outcome.error,
                context=extra,
            ),
            result_from=outcome.result_from if outcome.result is None else None,
        )


@dataclass
class RunOutcome:
    """What the block of `CallbackRegistry.running` tells the callbacks about its run."""

    result: Any = None
    error: BaseException | None = None
    # Instead of `result`: makes it, for the hooks that read results (`Callback.reads_result`), if any fires.
    result_from: Callable[[], Any] | None = None


def _elapsed_ms(started: float) -> int:
    return round((time.monotonic() - started) * 1000)


@dataclass
class AgentMetrics:
    """Runs, failures and total duration per agent, the trainer and initializer included (a callback keeps it
    current)."""

    runs: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    failures: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    duration_ms: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, run: AgentRun) -> None:
        with self._lock:
            self.runs[run.agent_id] += 1
            self.duration_ms[run.agent_id] += run.duration_ms
            if not run.success:
                self.failures[run.agent_id] += 1
        if not run.success and run.agent_id not in TURN_AGENTS:
            # The same count, for Prometheus (`/metrics`); a turn's failures are counted by its status there.
            metrics.subagent_failed(run.agent_id)

    def snapshot(self) -> dict[str, dict[str, int]]:
        with self._lock:
            return {
                agent: {
                    "runs": self.runs[agent],
                    "failures": self.failures[agent],
                    "duration_ms": self.duration_ms[agent],
                }
                for agent in sorted(self.runs)
            }


def log_run(run: AgentRun) -> None:
    logger.info(
        "agent.run",
        extra={
            "agent_id": run.agent_id,
            "success": run.success,
            "duration_ms": run.duration_ms,
            "error": f"{type(run.error).__name__}: {run.error}" if run.error else None,
        },
    )


callback_registry = CallbackRegistry()
agent_metrics = AgentMetrics()


def register_default_callbacks(registry: CallbackRegistry = callback_registry) -> None:
    """Logging and metrics on every run (idempotent)."""
    if "log_run" not in registry.names():
        registry.register("log_run", log_run, when="always", reads_result=False)
    if "metrics" not in registry.names():
        registry.register("metrics", agent_metrics.record, when="always", reads_result=False)
