"""Preview frames: what the model is writing, shown before it is stored (docs/architecture.md "Previews").

While a trainer model call streams (`loop._complete` with a `StreamingProvider`), `PreviewPublisher` is its
`on_partial` callback: from each `PartialToolCall` of the call's first tool call (the one that runs) it derives

- `message_preview`: the whole text so far of `message_notify_user` / `message_ask_user`;
- `exercise_preview`: each exercise of a tool whose input holds a list of exercises (`generate_workout`), once
  its object is complete (a later one has started, or the input is complete) and valid on its own (the tool's
  pydantic exercise model), shaped as the stored workout's exercises (`tools_app.workout_tools.preview_exercise`);

and publishes them, at most once per `PREVIEW_INTERVAL_SECONDS` per call (a session has one model call at a
time), always the latest state, the rest flushed when the call's input is complete. Nothing here is stored:
the event log keeps what it keeps without previews, and a failure here never fails the model call.

Transport, worker → the web processes following the session:

- PostgreSQL: `NOTIFY agent_previews` (`notify_previews`), sent by the worker process's `NotifySender` on a
  connection of its own and heard by each web process's LISTEN connection (`trainer_agent.wakeups`), which
  hands the frames to the followers of that session that asked for previews;
- SQLite (`make run`, where the worker is a process of its own): the Django cache holds each session's latest
  preview state, which those followers read each time they poll the store;
- ImmediateBackend (the test suite): the request's own thread runs the turn before its stream starts, so the
  previews are kept in process for that request (`take_recorded`) and its stream sends them at their place.

Web side, one `PreviewInbox` per follower: the latest state of each call, sent only while the follower has
sent every stored frame up to the call's `llm_request`, and dropped once it reads the call's `llm_response`.
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import queue
import threading
import time
import types
import uuid
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Annotated, Any, Union, get_args, get_origin

import psycopg
from django.conf import settings
from django.core.cache import cache as django_cache
from django.db import connection
from pydantic import BaseModel, ValidationError

from datasources_app.selectors import get_settings
from datasources_app.workouts import ExerciseFields
from sessions_app.events import is_trainer
from sessions_app.models import AgentSessionEvent, AgentTurn, EventType
from tools_app.registry import UnknownToolError, get_tool, normalise_arguments
from tools_app.workout_tools import preview_exercise
from tools_app.workout_validation import CatalogMatch, find_catalog_match
from trainer_agent.connection_pool import conninfo
from trainer_agent.llm.types import PartialToolCall

logger = logging.getLogger(__name__)

MESSAGE_PREVIEW = "message_preview"
EXERCISE_PREVIEW = "exercise_preview"
# The tools whose text is previewed, and the argument holding it (seed 001's `text` is renamed by the tool's
# aliases first, as `execute_tool` does).
MESSAGE_FIELDS = {"message_notify_user": "message", "message_ask_user": "question"}

# The LISTEN/NOTIFY channel of previews (PostgreSQL); the store's changes travel on `agent_events`.
PREVIEWS_CHANNEL = "agent_previews"
# PostgreSQL refuses a NOTIFY payload of 8000 bytes or more: a larger publication travels in parts (one
# statement, so all of them or none), reassembled by the listener (`receive_notification`).
NOTIFY_PAYLOAD_BYTES = 7900
_PART_CHARS = 1900  # at most 4 bytes a character in UTF-8: a part and its header stay under the limit
_PART_MARK = "#"


def message_preview(*, tool: str, call_id: str, text: str) -> dict[str, Any]:
    return {"type": MESSAGE_PREVIEW, "data": {"tool": tool, "call_id": call_id, "text": text}}


def exercise_preview(*, tool: str, call_id: str, index: int, exercise: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": EXERCISE_PREVIEW,
        "data": {"tool": tool, "call_id": call_id, "index": index, "exercise": exercise},
    }


# --- which tools are previewed ------------------------------------------------------------------------


@dataclass(frozen=True)
class ExerciseList:
    """Where a tool's input holds its list of exercises, and the pydantic model each must pass."""

    path: tuple[str, ...]
    model: type[ExerciseFields]


