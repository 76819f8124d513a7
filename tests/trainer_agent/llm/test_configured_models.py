"""LLM_MODELS: a deployment names its own models (an OpenAI-compatible server's, a newer Claude) and they are
served like the built-in ones: check passes, the cost is 0 without prices, and a turn runs end to end."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured
from pytest_django import Settings

from sessions_app.models import AgentSession, AgentSessionEvent, EventType
from tests.support.llm_fakes import OpenAICompatibleServer, openai_completion
from tests.trainer_agent.api.support import JWT_SECRET, make_user
from trainer_agent.agents.definitions import load_agents
from trainer_agent.agents.registry import AgentConfigError, AgentRegistry
from trainer_agent.llm.cost import cost_cents
from trainer_agent.llm.models import UnknownModel, get_model, model_ids, parse_configured_models
from trainer_agent.llm.providers import PLACEHOLDER_OPENAI_KEY
from trainer_agent.llm.types import Usage

BASE_DIR = Path(__file__).resolve().parents[3]
LLAMA = {"id": "llama3.1", "context_window": 131072}
USAGE = Usage(input_tokens=1000, output_tokens=500, cache_read_tokens=200, cache_write_tokens=100)


def test_a_model_without_prices_costs_nothing() -> None:
    """Only id and context window are needed: provider openai, display name the id, every price 0."""
    [model] = parse_configured_models([LLAMA])
    assert (model.id, model.provider, model.display_name, model.context_window) == (
        "llama3.1",
        "openai",
        "llama3.1",
        131072,
    )
    assert cost_cents(model, USAGE) == 0


def test_prices_are_per_million_tokens_with_cache_prices_defaulting_per_provider() -> None:
    """Given prices are used; unset cache prices follow the provider: input price for OpenAI-compatible
    servers, Anthropic's 0.1x read / 1.25x write for Claude."""
    openai_model, claude = parse_configured_models(
        '[{"id": "qwen", "context_window": 32768, "input_per_mtok": 2, "output_per_mtok": 4},'
        ' {"id": "claude-next", "provider": "anthropic", "context_window": 200000, "input_per_mtok": 4,'
        ' "output_per_mtok": 20, "cache_read_per_mtok": 0.3}]'
    )
    assert (openai_model.cache_read_per_mtok, openai_model.cache_write_per_mtok) == (2, 2)
    assert (claude.cache_read_per_mtok, claude.cache_write_per_mtok) == (0.3, 5)
    # 1000 x 2 + 100 x 2 + 200 x 2 + 500 x 4 = 4600 dollars per million tokens = 0.46 cents.
    assert cost_cents(openai_model, USAGE) == pytest.approx(0.46)


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ('[{"id": "llama3.1"', "Invalid JSON"),
        ('{"id": "llama3.1", "context_window": 8192}', "LLM_MODELS: Input should be a valid array"),
        ('[{"id": "llama3.1"}]', "LLM_MODELS[0].context_window: Field required"),
        (
            '[{"id": "x", "context_window": 0}]',
            "LLM_MODELS[0].context_window: Input should be greater than 0",
        ),
        ('[{"id": "x", "context_window": 8, "provider": "offline"}]', "LLM_MODELS[0].provider"),
        ('[{"id": "x", "context_window": 8, "price": 1}]', "LLM_MODELS[0].price: Extra inputs"),
        ('[{"id": "x", "context_window": 8, "input_per_mtok": -1}]', "LLM_MODELS[0].input_per_mtok"),
        ('[{"id": "x", "context_window": 8}, {"id": "x", "context_window": 9}]', "names x more than once"),
    ],
)
def test_a_bad_value_is_refused_naming_the_problem(value: str, problem: str) -> None:
    """Malformed JSON, missing or unknown fields, bad values and duplicate ids stop start-up with a message."""
    with pytest.raises(ImproperlyConfigured, match=r"LLM_MODELS") as caught:
        parse_configured_models(value)
    assert problem in str(caught.value)


