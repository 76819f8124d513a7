"""The turn endpoints and the session stream: `POST /agent/chat`, `POST /agent/stream`, `GET /agent/sessions/<id>/events`.

Plain async Django views (an APIView cannot be async; under daphne a StreamingHttpResponse over a sync iterator
is buffered whole), through Django's ordinary handler and middleware. Both turn endpoints share one path to
admission (`prepare_turn`: the Bearer token, the per-user throttle, the one body serializer
`api.chat.TurnRequestSerializer`, then `turns.admit_turn`), which stores the turn's first events and enqueues it on the task framework; a worker runs
it. Then `/agent/stream` follows the session's events from the turn's first one and `/agent/chat` waits for
the turn's end, neither holding a thread while they wait: followers sleep on `wakeups` (PostgreSQL
`LISTEN/NOTIFY`, polling on SQLite).

Database work runs in a small pool of threads (`database`): `WEB_DB_THREADS` connections serve every request and
follower of the process, however many streams are open (a thread per request, as Django's ASGI handler gives
`sync_to_async` by default, would hold a connection per open stream). Under the ImmediateBackend the request's
own thread runs the turn, so its reads go through that thread (`thread_sensitive`), and see its writes.
"""

from __future__ import annotations

import asyncio
import logging
import math
import threading
import time
import uuid
from collections.abc import AsyncGenerator, Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, NamedTuple, cast

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import Error
from django.http import HttpRequest, HttpResponseBase, JsonResponse, StreamingHttpResponse
from django.views.decorators.csrf import csrf_exempt
from rest_framework.request import Request

from sessions_app.models import AgentTurn, SessionNotFound
from sessions_app.selectors import (
    events_after,
    finished_turns_between,
    get_turn,
    latest_response_before,
    session_belongs_to,
)
from sessions_app.services import TurnInProgress
from trainer_agent import previews as preview_frames
from trainer_agent import wakeups
from trainer_agent.api.chat import TurnRequestInvalid, TurnRequestSerializer
from trainer_agent.api.errors import SESSION_NOT_FOUND, Conflict
from trainer_agent.api.parsers import loads_strict
from trainer_agent.api.throttling import AgentTurnThrottle
from trainer_agent.auth import AuthenticatedUser, AuthError, authenticate_bearer
from trainer_agent.connection_loss import connection_lost, database_unavailable, reconnect
from trainer_agent.connection_pool import give_back_connection
from trainer_agent.frames import (
    PING,
    RECOVERY_FRAME,
    SESSION_DELETED_FRAME,
    Projector,
    encode,
    failure_detail,
    terminal_frame,
)
from trainer_agent.loop import APOLOGY
from trainer_agent.previews import PreviewInbox
from trainer_agent.tenancy import acting_for, reads_together
from trainer_agent.turns import NO_WORKER_KIND, TurnRequest, admit_turn, turn_result, watch_open_turn

logger = logging.getLogger(__name__)


_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def database[**P, R](fn: Callable[P, R], *, user_id: uuid.UUID | None = None) -> Callable[P, Awaitable[R]]:
    """`fn` as a coroutine that runs it on the web process's database threads (see the module's docstring);
    with `user_id`, as that user's unit of work (`tenancy.acting_for`: row-level security on PostgreSQL)."""
    if user_id is not None:
        fn = _acting_for(user_id, fn)
    if settings.TASKS_BACKEND == "immediate":
        return sync_to_async(fn)
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=settings.WEB_DB_THREADS, thread_name_prefix="web-db")
    return sync_to_async(_reconnecting(fn), thread_sensitive=False, executor=_pool)


def _acting_for[**P, R](user_id: uuid.UUID, fn: Callable[P, R]) -> Callable[P, R]:
    def call(*args: P.args, **kwargs: P.kwargs) -> R:
        with acting_for(user_id):
            return fn(*args, **kwargs)

    return call


