"""Partial tool input: JSON text pieces in, a report each time the parsed input grew, then one complete report."""

from __future__ import annotations

import itertools
import json

import pytest

from trainer_agent.llm.partial import PartialInput, PartialToolCalls, parse_partial_json
from trainer_agent.llm.types import PartialToolCall


def test_an_unfinished_string_is_kept_and_an_unfinished_key_is_not() -> None:
    """jiter's trailing-strings mode: the words written so far are visible, a half-written key is not."""
    assert parse_partial_json('{"message": "Here\'s yo') == {"message": "Here's yo"}
    assert parse_partial_json('{"message": "Hi", "artif') == {"message": "Hi"}
    assert parse_partial_json('{"exercises": [{"name": "Squat"}, {"na') == {
        "exercises": [{"name": "Squat"}, {}]
    }


def test_input_reports_only_when_the_parsed_value_changed() -> None:
    """Pieces that add nothing parseable (a key's first letters, whitespace) give no report."""
    partial = PartialInput()
    changes = [partial.feed(piece) for piece in ['{"mess', 'age": ', '"Hi', "", " there", '"', "}"]]
    assert changes == [True, False, True, False, True, False, False]
    assert partial.value == {"message": "Hi there"}
    assert partial.text == '{"message": "Hi there"}'


def test_text_that_is_not_json_keeps_the_last_value() -> None:
    """Garbage after a good start stops the growth; nothing raises."""
    partial = PartialInput()
    assert partial.feed('{"a": "b"')
    assert not partial.feed(", ]]]")
    assert partial.value == {"a": "b"}


def test_calls_report_growth_in_order_and_end_complete_with_the_final_arguments() -> None:
    """Each change is reported with the call's position, id and name; finish reports once, complete."""
    seen: list[PartialToolCall] = []
    calls = PartialToolCalls(seen.append)
    calls.start(0, call_id="toolu_1", name="message_notify_user")
    text = json.dumps({"message": "Your plan is ready"})
    for start in range(0, len(text), 5):
        calls.feed(0, text[start : start + 5])
    calls.finish(0, {"message": "Your plan is ready"})
    calls.finish(0, {"message": "ignored: already complete"})

    messages = [call.arguments.get("message", "") for call in seen]
    assert messages == sorted(messages, key=len)  # it only grows
    assert all(later.startswith(earlier) for earlier, later in itertools.pairwise(messages))
    assert [call.complete for call in seen] == [False] * (len(seen) - 1) + [True]
    assert seen[-1] == PartialToolCall(
        0, "toolu_1", "message_notify_user", {"message": "Your plan is ready"}, True
    )
    assert len({json.dumps(call.arguments) for call in seen[:-1]}) == len(seen) - 1  # no repeated report
    assert calls.unfinished() == []


def test_an_exception_from_the_callback_propagates_unchanged() -> None:
    """The callback's failure is the caller's, not swallowed or wrapped."""

    class Boom(Exception):
        pass

    def explode(call: PartialToolCall) -> None:
        raise Boom("from the preview publisher")

    calls = PartialToolCalls(explode)
    calls.start(0, call_id="c", name="idle")
    with pytest.raises(Boom, match="preview publisher"):
        calls.feed(0, '{"reason": "x')
