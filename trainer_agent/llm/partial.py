"""Tool input while the model writes it: JSON text pieces in, ``PartialToolCall`` reports out.

Providers feed each tool call's JSON text pieces (Anthropic's ``input_json_delta``, OpenAI's
``tool_calls[].function.arguments``) to ``PartialToolCalls``, which parses the text received so far with
jiter's partial mode keeping trailing strings: ``{"message": "Here's yo`` is ``{"message": "Here's yo"}``,
``{"exercises": [{"name": "Squat"}, {"na`` is ``{"exercises": [{"name": "Squat"}, {}]}`` (the last item of
a list may be incomplete). ``on_partial`` is called only when the parsed value changed, and once more with
``complete=True`` when the call's input is finished, holding exactly the arguments of the final ``ToolCall``.
No hand-written parser: the text is re-parsed whole (~50 µs for a 3 kB workout), on each piece, or with
``deferred`` once per ``flush`` (the providers flush once per network read, ``paced_chunks``).

``paced_chunks`` reads a streamed response no faster than the previews need: once the reader has caught up with
the model it pauses, so the model's next events gather in the socket and arrive in one read. A model writes an
event every ~20 ms; waking for each costs the process ~150 µs on this VM (the HTTP client's layers and a
wake-up per event), pausing 100 ms cuts a workout call's reading from ~50 to ~20 ms of CPU
(docs/benchmarks.md "Streaming providers").
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import jiter

from trainer_agent.llm.types import PartialCallback, PartialToolCall


def parse_partial_json(text: bytes | str) -> Any:
    """The JSON value ``text`` starts, incomplete strings included; raises ``ValueError`` when it is not JSON."""
    data = text.encode() if isinstance(text, str) else text
    # cache_mode="keys": value strings grow on every piece; caching each prefix would only fill jiter's cache.
    return jiter.from_json(data, partial_mode="trailing-strings", cache_mode="keys")


class PartialInput:
    """The JSON text of one tool input as it arrives, and the object parsed from it so far."""

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._value: dict[str, Any] | None = None

    @property
    def text(self) -> str:
        return self._buffer.decode()

    @property
    def value(self) -> dict[str, Any] | None:
        """The input parsed so far; None until the text starts an object."""
        return self._value

    def feed(self, piece: str) -> bool:
        """Append ``piece``; True when the parsed value changed.

        Text that is not (the start of) a JSON object leaves the last value in place: the final ``ToolCall``
        reports the invalid input, previews just stop growing.
        """
        if not piece:
            return False
        self._buffer += piece.encode()
        try:
            parsed = parse_partial_json(bytes(self._buffer))
        except ValueError:
            return False
        if not isinstance(parsed, dict) or parsed == self._value:
            return False
        self._value = parsed
        return True


@dataclass
class _Call:
    call_id: str
    name: str
    input: PartialInput = field(default_factory=PartialInput)
    complete: bool = False
    unparsed: list[str] = field(default_factory=list)  # pieces fed since the last parse (``deferred``)


class PartialToolCalls:
    """The tool calls of one streamed response, by position (``PartialToolCall.index``), reporting growth.

    ``on_partial`` runs on the calling thread; whatever it raises propagates to the provider's caller. Without
    it (nobody watches the call) nothing is parsed. With ``deferred`` the pieces are parsed and reported at the
    next ``flush`` (or when the call finishes), not one by one.
    """

    def __init__(self, on_partial: PartialCallback | None, *, deferred: bool = False) -> None:
        self._on_partial = on_partial
        self._deferred = deferred
        self._calls: dict[int, _Call] = {}

    def __contains__(self, index: int) -> bool:
        return index in self._calls

    def start(self, index: int, *, call_id: str, name: str) -> None:
        """A call begins (its id and name are known); nothing is reported until its input parses."""
        self._calls.setdefault(index, _Call(call_id=call_id, name=name))

    def feed(self, index: int, piece: str) -> None:
        """More of call ``index``'s input text; reports the call when its parsed input changed (deferred: at the
        next ``flush``)."""
        call = self._calls[index]
        if call.complete or self._on_partial is None or not piece:
            return
        call.unparsed.append(piece)
        if not self._deferred:
            self._report(index, call)

    def flush(self) -> None:
        """Parse what was fed since the last flush; report each call whose parsed input changed."""
        for index, call in list(self._calls.items()):
            if call.unparsed and not call.complete:
                self._report(index, call)

    def _report(self, index: int, call: _Call) -> None:
        pieces, call.unparsed = "".join(call.unparsed), []
        if not call.input.feed(pieces) or self._on_partial is None:
            return
        value = call.input.value
        assert value is not None
        self._on_partial(
            PartialToolCall(
                index=index, call_id=call.call_id, name=call.name, arguments=value, complete=False
            )
        )

    def finish(self, index: int, arguments: dict[str, Any]) -> None:
        """Call ``index`` is written: report it once with ``complete=True`` and its final ``arguments``."""
        call = self._calls[index]
        if call.complete:
            return
        call.complete = True
        call.unparsed = []
        if self._on_partial is None:
            return
        self._on_partial(
            PartialToolCall(
                index=index, call_id=call.call_id, name=call.name, arguments=dict(arguments), complete=True
            )
        )

    def unfinished(self) -> list[int]:
        """Positions of calls started but not yet finished, in order."""
        return sorted(index for index, call in self._calls.items() if not call.complete)


# A read of the response that took this long waited for the model (one served from the HTTP client's buffer or
# the socket's takes well under a millisecond).
_WAITED_SECONDS = 0.002


def paced_chunks(
    chunks: Iterable[bytes], *, interval: float, before_wait: Callable[[], None]
) -> Iterator[bytes]:
    """``chunks`` (a streamed response's bytes), read at most about once per ``interval`` once caught up.

    After a read that waited for the model, ``before_wait`` runs (the providers report the tool input that grew)
    and the reader pauses until ``interval`` has passed since it last woke, so the events the model writes
    meanwhile are read together. A reader that is behind (events waiting) never pauses, and ``before_wait``
    also runs whenever ``interval`` passed without it. ``interval`` 0: no pause, ``before_wait`` after each
    chunk. The pause delays what the reader sees by at most ``interval``; the end of the stream too.
    """
    iterator = iter(chunks)
    woke = last_report = -float("inf")
    while True:
        asked = time.monotonic()
        chunk = next(iterator, None)
        if chunk is None:
            return
        waited = time.monotonic() - asked >= _WAITED_SECONDS
        yield chunk
        now = time.monotonic()
        if interval <= 0 or waited or now - last_report >= interval:
            before_wait()
            last_report = now
        if interval > 0 and waited:
            pause = woke + interval - time.monotonic()
            if pause > 0:
                time.sleep(pause)
            woke = time.monotonic()
