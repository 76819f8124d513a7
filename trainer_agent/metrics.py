"""Prometheus metrics (docs/architecture.md "Metrics"): what the turns, models and tools did, served at `/metrics`
(`trainer_agent.metrics_views`).

Each fact is counted where it happens once:
- the events a turn stores (`EventSink.observe`): model calls (latency, tokens by bucket, cost), tool calls
  and failures;
- the worker's claim and end of a turn (`turns.execute_turn`): turns started and finished, their duration,
  time to first frame, lease takeovers;
- a sub-agent that gave no acceptable output (the agent callbacks' `metrics` callback);
- the queue (depth, oldest queued turn): read from the database when `/metrics` is scraped.

Web and worker processes are separate processes: with `PROMETHEUS_MULTIPROC_DIR` set (the client library's
multiprocess mode; `make run` sets it) every process of the host writes its series to files there and `/metrics`
on any web process of the host serves the sum. Without it each process keeps its own series (a web process then
shows only its own, plus the queue).
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Iterable, Iterator
from datetime import datetime
from typing import Any

from django.conf import settings
from django.utils import timezone
from prometheus_client import REGISTRY, CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.registry import Collector

from sessions_app.events import purpose_of

TURNS_STARTED = Counter("trainer_turns_started", "Turns a worker started (first attempt)", ["model"])
TURNS_FINISHED = Counter(
    "trainer_turns_finished", "Turns that ended, by status (completed, error)", ["model", "status"]
)
TURN_DURATION = Histogram(
    "trainer_turn_duration_seconds",
    "From the user's message stored to the turn's end",
    ["model", "status"],
    buckets=(0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300, 600),
)
TIME_TO_FIRST_FRAME = Histogram(
    "trainer_turn_time_to_first_frame_seconds",
    "From the user's message stored to the turn's next stored event (its first frame after 'Message received')",
    ["model"],
    buckets=(0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60),
)
LEASE_TAKEOVERS = Counter(
    "trainer_turn_lease_takeovers", "Turns a worker continued after another worker's lease lapsed"
)
MODEL_CALL_SECONDS = Histogram(
    "trainer_llm_call_duration_seconds",
    "Model call latency (stored llm_response events)",
    ["model", "purpose"],
    buckets=(0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 40, 60, 120),
)
TOKENS = Counter(
    "trainer_llm_tokens",
    "Model tokens by bucket (prompt, completion, cached, cache_write)",
    ["model", "bucket"],
)
COST = Counter("trainer_llm_cost_usd", "Model cost in US dollars", ["model"])
TOOL_CALLS = Counter("trainer_tool_calls", "Tool results stored", ["tool"])
TOOL_FAILURES = Counter("trainer_tool_failures", "Tool results stored with success false", ["tool"])
SUBAGENT_FAILURES = Counter(
    "trainer_subagent_failures", "Sub-agent runs that gave no acceptable output", ["agent"]
)

TOKEN_BUCKETS = ("prompt", "completion", "cached", "cache_write")


def multiprocess_dir() -> str:
    return os.environ.get("PROMETHEUS_MULTIPROC_DIR", "")


# --- what the event sink stores --------------------------------------------------------------------------


def observe_event(event_type: str, data: dict[str, Any], duration_ms: int | None) -> None:
    """Count one stored event (`trainer_agent.sink.EventSink.observe`)."""
    if event_type == "llm_response":
        model = str(data.get("model") or "unknown")
        if duration_ms is not None:
            MODEL_CALL_SECONDS.labels(model, purpose_of(data)).observe(duration_ms / 1000)
        tokens = data.get("tokens")
        if isinstance(tokens, dict):
            for bucket in TOKEN_BUCKETS:
                count = tokens.get(bucket)
                if isinstance(count, int | float) and count > 0:
                    TOKENS.labels(model, bucket).inc(count)
        cost = data.get("cost_cents")
        if isinstance(cost, int | float) and cost > 0:
            COST.labels(model).inc(cost / 100)
    elif event_type == "tool_result":
        tool = _tool_label(data.get("tool_name"))
        TOOL_CALLS.labels(tool).inc()
        if not data.get("success"):
            TOOL_FAILURES.labels(tool).inc()


def _tool_label(name: Any) -> str:
    """A registered tool's name; anything else (a name the model made up) is `unknown`: labels stay bounded."""
    from tools_app.registry import UnknownToolError, get_tool

    try:
        get_tool(str(name))
    except UnknownToolError:
        return "unknown"
    return str(name)


