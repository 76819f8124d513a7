"""Sessions and events with chosen ids and timestamps, for the observability tests.

Rows are saved raw (as `manage.py import_session` does), so `auto_now` fields keep the given times. The
`metrics_fixture` numbers are worked out by hand in its docstring; the view tests assert exactly those.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any

from django.contrib.auth import get_user_model
from django.test import Client

from sessions_app.models import AgentSession, AgentSessionEvent, EventType

D1 = date(2025, 3, 10)
D2 = date(2025, 3, 11)
U1 = uuid.UUID("11111111-1111-4111-8111-111111111111")
U2 = uuid.UUID("22222222-2222-4222-8222-222222222222")


def login_staff(client: Client) -> Client:
    """Log `client` in as a superuser without a password: no slow hashing (unlike pytest-django's admin_client)."""
    user = get_user_model().objects.create(username="staff", is_staff=True, is_superuser=True)
    client.force_login(user)
    return client


def at(day: date, clock: str) -> datetime:
    """`at(D1, "10:00:05")` → that UTC instant (fractions allowed: "10:00:04.5")."""
    hours, minutes, seconds = clock.split(":")
    whole = float(seconds)
    return datetime(day.year, day.month, day.day, int(hours), int(minutes), tzinfo=UTC) + timedelta(
        seconds=whole
    )


def make_session(
    *,
    user_id: uuid.UUID,
    created_at: datetime,
    status: str = "completed",
    session_id: uuid.UUID | None = None,
    metadata: dict[str, Any] | None = None,
) -> AgentSession:
    session = AgentSession(
        id=session_id or uuid.uuid4(),
        user_id=user_id,
        created_at=created_at,
        updated_at=created_at,
        status=status,
        metadata=metadata or {},
    )
    session.save_base(raw=True, force_insert=True)
    return session


def add_event(
    session: AgentSession,
    sequence: int,
    event_type: str,
    data: dict[str, Any],
    moment: datetime,
    duration_ms: int | None = None,
) -> AgentSessionEvent:
    event = AgentSessionEvent(
        session=session,
        sequence_number=sequence,
        event_type=event_type,
        data=data,
        timestamp=moment,
        duration_ms=duration_ms,
    )
    event.save_base(raw=True, force_insert=True)
    return event


def request_data(model: str, purpose: str | None = "trainer", **extra: Any) -> dict[str, Any]:
    data: dict[str, Any] = {"model": model, "prompt": "…", "estimated_tokens": 1000, **extra}
    if purpose is not None:
        data["purpose"] = purpose
    return data


def response_data(
    model: str,
    *,
    prompt: Any,
    completion: Any,
    cached: Any = 0,
    cache_write: Any = 0,
    total: Any,
    cost_cents: Any,
    purpose: str | None = None,
) -> dict[str, Any]:
    data: dict[str, Any] = {
        "model": model,
        "raw_response": {"id": "msg"},
        "text": "",
        "tokens": {
            "prompt": prompt,
            "completion": completion,
            "cached": cached,
            "cache_write": cache_write,
            "total": total,
        },
        "cost_cents": cost_cents,
    }
    if purpose is not None:
        data["purpose"] = purpose
    return data


def tool_call(name: str, call_id: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"tool_name": name, "arguments": arguments or {}, "call_id": call_id}


def tool_result(name: str, call_id: str, *, success: bool) -> dict[str, Any]:
    return {"tool_name": name, "result": {"formatted": "ok"}, "success": success, "call_id": call_id}


WORKOUT_ARTIFACT: dict[str, Any] = {
    "artifact_id": "art_abc123",
    "type": "exercise_list",
    "schema_version": "1.0",
    "title": "Push Day",
    "summary": {"exercise_count": 2, "estimated_duration_min": 25, "muscles_targeted": ["Chest", "Triceps"]},
    "auto_start": False,
    "payload": {
        "title": "Push Day",
        "exercises": [
            {
                "id": "ex_1",
                "order": 1,
                "exercise_name": "Goblet Squat",
                "exercise_type": "reps",
                "sets": 3,
                "reps": [10, 10, 8],
                "load_each": [16, 16, 18],
                "load_unit": "kg",
                "rest_sec": 90,
                "muscles_utilized": [
                    {"muscle": "Quadriceps", "share": 0.7},
                    {"muscle": "Glutes", "share": 0.3},
                ],
                "goals_addressed": [{"goal": "strength", "share": 1.0}],
                "equipment": ["dumbbells"],
            },
            {
                "id": "ex_2",
                "order": 2,
                "exercise_name": "Plank",
                "exercise_type": "hold",
                "sets": 3,
                "hold_sec": [45, 45, 45],
                "rest_sec": 30,
                "muscles_utilized": [{"muscle": "Abs", "share": 1.0}],
                "goals_addressed": [{"goal": "stability", "share": 1.0}],
                "group": {"id": "superset-1", "type": "superset", "position": 1, "rounds": 3},
            },
        ],
    },
}


@dataclass
class MetricsFixture:
    a: AgentSession
    b: AgentSession
    c: AgentSession
    d: AgentSession


def metrics_fixture() -> MetricsFixture:
    """Four sessions over two UTC days, with these hand-computed aggregates.

    A (U1, created D1 10:00:00, completed), events 0-11, 10:00:00 → 10:00:20 (duration 20 000 ms):
      llm_responses: initializer haiku (50/10/0/0 total 60, 0.01¢, 400 ms), trainer sonnet (1000/200/3000/500
      total 4700, 1.5¢, 2000 ms), trainer sonnet (100/50/4000/0 total 4150, 0.5¢, 1000 ms)
      → llm_calls 3, iterations 2, prompt 1150, completion 260, cached 7000, cache_write 500, total 8910,
      cost 2.01¢, cache hit 7000/8650; tools generate_workout ✓ 120 ms, idle ✗ 5 ms → tool_calls 2,
      tool_failures 1; 1 artifact; model claude-sonnet-4-5.
    B (U1, created D1 23:59:50, error), events 0-3 from D1 23:59:55 to D2 00:00:05 (10 000 ms): one trainer
      haiku call (10/5/0/0 total 15, 0.003¢, 2000 ms) on D1, an error on D2.
    C (U2, created D2 08:00:00, active), events 0-5, 08:00:00 → 08:00:05 (5 000 ms): one request without a
      purpose (counts as trainer) on gpt-4o-mini; its response has prompt 200.9 (→ 200), completion "x"
      (→ 0), cached 100, no cache_write, total 300, cost "bad" (→ 0) and 1500 ms → cache hit 1/3;
      message_notify_user ✓ 3 ms; 1 knowledge.
    D (U2, created D2 09:00:00, completed): no events.

    Per day and user: (D1, U1) sessions 2, with errors 0, events 15, llm_calls 4, iterations 3, prompt 1160,
    completion 265, cached 7000, cache_write 500, total 8925, cost 2.013¢; (D2, U1) sessions 1, with errors 1,
    events 1, errors 1; (D2, U2) sessions 1, events 6, llm_calls 1, prompt 200, cached 100, total 300.
    """
    a = make_session(user_id=U1, created_at=at(D1, "10:00:00"))
    add_event(a, 0, EventType.USER_MESSAGE, {"message": "Plan a push day"}, at(D1, "10:00:00"))
    add_event(
        a, 1, EventType.LLM_REQUEST, request_data("claude-haiku-4-5", "initializer"), at(D1, "10:00:01")
    )
    add_event(
        a,
        2,
        EventType.LLM_RESPONSE,
        response_data(
            "claude-haiku-4-5", prompt=50, completion=10, total=60, cost_cents=0.01, purpose="initializer"
        ),
        at(D1, "10:00:02"),
        400,
    )
    add_event(
        a,
        3,
        EventType.LLM_REQUEST,
        request_data("claude-sonnet-4-5", context_sequence=0, iteration=1),
        at(D1, "10:00:03"),
    )
    add_event(
        a,
        4,
        EventType.LLM_RESPONSE,
        response_data(
            "claude-sonnet-4-5",
            prompt=1000,
            completion=200,
            cached=3000,
            cache_write=500,
            total=4700,
            cost_cents=1.5,
        ),
        at(D1, "10:00:05"),
        2000,
    )
    add_event(a, 5, EventType.TOOL_CALL, tool_call("generate_workout", "c1"), at(D1, "10:00:06"))
    add_event(
        a,
        6,
        EventType.TOOL_RESULT,
        tool_result("generate_workout", "c1", success=True),
        at(D1, "10:00:07"),
        120,
    )
    add_event(a, 7, EventType.ARTIFACT, WORKOUT_ARTIFACT, at(D1, "10:00:08"))
    add_event(
        a,
        8,
        EventType.LLM_REQUEST,
        request_data("claude-sonnet-4-5", context_sequence=7, iteration=2),
        at(D1, "10:00:09"),
    )
    add_event(
        a,
        9,
        EventType.LLM_RESPONSE,
        response_data(
            "claude-sonnet-4-5", prompt=100, completion=50, cached=4000, total=4150, cost_cents=0.5
        ),
        at(D1, "10:00:11"),
        1000,
    )
    add_event(a, 10, EventType.TOOL_CALL, tool_call("idle", "c2"), at(D1, "10:00:12"))
    add_event(a, 11, EventType.TOOL_RESULT, tool_result("idle", "c2", success=False), at(D1, "10:00:20"), 5)

    b = make_session(user_id=U1, created_at=at(D1, "23:59:50"), status="error")
    add_event(b, 0, EventType.USER_MESSAGE, {"message": "Late night question"}, at(D1, "23:59:55"))
    add_event(
        b, 1, EventType.LLM_REQUEST, request_data("claude-haiku-4-5", context_sequence=0), at(D1, "23:59:56")
    )
    add_event(
        b,
        2,
        EventType.LLM_RESPONSE,
        response_data("claude-haiku-4-5", prompt=10, completion=5, total=15, cost_cents=0.003),
        at(D1, "23:59:58"),
        2000,
    )
    add_event(
        b, 3, EventType.ERROR, {"message": "boom", "stack": None, "context": "llm_call"}, at(D2, "00:00:05")
    )

    c = make_session(user_id=U2, created_at=at(D2, "08:00:00"), status="active")
    add_event(c, 0, EventType.USER_MESSAGE, {"message": "Hi"}, at(D2, "08:00:00"))
    add_event(c, 1, EventType.LLM_REQUEST, request_data("gpt-4o-mini", purpose=None), at(D2, "08:00:01"))
    odd_tokens = {"prompt": 200.9, "completion": "x", "cached": 100, "total": 300}
    add_event(
        c,
        2,
        EventType.LLM_RESPONSE,
        {"model": "gpt-4o-mini", "raw_response": {}, "tokens": odd_tokens, "cost_cents": "bad"},
        at(D2, "08:00:03"),
        1500,
    )
    add_event(c, 3, EventType.TOOL_CALL, tool_call("message_notify_user", "c3"), at(D2, "08:00:04"))
    add_event(
        c,
        4,
        EventType.TOOL_RESULT,
        tool_result("message_notify_user", "c3", success=True),
        at(D2, "08:00:04.5"),
        3,
    )
    add_event(
        c,
        5,
        EventType.KNOWLEDGE,
        {"source": "user_profile", "params": {}, "data": "<p/>"},
        at(D2, "08:00:05"),
    )

    d = make_session(user_id=U2, created_at=at(D2, "09:00:00"))
    return MetricsFixture(a=a, b=b, c=c, d=d)


def busy_session(*, events: int, user_id: uuid.UUID | None = None, status: str = "completed") -> AgentSession:
    """A session with `events` events of every kind (one bulk insert), for query-count tests."""
    session = make_session(user_id=user_id or uuid.uuid4(), created_at=datetime.now(UTC), status=status)
    cycle: list[tuple[str, dict[str, Any]]] = [
        (EventType.USER_MESSAGE, {"message": "Next set?"}),
        (EventType.LLM_REQUEST, request_data("claude-haiku-4-5")),
        (
            EventType.LLM_RESPONSE,
            response_data("claude-haiku-4-5", prompt=10, completion=2, cached=30, total=42, cost_cents=0.001),
        ),
        (EventType.TOOL_CALL, tool_call("generate_workout", "c")),
        (EventType.TOOL_RESULT, tool_result("generate_workout", "c", success=True)),
        (EventType.ARTIFACT, WORKOUT_ARTIFACT),
        (EventType.KNOWLEDGE, {"source": "user_profile", "params": {}, "data": "<profile/>"}),
        (EventType.ERROR, {"message": "transient", "stack": None, "context": "tool_execution"}),
    ]
    AgentSessionEvent.objects.bulk_create(
        AgentSessionEvent(
            session=session,
            sequence_number=sequence,
            event_type=cycle[sequence % len(cycle)][0],
            data=cycle[sequence % len(cycle)][1],
            duration_ms=sequence % 300,
        )
        for sequence in range(events)
    )
    return session
