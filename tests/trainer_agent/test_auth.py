"""Supabase access-token authentication: every bad token is a 401 with the seed's body, never a 500."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from hypothesis import given
from hypothesis import strategies as st
from jwt.algorithms import ECAlgorithm, RSAAlgorithm
from pytest_django import Settings
from rest_framework import serializers
from rest_framework.exceptions import NotFound, PermissionDenied
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.test import APIRequestFactory
from rest_framework.views import APIView

from trainer_agent import jwks
from trainer_agent.api.errors import exception_handler, flatten_error_detail
from trainer_agent.api.whoami import WhoAmIApi
from trainer_agent.auth import (
    AuthenticatedUser,
    SupabaseJWTAuthentication,
    TokenInvalid,
    TokenMissing,
    authenticate_bearer,
    mint_token,
)

SECRET = "test-shared-secret-long-enough-for-hs256-and-for-hs512-too-0123456789"
USER_ID = uuid.UUID("3f1c2b4a-5d6e-4f70-8a9b-0c1d2e3f4a5b")
PUBLIC_URL = "https://project.supabase.test"
ISSUER = f"{PUBLIC_URL}/auth/v1"
MISSING = {"error": "Access token required"}
INVALID = {"error": "Invalid token"}
REST_FRAMEWORK_AUTH = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["trainer_agent.auth.SupabaseJWTAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["trainer_agent.auth.IsAuthenticatedUser"],
    "EXCEPTION_HANDLER": "trainer_agent.api.errors.exception_handler",
}


# --- keys and token builders ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Keys:
    ec: ec.EllipticCurvePrivateKey
    rsa: rsa.RSAPrivateKey

    def ec_public_pem(self) -> bytes:
        return self.ec.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )

    def rsa_public_pem(self) -> bytes:
        return self.rsa.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )


def new_rsa_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def new_ec_key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


@pytest.fixture(scope="module")
def keys() -> Keys:
    return Keys(ec=new_ec_key(), rsa=new_rsa_key())


def ec_jwk(key: ec.EllipticCurvePrivateKey, kid: str) -> dict[str, Any]:
    return {**ECAlgorithm.to_jwk(key.public_key(), as_dict=True), "kid": kid, "alg": "ES256", "use": "sig"}


def rsa_jwk(key: rsa.RSAPrivateKey, kid: str) -> dict[str, Any]:
    return {**RSAAlgorithm.to_jwk(key.public_key(), as_dict=True), "kid": kid, "alg": "RS256", "use": "sig"}


def claims(**overrides: Any) -> dict[str, Any]:
    """Supabase-shaped access-token claims; an override of None removes the claim."""
    now = int(time.time())
    base: dict[str, Any] = {
        "sub": str(USER_ID),
        "aud": "authenticated",
        "role": "authenticated",
        "email": "ada@example.com",
        "iat": now,
        "exp": now + 3600,
    }
    base.update(overrides)
    return {key: value for key, value in base.items() if value is not None}


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def assemble(header: dict[str, Any], payload: dict[str, Any], signature: bytes) -> str:
    return ".".join(
        [b64url(json.dumps(header).encode()), b64url(json.dumps(payload).encode()), b64url(signature)]
    )


def hmac_signed(header: bytes, payload: bytes, secret: bytes = SECRET.encode()) -> str:
    """HS256 over raw segments, signed by hand: pyjwt refuses PEM keys as HMAC secrets, an attacker does not."""
    signing_input = f"{b64url(header)}.{b64url(payload)}"
    signature = hmac.new(secret, signing_input.encode(), hashlib.sha256).digest()
    return f"{signing_input}.{b64url(signature)}"


def hmac_token(header: dict[str, Any], payload: dict[str, Any], secret: bytes) -> str:
    return hmac_signed(json.dumps(header).encode(), json.dumps(payload).encode(), secret)


def hs256(payload: dict[str, Any], secret: str = SECRET) -> str:
    return jwt.encode(payload, secret, algorithm="HS256")


def es256(keys: Keys, payload: dict[str, Any], kid: str | None = "ec-1") -> str:
    headers = {"kid": kid} if kid else None
    return jwt.encode(payload, keys.ec, algorithm="ES256", headers=headers)


def rs256(keys: Keys, payload: dict[str, Any], kid: str | None = "rsa-1") -> str:
    headers = {"kid": kid} if kid else None
    return jwt.encode(payload, keys.rsa, algorithm="RS256", headers=headers)


def replace_payload(token: str, payload: dict[str, Any]) -> str:
    header, _, signature = token.split(".")
    return ".".join([header, b64url(json.dumps(payload).encode()), signature])


def flip_middle_char(token: str) -> str:
    header, payload, signature = token.split(".")
    middle = len(payload) // 2
    replacement = "A" if payload[middle] != "A" else "B"
    return ".".join([header, payload[:middle] + replacement + payload[middle + 1 :], signature])


def write_jwks(path: Path, jwk_list: list[dict[str, Any]]) -> str:
    path.write_text(json.dumps({"keys": jwk_list}))
    return str(path)


# --- fixtures and request helpers -----------------------------------------------------------------------


@pytest.fixture(autouse=True)
def auth_settings(settings: Settings, tmp_path: Path, keys: Keys) -> Iterator[None]:
    """Shared secret + a local JWKS holding the EC and RSA keys; no issuer, DEBUG off, no network."""
    settings.DEBUG = False
    settings.SUPABASE_JWT_SECRET = SECRET
    settings.SUPABASE_PUBLIC_URL = ""
    settings.SUPABASE_JWKS_FILE = write_jwks(
        tmp_path / "jwks.json", [ec_jwk(keys.ec, "ec-1"), rsa_jwk(keys.rsa, "rsa-1")]
    )
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, **REST_FRAMEWORK_AUTH}
    jwks.clear_jwks_cache()
    yield
    jwks.clear_jwks_cache()


def whoami(authorization: str | None) -> Response:
    headers = None if authorization is None else {"Authorization": authorization}
    request = APIRequestFactory().get("/agent/whoami", headers=headers)
    response: Response = WhoAmIApi.as_view()(request)
    response.render()
    return response


def assert_unauthorized(response: Response, body: dict[str, str]) -> None:
    assert (response.status_code, json.loads(response.content)) == (401, body)
    assert response["WWW-Authenticate"] == "Bearer"


# --- valid tokens ---------------------------------------------------------------------------------------


TokenBuilder = Callable[[Keys], str]

VALID_TOKENS: dict[str, TokenBuilder] = {
    "hs256": lambda keys: hs256(claims()),
    "es256": lambda keys: es256(keys, claims()),
    "rs256": lambda keys: rs256(keys, claims()),
    "es256_without_kid": lambda keys: es256(keys, claims(), kid=None),
    "rs256_without_kid": lambda keys: rs256(keys, claims(), kid=None),
    "exp_just_past_within_leeway": lambda keys: hs256(claims(exp=int(time.time()) - 2)),
}


@pytest.mark.parametrize("build", VALID_TOKENS.values(), ids=VALID_TOKENS.keys())
def test_valid_token_identifies_the_caller(keys: Keys, build: TokenBuilder) -> None:
    """HS256 (shared secret), ES256 and RS256 (JWKS) tokens authenticate and carry id, email and role."""
    response = whoami(f"Bearer {build(keys)}")
    assert response.status_code == 200
    assert json.loads(response.content) == {
        "user_id": str(USER_ID),
        "email": "ada@example.com",
        "role": "authenticated",
    }


def test_authentication_sets_user_id_email_and_role_on_the_request() -> None:
    """Downstream code reads request.user_id (a UUID), .email and .role, as the seed's req.user."""
    token = hs256(claims())
    request = Request(APIRequestFactory().get("/", HTTP_AUTHORIZATION=f"Bearer {token}"))
    result = SupabaseJWTAuthentication().authenticate(request)
    assert result == (
        AuthenticatedUser(user_id=USER_ID, email="ada@example.com", role="authenticated"),
        token,
    )
    attributes = vars(request._request)
    assert (attributes["user_id"], attributes["email"], attributes["role"]) == (
        USER_ID,
        "ada@example.com",
        "authenticated",
    )


