"""`manage.py replay_session` (console, json, jsonl, --from-seq, --rerun) and `manage.py import_session`."""

from __future__ import annotations

import io
import json
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from sessions_app.models import AgentSession, AgentSessionEvent
from sessions_app.services import delete_session
from tests.trainer_agent.observability.support import metrics_fixture
from trainer_agent.console import format_event, tool_call_names
from trainer_agent.llm.providers import override_provider
from trainer_agent.llm.scripted import ScriptedProvider, tool_response
from trainer_agent.turns import run_turn

pytestmark = pytest.mark.django_db
SESSION_COLUMNS = [field.attname for field in AgentSession._meta.concrete_fields]
EVENT_COLUMNS = [field.attname for field in AgentSessionEvent._meta.concrete_fields]


def _run(*args: Any) -> str:
    out = io.StringIO()
    call_command("replay_session", *[str(arg) for arg in args], stdout=out, stderr=io.StringIO())
    return out.getvalue()


def _rows(session_id: uuid.UUID) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    session = AgentSession.objects.filter(pk=session_id).values(*SESSION_COLUMNS).get()
    events = list(
        AgentSessionEvent.objects.filter(session_id=session_id)
        .order_by("sequence_number")
        .values(*EVENT_COLUMNS)
    )
    return session, events


def _scripted_session() -> AgentSession:
    provider = ScriptedProvider(
        [
            tool_response("message_notify_user", {"message": "Hi there"}, cache_write_tokens=400),
            tool_response("idle", {"reason": "done"}, cache_read_tokens=400),
            tool_response("message_notify_user", {"message": "Sure"}, cache_read_tokens=420),
            tool_response("idle", {"reason": "done"}, cache_read_tokens=430),
        ]
    )
    user_id = uuid.uuid4()
    with override_provider("claude-haiku-4-5", provider):
        first = run_turn(user_id=user_id, message="hello coach", model="claude-haiku-4-5")
        run_turn(
            user_id=user_id, message="thanks, bye", session_id=first.session_id, model="claude-haiku-4-5"
        )
    return AgentSession.objects.get(pk=first.session_id)


def test_console_format_is_the_console_log() -> None:
    """One line per event, exactly as trainer_agent.console formats it (docs/contracts.md §15.1 (console log))."""
    fixture = metrics_fixture()
    lines = _run(fixture.a.pk).splitlines()
    events = AgentSessionEvent.objects.filter(session=fixture.a).order_by("sequence_number")
    assert lines == [
        format_event(
            timestamp=event.timestamp,
            session_id=fixture.a.pk,
            event_type=event.event_type,
            data=event.data,
            duration_ms=event.duration_ms,
        )
        for event in events
    ]
    assert lines[0] == f'10:00:00.000 [{str(fixture.a.pk)[:8]}] 👤 User: "Plan a push day"'
    assert lines[4].startswith(
        f"10:00:05.000 [{str(fixture.a.pk)[:8]}] 📥 LLM Response ← stop: —  4.7K tokens"
    )


def test_console_shows_why_a_response_without_text_stopped_and_the_tools_it_called() -> None:
    """A response that only called a tool prints its stop reason and the tool's name, not "(empty)"."""
    session = _scripted_session()
    output = _run(session.pk)
    # The trainer's four answers (each turn's initializer answer, the offline model's, has no tool call).
    responses = [line for line in output.splitlines() if "📥 LLM Response ← stop: tool_use" in line]
    assert len(responses) == 4
    assert "📥 LLM Response ← stop: tool_use → message_notify_user  " in responses[0]
    assert "📥 LLM Response ← stop: tool_use → idle  " in responses[1]
    assert "(empty)" not in output


@pytest.mark.parametrize(
    ("raw_response", "names"),
    [
        ({"content": [{"type": "text", "text": "Hi"}, {"type": "tool_use", "name": "idle"}]}, ["idle"]),
        (
            {
                "choices": [
                    {
                        "message": {
                            "tool_calls": [
                                {"function": {"name": "fetch_data"}},
                                {"function": {"name": "idle"}},
                            ]
                        }
                    }
                ]
            },
            ["fetch_data", "idle"],
        ),
        ({"truncated": True, "stop_reason": "tool_use"}, []),
        ({"choices": ["odd"], "content": "odd"}, []),
        (None, []),
    ],
)
def test_tool_call_names_reads_anthropic_and_openai_responses(raw_response: Any, names: list[str]) -> None:
    """Tool names come from Anthropic-style tool_use blocks or OpenAI tool_calls; odd shapes give none."""
    assert tool_call_names(raw_response) == names


