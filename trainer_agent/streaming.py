"""`POST /agent/stream` (one turn as Server-Sent Events) and `GET /agent/sessions/<id>/events` (replay + follow).

Plain async Django views, not DRF: an APIView cannot be async, and under daphne a StreamingHttpResponse over a
sync iterator is buffered whole. Everything that can refuse the request (auth, throttle, body, session, 409)
runs before anything is written or streamed. The synchronous agent loop then runs in a dedicated thread pool
(`AGENT_STREAM_THREADS`); each frame it emits is published to the session's event channel (stored, so it can
be replayed) and handed to the response through an asyncio.Queue. When the client goes away the generator is
cancelled and later frames are simply not written: the turn finishes in its thread and stores everything.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import threading
import time
import uuid
from collections.abc import AsyncGenerator, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.core.serializers.json import DjangoJSONEncoder
from django.db import OperationalError, connections
from django.http import HttpRequest, HttpResponseBase, JsonResponse, QueryDict, StreamingHttpResponse
from django.views.decorators.csrf import csrf_exempt
from django_eventstream.views import events as eventstream_events
from rest_framework.request import Request

from sessions_app.models import AgentSession, SessionNotFound, SessionStatus
from sessions_app.services import end_session
from trainer_agent import testing_hooks
from trainer_agent.api.errors import SESSION_NOT_FOUND, Conflict
from trainer_agent.api.parsers import loads_strict
from trainer_agent.api.throttling import AgentTurnThrottle
from trainer_agent.auth import AuthenticatedUser, AuthError, authenticate_bearer
from trainer_agent.eventstream import (
    ensure_cross_process_listener,
    normalize_last_event_id,
    publish_frame,
    session_belongs_to,
    session_channel,
)
from trainer_agent.loop import TurnError
from trainer_agent.slots import work_slots
from trainer_agent.turns import (
    TurnInProgress,
    TurnRequest,
    TurnRequestError,
    admit_turn,
    parse_turn_request,
    release_turn,
    run_requested_turn,
)

logger = logging.getLogger(__name__)

JSON_MEDIA_TYPE = "application/json"
SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
PING = ": ping\n\n"
_END = object()  # queued after the turn's last frame

# Test and benchmark servers (never production) serve scripted model ids named in $AGENT_TEST_SCRIPTS.
testing_hooks.install_from_env()

_executor_lock = threading.Lock()
_executor: ThreadPoolExecutor | None = None


_admission_executor: ThreadPoolExecutor | None = None
# Threads that admit /agent/stream requests (auth, validation, session claim, first frame). Few, so a burst is
# admitted first come, first served (each request's first frame leaves in arrival order) rather than all
# requests advancing together behind the GIL; more than one, so database round trips overlap.
ADMISSION_THREADS = 4


def admission_executor() -> ThreadPoolExecutor:
    global _admission_executor
    with _executor_lock:
        if _admission_executor is None:
            _admission_executor = ThreadPoolExecutor(
                max_workers=ADMISSION_THREADS, thread_name_prefix="agent-admit"
            )
        return _admission_executor


class AdmissionsFirst:
    """Turns wait to start while requests are arriving or waiting to be admitted, for at most `max_wait_s`.

    Admitting a request (token, body, session claim, first frame) takes a few milliseconds of CPU; a starting
    turn takes tens (initializer, knowledge, context). In one process they share one GIL, so in a burst every
    turn that starts early delays the first frame of every request still queued or still arriving behind it.
    A turn therefore starts once no request is waiting for admission and none has arrived for `quiet_s`: a
    burst is acknowledged first, and each turn is delayed by at most the time the burst takes to arrive and be
    admitted (bounded by `max_wait_s`, so a steady stream of arrivals cannot hold turns back).
    """

    def __init__(self, max_wait_s: float, quiet_s: float = 0.05) -> None:
        self.max_wait_s = max_wait_s
        self.quiet_s = quiet_s
        self._waiting = 0
        self._last_arrival = -math.inf
        self._changed = threading.Condition()

    def arrived(self) -> None:
        with self._changed:
            self._waiting += 1
            self._last_arrival = time.monotonic()

    def admitted(self) -> None:
        with self._changed:
            self._waiting -= 1
            if self._waiting == 0:
                self._changed.notify_all()

    def wait(self) -> None:
        deadline = time.monotonic() + self.max_wait_s
        with self._changed:
            while True:
                now = time.monotonic()
                if now >= deadline:
                    return
                if self._waiting:
                    self._changed.wait(deadline - now)
                    continue
                quiet_until = self._last_arrival + self.quiet_s
                if now >= quiet_until:
                    return
                self._changed.wait(min(quiet_until, deadline) - now)


# Seconds a turn waits at most for the admission queue to drain (see AdmissionsFirst).
ADMISSIONS_FIRST_MAX_WAIT_S = 2.0
admissions_first = AdmissionsFirst(ADMISSIONS_FIRST_MAX_WAIT_S)


def agent_executor() -> ThreadPoolExecutor:
    """The threads that run streamed turns: one per turn in flight, AGENT_STREAM_THREADS at most."""
    global _executor
    with _executor_lock:
        if _executor is None:
            _executor = ThreadPoolExecutor(
                max_workers=settings.AGENT_STREAM_THREADS, thread_name_prefix="agent-turn"
            )
        return _executor


def encode_frame(frame: dict[str, Any], event_id: str | None = None) -> str:
    """One SSE event: an optional `id:` line, the frame's JSON on one `data:` line, a blank line.

    One line is enough: json.dumps escapes every newline inside strings.
    """
    data = json.dumps(frame, cls=DjangoJSONEncoder)
    return f"id: {event_id}\ndata: {data}\n\n" if event_id else f"data: {data}\n\n"


# --- refusing a request before anything is written ---------------------------------------------------


def error_response(status: int, detail: str, headers: dict[str, str] | None = None) -> JsonResponse:
    return JsonResponse({"detail": detail}, status=status, headers=headers)


def unauthorized_response(message: str) -> JsonResponse:
    return JsonResponse({"error": message}, status=401, headers={"WWW-Authenticate": "Bearer"})


def method_not_allowed(request: HttpRequest, allowed: str) -> JsonResponse:
    return error_response(405, f'Method "{request.method}" not allowed.', headers={"Allow": allowed})


# The first frame of every turn, sent as soon as the turn is admitted (its session claimed) and stored like the
# others, so the client knows at once that its message was taken, even while the server is busy.
RECEIVED_FRAME: dict[str, Any] = {
    "type": "status",
    "data": {"message": "Message received", "tool": "agent", "phase": "start"},
}


@dataclass(frozen=True)
class PreparedTurn:
    user: AuthenticatedUser
    turn: TurnRequest
    session: AgentSession  # claimed for this turn: the worker releases it
    received_frame_id: str | None = None


class Refused(Exception):
    def __init__(self, response: JsonResponse) -> None:
        super().__init__(response.status_code)
        self.response = response


def prepare_turn(request: HttpRequest) -> PreparedTurn | JsonResponse:
    """Authenticate, throttle and validate in the order `/agent/chat` does; then admit the turn (claim its
    session, or create a claimed one) and publish its first frame.

    Runs in an admission thread. The body size was already checked by RequestBodyLimitMiddleware (413).
    """
    try:
        user = authenticate(request)
        check_throttle(request, user)
        turn = read_turn_request(request)
        session, received_id = admit_turn(
            user_id=user.user_id, session_id=turn.session_id, first_frame=RECEIVED_FRAME
        )
        return PreparedTurn(user=user, turn=turn, session=session, received_frame_id=received_id)
    except Refused as refused:
        return refused.response
    except SessionNotFound:
        return error_response(404, SESSION_NOT_FOUND)
    except TurnInProgress:
        return error_response(409, str(Conflict.default_detail))
    except OperationalError:
        # The database is overloaded or unreachable (e.g. SQLite locked past its timeout, no free PostgreSQL
        # connection): nothing was started, the client may simply retry.
        logger.exception("stream.database_unavailable")
        return error_response(503, "The service is busy; try again shortly.", headers={"Retry-After": "2"})
    finally:
        _release_connection()


def _admit(request: HttpRequest) -> PreparedTurn | JsonResponse:
    try:
        return prepare_turn(request)
    finally:
        admissions_first.admitted()


def authenticate(request: HttpRequest) -> AuthenticatedUser:
    try:
        user = authenticate_bearer(request.headers.get("Authorization"))
    except AuthError as exc:
        raise Refused(unauthorized_response(exc.message)) from exc
    request.user = user  # type: ignore[assignment]
    return user


def check_throttle(request: HttpRequest, user: AuthenticatedUser) -> None:
    throttle = AgentTurnThrottle()
    drf_request = Request(request)
    drf_request.user = user  # type: ignore[assignment]  # the token's user, not a Django user
    if throttle.allow_request(drf_request, None):  # type: ignore[arg-type]  # no APIView here; unused
        return
    wait = throttle.wait()
    seconds = max(1, math.ceil(wait)) if wait is not None else 1
    raise Refused(
        error_response(
            429,
            f"Request was throttled. Expected available in {seconds} second{'s' if seconds != 1 else ''}.",
            headers={"Retry-After": str(seconds)},
        )
    )


def read_turn_request(request: HttpRequest) -> TurnRequest:
    """The validated body (seed 000 §10.2): 415 for a non-JSON content type, 400 for anything invalid."""
    body = request.body
    if not body:
        raise Refused(error_response(400, "The request body is empty: send a JSON object."))
    content_type = request.content_type or ""
    if not content_type:
        raise Refused(error_response(415, f"Missing Content-Type: send the body as {JSON_MEDIA_TYPE}."))
    if content_type != JSON_MEDIA_TYPE:
        raise Refused(error_response(415, f'Unsupported media type "{content_type}" in request.'))
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise Refused(error_response(400, "Malformed JSON: the body is not valid utf-8 text.")) from None
    try:
        data = loads_strict(text)
    except ValueError as exc:
        raise Refused(error_response(400, f"Malformed JSON: {exc}.")) from None
    try:
        return parse_turn_request(data)
    except TurnRequestError as exc:
        raise Refused(error_response(400, exc.detail)) from None


def _release_connection() -> None:
    """Close this thread's database connections now: a request thread would otherwise hold one until the (long)
    stream ends, and a pool thread until it is reused. Never inside a transaction (tests run in one)."""
    for connection in connections.all(initialized_only=True):
        if not connection.in_atomic_block:
            connection.close()


# --- the stream --------------------------------------------------------------------------------------


class FrameQueue:
    """Hands frames from the turn's thread to the response's event loop; a no-op once the client has gone."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.queue: asyncio.Queue[Any] = asyncio.Queue()
        self.attached = True

    def put(self, event_id: str | None, frame: dict[str, Any]) -> None:
        self._put((event_id, frame))

    def finish(self) -> None:
        self._put(_END)

    def detach(self) -> None:
        self.attached = False

    def _put(self, item: Any) -> None:
        if not self.attached:
            return
        try:
            self.loop.call_soon_threadsafe(self.queue.put_nowait, item)
        except RuntimeError:  # the event loop is closed (server shutting down)
            self.attached = False

    async def frames(self, heartbeat_s: float) -> AsyncGenerator[str]:
        """SSE text until the turn ends; a `: ping` comment whenever nothing arrived for `heartbeat_s`."""
        try:
            while True:
                try:
                    async with asyncio.timeout(heartbeat_s):
                        item = await self.queue.get()
                except TimeoutError:
                    yield PING
                    continue
                if item is _END:
                    return
                event_id, frame = item
                yield encode_frame(frame, event_id)
        finally:
            # Cancelled when the client disconnects: stop queueing, let the turn run on.
            self.detach()


