"""OpenAPI pieces drf-spectacular cannot infer: the Bearer scheme, error responses, and the SSE endpoints.

The streaming endpoints (`POST /agent/stream`, `GET /agent/sessions/{id}/events`) are documented here by a
post-processing hook rather than on their views, so the streaming code stays free of schema concerns: the
hook replaces whatever drf-spectacular generated (or did not generate) for those paths with the frames of
docs/contracts.md §7.2 (SSE frames).
"""

from __future__ import annotations

import re
from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.utils import OpenApiResponse

from trainer_agent.api.serializers import ErrorSerializer, UnauthorizedSerializer

BEARER_SCHEME = "SupabaseBearer"


class SupabaseJWTScheme(OpenApiAuthenticationExtension):
    target_class = "trainer_agent.auth.SupabaseJWTAuthentication"
    name = BEARER_SCHEME

    def get_security_definition(self, auto_schema: Any) -> dict[str, Any]:
        return {
            "type": "http",
            "scheme": "bearer",
            "bearerFormat": "JWT",
            "description": "A Supabase access token: `Authorization: Bearer <token>` (aud `authenticated`, "
            "sub = the user's UUID). `manage.py demo_token` mints one for local use.",
        }


def _error(description: str) -> OpenApiResponse:
    return OpenApiResponse(ErrorSerializer, description=description)


UNAUTHORIZED = OpenApiResponse(
    UnauthorizedSerializer,
    description='Missing token (`{"error": "Access token required"}`) or one that is expired, badly signed or '
    'otherwise untrusted (`{"error": "Invalid token"}`).',
)
BAD_REQUEST = _error("Invalid input: malformed JSON, a missing or wrongly typed field, an unknown field.")
NOT_FOUND = _error("No such session for this user (unknown ids and other users' sessions look the same).")
CONFLICT = _error("A turn is already running in this session.")
TOO_LARGE = _error("The request body exceeds MAX_REQUEST_BYTES (64 KB by default).")
UNSUPPORTED = _error("The body is not `application/json`.")
THROTTLED = OpenApiResponse(
    ErrorSerializer,
    description="Too many turns for this user (AGENT_TURN_RATE); the `Retry-After` header says when to retry.",
)

AUTH_ERRORS: dict[int, OpenApiResponse] = {401: UNAUTHORIZED}
QUERY_ERRORS: dict[int, OpenApiResponse] = {400: BAD_REQUEST, 401: UNAUTHORIZED}
BODY_ERRORS: dict[int, OpenApiResponse] = {
    400: BAD_REQUEST,
    401: UNAUTHORIZED,
    413: TOO_LARGE,
    415: UNSUPPORTED,
}

# --- SSE (docs/contracts.md §7.2 (SSE frames)) -------------------------------------------------------------------------------
STREAM_PATH = "/agent/stream"
EVENTS_PATH = "/agent/sessions/{session_id}/events"
_GENERATED_STREAM_PATHS = re.compile(r"^/agent/stream/?$|^/agent/sessions/\{[^}/]+\}/events/?$")

