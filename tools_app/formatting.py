"""How tool results are written for the model.

Every observation is wrapped in one of two tags (docs/contracts.md §11.1 (tool execution)); these are stable, since
past tool results stay in the cached context:

    <tool_result name="generate_workout">
    ...observation...
    </tool_result>

    <tool_error name="generate_workout">
    ...what went wrong, written so the model can correct its call...
    </tool_error>

The body is plain text meant for the model, not parsed as XML, so it is not escaped.

Observations come in three sizes (docs/contracts.md §11.2 (observations and status messages)); tools build theirs with the helpers below:
- `confirmation()`: an acknowledgement only ("ok", ~5 tokens), when the model needs no details;
- `summary()`: one line saying what changed (~20 tokens);
- `full_data()`: the data itself, when the model must reason over it.

A success that has something to tell the user closes with one line in the same words for every tool,
`tell_the_user()`: "Tell the user: <one or two plain sentences, no ids, in the user's units>", what a good coach
would say about it. A model passes it on in its own words; the offline coach relays it as it is.
"""

from __future__ import annotations

import json
from typing import Any

from tools_app.types import ObservationCategory

RESULT_TAG = "tool_result"
ERROR_TAG = "tool_error"
TELL_THE_USER = "Tell the user: "

# A summary is a single line; longer values are cut so a summary stays ~20 tokens.
SUMMARY_VALUE_LIMIT = 80


def wrap_in_xml(*, tool_name: str, text: str, is_error: bool) -> str:
    """Wrap an observation in `<tool_result>` or, for failures, `<tool_error>`."""
    tag = ERROR_TAG if is_error else RESULT_TAG
    return f'<{tag} name="{tool_name}">\n{text}\n</{tag}>'


def tell_the_user(text: str, sentence: str) -> str:
    """The observation `text` closed by the line that says what to tell the user (`text` alone without one)."""
    sentence = " ".join(sentence.split())
    if not sentence:
        return text
    return f"{text}\n{TELL_THE_USER}{sentence}" if text else f"{TELL_THE_USER}{sentence}"


def joined(items: list[str]) -> str:
    """'A', 'A and B', 'A, B and C': a list in a sentence."""
    return ", ".join(items[:-1]) + " and " + items[-1] if len(items) > 1 else "".join(items)


def counted(number: int, noun: str, plural: str = "") -> str:
    """'1 exercise', '3 exercises' ('2 entries' with `plural`): a count for the user's sentence."""
    return f"{number} {noun if number == 1 else plural or noun + 's'}"


def confirmation(word: str = "ok", *, note: str | None = None) -> str:
    """Category 1: a bare acknowledgement, optionally with a short note (e.g. a non-fatal warning)."""
    return f"{word} ({note})" if note else word


def summary(action: str, *details: Any) -> str:
    """Category 2: one line, e.g. `summary("saved", "preference", "no squats")` → 'saved: preference, no squats'."""
    parts = [shorten(str(detail)) for detail in details if detail not in (None, "")]
    return f"{action}: {', '.join(parts)}" if parts else action


def full_data(data: Any) -> str:
    """Category 3: the data itself, as compact but readable JSON (strings pass through unchanged)."""
    if isinstance(data, str):
        return data
    return json.dumps(data, ensure_ascii=False, indent=1, sort_keys=False, default=str)


def shorten(text: str, limit: int = SUMMARY_VALUE_LIMIT) -> str:
    """`text` on one line in at most `limit` characters: cut at a word where one ends in the last third, the cut
    marked with an ellipsis ("pain-free range, stop if…", not "pain-free range, stop if it pi…")."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    at_word = cut.rsplit(" ", 1)[0] if " " in cut[limit * 2 // 3 :] else cut
    return at_word.rstrip(" ,.;:") + "…"


def fallback_observation(category: ObservationCategory, data: dict[str, Any]) -> str:
    """The observation for a tool that did not write its own text."""
    if category == "confirmation":
        return confirmation(note=data.get("warning"))
    if category == "summary":
        details = [f"{key}={value}" for key, value in data.items() if not isinstance(value, dict | list)]
        return summary("done", *details)
    return full_data(data)
