"""Cost of a call from its usage buckets, checked against hand-computed figures."""

from __future__ import annotations

import pytest

from trainer_agent.llm.cost import cost_cents
from trainer_agent.llm.models import get_model
from trainer_agent.llm.types import Usage


def test_haiku_cost_charges_every_bucket_at_its_own_price() -> None:
    """Haiku 4.5: 1000 in x $1 + 2000 write x $1.25 + 10000 read x $0.10 + 500 out x $5 = $0.007 = 0.7 cents."""
    usage = Usage(input_tokens=1000, output_tokens=500, cache_read_tokens=10_000, cache_write_tokens=2000)
    assert cost_cents(get_model("claude-haiku-4-5"), usage) == pytest.approx(0.7)


def test_sonnet_cost_without_cache() -> None:
    """Sonnet 4.5: 20000 in x $3 + 1000 out x $15 = $0.075 = 7.5 cents."""
    usage = Usage(input_tokens=20_000, output_tokens=1000)
    assert cost_cents(get_model("claude-sonnet-4-5"), usage) == pytest.approx(7.5)


def test_opus_cache_prices_follow_the_multipliers() -> None:
    """Opus 4.5: 1M cache reads cost $0.50 and 1M cache writes $6.25, i.e. 50 and 625 cents."""
    opus = get_model("claude-opus-4-5")
    assert cost_cents(opus, Usage(cache_read_tokens=1_000_000)) == pytest.approx(50)
    assert cost_cents(opus, Usage(cache_write_tokens=1_000_000)) == pytest.approx(625)


def test_gpt_4o_mini_cached_tokens_are_charged_at_the_cached_price() -> None:
    """gpt-4o-mini, 5000 prompt of which 3000 cached, 200 out: 2000x$0.15 + 3000x$0.075 + 200x$0.60 = 0.0645 c."""
    usage = Usage(input_tokens=2000, output_tokens=200, cache_read_tokens=3000)
    assert cost_cents(get_model("gpt-4o-mini"), usage) == pytest.approx(0.0645)


def test_offline_model_is_free() -> None:
    """The offline coach costs nothing whatever the usage."""
    usage = Usage(input_tokens=10**6, output_tokens=10**6, cache_read_tokens=10**6, cache_write_tokens=10**6)
    assert cost_cents(get_model("offline"), usage) == 0
