"""Supabase access-token authentication: `Authorization: Bearer <jwt>` → AuthenticatedUser.

HS256 tokens are verified with the project's shared secret only; ES256 / RS256 tokens with the public key of
the matching type from the JWKS. The algorithm is pinned per key type so that a public key can never be used
as an HMAC secret (key confusion) and `alg: none` is never accepted.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, ClassVar

import jwt
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from rest_framework.authentication import BaseAuthentication
from rest_framework.exceptions import AuthenticationFailed
from rest_framework.permissions import BasePermission
from rest_framework.request import Request

from trainer_agent import jwks

if TYPE_CHECKING:
    # Imported for typing only: rest_framework.views reads the auth settings at import time (cycle).
    from rest_framework.views import APIView

logger = logging.getLogger(__name__)

ACCESS_TOKEN_REQUIRED = "Access token required"
INVALID_TOKEN = "Invalid token"
AUDIENCE = "authenticated"
LEEWAY_SECONDS = 10
# Real Supabase access tokens are well under 2 KB; refuse absurd inputs before any parsing.
MAX_TOKEN_LENGTH = 8192
SHARED_SECRET_ALGORITHM = "HS256"


def _is_p256_public_key(key: Any) -> bool:
    return isinstance(key, ec.EllipticCurvePublicKey) and isinstance(key.curve, ec.SECP256R1)


def _is_rsa_public_key(key: Any) -> bool:
    return isinstance(key, rsa.RSAPublicKey)


# alg → the kind of key a JWKS entry must hold to verify it: a public key (a private part in a JWKS means a
# misconfigured file) of the algorithm's type and curve.
PUBLIC_KEY_ALGORITHMS: dict[str, Callable[[Any], bool]] = {
    "ES256": _is_p256_public_key,
    "RS256": _is_rsa_public_key,
}


class AuthError(Exception):
    """Base of the two ways authentication fails; `message` is the 401 body's `error` value."""

    message: ClassVar[str] = INVALID_TOKEN


class TokenMissing(AuthError):
    """No usable `Authorization: Bearer <token>` header."""

    message = ACCESS_TOKEN_REQUIRED


class TokenInvalid(AuthError):
    """A token was presented but cannot be trusted (signature, claims, expiry, unknown key, …)."""

    message = INVALID_TOKEN


@dataclass(frozen=True)
class AuthenticatedUser:
    """The caller behind a verified access token. Users live in Supabase; we only know their id."""

    user_id: uuid.UUID
    email: str | None
    role: str | None

    is_authenticated: ClassVar[bool] = True
    is_anonymous: ClassVar[bool] = False

    @property
    def pk(self) -> str:
        return str(self.user_id)

    @property
    def id(self) -> str:
        return str(self.user_id)


def expected_issuer() -> str | None:
    """`iss` every token must carry, or None when no Supabase project URL is configured."""
    public_url = getattr(settings, "SUPABASE_PUBLIC_URL", "") or ""
    return f"{public_url.rstrip('/')}/auth/v1" if public_url else None


def shared_secret() -> str | None:
    """HS256 secret: SUPABASE_JWT_SECRET, else the dev secret while DEBUG is on, else None."""
    secret = getattr(settings, "SUPABASE_JWT_SECRET", "") or ""
    if secret:
        return str(secret)
    if settings.DEBUG:
        return str(getattr(settings, "DEV_JWT_SECRET", "") or "") or None
    return None


def extract_bearer_token(authorization_header: str | None) -> str:
    """The token of `Bearer <token>`; anything else (absent, other scheme, extra parts) is TokenMissing."""
    if not authorization_header:
        raise TokenMissing
    parts = authorization_header.split()
    if len(parts) != 2 or parts[0].lower() != "bearer":
        raise TokenMissing
    return parts[1]


def authenticate_bearer(authorization_header: str | None) -> AuthenticatedUser:
    """Verify an Authorization header value. Raises only TokenMissing or TokenInvalid."""
    token = extract_bearer_token(authorization_header)
    try:
        claims = verify_access_token(token)
        return _user_from_claims(claims)
    except TokenInvalid:
        raise
    except Exception as exc:  # any decoding/crypto/JWKS failure is the caller's bad token, never a 500
        logger.debug("auth.token_rejected", extra={"reason": f"{type(exc).__name__}: {exc}"})
        raise TokenInvalid from exc


