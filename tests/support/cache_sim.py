"""A simulated Anthropic prompt cache at the HTTP boundary: what the usage of each response would have been.

Wrap any ``httpx2`` handler (e.g. a ``ScriptedTransport``) in ``PromptCacheSimulator``; for every Messages API
request it works out, from the request body alone, how many input tokens a prompt cache would have read,
written and left uncached, and rewrites the response's ``usage`` accordingly. The rules follow Anthropic's
documented behaviour:

- The prompt is the sequence of blocks tools → system → messages. A ``cache_control`` marker on a block is a
  breakpoint; the cached unit is the whole prefix up to and including that block (the marker itself is not
  content, so a marker that moves to a later block does not change the earlier prefix).
- A request reads the longest prefix that an earlier request WROTE, looking at the block boundaries at and up to
  ``LOOKBACK_BLOCKS`` before each of its breakpoints.
- A request writes the prefix at each of its breakpoints, but only prefixes of at least the model's
  ``min_cacheable_tokens`` (trainer_agent.llm.models); shorter ones are silently not cached.
- Tokens are estimated as characters / 4 of each block's canonical JSON. Caches are per model; no expiry.

Reported usage: ``cache_read_input_tokens`` (read), ``cache_creation_input_tokens`` (newly written, up to the
last breakpoint that could be written), ``input_tokens`` (the rest), ``output_tokens`` (from the wrapped reply).
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx2

from trainer_agent.llm.models import get_model

LOOKBACK_BLOCKS = 20
CHARS_PER_TOKEN = 4

type Handler = Callable[[httpx2.Request], httpx2.Response]


@dataclass(frozen=True)
class SimulatedUsage:
    """One request's input split the way Anthropic reports it (all buckets disjoint)."""

    input_tokens: int
    cache_creation_input_tokens: int
    cache_read_input_tokens: int
    output_tokens: int = 0

    @property
    def prompt_total(self) -> int:
        return self.input_tokens + self.cache_creation_input_tokens + self.cache_read_input_tokens

    @property
    def hit_rate(self) -> float:
        """DESIGN.md: cached / (prompt + cached + cache_write), as a fraction."""
        return self.cache_read_input_tokens / self.prompt_total if self.prompt_total else 0.0


@dataclass(frozen=True)
class _Boundary:
    digest: str
    tokens: int
    is_breakpoint: bool


def prompt_blocks(body: dict[str, Any]) -> list[tuple[str, bool]]:
    """The body's blocks in cache order as (canonical JSON without the marker, carries a marker)."""
    blocks: list[tuple[str, bool]] = []

    def add(kind: str, block: dict[str, Any], **where: Any) -> None:
        bare = {key: value for key, value in block.items() if key != "cache_control"}
        text = json.dumps({"kind": kind, **where, "block": bare}, sort_keys=True, ensure_ascii=False)
        blocks.append((text, "cache_control" in block))

    for tool in body.get("tools", []):
        add("tool", tool)
    system = body.get("system", [])
    for block in [{"type": "text", "text": system}] if isinstance(system, str) else system:
        add("system", block)
    for index, message in enumerate(body.get("messages", [])):
        content = message["content"]
        for block in [{"type": "text", "text": content}] if isinstance(content, str) else content:
            add("message", block, role=message["role"], message=index)
    return blocks


def boundaries(body: dict[str, Any]) -> list[_Boundary]:
    """Each block boundary with the digest of everything before it and its cumulative token count."""
    digest = hashlib.sha256()
    characters = 0
    result = []
    for text, marked in prompt_blocks(body):
        digest.update(text.encode())
        digest.update(b"\x00")
        characters += len(text)
        result.append(_Boundary(digest.hexdigest(), characters // CHARS_PER_TOKEN, marked))
    return result


class PromptCacheSimulator:
    """An httpx2 handler wrapper that rewrites Anthropic usage as a prompt cache would report it.

    ``usages`` holds one ``SimulatedUsage`` per successful request, in order. Share one instance between
    sessions to simulate a cache that is already warm from other users (tools and system prompt are shared).
    """

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.usages: list[SimulatedUsage] = []
        self._written: dict[str, dict[str, int]] = {}  # model → prefix digest → tokens
        self._lock = threading.Lock()

    def client(self) -> httpx2.Client:
        return httpx2.Client(transport=httpx2.MockTransport(self))

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        response = self.handler(request)
        if response.status_code != 200:
            return response
        reply = json.loads(response.read())
        with self._lock:
            usage = self.account(body, output_tokens=int(reply.get("usage", {}).get("output_tokens", 0)))
        reply["usage"] = {
            "input_tokens": usage.input_tokens,
            "cache_creation_input_tokens": usage.cache_creation_input_tokens,
            "cache_read_input_tokens": usage.cache_read_input_tokens,
            "output_tokens": usage.output_tokens,
        }
        return httpx2.Response(200, json=reply, headers={"request-id": "req_simulated"})

    def account(self, body: dict[str, Any], *, output_tokens: int = 0) -> SimulatedUsage:
        """The usage of one request, recording the prefixes it writes for later requests."""
        written = self._written.setdefault(body["model"], {})
        minimum = get_model(body["model"]).min_cacheable_tokens
        points = boundaries(body)
        total = points[-1].tokens if points else 0
        breakpoints = [index for index, point in enumerate(points) if point.is_breakpoint]

        read = 0
        for index in breakpoints:
            for candidate in points[max(0, index - LOOKBACK_BLOCKS + 1) : index + 1]:
                if candidate.digest in written:
                    read = max(read, written[candidate.digest])

        writable = [points[index] for index in breakpoints if points[index].tokens >= minimum]
        for point in writable:
            written[point.digest] = point.tokens
        created = max(0, max((point.tokens for point in writable), default=0) - read)
        usage = SimulatedUsage(
            input_tokens=total - read - created,
            cache_creation_input_tokens=created,
            cache_read_input_tokens=read,
            output_tokens=output_tokens,
        )
        self.usages.append(usage)
        return usage

    @property
    def hit_rate(self) -> float:
        """Over every request so far: cached / (prompt + cached + cache_write)."""
        cached = sum(usage.cache_read_input_tokens for usage in self.usages)
        total = sum(usage.prompt_total for usage in self.usages)
        return cached / total if total else 0.0
