"""Context builder (docs/contracts.md §8 (model context)): the session's context events → the model's request.

The request has four cacheable layers, in order: tools, system prompt, user data XML, messages. The first
three are identical from one iteration to the next, and the messages only ever grow at the end, because
events are append-only and are converted deterministically. So each request is a prefix-extension of the
previous one and the provider's prompt cache can serve everything but the newest events. The provider body
builders place the four `cache_control` breakpoints (see `llm.anthropic_provider.build_anthropic_body`).

Within a turn the loop passes one `ContextCache` to every build: events never change once written, so a build
reads only the events added since the previous one and continues the message conversion where it stopped.
The cost of an iteration then does not grow with the length of the session. The user data is fresh on every
build (docs/contracts.md §8.2 (user data block)).

The loop builds each next request under the session's lock, in the transaction that stores it
(`build_locked_context`): the lock's query of the session's state tells it whether anyone else wrote since the
turn's last write (then the new events are read, else the cache already holds them: the loop adds what it
writes) and whether the user data changed (`datasources_app.selectors.user_data_version`; then it is read
again, else the cache's is current). In the common case a build reads nothing beyond that one query.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from django.db.models import OuterRef

from datasources_app import formatters
from datasources_app.selectors import UserDataSources, user_data_sources, user_data_version
from datasources_app.sources import user_data_day, user_data_xml_of
from sessions_app.models import CONTEXT_EVENT_TYPES, AgentSession, AgentSessionEvent, EventType
from sessions_app.selectors import SessionState, StateQuery, context_events_after, session_state_query
from sessions_app.services import waking_followers
from sessions_app.transcript import ASK_USER_TOOL, call_of
from tools_app.formatting import shorten
from tools_app.registry import registry_generation, tool_specs
from trainer_agent.agents.registry import TRAINER_AGENT_ID, get_agent
from trainer_agent.llm.types import LLMRequest, ToolSpec, _content_characters, total_characters

# TRAINER_AGENT_ID: the agent definition (trainer_agent.agents.definitions) whose prompt, temperature,
# max_tokens and tools a trainer request carries.
EMPTY_CONTEXT_ERROR = "Cannot build context: no events in session"
# Tool results are shown to the model as their formatted observation; a result without one (older data,
# imports) falls back to compact JSON capped at this many characters.
MAX_RAW_RESULT_CHARS = 4000
INTERRUPTED_CALL_TEXT = "The call was interrupted."


class ContextBuildError(RuntimeError):
    """The session has nothing to build a context from."""


@dataclass
class AgentContext:
    """docs/contracts.md §8 (model context): what one LLM call is built from.

    `messages` is a new list, but its messages and their content blocks are shared with the turn's
    `ContextCache` (that is what keeps a build cheap): treat them as read-only, as the providers do (they copy
    before adding markers).
    """

    system_prompt: str
    user_data_xml: str
    messages: list[dict[str, Any]]
    tools: list[ToolSpec]
    session: AgentSession
    user_id: uuid.UUID
    event_count: int
    last_sequence: int
    checkpoints: list[int] = field(default_factory=list)
    # Characters of the whole request (system, user data, tools, messages), counted as
    # `LLMRequest.estimated_tokens` counts them, but without walking the whole history again.
    characters: int = 0

    @property
    def estimated_tokens(self) -> int:
        """docs/contracts.md §8.4 (token estimate): characters / 4."""
        return self.characters // 4

    def to_request(self, *, model: str) -> LLMRequest:
        """The call for `model` with the `trainer` definition's temperature and max_tokens, read from the agent
        registry on every call so that a replaced definition takes effect at the next request."""
        definition = get_agent(TRAINER_AGENT_ID)
        return LLMRequest(
            model=model,
            system_prompt=self.system_prompt,
            user_data_xml=self.user_data_xml,
            messages=self.messages,
            tools=self.tools,
            max_tokens=definition.max_tokens,
            temperature=definition.temperature,
            user_id=str(self.user_id),
        )


def trainer_tool_specs(names: Iterable[str] | None = None) -> list[ToolSpec]:
    """The registry's tools in their stable order, as provider-neutral specs."""
    return [ToolSpec(spec["name"], spec["description"], spec["input_schema"]) for spec in tool_specs(names)]