def test_scheme_is_case_insensitive() -> None:
    """`bearer <token>` is the same scheme as `Bearer <token>`."""
    assert whoami(f"bearer {hs256(claims())}").status_code == 200


def test_authenticated_user_counts_as_a_drf_user() -> None:
    """AuthenticatedUser looks like a user to DRF (is_authenticated) and throttling (pk)."""
    user = authenticate_bearer(f"Bearer {hs256(claims(email=None, role=None))}")
    assert user.is_authenticated and not user.is_anonymous
    assert (user.pk, user.id, user.email, user.role) == (str(USER_ID), str(USER_ID), None, None)


# --- missing tokens -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "authorization",
    [None, "", "   ", "Token x", "Basic dXNlcjpwYXNz", "Bearer", "Bearer ", "Bearer a b", "Bearertoken"],
)
def test_missing_or_malformed_header_is_access_token_required(authorization: str | None) -> None:
    """No usable `Bearer <token>` header answers 401 "Access token required"."""
    assert_unauthorized(whoami(authorization), MISSING)
    with pytest.raises(TokenMissing):
        authenticate_bearer(authorization)


# --- invalid tokens -------------------------------------------------------------------------------------


def _key_confusion(pem: Callable[[Keys], bytes], kid: str) -> TokenBuilder:
    return lambda keys: hmac_token({"alg": "HS256", "typ": "JWT", "kid": kid}, claims(), pem(keys))


