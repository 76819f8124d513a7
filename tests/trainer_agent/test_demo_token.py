"""manage.py demo_token: a usable token for the demo user, and a clear refusal without a signing secret."""

from __future__ import annotations

import json
import uuid
from io import StringIO

import jwt
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from pytest_django import Settings
from rest_framework.response import Response
from rest_framework.test import APIRequestFactory

from datasources_app.demo import DEMO_USER_EMAIL, DEMO_USER_ID
from trainer_agent.api.whoami import WhoAmIApi


@pytest.fixture(autouse=True)
def local_settings(settings: Settings) -> None:
    """A local DEBUG run: no Supabase secret, no project URL, our exception handler installed."""
    settings.DEBUG = True
    settings.SUPABASE_JWT_SECRET = ""
    settings.SUPABASE_PUBLIC_URL = ""
    settings.SUPABASE_JWKS_FILE = ""
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "EXCEPTION_HANDLER": "trainer_agent.api.errors.exception_handler",
    }


def run_demo_token(*args: str) -> list[str]:
    out = StringIO()
    call_command("demo_token", *args, stdout=out)
    return out.getvalue().splitlines()


def whoami(token: str) -> Response:
    request = APIRequestFactory().get("/agent/whoami", HTTP_AUTHORIZATION=f"Bearer {token}")
    response: Response = WhoAmIApi.as_view()(request)
    response.render()
    return response


def test_printed_token_authenticates_as_the_demo_user() -> None:
    """The first output line is a token the API accepts as the demo user."""
    token = run_demo_token()[0]
    response = whoami(token)
    assert response.status_code == 200
    assert json.loads(response.content) == {
        "user_id": str(DEMO_USER_ID),
        "email": DEMO_USER_EMAIL,
        "role": "authenticated",
    }


def test_user_and_hours_options(settings: Settings) -> None:
    """--user signs for another id and --hours sets the lifetime; the real secret is used when set."""
    settings.SUPABASE_JWT_SECRET = "project-secret-for-the-demo-token-test-0123456789"
    other = uuid.uuid4()
    token = run_demo_token("--user", str(other), "--hours", "2")[0]
    claims = jwt.decode(token, settings.SUPABASE_JWT_SECRET, algorithms=["HS256"], audience="authenticated")
    assert (claims["sub"], claims["exp"] - claims["iat"], "email" in claims) == (str(other), 7200, False)
    assert whoami(token).status_code == 200


def test_curl_lines_carry_the_token_and_port() -> None:
    """--curl prints ready whoami and chat curl lines with the token and the chosen port."""
    lines = run_demo_token("--curl", "--port", "8123")
    token = lines[0]
    curl_lines = [line for line in lines if line.startswith("curl ")]
    assert len(curl_lines) == 2
    whoami_line, chat_line = curl_lines
    assert whoami_line == f'curl -s -H "Authorization: Bearer {token}" http://127.0.0.1:8123/agent/whoami'
    assert chat_line == (
        f'curl -s -H "Authorization: Bearer {token}" -H "Content-Type: application/json" '
        '-d \'{"message":"Give me a quick chest workout"}\' http://127.0.0.1:8123/agent/chat'
    )


def test_refuses_without_a_secret_when_debug_is_off(settings: Settings) -> None:
    """With DEBUG off and no SUPABASE_JWT_SECRET there is nothing to sign with: a clear CommandError."""
    settings.DEBUG = False
    with pytest.raises(CommandError, match="SUPABASE_JWT_SECRET"):
        run_demo_token()


def test_refuses_non_positive_hours() -> None:
    """A token that is already expired is never printed."""
    with pytest.raises(CommandError, match="--hours"):
        run_demo_token("--hours", "0")