# The tool lists of this process, with their size in characters, by the names asked for: the same for every
# turn while the registry does not change (`registry_generation`), so a turn does not copy ~25 JSON schemas
# again. Shared read-only: the providers copy a spec before adding anything to it.
_tool_lists: tuple[int, dict[tuple[str, ...] | None, tuple[list[ToolSpec], int]]] = (-1, {})


def shared_tool_list(key: tuple[str, ...] | None) -> tuple[list[ToolSpec], int]:
    """`trainer_tool_specs(key)` and its characters, made once per registry generation."""
    global _tool_lists
    generation = registry_generation()
    held, lists = _tool_lists
    if held != generation:
        lists = {}
        _tool_lists = (generation, lists)
    found = lists.get(key)
    if found is None:
        tools = trainer_tool_specs(key)
        characters = total_characters(
            LLMRequest(model="", system_prompt="", user_data_xml="", messages=[], tools=tools)
        )
        found = lists[key] = (tools, characters)
    return found


@dataclass
class _UserData:
    """The turn's user data: its sources as last read, the version they were read at, and their XML for a day."""

    version: tuple[Any, ...]
    sources: UserDataSources
    day: date | None = None
    xml: str = ""

    def xml_on(self, day: date) -> str:
        if day != self.day:
            self.day, self.xml = day, user_data_xml_of(self.sources, today=day)
        return self.xml


@dataclass
class ContextCache:
    """What the context builds of one turn share, so that an iteration's cost does not grow with history.

    Holds the events already read (from `context_start`), the message conversion so far, and the tool list;
    for the loop's builds under the lock (`build_locked_context`) also how far the session was seen
    (`through`) and the user data with its version. Safe because events are append-only: a later build only
    adds what was written since. If the session's context start moves (a checkpoint), the cache starts over.
    """

    context_start: int | None = None
    last_sequence: int = -1
    event_count: int = 0
    checkpoints: list[int] = field(default_factory=list)
    builder: _MessageBuilder = field(default_factory=lambda: _MessageBuilder())
    tools: list[ToolSpec] | None = None
    tools_key: tuple[str, ...] | None = None
    tool_characters: int = 0
    # Every event of the session numbered up to `through` has been seen (its context events added): the loop's
    # own writes move it on (`written`), so a build under the lock reads events only when someone else wrote.
    through: int = -1
    user_data: _UserData | None = None
    state_query: StateQuery | None = None

    def units(self) -> tuple[str, str] | None:
        """The user's (weight, distance) units as the turn's last request showed them; None before a build
        under the lock has read the user data."""
        if self.user_data is None:
            return None
        return (self.user_data.sources.settings.weight_unit, self.user_data.sources.settings.distance_unit)

    def state_query_of(self, session: AgentSession) -> StateQuery:
        """The turn's query of the session's state (`session_state_read`), made on first use."""
        if self.state_query is None:
            self.state_query = session_state_read(session)
        return self.state_query

    def restart(self, context_start: int) -> None:
        self.context_start = context_start
        self.last_sequence = context_start - 1
        self.event_count = 0
        self.checkpoints = []
        self.builder = _MessageBuilder()

    def add(self, events: Iterable[AgentSessionEvent]) -> None:
        for event in events:
            self.builder.add(event)
            self.event_count += 1
            self.last_sequence = event.sequence_number
            if event.event_type == EventType.CHECKPOINT:
                self.checkpoints.append(event.sequence_number)

    def written(self, stored: Sequence[AgentSessionEvent]) -> None:
        """Events this turn just stored: added without reading them back when they directly follow what the
        cache has seen (nobody else wrote in between); otherwise the next build under the lock reads them."""
        if self.context_start is None or not stored or stored[0].sequence_number != self.through + 1:
            return
        self.add(event for event in stored if event.event_type in CONTEXT_EVENT_TYPES)
        self.through = stored[-1].sequence_number

    def tool_list(self, names: Iterable[str] | None) -> tuple[list[ToolSpec], int]:
        key = tuple(names) if names is not None else None
        if self.tools is None or key != self.tools_key:
            self.tools, self.tool_characters = shared_tool_list(key)
            self.tools_key = key
        return self.tools, self.tool_characters