def run_streamed_turn(prepared: PreparedTurn, out: FrameQueue) -> None:
    """The turn's thread: run the loop of the admitted (claimed) turn, publish and stream every frame, release
    the claim and always finish the stream."""
    session = prepared.session
    admissions_first.wait()

    def listener(frame: dict[str, Any]) -> None:
        # Must never raise: the sink drops a failing listener, which would also stop the publication.
        out.put(publish_frame(session_id=session.pk, frame=frame), frame)

    try:
        try:
            with work_slots().held():
                _run(prepared, listener)
        finally:
            release_turn(session)
    except Exception:
        logger.exception("stream.turn_crashed", extra={"session_id": str(session.pk)})
        out.put(None, {"type": "error", "message": "Internal error: the turn could not be completed."})
    finally:
        out.finish()
        _release_connection()


def _run(prepared: PreparedTurn, listener: Callable[[dict[str, Any]], None]) -> None:
    user_id, turn, session = prepared.user.user_id, prepared.turn, prepared.session
    try:
        run_requested_turn(user_id=user_id, session=session, turn=turn, listener=listener)
    except TurnError:
        pass  # the loop recorded the failure and already emitted the `error` frame
    except Exception as exc:
        logger.exception("stream.turn_failed", extra={"session_id": str(session.pk)})
        try:
            end_session(session=session, status=SessionStatus.ERROR)
        except Exception:
            logger.exception("stream.end_session_failed", extra={"session_id": str(session.pk)})
        listener({"type": "error", "message": f"Internal error: {type(exc).__name__}"})