def test_from_seq_skips_earlier_events() -> None:
    """--from-seq N prints events N and later only, in every format."""
    fixture = metrics_fixture()
    assert len(_run(fixture.a.pk, "--from-seq", 9).splitlines()) == 3
    document = json.loads(_run(fixture.a.pk, "--format", "json", "--from-seq", 10))
    assert [event["sequence_number"] for event in document["events"]] == [10, 11]
    assert len(_run(fixture.a.pk, "--format", "jsonl", "--from-seq", 11).splitlines()) == 2


def test_json_format_holds_the_session_and_all_events() -> None:
    """--format json: one document with every column of the session and of each event."""
    fixture = metrics_fixture()
    document = json.loads(_run(fixture.a.pk, "--format", "json"))
    assert document["session"]["id"] == str(fixture.a.pk)
    assert document["session"]["created_at"] == "2025-03-10T10:00:00+00:00"
    assert len(document["events"]) == 12
    artifact = document["events"][7]
    assert artifact["event_type"] == "artifact" and artifact["data"]["payload"]["exercises"][0]["reps"] == [
        10,
        10,
        8,
    ]
    assert document["events"][6]["duration_ms"] == 120


def test_jsonl_starts_with_the_session_row_then_one_event_per_line() -> None:
    """--format jsonl: line 1 the session record, then each event record in sequence order."""
    fixture = metrics_fixture()
    lines = [json.loads(line) for line in _run(fixture.b.pk, "--format", "jsonl").splitlines()]
    assert lines[0]["kind"] == "session" and lines[0]["status"] == "error"
    assert [line["kind"] for line in lines[1:]] == ["event"] * 4
    assert [line["sequence_number"] for line in lines[1:]] == [0, 1, 2, 3]
    assert lines[4]["timestamp"] == "2025-03-11T00:00:05+00:00"


@pytest.mark.parametrize("source", ["fixture", "scripted run"])
def test_jsonl_export_delete_import_reproduces_the_session_exactly(tmp_path: Path, source: str) -> None:
    """Export, delete_session, import: every column of the session and its events comes back identical."""
    session = metrics_fixture().a if source == "fixture" else _scripted_session()
    before = _rows(session.pk)
    export = tmp_path / "session.jsonl"
    export.write_text(_run(session.pk, "--format", "jsonl"), encoding="utf-8")

    delete_session(session=session)
    assert not AgentSession.objects.filter(pk=session.pk).exists()
    out = io.StringIO()
    call_command("import_session", str(export), stdout=out)

    assert f"Imported session {session.pk} with {len(before[1])} events." in out.getvalue()
    assert _rows(session.pk) == before


def test_import_refuses_an_existing_session_and_bad_files(tmp_path: Path) -> None:
    """An existing session, a bad line or a duplicate sequence number is refused and nothing is written."""
    fixture = metrics_fixture()
    export = tmp_path / "a.jsonl"
    export.write_text(_run(fixture.a.pk, "--format", "jsonl"), encoding="utf-8")
    with pytest.raises(CommandError, match="already exists"):
        call_command("import_session", str(export), stdout=io.StringIO())

    lines = export.read_text(encoding="utf-8").splitlines()
    session_line = json.loads(lines[0])
    session_line["id"] = str(uuid.uuid4())
    duplicate = tmp_path / "duplicate.jsonl"
    copies = [json.loads(lines[1]) | {"id": str(uuid.uuid4())} for _ in range(2)]
    duplicate.write_text("\n".join(json.dumps(line) for line in [session_line, *copies]), encoding="utf-8")
    with pytest.raises(CommandError, match="appears twice"):
        call_command("import_session", str(duplicate), stdout=io.StringIO())
    assert not AgentSession.objects.filter(pk=session_line["id"]).exists()

    broken = tmp_path / "broken.jsonl"
    broken.write_text(json.dumps(session_line) + "\n{not json\n", encoding="utf-8")
    with pytest.raises(CommandError, match="line 2 is not JSON"):
        call_command("import_session", str(broken), stdout=io.StringIO())
    assert not AgentSession.objects.filter(pk=session_line["id"]).exists()
    with pytest.raises(CommandError, match="cannot read"):
        call_command("import_session", str(tmp_path / "missing.jsonl"), stdout=io.StringIO())


def test_unknown_session_is_an_error() -> None:
    """An id that is not a session is a CommandError, not a traceback."""
    with pytest.raises(CommandError, match="No session"):
        _run(uuid.uuid4())


def _session_with_id(session_id: str) -> AgentSession:
    return AgentSession.objects.create(id=uuid.UUID(session_id), user_id=uuid.uuid4())