INVALID_TOKENS: dict[str, TokenBuilder] = {
    "alg_none": lambda keys: assemble({"alg": "none", "typ": "JWT"}, claims(), b""),
    "alg_none_with_kid": lambda keys: assemble({"alg": "none", "kid": "ec-1"}, claims(), b""),
    "hs256_with_rsa_public_pem_as_secret": _key_confusion(Keys.rsa_public_pem, "rsa-1"),
    "hs256_with_ec_public_pem_as_secret": _key_confusion(Keys.ec_public_pem, "ec-1"),
    "hs256_wrong_secret": lambda keys: hs256(claims(), secret="another-secret-that-is-long-enough-too"),
    "hs512_with_the_secret": lambda keys: jwt.encode(claims(), SECRET, algorithm="HS512"),
    "expired": lambda keys: hs256(claims(iat=int(time.time()) - 7200, exp=int(time.time()) - 3600)),
    "expired_es256": lambda keys: es256(keys, claims(exp=int(time.time()) - 3600)),
    "nbf_in_future": lambda keys: hs256(claims(nbf=int(time.time()) + 3600)),
    "iat_in_future": lambda keys: hs256(claims(iat=int(time.time()) + 3600, exp=int(time.time()) + 7200)),
    "exp_missing": lambda keys: hs256(claims(exp=None)),
    "exp_not_a_number": lambda keys: hs256(claims(exp="tomorrow")),
    "aud_wrong": lambda keys: hs256(claims(aud="anon")),
    "aud_missing": lambda keys: hs256(claims(aud=None)),
    "sub_missing": lambda keys: rs256(keys, claims(sub=None)),
    "sub_not_uuid": lambda keys: hs256(claims(sub="user-42")),
    "sub_not_string": lambda keys: hs256(claims(sub=42)),
    "payload_char_flipped": lambda keys: flip_middle_char(es256(keys, claims())),
    "payload_swapped_for_other_user": lambda keys: replace_payload(
        rs256(keys, claims()), claims(sub=str(uuid.uuid4()))
    ),
    "unknown_kid": lambda keys: es256(Keys(ec=new_ec_key(), rsa=keys.rsa), claims(), kid="rotated-away"),
    "known_kid_other_key": lambda keys: es256(Keys(ec=new_ec_key(), rsa=keys.rsa), claims(), kid="ec-1"),
    "rs256_naming_ec_key": lambda keys: rs256(keys, claims(), kid="ec-1"),
    "es256_naming_rsa_key": lambda keys: es256(keys, claims(), kid="rsa-1"),
    "es384": lambda keys: jwt.encode(claims(), new_ec_key_384(), algorithm="ES384", headers={"kid": "ec-1"}),
    "kid_not_a_string": lambda keys: assemble({"alg": "ES256", "kid": 7}, claims(), b"signature"),
    "truncated_signature": lambda keys: rs256(keys, claims())[:-6],
    "truncated_to_two_segments": lambda keys: ".".join(hs256(claims()).split(".")[:2]),
    "truncated_mid_header": lambda keys: hs256(claims())[:12],
    "header_not_json": lambda keys: f"{b64url(b'not json')}.{b64url(b'{}')}.sig",
    "payload_not_json": lambda keys: hmac_signed(b'{"alg":"HS256"}', b'{"sub": "unterminated'),
    "payload_a_json_list": lambda keys: hmac_signed(b'{"alg":"HS256"}', b"[1, 2]"),
    "random_string": lambda keys: "not-a-jwt",
    "three_empty_segments": lambda keys: "..",
    "oversized": lambda keys: hs256(claims(padding="x" * 10_000)),
}