def test_the_setting_registers_and_unregisters_its_models(settings: Settings) -> None:
    """Changing LLM_MODELS changes the registry (models of the previous value are removed); an entry with a
    built-in id replaces that model until the setting no longer names it."""
    gpt_4o = get_model("gpt-4o")
    settings.LLM_MODELS = [LLAMA, {"id": "gpt-4o", "context_window": 128000}]
    assert "llama3.1" in model_ids()
    assert cost_cents(get_model("gpt-4o"), USAGE) == 0
    settings.LLM_MODELS = '[{"id": "mistral", "context_window": 32768}]'
    assert get_model("mistral").context_window == 32768
    assert get_model("gpt-4o") == gpt_4o
    with pytest.raises(UnknownModel):
        get_model("llama3.1")


def test_agents_on_a_configured_model_validate(settings: Settings) -> None:
    """PRIMARY_MODEL=llama3.1 is refused by the agent registry until LLM_MODELS names it."""
    settings.PRIMARY_MODEL = "llama3.1"
    with pytest.raises(AgentConfigError, match=r"Unknown model 'llama3\.1'"):
        load_agents(AgentRegistry())
    settings.LLM_MODELS = [LLAMA]
    assert load_agents(AgentRegistry()).get("trainer").resolved_model() == "llama3.1"


def _manage_check(extra_env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """`manage.py check` in a fresh process with these variables (and no real LLM keys or pytest's)."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("PYTEST_", "OPENAI_", "ANTHROPIC_", "LLM_", "PRIMARY_MODEL"))
    }
    env.update({"DEBUG": "1", "DJANGO_SETTINGS_MODULE": "config.settings", **extra_env})
    return subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_manage_py_check_passes_with_a_model_named_in_the_environment() -> None:
    """`LLM_MODELS=[{"id": "llama3.1", …}] PRIMARY_MODEL=llama3.1 OPENAI_BASE_URL=… manage.py check` passes
    (without LLM_MODELS it stops at the agent registry: the test above)."""
    result = _manage_check(
        {
            "PRIMARY_MODEL": "llama3.1",
            "OPENAI_BASE_URL": "http://127.0.0.1:11434/v1",
            "LLM_MODELS": '[{"id": "llama3.1", "context_window": 131072}]',
        }
    )
    assert result.returncode == 0, result.stderr
    assert "no issues" in result.stdout


@pytest.mark.django_db
def test_a_turn_on_a_configured_model_runs_against_an_openai_compatible_server(settings: Settings) -> None:
    """POST /agent/chat with model llama3.1 goes through the OpenAI SDK to the server at OPENAI_BASE_URL (no
    API key needed), runs the tools it calls, and records its tokens at cost 0."""
    settings.LLM_MODELS = [LLAMA]
    settings.SUPABASE_JWT_SECRET = JWT_SECRET
    settings.PRIMARY_MODEL = "offline"
    settings.INITIALIZER_MODEL = "offline"
    settings.AGENT_TURN_RATE = "1000/min"
    user = make_user()
    with OpenAICompatibleServer(
        openai_completion([("message_notify_user", {"message": "Hello from llama"})], model="llama3.1"),
        openai_completion([("idle", {"reason": "done"})], model="llama3.1", prompt_tokens=300),
    ) as server:
        settings.OPENAI_BASE_URL = server.base_url
        response = user.post_json("/agent/chat", {"message": "hi", "model": "llama3.1"})

    assert response.status_code == 200, response.content
    body = response.json()
    assert body["response"]["messages"] == ["Hello from llama"]
    assert body["iterations"] == 2
    assert [wire["model"] for wire in server.bodies] == ["llama3.1", "llama3.1"]
    assert all(wire["max_tokens"] == 8192 and wire["temperature"] == 0.7 for wire in server.bodies)
    assert server.headers[0]["authorization"] == f"Bearer {PLACEHOLDER_OPENAI_KEY}"
    session = AgentSession.objects.get(pk=uuid.UUID(body["sessionId"]))
    answers = AgentSessionEvent.objects.filter(session=session, event_type=EventType.LLM_RESPONSE)
    assert [(event.data["model"], event.data["cost_cents"]) for event in answers] == [
        ("offline", 0.0),  # the initializer's
        ("llama3.1", 0.0),
        ("llama3.1", 0.0),
    ]
    assert session.total_tokens == 150 + 330
    assert session.total_cost_cents == 0