def build_context(
    *,
    session: AgentSession,
    user_id: uuid.UUID,
    events: Sequence[AgentSessionEvent] | None = None,
    up_to_sequence: int | None = None,
    tool_names: Iterable[str] | None = None,
    cache: ContextCache | None = None,
) -> AgentContext:
    """Build the context for the next LLM call from the session's context events.

    `events` lets a caller pass events it already holds (the step-replay view); otherwise they are read from
    the session's `context_start_sequence` on. `up_to_sequence` rebuilds the context as it was when that event
    was the newest. `cache` (one per turn) makes each build read and convert only the events that are new
    since the previous build with the same cache. User data is fetched fresh on every build (docs/contracts.md §8.2 (user data block)).
    Raises ContextBuildError when there are no events.
    """
    sources: UserDataSources | None
    if events is not None or up_to_sequence is not None:
        cache = ContextCache()
        if events is not None:
            loaded, sources = list(events), user_data_sources(user_id=user_id)
        else:
            loaded, sources = _read_context(session, user_id, cache)
        if up_to_sequence is not None:
            loaded = [event for event in loaded if event.sequence_number <= up_to_sequence]
        cache.add(loaded)
    else:
        cache = cache if cache is not None else ContextCache()
        loaded, sources = _read_context(session, user_id, cache)
        cache.add(loaded)
    assert sources is not None  # read with the events
    return _assemble(session, user_id, cache, user_data_xml_of(sources), tool_names)


def session_state_read(session: AgentSession) -> StateQuery:
    """The state query `build_locked_context` needs (`append_events(read=…)`): the session's last number and
    context start, and the version of its user's data (`datasources_app.selectors.user_data_version`). Made once
    per turn (`ContextCache.state_query`)."""
    query = session_state_query(session=session, extra=user_data_version(user_id=OuterRef("user_id")))
    return waking_followers(query, session=session)  # the read is always followed by the request's write


def build_locked_context(
    *,
    session: AgentSession,
    user_id: uuid.UUID,
    cache: ContextCache,
    state: SessionState,
    new: Sequence[AgentSessionEvent] = (),
) -> AgentContext:
    """The context for the loop's next request, built while the session is locked, from the session's `state`
    (read with `session_state_read`) and `new`, the events about to be stored before the request (numbered).

    Events are read only when someone else wrote since the turn's last write or the context start moved (the
    cache holds the turn's own), and the user data only when its version changed: the request is the one
    `build_context` would make once these events are stored."""
    if state.context_start != cache.context_start or state.last_sequence != cache.through:
        loaded, _ = _read_context(session, user_id, cache, with_user_data=False)
        cache.add(loaded)
    cache.through = state.last_sequence
    cache.written(new)
    version = tuple(sorted(state.extra.items()))
    if cache.user_data is None or cache.user_data.version != version:
        cache.user_data = _UserData(version=version, sources=user_data_sources(user_id=user_id))
    user_data = cache.user_data
    return _assemble(session, user_id, cache, user_data.xml_on(user_data_day(user_data.sources)), None)


