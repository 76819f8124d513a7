"""The PostgreSQL deployment of the README: web and worker processes log in as `trainer_app`, staff work uses
its own privileged login (`STAFF_DATABASE_URL`, sessions_app/staff.py).

These run when the suite runs its application code as a role on PostgreSQL (CI: `DATABASE_ASSUME_ROLE=
trainer_app`). Every live process of the suite then logs in as that role (tests/support/live_server.py
`application_login`), so the chat, stream, worker, recovery and week-chain live tests exercise this deployment
too; here: what the logins are, and the staff's admin, replay and import on the same processes' settings.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.ui import WebDriverWait

from tests.support.browser import headless_chromium
from tests.support.live_server import (
    BASE_DIR,
    DaphneServer,
    LiveDatabase,
    create_superuser,
    is_postgres_url,
    mint_test_token,
    server_env,
)
from tests.trainer_agent.streaming.sse_client import post_turn

APPLICATION_ROLE = os.environ.get("DATABASE_ASSUME_ROLE", "")

pytestmark = [
    pytest.mark.live,
    pytest.mark.xdist_group("live"),
    pytest.mark.skipif(
        not (APPLICATION_ROLE and is_postgres_url(os.environ.get("DATABASE_URL", ""))),
        reason="the processes log in as the application role only on PostgreSQL with DATABASE_ASSUME_ROLE set",
    ),
]

WAIT_S = 20
STAFF_USER = "rls-staff"
STAFF_PASSWORD = f"pw-{uuid.uuid4().hex}"

# What a process with the live servers' settings sees on each connection, as JSON.
PROBE = """
import json
from django.contrib.auth import get_user_model
from django.db import DatabaseError, connections, transaction
from sessions_app.models import AgentSession
from sessions_app.staff import staff_work

def current_user(alias):
    with connections[alias].cursor() as cursor:
        cursor.execute("SELECT current_user")
        return cursor.fetchone()[0]

def refused(alias, statement):
    try:
        with transaction.atomic(using=alias), connections[alias].cursor() as cursor:
            cursor.execute(statement)
    except DatabaseError as exc:
        return type(exc).__name__
    return None

with staff_work():
    staff_sessions = AgentSession.objects.count()
print(json.dumps({
    "default": current_user("default"),
    "staff": current_user("staff"),
    "sessions_outside_any_unit_of_work": AgentSession.objects.count(),
    "staff_sessions": staff_sessions,
    "users_outside_staff_work": get_user_model().objects.count(),  # auth is routed to staff always
    "auth_on_default": refused("default", "SELECT count(*) FROM auth_user"),
    "escalation": refused("default", "SET ROLE postgres"),
    "reset_role_user": (lambda: (refused("default", "RESET ROLE"), current_user("default")))(),
}))
"""


def manage(database: LiveDatabase, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """`manage.py …` with the live servers' own settings (the application login plus the staff alias)."""
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=BASE_DIR,
        env=server_env(database_url=database.url),
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def chat(server: DaphneServer, user_id: uuid.UUID, message: str, model: str) -> str:
    """One streamed turn to its end; the session id."""
    stream = post_turn(server.base_url, mint_test_token(user_id), {"message": message, "model": model})
    assert stream.status == 200, server.log_tail()
    try:
        frames = [event.json() for event in stream.read_frames_until_done()]
    finally:
        stream.close()
    assert frames[-1]["type"] == "done", (frames[-1], server.log_tail())
    return str(frames[-1]["sessionId"])


@pytest.fixture(scope="module")
def two_sessions(live_server_process: DaphneServer) -> tuple[str, str]:
    """One finished session each for two users, through daphne and the worker (both logged in as the role)."""
    first = chat(live_server_process, uuid.uuid4(), "A quick chest workout", "scripted-workout")
    second = chat(live_server_process, uuid.uuid4(), "Give me a 20 minute upper body workout", "offline")
    return first, second


def test_processes_log_in_as_the_application_role_and_staff_work_as_the_privileged_one(
    live_database: LiveDatabase, two_sessions: tuple[str, str], staff_login: None
) -> None:
    """The application's login sees no tenant row outside a unit of work, cannot read auth or become another
    role; the staff alias sees every session and the admin's users."""
    completed = manage(live_database, "shell", "-c", PROBE)
    assert completed.returncode == 0, completed.stderr
    seen = json.loads(completed.stdout.strip().splitlines()[-1])
    privileged = urlsplit(live_database.url).username
    assert seen["default"] == APPLICATION_ROLE
    assert seen["staff"] == privileged
    assert seen["sessions_outside_any_unit_of_work"] == 0
    assert seen["staff_sessions"] == live_database.scalar("SELECT count(*) FROM agent_sessions") >= 2
    assert seen["users_outside_staff_work"] == live_database.scalar("SELECT count(*) FROM auth_user") >= 1
    assert seen["auth_on_default"] == "ProgrammingError"  # permission denied
    assert seen["escalation"] == "ProgrammingError"  # permission denied to set role
    assert seen["reset_role_user"] == [None, APPLICATION_ROLE]  # RESET ROLE goes back to the login itself