def new_ec_key_384() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP384R1())


@pytest.mark.parametrize("build", INVALID_TOKENS.values(), ids=INVALID_TOKENS.keys())
def test_untrustworthy_token_is_invalid_token(keys: Keys, build: TokenBuilder) -> None:
    """Forged, expired, mis-addressed, tampered or malformed tokens answer 401 "Invalid token"."""
    token = build(keys)
    assert_unauthorized(whoami(f"Bearer {token}"), INVALID)
    with pytest.raises(TokenInvalid):
        authenticate_bearer(f"Bearer {token}")


def test_key_confusion_fails_even_without_a_shared_secret(settings: Settings, keys: Keys) -> None:
    """With no HS256 secret configured, an HS256 token signed with a JWKS public key is still refused."""
    settings.SUPABASE_JWT_SECRET = ""
    token = hmac_token({"alg": "HS256", "kid": "rsa-1"}, claims(), keys.rsa_public_pem())
    assert_unauthorized(whoami(f"Bearer {token}"), INVALID)
    assert whoami(f"Bearer {rs256(keys, claims())}").status_code == 200


def test_jwks_with_private_key_material_is_not_used(settings: Settings, tmp_path: Path, keys: Keys) -> None:
    """A JWKS entry carrying a private part is treated as misconfiguration, not as a verification key."""
    private_jwk = {**json.loads(ECAlgorithm.to_jwk(keys.ec)), "kid": "ec-1", "alg": "ES256"}
    settings.SUPABASE_JWKS_FILE = write_jwks(tmp_path / "private.json", [private_jwk])
    assert_unauthorized(whoami(f"Bearer {es256(keys, claims())}"), INVALID)


@pytest.mark.parametrize("content", ["", "not json", '{"keys": "none"}', "[]"])
def test_unreadable_jwks_file_gives_invalid_token(
    settings: Settings, tmp_path: Path, keys: Keys, content: str
) -> None:
    """A broken or missing JWKS file refuses asymmetric tokens with 401, never a 500."""
    path = tmp_path / "broken.json"
    path.write_text(content)
    settings.SUPABASE_JWKS_FILE = str(path)
    assert_unauthorized(whoami(f"Bearer {es256(keys, claims())}"), INVALID)
    settings.SUPABASE_JWKS_FILE = str(tmp_path / "does-not-exist.json")
    assert_unauthorized(whoami(f"Bearer {es256(keys, claims())}"), INVALID)


def test_asymmetric_token_without_any_key_source_is_invalid(settings: Settings, keys: Keys) -> None:
    """With neither a JWKS file nor a project URL, ES256/RS256 tokens cannot be verified: 401."""
    settings.SUPABASE_JWKS_FILE = ""
    assert_unauthorized(whoami(f"Bearer {rs256(keys, claims())}"), INVALID)


# --- issuer ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("iss", "expected_status"),
    [(ISSUER, 200), (f"{ISSUER}/", 401), ("https://evil.example/auth/v1", 401), (None, 401)],
)
def test_issuer_must_be_the_projects_auth_url(
    settings: Settings, keys: Keys, iss: str | None, expected_status: int
) -> None:
    """With SUPABASE_PUBLIC_URL set, `iss` must be exactly `<url>/auth/v1` (JWKS file: no network)."""
    settings.SUPABASE_PUBLIC_URL = PUBLIC_URL
    for token in (hs256(claims(iss=iss)), es256(keys, claims(iss=iss))):
        response = whoami(f"Bearer {token}")
        assert response.status_code == expected_status
        if expected_status == 401:
            assert_unauthorized(response, INVALID)