def _assemble(
    session: AgentSession,
    user_id: uuid.UUID,
    cache: ContextCache,
    user_data_xml: str,
    tool_names: Iterable[str] | None,
) -> AgentContext:
    if cache.event_count == 0:
        raise ContextBuildError(EMPTY_CONTEXT_ERROR)
    messages, message_characters = cache.builder.snapshot()
    if tool_names is None:  # the trainer's own list from the agent registry (all tools unless it names some)
        tool_names = get_agent(TRAINER_AGENT_ID).tool_names()
    tools, tool_characters = cache.tool_list(tool_names)
    system_prompt = get_agent(TRAINER_AGENT_ID).prompt
    return AgentContext(
        system_prompt=system_prompt,
        user_data_xml=user_data_xml,
        messages=messages,
        tools=tools,
        session=session,
        user_id=user_id,
        event_count=cache.event_count,
        last_sequence=cache.last_sequence,
        checkpoints=list(cache.checkpoints),
        characters=len(system_prompt) + len(user_data_xml) + tool_characters + message_characters,
    )


def _read_context(
    session: AgentSession, user_id: uuid.UUID, cache: ContextCache, *, with_user_data: bool = True
) -> tuple[list[AgentSessionEvent], UserDataSources | None]:
    """The context events after `cache.last_sequence` (restarting the cache if the context start moved) and the
    user's data, fresh. A second events query only when the start moved past events the cache already holds."""
    previous_last = cache.last_sequence
    found = context_events_after(session=session, after_sequence=cache.last_sequence)
    sources = user_data_sources(user_id=user_id) if with_user_data else None
    if found is None:
        return [], sources  # the session is gone
    rows, start = found
    if start == cache.context_start:
        return rows, sources
    cache.restart(start)
    if previous_last < start:
        return rows, sources  # nothing at or after the start was cut off: the rows are the whole context
    again = context_events_after(session=session, after_sequence=start - 1)
    return (again[0] if again is not None else []), sources