def test_the_admins_eight_character_prefix_names_a_session() -> None:
    """`replay_session 3f2a9c1b` (the id as the admin's list shows it) prints that session, as its full id does."""
    fixture = metrics_fixture()
    prefix = str(fixture.a.pk)[:8]
    assert _run(prefix) == _run(fixture.a.pk)
    assert _run(prefix.upper()) == _run(fixture.a.pk)
    assert _run(str(fixture.a.pk)[:13]) == _run(fixture.a.pk)  # with its first hyphen


def test_an_ambiguous_or_unknown_prefix_is_a_clear_error() -> None:
    """A prefix of several sessions' ids lists them and asks for more characters; one of none says so; text
    that cannot start an id says what to give."""
    _session_with_id("3f2a9c1b-0000-4000-8000-000000000001")
    _session_with_id("3f2a9c1b-0000-4000-8000-000000000002")
    _session_with_id("3f2a0000-0000-4000-8000-000000000003")
    with pytest.raises(
        CommandError, match=r"3f2a9c1b is the start of 2 sessions' ids.*more characters"
    ) as info:
        _run("3f2a9c1b")
    assert "3f2a9c1b-0000-4000-8000-000000000001" in str(info.value)
    assert "3f2a9c1b-0000-4000-8000-000000000002" in str(info.value)
    assert '"id": "3f2a9c1b-0000-4000-8000-000000000001"' in _run(
        "--format", "json", "3f2a9c1b-0000-4000-8000-000000000001"
    )
    assert '"id": "3f2a0000-0000-4000-8000-000000000003"' in _run("--format", "json", "3f2a0")
    with pytest.raises(CommandError, match="No session whose id starts with 0badbeef"):
        _run("0badbeef")
    for bad in ("3f2a-", "xyz", "3f2a 9c", "3f2a9c1b0"):
        with pytest.raises(CommandError, match="the session's id or its first characters"):
            _run(bad)


def test_rerun_offline_compares_tools_iterations_tokens_and_cost() -> None:
    """--rerun replays each user message against the offline coach in a new session and compares side by side."""
    original = _scripted_session()
    before = _rows(original.pk)
    output = _run(original.pk, "--rerun")

    rerun = AgentSession.objects.exclude(pk=original.pk).get()
    assert rerun.user_id == original.user_id
    assert rerun.metadata["rerun_of"] == str(original.pk) and rerun.metadata["rerun_model"] == "offline"
    assert _rows(original.pk) == before  # the original is untouched
    assert (
        f"Rerun of session {str(original.pk)[:8]} (claude-haiku-4-5) as {str(rerun.pk)[:8]} (offline)"
        in output
    )
    assert 'Turn 1: "hello coach"' in output and 'Turn 2: "thanks, bye"' in output
    assert "  original  message_notify_user → idle" in output
    rerun_tools = [
        event.data["tool_name"]
        for event in AgentSessionEvent.objects.filter(session=rerun, event_type="tool_call").order_by(
            "sequence_number"
        )
    ]
    assert rerun_tools, "the offline coach called tools"
    for label in ("iterations", "tool calls", "tokens", "cost"):
        assert any(line.startswith(label) for line in output.splitlines()), label
    cost_line = next(line for line in output.splitlines() if line.startswith("cost"))
    assert cost_line.split()[-1] == "$0.0000"  # the offline coach is free
    assert f"rerun session: {rerun.pk}" in output


def test_rerun_against_the_same_script_matches() -> None:
    """Rerunning against a model that answers the same way reports identical tool sequences and iterations."""
    original = _scripted_session()
    replay = ScriptedProvider(
        [
            tool_response("message_notify_user", {"message": "Hi there"}),
            tool_response("idle", {"reason": "done"}),
            tool_response("message_notify_user", {"message": "Sure"}),
            tool_response("idle", {"reason": "done"}),
        ]
    )
    with override_provider("claude-sonnet-4-5", replay):
        output = _run(original.pk, "--rerun", "--model", "claude-sonnet-4-5")
    assert "same tool sequence in 2 of 2 turns" in output
    iterations = next(line for line in output.splitlines() if line.startswith("iterations"))
    assert iterations.split()[1:] == ["4", "4"]


def test_rerun_refuses_an_unknown_model() -> None:
    """--model must name a registered model."""
    fixture = metrics_fixture()
    with pytest.raises(CommandError, match="Unknown model"):
        _run(fixture.a.pk, "--rerun", "--model", "gpt-99")


def test_console_names_the_events_a_checkpoint_summarised() -> None:
    """The checkpoint line shows the range its data records (`events_summarized`), not "?"."""
    line = format_event(
        timestamp=datetime(2026, 11, 24, 10, 0, tzinfo=UTC),
        session_id=uuid.uuid4(),
        event_type="checkpoint",
        data={"events_summarized": "0-41", "summary": "…"},
        duration_ms=None,
    )
    assert line.endswith("📌 Checkpoint ← events 0-41 summarised")
