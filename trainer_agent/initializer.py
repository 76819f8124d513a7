"""The initializer (docs/contracts.md §9 (initializer)): before each turn, choose which user data to append as knowledge.

The `initializer` agent's model (its definition names INITIALIZER_MODEL, `gpt-4o-mini` by default with an
OpenAI key, else `offline`, which decides from keywords) reads the user's message and the sources already in
context and answers with strict JSON. Knowledge is append-only: a source already loaded with enough scope is
never fetched again; a wider range (more days of history) is appended as a new knowledge event.
A failed call (after the SDK's retries) or an unusable answer is recorded as an `error` event, the built-in
`offline` model answers the same request instead, and the turn goes on.
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from dataclasses import dataclass, field
from datetime import date
from typing import Any, Literal

from datasources_app.selectors import local_today, preparation_failed_since
from datasources_app.sources import (
    SourceError,
    all_sources,
    fetch_many,
)
from sessions_app.events import (
    INITIALIZER,
    ErrorData,
    InitializerRequest,
    InitializerResponse,
    KnowledgeData,
    Tokens,
)
from sessions_app.models import AgentSession, EventType
from sessions_app.selectors import existing_knowledge_sources
from sessions_app.services import NewEvent
from trainer_agent import tracing
from trainer_agent.agents.callbacks import callback_registry
from trainer_agent.agents.definitions import REASONS, selectable_sources, selection_schema
from trainer_agent.agents.registry import INITIALIZER_AGENT_ID, AgentDefinition, get_agent
from trainer_agent.llm.cost import cost_cents
from trainer_agent.llm.models import get_model
from trainer_agent.llm.providers import get_structured_provider
from trainer_agent.offline.structured import StructuredAnswers
from trainer_agent.sink import EventSink
from trainer_agent.tenancy import reads_together

logger = logging.getLogger(__name__)

# Its definition (trainer_agent.agents.definitions) holds the model, prompt, schema (with REASONS and the
# selectable sources), temperature and max_tokens.
Reason = Literal["not_in_context", "expand_range", "refresh_state"]
# The model that answers when the initializer's own fails: built in, it needs no key and decides from the request.
FALLBACK_MODEL = "offline"
OFFLINE_ANSWERS = StructuredAnswers()
# Sources whose state changes during a conversation: re-fetching them is a refresh, not a duplicate.
STATEFUL_SOURCES = frozenset({"current_workout_session", "active_preferences", "scheduled_workouts"})
SCHEDULE_SOURCE = "scheduled_workouts"


@dataclass
class KnowledgeSelection:
    source: str
    reason: str
    days_back: int | None = None

    def params(self) -> dict[str, Any]:
        return {"days_back": self.days_back} if self.days_back else {}


@dataclass
class Selection:
    reasoning: str
    append_knowledge: list[KnowledgeSelection] = field(default_factory=list)
    use_existing: list[str] = field(default_factory=list)


def _sources_catalogue() -> str:
    return "\n".join(f"- {s.name}: {s.description}" for s in all_sources() if s.name in selectable_sources())


def decide(source: str, days_back: int | None, existing: list[dict[str, Any]]) -> KnowledgeSelection | None:
    """Append-only rule: None when the source is already loaded with enough scope."""
    loaded = [e for e in existing if e.get("source") == source]
    if not loaded:
        return KnowledgeSelection(source, "not_in_context", days_back)
    if source in STATEFUL_SOURCES:
        return KnowledgeSelection(source, "refresh_state", days_back)
    if days_back is not None:
        widest = max(int((e.get("params") or {}).get("days_back") or 0) for e in loaded)
        if widest < days_back:
            return KnowledgeSelection(source, "expand_range", days_back)
    return None


# --- running it ---------------------------------------------------------------------------------------


def today_text(today: date) -> str:
    """ "Thursday 2025-11-13": what the selector model reads as the user's date."""
    return f"{today:%A} {today.isoformat()}"


def select_with_model(
    *,
    agent: AgentDefinition,
    message: str,
    existing: list[dict[str, Any]],
    sink: EventSink,
    today: date,
    fallback: bool = False,
) -> Selection:
    """Ask the agent's model for strict JSON with its prompt, schema, temperature and max_tokens (with
    `fallback`, FALLBACK_MODEL and the built-in schema); records the request/response events with usage and
    cost."""
    model_id = FALLBACK_MODEL if fallback else agent.resolved_model()
    model = get_model(model_id)
    # The fallback is the built-in model itself, whatever serves that id (a test may script it).
    provider = OFFLINE_ANSWERS if fallback else get_structured_provider(model_id)
    system = agent.prompt.format(sources=_sources_catalogue())
    own = agent.output_schema if isinstance(agent.output_schema, dict) and not fallback else None
    schema = own or selection_schema()
    user = json.dumps(
        {"user_message": message, "today": today_text(today), "loaded_sources": existing}, ensure_ascii=False
    )
    # The request is stored with its answer (one write, not two): nothing recovers from it (a turn continued
    # before its first trainer request runs the initializer again), and a failed call stores it before its error.
    request = NewEvent(
        EventType.LLM_REQUEST,
        InitializerRequest(
            model=model_id,
            purpose=INITIALIZER,
            prompt=user[:2000],
            estimated_tokens=(len(system) + len(user)) // 4,
        ),
    )
    try:
        result = tracing.complete_json(
            provider,
            model,
            purpose="initializer",
            system=system,
            user=user,
            json_schema=schema,
            schema_name="knowledge_selection",
            max_tokens=agent.max_tokens,
            temperature=agent.temperature,
        )
    except Exception:
        sink.record_all([request])
        raise
    tokens = result.usage.as_event_tokens()
    response = NewEvent(
        EventType.LLM_RESPONSE,
        InitializerResponse(
            model=model_id,
            purpose=INITIALIZER,
            raw_response=result.raw,
            tokens=Tokens.model_validate(tokens),
            cost_cents=cost_cents(model, result.usage),
        ),
        duration_ms=result.duration_ms,
    )
    sink.record_all([request, response])
    return parse_selection(result.data, existing)


