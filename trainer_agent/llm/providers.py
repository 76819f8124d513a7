"""Resolve a model id to the provider that serves it.

Provider kinds register a factory: ``anthropic`` and ``openai`` are built in; ``offline`` (the built-in coach)
registers itself from its own module with ``register_provider_factory("offline", factory)``, so this module
does not import it. Tests swap a provider for one model id with ``override_provider``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager

from django.conf import settings

from trainer_agent.llm.anthropic_provider import AnthropicProvider
from trainer_agent.llm.models import ModelConfig, get_model
from trainer_agent.llm.openai_provider import OpenAIProvider
from trainer_agent.llm.types import LLMError, Provider, StructuredOutputProvider

type ProviderFactory = Callable[[ModelConfig], Provider]

# Any non-empty key works for OpenAI-compatible servers that do not check one (vLLM, Ollama, llama.cpp).
PLACEHOLDER_OPENAI_KEY = "not-needed"


class ProviderNotRegistered(LookupError):
    """No factory is registered for a model's provider kind."""


_lock = threading.Lock()
_factories: dict[str, ProviderFactory] = {}
_overrides: dict[str, list[Provider]] = {}
# SDK clients hold connection pools: build one per configuration and share it (they are thread-safe).
_clients: dict[Hashable, Provider] = {}


def register_provider_factory(kind: str, factory: ProviderFactory) -> None:
    """Make ``get_provider`` build providers of ``kind`` with ``factory(model_config)``."""
    with _lock:
        _factories[kind] = factory


def registered_provider_kinds() -> list[str]:
    return sorted(_factories)


def get_provider(model_id: str) -> Provider:
    """The provider for ``model_id``: an override if a test set one, else one built for its provider kind.

    Raises ``UnknownModel`` for an id not in the registry, ``LLMError(kind="auth")`` when the provider's API
    key is missing, and ``ProviderNotRegistered`` when nothing serves the model's provider kind.
    """
    with _lock:
        stack = _overrides.get(model_id)
        if stack:
            return stack[-1]
    model = get_model(model_id)
    factory = _factories.get(model.provider)
    if factory is None:
        raise ProviderNotRegistered(
            f"No provider is registered for {model.provider!r} (model {model_id!r}). "
            f"Registered kinds: {', '.join(registered_provider_kinds()) or 'none'}."
        )
    return factory(model)


def get_structured_provider(model_id: str) -> StructuredOutputProvider:
    """A provider that can also answer ``complete_json`` (the initializer's structured output)."""
    provider = get_provider(model_id)
    if not isinstance(provider, StructuredOutputProvider):
        raise ProviderNotRegistered(f"The provider of {model_id!r} does not support structured output")
    return provider


@contextmanager
def override_provider(model_id: str, provider: Provider) -> Iterator[Provider]:
    """Serve ``model_id`` with ``provider`` inside the ``with`` block (nestable; visible to every thread)."""
    with _lock:
        _overrides.setdefault(model_id, []).append(provider)
    try:
        yield provider
    finally:
        with _lock:
            stack = _overrides[model_id]
            stack.remove(provider)
            if not stack:
                del _overrides[model_id]


def _shared(key: Hashable, build: Callable[[], Provider]) -> Provider:
    with _lock:
        provider = _clients.get(key)
        if provider is None:
            provider = _clients[key] = build()
        return provider


def _anthropic_provider(model: ModelConfig) -> Provider:
    api_key: str = settings.ANTHROPIC_API_KEY
    if not api_key:
        raise LLMError(
            "auth",
            f"ANTHROPIC_API_KEY is not set, so model {model.id!r} cannot be used. "
            "Set the key, or use PRIMARY_MODEL=offline for the built-in coach.",
        )
    timeout, retries = settings.LLM_TIMEOUT_SECONDS, settings.LLM_MAX_RETRIES
    return _shared(
        ("anthropic", api_key, timeout, retries),
        lambda: AnthropicProvider(api_key=api_key, timeout=timeout, max_retries=retries),
    )


def _openai_provider(model: ModelConfig) -> Provider:
    base_url: str = settings.OPENAI_BASE_URL
    api_key: str = settings.OPENAI_API_KEY or (PLACEHOLDER_OPENAI_KEY if base_url else "")
    if not api_key:
        raise LLMError(
            "auth",
            f"OPENAI_API_KEY is not set, so model {model.id!r} cannot be used. Set the key, point "
            "OPENAI_BASE_URL at an OpenAI-compatible server, or use the offline model.",
        )
    timeout, retries = settings.LLM_TIMEOUT_SECONDS, settings.LLM_MAX_RETRIES
    return _shared(
        ("openai", api_key, base_url, timeout, retries),
        lambda: OpenAIProvider(
            api_key=api_key, base_url=base_url or None, timeout=timeout, max_retries=retries
        ),
    )


register_provider_factory("anthropic", _anthropic_provider)
register_provider_factory("openai", _openai_provider)
