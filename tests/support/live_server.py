"""Real daphne processes for end-to-end tests and benchmarks.

pytest-django's `live_server` is a threaded WSGI server that buffers async generators, so streaming is tested
against `daphne config.asgi:application` started as a subprocess. That process opens its own database
connections, so it needs a real database: a temporary SQLite file, or, when DATABASE_URL points at PostgreSQL,
a fresh database `test_live_<name>_<pid>` on the same server (dropped afterwards). It is migrated and seeded
(`seed_demo`) before the server starts.

Scripted models: the server reads `AGENT_TEST_SCRIPTS` (see trainer_agent/testing_hooks.py), so tests choose a
model id such as `scripted-gated` in the request body; gate files let a test pause a turn at a known step.

The pytest fixtures at the end are session-scoped; live tests carry `@pytest.mark.live` and
`@pytest.mark.xdist_group("live")` so that one xdist worker runs them all against one set of servers.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

import pytest

BASE_DIR = Path(__file__).resolve().parent.parent.parent
BIN_DIR = Path(sys.executable).parent
STARTUP_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 15.0
# Inherited variables that would change how the server behaves (pytest markers, real LLM keys).
_DROPPED_ENV_PREFIXES = ("PYTEST_", "ANTHROPIC_", "OPENAI_", "SQLITE_TEST_NAME")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def is_postgres_url(url: str) -> bool:
    return url.startswith(("postgres://", "postgresql://", "pgsql://"))


# --- the database ------------------------------------------------------------------------------------


@dataclass
class LiveDatabase:
    """A database the server processes share; `query` reads it from the test process (`%s` placeholders)."""

    url: str
    postgres_admin_url: str | None = None
    name: str = ""

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        if self.postgres_admin_url is None:
            path = urlsplit(self.url).path
            with contextlib.closing(sqlite3.connect(path, timeout=20)) as conn:
                return list(conn.execute(sql.replace("%s", "?"), tuple(params)).fetchall())
        import psycopg

        with psycopg.connect(_libpq_url(self.url)) as conn:
            return list(conn.execute(sql.encode(), tuple(params)).fetchall())

    def scalar(self, sql: str, params: Sequence[Any] = ()) -> Any:
        rows = self.query(sql, params)
        return rows[0][0] if rows else None

    def drop(self) -> None:
        if self.postgres_admin_url is None:
            Path(urlsplit(self.url).path).unlink(missing_ok=True)
            return
        import psycopg

        with psycopg.connect(self.postgres_admin_url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)'.encode())


def _libpq_url(url: str) -> str:
    parts = urlsplit(url)
    return urlunsplit(("postgresql", parts.netloc, parts.path, parts.query, parts.fragment))


def create_live_database(*, name: str, tmp_dir: Path, base_url: str | None = None) -> LiveDatabase:
    """A migrated, seeded database: PostgreSQL when `base_url` (default $DATABASE_URL) is one, else SQLite."""
    base_url = os.environ.get("DATABASE_URL", "") if base_url is None else base_url
    if is_postgres_url(base_url):
        import psycopg

        db_name = f"test_live_{name}_{os.getpid()}"
        parts = urlsplit(base_url)
        admin_url = urlunsplit(("postgresql", parts.netloc, "/postgres", parts.query, ""))
        with psycopg.connect(admin_url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{db_name}" WITH (FORCE)'.encode())
            conn.execute(f'CREATE DATABASE "{db_name}"'.encode())
        database = LiveDatabase(
            url=urlunsplit((parts.scheme, parts.netloc, f"/{db_name}", parts.query, "")),
            postgres_admin_url=admin_url,
            name=db_name,
        )
    else:
        database = LiveDatabase(url=f"sqlite:///{tmp_dir / f'{name}.sqlite3'}")
    # Migrations and the demo data are the owner's work: its login, as in the README's deployment.
    env = server_env(database_url=database.url, login="owner")
    for command in (["migrate", "--noinput"], ["seed_demo"]):
        subprocess.run(
            [sys.executable, "manage.py", *command],
            cwd=BASE_DIR,
            env=env,
            check=True,
            capture_output=True,
            timeout=300,
        )
    return database


# --- the servers -------------------------------------------------------------------------------------


def application_login(database_url: str) -> dict[str, str]:
    """The database settings of a server or worker process on `database_url` (the privileged login).

    When the suite runs its application code as a role (`DATABASE_ASSUME_ROLE`, CI's `trainer_app`) on
    PostgreSQL, the processes log in as that role itself, with the privileged login as their `staff`
    connection: the deployment the README describes, where only the admin and replay see more than one user's
    rows. Otherwise they keep `database_url`."""
    role = os.environ.get("DATABASE_ASSUME_ROLE", "")
    if not role or not is_postgres_url(database_url):
        return {"DATABASE_URL": database_url}
    parts = urlsplit(database_url)
    host = parts.netloc.rsplit("@", 1)[-1]
    return {
        "DATABASE_URL": urlunsplit((parts.scheme, f"{role}@{host}", parts.path, parts.query, parts.fragment)),
        "STAFF_DATABASE_URL": database_url,
        "DATABASE_ASSUME_ROLE": "",
    }


def server_env(
    *,
    database_url: str,
    scripts: Path | None = None,
    extra: dict[str, str] | None = None,
    login: Literal["application", "owner"] = "application",
) -> dict[str, str]:
    """The environment of a server process: DEBUG on, this database (logged in as `application_login` says,
    or with `login="owner"` as `database_url` itself), no real LLM keys, offline initializer."""
    env = {key: value for key, value in os.environ.items() if not key.startswith(_DROPPED_ENV_PREFIXES)}
    env.pop("STAFF_DATABASE_URL", None)
    env.update(
        {
            "DEBUG": "1",
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "DATABASE_URL": database_url,
            "INITIALIZER_MODEL": "offline",
            "AGENT_LOG_LEVEL": "WARNING",
            "PYTHONUNBUFFERED": "1",
            # Simulated streams (offline, scripted models) send their pieces at once unless a test asks.
            "OFFLINE_STREAM_DELAY_SECONDS": "0",
        }
    )
    if login == "application":
        env.update(application_login(database_url))
    if scripts is not None:
        env["AGENT_TEST_SCRIPTS"] = str(scripts)
    env.update(extra or {})
    return env


def create_superuser(database: LiveDatabase, *, username: str, password: str) -> None:
    """A staff login in the live database, made as the README says: with the server processes' settings, on
    their `staff` connection when they have one (`createsuperuser --database staff`)."""
    env = server_env(
        database_url=database.url,
        extra={
            "DJANGO_SUPERUSER_USERNAME": username,
            "DJANGO_SUPERUSER_EMAIL": f"{username}@example.com",
            "DJANGO_SUPERUSER_PASSWORD": password,
        },
    )
    staff = ["--database", "staff"] if env.get("STAFF_DATABASE_URL") else []
    completed = subprocess.run(
        [sys.executable, "manage.py", "createsuperuser", "--noinput", *staff],
        cwd=BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr


# Twisted listens with a backlog of 50 unless told otherwise: a burst of more connections than that waits for
# the client's SYN retry (a full second) before the server even sees it. `make run` uses the same endpoint.
LISTEN_BACKLOG = 1024


def daphne_endpoint(port: int, interface: str = "127.0.0.1") -> str:
    return f"tcp:port={port}:interface={interface}:backlog={LISTEN_BACKLOG}"


@dataclass
class DaphneServer:
    """One `daphne -e tcp:port=<free port>:interface=127.0.0.1:backlog=1024 config.asgi:application` subprocess."""

    env: dict[str, str]
    log_path: Path
    cwd: Path = BASE_DIR  # the checkout whose code and settings it serves
    port: int = 0
    process: subprocess.Popen[bytes] | None = None

    def start(self) -> DaphneServer:
        self.port = free_port()
        log = self.log_path.open("ab")
        self.process = subprocess.Popen(
            [str(BIN_DIR / "daphne"), "-e", daphne_endpoint(self.port), "config.asgi:application"],
            cwd=self.cwd,
            env=self.env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        log.close()
        self._wait_until_ready()
        return self

    def _wait_until_ready(self) -> None:
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while time.monotonic() < deadline:
            assert self.process is not None
            if self.process.poll() is not None:
                raise RuntimeError(f"daphne exited with {self.process.returncode}:\n{self.log_tail()}")
            with contextlib.suppress(OSError, http.client.HTTPException):
                conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=2)
                try:
                    conn.request("GET", "/livez")  # /healthz is 503 until a worker is alive
                    if conn.getresponse().status == 200:
                        return
                finally:
                    conn.close()
            time.sleep(0.05)
        raise RuntimeError(
            f"daphne did not answer /livez within {STARTUP_TIMEOUT_S:.0f} s:\n{self.log_tail()}"
        )

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def log_tail(self, lines: int = 60) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def peak_rss_kb(self) -> int:
        """VmHWM of the process: its peak resident memory so far."""
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
        return 0

    def cpu_seconds(self) -> float:
        """User + system CPU time the process has used so far."""
        fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=STOP_TIMEOUT_S)


@dataclass
class WorkerProcess:
    """One `manage.py worker --threads N` subprocess: it runs the turns the servers enqueue."""

    env: dict[str, str]
    log_path: Path
    threads: int = 8
    cwd: Path = BASE_DIR
    process: subprocess.Popen[bytes] | None = None

    def start(self) -> WorkerProcess:
        log = self.log_path.open("ab")
        self.process = subprocess.Popen(
            [
                sys.executable,
                "manage.py",
                "worker",
                "--threads",
                str(self.threads),
                "--interval",
                "0.5",
                "--sweep",
                "0.5",
            ],
            cwd=self.cwd,
            env=self.env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        log.close()
        return self

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def kill(self) -> None:
        """`kill -9`: the process dies at once, mid-turn, without running any handler."""
        if self.alive():
            assert self.process is not None
            self.process.kill()
            self.process.wait(timeout=STOP_TIMEOUT_S)

    def stop(self) -> None:
        if not self.alive():
            return
        assert self.process is not None
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.kill()

    def log_tail(self, lines: int = 60) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def cpu_seconds(self) -> float:
        fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def mint_test_token(user_id: uuid.UUID, *, hours: float = 2) -> str:
    """A token the DEBUG server accepts (HS256 with the development secret, as `manage.py demo_token`)."""
    from django.conf import settings

    from trainer_agent.auth import mint_token

    return mint_token(user_id=user_id, hours=hours, secret=settings.DEV_JWT_SECRET)


# --- scripted models for the test server ----------------------------------------------------------


@dataclass
class LiveScripts:
    """The AGENT_TEST_SCRIPTS file of the test servers and its gate directory."""

    path: Path
    gate_dir: Path
    models: dict[str, Any] = field(default_factory=dict)

    def open_gate(self, user_id: uuid.UUID, step: int) -> None:
        """Let a `scripted-gated` turn of this user answer its step-th model call (1-based)."""
        (self.gate_dir / f"{user_id}-{step}").touch()


DEMO_WORKOUT_EXERCISES: list[dict[str, Any]] = [
    {
        "exercise_name": "Dumbbell Bench Press",
        "exercise_type": "reps",
        "order": 1,
        "sets": 3,
        "reps": [10, 10, 8],
        "load_each": [20, 20, 22.5],
        "load_unit": "kg",
        "rest_sec": 90,
        "muscles_utilized": [
            {"muscle": "Chest", "share": 0.7},
            {"muscle": "Triceps", "share": 0.2},
            {"muscle": "Shoulders", "share": 0.1},
        ],
        "goals_addressed": [{"goal": "strength", "share": 0.6}, {"goal": "hypertrophy", "share": 0.4}],
        "reasoning": "Main chest press with the dumbbells at home.",
        "equipment": ["dumbbells", "bench"],
    },
    {
        "exercise_name": "Push-Up",
        "exercise_type": "reps",
        "order": 2,
        "sets": 3,
        "reps": [15, 12, 10],
        "rest_sec": 60,
        "muscles_utilized": [
            {"muscle": "Chest", "share": 0.6},
            {"muscle": "Triceps", "share": 0.3},
            {"muscle": "Shoulders", "share": 0.1},
        ],
        "goals_addressed": [{"goal": "endurance", "share": 1.0}],
        "reasoning": "Bodyweight finisher for volume.",
        "equipment": [],
    },
    {
        "exercise_name": "Plank",
        "exercise_type": "hold",
        "order": 3,
        "sets": 3,
        "hold_sec": [30, 30, 45],
        "rest_sec": 45,
        "muscles_utilized": [{"muscle": "Abs", "share": 1.0}],
        "goals_addressed": [{"goal": "stability", "share": 1.0}],
        "reasoning": "Core to finish.",
        "equipment": [],
    },
]


def scripted_test_models(gate_dir: Path) -> dict[str, Any]:
    """The scripted models every live test server serves."""
    gate = str(gate_dir / "{user_id}")
    return {
        "models": {
            # The demo user's quick chest workout: create it, deliver it, finish.
            "scripted-workout": {
                "steps": [
                    {
                        "tool": "generate_workout",
                        "args": {"title": "Quick Chest", "exercises": DEMO_WORKOUT_EXERCISES},
                    },
                    {
                        "tool": "message_notify_user",
                        "args": {
                            "message": "Here is your **quick chest** workout.",
                            "artifact_id": "{last_artifact_id}",
                        },
                    },
                    {"tool": "idle", "args": {"reason": "workout delivered"}},
                ]
            },
            # Each model call waits for the test to open its gate (`LiveScripts.open_gate(user, n)`).
            "scripted-gated": {
                "steps": [
                    {
                        "tool": "message_notify_user",
                        "args": {"message": "Step one"},
                        "wait_for_file": gate + "-1",
                    },
                    {
                        "tool": "message_notify_user",
                        "args": {"message": "Step two"},
                        "wait_for_file": gate + "-2",
                    },
                    {"tool": "idle", "args": {"reason": "finished"}, "wait_for_file": gate + "-3"},
                ]
            },
            # A question with options: the demo page renders them as buttons.
            "scripted-ask": {
                "steps": [
                    {
                        "tool": "message_ask_user",
                        "args": {"question": "How long do you have?", "options": ["20 min", "45 min"]},
                    }
                ]
            },
        }
    }


def write_scripts(directory: Path, models: dict[str, Any]) -> Path:
    path = directory / "scripts.json"
    path.write_text(json.dumps(models, indent=1))
    return path


# --- pytest fixtures ---------------------------------------------------------------------------------

# Servers send a `: ping` this often while a turn waits, so tests can observe heartbeats without waiting long.
TEST_HEARTBEAT_SECONDS = "0.3"
# Leases short enough that a test sees a killed worker's turn taken over within seconds.
TEST_LEASE_SECONDS = "3"


@pytest.fixture(scope="session")
def live_database(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveDatabase]:
    database = create_live_database(name="stream", tmp_dir=tmp_path_factory.mktemp("live-db"))
    yield database
    database.drop()


@pytest.fixture(scope="session")
def live_scripts(tmp_path_factory: pytest.TempPathFactory) -> LiveScripts:
    directory = tmp_path_factory.mktemp("live-scripts")
    gate_dir = directory / "gates"
    gate_dir.mkdir()
    models = scripted_test_models(gate_dir)
    return LiveScripts(path=write_scripts(directory, models), gate_dir=gate_dir, models=models)


def _start(name: str, env: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> DaphneServer:
    log_path = tmp_path_factory.mktemp("live-logs") / f"{name}.log"
    return DaphneServer(env=env, log_path=log_path).start()


def live_env(live_database: LiveDatabase, live_scripts: LiveScripts) -> dict[str, str]:
    return server_env(
        database_url=live_database.url,
        scripts=live_scripts.path,
        extra={
            "SSE_HEARTBEAT_SECONDS": TEST_HEARTBEAT_SECONDS,
            "AGENT_TURN_RATE": "1000/min",
            "TURN_LEASE_SECONDS": TEST_LEASE_SECONDS,
        },
    )


@pytest.fixture(scope="session")
def live_worker(
    live_database: LiveDatabase, live_scripts: LiveScripts, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[WorkerProcess]:
    """The `manage.py worker` that runs the live servers' turns (tests that kill it start it again)."""
    log_path = tmp_path_factory.mktemp("live-logs") / "worker.log"
    worker = WorkerProcess(env=live_env(live_database, live_scripts), log_path=log_path).start()
    yield worker
    worker.stop()


@pytest.fixture(scope="session")
def live_server_process(
    live_database: LiveDatabase,
    live_scripts: LiveScripts,
    live_worker: WorkerProcess,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[DaphneServer]:
    """One daphne process serving the scripted models, and a worker running their turns."""
    server = _start("daphne", live_env(live_database, live_scripts), tmp_path_factory)
    yield server
    server.stop()


@pytest.fixture(scope="session")
def live_server_pair(
    live_database: LiveDatabase,
    live_scripts: LiveScripts,
    live_worker: WorkerProcess,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[DaphneServer, DaphneServer]]:
    """Two daphne processes on the same database (any process can stream any session), one worker."""
    env = live_env(live_database, live_scripts)
    first = _start("daphne-a", env, tmp_path_factory)
    try:
        second = _start("daphne-b", env, tmp_path_factory)
    except Exception:
        first.stop()
        raise
    yield first, second
    first.stop()
    second.stop()


def wait_for(condition: Callable[[], Any], what: str, timeout: float = 60.0) -> Any:
    """Poll `condition()` until it returns something truthy (bounded); fail naming `what` otherwise."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    pytest.fail(f"timed out waiting for {what}")
