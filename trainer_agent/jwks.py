"""Public signing keys for Supabase access tokens, from a local JWKS file or the project's JWKS endpoint.

Settings are read on every call, so a changed SUPABASE_JWKS_FILE / SUPABASE_PUBLIC_URL takes effect at once;
fetched key sets are cached per source (path or URL) for a TTL and refetched once when a token names a key id
the cache does not know (key rotation).
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings

logger = logging.getLogger(__name__)

JWKS_PATH = "/auth/v1/.well-known/jwks.json"
JWKS_TTL_SECONDS = 600.0
JWKS_FETCH_TIMEOUT_SECONDS = 3.0
# A token naming an unknown kid may force a refetch, but not more often than this: otherwise anyone could
# make every request hit the JWKS endpoint by inventing key ids.
FORCED_REFRESH_MIN_INTERVAL_SECONDS = 30.0
# After a failed fetch, answer from what we have (possibly nothing) instead of blocking each request again.
FAILED_FETCH_BACKOFF_SECONDS = 5.0
MAX_JWKS_BYTES = 1024 * 1024

JWK = dict[str, Any]


class JwksUnavailable(Exception):
    """The key set could not be read or fetched, or is not a JWKS document."""


def _now() -> float:
    """Monotonic clock; a seam for tests that need to move time forward."""
    return time.monotonic()


@dataclass
class _CachedKeySet:
    keys: list[JWK] = field(default_factory=list)
    fetched_at: float | None = None
    last_forced_refresh_at: float | None = None
    failed_at: float | None = None


_cache: dict[str, _CachedKeySet] = {}
_cache_lock = threading.Lock()


def clear_jwks_cache() -> None:
    """Forget every cached key set (tests, or after changing settings by hand)."""
    with _cache_lock:
        _cache.clear()


def jwks_url(public_url: str) -> str:
    """The JWKS endpoint of a Supabase project."""
    return public_url.rstrip("/") + JWKS_PATH


def find_public_keys(*, kid: str | None) -> list[JWK]:
    """Public JWKs from the configured source matching `kid` (all keys when the token names none).

    SUPABASE_JWKS_FILE wins over SUPABASE_PUBLIC_URL so that offline setups never touch the network.
    Returns [] when no source is configured or the key is unknown; raises JwksUnavailable when the source
    cannot be read and nothing usable is cached.
    """
    jwks_file = getattr(settings, "SUPABASE_JWKS_FILE", "") or ""
    if jwks_file:
        return _select(_read_jwks_file(jwks_file), kid)
    public_url = getattr(settings, "SUPABASE_PUBLIC_URL", "") or ""
    if public_url:
        return _find_in_remote_jwks(jwks_url(public_url), kid)
    return []


def _select(keys: list[JWK], kid: str | None) -> list[JWK]:
    if kid is None:
        return list(keys)
    return [key for key in keys if key.get("kid") == kid]


def _parse_jwks(raw: bytes | str, *, source: str) -> list[JWK]:
    try:
        document = json.loads(raw)
    except ValueError as exc:
        raise JwksUnavailable(f"{source} is not JSON") from exc
    keys = document.get("keys") if isinstance(document, dict) else None
    if not isinstance(keys, list):
        raise JwksUnavailable(f'{source} has no "keys" list')
    return [key for key in keys if isinstance(key, dict)]


def _read_jwks_file(path: str) -> list[JWK]:
    # Reading a small local file is cheaper than reasoning about a stale cache: read it every time.
    try:
        with open(path, "rb") as handle:
            raw = handle.read(MAX_JWKS_BYTES + 1)
    except OSError as exc:
        raise JwksUnavailable(f"cannot read JWKS file {path}: {exc}") from exc
    if len(raw) > MAX_JWKS_BYTES:
        raise JwksUnavailable(f"JWKS file {path} is larger than {MAX_JWKS_BYTES} bytes")
    return _parse_jwks(raw, source=os.fspath(path))


def _fetch_jwks(url: str) -> list[JWK]:
    if not url.startswith(("https://", "http://")):
        raise JwksUnavailable(f"JWKS URL must be http(s): {url}")
    request = urllib.request.Request(url, headers={"Accept": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=JWKS_FETCH_TIMEOUT_SECONDS) as response:
            raw = response.read(MAX_JWKS_BYTES + 1)
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise JwksUnavailable(f"cannot fetch {url}: {exc}") from exc
    if len(raw) > MAX_JWKS_BYTES:
        raise JwksUnavailable(f"JWKS at {url} is larger than {MAX_JWKS_BYTES} bytes")
    return _parse_jwks(raw, source=url)


def _find_in_remote_jwks(url: str, kid: str | None) -> list[JWK]:
    with _cache_lock:
        entry = _cache.setdefault(url, _CachedKeySet())
        now = _now()
        expired = entry.fetched_at is None or now - entry.fetched_at >= JWKS_TTL_SECONDS
        fetched_now = expired and _may_fetch(entry, now)
        if fetched_now:
            _refresh(entry, url, now)
        found = _select(entry.keys, kid)
        if not found and kid is not None and not fetched_now and _may_force_refresh(entry, now):
            entry.last_forced_refresh_at = now
            _refresh(entry, url, now)
            found = _select(entry.keys, kid)
        if entry.fetched_at is None:
            raise JwksUnavailable(f"no key set fetched yet from {url}")
        return found


def _may_fetch(entry: _CachedKeySet, now: float) -> bool:
    return entry.failed_at is None or now - entry.failed_at >= FAILED_FETCH_BACKOFF_SECONDS


def _may_force_refresh(entry: _CachedKeySet, now: float) -> bool:
    if not _may_fetch(entry, now):
        return False
    last = entry.last_forced_refresh_at
    return last is None or now - last >= FORCED_REFRESH_MIN_INTERVAL_SECONDS


def _refresh(entry: _CachedKeySet, url: str, now: float) -> None:
    """Refetch into `entry`; on failure keep the previous keys (a JWKS outage must not log everyone out)."""
    try:
        keys = _fetch_jwks(url)
    except JwksUnavailable as exc:
        entry.failed_at = now
        logger.warning("auth.jwks_fetch_failed", extra={"url": url, "error": str(exc)})
        return
    entry.keys = keys
    entry.fetched_at = now
    entry.failed_at = None
    logger.info("auth.jwks_fetched", extra={"url": url, "kids": [key.get("kid") for key in keys]})