class _MessageBuilder:
    """Events → Anthropic multi-turn messages (docs/contracts.md §8.1 (events to messages)), keeping the transcript valid.

    Invariants: every assistant tool_use is answered by a tool_result in the very next user message;
    consecutive user content is merged into one message; knowledge/artifact/checkpoint text that arrives
    while tool results are pending is buffered and appended after them. Blocks are never changed once made,
    and only the last message is ever extended, so a snapshot shares the rest and copies that one.
    """

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []
        self.pending: list[str] = []  # tool_use ids still awaiting their tool_result
        self.buffered: list[dict[str, Any]] = []
        self.characters = 0  # of every block made so far (as `LLMRequest.estimated_tokens` counts them)
        # Whether the previous event was a tool call: only then does a call join the same assistant message.
        # A call after anything else starts a new one, answering calls left pending (a crashed turn) first.
        self.after_call = False
        # The question of a successful message_ask_user still waiting for the user's reply (`pending_question_text`).
        self.asked: dict[str, dict[str, Any]] = {}
        self.question: dict[str, Any] | None = None

    def add(self, event: AgentSessionEvent) -> None:
        data = event.data if isinstance(event.data, dict) else {}
        kind = event.event_type
        after_call, self.after_call = self.after_call, kind == EventType.TOOL_CALL
        if kind == EventType.TOOL_CALL:
            self.tool_call(data, after_call=after_call)
            return
        if kind == EventType.USER_MESSAGE:
            if self.question is not None:
                # The reply to a question: say so right before it, so any model reads it as the answer first.
                self.user_text(pending_question_text(self.question))
                self.question = None
            self.user_text(str(data.get("message", "")))
        elif kind == EventType.TOOL_RESULT:
            self.tool_result(data)
        elif kind == EventType.KNOWLEDGE:
            self.user_text(knowledge_text(data))
        elif kind == EventType.ARTIFACT:
            self.user_text(artifact_text(data))
        elif kind == EventType.CHECKPOINT:
            self.user_text(checkpoint_text(data))

    def user_text(self, text: str) -> None:
        block = self._made({"type": "text", "text": text})
        if self.pending:
            self.buffered.append(block)
        else:
            self._append_user_blocks([block])

    def tool_call(self, data: dict[str, Any], *, after_call: bool = False) -> None:
        call = call_of(data)  # the transcript's reading of a tool_call
        block = self._made(
            {
                "type": "tool_use",
                "id": call.call_id,
                "name": call.tool_name,
                "input": canonical_json(call.arguments),
            }
        )
        self.question = None
        if block["name"] == ASK_USER_TOOL:
            self.asked[block["id"]] = dict(block["input"])
        last = self.messages[-1] if self.messages else None
        if self.pending and after_call and last is not None and last["role"] == "assistant":
            # Several tool_use blocks of one response, recorded one after the other.
            last["content"].append(block)
        else:
            self._close_pending()
            self.messages.append({"role": "assistant", "content": [block]})
        self.pending.append(block["id"])

    def tool_result(self, data: dict[str, Any]) -> None:
        call_id = str(data.get("call_id", ""))
        if call_id not in self.pending:
            return  # a result without its call (e.g. cut off by a checkpoint) cannot be shown alone
        block: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": call_id,
            "content": _result_text(data),
        }
        if not data.get("success", True):
            block["is_error"] = True
        self._result_message().append(self._made(block))
        self.pending.remove(call_id)
        asked = self.asked.pop(call_id, None)
        if asked is not None and data.get("success", True):
            self.question = asked
        if not self.pending:
            self._flush_buffer()

    def snapshot(self) -> tuple[list[dict[str, Any]], int]:
        """The finished messages and their characters, leaving this builder open for more events.

        Later events only ever extend the last message (a call joining its response, user content merged, a
        result joining its results), so that one is copied and every earlier message is shared: the cost does
        not grow with the history.
        """
        twin = _MessageBuilder()
        twin.messages = self.messages[:-1]
        if self.messages:
            last = self.messages[-1]
            twin.messages.append({"role": last["role"], "content": list(last["content"])})
        twin.pending = list(self.pending)
        twin.buffered = list(self.buffered)
        twin.characters = self.characters
        twin.after_call = self.after_call
        twin.asked = dict(self.asked)
        twin.question = self.question
        return twin.finish(), twin.characters

    def finish(self) -> list[dict[str, Any]]:
        self._close_pending()
        self._flush_buffer()
        # The first message must come from the user (a checkpoint can start the window mid-turn).
        while self.messages and self.messages[0]["role"] != "user":
            dropped = self.messages.pop(0)
            self.characters -= _content_characters(dropped["content"])
        return self.messages

    def _made(self, block: dict[str, Any]) -> dict[str, Any]:
        self.characters += _content_characters([block])
        return block

    def _result_message(self) -> list[dict[str, Any]]:
        last = self.messages[-1]
        if last["role"] == "user" and any(b.get("type") == "tool_result" for b in last["content"]):
            content: list[dict[str, Any]] = last["content"]
            return content
        self.messages.append({"role": "user", "content": []})
        new_content: list[dict[str, Any]] = self.messages[-1]["content"]
        return new_content

    def _close_pending(self) -> None:
        """Answer tool calls whose result never arrived (a crashed turn) so the transcript stays valid."""
        for call_id in list(self.pending):
            self.tool_result(
                {"call_id": call_id, "success": False, "result": {"formatted": INTERRUPTED_CALL_TEXT}}
            )

    def _flush_buffer(self) -> None:
        if self.buffered:
            blocks, self.buffered = self.buffered, []
            self._append_user_blocks(blocks)

    def _append_user_blocks(self, blocks: list[dict[str, Any]]) -> None:
        last = self.messages[-1] if self.messages else None
        if last is not None and last["role"] == "user":
            last["content"].extend(blocks)
        else:
            self.messages.append({"role": "user", "content": list(blocks)})


def events_to_messages(events: Iterable[AgentSessionEvent]) -> list[dict[str, Any]]:
    """Convert context events, in sequence order, to Anthropic messages (content always a block list)."""
    builder = _MessageBuilder()
    for event in events:
        builder.add(event)
    return builder.finish()


def knowledge_text(data: dict[str, Any]) -> str:
    return f'<knowledge source="{data.get("source", "unknown")}">\n{data.get("data", "")}\n</knowledge>'


