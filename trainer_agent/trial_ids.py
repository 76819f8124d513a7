"""Ids a service makes up during a recorded trial, as placeholders a replay can resolve (docs/evals.md).

`{{art_1}}` is the first `art_…` id that appeared in the model's context, `{{ex_3}}` the third `ex_…` id,
`{{uuid_2}}` the second UUID. The recorder (scripts/trial_fixture.py) and the replaying provider
(`trainer_agent.evals.ReplayProvider`) number the ids of each trainer request's context in the same order, so
the replay answers with the ids of its own run. No Django imports: the recording script runs without settings.
"""

from __future__ import annotations

import re
from typing import Any

ID_PATTERN = re.compile(
    r"\b(?:(?P<prefix>[a-z]{2,5})_[0-9a-f]{6,}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\b"
)
PLACEHOLDER = re.compile(r"\{\{(?P<kind>[a-z]{2,5})_(?P<number>\d+)\}\}")


class IdRegistry:
    """Ids in the order they first appeared in the model's context, numbered per kind (`art`, `ex`, `uuid`)."""

    def __init__(self) -> None:
        self.by_kind: dict[str, list[str]] = {}
        self.seen: dict[str, str] = {}

    def observe(self, text: str) -> None:
        for match in ID_PATTERN.finditer(text):
            value = match.group(0)
            if value in self.seen:
                continue
            kind = match.group("prefix") or "uuid"
            numbered = self.by_kind.setdefault(kind, [])
            numbered.append(value)
            self.seen[value] = f"{{{{{kind}_{len(numbered)}}}}}"

    def placeholders(self, value: Any) -> Any:
        """`value` with every known id replaced by its placeholder (recording)."""
        if isinstance(value, str):
            return ID_PATTERN.sub(lambda m: self.seen.get(m.group(0), m.group(0)), value)
        if isinstance(value, list):
            return [self.placeholders(item) for item in value]
        if isinstance(value, dict):
            return {key: self.placeholders(item) for key, item in value.items()}
        return value

    def resolve(self, value: Any) -> Any:
        """`value` with every placeholder replaced by the live id (replay); KeyError names an unknown one."""
        if isinstance(value, str):

            def live(match: re.Match[str]) -> str:
                ids = self.by_kind.get(match.group("kind"), [])
                number = int(match.group("number"))
                if not 1 <= number <= len(ids):
                    raise KeyError(f"{match.group(0)} (the context has shown {len(ids)} such ids)")
                return ids[number - 1]

            return PLACEHOLDER.sub(live, value)
        if isinstance(value, list):
            return [self.resolve(item) for item in value]
        if isinstance(value, dict):
            return {key: self.resolve(item) for key, item in value.items()}
        return value


def context_texts(user_data: str, messages: list[dict[str, Any]]) -> list[str]:
    """What the model read in one trainer call, in order: user data, then text and tool-result blocks."""
    texts = [user_data]
    for message in messages:
        content = message.get("content")
        for block in [{"type": "text", "text": content}] if isinstance(content, str) else content or []:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text":
                texts.append(str(block.get("text", "")))
            elif block.get("type") == "tool_result":
                inner = block.get("content")
                if isinstance(inner, list):
                    texts.extend(str(part.get("text", "")) for part in inner if isinstance(part, dict))
                else:
                    texts.append(str(inner or ""))
    return texts