# --- the development secret -----------------------------------------------------------------------------


def test_dev_secret_works_only_while_debug_is_on_and_no_secret_is_set(settings: Settings) -> None:
    """DEV_JWT_SECRET signs valid tokens only when DEBUG is on and SUPABASE_JWT_SECRET is empty."""
    token = hs256(claims(), secret=settings.DEV_JWT_SECRET)
    settings.SUPABASE_JWT_SECRET = ""
    settings.DEBUG = True
    assert whoami(f"Bearer {token}").status_code == 200
    settings.DEBUG = False
    assert_unauthorized(whoami(f"Bearer {token}"), INVALID)
    settings.DEBUG = True
    settings.SUPABASE_JWT_SECRET = SECRET
    assert_unauthorized(whoami(f"Bearer {token}"), INVALID)


def test_mint_token_round_trips_with_issuer(settings: Settings) -> None:
    """mint_token makes a Supabase-shaped HS256 token that the verifier accepts, with iss when configured."""
    settings.SUPABASE_PUBLIC_URL = PUBLIC_URL
    token = mint_token(user_id=USER_ID, email="ada@example.com", hours=1)
    payload = jwt.decode(token, SECRET, algorithms=["HS256"], audience="authenticated")
    assert (payload["iss"], payload["role"], payload["exp"] - payload["iat"]) == (
        ISSUER,
        "authenticated",
        3600,
    )
    assert authenticate_bearer(f"Bearer {token}").user_id == USER_ID


# --- random input ---------------------------------------------------------------------------------------


jwt_like = st.from_regex(r"[A-Za-z0-9_\-]{0,60}\.[A-Za-z0-9_\-]{0,60}\.[A-Za-z0-9_\-]{0,60}", fullmatch=True)
headers = st.one_of(
    st.text(),
    st.text().map(lambda text: f"Bearer {text}"),
    jwt_like.map(lambda token: f"Bearer {token}"),
    st.binary(max_size=200).map(lambda raw: f"Bearer {b64url(raw)}.{b64url(raw)}.{b64url(raw)}"),
)


@given(authorization=headers)
def test_arbitrary_headers_answer_401_never_500(authorization: str) -> None:
    """Whatever the Authorization header holds, the answer is one of the two 401 bodies."""
    response = whoami(authorization)
    assert response.status_code == 401
    assert json.loads(response.content) in (MISSING, INVALID)
    with pytest.raises((TokenMissing, TokenInvalid)):
        authenticate_bearer(authorization)


# --- JWKS over HTTP (a local server; no external network) ----------------------------------------------


class JwksEndpoint:
    """State of the local JWKS server: the document it serves, its status code, and how often it was hit."""

    def __init__(self) -> None:
        self.document: dict[str, Any] = {"keys": []}
        self.status = 200
        self.hits = 0
        self.url = ""
        self.arrived = threading.Event()  # set by every request
        self.hold: threading.Event | None = None  # when set, requests wait for it before answering


