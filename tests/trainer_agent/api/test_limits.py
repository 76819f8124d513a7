"""Request size (413), media type (415) and Accept handling, for any request and under WSGI and ASGI."""

from __future__ import annotations

import json
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from asgiref.testing import ApplicationCommunicator
from django.core.handlers.asgi import ASGIHandler
from django.test import Client
from pytest_django import Settings

from tests.trainer_agent.api.support import ApiUser, row_counts
from trainer_agent.llm.scripted import ScriptedProvider

LIMIT = 64 * 1024
TOO_LARGE = {"detail": "Request body too large: the limit is 65536 bytes (64 KB)."}


def asgi_post(path: str, chunks: list[bytes], headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
    """POST through Django's ASGI handler with the body in several chunks and no Content-Length (chunked)."""
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "server": ("testserver", 80),
        "client": ("127.0.0.1", 50000),
        "headers": [(name.lower().encode(), value.encode()) for name, value in headers.items()],
    }

    async def run() -> tuple[int, dict[str, str], bytes]:
        communicator = ApplicationCommunicator(ASGIHandler(), scope)
        for index, chunk in enumerate(chunks):
            await communicator.send_input(
                {"type": "http.request", "body": chunk, "more_body": index < len(chunks) - 1}
            )
        start = await communicator.receive_output(timeout=10)
        body = b""
        while True:
            message = await communicator.receive_output(timeout=10)
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        response_headers = {k.decode().lower(): v.decode() for k, v in start["headers"]}
        return start["status"], response_headers, body

    return async_to_sync(run)()


@pytest.mark.django_db
def test_a_body_over_64kb_is_413_json_and_writes_nothing(alice: ApiUser) -> None:
    """A chat body over MAX_REQUEST_BYTES is refused with a JSON 413 before it is parsed."""
    before = row_counts()
    response = alice.post_json("/agent/chat", {"message": "x" * (LIMIT + 10)})
    assert response.status_code == 413
    assert response.json() == TOO_LARGE
    assert row_counts() == before


@pytest.mark.django_db
def test_a_body_of_exactly_64kb_is_not_refused_for_size(alice: ApiUser) -> None:
    """The limit is inclusive: 65536 bytes pass the size check (and then fail validation as too long a message)."""
    envelope = len(json.dumps({"message": ""}))
    response = alice.post_json("/agent/chat", {"message": "x" * (LIMIT - envelope)})
    assert response.status_code == 400
    assert "at most 8000 characters" in response.json()["detail"]


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", "/agent/whoami"),
        ("PUT", "/user-settings"),
        ("POST", "/admin/login/"),
        ("POST", "/no/such/page"),
    ],
)
@pytest.mark.django_db
def test_any_request_over_the_limit_is_413_even_without_a_token(method: str, path: str) -> None:
    """The size limit holds for every URL, before authentication or routing."""
    response = Client().generic(method, path, data=b"a" * (LIMIT + 1), content_type="text/plain")
    assert response.status_code == 413
    assert response.json() == TOO_LARGE


@pytest.mark.django_db
def test_a_declared_content_length_over_the_limit_is_413(alice: ApiUser) -> None:
    """A Content-Length over the limit is refused without reading the body."""
    response = alice.send("POST", "/agent/chat", b'{"message": "hi"}', CONTENT_LENGTH=str(LIMIT + 1))
    assert response.status_code == 413


@pytest.mark.parametrize("value", ["abc", "-5", "1e3"])
@pytest.mark.django_db
def test_an_invalid_content_length_is_400(alice: ApiUser, value: str) -> None:
    """A Content-Length that is not a non-negative integer is a 400, not a crash."""
    response = alice.send("POST", "/agent/chat", b'{"message": "hi"}', CONTENT_LENGTH=value)
    assert response.status_code == 400
    assert "Content-Length" in response.json()["detail"]


@pytest.mark.django_db(transaction=True)
def test_a_chunked_body_over_the_limit_is_413_under_asgi(alice: ApiUser) -> None:
    """Without Content-Length the bytes actually received count: 70 KB in chunks is 413."""
    status, headers, body = asgi_post(
        "/agent/chat",
        [b'{"message": "' + b"x" * 10_000] * 7 + [b'"}'],
        {"authorization": f"Bearer {alice.token}", "content-type": "application/json"},
    )
    assert status == 413
    assert headers["content-type"] == "application/json"
    assert json.loads(body) == TOO_LARGE


@pytest.mark.django_db(transaction=True)
def test_a_small_chunked_body_is_parsed_under_asgi(alice: ApiUser) -> None:
    """A chunked body within the limit reaches the parser: its content is validated like any other."""
    status, _, body = asgi_post(
        "/agent/chat",
        [b'{"mess', b'age": 5}'],
        {"authorization": f"Bearer {alice.token}", "content-type": "application/json"},
    )
    assert status == 400
    assert json.loads(body) == {"detail": "message: must be a string, got a number."}


@pytest.mark.parametrize("accept", ["text/event-stream", "text/html", "application/xml", "image/png"])
@pytest.mark.django_db
def test_an_unmet_accept_header_gets_json_instead_of_406(alice: ApiUser, accept: str) -> None:
    """Content negotiation falls back to JSON rather than refusing the client."""
    response = alice.get("/agent/sessions", HTTP_ACCEPT=accept)
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"


@pytest.mark.django_db
def test_errors_are_json_for_an_event_stream_client(alice: ApiUser, scripted_model: ScriptedProvider) -> None:
    """A 400 for an SSE-only client is still a JSON detail."""
    response = alice.send("POST", "/agent/chat", b"{}", HTTP_ACCEPT="text/event-stream")
    assert response.status_code == 400
    assert response.json() == {"detail": "message: This field is required."}


@pytest.mark.django_db
def test_a_lower_max_request_bytes_setting_is_honoured(alice: ApiUser, settings: Settings) -> None:
    """MAX_REQUEST_BYTES is read per request, so a deployment can lower it."""
    settings.MAX_REQUEST_BYTES = 100
    response: Any = alice.post_json("/agent/chat", {"message": "y" * 200})
    assert response.status_code == 413
    assert "100 bytes" in response.json()["detail"]
