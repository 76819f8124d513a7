"""`GET /metrics` (docs/architecture.md "Metrics"): the view over `trainer_agent.metrics`.

Apart from the series so that `metrics`, which the sink, the turns and the agent callbacks count into, imports
nothing of the web side: the view runs the queue's query on the web process's database threads (`streaming`).
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.http import require_GET
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4

from trainer_agent.metrics import exposition, scrape_refusal
from trainer_agent.streaming import database


@require_GET
async def metrics_view(request: HttpRequest) -> HttpResponse:
    """`GET /metrics`: the Prometheus text format, to allowed scrapers only (`scrape_refusal`)."""
    refusal = scrape_refusal(
        remote_addr=str(request.META.get("REMOTE_ADDR") or ""),
        authorization=str(request.headers.get("Authorization") or ""),
    )
    if refusal is not None:
        status, detail = refusal
        response: HttpResponse = JsonResponse({"detail": detail}, status=status)
        if status == 401:
            response["WWW-Authenticate"] = 'Bearer realm="metrics"'
        return response
    body = await database(exposition)()  # the queue's query runs on the process's database threads
    return HttpResponse(body, content_type=CONTENT_TYPE_PLAIN_0_0_4)  # what generate_latest writes
