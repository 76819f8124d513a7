"""Suite-wide configuration: hypothesis profiles and no real LLM calls."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "default",
    deadline=None,
    max_examples=60,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
settings.register_profile(
    "ci",
    parent=settings.get_profile("default"),
    max_examples=40,
    derandomize=True,
)
settings.load_profile("ci" if os.environ.get("CI") else "default")


@pytest.fixture(autouse=True)
def _no_real_llm_keys(settings: pytest.FixtureRequest) -> None:
    """Tests never talk to a real LLM API: keys are blanked unless a test sets its own."""
    settings.ANTHROPIC_API_KEY = ""  # type: ignore[attr-defined]
    settings.OPENAI_API_KEY = ""  # type: ignore[attr-defined]
    settings.OPENAI_BASE_URL = ""  # type: ignore[attr-defined]
