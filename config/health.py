"""`GET /healthz` (readiness: the database and the workers) and `GET /livez` (liveness: the process answers).
docs/contracts.md §4.6."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Awaitable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.utils import timezone
from django.views.decorators.http import require_GET

from sessions_app.selectors import live_worker_count, oldest_queued_turn_since
from trainer_agent.streaming import database
from trainer_agent.turns import workers_seen_after

# A reading this recent is answered from the event loop, without a query: a load balancer's probes cost the
# database one query pair per process every few seconds however often they come.
FRESH_SECONDS = 2.0
# Longer than this for the reading and the database counts as down.
READ_TIMEOUT_SECONDS = 5.0


@dataclass(frozen=True)
class Reading:
    at: float  # time.monotonic()
    workers: int
    oldest_queued_seconds: float | None


_last: Reading | None = None
_executor: ThreadPoolExecutor | None = None
_executor_lock = threading.Lock()


@require_GET
async def livez(request: HttpRequest) -> JsonResponse:
    """Liveness: the process's event loop answers. No database, no workers: restart the process only if this fails."""
    return JsonResponse({"status": "ok"})


@require_GET
async def healthz(request: HttpRequest) -> JsonResponse:
    """Readiness: 200 when the database answers and (with `TASKS_BACKEND=database`) a worker is alive, else 503.

    An async view: answered from the event loop while the last reading is fresh, else after one reading (the
    live workers, the oldest queued turn) on a thread and connection of its own, so it never queues behind the
    process's requests on its database threads."""
    inline = settings.TASKS_BACKEND == "immediate"  # the web process runs its turns: no worker needed
    reading: Reading | None = _last
    if reading is None or time.monotonic() - reading.at > FRESH_SECONDS:
        try:
            reading = await asyncio.wait_for(_read_async(inline), timeout=READ_TIMEOUT_SECONDS)
        except Exception as exc:
            return JsonResponse(
                {"status": "error", "database": type(exc).__name__, "workers": None}, status=503
            )
    if inline:
        return JsonResponse({"status": "ok", "database": connection.vendor, "workers": None})
    ready = reading.workers > 0
    body = {
        "status": "ok" if ready else "error",
        "database": connection.vendor,
        "workers": {"alive": reading.workers, "oldestQueuedSeconds": reading.oldest_queued_seconds},
    }
    return JsonResponse(body, status=200 if ready else 503)


def _read_async(inline: bool) -> Awaitable[Reading]:
    if inline:  # the request's own thread, which sees the turns it ran (as every request there)
        return database(_read)()
    global _executor
    with _executor_lock:
        if _executor is None:
            _executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="health")
    return sync_to_async(_read_or_reconnect, thread_sensitive=False, executor=_executor)()


def _read_or_reconnect() -> Reading:
    try:
        return _read()
    except Exception:
        connection.close()  # a connection the database dropped is replaced on the next reading
        raise


def _read() -> Reading:
    global _last
    now = timezone.now()
    workers = live_worker_count(seen_after=workers_seen_after(now))
    since = oldest_queued_turn_since()
    oldest = round((now - since).total_seconds(), 1) if since is not None else None
    _last = Reading(at=time.monotonic(), workers=workers, oldest_queued_seconds=oldest)
    return _last