def verify_access_token(token: str) -> dict[str, Any]:
    """Claims of a verified token. Raises TokenInvalid or a jwt/JWKS error for anything untrustworthy."""
    if len(token) > MAX_TOKEN_LENGTH:
        raise TokenInvalid
    header = jwt.get_unverified_header(token)
    algorithm = header.get("alg")
    if algorithm == SHARED_SECRET_ALGORITHM:
        secret = shared_secret()
        if not secret:
            raise TokenInvalid
        return _decode(token, secret, algorithm)
    if isinstance(algorithm, str) and algorithm in PUBLIC_KEY_ALGORITHMS:
        kid = header.get("kid")
        candidates = [
            key
            for key in jwks.find_public_keys(kid=kid if isinstance(kid, str) else None)
            if _key_fits_algorithm(key, algorithm)
        ]
        if not candidates:
            raise TokenInvalid
        last_error: Exception = TokenInvalid()
        for candidate in candidates:
            try:
                return _decode(token, candidate.key, algorithm)
            except jwt.InvalidSignatureError as exc:
                last_error = exc
        raise last_error
    raise TokenInvalid


def _key_fits_algorithm(key: jwt.PyJWK, algorithm: str) -> bool:
    """The token's algorithm is the key's (its `alg`, else the one its type implies) and the key is of that
    algorithm's kind."""
    return (
        key.algorithm_name == algorithm
        and key.public_key_use in (None, "sig")
        and PUBLIC_KEY_ALGORITHMS[algorithm](key.key)
    )


def _decode(token: str, key: Any, algorithm: str) -> dict[str, Any]:
    issuer = expected_issuer()
    required = ["exp", "sub", "aud"] + (["iss"] if issuer else [])
    claims: dict[str, Any] = jwt.decode(
        token,
        key,
        algorithms=[algorithm],
        audience=AUDIENCE,
        issuer=issuer,
        leeway=LEEWAY_SECONDS,
        options={"require": required},
    )
    return claims


def _user_from_claims(claims: dict[str, Any]) -> AuthenticatedUser:
    sub = claims.get("sub")
    if not isinstance(sub, str):
        raise TokenInvalid
    try:
        user_id = uuid.UUID(sub)
    except ValueError as exc:
        raise TokenInvalid from exc
    email = claims.get("email")
    role = claims.get("role")
    return AuthenticatedUser(
        user_id=user_id,
        email=email if isinstance(email, str) and email else None,
        role=role if isinstance(role, str) and role else None,
    )


class SupabaseJWTAuthentication(BaseAuthentication):
    """DRF authentication by Supabase access token; the request also carries user_id, email and role."""

    def authenticate(self, request: Request) -> tuple[AuthenticatedUser, str] | None:
        header = request.META.get("HTTP_AUTHORIZATION")
        try:
            user = authenticate_bearer(header)
        except TokenMissing:
            # No credentials: let the permission class answer NotAuthenticated (→ "Access token required").
            return None
        except TokenInvalid as exc:
            raise AuthenticationFailed(INVALID_TOKEN) from exc
        django_request = request._request
        # Plain attributes on the HttpRequest, so code below DRF (and the seed's `req.user.id`) can read them.
        setattr(django_request, "user_id", user.user_id)  # noqa: B010
        setattr(django_request, "email", user.email)  # noqa: B010
        setattr(django_request, "role", user.role)  # noqa: B010
        return user, extract_bearer_token(header)

    def authenticate_header(self, request: Request) -> str:
        # Any value here makes DRF answer 401 rather than 403.
        return "Bearer"


class IsAuthenticatedUser(BasePermission):
    """Only callers with a verified access token."""

    def has_permission(self, request: Request, view: APIView) -> bool:
        return isinstance(request.user, AuthenticatedUser)


class SigningSecretUnavailable(ImproperlyConfigured):
    """mint_token has no secret: SUPABASE_JWT_SECRET is unset and DEBUG is off."""


def mint_token(
    *,
    user_id: uuid.UUID,
    email: str | None = None,
    hours: float = 24,
    secret: str | None = None,
) -> str:
    """An HS256 access token shaped like Supabase's, for local use (demo, tests, curl)."""
    signing_secret = secret or shared_secret()
    if not signing_secret:
        raise SigningSecretUnavailable(
            "No JWT signing secret: set SUPABASE_JWT_SECRET, or DEBUG=1 to use the built-in development secret."
        )
    if hours <= 0:
        raise ValueError("hours must be positive")
    now = datetime.now(tz=UTC)
    claims: dict[str, Any] = {
        "sub": str(user_id),
        "aud": AUDIENCE,
        "role": "authenticated",
        "iat": int(now.timestamp()),
        "exp": int((now + timedelta(hours=hours)).timestamp()),
    }
    if email:
        claims["email"] = email
    issuer = expected_issuer()
    if issuer:
        claims["iss"] = issuer
    return jwt.encode(claims, signing_secret, algorithm=SHARED_SECRET_ALGORITHM)
