"""The one reading of an event log: a fold over a turn's (or a session's) events, in sequence order.

Every reader of "what happened" goes through `Transcript`: the loop's recovery (where a turn stands), the
turn's result and whether it delivered anything, the stream's frames (which call ran), the checkpoint's digest,
the admin's step replay (a trainer request and its answer). The rules are coded here once:

- an iteration is a trainer `llm_request` (`sessions_app.events.purpose_of`); its answer is the next trainer
  `llm_response`; a request without one is pending (a crash between request and answer: call again);
- the first `tool_call` after a trainer `llm_response` is the one that ran; the others of the same answer were
  answered "not executed" and are no action; the `tool_result` with the ran call's id is its result;
- the calls of the latest answer are pending until a `tool_result` follows (a crash while the tool ran);
- a turn delivered something when a `message_notify_user` or `message_ask_user` result succeeded.

Events are read leniently (`call_of`, `result_of`): a row that does not have the contract's shape (an older
row, an import, a test's partial data) reads as empty values rather than failing the reader. The shapes
themselves are in `sessions_app.events`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Protocol

from sessions_app.events import is_trainer
from sessions_app.models import EventType

DELIVERING_TOOLS = frozenset({"message_notify_user", "message_ask_user"})
ASK_USER_TOOL = "message_ask_user"
NOTIFY_USER_TOOL = "message_notify_user"


class StoredOrNew(Protocol):
    """A stored event (`AgentSessionEvent`) or one about to be stored (`NewEvent`)."""

    @property
    def event_type(self) -> str: ...

    @property
    def data(self) -> Any: ...


def data_of(event: StoredOrNew) -> Mapping[str, Any]:
    data = event.data
    return data if isinstance(data, Mapping) else {}


def sequence_of(event: StoredOrNew) -> int | None:
    value = getattr(event, "sequence_number", None)
    return value if isinstance(value, int) else None


@dataclass(frozen=True)
class Call:
    """A `tool_call`: `turn` is how many user messages came before it in the fold."""

    call_id: str
    tool_name: str
    arguments: dict[str, Any]
    sequence: int | None = None
    turn: int = 0


@dataclass(frozen=True)
class Result:
    """A `tool_result`: `result` is the stored ToolOutput (`{success, data, formatted, …}`)."""

    call_id: str
    tool_name: str
    success: bool
    result: dict[str, Any]


def call_of(data: Mapping[str, Any], *, sequence: int | None = None, turn: int = 0) -> Call:
    arguments = data.get("arguments")
    return Call(
        call_id=str(data.get("call_id", "")),
        tool_name=str(data.get("tool_name", "")),
        arguments=arguments if isinstance(arguments, dict) else {},
        sequence=sequence,
        turn=turn,
    )


def result_of(data: Mapping[str, Any]) -> Result:
    result = data.get("result")
    return Result(
        call_id=str(data.get("call_id", "")),
        tool_name=str(data.get("tool_name", "")),
        success=bool(data.get("success")),
        result=result if isinstance(result, dict) else {},
    )


@dataclass
class Ran:
    """A call that ran, and its result once stored."""

    call: Call
    result: Result | None = None


@dataclass
class Exchange:
    """A trainer `llm_request` and its answer (None while pending, or when the call failed)."""

    request: StoredOrNew
    response: StoredOrNew | None = None


@dataclass(frozen=True)
class Knowledge:
    source: str
    sequence: int | None
    turn: int


class Step(Enum):
    """What one event meant for the calls (`Transcript.add`)."""

    OTHER = "other"
    CALL_RAN = "call_ran"  # the first tool_call after a trainer llm_response: the call that ran
    CALL_NOT_RUN = "call_not_run"  # another call of the same answer (answered "not executed")
    RESULT_OF_RAN = "result_of_ran"  # the result of the call that ran
    OTHER_RESULT = "other_result"  # any other tool_result (a call that was not run)


@dataclass
class Transcript:
    """The fold. Feed it events in sequence order (`add`, `extend`, or `read`); read what it found."""

    iterations: int = 0  # trainer llm_requests
    pending_request: bool = False  # the latest trainer llm_request has no answer yet
    pending_calls: list[Call] = field(default_factory=list)  # the latest answer's calls, none answered yet
    exchanges: list[Exchange] = field(default_factory=list)  # trainer requests and their answers
    calls: list[Call] = field(default_factory=list)  # every tool_call
    ran: list[Ran] = field(default_factory=list)  # the calls that ran, with their results
    artifacts: list[dict[str, Any]] = field(default_factory=list)
    knowledge: list[Knowledge] = field(default_factory=list)
    checkpoints: list[Mapping[str, Any]] = field(default_factory=list)
    user_messages: list[str] = field(default_factory=list)
    turns: int = 0  # user messages read
    delivered: bool = False  # a message_notify_user or message_ask_user result succeeded
    open_question: str | None = None  # asked (message_ask_user) since the latest user message
    awaiting_first_call: bool = False  # a trainer answer came; its first call is the one that runs
    running: Ran | None = None  # the call that ran, until its result
    # False: keep only the state of the latest answer (a stream's projector, which may follow a long session),
    # not the lists of everything read (calls, ran, exchanges, artifacts, knowledge, checkpoints, messages).
    history: bool = True

    @classmethod
    def read(cls, events: Iterable[StoredOrNew]) -> Transcript:
        transcript = cls()
        transcript.extend(events)
        return transcript

    @property
    def initialized(self) -> bool:
        """The loop has started (the initializer ran before the first trainer request)."""
        return self.iterations > 0

    @property
    def last_request(self) -> StoredOrNew | None:
        return self.exchanges[-1].request if self.exchanges else None

    def extend(self, events: Iterable[StoredOrNew]) -> None:
        for event in events:
            self.add(event)

    def add(self, event: StoredOrNew) -> Step:
        data = data_of(event)
        kind = event.event_type
        if kind == EventType.LLM_REQUEST and is_trainer(data):
            self.iterations += 1
            self.pending_request = True
            self.pending_calls = []
            self.exchanges.append(Exchange(request=event))
            if not self.history:
                del self.exchanges[:-1]
        elif kind == EventType.LLM_RESPONSE and is_trainer(data):
            self.pending_request = False
            if self.exchanges and self.exchanges[-1].response is None:
                self.exchanges[-1].response = event
            self.awaiting_first_call = True
            self.running = None
        elif kind == EventType.TOOL_CALL:
            return self._call(call_of(data, sequence=sequence_of(event), turn=self.turns))
        elif kind == EventType.TOOL_RESULT:
            return self._result(result_of(data))
        elif kind == EventType.USER_MESSAGE:
            self.turns += 1
            self.open_question = None
            if self.history:
                self.user_messages.append(str(data.get("message", "")))
        elif not self.history:
            pass
        elif kind == EventType.ARTIFACT:
            self.artifacts.append(dict(data))
        elif kind == EventType.KNOWLEDGE:
            self.knowledge.append(Knowledge(str(data.get("source", "")), sequence_of(event), self.turns))
        elif kind == EventType.CHECKPOINT:
            self.checkpoints.append(data)
        return Step.OTHER

    def _call(self, call: Call) -> Step:
        if self.history:
            self.calls.append(call)
        if not self.pending_request:
            self.pending_calls.append(call)
        if call.tool_name == ASK_USER_TOOL:
            self.open_question = str(call.arguments.get("question", "")) or None
        if not self.awaiting_first_call:
            return Step.CALL_NOT_RUN
        self.awaiting_first_call = False
        self.running = Ran(call)
        if self.history:
            self.ran.append(self.running)
        return Step.CALL_RAN

    def _result(self, result: Result) -> Step:
        self.pending_calls = []
        if result.success and result.tool_name in DELIVERING_TOOLS:
            self.delivered = True
        if self.running is None or result.call_id != self.running.call.call_id:
            return Step.OTHER_RESULT
        self.running.result = result
        self.running = None
        return Step.RESULT_OF_RAN

    def actions(self) -> list[Ran]:
        """The calls that ran and have their result, in order: what the turn did."""
        return [ran for ran in self.ran if ran.result is not None]

    def workouts_delivered(self) -> list[str]:
        """The artifact ids handed to the user (message_notify_user with an `artifact_id`), in order."""
        return [
            str(call.arguments["artifact_id"])
            for call in self.calls
            if call.tool_name == NOTIFY_USER_TOOL and call.arguments.get("artifact_id")
        ]
