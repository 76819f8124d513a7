"""Every `manage.py` command the README shows works as printed in a fresh clone after `make run`'s setup.

The commands run in a copy of the checkout (tests/support/fresh_clone.py) with the environment of a new
terminal: no DEBUG, no SECRET_KEY, no DATABASE_URL. What they need comes from the `.env` that `make .env`
(part of `make run`) wrote there.
"""

from __future__ import annotations

import json
import re
import shlex
import signal
import stat
import subprocess

import pytest

from tests.support.fresh_clone import FreshClone
from tests.support.live_server import BASE_DIR

pytestmark = pytest.mark.xdist_group("fresh_clone")

MANAGE = ".venv/bin/python manage.py"
README = BASE_DIR / "README.md"
# The commands this module runs, by name (migrate and collectstatic also set the clone up). The README may
# show no manage.py command that is not here.
COMMANDS_RUN = {
    "check",
    "migrate",
    "collectstatic",
    "seed_demo",
    "demo_token",
    "createsuperuser",
    "chat",
    "replay_session",
    "import_session",
    "generate_tool_docs",
    "worker",
    "eval",
}


def test_the_readme_prints_runnable_commands_that_this_test_runs() -> None:
    """Each `manage.py` in the README reads `.venv/bin/python manage.py <command>`, a command run below."""
    text = README.read_text()
    starts = [match.start() for match in re.finditer(r"manage\.py", text)]
    assert starts
    for start in starts:
        assert text[start - len(".venv/bin/python ") : start] == ".venv/bin/python ", text[
            start - 40 : start + 40
        ]
    assert set(re.findall(r"manage\.py (\w+)", text)) <= COMMANDS_RUN


def test_make_writes_a_private_env_file_with_debug_and_a_random_secret_once(fresh_clone: FreshClone) -> None:
    """`make .env` writes DEBUG=1 and a 50-character random SECRET_KEY, readable by its owner only, and
    leaves an existing file alone (the secret stays)."""
    text = fresh_clone.read_env_file()
    assert "DEBUG=1" in text.splitlines()
    secret = re.search(r"^SECRET_KEY=([A-Za-z0-9]{50})$", text, re.MULTILINE)
    assert secret, text
    assert secret.group(1) not in (BASE_DIR / "config" / "settings.py").read_text()
    assert stat.S_IMODE((fresh_clone.root / ".env").stat().st_mode) == 0o600
    fresh_clone.run("make --no-print-directory .env")
    assert fresh_clone.read_env_file() == text


def test_documented_commands_run_as_printed(fresh_clone: FreshClone) -> None:
    """check, seed_demo, demo_token, createsuperuser, chat, replay_session (every format, --rerun),
    import_session, generate_tool_docs and eval (scripted) all exit 0 with nothing but the clone's .env (migrate, seed_demo
    and collectstatic ran as the clone was set up)."""
    fresh_clone.run(f"{MANAGE} check")
    fresh_clone.run(f"{MANAGE} seed_demo --history-days 90")
    token = fresh_clone.run(f"{MANAGE} demo_token --curl").stdout
    assert "curl -s -H" in token and "/agent/whoami" in token

    fresh_clone.run(
        f"{MANAGE} createsuperuser --noinput",
        extra_env={
            "DJANGO_SUPERUSER_USERNAME": "readme-staff",
            "DJANGO_SUPERUSER_EMAIL": "staff@example.com",
            "DJANGO_SUPERUSER_PASSWORD": "a long enough readme password",
        },
    )

    chat = fresh_clone.run(f"{MANAGE} chat", stdin="Give me a quick chest workout\n").stdout
    assert "coach> " in chat
    session = re.search(r"^Session ([0-9a-f-]{36}): ", chat, re.MULTILINE)
    assert session, chat
    session_id = session.group(1)

    console = fresh_clone.run(f"{MANAGE} replay_session {session_id}").stdout
    assert 'User: "Give me a quick chest workout"' in console
    document = json.loads(fresh_clone.run(f"{MANAGE} replay_session {session_id} --format json").stdout)
    assert document["session"]["id"] == session_id
    later = fresh_clone.run(f"{MANAGE} replay_session {session_id} --from-seq 2").stdout
    assert len(later.splitlines()) == len(document["events"]) - 2
    export = fresh_clone.root / "session.jsonl"
    export.write_text(fresh_clone.run(f"{MANAGE} replay_session {session_id} --format jsonl").stdout)
    rerun = fresh_clone.run(f"{MANAGE} replay_session {session_id} --rerun --model offline").stdout
    assert rerun.strip()

    # "load an exported session elsewhere": another database of the same checkout.
    elsewhere = {"DATABASE_URL": f"sqlite:///{fresh_clone.root / 'elsewhere.sqlite3'}"}
    fresh_clone.run(f"{MANAGE} migrate --noinput", extra_env=elsewhere)
    fresh_clone.run(f"{MANAGE} import_session session.jsonl", extra_env=elsewhere)
    imported = fresh_clone.run(f"{MANAGE} replay_session {session_id}", extra_env=elsewhere).stdout
    assert imported == console

    fresh_clone.run(f"{MANAGE} generate_tool_docs --check")

    replayed = fresh_clone.run(f"{MANAGE} eval --model scripted --scenarios tests/fixtures/trials").stdout
    trials = len(list((fresh_clone.root / "tests" / "fixtures" / "trials").glob("*.json")))
    assert (
        "PASS week-plan-3-days" in replayed and f"Overall on scripted: {trials}/{trials} passed" in replayed
    )
    # The offline coach meets every scenario's checks (the command exits 1 when one fails).
    offline = subprocess.run(
        shlex.split(f"{MANAGE} eval --model offline --json"),
        cwd=fresh_clone.root,
        env=fresh_clone.env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert offline.returncode == 0, offline.stdout[-3000:] + offline.stderr[-3000:]
    scenarios = json.loads(offline.stdout)["scenarios"]
    assert len(scenarios) >= 8 and all(run["passed"] for run in scenarios)


def test_the_worker_runs_a_turn_and_stops_on_sigterm(fresh_clone: FreshClone) -> None:
    """`manage.py worker --threads 8` as printed: it runs the turns a terminal conversation enqueues (the
    turn ends, whoever of the two runs it) and exits 0 on SIGTERM."""
    worker = subprocess.Popen(
        shlex.split(f"{MANAGE} worker --threads 8"),
        cwd=fresh_clone.root,
        env=fresh_clone.env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        before = _completed_turns(fresh_clone)
        chat = fresh_clone.run(f"{MANAGE} chat", stdin="Give me a quick chest workout\nexit\n")
        assert "Session " in chat.stdout
        assert _completed_turns(fresh_clone) == before + 1
    finally:
        worker.send_signal(signal.SIGTERM)
        output, _ = worker.communicate(timeout=60)
    assert worker.returncode == 0, output
    assert "worker: 8 threads" in output


def _completed_turns(clone: FreshClone) -> int:
    ran = clone.run(
        f"{MANAGE} shell -c "
        "'from sessions_app.models import AgentTurn; print(AgentTurn.objects.filter(status=\"completed\").count())'"
    )
    return int(ran.stdout.strip().splitlines()[-1])
