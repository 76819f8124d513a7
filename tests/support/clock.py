"""Freezing `django.utils.timezone.now` for tests whose outcome depends on the date (the user's "today")."""

from __future__ import annotations

from datetime import datetime

import pytest
from django.utils import timezone


class FrozenClock:
    """`timezone.now()` answers `moment` until moved (`clock.moment = …`)."""

    def __init__(self, moment: datetime) -> None:
        self.moment = moment

    def now(self) -> datetime:
        return self.moment


def freeze_now(monkeypatch: pytest.MonkeyPatch, moment: datetime) -> FrozenClock:
    """Make `django.utils.timezone.now()` (which the service reads the date from) return `moment` (aware)."""
    if timezone.is_naive(moment):
        raise ValueError("freeze_now needs an aware datetime")
    clock = FrozenClock(moment)
    monkeypatch.setattr(timezone, "now", clock.now)
    return clock
