"""GET /demo/: the chat page, self-contained (inline CSS/JS), with a demo token only while DEBUG is on."""

from __future__ import annotations

import re

from django.test import Client
from pytest_django import Settings

from datasources_app.demo import DEMO_USER_ID
from trainer_agent.auth import authenticate_bearer


def token_value(html: str) -> str:
    match = re.search(r'<input id="token"[^>]*value="([^"]*)"', html)
    assert match is not None
    return match.group(1)


def test_debug_page_carries_a_working_demo_token(settings: Settings) -> None:
    """With DEBUG on the token field holds a fresh token for the demo user."""
    settings.DEBUG = True
    settings.SUPABASE_JWT_SECRET = ""
    response = Client().get("/demo/")
    assert response.status_code == 200
    html = response.content.decode()
    assert authenticate_bearer(f"Bearer {token_value(html)}").user_id == DEMO_USER_ID


def test_page_without_debug_asks_for_a_token(settings: Settings) -> None:
    """With DEBUG off no token is minted; the connection settings start open so one can be pasted."""
    settings.DEBUG = False
    html = Client().get("/demo/").content.decode()
    assert token_value(html) == ""
    assert '<details class="settings" open>' in html


def test_page_is_self_contained(settings: Settings) -> None:
    """CSS and JS are inline (no static server, no CDN); the script talks to /agent/stream."""
    settings.DEBUG = False
    html = Client().get("/demo/").content.decode()
    assert 'fetch("/agent/stream"' in html
    assert "workout-card" in html
    assert not re.search(r'<(script|link)[^>]+(src|href)="(https?:)?//', html)
    assert 'value="offline"' in html