def parse_selection(data: Any, existing: list[dict[str, Any]]) -> Selection:
    """Validate the model's JSON; unknown sources or reasons are an error, duplicates are dropped."""
    if not isinstance(data, dict) or not isinstance(data.get("append_knowledge"), list):
        raise ValueError("initializer output is not a selection object")
    allowed = set(selectable_sources())
    selection = Selection(
        reasoning=str(data.get("reasoning", "")), use_existing=list(data.get("use_existing") or [])
    )
    for item in data["append_knowledge"]:
        source = item.get("source") if isinstance(item, dict) else None
        if source not in allowed:
            raise ValueError(f"initializer chose an unknown source: {source!r}")
        reason = item.get("reason")
        if reason not in REASONS:
            raise ValueError(f"initializer gave an unknown reason {reason!r} for {source}")
        days = item.get("days_back")
        decision = decide(source, int(days) if isinstance(days, int) and days > 0 else None, existing)
        if decision is not None and all(s.source != source for s in selection.append_knowledge):
            selection.append_knowledge.append(decision)
    appended = {item.source for item in selection.append_knowledge}
    selection.use_existing = [source for source in selection.use_existing if source not in appended]
    return selection


def initialize_context(
    *, session: AgentSession, user_id: uuid.UUID, message: str, sink: EventSink
) -> Selection:
    """Select, fetch (in parallel) and append knowledge for this turn. Never raises. The agent callbacks hear
    it as the `initializer` agent's run (its result the selection)."""
    context = {"session_id": session.pk, "user_id": user_id}
    return callback_registry.run_agent(
        INITIALIZER_AGENT_ID,
        lambda: _initialize_context(session=session, user_id=user_id, message=message, sink=sink),
        context=context,
    )


def _initialize_context(
    *, session: AgentSession, user_id: uuid.UUID, message: str, sink: EventSink
) -> Selection:
    with reads_together():
        loaded = existing_knowledge_sources(session=session)
        today = local_today(user_id=user_id)
        untold_failure = preparation_failed_since(
            user_id=user_id,
            since=max(
                (item["loaded_at"] for item in loaded if item["source"] == SCHEDULE_SOURCE), default=None
            ),
            today=today,
        )
    existing = [{"source": item["source"], "params": item["params"]} for item in loaded]
    agent = get_agent(INITIALIZER_AGENT_ID)
    try:
        selection = select_with_model(agent=agent, message=message, existing=existing, sink=sink, today=today)
    except Exception as exc:
        sink.record(
            EventType.ERROR,
            ErrorData(
                message=f"initializer failed: {type(exc).__name__}: {exc}",
                context="context_init",
                stack=None,
            ),
        )
        selection = select_with_model(
            agent=agent, message=message, existing=existing, sink=sink, today=today, fallback=True
        )
    if untold_failure:
        show_failed_days(selection, existing)
    append_knowledge(selection=selection, user_id=user_id, sink=sink)
    return selection


def show_failed_days(selection: Selection, existing: list[dict[str, Any]]) -> None:
    """A plan day the week chain could not prepare, failed after the schedule was last loaded: the schedule is
    loaded whatever the message says, so the coach can tell the user (the chain runs after the turn that asked
    ended, and nothing else reaches the user) and offer to prepare the day again."""
    if any(item.source == SCHEDULE_SOURCE for item in selection.append_knowledge):
        return
    decision = decide(SCHEDULE_SOURCE, None, existing)
    if decision is not None:
        selection.append_knowledge.append(decision)


def append_knowledge(*, selection: Selection, user_id: uuid.UUID, sink: EventSink) -> None:
    if not selection.append_knowledge:
        return
    started = time.monotonic()
    requests = [(item.source, item.params()) for item in selection.append_knowledge]
    # One after another: these reads take a few ms each, and in a worker running many turns at once threads
    # buy no time, while each would open (and close) a database connection of its own: ~4 per turn.
    results = fetch_many(user_id=user_id, requests=requests, max_workers=1)
    elapsed_ms = int((time.monotonic() - started) * 1000)
    events: list[NewEvent] = []
    for item, result in zip(selection.append_knowledge, results, strict=True):
        if isinstance(result, SourceError):
            events.append(
                NewEvent(
                    EventType.ERROR,
                    ErrorData(
                        message=f"fetching {item.source} failed: {result.error}",
                        context="context_init",
                        stack=None,
                    ),
                )
            )
            continue
        events.append(
            NewEvent(
                EventType.KNOWLEDGE,
                KnowledgeData(source=item.source, params=item.params(), reason=item.reason, data=result.text),
                duration_ms=elapsed_ms,
            )
        )
    sink.record_all(events)