@pytest.fixture
def jwks_endpoint(settings: Settings) -> Iterator[JwksEndpoint]:
    endpoint = JwksEndpoint()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path != jwks.JWKS_PATH:
                self.send_error(404)
                return
            endpoint.hits += 1
            endpoint.arrived.set()
            if endpoint.hold is not None:
                endpoint.hold.wait(10)
            body = json.dumps(endpoint.document).encode()
            self.send_response(endpoint.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    endpoint.url = f"http://127.0.0.1:{server.server_address[1]}"
    settings.SUPABASE_JWKS_FILE = ""
    settings.SUPABASE_PUBLIC_URL = endpoint.url
    try:
        yield endpoint
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> FakeClock:
    """Moves the monotonic clock the JWKS caches read: PyJWT's (key-set lifespan) and jwks.py's."""
    fake = FakeClock()
    for module in (jwks, jwt.api_jwk, jwt.jwk_set_cache, jwt.jwks_client):
        monkeypatch.setattr(module, "time", SimpleNamespace(monotonic=fake))
    return fake


def test_jwks_is_fetched_once_and_cached(jwks_endpoint: JwksEndpoint, keys: Keys, clock: FakeClock) -> None:
    """Keys come from <SUPABASE_PUBLIC_URL>/auth/v1/.well-known/jwks.json and are reused until the TTL ends."""
    jwks_endpoint.document = {"keys": [ec_jwk(keys.ec, "ec-1")]}
    issuer = f"{jwks_endpoint.url}/auth/v1"
    token = es256(keys, claims(iss=issuer))
    assert whoami(f"Bearer {token}").status_code == 200
    assert whoami(f"Bearer {token}").status_code == 200
    assert jwks_endpoint.hits == 1
    clock.now += jwks.JWKS_TTL_SECONDS + 1  # PyJWT's cache expires strictly after its lifespan
    assert whoami(f"Bearer {token}").status_code == 200
    assert jwks_endpoint.hits == 2


def test_unknown_kid_refetches_once_for_key_rotation(
    jwks_endpoint: JwksEndpoint, keys: Keys, clock: FakeClock
) -> None:
    """A token signed with a newly rotated key is accepted after one refetch; unknown kids cannot force more."""
    issuer = f"{jwks_endpoint.url}/auth/v1"
    jwks_endpoint.document = {"keys": [rsa_jwk(keys.rsa, "old")]}
    assert whoami(f"Bearer {rs256(keys, claims(iss=issuer), kid='old')}").status_code == 200
    assert jwks_endpoint.hits == 1

    rotated = new_ec_key()
    jwks_endpoint.document = {"keys": [ec_jwk(rotated, "new")]}
    rotated_token = jwt.encode(claims(iss=issuer), rotated, algorithm="ES256", headers={"kid": "new"})
    assert whoami(f"Bearer {rotated_token}").status_code == 200
    assert jwks_endpoint.hits == 2

    assert_unauthorized(whoami(f"Bearer {rs256(keys, claims(iss=issuer), kid='old')}"), INVALID)
    assert_unauthorized(whoami(f"Bearer {es256(keys, claims(iss=issuer), kid='invented')}"), INVALID)
    assert jwks_endpoint.hits == 2
    clock.now += jwks.FORCED_REFRESH_MIN_INTERVAL_SECONDS
    assert_unauthorized(whoami(f"Bearer {es256(keys, claims(iss=issuer), kid='invented')}"), INVALID)
    assert jwks_endpoint.hits == 3


def test_a_slow_refetch_does_not_hold_up_tokens_whose_key_is_cached(
    jwks_endpoint: JwksEndpoint, keys: Keys
) -> None:
    """While one request waits on the endpoint (a refetch for an unknown kid), a token whose key is cached is
    verified at once: nothing is locked during a fetch."""
    jwks_endpoint.document = {"keys": [ec_jwk(keys.ec, "ec-1")]}
    issuer = f"{jwks_endpoint.url}/auth/v1"
    token = es256(keys, claims(iss=issuer))
    assert whoami(f"Bearer {token}").status_code == 200
    jwks_endpoint.arrived.clear()
    jwks_endpoint.hold = threading.Event()
    unknown_kid = f"Bearer {es256(keys, claims(iss=issuer), kid='rotated')}"
    waiting = threading.Thread(target=whoami, args=(unknown_kid,))
    waiting.start()
    try:
        assert jwks_endpoint.arrived.wait(5)
        started = time.monotonic()
        assert whoami(f"Bearer {token}").status_code == 200
        elapsed = time.monotonic() - started
    finally:
        jwks_endpoint.hold.set()
        waiting.join(10)
    assert elapsed < 1.0
    assert jwks_endpoint.hits == 2


def test_jwks_outage_keeps_the_cached_keys(jwks_endpoint: JwksEndpoint, keys: Keys, clock: FakeClock) -> None:
    """When a refetch fails after the TTL, the keys already fetched keep verifying tokens."""
    jwks_endpoint.document = {"keys": [ec_jwk(keys.ec, "ec-1")]}
    token = es256(keys, claims(iss=f"{jwks_endpoint.url}/auth/v1"))
    assert whoami(f"Bearer {token}").status_code == 200
    jwks_endpoint.status = 503
    jwks_endpoint.document = {"error": "down"}
    clock.now += jwks.JWKS_TTL_SECONDS + 1  # PyJWT's cache expires strictly after its lifespan
    assert whoami(f"Bearer {token}").status_code == 200
    assert jwks_endpoint.hits == 2


@pytest.mark.parametrize(("status", "document"), [(500, {"keys": []}), (200, {"no": "keys"}), (200, [])])
def test_bad_jwks_response_gives_invalid_token(
    jwks_endpoint: JwksEndpoint, keys: Keys, status: int, document: Any
) -> None:
    """An error status or a non-JWKS body from the endpoint refuses the token with 401."""
    jwks_endpoint.status = status
    jwks_endpoint.document = document
    token = es256(keys, claims(iss=f"{jwks_endpoint.url}/auth/v1"))
    assert_unauthorized(whoami(f"Bearer {token}"), INVALID)


def test_unreachable_jwks_url_gives_invalid_token_and_spares_hs256(settings: Settings, keys: Keys) -> None:
    """A JWKS endpoint nobody listens on answers 401 for ES256 tokens; HS256 tokens never need it."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed_url = f"http://127.0.0.1:{probe.getsockname()[1]}"
    settings.SUPABASE_JWKS_FILE = ""
    settings.SUPABASE_PUBLIC_URL = closed_url
    issuer = f"{closed_url}/auth/v1"
    assert_unauthorized(whoami(f"Bearer {es256(keys, claims(iss=issuer))}"), INVALID)
    assert whoami(f"Bearer {hs256(claims(iss=issuer))}").status_code == 200


# --- the exception handler ------------------------------------------------------------------------------


class MessageApi(APIView):
    authentication_classes: list[type] = []
    permission_classes: list[type] = []

    class InputSerializer(serializers.Serializer):
        message = serializers.CharField()
        sets = serializers.ListField(child=serializers.IntegerField(), required=False)

    def post(self, request: Request) -> Response:
        self.InputSerializer(data=request.data).is_valid(raise_exception=True)
        return Response({"ok": True})


def call_message_api(body: dict[str, Any]) -> Response:
    response: Response = MessageApi.as_view()(APIRequestFactory().post("/", body, format="json"))
    response.render()
    return response


def test_validation_errors_become_one_detail_string_naming_fields() -> None:
    """400 bodies are {"detail": "<field>: <message>"}, not DRF's per-field dict."""
    response = call_message_api({})
    assert (response.status_code, json.loads(response.content)) == (
        400,
        {"detail": "message: This field is required."},
    )
    response = call_message_api({"message": "", "sets": [1, "x"]})
    assert json.loads(response.content) == {
        "detail": "message: This field may not be blank. sets.1: A valid integer is required."
    }


def test_other_api_errors_keep_status_and_use_detail_string() -> None:
    """NotFound and PermissionDenied keep their status with {"detail": "..."}; unknown errors are not handled."""
    not_found = exception_handler(NotFound(), {})
    denied = exception_handler(PermissionDenied("Not yours."), {})
    assert not_found is not None and denied is not None
    assert (not_found.status_code, not_found.data) == (404, {"detail": "Not found."})
    assert (denied.status_code, denied.data) == (403, {"detail": "Not yours."})
    assert exception_handler(RuntimeError("bug"), {}) is None


def test_token_errors_raised_directly_map_to_the_seed_bodies() -> None:
    """TokenMissing / TokenInvalid raised by any view become the two 401 bodies with WWW-Authenticate."""
    for exc, body in ((TokenMissing(), MISSING), (TokenInvalid(), INVALID)):
        response = exception_handler(exc, {})
        assert response is not None
        assert (response.status_code, response.data, response["WWW-Authenticate"]) == (401, body, "Bearer")


def test_nested_errors_name_the_item_path() -> None:
    """Nested list errors name their index, so the client can find the bad item."""
    detail = {"exercises": [{}, {"name": ["This field is required."]}], "non_field_errors": ["Bad mix."]}
    assert flatten_error_detail(detail) == "exercises.1.name: This field is required. Bad mix."
