"""Tool input while the model writes it: JSON text pieces in, ``PartialToolCall`` reports out.

Providers feed each tool call's JSON text pieces (Anthropic's ``input_json_delta``, OpenAI's
``tool_calls[].function.arguments``) to ``PartialToolCalls``, which parses the text received so far with
jiter's partial mode keeping trailing strings: ``{"message": "Here's yo`` is ``{"message": "Here's yo"}``,
``{"exercises": [{"name": "Squat"}, {"na`` is ``{"exercises": [{"name": "Squat"}, {}]}`` (the last item of
a list may be incomplete). ``on_partial`` is called only when the parsed value changed, and once more with
``complete=True`` when the call's input is finished, holding exactly the arguments of the final ``ToolCall``.
No hand-written parser: the text is re-parsed whole on each piece (~50 µs for a 3 kB workout).
"""

from __future__ import annotations

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


class PartialToolCalls:
    """The tool calls of one streamed response, by position (``PartialToolCall.index``), reporting growth.

    ``on_partial`` runs on the calling thread; whatever it raises propagates to the provider's caller.
    """

    def __init__(self, on_partial: PartialCallback) -> None:
        self._on_partial = on_partial
        self._calls: dict[int, _Call] = {}

    def __contains__(self, index: int) -> bool:
        return index in self._calls

    def start(self, index: int, *, call_id: str, name: str) -> None:
        """A call begins (its id and name are known); nothing is reported until its input parses."""
        self._calls.setdefault(index, _Call(call_id=call_id, name=name))

    def feed(self, index: int, piece: str) -> None:
        """More of call ``index``'s input text; reports the call when its parsed input changed."""
        call = self._calls[index]
        if call.complete or not call.input.feed(piece):
            return
        value = call.input.value
        assert value is not None
        self._on_partial(
            PartialToolCall(
                index=index, call_id=call.call_id, name=call.name, arguments=value, complete=False
            )
        )

    def text(self, index: int) -> str:
        """Call ``index``'s input text received so far."""
        return self._calls[index].input.text

    def finish(self, index: int, arguments: dict[str, Any]) -> None:
        """Call ``index`` is written: report it once with ``complete=True`` and its final ``arguments``."""
        call = self._calls[index]
        if call.complete:
            return
        call.complete = True
        self._on_partial(
            PartialToolCall(
                index=index, call_id=call.call_id, name=call.name, arguments=dict(arguments), complete=True
            )
        )

    def unfinished(self) -> list[int]:
        """Positions of calls started but not yet finished, in order."""
        return sorted(index for index, call in self._calls.items() if not call.complete)
