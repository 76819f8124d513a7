"""The model registry: every model id the service accepts, with its provider, limits and prices.

Prices are US dollars per million tokens, from the providers' public price lists (November 2025):
- Anthropic: cache writes (5-minute TTL) cost 1.25x input, cache reads 0.1x input. Claude 4.5 models have a
  200K-token context window (Sonnet 4.5 offers 1M in beta, not used here) and 64K max output. The smallest
  cacheable prompt prefix is 4096 tokens on Haiku 4.5 and Opus 4.5, 1024 on Sonnet 4.5; shorter prefixes are
  simply not cached (no error), which is why a short demo prompt can report zero cache reads.
- OpenAI: caching is automatic from 1024 prompt tokens, cached tokens cost the listed cached price and cache
  writes cost nothing extra (so ``cache_write_per_mtok`` equals the input price and is never used).

A deployment adds its own models (any OpenAI-compatible server behind ``OPENAI_BASE_URL``, or a Claude model
newer than this list) with the ``LLM_MODELS`` setting; ``register_configured_models`` puts them in the same
registry at start-up (see ``ConfiguredModel`` for the fields).
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Literal

from django.core.exceptions import ImproperlyConfigured
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

ProviderKind = Literal["anthropic", "openai", "offline", "scripted"]
# Largest reply a configured model is assumed to allow when the deployment does not say (the trainer asks for
# at most this much).
CONFIGURED_MAX_OUTPUT_TOKENS = 8192


@dataclass(frozen=True)
class ModelConfig:
    """One model: which provider serves it, its context and output limits, and its prices per MTok."""

    id: str
    provider: ProviderKind
    display_name: str
    context_window: int
    max_output_tokens: int
    input_per_mtok: float
    output_per_mtok: float
    cache_read_per_mtok: float
    cache_write_per_mtok: float
    min_cacheable_tokens: int
    notes: str = ""


class UnknownModel(KeyError):
    """A model id that is not in the registry. The message lists the ids that are."""

    def __init__(self, model_id: str, allowed: list[str]) -> None:
        self.model_id = model_id
        self.allowed = allowed
        super().__init__(model_id)

    def __str__(self) -> str:
        return f"Unknown model {self.model_id!r}. Allowed models: {', '.join(self.allowed)}"


def _anthropic(
    model_id: str,
    display_name: str,
    *,
    input_price: float,
    output_price: float,
    min_cacheable: int,
    notes: str,
) -> ModelConfig:
    return ModelConfig(
        id=model_id,
        provider="anthropic",
        display_name=display_name,
        context_window=200_000,
        max_output_tokens=64_000,
        input_per_mtok=input_price,
        output_per_mtok=output_price,
        cache_read_per_mtok=round(input_price * 0.1, 6),
        cache_write_per_mtok=round(input_price * 1.25, 6),
        min_cacheable_tokens=min_cacheable,
        notes=notes,
    )


def _openai(
    model_id: str,
    display_name: str,
    *,
    context_window: int,
    max_output: int,
    input_price: float,
    output_price: float,
    cached_price: float,
    notes: str,
) -> ModelConfig:
    return ModelConfig(
        id=model_id,
        provider="openai",
        display_name=display_name,
        context_window=context_window,
        max_output_tokens=max_output,
        input_per_mtok=input_price,
        output_per_mtok=output_price,
        cache_read_per_mtok=cached_price,
        cache_write_per_mtok=input_price,
        min_cacheable_tokens=1024,
        notes=notes,
    )


BUILTIN_MODELS: tuple[ModelConfig, ...] = (
    _anthropic(
        "claude-haiku-4-5",
        "Claude Haiku 4.5",
        input_price=1.00,
        output_price=5.00,
        min_cacheable=4096,
        notes="Default trainer model: fast and cheap.",
    ),
    _anthropic(
        "claude-sonnet-4-5",
        "Claude Sonnet 4.5",
        input_price=3.00,
        output_price=15.00,
        min_cacheable=1024,
        notes="Stronger reasoning for complex programming.",
    ),
    _anthropic(
        "claude-opus-4-5",
        "Claude Opus 4.5",
        input_price=5.00,
        output_price=25.00,
        min_cacheable=4096,
        notes="Most capable Claude model.",
    ),
    _openai(
        "gpt-4o-mini",
        "GPT-4o mini",
        context_window=128_000,
        max_output=16_384,
        input_price=0.15,
        output_price=0.60,
        cached_price=0.075,
        notes="Default initializer model (structured output).",
    ),
    _openai(
        "gpt-4o",
        "GPT-4o",
        context_window=128_000,
        max_output=16_384,
        input_price=2.50,
        output_price=10.00,
        cached_price=1.25,
        notes="",
    ),
    _openai(
        "gpt-4.1-mini",
        "GPT-4.1 mini",
        context_window=1_047_576,
        max_output=32_768,
        input_price=0.40,
        output_price=1.60,
        cached_price=0.10,
        notes="",
    ),
    ModelConfig(
        id="offline",
        provider="offline",
        display_name="Offline coach",
        context_window=200_000,
        max_output_tokens=8192,
        input_per_mtok=0.0,
        output_per_mtok=0.0,
        cache_read_per_mtok=0.0,
        cache_write_per_mtok=0.0,
        min_cacheable_tokens=0,
        notes="Deterministic built-in coach: no API key, no network, no cost.",
    ),
)

_lock = threading.Lock()
_registry: dict[str, ModelConfig] = {model.id: model for model in BUILTIN_MODELS}


def get_model(model_id: str) -> ModelConfig:
    """The configuration of ``model_id``; ``UnknownModel`` (a KeyError) lists the allowed ids otherwise."""
    try:
        return _registry[model_id]
    except KeyError:
        raise UnknownModel(model_id, model_ids()) from None


def model_ids() -> list[str]:
    """Every registered model id, in registration order."""
    return list(_registry)


def register_model(model: ModelConfig, *, replace: bool = False) -> ModelConfig:
    """Add a model (tests, benchmarks, deployments with extra OpenAI-compatible models)."""
    with _lock:
        if model.id in _registry and not replace:
            raise ValueError(f"Model {model.id!r} is already registered; pass replace=True to override it")
        _registry[model.id] = model
    return model


def unregister_model(model_id: str) -> None:
    """Remove a model added with ``register_model``; built-in models come back with their defaults."""
    with _lock:
        builtin = {model.id: model for model in BUILTIN_MODELS}
        if model_id in builtin:
            _registry[model_id] = builtin[model_id]
        else:
            _registry.pop(model_id, None)


@contextmanager
def registered_model(model: ModelConfig) -> Iterator[ModelConfig]:
    """Register ``model`` for the duration of a ``with`` block (replacing any model with the same id)."""
    previous = _registry.get(model.id)
    register_model(model, replace=True)
    try:
        yield model
    finally:
        with _lock:
            if previous is None:
                _registry.pop(model.id, None)
            else:
                _registry[model.id] = previous


# --- models named by the deployment (LLM_MODELS) --------------------------------------------------------------


class ConfiguredModel(BaseModel):
    """One entry of ``LLM_MODELS``. Prices are US dollars per million tokens; a price not given costs 0.

    Cache prices default from the input price as each provider bills them: Anthropic reads 0.1x and writes
    1.25x; an OpenAI-compatible server's cached tokens are billed as input (no discount assumed).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1)
    provider: Literal["openai", "anthropic"] = "openai"
    context_window: int = Field(gt=0)
    display_name: str = ""
    input_per_mtok: float = Field(default=0.0, ge=0)
    output_per_mtok: float = Field(default=0.0, ge=0)
    cache_read_per_mtok: float | None = Field(default=None, ge=0)
    cache_write_per_mtok: float | None = Field(default=None, ge=0)

    def to_model_config(self) -> ModelConfig:
        anthropic = self.provider == "anthropic"
        cache_read = self.cache_read_per_mtok
        cache_write = self.cache_write_per_mtok
        return ModelConfig(
            id=self.id,
            provider=self.provider,
            display_name=self.display_name or self.id,
            context_window=self.context_window,
            max_output_tokens=min(CONFIGURED_MAX_OUTPUT_TOKENS, self.context_window),
            input_per_mtok=self.input_per_mtok,
            output_per_mtok=self.output_per_mtok,
            cache_read_per_mtok=(
                cache_read if cache_read is not None else self.input_per_mtok * (0.1 if anthropic else 1)
            ),
            cache_write_per_mtok=(
                cache_write if cache_write is not None else self.input_per_mtok * (1.25 if anthropic else 1)
            ),
            min_cacheable_tokens=0,  # unknown; only informative
            notes="Named by the deployment (LLM_MODELS).",
        )


