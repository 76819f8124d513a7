"""/api/schema/ and /api/docs/: a public, valid OpenAPI document of every endpoint, error and SSE frame."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml
from django.test import Client
from drf_spectacular.validation import validate_schema

OPERATIONS = {
    ("post", "/agent/chat"),
    ("post", "/agent/stream"),
    ("get", "/agent/sessions"),
    ("post", "/agent/sessions"),
    ("get", "/agent/sessions/{session_id}"),
    ("delete", "/agent/sessions/{session_id}"),
    ("get", "/agent/sessions/{session_id}/events"),
    ("get", "/agent/whoami"),
    ("get", "/user-settings"),
    ("put", "/user-settings"),
    ("get", "/exercises/history"),
    ("get", "/exercises/history/{user_id}"),
    ("get", "/exercises/distribution"),
    ("get", "/exercises/distribution/{user_id}"),
}
SSE_FRAMES = (
    "StatusFrame",
    "ToolStartFrame",
    "ToolResultFrame",
    "KnowledgeFrame",
    "DoneFrame",
    "ErrorFrame",
    "MessagePreviewFrame",
    "ExercisePreviewFrame",
)


@pytest.fixture(scope="module")
def schema(django_db_blocker: Any) -> dict[str, Any]:
    with django_db_blocker.unblock():
        response = Client().get("/api/schema/", {"format": "json"})
    assert response.status_code == 200
    document: dict[str, Any] = json.loads(response.content)
    return document


def test_schema_is_public_and_served_as_yaml_and_json() -> None:
    """No token is needed; YAML by default, JSON with ?format=json, both the same document."""
    as_yaml = Client().get("/api/schema/")
    as_json = Client().get("/api/schema/", {"format": "json"})
    assert as_yaml.status_code == as_json.status_code == 200
    assert yaml.safe_load(as_yaml.content) == json.loads(as_json.content)


def test_schema_is_a_valid_openapi_document(schema: dict[str, Any]) -> None:
    """The document passes drf-spectacular's OpenAPI 3 validation."""
    validate_schema(schema)


def test_schema_documents_every_endpoint(schema: dict[str, Any]) -> None:
    """Every API operation, including the two SSE endpoints, is in the schema, and nothing unexpected."""
    documented = {(method, path) for path, item in schema["paths"].items() for method in item}
    assert documented == OPERATIONS


def test_every_authenticated_operation_documents_401_with_the_seed_body(schema: dict[str, Any]) -> None:
    """All operations need the Bearer token and document its 401 `{"error": ...}` body."""
    for path, item in schema["paths"].items():
        for method, operation in item.items():
            assert operation["security"] == [{"SupabaseBearer": []}], (method, path)
            ref = operation["responses"]["401"]["content"]["application/json"]["schema"]["$ref"]
            assert ref == "#/components/schemas/Unauthorized", (method, path)
    assert schema["components"]["securitySchemes"]["SupabaseBearer"]["scheme"] == "bearer"


def test_chat_documents_every_error_status(schema: dict[str, Any]) -> None:
    """POST /agent/chat lists 200 and each of its error answers."""
    responses = schema["paths"]["/agent/chat"]["post"]["responses"]
    assert set(responses) == {"200", "400", "401", "404", "409", "413", "415", "429", "502", "503", "504"}
    assert responses["502"]["content"]["application/json"]["schema"]["$ref"].endswith("/ChatFailure")
    assert responses["503"]["content"]["application/json"]["schema"]["$ref"].endswith("/ChatFailure")
    body = schema["components"]["schemas"]["ChatRequest"]
    assert body["required"] == ["message"]
    assert set(body["properties"]) == {"message", "sessionId", "currentWorkout", "model", "preview"}
    assert body["properties"]["preview"]["type"] == "boolean"


def test_body_endpoints_document_413_and_415(schema: dict[str, Any]) -> None:
    """Every operation that takes a JSON body documents the size and media-type refusals."""
    for path, item in schema["paths"].items():
        for method, operation in item.items():
            if method in {"post", "put"}:
                assert {"400", "413", "415"} <= set(operation["responses"]), (method, path)


def test_stream_documents_the_sse_frames(schema: dict[str, Any]) -> None:
    """/agent/stream answers text/event-stream whose data lines are the frames of docs/contracts.md §7.2 (SSE frames):
    the six stored ones and the two previews."""
    for path, method in (("/agent/stream", "post"), ("/agent/sessions/{session_id}/events", "get")):
        content = schema["paths"][path][method]["responses"]["200"]["content"]
        refs = [item["$ref"].rsplit("/", 1)[1] for item in content["text/event-stream"]["schema"]["oneOf"]]
        assert refs == list(SSE_FRAMES)
    components = schema["components"]["schemas"]
    assert components["DoneFrame"]["required"] == ["type", "sessionId"]
    assert components["ErrorFrame"]["properties"]["type"]["enum"] == ["error"]
    assert components["MessagePreviewFrame"]["properties"]["data"]["required"] == ["tool", "call_id", "text"]
    assert components["ExercisePreviewFrame"]["properties"]["data"]["required"] == [
        "tool",
        "call_id",
        "index",
        "exercise",
    ]
    assert components["ToolStartFrame"]["properties"]["data"]["properties"]["status"]["enum"] == ["running"]
    assert components["ToolResultFrame"]["properties"]["status"]["enum"] == ["done", "failed"]
    assert components["StatusFrame"]["properties"]["data"]["properties"]["phase"]["enum"] == [
        "start",
        "done",
        "error",
    ]
    assert components["KnowledgeFrame"]["properties"]["data"]["required"] == [
        "source",
        "displayName",
        "status",
    ]
    parameters = schema["paths"]["/agent/sessions/{session_id}/events"]["get"]["parameters"]
    assert any(p["name"] == "Last-Event-ID" and p["in"] == "header" for p in parameters)


def test_session_schema_uses_the_seed_field_names(schema: dict[str, Any]) -> None:
    """AgentSession has exactly the fields of docs/contracts.md §6.1 (session)."""
    assert set(schema["components"]["schemas"]["AgentSession"]["properties"]) == {
        "id",
        "user_id",
        "created_at",
        "updated_at",
        "context_start_sequence",
        "total_tokens",
        "cached_tokens",
        "total_cost_cents",
        "status",
        "metadata",
    }


@pytest.mark.django_db
def test_docs_page_lists_every_operation_and_frame_without_external_assets(schema: dict[str, Any]) -> None:
    """/api/docs/ is a public HTML page naming every operation, its statuses and the SSE frames; no CDN."""
    response = Client().get("/api/docs/")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/html")
    page = response.content.decode()
    for method, path in OPERATIONS:
        assert f'id="{schema["paths"][path][method]["operationId"]}"' in page
        assert f"<code>{path}</code>" in page
    for frame in SSE_FRAMES:
        assert f'id="schema-{frame}"' in page
    for status in ("413", "415", "429", "502"):
        assert f'<td class="status">{status}</td>' in page
    assert "<script" not in page and "https://" not in page
