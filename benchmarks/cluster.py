"""Shared harness of the process benchmarks (sse_load.py, latency.py): a database, W daphne processes and K
`manage.py worker --threads T` processes, asyncio clients for `/agent/stream` and `/agent/chat`, a `/healthz`
prober, and CPU / memory readings of the processes from /proc.

The database is a fresh one made by `tests.support.live_server.create_live_database`: `test_live_<name>_<pid>`
on the PostgreSQL server of DATABASE_URL, or a temporary SQLite file when DATABASE_URL is not PostgreSQL (or
`sqlite=True`), migrated and seeded; it is dropped at the end. The servers run with DEBUG off, their own JWT
secret and no per-user throttle; the model is scripted (AGENT_TEST_SCRIPTS, tests/support/scripted_models.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import resource
import secrets
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

BASE_DIR = Path(__file__).resolve().parent.parent
if str(BASE_DIR) not in sys.path:
    sys.path.insert(0, str(BASE_DIR))

if TYPE_CHECKING:
    from tests.support.live_server import DaphneServer, LiveDatabase

CLK_TCK = os.sysconf("SC_CLK_TCK")
STOP_TIMEOUT_S = 30.0


# --- numbers --------------------------------------------------------------------------------------------


def percentile(values: Sequence[float], fraction: float) -> float:
    """Nearest-rank percentile (NaN for no values)."""
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))]


def p50_p95_max(values: Sequence[float], scale: float = 1.0, digits: int = 2) -> str:
    """`| p50 | p95 | max |` cells."""
    if not values:
        return "| – | – | – |"
    return (
        f"| {percentile(values, 0.5) * scale:.{digits}f} | {percentile(values, 0.95) * scale:.{digits}f} "
        f"| {max(values) * scale:.{digits}f} |"
    )


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else float("nan")


def load_average() -> str:
    return " / ".join(f"{value:.2f}" for value in os.getloadavg())


def revision() -> str:
    """The commit measured, and whether application code (outside benchmarks/ and docs/) had local changes."""
    head = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=BASE_DIR, capture_output=True, text=True, check=False
    ).stdout.strip()
    status = subprocess.run(
        ["git", "status", "--porcelain"], cwd=BASE_DIR, capture_output=True, text=True, check=False
    ).stdout.splitlines()
    changed = [line for line in status if not line[3:].startswith(("benchmarks/", "docs/"))]
    return f"{head}{' + local changes' if changed else ''}"


def process_cpu() -> float:
    """CPU seconds of this process (the benchmark's client)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def raise_open_files_limit() -> None:
    """A burst of 1,000 streams needs more than the usual 1,024 descriptors (the servers inherit the limit)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


# --- processes --------------------------------------------------------------------------------------------


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of the process (all its threads) so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def threads_of(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Threads:"):
            return int(line.split()[1])
    return 0


def postgres_cpu(postmaster: int) -> float:
    """CPU seconds of a local PostgreSQL server: the postmaster, the children it has reaped (backends that have
    exited) and its live children. Includes every database's work on that server."""
    fields = Path(f"/proc/{postmaster}/stat").read_text().rsplit(")", 1)[1].split()
    total = sum(int(value) for value in fields[11:15]) / CLK_TCK
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError, IndexError, ValueError):
            child = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            if int(child[1]) == postmaster:
                total += (int(child[11]) + int(child[12])) / CLK_TCK
    return total


