"""Public signing keys for Supabase access tokens, from a local JWKS file or the project's JWKS endpoint.

The endpoint is read through PyJWT's ``PyJWKClient``, which fetches, parses and caches the key set for
``JWKS_TTL_SECONDS``. On top of it this module keeps two rules PyJWT leaves to its caller:
- a token naming a key id the cached set does not know refetches the set at once (key rotation), but not more
  often than every ``FORCED_REFRESH_MIN_INTERVAL_SECONDS``, so invented key ids cannot make every request hit
  the endpoint (PyJWT's own cooldown counts from any fetch, which would make a freshly rotated key wait);
- when a fetch fails, the keys fetched before keep verifying tokens (a JWKS outage must not log everyone out),
  and the endpoint is not asked again for ``FAILED_FETCH_BACKOFF_SECONDS``.
No lock is held while fetching. Settings are read on every call, so a changed SUPABASE_JWKS_FILE /
SUPABASE_PUBLIC_URL takes effect at once.
"""

from __future__ import annotations

import logging
import threading
import time

import jwt
from django.conf import settings

logger = logging.getLogger(__name__)

JWKS_PATH = "/auth/v1/.well-known/jwks.json"
JWKS_TTL_SECONDS = 600.0
JWKS_FETCH_TIMEOUT_SECONDS = 3.0
FORCED_REFRESH_MIN_INTERVAL_SECONDS = 30.0
FAILED_FETCH_BACKOFF_SECONDS = 5.0
MAX_JWKS_FILE_BYTES = 1024 * 1024


class JwksUnavailable(Exception):
    """The key set could not be read or fetched, or is not a JWKS document."""


class RemoteKeySet:
    """The keys of one JWKS endpoint: PyJWKClient's cache plus the rotation and outage rules above."""

    def __init__(self, url: str) -> None:
        self.url = url
        # cooldown_duration=0: the forced-refresh limit is ours (see the module docstring).
        self.client = jwt.PyJWKClient(
            url,
            lifespan=JWKS_TTL_SECONDS,
            timeout=JWKS_FETCH_TIMEOUT_SECONDS,
            cooldown_duration=0,
            headers={"Accept": "application/json"},
        )
        self._lock = threading.Lock()  # guards the fields below only; never held during a fetch
        self._last_good: list[jwt.PyJWK] = []
        self._failed_at: float | None = None
        self._forced_at: float | None = None

    def find(self, kid: str | None) -> list[jwt.PyJWK]:
        """Keys matching ``kid`` (all keys when the token names none); [] when none does."""
        found = _select(self._signing_keys(refresh=False), kid)
        if not found and kid is not None and self._claim_forced_refresh():
            found = _select(self._signing_keys(refresh=True), kid)
        return found

    def _claim_forced_refresh(self) -> bool:
        now = time.monotonic()
        with self._lock:
            if self._backing_off(now):
                return False
            if self._forced_at is not None and now - self._forced_at < FORCED_REFRESH_MIN_INTERVAL_SECONDS:
                return False
            self._forced_at = now
            return True

    def _backing_off(self, now: float) -> bool:
        return self._failed_at is not None and now - self._failed_at < FAILED_FETCH_BACKOFF_SECONDS

    def _signing_keys(self, *, refresh: bool) -> list[jwt.PyJWK]:
        """The cached keys (fetched when the cache has expired or ``refresh``), or the last good ones."""
        with self._lock:
            if self._backing_off(time.monotonic()):
                return self._last_good_or_unavailable()
        try:
            keys = self.client.get_signing_keys(refresh=refresh)
        except jwt.PyJWTError as exc:  # connection errors, error statuses, documents that are not a JWKS
            logger.warning("auth.jwks_fetch_failed", extra={"url": self.url, "error": str(exc)})
            with self._lock:
                self._failed_at = time.monotonic()
                return self._last_good_or_unavailable()
        with self._lock:
            self._failed_at = None
            self._last_good = keys
        return keys

    def _last_good_or_unavailable(self) -> list[jwt.PyJWK]:
        if not self._last_good:
            raise JwksUnavailable(f"no key set fetched yet from {self.url}")
        return self._last_good


_remote: dict[str, RemoteKeySet] = {}
_remote_lock = threading.Lock()


def clear_jwks_cache() -> None:
    """Forget every fetched key set (tests, or after changing settings by hand)."""
    with _remote_lock:
        _remote.clear()


def jwks_url(public_url: str) -> str:
    """The JWKS endpoint of a Supabase project."""
    return public_url.rstrip("/") + JWKS_PATH


def remote_key_set(url: str) -> RemoteKeySet:
    """The shared key set of ``url`` (one PyJWKClient, and so one cache, per endpoint)."""
    with _remote_lock:
        key_set = _remote.get(url)
        if key_set is None:
            key_set = _remote[url] = RemoteKeySet(url)
        return key_set


def find_public_keys(*, kid: str | None) -> list[jwt.PyJWK]:
    """Keys from the configured source matching ``kid`` (all keys when the token names none).

    SUPABASE_JWKS_FILE wins over SUPABASE_PUBLIC_URL so that offline setups never touch the network.
    Returns [] when no source is configured or the key is unknown; raises JwksUnavailable when the source
    cannot be read and nothing usable is cached.
    """
    jwks_file = getattr(settings, "SUPABASE_JWKS_FILE", "") or ""
    if jwks_file:
        return _select(read_jwks_file(jwks_file).keys, kid)
    public_url = getattr(settings, "SUPABASE_PUBLIC_URL", "") or ""
    if public_url:
        return remote_key_set(jwks_url(public_url)).find(kid)
    return []


def _select(keys: list[jwt.PyJWK], kid: str | None) -> list[jwt.PyJWK]:
    if kid is None:
        return list(keys)
    return [key for key in keys if key.key_id == kid]


def read_jwks_file(path: str) -> jwt.PyJWKSet:
    """The key set in a local JWKS file, read on every call (cheaper than reasoning about a stale cache)."""
    try:
        with open(path, "rb") as handle:
            raw = handle.read(MAX_JWKS_FILE_BYTES + 1)
    except OSError as exc:
        raise JwksUnavailable(f"cannot read JWKS file {path}: {exc}") from exc
    if len(raw) > MAX_JWKS_FILE_BYTES:
        raise JwksUnavailable(f"JWKS file {path} is larger than {MAX_JWKS_FILE_BYTES} bytes")
    try:
        return jwt.PyJWKSet.from_json(raw.decode())
    # A document that is not an object has no .get (AttributeError); bad JSON or keys raise the others.
    except (ValueError, AttributeError, jwt.PyJWTError) as exc:
        raise JwksUnavailable(f"{path} is not a JWKS document: {exc}") from exc