def test_replay_and_import_use_the_staff_login(
    live_database: LiveDatabase, two_sessions: tuple[str, str]
) -> None:
    """With the deployment's settings (where the application login alone sees no session), `replay_session`
    exports any user's session and `import_session` loads the export back as a copy."""
    session_id = two_sessions[0]  # the admin test deletes the other one
    exported = manage(live_database, "replay_session", session_id, "--format", "jsonl")
    assert exported.returncode == 0, exported.stderr
    lines = exported.stdout.strip().splitlines()
    stored = live_database.scalar(
        "SELECT count(*) FROM agent_session_events WHERE session_id = %s", [session_id]
    )
    assert len(lines) == 1 + stored and stored >= 3

    copy_id = str(uuid.uuid4())
    records = [json.loads(line) for line in lines]
    records[0]["id"] = copy_id
    for record in records[1:]:
        record["id"] = str(uuid.uuid4())
    imported = manage(live_database, "import_session", "-", stdin="\n".join(json.dumps(r) for r in records))
    assert imported.returncode == 0, imported.stderr
    assert (
        live_database.scalar("SELECT count(*) FROM agent_session_events WHERE session_id = %s", [copy_id])
        == stored
    )

    console = manage(live_database, "replay_session", copy_id)
    assert console.returncode == 0, console.stderr
    assert len(console.stdout.strip().splitlines()) == stored


@pytest.fixture(scope="module")
def staff_login(live_database: LiveDatabase) -> None:
    """A superuser, created as the README says for this deployment (`createsuperuser --database staff`)."""
    create_superuser(live_database, username=STAFF_USER, password=STAFF_PASSWORD)


@pytest.fixture(scope="module")
def browser() -> Iterator[WebDriver]:
    with headless_chromium(window_size="1400,1000") as driver:
        yield driver


@pytest.mark.browser
def test_staff_browse_replay_and_delete_every_users_sessions_in_the_admin(
    browser: WebDriver,
    live_server_process: DaphneServer,
    live_database: LiveDatabase,
    two_sessions: tuple[str, str],
    staff_login: None,
) -> None:
    """On the daphne logged in as the application role, the admin lists both users' sessions, shows one's
    timeline and a step replay, draws the dashboard, and deletes a session with all its events."""
    base_url = live_server_process.base_url
    first, second = two_sessions
    browser.delete_all_cookies()
    browser.get(f"{base_url}/admin/login/?next=/admin/sessions_app/agentsessionsummary/")
    browser.find_element(By.ID, "id_username").send_keys(STAFF_USER)
    browser.find_element(By.ID, "id_password").send_keys(STAFF_PASSWORD)
    browser.find_element(By.CSS_SELECTOR, "input[type=submit]").click()
    WebDriverWait(browser, WAIT_S).until(lambda d: d.find_elements(By.ID, "result_list"))
    for session_id in two_sessions:
        assert browser.find_elements(By.CSS_SELECTOR, f'a[href$="/{session_id}/change/"]'), session_id

    browser.find_element(By.CSS_SELECTOR, f'a[href$="/{first}/change/"]').click()
    WebDriverWait(browser, WAIT_S).until(lambda d: d.find_elements(By.ID, "obs-timeline"))
    timeline = browser.find_element(By.ID, "obs-timeline")
    assert timeline.is_displayed() and "Quick Chest" in timeline.text
    browser.find_element(By.LINK_TEXT, "Replay step").click()
    WebDriverWait(browser, WAIT_S).until(lambda d: d.find_elements(By.ID, "obs-cache"))
    assert "cache breakpoint 1" in browser.find_element(By.ID, "content-main").text

    browser.get(f"{base_url}/admin/sessions_app/agentsessionsummary/dashboard/")
    WebDriverWait(browser, WAIT_S).until(lambda d: d.find_elements(By.CSS_SELECTOR, "svg.obs-chart"))
    assert browser.find_elements(By.CSS_SELECTOR, "svg.obs-chart rect")

    browser.get(f"{base_url}/admin/sessions_app/agentsessionsummary/{second}/delete/")
    browser.find_element(By.CSS_SELECTOR, "#content form input[type=submit]").click()
    WebDriverWait(browser, WAIT_S).until(lambda d: d.find_elements(By.CSS_SELECTOR, ".messagelist .success"))
    assert live_database.scalar("SELECT count(*) FROM agent_sessions WHERE id = %s", [second]) == 0
    assert (
        live_database.scalar("SELECT count(*) FROM agent_session_events WHERE session_id = %s", [second]) == 0
    )
    assert live_database.scalar("SELECT count(*) FROM agent_sessions WHERE id = %s", [first]) == 1


def test_chat_in_the_terminal_runs_as_its_user(live_database: LiveDatabase) -> None:
    """`manage.py chat` with the deployment's settings: the turns, and the reads around them, are the user's."""
    user_id = uuid.uuid4()
    completed = manage(
        live_database,
        "chat",
        "--user",
        str(user_id),
        "--model",
        "offline",
        stdin="give me a quick upper body workout\nmake it easier\n",
    )
    assert completed.returncode == 0, completed.stderr
    replies = [line for line in completed.stdout.splitlines() if line.startswith("coach> ")]
    assert len(replies) >= 2, completed.stdout[-2000:]
    assert live_database.scalar("SELECT count(*) FROM agent_sessions WHERE user_id = %s", [str(user_id)]) == 1
