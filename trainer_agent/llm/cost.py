"""What a call cost, from its usage buckets and the model's prices (DESIGN.md "Contracts", Cost).

The original specification subtracted cache reads from the prompt tokens (docs/contracts.md §14.2 (cost formula)); Anthropic's ``input_tokens`` already exclude
cache reads and writes, so that would undercount. Every bucket in ``Usage`` is disjoint, so the cost is a plain
sum: ``input x p_in + cache_write x p_write + cache_read x p_read + output x p_out`` per million tokens. The
OpenAI provider builds ``Usage`` with ``cached_tokens`` already taken out of ``prompt_tokens``, so the same
formula holds there.

The cache hit rate has one definition, `sessions_app.dashboards.cache_hit_rate` (a fraction in 0..1).
"""

from __future__ import annotations

from trainer_agent.llm.models import ModelConfig
from trainer_agent.llm.types import Usage

TOKENS_PER_MTOK = 1_000_000
CENTS_PER_DOLLAR = 100


def cost_cents(model: ModelConfig, usage: Usage) -> float:
    """Cost of one call in US cents (fractional; round only for display)."""
    dollars_times_mtok = (
        usage.input_tokens * model.input_per_mtok
        + usage.cache_write_tokens * model.cache_write_per_mtok
        + usage.cache_read_tokens * model.cache_read_per_mtok
        + usage.output_tokens * model.output_per_mtok
    )
    return dollars_times_mtok / TOKENS_PER_MTOK * CENTS_PER_DOLLAR