def _reconnecting[**P, R](fn: Callable[P, R]) -> Callable[P, R]:
    """A pool thread keeps its connection (with a connection pool, it borrows one per call: `connection_pool`);
    if the database dropped it, the call is made once more on a new one."""

    def call(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            try:
                result = fn(*args, **kwargs)
            except Error as exc:
                if not connection_lost(exc):
                    raise
                reconnect()
                result = fn(*args, **kwargs)
        finally:
            give_back_connection()
        _answered.at = time.monotonic()
        return result

    return call


class _Answered:
    """When a call on the database threads last completed (`time.monotonic()`); `/healthz` reads it."""

    at = -math.inf


_answered = _Answered()


def database_answered_within(seconds: float) -> bool:
    """Whether a call on this process's database threads completed in the last `seconds`."""
    return time.monotonic() - _answered.at <= seconds


JSON_MEDIA_TYPE = "application/json"
SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
# Events read per query while a stream catches up.
PAGE = 200


# --- refusing a request before anything is written ---------------------------------------------------


def error_response(status: int, detail: str, headers: dict[str, str] | None = None) -> JsonResponse:
    return JsonResponse({"detail": detail}, status=status, headers=headers)


def unauthorized_response(message: str) -> JsonResponse:
    return JsonResponse({"error": message}, status=401, headers={"WWW-Authenticate": "Bearer"})


def method_not_allowed(request: HttpRequest, allowed: str) -> JsonResponse:
    return error_response(405, f'Method "{request.method}" not allowed.', headers={"Allow": allowed})


class Refused(Exception):
    def __init__(self, response: JsonResponse) -> None:
        super().__init__(response.status_code)
        self.response = response


class Admitted(NamedTuple):
    turn: AgentTurn
    previews: bool  # its worker publishes preview frames (`trainer_agent.previews`)


def prepare_turn(request: HttpRequest, *, previews: bool = False) -> Admitted | JsonResponse:
    """Authenticate, throttle, validate, then admit the turn (`turns.admit_turn`): the one path of
    `/agent/chat` and `/agent/stream`. A refusal is the JSON response to send; nothing is written for it.
    `previews`: the endpoint sends preview frames (`/agent/stream`), unless the body says `"preview": false`."""
    try:
        user = authenticate(request)
        check_throttle(request, user)
        turn = read_turn_request(request)
        wanted = previews and turn.preview
        with acting_for(user.user_id):
            return Admitted(admit_turn(user_id=user.user_id, turn=turn, previews=wanted), wanted)
    except Refused as refused:
        return refused.response
    except SessionNotFound:
        return error_response(404, SESSION_NOT_FOUND)
    except TurnInProgress:
        return error_response(409, str(Conflict.default_detail))


async def admit(request: HttpRequest, *, previews: bool = False) -> Admitted | JsonResponse:
    """`prepare_turn` on the database threads (once more on a new connection if the database dropped the
    thread's); 503 if the database does not answer: nothing was started, the client may simply retry."""
    try:
        return await database(prepare_turn)(request, previews=previews)
    except Error as exc:
        if not database_unavailable(exc):
            raise
        logger.exception("turn.database_unavailable")
        return busy_response()


def busy_response() -> JsonResponse:
    return error_response(503, "The service is busy; try again shortly.", headers={"Retry-After": "2"})


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
    """The validated body (docs/contracts.md §4.1 (POST /agent/chat)), for both turn endpoints: 415 for a
    non-JSON content type, 400 for anything invalid (`TurnRequestSerializer`, which also documents it)."""
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
        return TurnRequestSerializer.read(data)
    except TurnRequestInvalid as exc:
        raise Refused(error_response(400, exc.detail)) from None


# --- the views ------------------------------------------------------------------------------------------


@csrf_exempt
async def agent_chat(request: HttpRequest) -> HttpResponseBase:
    """POST /agent/chat: one turn, answered with `{sessionId, response, iterations}` when it ends."""
    if request.method != "POST":
        return method_not_allowed(request, "POST")
    admission = await admit(request)
    if isinstance(admission, JsonResponse):
        return admission
    admitted = admission.turn
    try:
        turn = await wait_for_end(admitted)
        if turn is None:
            return error_response(404, SESSION_NOT_FOUND)  # the session was deleted while its turn was queued
        if turn.finished_at is None:  # AGENT_CHAT_WAIT_SECONDS passed: the turn goes on in its worker
            return JsonResponse(
                {
                    "detail": "The turn is taking too long to answer here; follow it on the session's event "
                    "stream.",
                    "sessionId": str(turn.session_id),
                },
                status=504,
            )
        result = await database(turn_result, user_id=turn.user_id)(turn)
    except Error as exc:
        if not database_unavailable(exc):
            raise
        # The database stayed away longer than DATABASE_PATIENCE_SECONDS: the turn goes on in its worker, and
        # GET /agent/sessions/<id>/events shows how it ends.
        logger.exception("chat.database_unavailable", extra={"session_id": str(admitted.session_id)})
        return busy_response()
    body: dict[str, Any] = result.as_api()
    if result.status == "completed":
        return JsonResponse(body)
    if result.error_kind == "undelivered":
        # Nothing reached the user (every tool failed, the iteration cap): an answer the client can show.
        body["error"] = {"kind": result.error_kind, "detail": result.error_message}
        return JsonResponse(body)
    # The model (or the service) failed: the provider's own words stay in the events and logs.
    headers = {"Retry-After": str(max(1, round(result.retry_after)))} if result.retry_after else None
    detail = failure_detail(result.error_kind, turn.model)
    response = {"detail": detail, "sessionId": str(turn.session_id), "response": body["response"]}
    if not response["response"]["messages"]:
        response["response"]["messages"] = [APOLOGY]
    # No worker took the turn (TURN_PICKUP_SECONDS): the service, not the model, is unavailable.
    status = 503 if result.error_kind == NO_WORKER_KIND else 502
    return JsonResponse(response, status=status, headers=headers)


@csrf_exempt
async def agent_stream(request: HttpRequest) -> HttpResponseBase:
    """POST /agent/stream: the turn's frames as they are stored, each event's with its sequence number as `id:`,
    and preview frames (no `id:`) while its model calls stream, unless the body says `"preview": false`."""
    if request.method != "POST":
        return method_not_allowed(request, "POST")
    admission = await admit(request, previews=True)
    if isinstance(admission, JsonResponse):
        return admission
    admitted = admission.turn
    after = admitted.start_sequence - 1
    frames = follow(
        admitted.session_id,
        user_id=admitted.user_id,
        after=after,
        until_turn=admitted.pk,
        previews=preview_frames.inbox_for(turn_id=admitted.pk, after=after) if admission.previews else None,
    )
    response = StreamingHttpResponse(frames, content_type="text/event-stream", headers=SSE_HEADERS)
    response["X-Session-Id"] = str(admitted.session_id)
    return response


async def session_events(request: HttpRequest, session_id: str) -> HttpResponseBase:
    """GET /agent/sessions/<id>/events: the session's frames after Last-Event-ID (a sequence number), then live."""
    if request.method != "GET":
        return method_not_allowed(request, "GET")
    parsed_id = parse_uuid(session_id)
    refused = await database(authorize_session_reader)(request, parsed_id)
    if refused is not None:
        return refused
    assert parsed_id is not None
    user_id = cast(AuthenticatedUser, request.user).user_id
    after = parse_last_event_id(request.headers.get("Last-Event-ID") or request.GET.get("lastEventId") or "")
    if after is None:
        return error_response(
            400, "Last-Event-ID must be the id of a frame of this session's stream (a sequence number)."
        )
    return StreamingHttpResponse(
        follow(parsed_id, user_id=user_id, after=after), content_type="text/event-stream", headers=SSE_HEADERS
    )


def parse_last_event_id(raw: str) -> int | None:
    """The sequence number a resuming client sent (docs/contracts.md §4.3, §7.4): -1 when it sent none, None
    unless it is 1-9 ASCII digits (`str.isdigit` alone also accepts '²' or '٣', which `int` refuses or reads)."""
    value = raw.strip(" \t")
    if not value:
        return -1
    if not (value.isascii() and value.isdigit()) or len(value) > 9:
        return None
    return int(value)


def authorize_session_reader(request: HttpRequest, session_id: uuid.UUID | None) -> JsonResponse | None:
    """401 for a bad token, 404 unless the session is the caller's (unknown and foreign look the same)."""
    try:
        user = authenticate(request)
    except Refused as refused:
        return refused.response
    if session_id is None:
        return error_response(404, SESSION_NOT_FOUND)
    with acting_for(user.user_id):
        if not session_belongs_to(session_id=session_id, user_id=user.user_id):
            return error_response(404, SESSION_NOT_FOUND)
    return None


def parse_uuid(value: str) -> uuid.UUID | None:
    try:
        return uuid.UUID(value)
    except ValueError:
        return None


# --- following the store --------------------------------------------------------------------------------


async def wait_for_end(turn: AgentTurn) -> AgentTurn | None:
    """The turn once it has ended, waiting (without a thread) for its worker; None if it is gone (its session
    was deleted); still open after `AGENT_CHAT_WAIT_SECONDS`. A turn no worker takes within
    `TURN_PICKUP_SECONDS` is ended meanwhile (`turns.watch_open_turn`). Rides out a database outage of up to
    DATABASE_PATIENCE_SECONDS (then raises its error)."""
    outage = _Outage()
    loop = asyncio.get_running_loop()
    deadline = loop.time() + settings.AGENT_CHAT_WAIT_SECONDS
    with wakeups.subscribe(turn.session_id) as changes:
        while True:
            changes.clear()
            try:
                found = await database(get_turn, user_id=turn.user_id)(turn_id=turn.pk)
                if found is None or found.finished_at is not None:
                    return found
                state = await database(watch_open_turn, user_id=turn.user_id)(session_id=turn.session_id)
            except Error as exc:
                if not database_unavailable(exc) or outage.too_long():
                    raise
                await asyncio.sleep(DATABASE_RETRY_SECONDS)
                continue
            outage.over()
            remaining = deadline - loop.time()
            if remaining <= 0:
                return found
            wait = min(settings.SSE_HEARTBEAT_SECONDS, remaining)
            if state.recheck_in is not None:
                wait = min(wait, state.recheck_in)
            await changes.wait(timeout=wait)


# How long a follower or a waiting /agent/chat keeps trying a database that does not answer (a restart, a
# failover; a lost connection alone is replaced at once by `_reconnecting`), and how often it tries.
DATABASE_PATIENCE_SECONDS = 30.0
DATABASE_RETRY_SECONDS = 1.0
DATABASE_LOST = "The service lost its database connection; reconnect to see how the turn ends."
STREAM_FAILED = "The stream failed; reconnect to see how the turn ends."


class _Outage:
    """Since when the database has not answered (None while it does)."""

    def __init__(self) -> None:
        self.since: float | None = None

    def too_long(self) -> bool:
        now = time.monotonic()
        if self.since is None:
            self.since = now
        return now - self.since >= DATABASE_PATIENCE_SECONDS

    def over(self) -> None:
        self.since = None


def _prime(session_id: uuid.UUID, after: int) -> Projector:
    projector = Projector()
    if after >= 0:
        start = latest_response_before(session_id=session_id, sequence=after)
        if start is not None:
            projector.prime(
                events_after(session_id=session_id, after_sequence=start - 1, limit=after - start + 1)
            )
    return projector


def _next_page(session_id: uuid.UUID, after: int) -> tuple[list[Any], dict[int, AgentTurn]]:
    """The events after `after` and the turns that end among them (read after the events: a turn's last event
    and its end commit together, so a turn that ends at an event read here is seen as ended). Both in one
    transaction on PostgreSQL (`tenancy.reads_together`); each read still sees what committed before it."""
    with reads_together():
        events = events_after(session_id=session_id, after_sequence=after, limit=PAGE)
        if not events:
            return [], {}
        ends = finished_turns_between(session_id=session_id, after=after, up_to=events[-1].sequence_number)
    return events, {turn.end_sequence: turn for turn in ends if turn.end_sequence is not None}


async def follow(
    session_id: uuid.UUID,
    *,
    user_id: uuid.UUID,
    after: int,
    until_turn: uuid.UUID | None = None,
    previews: PreviewInbox | None = None,
) -> AsyncGenerator[str]:
    """SSE text of the session's events after `after`, live: each event's frames, a turn's terminal frame with
    its last event, `: ping` while nothing happens, a `status` frame while a turn whose worker died waits for
    another (`RECOVERY_FRAME`). Ends after `until_turn`'s terminal frame (else follows on), and after an
    `error` frame when the session is deleted. A turn no worker takes is ended (`turns.watch_open_turn`).
    Cancelled when the client disconnects: the turn runs on in its worker.

    With `previews` (`POST /agent/stream`) the preview frames of the model call in flight go out, without `id:`,
    whenever every stored frame up to the call's `llm_request` has been sent; a preview of a call whose
    `llm_response` the follower has read is dropped (its final frames are the truth).

    A database error does not end the stream silently: the follower pings and reads again from the last event
    it sent, for up to DATABASE_PATIENCE_SECONDS, then ends with an `error` frame (as does any other failure)."""
    outage = _Outage()
    while True:
        try:
            async for text, sent in _follow(
                session_id, user_id=user_id, after=after, until_turn=until_turn, previews=previews
            ):
                outage.over()
                after = sent
                yield text
            return
        except Error:
            logger.warning(
                "stream.database_unavailable", extra={"session_id": str(session_id)}, exc_info=True
            )
            if outage.too_long():
                yield encode([{"type": "error", "message": DATABASE_LOST}], None)
                return
        except Exception:
            logger.exception("stream.failed", extra={"session_id": str(session_id)})
            yield encode([{"type": "error", "message": STREAM_FAILED}], None)
            return
        yield PING
        await asyncio.sleep(DATABASE_RETRY_SECONDS)


async def _follow(
    session_id: uuid.UUID,
    *,
    user_id: uuid.UUID,
    after: int,
    until_turn: uuid.UUID | None,
    previews: PreviewInbox | None = None,
) -> AsyncGenerator[tuple[str, int]]:
    """`follow`'s frames, each with the sequence number it has sent up to."""
    heartbeat = settings.SSE_HEARTBEAT_SECONDS
    with wakeups.subscribe(session_id, previews=previews) as changes:
        projector = await database(_prime, user_id=user_id)(session_id, after)
        if until_turn is not None:
            # Resuming after the turn's last event: the client already has its terminal frame.
            turn = await database(get_turn, user_id=user_id)(turn_id=until_turn)
            if turn is None or (turn.end_sequence is not None and turn.end_sequence <= after):
                return
        idle = 0.0
        announced = None  # the lapsed lease whose recovery frame was sent
        next_watch, woken = -math.inf, False
        read = True
        while True:
            if read:
                changes.clear()
                events, ends = await database(_next_page, user_id=user_id)(session_id, after)
            else:
                events, ends = [], {}
            for event in events:
                if previews is not None and preview_frames.answers_trainer_call(event):
                    if previews.replay:  # ImmediateBackend: sent at their place, just before the answer
                        replayed = previews.replay_before(event.sequence_number)
                        if replayed:
                            yield encode(replayed, None), after
                    previews.answered(event.sequence_number)  # what is left of that call is stale
                frames = projector.frames(event)
                ended = ends.get(event.sequence_number)
                if ended is not None:
                    frames.append(terminal_frame(ended))
                after = event.sequence_number
                if frames:
                    yield encode(frames, event.sequence_number), after
                if ended is not None and ended.pk == until_turn:
                    return
            if events:
                idle = 0.0
                if len(events) >= PAGE:
                    continue  # more may be waiting: read on before anything else
            # A short page: caught up with the store as of that read (a later commit notifies again).
            if previews is not None:  # caught up with the store: the previews of the call in flight
                if read and preview_frames.polls_cache():
                    cached = await database(preview_frames.cached_previews)(session_id)
                    if cached is not None:
                        previews.offer(*cached)
                ready = previews.take(after=after)
                if ready:
                    idle = 0.0
                    yield encode(ready, None), after
            clock = asyncio.get_running_loop().time
            if (woken and not events) or clock() >= next_watch:
                # The session's open turn (and whether the session is still there): on a notification that brought
                # no event (a deletion, a claim), when the turn's state may change by time alone, and at least
                # every SSE_RECHECK_SECONDS. A notification with events needs no look: its writer holds the turn.
                state = await database(watch_open_turn, user_id=user_id)(session_id=session_id)
                if state.deleted:
                    yield encode([SESSION_DELETED_FRAME], None), after  # nothing more will come
                    return
                if state.recovering_since is not None and state.recovering_since != announced:
                    announced = state.recovering_since  # once per lapsed lease
                    yield encode([RECOVERY_FRAME], None), after
                next_watch = clock() + min(state.recheck_in or math.inf, settings.SSE_RECHECK_SECONDS)
            started = clock()
            await changes.wait(timeout=max(0.0, min(heartbeat - idle, next_watch - started)))
            woken = changes.store_changed
            read = True
            if previews is not None and changes.changed.is_set() and not woken:
                # Only previews arrived: send them without reading the store (cleared with no await since the
                # wait, so no notification is lost in between).
                changes.clear()
                read = False
            idle += clock() - started
            if idle >= heartbeat:
                idle = 0.0
                yield PING, after
