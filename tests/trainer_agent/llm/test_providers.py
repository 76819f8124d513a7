"""get_provider: which provider serves a model id, the key checks, registration and test overrides."""

from __future__ import annotations

import threading

import pytest
from pytest_django import Settings

from trainer_agent.llm import providers
from trainer_agent.llm.anthropic_provider import AnthropicProvider
from trainer_agent.llm.models import ModelConfig, UnknownModel, registered_model
from trainer_agent.llm.openai_provider import OpenAIProvider
from trainer_agent.llm.providers import (
    ProviderNotRegistered,
    get_provider,
    get_structured_provider,
    override_provider,
    register_provider_factory,
)
from trainer_agent.llm.scripted import ScriptedProvider, tool_response
from trainer_agent.llm.types import LLMError, LLMRequest, LLMResponse

SCRIPTED_MODEL = ModelConfig(
    id="test-scripted-model",
    provider="scripted",
    display_name="Scripted",
    context_window=1000,
    max_output_tokens=100,
    input_per_mtok=0,
    output_per_mtok=0,
    cache_read_per_mtok=0,
    cache_write_per_mtok=0,
    min_cacheable_tokens=0,
)


@pytest.fixture
def isolated_factories(monkeypatch: pytest.MonkeyPatch) -> dict[str, providers.ProviderFactory]:
    """A private copy of the factory registry, so registrations in a test do not leak."""
    factories = dict(providers._factories)
    monkeypatch.setattr(providers, "_factories", factories)
    return factories


def test_anthropic_model_without_key_is_an_auth_error() -> None:
    """With no ANTHROPIC_API_KEY a Claude model cannot be served; the message says what to set."""
    with pytest.raises(LLMError) as caught:
        get_provider("claude-haiku-4-5")
    assert caught.value.kind == "auth"
    assert "ANTHROPIC_API_KEY" in caught.value.message


def test_anthropic_model_with_key_gets_a_shared_provider(settings: Settings) -> None:
    """With a key, Claude models get one AnthropicProvider, reused across calls and models."""
    settings.ANTHROPIC_API_KEY = "sk-ant-test"
    settings.LLM_MAX_RETRIES = 3
    provider = get_provider("claude-haiku-4-5")
    assert isinstance(provider, AnthropicProvider)
    assert provider.client.max_retries == 3
    assert get_provider("claude-sonnet-4-5") is provider


def test_openai_model_without_key_or_base_url_is_an_auth_error() -> None:
    """With neither OPENAI_API_KEY nor OPENAI_BASE_URL an OpenAI model cannot be served."""
    with pytest.raises(LLMError) as caught:
        get_provider("gpt-4o-mini")
    assert caught.value.kind == "auth"
    assert "OPENAI_API_KEY" in caught.value.message


def test_openai_base_url_alone_is_enough(settings: Settings) -> None:
    """A local OpenAI-compatible server needs no key: the base URL is used with a placeholder key."""
    settings.OPENAI_BASE_URL = "http://127.0.0.1:8080/v1"
    provider = get_provider("gpt-4o-mini")
    assert isinstance(provider, OpenAIProvider)
    assert str(provider.client.base_url) == "http://127.0.0.1:8080/v1/"
    assert provider.client.api_key == providers.PLACEHOLDER_OPENAI_KEY


def test_unknown_model_id_is_refused() -> None:
    """get_provider resolves ids through the registry, so a typo fails with UnknownModel."""
    with pytest.raises(UnknownModel):
        get_provider("claude-haiku-9")


def test_unregistered_provider_kind_is_a_clear_error(isolated_factories: dict[str, object]) -> None:
    """A model whose provider kind has no factory raises ProviderNotRegistered naming the kind."""
    isolated_factories.pop("scripted", None)
    with registered_model(SCRIPTED_MODEL), pytest.raises(ProviderNotRegistered, match="'scripted'"):
        get_provider(SCRIPTED_MODEL.id)


def test_offline_kind_is_served_by_its_registered_factory(isolated_factories: dict[str, object]) -> None:
    """register_provider_factory('offline', ...) is how the offline coach plugs in; it receives the config."""
    seen: list[ModelConfig] = []
    coach = ScriptedProvider([tool_response("idle")])

    def factory(model: ModelConfig) -> ScriptedProvider:
        seen.append(model)
        return coach

    register_provider_factory("offline", factory)
    assert get_provider("offline") is coach
    assert [model.id for model in seen] == ["offline"]


def test_override_provider_is_scoped_nested_and_thread_visible() -> None:
    """An override wins inside its block (also from other threads), nests, and is removed on exit."""
    outer, inner = ScriptedProvider(), ScriptedProvider()
    seen_in_thread: list[object] = []
    with override_provider("claude-haiku-4-5", outer):
        with override_provider("claude-haiku-4-5", inner):
            assert get_provider("claude-haiku-4-5") is inner
        worker = threading.Thread(target=lambda: seen_in_thread.append(get_provider("claude-haiku-4-5")))
        worker.start()
        worker.join()
        assert seen_in_thread == [outer]
    with pytest.raises(LLMError):
        get_provider("claude-haiku-4-5")


def test_structured_provider_requires_complete_json() -> None:
    """get_structured_provider refuses a provider that cannot do structured output."""

    class ToolsOnly:
        def complete(self, request: LLMRequest) -> LLMResponse:
            raise NotImplementedError

    scripted = ScriptedProvider()
    with override_provider("gpt-4o-mini", scripted):
        assert get_structured_provider("gpt-4o-mini") is scripted
    with override_provider("gpt-4o-mini", ToolsOnly()), pytest.raises(ProviderNotRegistered):
        get_structured_provider("gpt-4o-mini")