def peak_rss_mb(pid: int) -> float:
    """VmHWM: the process's peak resident memory so far."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


@dataclass
class WorkerServer:
    """One `manage.py worker --threads N --interval I --sweep S` subprocess (the command's defaults: 1.0, 2.0)."""

    env: dict[str, str]
    log_path: Path
    threads: int
    interval: float = 1.0
    sweep: float = 2.0
    nice: int = 0  # added to the process's nice value (a lower CPU priority than the web processes)
    process: subprocess.Popen[bytes] | None = None

    def start(self) -> WorkerServer:
        log = self.log_path.open("ab")
        self.process = subprocess.Popen(
            [
                sys.executable,
                "manage.py",
                "worker",
                "--threads",
                str(self.threads),
                "--interval",
                str(self.interval),
                "--sweep",
                str(self.sweep),
            ],
            cwd=BASE_DIR,
            env=self.env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=(lambda: os.nice(self.nice)) if self.nice else None,
        )
        log.close()
        return self

    def wait_until_ready(self, timeout: float = 60.0) -> None:
        """Until the command has printed its start line (its loops start right after it)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.alive():
                raise RuntimeError(f"worker exited:\n{self.log_tail()}")
            if "worker: " in self.log_path.read_text(errors="replace"):
                time.sleep(0.5)  # its threads connect and LISTEN
                return
            time.sleep(0.05)
        raise RuntimeError(f"worker did not start within {timeout:.0f} s:\n{self.log_tail()}")

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def kill(self) -> None:
        """`kill -9`."""
        if self.alive():
            assert self.process is not None
            os.kill(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=STOP_TIMEOUT_S)

    def stop(self) -> None:
        """SIGTERM twice (the command's 'stop now'), then SIGKILL."""
        if not self.alive():
            return
        assert self.process is not None
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self.kill()

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"


@dataclass
class Cluster:
    """The database, the web processes and the workers of one benchmark run."""

    database: LiveDatabase
    engine: str
    work_dir: Path
    env: dict[str, str]
    jwt_secret: str
    webs: list[DaphneServer] = field(default_factory=list)
    workers: list[WorkerServer] = field(default_factory=list)
    worker_nice: int = 0

    @property
    def postgres(self) -> bool:
        return self.database.postgres_admin_url is not None

    def token(self, user_id: uuid.UUID | None = None) -> str:
        from trainer_agent.auth import mint_token

        return mint_token(user_id=user_id or uuid.uuid4(), secret=self.jwt_secret)

    def pids(self) -> list[int]:
        return [web.pid for web in self.webs] + [worker.pid for worker in self.workers if worker.alive()]

    def cpu(self) -> dict[int, float]:
        """CPU seconds of each live process (a dead worker drops out)."""
        found = {}
        for pid in self.pids():
            with contextlib.suppress(OSError):
                found[pid] = cpu_seconds(pid)
        return found

    def dead_workers(self) -> int:
        return sum(1 for worker in self.workers if not worker.alive())

    def start_worker(self, threads: int, *, interval: float = 1.0, sweep: float = 2.0) -> WorkerServer:
        index = len(self.workers)
        worker = WorkerServer(
            env=self.env,
            log_path=self.work_dir / f"worker-{index}.log",
            threads=threads,
            interval=interval,
            sweep=sweep,
            nice=self.worker_nice,
        ).start()
        self.workers.append(worker)
        worker.wait_until_ready()
        return worker

    def scalar(self, sql: str, params: Sequence[Any] = ()) -> Any:
        return self.database.scalar(sql, params)

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return self.database.query(sql, params)

    def uuid_param(self, value: str | uuid.UUID) -> str:
        """A uuid as the database stores it (SQLite: 32 hex digits)."""
        return str(value) if self.postgres else uuid.UUID(str(value)).hex

    def count_sessions(self, session_ids: Sequence[str], status: str = "completed") -> int:
        if not session_ids:
            return 0
        ids = [self.uuid_param(s) for s in session_ids]
        placeholders = ", ".join(["%s"] * len(ids))
        return int(
            self.scalar(
                f"SELECT COUNT(*) FROM agent_sessions WHERE status = %s AND id IN ({placeholders})",
                [status, *ids],
            )
        )

    def postmaster(self) -> int | None:
        """The pid of the PostgreSQL server, if it runs on this machine and its postmaster.pid is readable."""
        if not self.postgres:
            return None
        with contextlib.suppress(Exception):
            data_dir = self.scalar("SHOW data_directory")
            return int((Path(str(data_dir)) / "postmaster.pid").read_text().split()[0])
        return None

    def sessions_opened(self) -> int | None:
        """Connections ever established to this database (PostgreSQL's pg_stat_database.sessions)."""
        if not self.postgres:
            return None
        return int(
            self.scalar("SELECT sessions FROM pg_stat_database WHERE datname = %s", [self.database.name])
        )

    def connections(self) -> int:
        """Server connections to this database now (PostgreSQL; 0 on SQLite)."""
        if not self.postgres:
            return 0
        return int(
            self.scalar("SELECT COUNT(*) FROM pg_stat_activity WHERE datname = %s", [self.database.name])
        )


def scripted_steps() -> list[dict[str, Any]]:
    """The benchmark model's turn: two notifications, then idle (3 model calls)."""
    return [
        {"tool": "message_notify_user", "args": {"message": "Looking at your history"}},
        {"tool": "message_notify_user", "args": {"message": "Here is the plan"}},
        {"tool": "idle", "args": {"reason": "done"}},
    ]


@contextlib.contextmanager
def cluster(
    *,
    name: str,
    models: dict[str, Any],
    web: int,
    workers: int,
    threads: int,
    sqlite: bool = False,
    extra_env: dict[str, str] | None = None,
    interval: float = 1.0,
    sweep: float = 2.0,
    worker_nice: int = 0,
) -> Iterator[Cluster]:
    """A fresh database with `web` daphne processes and `workers` worker processes; all stopped (and the
    database dropped) on exit. The logs are copied to $TMPDIR/<name>-*.log."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("DEBUG", "1")  # this process only mints tokens; the servers run with DEBUG off
    import django

    django.setup()
    from tests.support.live_server import DaphneServer, create_live_database, server_env, write_scripts

    raise_open_files_limit()
    work_dir = Path(tempfile.mkdtemp(prefix=f"{name}-"))
    base_url = "" if sqlite else None
    print(f"preparing the database ({work_dir}) ...", file=sys.stderr)
    database = create_live_database(name=name, tmp_dir=work_dir, base_url=base_url)
    jwt_secret = secrets.token_urlsafe(48)
    scripts = write_scripts(work_dir, {"models": models})
    env = server_env(
        database_url=database.url,
        scripts=scripts,
        extra={
            "DEBUG": "0",
            "SECRET_KEY": secrets.token_urlsafe(50),
            "SUPABASE_JWT_SECRET": jwt_secret,
            "AGENT_TURN_RATE": "",  # the benchmarks measure the service, not the per-user throttle
            "TASKS_BACKEND": "database",
            **(extra_env or {}),
        },
    )
    engine = "PostgreSQL" if database.postgres_admin_url else "SQLite (file)"
    result = Cluster(
        database=database,
        engine=engine,
        work_dir=work_dir,
        env=env,
        jwt_secret=jwt_secret,
        worker_nice=worker_nice,
    )
    try:
        for _ in range(workers):
            result.start_worker(threads, interval=interval, sweep=sweep)
        for index in range(web):
            result.webs.append(DaphneServer(env=env, log_path=work_dir / f"web-{index}.log").start())
        yield result
    finally:
        for server in result.webs:
            server.stop()
        for worker in result.workers:
            worker.stop()
        kept = Path(tempfile.gettempdir())
        for log in work_dir.glob("*.log"):
            shutil.copy(log, kept / f"{name}-{log.name}")
        database.drop()
        shutil.rmtree(work_dir, ignore_errors=True)


# --- clients ----------------------------------------------------------------------------------------------


@dataclass
class Frame:
    at: float  # seconds since the burst started (perf_counter)
    wall: float  # time.time() when it arrived
    kind: str  # status, knowledge, done, error, tool_start, tool_result
    event_id: int | None
    data: dict[str, Any]


@dataclass
class StreamResult:
    status: int = 0
    session_id: str = ""
    error: str = ""
    frames: list[Frame] = field(default_factory=list)
    done_at: float | None = None

    @property
    def ok(self) -> bool:
        return not self.error and self.done_at is not None

    @property
    def first_at(self) -> float | None:
        return self.frames[0].at if self.frames else None


def frame_kind(frame: dict[str, Any]) -> str:
    """As trainer_agent.frames.frame_kind (kept here so the client imports nothing of the server)."""
    kind = str(frame.get("type", ""))
    if kind in {"status", "knowledge", "done", "error"}:
        return kind
    data = frame.get("data")
    if "formatted" not in frame and isinstance(data, dict) and data.get("status") == "running":
        return "tool_start"
    return "tool_result"


def _request(method: str, path: str, port: int, token: str | None, body: bytes, accept: str) -> bytes:
    auth = f"Authorization: Bearer {token}\r\n" if token else ""
    return (
        f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{auth}Content-Type: application/json\r\n"
        f"Accept: {accept}\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    ).encode() + body


async def _read_head(reader: asyncio.StreamReader) -> tuple[int, dict[str, str]]:
    head = await reader.readuntil(b"\r\n\r\n")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in (h.partition(":") for h in header_lines if h)}
    return int(status_line.split()[1]), headers


async def stream_turn(
    port: int, token: str, body: dict[str, Any], started: float, *, timeout: float = 600.0
) -> StreamResult:
    """POST /agent/stream and read the chunked SSE body frame by frame until `done` or `error`."""
    result = StreamResult()
    writer: asyncio.StreamWriter | None = None
    try:
        async with asyncio.timeout(timeout):
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(
                _request("POST", "/agent/stream", port, token, json.dumps(body).encode(), "text/event-stream")
            )
            await writer.drain()
            result.status, headers = await _read_head(reader)
            result.session_id = headers.get("x-session-id", "")
            if result.status != 200:
                result.error = f"HTTP {result.status}"
                return result
            if headers.get("transfer-encoding") != "chunked":
                result.error = "response is not chunked"
                return result
            buffer = ""
            while result.done_at is None:
                size = int((await reader.readuntil(b"\r\n")).strip().split(b";")[0], 16)
                if size == 0:
                    break
                chunk = await reader.readexactly(size + 2)
                buffer += chunk[:-2].decode("utf-8")
                while "\n\n" in buffer:
                    block, buffer = buffer.split("\n\n", 1)
                    lines = block.split("\n")
                    data = [line[6:] for line in lines if line.startswith("data: ")]
                    if not data:
                        continue  # ": ping"
                    ids = [line[4:] for line in lines if line.startswith("id: ")]
                    frame = json.loads("\n".join(data))
                    kind = frame_kind(frame)
                    result.frames.append(
                        Frame(
                            at=time.perf_counter() - started,
                            wall=time.time(),
                            kind=kind,
                            event_id=int(ids[0]) if ids else None,
                            data=frame,
                        )
                    )
                    if kind == "error":
                        result.error = f"error frame: {frame.get('message')}"
                        return result
                    if kind == "done":
                        result.done_at = result.frames[-1].at
            if result.done_at is None:
                result.error = "stream ended without a done frame"
    except TimeoutError:
        result.error = f"timed out after {timeout:.0f} s"
    except Exception as exc:
        result.error = f"{type(exc).__name__}: {exc}"
    finally:
        if writer is not None:
            writer.close()
    return result


@dataclass
class ChatResult:
    status: int = 0
    seconds: float = 0.0
    session_id: str = ""
    error: str = ""

    @property
    def ok(self) -> bool:
        return not self.error and self.status == 200


async def chat_turn(port: int, token: str, body: dict[str, Any], *, timeout: float = 600.0) -> ChatResult:
    """POST /agent/chat; seconds until the whole JSON answer has arrived."""
    result = ChatResult()
    began = time.perf_counter()
    writer: asyncio.StreamWriter | None = None
    try:
        async with asyncio.timeout(timeout):
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(
                _request("POST", "/agent/chat", port, token, json.dumps(body).encode(), "application/json")
            )
            await writer.drain()
            result.status, headers = await _read_head(reader)
            length = headers.get("content-length")
            raw = await (reader.readexactly(int(length)) if length else reader.read())
            result.seconds = time.perf_counter() - began
            answer = json.loads(raw) if raw else {}
            result.session_id = str(answer.get("sessionId", ""))
            if result.status != 200:
                result.error = f"HTTP {result.status}: {str(answer)[:200]}"
    except TimeoutError:
        result.error = f"timed out after {timeout:.0f} s"
    except Exception as exc:
        result.error = f"{type(exc).__name__}: {exc}"
    finally:
        if writer is not None:
            writer.close()
    return result


@dataclass
class HealthProbe:
    """GET /healthz on every web process every `interval` seconds (a new connection each time, as a load
    balancer's check), plus the database's connection count, until stopped."""

    ports: list[int]
    cluster: Cluster | None = None
    interval: float = 0.1
    timeout: float = 10.0
    latencies: list[float] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    peak_connections: int = 0
    peak_threads: dict[int, int] = field(default_factory=dict)  # pid -> most threads seen
    _stop: asyncio.Event = field(default_factory=asyncio.Event)

    async def _probe(self, port: int) -> None:
        began = time.perf_counter()
        writer: asyncio.StreamWriter | None = None
        try:
            async with asyncio.timeout(self.timeout):
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
                writer.write(
                    f"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n".encode()
                )
                await writer.drain()
                status, _ = await _read_head(reader)
                await reader.read()
            if status != 200:
                self.failures.append(f"HTTP {status}")
            self.latencies.append(time.perf_counter() - began)
        except Exception as exc:
            self.failures.append(f"{type(exc).__name__}: {exc}")
            self.latencies.append(time.perf_counter() - began)
        finally:
            if writer is not None:
                writer.close()

    async def _count_threads(self) -> None:
        if self.cluster is None:
            return
        while not self._stop.is_set():
            for pid in self.cluster.pids():
                with contextlib.suppress(OSError):
                    self.peak_threads[pid] = max(self.peak_threads.get(pid, 0), threads_of(pid))
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stop.wait(), self.interval)

    async def _count_connections(self) -> None:
        if self.cluster is None or not self.cluster.postgres:
            return
        import psycopg

        assert self.cluster.database.postgres_admin_url is not None
        async with await psycopg.AsyncConnection.connect(
            self.cluster.database.postgres_admin_url, autocommit=True
        ) as conn:
            while not self._stop.is_set():
                row = await (
                    await conn.execute(
                        "SELECT COUNT(*) FROM pg_stat_activity WHERE datname = %s",
                        [self.cluster.database.name],
                    )
                ).fetchone()
                self.peak_connections = max(self.peak_connections, int(row[0]) if row else 0)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._stop.wait(), self.interval)

    async def run(self) -> None:
        probes: set[asyncio.Task[None]] = set()
        counter = asyncio.gather(self._count_connections(), self._count_threads())
        while not self._stop.is_set():
            for port in self.ports:
                task = asyncio.create_task(self._probe(port))
                probes.add(task)
                task.add_done_callback(probes.discard)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stop.wait(), self.interval)
        await asyncio.gather(*probes, counter, return_exceptions=True)

    def stop(self) -> None:
        self._stop.set()

    def summary(self) -> str:
        return (
            f"{len(self.latencies)} probes, p50 {percentile(self.latencies, 0.5) * 1000:.0f} ms, "
            f"p95 {percentile(self.latencies, 0.95) * 1000:.0f} ms, max {max(self.latencies, default=0) * 1000:.0f} ms, "
            f"{len(self.failures)} failed"
        )