_configured_models = TypeAdapter(list[ConfiguredModel])
_configured_ids: list[str] = []


def parse_configured_models(value: str | Sequence[Mapping[str, Any]] | None) -> list[ModelConfig]:
    """The models of an ``LLM_MODELS`` value: a JSON list (from the environment) or the list itself.

    Raises ``ImproperlyConfigured`` naming the entry and field at fault.
    """
    if not value:
        return []
    try:
        if isinstance(value, str):
            entries = _configured_models.validate_json(value)
        else:
            entries = _configured_models.validate_python(list(value))
    except ValidationError as exc:
        problems = "; ".join(f"LLM_MODELS{_location(error['loc'])}: {error['msg']}" for error in exc.errors())
        raise ImproperlyConfigured(f"LLM_MODELS is not a list of models. {problems}") from None
    duplicates = sorted(model_id for model_id, count in Counter(e.id for e in entries).items() if count > 1)
    if duplicates:
        raise ImproperlyConfigured(f"LLM_MODELS names {', '.join(duplicates)} more than once")
    return [entry.to_model_config() for entry in entries]


def _location(loc: tuple[int | str, ...]) -> str:
    return "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in loc)


def register_configured_models(value: str | Sequence[Mapping[str, Any]] | None) -> list[ModelConfig]:
    """Make the registry serve the models of ``LLM_MODELS`` (called at start-up and when the setting changes).

    Models registered by an earlier call are removed first; an entry with a built-in id replaces that model.
    """
    global _configured_ids
    models = parse_configured_models(value)
    builtin = {model.id: model for model in BUILTIN_MODELS}
    with _lock:
        for model_id in _configured_ids:
            if model_id in builtin:
                _registry[model_id] = builtin[model_id]
            else:
                _registry.pop(model_id, None)
        for model in models:
            _registry[model.id] = model
        _configured_ids = [model.id for model in models]
    return models


def configured_models_changed(*, setting: str, value: Any, **kwargs: Any) -> None:
    """``setting_changed`` receiver: a test that overrides ``LLM_MODELS`` gets those models registered."""
    if setting == "LLM_MODELS":
        register_configured_models(value)