@csrf_exempt
async def agent_stream(request: HttpRequest) -> HttpResponseBase:
    """POST /agent/stream: the turn's frames (seed 000 §8.3) as they happen, each with a resumable `id:`."""
    if request.method != "POST":
        return method_not_allowed(request, "POST")
    loop = asyncio.get_running_loop()
    admissions_first.arrived()
    admission = asyncio.ensure_future(
        sync_to_async(_admit, thread_sensitive=False, executor=admission_executor())(request)
    )
    try:
        prepared = await asyncio.shield(admission)
    except asyncio.CancelledError:
        # The client went away while its turn was being admitted: the session is (or will be) claimed, so the
        # turn must still run and release it, as after any disconnect; nobody reads its frames.
        admission.add_done_callback(_run_turn_of_gone_client)
        raise
    if isinstance(prepared, JsonResponse):
        return prepared
    out = FrameQueue(loop)
    out.put(prepared.received_frame_id, RECEIVED_FRAME)
    start_turn(loop, prepared, out)
    response = StreamingHttpResponse(
        out.frames(settings.SSE_HEARTBEAT_SECONDS), content_type="text/event-stream", headers=SSE_HEADERS
    )
    response["X-Session-Id"] = str(prepared.session.pk)
    return response


def start_turn(loop: asyncio.AbstractEventLoop, prepared: PreparedTurn, out: FrameQueue) -> None:
    """Queue the admitted turn on the turn pool. Started by the view, not inside the response's generator: the
    turn must run even if the response is never iterated."""
    worker = loop.run_in_executor(agent_executor(), run_streamed_turn, prepared, out)
    worker.add_done_callback(_log_worker_failure)


