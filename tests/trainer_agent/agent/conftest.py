"""Fixtures for the agent tests: the demo user, the offline initializer, no console noise."""

from __future__ import annotations

import uuid

import pytest

from datasources_app.demo import DEMO_USER_ID
from datasources_app.services import seed_demo_user


@pytest.fixture
def demo_user(db: None) -> uuid.UUID:
    """The demo user with profile, settings, Home (current) and Gym, goals and the no-burpees preference."""
    seed_demo_user()
    return DEMO_USER_ID


@pytest.fixture(autouse=True)
def _offline_initializer(settings: pytest.FixtureRequest) -> None:
    """The initializer picks knowledge with the built-in selector unless a test opts into a model."""
    settings.INITIALIZER_MODEL = "offline"  # type: ignore[attr-defined]