def exercise_list_of(tool_name: str) -> ExerciseList | None:
    """The list of exercises in the tool's input model (`generate_workout`: `workout.exercises`), if any."""
    try:
        model = get_tool(tool_name).input_model
    except UnknownToolError:
        return None
    if model not in _exercise_lists:  # by input model: a test may register another tool under the same name
        _exercise_lists[model] = _exercise_list_in(model, (), depth=0)
    return _exercise_lists[model]


_exercise_lists: dict[type[BaseModel], ExerciseList | None] = {}


def _exercise_list_in(model: type[BaseModel], path: tuple[str, ...], *, depth: int) -> ExerciseList | None:
    if depth > 4:
        return None
    for name, info in model.model_fields.items():
        for candidate in _alternatives(info.annotation):
            if get_origin(candidate) is list:
                item = next(iter(get_args(candidate)), None)
                if isinstance(item, type) and issubclass(item, ExerciseFields):
                    return ExerciseList(path=(*path, name), model=item)
            elif isinstance(candidate, type) and issubclass(candidate, BaseModel):
                found = _exercise_list_in(candidate, (*path, name), depth=depth + 1)
                if found is not None:
                    return found
    return None


def _alternatives(annotation: Any) -> list[Any]:
    """`X | None`, `Optional[X]`, `Annotated[X, …]` → the types they allow."""
    origin = get_origin(annotation)
    if origin is Annotated:
        return _alternatives(get_args(annotation)[0])
    if origin is Union or origin is types.UnionType:
        return [alt for arg in get_args(annotation) for alt in _alternatives(arg)]
    return [annotation]


def exercises_in(arguments: dict[str, Any], where: ExerciseList) -> list[Any] | None:
    """The exercise list of a (partial) tool input; seed 001's top-level `exercises` (which the tool's input
    model also accepts in place of `workout.exercises`) included."""
    value: Any = arguments
    for key in where.path:
        value = value.get(key) if isinstance(value, dict) else None
    if value is None and len(where.path) > 1 and where.path[0] not in arguments:
        value = arguments.get(where.path[-1])
    return value if isinstance(value, list) else None


# --- the worker: one model call's previews ------------------------------------------------------------


@dataclass(frozen=True)
class PreviewBatch:
    """One publication: the frames new since the call's previous one, and every preview of the call so far
    (the latest text, every card) for a transport that keeps only the latest state."""

    session_id: uuid.UUID
    turn_id: uuid.UUID
    request_sequence: int  # the call's `llm_request`
    frames: list[dict[str, Any]]
    state: list[dict[str, Any]]
    final: bool = False  # the call's input is complete: its last publication


type Publish = Callable[[PreviewBatch], None]