SSE_FRAMES: dict[str, dict[str, Any]] = {
    "StatusFrame": {
        "type": "object",
        "description": "Progress of a tool: its start message, then done (or error). Also `Message received` "
        "(tool `agent`), and, without an `id:`, `Picking up where we left off…` (tool `recovery`, phase `start`) "
        "while a turn whose worker stopped waits for another worker to continue it.",
        "properties": {
            "type": {"type": "string", "enum": ["status"]},
            "data": {
                "type": "object",
                "properties": {
                    "message": {"type": "string", "example": "Generating your workout..."},
                    "tool": {"type": "string", "example": "generate_workout"},
                    "phase": {"type": "string", "enum": ["start", "done", "error"]},
                },
                "required": ["message", "tool", "phase"],
            },
        },
        "required": ["type", "data"],
    },
    "ToolStartFrame": {
        "type": "object",
        "description": "A tool starts running; `type` is the tool's name.",
        "properties": {
            "type": {
                "type": "string",
                "description": "The tool's name, or `unknown_tool` for a tool that does not exist.",
                "example": "generate_workout",
            },
            "tool": {"type": "string", "description": "Only with `unknown_tool`: the name the model used."},
            "data": {
                "type": "object",
                "properties": {
                    "status": {"type": "string", "enum": ["running"]},
                    "args": {"type": "object", "additionalProperties": True},
                },
                "required": ["status", "args"],
            },
        },
        "required": ["type", "data"],
    },
    "ToolResultFrame": {
        "type": "object",
        "description": "A tool finished; `type` is the tool's name. `artifact` and `artifact_id` are present "
        "when `message_notify_user` delivers an artifact (e.g. a workout).",
        "properties": {
            "type": {
                "type": "string",
                "description": "The tool's name, or `unknown_tool` for a tool that does not exist.",
                "example": "message_notify_user",
            },
            "tool": {"type": "string", "description": "Only with `unknown_tool`: the name the model used."},
            "data": {"type": "object", "additionalProperties": True, "description": "The tool's result."},
            "formatted": {"type": "string", "description": "The result as the model saw it."},
            "status": {"type": "string", "enum": ["done", "failed"]},
            "artifact": {"$ref": "#/components/schemas/ArtifactData"},
            "artifact_id": {"type": "string", "example": "art_3f2a9c1b"},
        },
        "required": ["type", "data", "formatted", "status"],
    },
    "KnowledgeFrame": {
        "type": "object",
        "description": "A data source was loaded into the conversation by the initializer.",
        "properties": {
            "type": {"type": "string", "enum": ["knowledge"]},
            "data": {
                "type": "object",
                "properties": {
                    "source": {"type": "string", "example": "workout_history"},
                    "displayName": {"type": "string", "example": "Workout history"},
                    "status": {"type": "string", "enum": ["done"]},
                },
                "required": ["source", "displayName", "status"],
            },
        },
        "required": ["type", "data"],
    },
    "DoneFrame": {
        "type": "object",
        "description": "The turn is complete; the last frame of a successful stream.",
        "properties": {
            "type": {"type": "string", "enum": ["done"]},
            "sessionId": {"type": "string", "format": "uuid"},
        },
        "required": ["type", "sessionId"],
    },
    "ErrorFrame": {
        "type": "object",
        "description": "The turn failed (e.g. the model could not be reached, or no worker is running: "
        '"No worker is running to take the turn. Please try again later."); the last frame of the stream. '
        'Also, without an `id:`, `"This session was deleted."` when the followed session is deleted.',
        "properties": {
            "type": {"type": "string", "enum": ["error"]},
            "message": {"type": "string"},
        },
        "required": ["type", "message"],
    },
    "MessagePreviewFrame": {
        "type": "object",
        "description": 'Only on `POST /agent/stream` (unless the body says `"preview": false`), without an '
        "`id:`: the text of a `message_notify_user` or `message_ask_user` call while the model writes it. `text` "
        "is the whole text so far, not a delta: replace the bubble's text with it. The call's own frames "
        "(`tool_start`, `tool_result`) follow and are the truth. Clients that ignore unknown types lose nothing.",
        "properties": {
            "type": {"type": "string", "enum": ["message_preview"]},
            "data": {
                "type": "object",
                "properties": {
                    "tool": {"type": "string", "enum": ["message_notify_user", "message_ask_user"]},
                    "call_id": {"type": "string", "description": "The tool call; its frames follow."},
                    "text": {"type": "string", "example": "Here's your chest workout: six exer"},
                },
                "required": ["tool", "call_id", "text"],
            },
        },
        "required": ["type", "data"],
    },
    "ExercisePreviewFrame": {
        "type": "object",
        "description": 'Only on `POST /agent/stream` (unless the body says `"preview": false`), without an '
        "`id:`: one exercise of a workout while the model writes it, once the exercise is complete and valid on "
        "its own, in the shape of the workout artifact's exercises (without `id`). `index` is its position in "
        "the call's list. The call's `tool_result` (and the delivered artifact) replaces the cards; a failed "
        "result means the workout was not created.",
        "properties": {
            "type": {"type": "string", "enum": ["exercise_preview"]},
            "data": {
                "type": "object",
                "properties": {
                    "tool": {"type": "string", "example": "generate_workout"},
                    "call_id": {"type": "string", "description": "The tool call; its frames follow."},
                    "index": {"type": "integer", "minimum": 0},
                    "exercise": {
                        "type": "object",
                        "additionalProperties": True,
                        "description": "An exercise as the artifact's `payload.exercises` hold them, without `id`.",
                    },
                },
                "required": ["tool", "call_id", "index", "exercise"],
            },
        },
        "required": ["type", "data"],
    },
}

ARTIFACT_DATA: dict[str, Any] = {
    "type": "object",
    "description": "A structured output delivered to the client (docs/contracts.md §6.4 (event data) `artifact`).",
    "properties": {
        "artifact_id": {"type": "string"},
        "type": {"type": "string", "example": "exercise_list"},
        "schema_version": {"type": "string"},
        "title": {"type": "string"},
        "summary": {"type": "object", "additionalProperties": True},
        "auto_start": {"type": "boolean"},
        "payload": {
            "type": "object",
            "additionalProperties": True,
            "description": "For `exercise_list`: `{exercises: [...]}`.",
        },
    },
    "required": ["artifact_id", "type"],
}

