"""Suite-wide configuration: hypothesis profiles, shared fixtures and no real LLM calls."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

# Fixtures of every directory's tests: the live daphne servers (one set per test session, whoever asks first)
# and a fresh clone of the checkout.
pytest_plugins = ("tests.support.live_server", "tests.support.fresh_clone")

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


@pytest.fixture(autouse=True)
def _fresh_catalogue_candidates() -> None:
    """Drafting keeps the catalogue per process (`training_facts.load_catalog`); a test's rollback sends no
    signal, so each test starts without what an earlier one read (its added exercises, or none after a flush)."""
    from tools_app.training_facts import forget_catalog

    forget_catalog()


@pytest.fixture(autouse=True)
def _exercise_catalogue_after_flush(request: pytest.FixtureRequest) -> None:
    """Transactional tests flush the database afterwards, data migrations included: reload the catalogue.

    The exercise catalogue is loaded by a data migration, so a test on the same worker that follows a
    transactional test would otherwise find it empty.
    """
    marker = request.node.get_closest_marker("django_db")
    transactional = (marker is not None and marker.kwargs.get("transaction")) or any(
        name in request.fixturenames for name in ("transactional_db", "live_server")
    )
    if not transactional:
        return
    request.getfixturevalue("transactional_db")
    from datasources_app.models import Exercise
    from datasources_app.services import load_exercise_catalog

    if not Exercise.objects.exists():
        load_exercise_catalog()
