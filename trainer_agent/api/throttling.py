"""Per-user throttling of agent turns (`/agent/chat` and `/agent/stream`).

Counts live in Django's default cache, which config/settings.py makes one every web process shares (the
database's `django_cache` table, or Redis with `REDIS_URL`): one limit per user across processes and restarts.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from rest_framework.request import Request
from rest_framework.throttling import SimpleRateThrottle

from trainer_agent.auth import AuthenticatedUser


class AgentTurnThrottle(SimpleRateThrottle):
    """At most AGENT_TURN_RATE ("N/sec|min|hour|day") turns per user; an empty rate disables the limit.

    Keyed by the token's user id, never by IP: many users share a mobile carrier's address. The rate is read
    from settings on every request, so it can be changed without a restart of the class (and in tests).
    """

    scope = "agent_turn"

    def get_rate(self) -> str | None:
        rate: str = getattr(settings, "AGENT_TURN_RATE", "") or ""
        return rate.strip() or None

    def get_cache_key(self, request: Request, view: Any) -> str | None:
        user = request.user
        if not isinstance(user, AuthenticatedUser):
            return None  # unauthenticated requests are refused (401) before any turn starts
        return self.cache_format % {"scope": self.scope, "ident": user.user_id}
