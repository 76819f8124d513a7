"""cache_hit_rate has one meaning everywhere: cached / (prompt + cached + cache_write), stored and returned as a
fraction in 0..1 (session metadata, the SQL views, the API), shown as a percentage only on screen (admin, console).
"""

from __future__ import annotations

import io
import uuid

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse
from pytest_django import Settings

from sessions_app.dashboards import cache_hit_rate
from sessions_app.models import AgentSession, AgentSessionSummary
from tests.trainer_agent.agent.scripting import chest_turn_with_cache_usage, serving
from tests.trainer_agent.observability.support import login_staff
from trainer_agent.auth import mint_token

pytestmark = pytest.mark.django_db

# Three calls: input 1000 + 150 + 80, cache writes 5000 + 300 + 120, cache reads 0 + 5000 + 5300.
PROMPT, CACHE_WRITE, CACHED = 1230, 5420, 10300
RATE = CACHED / (PROMPT + CACHED + CACHE_WRITE)  # 0.6077
SHOWN = "60.8%"
JWT_SECRET = "cache-hit-rate-test-secret-0123456789-abcdefghijklmnop"


@pytest.mark.parametrize(
    ("prompt", "cached", "cache_write", "rate"),
    [(100, 900, 0, 0.9), (0, 0, 0, 0.0), (500, 0, 500, 0.0), (250, 500, 250, 0.5)],
)
def test_the_rate_is_a_fraction_with_cache_writes_counted_as_misses(
    prompt: int, cached: int, cache_write: int, rate: float
) -> None:
    """cached / (prompt + cached + cache_write), in 0..1; 0 when there was no input."""
    assert cache_hit_rate(prompt=prompt, cached=cached, cache_write=cache_write) == pytest.approx(rate)


def test_one_session_has_the_same_rate_in_metadata_view_api_admin_and_console(
    demo_user: uuid.UUID, client: Client, settings: Settings
) -> None:
    """A chat session with known token buckets: the same fraction in metadata, the view and the API; 60.8% on screen."""
    transport = chest_turn_with_cache_usage()
    out = io.StringIO()
    with serving("claude-haiku-4-5", transport):
        call_command(
            "chat",
            stdin=io.StringIO("Chest workout\n"),
            stdout=out,
            stderr=io.StringIO(),
            model="claude-haiku-4-5",
        )
    session = AgentSession.objects.get(user_id=demo_user)

    usage = session.metadata["usage"]
    assert (usage["prompt_tokens"], usage["cached_tokens"], usage["cache_write_tokens"]) == (
        PROMPT,
        CACHED,
        CACHE_WRITE,
    )
    assert usage["cache_hit_rate"] == pytest.approx(RATE)
    assert AgentSessionSummary.objects.get(pk=session.pk).cache_hit_rate == pytest.approx(RATE)

    settings.SUPABASE_JWT_SECRET = JWT_SECRET
    settings.SUPABASE_PUBLIC_URL = ""
    token = mint_token(user_id=demo_user, secret=JWT_SECRET)
    api = Client().get(f"/agent/sessions/{session.pk}", HTTP_AUTHORIZATION=f"Bearer {token}")
    assert api.status_code == 200, api.content
    assert api.json()["session"]["metadata"]["usage"]["cache_hit_rate"] == pytest.approx(RATE)

    staff = login_staff(client)
    listing = staff.get(reverse("admin:sessions_app_agentsessionsummary_changelist")).content.decode()
    row = listing[listing.index(f"{session.pk}/change/") :]
    assert SHOWN in row[: row.index("</tr>")]
    detail = staff.get(reverse("admin:sessions_app_agentsessionsummary_change", args=[session.pk]))
    assert SHOWN in detail.content.decode()
    assert f"Session {session.pk}: {session.total_tokens} tokens, cache hit {SHOWN}, $" in out.getvalue()