def _run_turn_of_gone_client(admission: asyncio.Future[PreparedTurn | JsonResponse]) -> None:
    if admission.cancelled() or admission.exception() is not None:
        return
    prepared = admission.result()
    if isinstance(prepared, PreparedTurn):
        loop = asyncio.get_running_loop()
        out = FrameQueue(loop)
        out.detach()
        start_turn(loop, prepared, out)


def _log_worker_failure(future: asyncio.Future[None]) -> None:
    if not future.cancelled() and future.exception() is not None:
        logger.error("stream.worker_failed", exc_info=future.exception())


# --- replay and follow --------------------------------------------------------------------------------


def authorize_session_reader(request: HttpRequest, session_id: uuid.UUID | None) -> JsonResponse | None:
    """401 for a bad token, 404 unless the session is the caller's (unknown and foreign look the same)."""
    try:
        user = authenticate(request)
        if session_id is None or not session_belongs_to(session_id=session_id, user_id=user.user_id):
            return error_response(404, SESSION_NOT_FOUND)
        return None
    except Refused as refused:
        return refused.response
    finally:
        _release_connection()


def parse_uuid(value: str) -> uuid.UUID | None:
    try:
        return uuid.UUID(value)
    except ValueError:
        return None


async def session_events(request: HttpRequest, session_id: str) -> HttpResponseBase:
    """GET /agent/sessions/<id>/events: the session's stored frames after Last-Event-ID, then live ones."""
    if request.method != "GET":
        return method_not_allowed(request, "GET")
    parsed_id = parse_uuid(session_id)
    refused = await sync_to_async(authorize_session_reader)(request, parsed_id)
    if refused is not None:
        return refused
    assert parsed_id is not None

    raw_last_id = request.headers.get("Last-Event-ID") or request.GET.get("lastEventId") or ""
    if raw_last_id:
        last_id = normalize_last_event_id(raw_last_id, session_id=parsed_id)
        if last_id is None:
            example = f"{session_channel(parsed_id)}:3"
            return error_response(
                400, f"Last-Event-ID must be an id from this session's stream, e.g. {example!r}."
            )
        request.META["HTTP_LAST_EVENT_ID"] = last_id
    # Only Last-Event-ID steers the library: its GRIP parameters (es-meta, recover, link) are not accepted.
    request.GET = QueryDict()
    await ensure_cross_process_listener()
    # django-eventstream's view checks can_read_channel (SessionChannelManager) again, then streams.
    response: HttpResponseBase = eventstream_events(request, session_id=parsed_id)
    return response
