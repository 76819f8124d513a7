"""Fixtures for the JSON API tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.core.cache import cache
from pytest_django import Settings

from tests.trainer_agent.api.support import JWT_SECRET, ApiUser, make_user, notify_then_idle
from trainer_agent.llm.providers import override_provider
from trainer_agent.llm.scripted import ScriptedProvider


@pytest.fixture(autouse=True)
def _api_settings(settings: Settings) -> None:
    """Minted tokens verify, the offline model is the default, and turns are throttled only when a test says so."""
    settings.SUPABASE_JWT_SECRET = JWT_SECRET
    settings.SUPABASE_PUBLIC_URL = ""
    settings.PRIMARY_MODEL = "offline"
    settings.INITIALIZER_MODEL = "offline"
    settings.AGENT_TURN_RATE = "1000/min"


@pytest.fixture
def alice() -> ApiUser:
    return make_user()


@pytest.fixture
def bob() -> ApiUser:
    return make_user()


@pytest.fixture
def scripted_model() -> Iterator[ScriptedProvider]:
    """The default model ("offline") answers notify → idle in every turn."""
    provider = notify_then_idle()
    with override_provider("offline", provider):
        yield provider


@pytest.fixture
def empty_cache() -> Iterator[None]:
    """Throttle counters start from zero (LocMemCache is per process)."""
    cache.clear()
    yield
    cache.clear()
