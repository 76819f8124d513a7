"""`GET /demo/`: a one-page chat that streams turns from `/agent/stream`, the way a person sees the product.

The page is a Django template with its CSS and JS (static/demo/) inlined: it works under daphne without a
static-file server, and needs no build step and no CDN. Only its favicon (static/demo/favicon.svg) is linked,
through staticfiles; a page without it still works. With DEBUG on it comes with a fresh access token for
the demo user, so `make run` → open /demo/ → type is all it takes.
"""

from __future__ import annotations

import functools
from pathlib import Path

from django.conf import settings
from django.contrib.staticfiles import finders
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.safestring import SafeString, mark_safe
from django.views.decorators.http import require_GET

from datasources_app.demo import DEMO_USER_EMAIL, DEMO_USER_ID
from trainer_agent.auth import SigningSecretUnavailable, mint_token
from trainer_agent.llm.models import get_model, model_ids

DEMO_TOKEN_HOURS = 12


@require_GET
def demo_chat(request: HttpRequest) -> HttpResponse:
    context = {
        "token": demo_token() if settings.DEBUG else "",
        "models": [(model_id, get_model(model_id).display_name) for model_id in model_ids()],
        "default_model": settings.PRIMARY_MODEL,
        "css": asset("demo/chat.css"),
        "js": asset("demo/chat.js"),
    }
    return render(request, "demo/chat.html", context)


def demo_token() -> str:
    try:
        return mint_token(user_id=DEMO_USER_ID, email=DEMO_USER_EMAIL, hours=DEMO_TOKEN_HOURS)
    except SigningSecretUnavailable:
        return ""


def asset(name: str) -> SafeString:
    """A file of ours under static/, to inline (read once unless DEBUG, so edits show up on reload)."""
    return _read_asset(name) if settings.DEBUG else _cached_asset(name)


def _read_asset(name: str) -> SafeString:
    found = finders.find(name)
    if not found or isinstance(found, list):
        raise FileNotFoundError(f"static asset {name!r} not found")
    # Our own file, inlined into <style>/<script>: trusted content, not user input.
    return mark_safe(Path(found).read_text(encoding="utf-8"))


_cached_asset = functools.cache(_read_asset)
