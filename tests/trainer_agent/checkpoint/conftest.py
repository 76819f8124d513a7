"""Fixtures for the checkpoint tests: the demo user and the offline initializer."""

from __future__ import annotations

import uuid

import pytest

from datasources_app.demo import DEMO_USER_ID
from datasources_app.services import seed_demo_user


@pytest.fixture
def demo_user(db: None) -> uuid.UUID:
    """The demo user with profile, settings, locations, goals and the no-burpees preference."""
    seed_demo_user()
    return DEMO_USER_ID


@pytest.fixture(autouse=True)
def _offline_initializer(settings: pytest.FixtureRequest) -> None:
    """The initializer picks knowledge with the built-in keyword selector."""
    settings.INITIALIZER_MODEL = "offline"  # type: ignore[attr-defined]