class PreviewPublisher:
    """The `on_partial` callback of one trainer model call: partial tool input → throttled preview frames."""

    def __init__(
        self,
        *,
        session_id: uuid.UUID,
        turn_id: uuid.UUID,
        user_id: uuid.UUID,
        request_sequence: int,
        publish: Publish,
        interval: float,
        clock: Callable[[], float] = time.monotonic,
        units: tuple[str, str] | None = None,
    ) -> None:
        self.session_id = session_id
        self.turn_id = turn_id
        self.user_id = user_id
        self.request_sequence = request_sequence
        self.publish = publish
        self.interval = interval
        self.clock = clock
        self._call_id: str | None = None
        self._text: str | None = None  # the latest text of a message tool
        self._text_published: str | None = None
        self._cards: list[dict[str, Any]] = []  # every exercise preview of the call
        self._cards_published = 0
        self._examined = 0  # exercises looked at (previewed, or not valid on their own)
        self._last_publication = -math.inf
        # The user's (weight, distance) units: the request's, or read once per call.
        self._units: tuple[str, str] | None = units

    def __call__(self, partial: PartialToolCall) -> None:
        try:
            self._take(partial)
        except Exception:
            # A preview is never worth a failed model call (the provider would propagate our exception).
            logger.warning("previews.failed", extra={"session_id": str(self.session_id)}, exc_info=True)

    def _take(self, partial: PartialToolCall) -> None:
        if partial.index != 0:
            return  # only the first call runs (docs/contracts.md §5.2); the others get no frames at all
        if partial.call_id != self._call_id:
            self._reset(partial.call_id)
        if partial.name in MESSAGE_FIELDS:
            text = normalise_arguments(get_tool(partial.name), partial.arguments).get(
                MESSAGE_FIELDS[partial.name]
            )
            if isinstance(text, str) and text.strip():
                self._text = text
        else:
            where = exercise_list_of(partial.name)
            if where is not None:
                self._add_cards(partial, where)
        now = self.clock()
        if self._pending() and (partial.complete or now - self._last_publication >= self.interval):
            self._flush(partial, now)

    def _reset(self, call_id: str) -> None:
        self._call_id = call_id
        self._text = self._text_published = None
        self._cards, self._cards_published, self._examined = [], 0, 0

    def _add_cards(self, partial: PartialToolCall, where: ExerciseList) -> None:
        items = exercises_in(partial.arguments, where) or []
        complete = len(items) if partial.complete else len(items) - 1
        while self._examined < complete:
            index = self._examined
            self._examined += 1
            exercise = self._exercise(items[index], where)
            if exercise is not None:
                self._cards.append(
                    exercise_preview(
                        tool=partial.name, call_id=partial.call_id, index=index, exercise=exercise
                    )
                )

    def _exercise(self, item: Any, where: ExerciseList) -> dict[str, Any] | None:
        """The exercise as a card, or None when the tool's own model refuses it (it will not be stored so)."""
        try:
            model = where.model.model_validate(item, extra="forbid")
        except ValidationError:
            return None
        if self._units is None:
            user_settings = get_settings(user_id=self.user_id)
            self._units = (user_settings.weight_unit, user_settings.distance_unit)
        weight_unit, distance_unit = self._units
        return preview_exercise(
            model,
            match=catalog_match(model.exercise_name),
            weight_unit=weight_unit,
            distance_unit=distance_unit,
        )

    def _pending(self) -> bool:
        return self._text != self._text_published or len(self._cards) > self._cards_published

    def _flush(self, partial: PartialToolCall, now: float) -> None:
        frames: list[dict[str, Any]] = []
        state: list[dict[str, Any]] = list(self._cards)
        if self._text is not None:
            latest = message_preview(tool=partial.name, call_id=partial.call_id, text=self._text)
            state.insert(0, latest)
            if self._text != self._text_published:
                frames.append(latest)
        frames.extend(self._cards[self._cards_published :])
        self._text_published, self._cards_published = self._text, len(self._cards)
        self._last_publication = now
        self.publish(
            PreviewBatch(
                session_id=self.session_id,
                turn_id=self.turn_id,
                request_sequence=self.request_sequence,
                frames=frames,
                state=state,
                final=partial.complete,
            )
        )


@lru_cache(maxsize=2048)
def catalog_match(name: str) -> CatalogMatch | None:
    """The catalogue's entry for an exercise name, remembered by the process: a preview costs the worker no
    catalogue query for a name it has seen (the catalogue changes only with a deployment's data migration)."""
    return find_catalog_match(name) if name else None


def publisher_for(
    *, turn: AgentTurn, request_sequence: int, units: tuple[str, str] | None = None
) -> PreviewPublisher:
    """The publisher of one trainer call of `turn`, whose `llm_request` is stored at `request_sequence`, over
    this deployment's transport (the module's docstring). `units`: the user's (weight, distance) units as the
    call's request showed them, so the cards need no read of the settings on the model call's thread (which,
    in a burst, waited for a pooled connection the turns' own work held); read once per call without them."""
    return PreviewPublisher(
        session_id=turn.session_id,
        turn_id=turn.pk,
        user_id=turn.session.user_id,
        request_sequence=request_sequence,
        publish=transport(),
        interval=settings.PREVIEW_INTERVAL_SECONDS,
        units=units,
    )


def transport() -> Publish:
    if settings.TASKS_BACKEND == "immediate":
        return record_previews
    if connection.vendor == "postgresql":
        return notify_previews
    return cache_previews


# --- PostgreSQL: NOTIFY -------------------------------------------------------------------------------


def notify_previews(batch: PreviewBatch) -> None:
    """`NOTIFY agent_previews` with the new frames (in parts when they exceed PostgreSQL's payload limit), sent
    by this process's `NotifySender`: the model call's thread neither borrows a pooled connection nor waits for
    the server, except for the call's final publication, which is on the wire when this returns (so a follower
    hears the last card before the call's `llm_response` is stored, which makes the call's previews stale)."""
    if not batch.frames:
        return
    _sender.send(notification_payloads(batch), wait=batch.final)