SSE_DESCRIPTION = (
    "Server-Sent Events (`Content-Type: text/event-stream`, `Cache-Control: no-cache`, "
    "`X-Accel-Buffering: no`). Each event is an `id: <n>` line followed by `data: <json>` and a blank line; "
    "the JSON is one of the frames below (docs/contracts.md §7.2 (SSE frames)); preview frames (the turn's own "
    "stream only) carry no `id:` line. A `: ping` comment is sent every 15 s while "
    "waiting. A stream ends after a `done` or `error` frame. If the client disconnects the turn still "
    "completes and every event is stored; reconnect to `GET /agent/sessions/{session_id}/events` with "
    "`Last-Event-ID` to receive what was missed."
)


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _json_error(name: str, response: OpenApiResponse) -> dict[str, Any]:
    return {"description": str(response.description), "content": {"application/json": {"schema": _ref(name)}}}


def _sse_response(description: str) -> dict[str, Any]:
    return {
        "description": description,
        "content": {
            "text/event-stream": {
                "schema": {
                    "oneOf": [_ref(name) for name in SSE_FRAMES],
                    "description": "The JSON of each `data:` line.",
                },
                "example": 'id: 3\ndata: {"type": "status", "data": {"message": "Generating your workout...", '
                '"tool": "generate_workout", "phase": "start"}}\n\n'
                'id: 4\ndata: {"type": "generate_workout", "data": {"status": "running", "args": {}}}\n\n',
            }
        },
    }


def _stream_operations() -> dict[str, dict[str, Any]]:
    security: list[dict[str, list[str]]] = [{BEARER_SCHEME: []}]
    errors = {
        "401": _json_error("Unauthorized", UNAUTHORIZED),
        "404": _json_error("Error", NOT_FOUND),
    }
    stream = {
        "post": {
            "operationId": "agent_stream",
            "summary": "Run one turn and stream its events (SSE)",
            "description": "Same request body as `POST /agent/chat`. The first frame, sent as soon as the turn "
            'is admitted, is `{"type": "status", "data": {"message": "Message received", "tool": "agent", '
            '"phase": "start"}}`. ' + SSE_DESCRIPTION,
            "tags": ["agent"],
            "security": security,
            "requestBody": {
                "required": True,
                "content": {"application/json": {"schema": _ref("ChatRequest")}},
            },
            "responses": {
                "200": _sse_response("The turn's events, ending with `done` (or `error`)."),
                "400": _json_error("Error", BAD_REQUEST),
                **errors,
                "409": _json_error("Error", CONFLICT),
                "413": _json_error("Error", TOO_LARGE),
                "415": _json_error("Error", UNSUPPORTED),
                "429": {
                    **_json_error("Error", THROTTLED),
                    "headers": {"Retry-After": {"schema": {"type": "integer"}, "description": "Seconds."}},
                },
            },
        }
    }
    events = {
        "get": {
            "operationId": "agent_sessions_events",
            "summary": "Replay and follow a session's stream events (SSE)",
            "description": "Replays the session's stream events after `Last-Event-ID` (all of them without "
            "it), then follows live events of a running turn. Only the session's owner may read it. "
            + SSE_DESCRIPTION,
            "tags": ["agent"],
            "security": security,
            "parameters": [
                {
                    "name": "session_id",
                    "in": "path",
                    "required": True,
                    "schema": {"type": "string", "format": "uuid"},
                },
                {
                    "name": "Last-Event-ID",
                    "in": "header",
                    "required": False,
                    "schema": {"type": "string", "pattern": "^[0-9]{1,9}$"},
                    "description": "The `id:` of the last event received; the stream resumes after it.",
                },
            ],
            "responses": {"200": _sse_response("The session's events from `Last-Event-ID` on."), **errors},
        }
    }
    return {STREAM_PATH: stream, EVENTS_PATH: events}


def document_streaming_endpoints(result: dict[str, Any], generator: Any, **kwargs: Any) -> dict[str, Any]:
    """drf-spectacular post-processing hook: add the SSE endpoints and their frame schemas."""
    paths: dict[str, Any] = result.setdefault("paths", {})
    for path in [p for p in paths if _GENERATED_STREAM_PATHS.match(p)]:
        del paths[path]
    paths.update(_stream_operations())
    schemas: dict[str, Any] = result.setdefault("components", {}).setdefault("schemas", {})
    schemas.update(SSE_FRAMES)
    schemas["ArtifactData"] = ARTIFACT_DATA
    result["paths"] = dict(sorted(paths.items()))
    return result
