"""`GET /metrics`: what a Prometheus scrape shows after turns, and who may scrape (docs/architecture.md "Metrics")."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone
from prometheus_client.parser import text_string_to_metric_families
from pytest_django import Settings

from sessions_app.models import AgentSession
from sessions_app.services import NewEvent, create_session, open_turn
from tests.trainer_agent.api.support import JWT_SECRET, ApiUser, make_user, notify_then_idle
from trainer_agent.llm.providers import override_provider
from trainer_agent.llm.scripted import ScriptedProvider, tool_response

pytestmark = pytest.mark.django_db


def parse(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """{(sample name, sorted labels): value} of a scrape."""
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def value(samples: dict[tuple[str, tuple[tuple[str, str], ...]], float], name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def scrape(
    client: Client | None = None, **extra: Any
) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    response = (client or Client()).get("/metrics", **extra)
    assert response.status_code == 200, response.content
    assert response["Content-Type"].startswith("text/plain")
    return parse(response.content.decode())


@pytest.fixture(autouse=True)
def _api(settings: Settings) -> None:
    settings.SUPABASE_JWT_SECRET = JWT_SECRET
    settings.SUPABASE_PUBLIC_URL = ""
    settings.PRIMARY_MODEL = "offline"
    settings.INITIALIZER_MODEL = "offline"
    settings.AGENT_TURN_RATE = "1000/min"
    settings.METRICS_TOKEN = ""
    settings.METRICS_ALLOWED_NETWORKS = ["127.0.0.0/8", "::1/128"]


@pytest.fixture
def alice() -> ApiUser:
    return make_user()


@pytest.fixture
def failing_tool_model() -> Iterator[ScriptedProvider]:
    """A model that calls a tool with bad arguments, then says something and stops."""
    provider = ScriptedProvider(
        [
            tool_response("message_notify_user", {}),  # `message` missing: the tool fails
            tool_response("message_notify_user", {"message": "Sorry, here it is"}),
            tool_response("idle", {"reason": "done"}),
        ]
    )
    with override_provider("offline", provider):
        yield provider


def test_a_turn_shows_in_the_scrape(alice: ApiUser) -> None:
    """After one turn: it started and completed on its model, its two model calls, their tokens and cost, the
    tool it ran, its duration and time to first frame are all in the scrape."""
    before = scrape()
    with override_provider("offline", notify_then_idle()):
        response = alice.post_json("/agent/chat", {"message": "Hi coach"})
    assert response.status_code == 200, response.content
    after = scrape()

    def delta(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    assert delta("trainer_turns_started_total", model="offline") == 1
    assert delta("trainer_turns_finished_total", model="offline", status="completed") == 1
    assert delta("trainer_turn_duration_seconds_count", model="offline", status="completed") == 1
    assert delta("trainer_turn_time_to_first_frame_seconds_count", model="offline") == 1
    assert delta("trainer_llm_call_duration_seconds_count", model="offline", purpose="trainer") == 2
    assert delta("trainer_tool_calls_total", tool="message_notify_user") == 1
    assert delta("trainer_tool_calls_total", tool="idle") == 1
    assert delta("trainer_tool_failures_total", tool="message_notify_user") == 0
    assert ("trainer_turn_queue_depth", ()) in after


def test_a_failed_tool_call_is_counted_by_tool(alice: ApiUser, failing_tool_model: ScriptedProvider) -> None:
    before = scrape()
    response = alice.post_json("/agent/chat", {"message": "Hi coach"})
    assert response.status_code == 200, response.content
    after = scrape()
    calls = ("trainer_tool_calls_total", (("tool", "message_notify_user"),))
    failures = ("trainer_tool_failures_total", (("tool", "message_notify_user"),))
    assert after[calls] - before.get(calls, 0) == 2
    assert after[failures] - before.get(failures, 0) == 1


def test_the_queue_is_read_from_the_database_at_scrape_time() -> None:
    """A turn admitted but not yet claimed by any worker is in the queue depth, with its age."""
    assert value(scrape(), "trainer_turn_queue_depth") == 0
    session = create_session(user_id=uuid.uuid4())
    turn, _ = open_turn(
        session=session, model="offline", events=[NewEvent("user_message", {"message": "hi"})]
    )
    turn.enqueued_at = timezone.now() - timedelta(seconds=30)
    turn.save(update_fields=["enqueued_at"])
    samples = scrape()
    assert value(samples, "trainer_turn_queue_depth") == 1
    assert 29 <= value(samples, "trainer_turn_queue_oldest_age_seconds") < 120


def test_scrapes_from_outside_the_allowed_networks_are_refused(settings: Settings) -> None:
    response = Client().get("/metrics", REMOTE_ADDR="10.1.2.3")
    assert response.status_code == 403
    assert "METRICS_ALLOWED_NETWORKS" in response.json()["detail"]

    settings.METRICS_ALLOWED_NETWORKS = ["10.0.0.0/8"]
    assert Client().get("/metrics", REMOTE_ADDR="10.1.2.3").status_code == 200
    assert Client().get("/metrics", REMOTE_ADDR="127.0.0.1").status_code == 403


def test_a_metrics_token_lets_any_address_scrape(settings: Settings) -> None:
    settings.METRICS_TOKEN = "s3cret-scrape-token"
    settings.METRICS_ALLOWED_NETWORKS = []
    client = Client()
    missing = client.get("/metrics")
    assert missing.status_code == 401
    assert missing["WWW-Authenticate"].startswith("Bearer")
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer wrong").status_code == 401
    scrape(client, HTTP_AUTHORIZATION="Bearer s3cret-scrape-token", REMOTE_ADDR="203.0.113.9")


def test_tokens_by_bucket_and_cost_by_model(alice: ApiUser) -> None:
    """Two calls of a priced model, each 100 uncached input tokens, 50 read from the cache and 20 output:
    the buckets add up per model, and the cost is what the session's usage says, in dollars."""
    provider = ScriptedProvider(
        [
            tool_response("message_notify_user", {"message": "Hi"}, cache_read_tokens=50),
            tool_response("idle", {"reason": "done"}, cache_read_tokens=50),
        ]
    )
    before = scrape()
    with override_provider("claude-haiku-4-5", provider):
        response = alice.post_json("/agent/chat", {"message": "Hi coach", "model": "claude-haiku-4-5"})
    assert response.status_code == 200, response.content
    after = scrape()

    def delta(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    model = "claude-haiku-4-5"
    assert delta("trainer_llm_tokens_total", model=model, bucket="prompt") == 200
    assert delta("trainer_llm_tokens_total", model=model, bucket="cached") == 100
    assert delta("trainer_llm_tokens_total", model=model, bucket="completion") == 40
    session = AgentSession.objects.get(pk=response.json()["sessionId"])
    assert session.total_cost_cents > 0
    assert delta("trainer_llm_cost_usd_total", model=model) == pytest.approx(session.total_cost_cents / 100)


def test_a_failed_subagent_run_is_counted_by_agent() -> None:
    """Every sub-agent runs through the agent callbacks (`run_subagent`); a run that raises is one failure."""
    from trainer_agent.agents.callbacks import callback_registry
    from trainer_agent.agents.subagents import SubagentError

    def failing() -> None:
        raise SubagentError("microcycle", ["days: missing"], attempts=2)

    before = scrape()
    with pytest.raises(SubagentError):
        callback_registry.run_agent("microcycle", failing)
    callback_registry.run_agent("microcycle", lambda: "ok")
    after = scrape()
    key = ("trainer_subagent_failures_total", (("agent", "microcycle"),))
    assert after[key] - before.get(key, 0) == 1