class NotifySender:
    """The worker process's sender of preview notifications: a connection of its own (autocommit, outside the
    pool and the tenant wrapper: a notification reads and writes no tenant row) and a thread that sends, in one
    statement, every publication waiting when it wakes.

    Why not the model call's thread on a pooled connection, as before: each publication then borrowed a
    connection (the pool's check, a round trip), sent one statement and gave it back, ~15 times a turn, and
    waited for a free connection when the turns' own work held the pool (docs/benchmarks.md "Previews end to
    end"). A failed statement drops what it carried (previews are never worth a retry: the next publication
    holds the latest state, the final frames the truth); a connection the server ended since the last batch
    is replaced and the batch sent again, once."""

    MAX_PER_STATEMENT = 200  # payloads; a publication's parts always travel in one statement

    def __init__(self, connect: Callable[[], Any] | None = None) -> None:
        self._connect = connect or _notify_connection
        # (payloads, set once sent); None payloads: close the connection and stop (`stop`)
        self._queue: queue.SimpleQueue[tuple[list[str] | None, threading.Event | None]] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._start_lock = threading.Lock()
        self._connection: Any = None

    def send(self, payloads: list[str], *, wait: bool = False, timeout: float = 2.0) -> None:
        """Queue one publication's payloads; with `wait`, return once they were sent (or failed, or `timeout`)."""
        self._ensure_thread()
        done = threading.Event() if wait else None
        self._queue.put((payloads, done))
        if done is not None:
            done.wait(timeout)

    def stop(self, timeout: float = 5.0) -> None:
        """Send what is queued, close the connection and end the thread (a later `send` starts them again)."""
        thread = self._thread
        if thread is None or not thread.is_alive():
            return
        self._queue.put((None, None))
        thread.join(timeout)

    def _ensure_thread(self) -> None:
        if self._thread is not None and self._thread.is_alive():
            return
        with self._start_lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="preview-notify", daemon=True)
                self._thread.start()

    def _run(self) -> None:
        stopping = False
        while not stopping:
            batch: list[tuple[list[str], threading.Event | None]] = []
            count = 0
            item = self._queue.get()
            while True:
                payloads, done = item
                if payloads is None:
                    stopping = True
                    break
                batch.append((payloads, done))
                count += len(payloads)
                if count >= self.MAX_PER_STATEMENT:
                    break
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
            if batch:
                self._send_batch(batch)
        if self._connection is not None:
            with contextlib.suppress(Exception):
                self._connection.close()
            self._connection = None

    def _send_batch(self, batch: list[tuple[list[str], threading.Event | None]]) -> None:
        payloads = [payload for payloads, _ in batch for payload in payloads]
        sql = ("SELECT " + ", ".join([f"pg_notify('{PREVIEWS_CHANNEL}', %s)"] * len(payloads))).encode()
        reused = self._connection is not None and not self._connection.closed
        try:
            try:
                self._execute(sql, payloads)
            except psycopg.OperationalError:
                # The connection kept since an earlier batch was ended meanwhile (the server restarted, an idle
                # timeout): the batch goes again, once, on a new one, so the first publication after a restart
                # (perhaps a call's last card) is not the one lost. A new connection that fails drops the batch.
                if not reused:
                    raise
                self._reset()
                self._execute(sql, payloads)
        except Exception:
            logger.warning("previews.notify_failed", extra={"publications": len(batch)}, exc_info=True)
            self._reset()
        finally:
            for _, done in batch:
                if done is not None:
                    done.set()

    def _execute(self, sql: bytes, payloads: list[str]) -> None:
        if self._connection is None or self._connection.closed:
            self._connection = self._connect()
        self._connection.execute(sql, payloads)

    def _reset(self) -> None:
        with contextlib.suppress(Exception):
            if self._connection is not None:
                self._connection.close()
        self._connection = None


def _notify_connection() -> Any:
    # A database that does not answer holds the previews (queued meanwhile), never the model calls for long: only
    # a final publication waits, at most `send`'s timeout.
    return psycopg.connect(conninfo(), autocommit=True, connect_timeout=5)


_sender = NotifySender()


