"""The human console log of docs/contracts.md §15.1 (console log): `14:32:01.123 [a1b2c3d4] 👤 User: "..."`.

`format_event` renders one stored event; the sink logs every event through it, and
`manage.py replay_session --format console` prints a whole session with it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from sessions_app.dashboards import format_cache_hit_rate
from sessions_app.events import is_trainer, purpose_of

ICONS = {
    "user_message": "👤",
    "llm_request": "📤",
    "llm_response": "📥",
    "tool_call": "🔧",
    "tool_result": "🔧",
    "knowledge": "📚",
    "artifact": "📦",
    "error": "❌",
    "checkpoint": "📌",
}
PREVIEW_CHARS = 60


def k_tokens(count: int | float) -> str:
    """1234 → "1.2K", 999 → "999"."""
    if count >= 1000:
        return f"{count / 1000:.1f}K"
    return str(int(count))


def seconds_or_ms(duration_ms: int | None) -> str:
    if duration_ms is None:
        return ""
    return f"{duration_ms / 1000:.1f}s" if duration_ms >= 1000 else f"{duration_ms}ms"


def _preview(value: Any, limit: int = PREVIEW_CHARS) -> str:
    text = (
        value
        if isinstance(value, str)
        else json.dumps(value, ensure_ascii=False, default=str, separators=(",", ":"))
    )
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _without_text(llm_response: dict[str, Any]) -> str:
    """A response that only called tools: its stop reason and the tools it called, as the admin shows it."""
    line = f"stop: {llm_response.get('stop_reason') or '—'}"
    names = tool_call_names(llm_response.get("raw_response"))
    return f"{line} → {', '.join(names)}" if names else line


def tool_call_names(raw_response: Any) -> list[str]:
    """Tools a stored response called, from its wire JSON: Anthropic-style `tool_use` content blocks (also the
    offline and scripted models') or OpenAI `tool_calls`; none when the stored response was truncated."""
    if not isinstance(raw_response, dict):
        return []
    names: list[str] = []
    for block in raw_response.get("content") or []:
        if isinstance(block, dict) and block.get("type") == "tool_use":
            names.append(str(block.get("name", "?")))
    for choice in raw_response.get("choices") or []:
        message = choice.get("message") if isinstance(choice, dict) else None
        if not isinstance(message, dict):
            continue
        for call in message.get("tool_calls") or []:
            function = call.get("function") if isinstance(call, dict) else None
            if isinstance(function, dict):
                names.append(str(function.get("name", "?")))
    return names


def describe(event_type: str, data: dict[str, Any], duration_ms: int | None = None) -> str:
    """The part after the icon: event name, arrow, details."""
    if event_type == "user_message":
        return f'User: "{_preview(data.get("message", ""))}"'
    if event_type == "llm_request":
        purpose = "" if is_trainer(data) else f" ({purpose_of(data)})"
        return f"LLM Request → {data.get('model', '?')}{purpose}  est. {k_tokens(data.get('estimated_tokens', 0))} tokens"
    if event_type == "llm_response":
        tokens = data.get("tokens") or {}
        text = data.get("text") or ""
        line = (
            f"LLM Response ← {_preview(text, 40) if text else _without_text(data)}"
            f"  {k_tokens(tokens.get('total', 0))} tokens ({k_tokens(tokens.get('cached', 0))} cached)"
            f" | ${float(data.get('cost_cents', 0)) / 100:.4f}"
        )
        return f"{line} | {seconds_or_ms(duration_ms)}" if duration_ms is not None else line
    if event_type == "tool_call":
        return f"Tool Call → {data.get('tool_name', '?')}  {_preview(data.get('arguments', {}))}"
    if event_type == "tool_result":
        mark = "✓" if data.get("success") else "✗"
        timing = f"  {seconds_or_ms(duration_ms)}" if duration_ms is not None else ""
        return f"Tool Result ← {data.get('tool_name', '?')}: {mark}{timing}"
    if event_type == "knowledge":
        return f"Knowledge ← {data.get('source', '?')}  {len(str(data.get('data', '')))} chars"
    if event_type == "artifact":
        return f'Artifact ← {data.get("type", "?")}  "{data.get("title", "")}"'
    if event_type == "error":
        context = f" [{data['context']}]" if data.get("context") else ""
        return f"Error{context}: {_preview(data.get('message', ''), 120)}"
    if event_type == "checkpoint":
        return f"Checkpoint ← events {data.get('events_summarized', '?')} summarised"
    return f"{event_type}: {_preview(data)}"


def format_event(
    *,
    timestamp: datetime,
    session_id: Any,
    event_type: str,
    data: dict[str, Any],
    duration_ms: int | None = None,
) -> str:
    clock = timestamp.strftime("%H:%M:%S.") + f"{timestamp.microsecond // 1000:03d}"
    icon = ICONS.get(event_type, "•")
    return f"{clock} [{str(session_id)[:8]}] {icon} {describe(event_type, data, duration_ms)}"


def session_totals(
    *, session_id: Any, total_tokens: int, cost_cents: float, metadata: Mapping[str, Any]
) -> str:
    """ "Session <id>: 17220 tokens, cache hit 60.8%, $0.0104." The rate is the session's stored
    `usage.cache_hit_rate` (a fraction, shown as a percentage here only); left out before any model call."""
    usage = metadata.get("usage")
    rate = usage.get("cache_hit_rate") if isinstance(usage, Mapping) else None
    cache = f", cache hit {format_cache_hit_rate(rate)}" if isinstance(rate, int | float) else ""
    return f"Session {session_id}: {total_tokens} tokens{cache}, ${cost_cents / 100:.4f}."