# --- the worker's turns ----------------------------------------------------------------------------------


def turn_claimed(*, model: str, attempts: int) -> None:
    if attempts <= 1:
        TURNS_STARTED.labels(model).inc()
    else:
        LEASE_TAKEOVERS.inc()


def first_frame(*, model: str, admitted_at: datetime, at: datetime) -> None:
    TIME_TO_FIRST_FRAME.labels(model).observe(max(0.0, (at - admitted_at).total_seconds()))


def turn_finished(
    *, model: str, status: str, admitted_at: datetime | None, finished_at: datetime | None
) -> None:
    TURNS_FINISHED.labels(model, status).inc()
    if admitted_at is not None and finished_at is not None:
        TURN_DURATION.labels(model, status).observe(max(0.0, (finished_at - admitted_at).total_seconds()))


def subagent_failed(agent_id: str) -> None:
    SUBAGENT_FAILURES.labels(agent_id).inc()


# --- the scrape ----------------------------------------------------------------------------------------------


class QueueCollector(Collector):
    """The turn queue, read from the database at scrape time: every worker's queue, whichever process serves."""

    def collect(self) -> Iterator[Metric]:
        from sessions_app.selectors import queued_turns

        depth, oldest = queued_turns()
        yield GaugeMetricFamily(
            "trainer_turn_queue_depth", "Turns queued and not yet claimed by a worker", depth
        )
        age = (timezone.now() - oldest).total_seconds() if oldest is not None else 0.0
        yield GaugeMetricFamily(
            "trainer_turn_queue_oldest_age_seconds",
            "Age of the oldest queued turn (0 when none)",
            max(0.0, age),
        )


_queue_collector = QueueCollector()
_single_process_registered = False


def exposition() -> bytes:
    """The text `/metrics` serves: every process of the host (multiprocess mode) or this one, plus the queue."""
    global _single_process_registered
    if multiprocess_dir():
        registry = CollectorRegistry()
        MultiProcessCollector(registry)
        registry.register(_queue_collector)
        return generate_latest(registry)
    if not _single_process_registered:
        REGISTRY.register(_queue_collector)
        _single_process_registered = True
    return generate_latest(REGISTRY)


# --- who may scrape ---------------------------------------------------------------------------------------


def scrape_refusal(*, remote_addr: str, authorization: str) -> tuple[int, str] | None:
    """None when the scrape is allowed: the client's address is in METRICS_ALLOWED_NETWORKS, or it sends
    `Authorization: Bearer <METRICS_TOKEN>`. Else the status and the reason."""
    token: str = settings.METRICS_TOKEN
    if token and _bearer(authorization) is not None:
        import hmac

        if hmac.compare_digest(_bearer(authorization) or "", token):
            return None
        return 401, "Invalid metrics token."
    if _address_allowed(remote_addr, settings.METRICS_ALLOWED_NETWORKS):
        return None
    if token:
        return 401, "Metrics token required (Authorization: Bearer <METRICS_TOKEN>)."
    return 403, "Metrics are served to METRICS_ALLOWED_NETWORKS only."


def _bearer(header: str) -> str | None:
    scheme, _, value = header.partition(" ")
    return value.strip() if scheme.lower() == "bearer" and value.strip() else None


def _address_allowed(remote_addr: str, networks: Iterable[str]) -> bool:
    try:
        address = ipaddress.ip_address(remote_addr)
    except ValueError:
        return False
    return any(address in ipaddress.ip_network(network, strict=False) for network in networks)