def stop_notifying() -> None:
    """Close this process's notification connection (tests that drop their database afterwards)."""
    _sender.stop()


def notification_payloads(batch: PreviewBatch) -> list[str]:
    """`<session id> <JSON>`: every web process hears every notification, and one that follows none of the
    session's streams skips it without decoding the JSON."""
    text = f"{batch.session_id} " + json.dumps(
        {"r": batch.request_sequence, "f": batch.frames}, ensure_ascii=False, separators=(",", ":")
    )
    if len(text.encode()) <= NOTIFY_PAYLOAD_BYTES:
        return [text]
    key = uuid.uuid4().hex[:12]
    parts = [text[start : start + _PART_CHARS] for start in range(0, len(text), _PART_CHARS)]
    return [f"{_PART_MARK}{key}:{number}:{len(parts)}:{part}" for number, part in enumerate(parts)]


@dataclass
class _Parts:
    total: int
    received: dict[int, str] = field(default_factory=dict)


# Publications in parts whose other parts have not arrived yet (they travel in one transaction, so they arrive
# together; bounded in case a listener reconnected between two of them).
_incomplete: OrderedDict[str, _Parts] = OrderedDict()
_MAX_INCOMPLETE = 64


def receive_notification(
    payload: str, *, wanted: Callable[[str], bool] = lambda session_id: True
) -> tuple[str, int, list[dict[str, Any]]] | None:
    """A notification of `agent_previews` → (session id, request sequence, frames); None for a session not
    `wanted` here, a part of a publication still incomplete, or a payload that is not ours."""
    if payload.startswith(_PART_MARK):
        try:
            key, number, total, part = payload[1:].split(":", 3)
            parts = _incomplete.setdefault(key, _Parts(total=int(total)))
            parts.received[int(number)] = part
        except ValueError:
            return None
        while len(_incomplete) > _MAX_INCOMPLETE:
            _incomplete.popitem(last=False)
        if len(parts.received) < parts.total:
            return None
        _incomplete.pop(key, None)
        payload = "".join(parts.received[index] for index in range(parts.total))
    session_id, _, text = payload.partition(" ")
    if not wanted(session_id):
        return None
    try:
        decoded = json.loads(text)
        return session_id, int(decoded["r"]), list(decoded["f"])
    except (ValueError, KeyError, TypeError):
        logger.warning("previews.bad_notification", extra={"payload": payload[:200]})
        return None


def forget_incomplete_notifications() -> None:
    """The listening connection was replaced: parts of a publication heard on the old one stay incomplete."""
    _incomplete.clear()


# --- SQLite: the cache --------------------------------------------------------------------------------

PREVIEW_CACHE_SECONDS = 120


def _cache_key(session_id: uuid.UUID | str) -> str:
    return f"agent-previews:{session_id}"


def cache_previews(batch: PreviewBatch) -> None:
    """Keep the call's whole preview state (the latest text, every card) as the session's, for the followers
    that poll (`cached_previews`)."""
    django_cache.set(
        _cache_key(batch.session_id),
        {"r": batch.request_sequence, "f": batch.state},
        timeout=PREVIEW_CACHE_SECONDS,
    )


def cached_previews(session_id: uuid.UUID) -> tuple[int, list[dict[str, Any]]] | None:
    """The latest preview state of the session's current (or last) model call, if any."""
    value = django_cache.get(_cache_key(session_id))
    if not isinstance(value, dict):
        return None
    return int(value["r"]), list(value["f"])


# --- ImmediateBackend: the request's own stream -------------------------------------------------------

_recorded: OrderedDict[uuid.UUID, list[tuple[int, list[dict[str, Any]]]]] = OrderedDict()
_recorded_lock = threading.Lock()
_MAX_RECORDED_TURNS = 64


def record_previews(batch: PreviewBatch) -> None:
    """Keep the publication for the stream of the request that runs the turn (`take_recorded`)."""
    if not batch.frames:
        return
    with _recorded_lock:
        _recorded.setdefault(batch.turn_id, []).append((batch.request_sequence, batch.frames))
        while len(_recorded) > _MAX_RECORDED_TURNS:
            _recorded.popitem(last=False)


def take_recorded(turn_id: uuid.UUID) -> list[tuple[int, list[dict[str, Any]]]]:
    with _recorded_lock:
        return _recorded.pop(turn_id, [])


