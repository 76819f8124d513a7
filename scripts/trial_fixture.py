"""Turn a model-relay directory (a trial played through ../shared/tools/model-relay) into a trial fixture.

    .venv/bin/python scripts/trial_fixture.py RELAY_DIR tests/fixtures/trials/NAME.json

Reads RELAY_DIR/req-NNNN.json (each model call, as sent) and resp-NNNN.json (the answer given), in order:
- trainer calls (`tool_choice` any) give `model.trainer`, in order; the user's messages found in their context
  give the `turns` (a message list that no longer extends the previous one starts a new session);
- structured calls (`tool_choice` naming one tool) give `model.subagents[<that tool>]`, in order; the
  initializer's (`knowledge_selection`) are left out: replays use the offline keyword selector;
- ids the service made up (`art_…`, `ex_…`, UUIDs) become placeholders (`{{art_1}}`, see
  trainer_agent/trial_ids.py), so the replay substitutes the ids of its own run.
Each turn's `status` check is taken from drive.py's turn-NN.sse when present; write the other checks (and any
`user` overrides the trial ran with) by hand: tests/fixtures/trials/README.md.
"""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from trainer_agent.trial_ids import IdRegistry, context_texts

INITIALIZER_SCHEMA = "knowledge_selection"
# Blocks the context builder adds around the user's own words (knowledge, artifacts, pending questions…).
BUILDER_PREFIXES = ("<knowledge", "<artifact", "<pending_question", "<checkpoint")


def user_messages(messages: list[dict[str, Any]]) -> list[str]:
    """The user's own messages in a trainer request, in order."""
    said = []
    for message in messages:
        if message.get("role") != "user":
            continue
        content = message.get("content")
        for block in [{"type": "text", "text": content}] if isinstance(content, str) else content or []:
            if isinstance(block, dict) and block.get("type") == "text":
                text = str(block.get("text", ""))
                if not text.startswith(BUILDER_PREFIXES):
                    said.append(text)
    return said


def turn_status(relay: Path, number: int) -> str | None:
    """`completed` or `error`, from the terminal frame drive.py saved for turn `number` (None if absent)."""
    path = relay / f"turn-{number:02d}.sse"
    if not path.exists():
        return None
    for line in reversed(path.read_text(errors="replace").splitlines()):
        if line.startswith("data: "):
            try:
                kind = json.loads(line[6:]).get("type")
            except ValueError:
                continue
            if kind == "done":
                return "completed"
            if kind == "error":
                return "error"
    return None


def build_fixture(relay: Path, name: str) -> tuple[dict[str, Any], list[str]]:
    """The fixture of the trial in `relay`, and warnings for whoever records it."""
    warnings: list[str] = []
    ids = IdRegistry()
    turns: list[dict[str, Any]] = []
    trainer: list[dict[str, Any]] = []
    subagents: dict[str, list[dict[str, Any]]] = {}
    said: list[str] = []
    for request_path in sorted(relay.glob("req-*.json")):
        number = request_path.stem.split("-")[1]
        body = json.loads(request_path.read_text())
        answer_path = relay / f"resp-{number}.json"
        if not answer_path.exists():
            warnings.append(f"call {number} has no answer: the fixture stops before it")
            break
        answer = json.loads(answer_path.read_text())
        choice = body.get("tool_choice") or {}
        if choice.get("type") == "tool":
            schema = str(choice.get("name"))
            if schema == INITIALIZER_SCHEMA:
                warnings.append(f"call {number} is the initializer's: left out (replays select offline)")
                continue
            subagents.setdefault(schema, []).append(ids.placeholders(answer.get("input") or {}))
            continue
        system = body.get("system") or []
        user_data = system[-1].get("text", "") if isinstance(system, list) and len(system) > 1 else ""
        messages = body.get("messages") or []
        for text in context_texts(user_data, messages):
            ids.observe(text)
        now = user_messages(messages)
        new_session = now[: len(said)] != said
        for text in now if new_session else now[len(said) :]:
            turns.append({"message": text, **({"new_session": True} if new_session and turns else {})})
            new_session = False
        said = now
        trainer.append(ids.placeholders(answer))
    for index, turn in enumerate(turns, start=1):
        status = turn_status(relay, index)
        turn["checks"] = {"status": status} if status else {}
    state_path = relay / "state.json"
    if state_path.exists():
        played = json.loads(state_path.read_text()).get("turn")
        if played is not None and played != len(turns):
            warnings.append(f"drive.py sent {played} messages but the model's context shows {len(turns)}")
    first = min(relay.glob("req-*.json"), default=None)
    recorded_at = (
        datetime.fromtimestamp(first.stat().st_mtime, tz=UTC).isoformat(timespec="seconds") if first else None
    )
    fixture = {
        "name": name,
        "recorded_at": recorded_at,
        "description": f"Recorded from {relay} (write what the trial tried and the checks).",
        "user": {},
        "turns": turns,
        "model": {"trainer": trainer, "subagents": subagents},
    }
    return fixture, warnings


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    relay, out = Path(argv[1]), Path(argv[2])
    if not any(relay.glob("req-*.json")):
        print(f"{relay}: no req-NNNN.json files (is it a model-relay directory?)", file=sys.stderr)
        return 1
    fixture, warnings = build_fixture(relay, out.stem.replace("_", "-"))
    out.write_text(json.dumps(fixture, indent=1, ensure_ascii=False) + "\n")
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)
    answers = len(fixture["model"]["trainer"]) + sum(len(a) for a in fixture["model"]["subagents"].values())
    print(f"{out}: {len(fixture['turns'])} turns, {answers} answers. Now write each turn's checks by hand.")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