def pending_question_text(arguments: dict[str, Any]) -> str:
    """The block placed before the user's reply to a question (docs/contracts.md §8.1 (events to messages))."""
    question = str(arguments.get("question") or arguments.get("text") or "").strip()
    options = [str(option) for option in arguments.get("options") or () if str(option).strip()]
    listed = f" Options offered: {' | '.join(options)}." if options else ""
    return (
        f"<pending_question>\nYou asked the user: {json.dumps(question, ensure_ascii=False)}{listed} "
        "The next user message answers it: read it as that answer first and finish the request that led to "
        "the question, unless the message clearly asks for something else.\n</pending_question>"
    )


def checkpoint_text(data: dict[str, Any]) -> str:
    return f"<checkpoint>\n{data.get('summary', '')}\n</checkpoint>"


def artifact_text(data: dict[str, Any]) -> str:
    """A compact description of an artifact: enough for the model to refer to it, not the full payload."""
    lines = [str(data.get("title", ""))]
    payload = data.get("payload") if isinstance(data.get("payload"), dict) else {}
    for exercise in payload.get("exercises", []) if payload else []:
        if isinstance(exercise, dict):
            line = f"{exercise.get('order', '?')}. [{exercise.get('id', '')}] {describe_exercise(exercise)}"
            lines.append("; ".join([line, *artifact_tags(exercise)]))
    body = "\n".join(line for line in lines if line)
    return f'<artifact type="{data.get("type", "")}" id="{data.get("artifact_id", "")}">\n{body}\n</artifact>'


_SECTION_TAGS = {"warmup": "warm-up", "cooldown": "cool-down"}


def artifact_tags(exercise: dict[str, Any]) -> list[str]:
    """What a model needs besides the prescription to act on one exercise: "warm-up" / "cool-down" (not what
    sets and loads are reported for), the equipment it uses ("no bench today" → which ones) and its note."""
    group = exercise.get("group")
    section = group.get("type") if isinstance(group, dict) else None
    tags = [_SECTION_TAGS[section]] if section in _SECTION_TAGS else []
    equipment = [str(slug) for slug in exercise.get("equipment") or () if slug != "bodyweight"]
    if equipment:
        tags.append("equipment: " + ", ".join(slug.replace("_", " ") for slug in equipment))
    note = " ".join(str(exercise.get("notes") or "").replace(";", ",").split())
    if note:
        # A kept cue ("pain-free range") the model must not drop when it changes the exercise; cut short, and
        # without "; ", which separates the tags.
        tags.append(f"note: {shorten(note, NOTE_TAG_CHARS)}")
    return tags


# The note tag is a reminder, not the note: the card shows it whole.
NOTE_TAG_CHARS = 60


def describe_exercise(exercise: dict[str, Any]) -> str:
    """One line such as "Goblet Squat — 3×10 @ 16kg, rest 90s": the prescription as every surface reads it
    (`formatters.exercise_prescription`), the rest after each set, a round group's header."""
    name = exercise.get("exercise_name", "?")
    details = formatters.exercise_prescription(exercise)
    rest = formatters.exercise_rest(exercise)
    line = f"{name} — {details}" if details else str(name)
    if rest:
        line += f", rest {rest}"
    if formatters.in_round_group(exercise):  # done once per round of its group
        line += f" [{formatters.group_header(exercise['group'])}]"
    return line


def canonical_json(value: Any) -> Any:
    """`value` with every object's keys sorted. PostgreSQL's jsonb gives keys back in its own order, SQLite in
    the order written; sorting makes the replayed tool calls, and so the whole request, the same on both."""
    if isinstance(value, dict):
        return {key: canonical_json(value[key]) for key in sorted(value)}
    if isinstance(value, list):
        return [canonical_json(item) for item in value]
    return value


def _result_text(data: dict[str, Any]) -> str:
    result = data.get("result")
    if isinstance(result, dict) and isinstance(result.get("formatted"), str):
        return result["formatted"]
    text = result if isinstance(result, str) else json.dumps(result, sort_keys=True, default=str)
    return text[:MAX_RAW_RESULT_CHARS]