# --- the web: one follower's previews -----------------------------------------------------------------


@dataclass
class _CallPreviews:
    """The latest previews of one model call that the follower has not sent."""

    message: dict[str, Any] | None = None
    sent_text: str | None = None
    cards: dict[tuple[str, int], dict[str, Any]] = field(default_factory=dict)
    sent_cards: set[tuple[str, int]] = field(default_factory=set)

    def add(self, frame: dict[str, Any]) -> None:
        data = frame.get("data")
        if not isinstance(data, dict):
            return
        if frame.get("type") == MESSAGE_PREVIEW:
            self.message = frame
        elif frame.get("type") == EXERCISE_PREVIEW:
            key = (str(data.get("call_id")), int(data.get("index", 0)))
            if key not in self.sent_cards:
                self.cards[key] = frame

    def unsent(self) -> list[dict[str, Any]]:
        frames: list[dict[str, Any]] = []
        if self.message is not None and self.message["data"].get("text") != self.sent_text:
            frames.append(self.message)
            self.sent_text = self.message["data"].get("text")
        for key in sorted(self.cards, key=lambda pair: pair[1]):
            frames.append(self.cards[key])
            self.sent_cards.add(key)
        self.cards.clear()
        return frames


class PreviewInbox:
    """The previews one follower may still send: the latest state of each model call not yet answered.

    `offer` takes what the transport delivered; `take(after=n)` gives what to send now, from the calls whose
    `llm_request` is at or before `n` (the follower has sent every stored frame up to it), each call's latest
    text (when changed) and its cards not yet sent; `answered(n)` drops every call before the trainer
    `llm_response` at `n`: its final frames follow, previews of it are stale.

    With `replay` (ImmediateBackend: the turn ran before the stream started) every publication is kept, and
    `replay_before(n)` gives those of the calls answered at `n`, for the stream to send just before that
    `llm_response`'s frames: what a follower that kept up would have sent."""

    def __init__(self, *, after: int, replay: bool = False) -> None:
        self.replay = replay
        self._floor = after  # calls requested at or before this started before the stream: not ours to show
        self._calls: dict[int, _CallPreviews] = {}
        self._replayed: list[tuple[int, list[dict[str, Any]]]] = []

    def offer(self, request_sequence: int, frames: Iterable[dict[str, Any]]) -> None:
        if request_sequence <= self._floor:
            return
        if self.replay:
            self._replayed.append((request_sequence, list(frames)))
            return
        call = self._calls.setdefault(request_sequence, _CallPreviews())
        for frame in frames:
            call.add(frame)

    def answered(self, sequence: int) -> None:
        for request_sequence in [r for r in self._calls if r < sequence]:
            del self._calls[request_sequence]
        self._replayed = [(r, frames) for r, frames in self._replayed if r >= sequence]
        self._floor = max(self._floor, sequence - 1)

    def take(self, *, after: int) -> list[dict[str, Any]]:
        frames: list[dict[str, Any]] = []
        for request_sequence in sorted(self._calls):
            if request_sequence <= after:
                frames.extend(self._calls[request_sequence].unsent())
        return frames

    def replay_before(self, sequence: int) -> list[dict[str, Any]]:
        return [frame for r, frames in self._replayed if r < sequence for frame in frames]


def answers_trainer_call(event: AgentSessionEvent) -> bool:
    """A trainer `llm_response`: the call it answers has its final frames now; its previews are over."""
    return event.event_type == EventType.LLM_RESPONSE and is_trainer(event.data)


def inbox_for(*, turn_id: uuid.UUID, after: int) -> PreviewInbox:
    """The inbox of the stream of `POST /agent/stream` for `turn_id` (its first frame after `after`)."""
    if settings.TASKS_BACKEND != "immediate":
        return PreviewInbox(after=after)
    inbox = PreviewInbox(after=after, replay=True)
    for request_sequence, frames in take_recorded(turn_id):
        inbox.offer(request_sequence, frames)
    return inbox


def polls_cache() -> bool:
    """Followers read previews from the cache (no NOTIFY, and a worker of its own)."""
    return settings.TASKS_BACKEND != "immediate" and connection.vendor != "postgresql"
