"""`GET /healthz`: the process answers, and so does its database (docs/contracts.md)."""

from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.http import require_GET

from trainer_agent.streaming import database, database_answered_within

# A database call of this process that completed this recently proves the database answers: no query of our own.
ANSWERED_WITHIN_SECONDS = 5.0


@require_GET
async def healthz(request: HttpRequest) -> JsonResponse:
    """Liveness plus the database: an async view (no thread of its own), answered from the event loop when the
    process's database threads completed a call in the last few seconds (a busy process: its requests are the
    proof), else after a `SELECT 1` on those threads (an idle one)."""
    if not database_answered_within(ANSWERED_WITHIN_SECONDS):
        try:
            await database(_round_trip)()
        except Exception as exc:
            return JsonResponse({"status": "error", "database": type(exc).__name__}, status=503)
    return JsonResponse({"status": "ok", "database": connection.vendor})


def _round_trip() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        cursor.fetchone()
