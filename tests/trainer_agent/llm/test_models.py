"""The model registry: ids, providers, prices and the error for an unknown id."""

from __future__ import annotations

import pytest

from trainer_agent.llm.models import (
    ModelConfig,
    UnknownModel,
    get_model,
    model_ids,
    register_model,
    registered_model,
    unregister_model,
)


def test_builtin_models_are_registered_with_their_provider() -> None:
    """Every model DESIGN.md names is resolvable, served by the right provider kind."""
    providers = {model_id: get_model(model_id).provider for model_id in model_ids()}
    assert providers == {
        "claude-haiku-4-5": "anthropic",
        "claude-sonnet-4-5": "anthropic",
        "claude-opus-4-5": "anthropic",
        "gpt-4o-mini": "openai",
        "gpt-4o": "openai",
        "gpt-4.1-mini": "openai",
        "offline": "offline",
    }


@pytest.mark.parametrize(
    ("model_id", "prices"),
    [
        ("claude-haiku-4-5", (1.00, 5.00, 0.10, 1.25)),
        ("claude-sonnet-4-5", (3.00, 15.00, 0.30, 3.75)),
        ("claude-opus-4-5", (5.00, 25.00, 0.50, 6.25)),
        ("gpt-4o-mini", (0.15, 0.60, 0.075, 0.15)),
        ("gpt-4o", (2.50, 10.00, 1.25, 2.50)),
        ("gpt-4.1-mini", (0.40, 1.60, 0.10, 0.40)),
    ],
)
def test_prices_per_million_tokens(model_id: str, prices: tuple[float, float, float, float]) -> None:
    """Input, output, cache-read and cache-write prices match the published price lists (docs/contracts.md §14.1 (models))."""
    model = get_model(model_id)
    assert (
        model.input_per_mtok,
        model.output_per_mtok,
        model.cache_read_per_mtok,
        model.cache_write_per_mtok,
    ) == pytest.approx(prices)


def test_unknown_model_lists_the_allowed_ids() -> None:
    """An unknown id raises UnknownModel (a KeyError) whose message names every allowed id."""
    with pytest.raises(KeyError) as caught:
        get_model("gpt-5-ultra")
    assert isinstance(caught.value, UnknownModel)
    message = str(caught.value)
    assert "gpt-5-ultra" in message
    for model_id in model_ids():
        assert model_id in message


def _scripted_model(model_id: str = "test-scripted") -> ModelConfig:
    return ModelConfig(
        id=model_id,
        provider="scripted",
        display_name="Scripted",
        context_window=1000,
        max_output_tokens=100,
        input_per_mtok=1.0,
        output_per_mtok=2.0,
        cache_read_per_mtok=0.1,
        cache_write_per_mtok=1.25,
        min_cacheable_tokens=0,
    )


def test_register_and_unregister_a_model() -> None:
    """A registered model resolves until it is unregistered; registering the same id twice is refused."""
    model = register_model(_scripted_model("test-register"))
    try:
        assert get_model("test-register") is model
        with pytest.raises(ValueError, match="already registered"):
            register_model(_scripted_model("test-register"))
    finally:
        unregister_model("test-register")
    with pytest.raises(UnknownModel):
        get_model("test-register")


def test_registered_model_context_restores_the_builtin() -> None:
    """Replacing a built-in model inside registered_model() is undone on exit."""
    original = get_model("gpt-4o-mini")
    with registered_model(_scripted_model("gpt-4o-mini")):
        assert get_model("gpt-4o-mini").provider == "scripted"
    assert get_model("gpt-4o-mini") == original
