"""A stream for providers that have the whole answer at once (the offline coach, the scripted provider).

``replay_as_stream`` writes each tool call's input back out as JSON text in small pieces, a word of a string at
a time (keys, numbers and punctuation ride along with the next word), and feeds them through the same partial
parser the real providers use (``trainer_agent.llm.partial``), so a message grows word by word and a workout's
exercises complete one after another. Between pieces it sleeps ``OFFLINE_STREAM_DELAY_SECONDS`` (0 under
pytest unless a test sets it). It returns the finished response unchanged: what is stored is what
``complete`` returned.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from typing import Any

from django.conf import settings

from trainer_agent.llm.partial import PartialToolCalls
from trainer_agent.llm.types import LLMRequest, LLMResponse, PartialCallback

# Split a JSON-encoded string after each run of spaces: '"Here\'s your plan"' → '"Here\'s ', 'your ', 'plan"'.
# Escapes (\n, \", \u00e9) hold no space, so a piece never cuts one in half.
_AFTER_SPACES = re.compile(r"(?<= )(?=[^ ])")


def replay_as_stream(
    response: LLMResponse, on_partial: PartialCallback | None, *, delay_s: float | None = None
) -> LLMResponse:
    """Report ``response``'s tool inputs to ``on_partial`` as if the model were writing them; return it."""
    delay = settings.OFFLINE_STREAM_DELAY_SECONDS if delay_s is None else delay_s
    calls = PartialToolCalls(on_partial)
    first = True
    for index, call in enumerate(response.tool_calls):
        calls.start(index, call_id=call.id, name=call.name)
        for piece in json_pieces(call.arguments):
            if delay > 0 and not first:
                time.sleep(delay)
            first = False
            calls.feed(index, piece)
        calls.finish(index, call.arguments)
    return response


class SimulatedStreaming:
    """Mixin: a ``stream`` for a provider whose ``complete`` has the whole answer at once (the offline coach)."""

    def complete(self, request: LLMRequest) -> LLMResponse:
        raise NotImplementedError

    def stream(self, request: LLMRequest, *, on_partial: PartialCallback | None) -> LLMResponse:
        """``complete``, then its tool inputs replayed a word at a time (at once when nobody watches)."""
        if on_partial is None:
            return self.complete(request)
        return replay_as_stream(self.complete(request), on_partial)


def json_pieces(value: Any) -> list[str]:
    """``json.dumps(value)`` cut into pieces that each end with one word of a string value (the last may not)."""
    pieces: list[str] = []
    pending = ""
    for text, is_word in _tokens(value):
        pending += text
        if is_word:
            pieces.append(pending)
            pending = ""
    if pending:
        pieces.append(pending)
    return pieces


def _tokens(value: Any) -> Iterator[tuple[str, bool]]:
    """The JSON text of ``value`` as (text, is a word of a string value) in order."""
    if isinstance(value, dict):
        yield "{", False
        for position, (key, item) in enumerate(value.items()):
            yield ("" if position == 0 else ", ") + json.dumps(str(key), ensure_ascii=False) + ": ", False
            yield from _tokens(item)
        yield "}", False
    elif isinstance(value, list | tuple):
        yield "[", False
        for position, item in enumerate(value):
            if position:
                yield ", ", False
            yield from _tokens(item)
        yield "]", False
    elif isinstance(value, str):
        for word in _AFTER_SPACES.split(json.dumps(value, ensure_ascii=False)):
            yield word, True
    else:
        yield json.dumps(value, ensure_ascii=False, default=str), False
