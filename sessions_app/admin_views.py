"""Staff pages of the session admin: a session's timeline, its live tail, the dashboard and its CSV export.

Each page costs a fixed number of queries whatever the number of events: the timeline reads one page of
events (PAGE_SIZE), the session's row of the summaries view, its user's label and its active time; the live
tail reads the events after a sequence number (at most TAIL_LIMIT) and the session's status. Charts are
server-rendered SVG (no scripts, no CDN). The console's icons and one-line descriptions come through
sessions_app.admin_registry.
"""

from __future__ import annotations

import csv
import json
import math
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.template.loader import render_to_string
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe

from sessions_app import admin_registry
from sessions_app.activity import active_time_ms
from sessions_app.dashboards import (
    LATENCY_METRICS,
    USER_DAYS_SHOWN,
    DateRange,
    DayTotals,
    ModelLatency,
    ModelUsage,
    ToolUsage,
    daily_totals,
    day_rows_for_csv,
    format_cache_hit_rate,
    latency_percentiles,
    model_usage,
    range_totals,
    tool_usage,
    user_days,
)
from sessions_app.events import is_trainer, purpose_of
from sessions_app.models import AgentSession, AgentSessionEvent, AgentSessionSummary, AgentTurn, EventType

if TYPE_CHECKING:
    from django.contrib.admin import ModelAdmin

PAGE_SIZE = 200
TAIL_LIMIT = 200
DEFAULT_RANGE_DAYS = 30
MAX_RANGE_DAYS = 366
TOP_TOOLS_IN_CHART = 6


# --- formatting ------------------------------------------------------------------------------------------


def format_cost(cents: Any) -> str:
    """Cents as dollars with 4 decimals, like the console log: 0.12 → "$0.0012"; "—" for a non-number."""
    if cents is None:
        cents = 0
    if isinstance(cents, bool) or not isinstance(cents, int | float):
        return "—"
    return f"${cents / 100:.4f}"


def format_duration(duration_ms: float | None) -> str:
    """112 → "112ms", 1300 → "1.3s", 95000 → "1m 35s", None → "—"."""
    if duration_ms is None:
        return "—"
    if duration_ms < 1000:
        return f"{int(duration_ms)}ms"
    seconds = duration_ms / 1000
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, rest = divmod(round(seconds), 60)
    if minutes < 60:
        return f"{minutes}m {rest:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h {minutes:02d}m"


def format_percent(fraction: float | None, digits: int = 0) -> str:
    return "—" if fraction is None else f"{fraction * 100:.{digits}f}%"


def format_decimal(value: float | None, digits: int = 2) -> str:
    """1.85 → "1.85", 2.0 → "2", None → "—" (percentiles)."""
    if value is None:
        return "—"
    return f"{value:.{digits}f}".rstrip("0").rstrip(".")


def format_count(value: float | None) -> str:
    """1234 → "1,234"; 1.5 → "1.5"; None → "—"."""
    if value is None:
        return "—"
    if float(value).is_integer():
        return f"{int(value):,}"
    return f"{value:,.1f}"


# --- the timeline ----------------------------------------------------------------------------------------


@dataclass
class ExerciseRow:
    order: str
    name: str
    kind: str
    prescription: str
    rest: str
    muscles: str
    group: str
    equipment: str


@dataclass
class ArtifactView:
    title: str
    artifact_id: str
    kind: str
    summary: list[tuple[str, str]]
    exercises: list[ExerciseRow]


@dataclass
class TimelineRow:
    sequence: int
    event_type: str
    label: str
    icon: str
    description: str
    clock: str
    offset: str
    duration: str
    tokens: dict[str, int] | None
    cost: str | None
    is_error: bool
    json: str
    artifact: ArtifactView | None
    links: list[tuple[str, str]] = field(default_factory=list)

    @property
    def usage_text(self) -> str:
        """E.g. "3,200 tok (2,800 cached)" for an LLM response; empty otherwise."""
        if self.tokens is None:
            return ""
        return f"{format_count(self.tokens.get('total', 0))} tok ({format_count(self.tokens.get('cached', 0))} cached)"

    @property
    def usage_title(self) -> str:
        if self.tokens is None:
            return ""
        return " · ".join(
            f"{bucket.replace('_', ' ')} {format_count(value)}" for bucket, value in self.tokens.items()
        )


def artifact_view(data: dict[str, Any]) -> ArtifactView:
    """An artifact event as a table of its exercises plus its summary; the exercises' cells come from the
    registered exercise format (the one workout model and prescription rendering, admin_registry)."""
    payload: dict[str, Any] = data["payload"] if isinstance(data.get("payload"), dict) else {}
    exercises = payload.get("exercises")
    rows = [
        ExerciseRow(**admin_registry.describe_exercise(exercise, index))
        for index, exercise in enumerate(exercises if isinstance(exercises, list) else [], start=1)
        if isinstance(exercise, dict)
    ]
    summary = data.get("summary") if isinstance(data.get("summary"), dict) else {}
    summary_items = [
        (str(key).replace("_", " "), ", ".join(map(str, value)) if isinstance(value, list) else str(value))
        for key, value in (summary or {}).items()
        if value not in (None, "", [])
    ]
    return ArtifactView(
        title=str(data.get("title") or payload.get("title") or "Artifact"),
        artifact_id=str(data.get("artifact_id", "")),
        kind=str(data.get("type", "")),
        summary=summary_items,
        exercises=rows,
    )


def _tokens(data: dict[str, Any]) -> dict[str, int] | None:
    tokens = data.get("tokens")
    if not isinstance(tokens, dict):
        return None
    return {
        bucket: int(value)
        for bucket in ("prompt", "completion", "cached", "cache_write", "total")
        if isinstance(value := tokens.get(bucket), int | float) and not isinstance(value, bool)
    }


def _clock(moment: datetime) -> str:
    moment = moment.astimezone(UTC)
    return moment.strftime("%H:%M:%S.") + f"{moment.microsecond // 1000:03d}"


def _offset(moment: datetime, origin: datetime | None) -> str:
    if origin is None:
        return ""
    seconds = max((moment - origin).total_seconds(), 0.0)
    return f"+{seconds:.1f}s" if seconds < 600 else f"+{format_duration(seconds * 1000)}"


EVENT_LABELS: dict[str, str] = {
    EventType.USER_MESSAGE: "User message",
    EventType.LLM_REQUEST: "LLM request",
    EventType.LLM_RESPONSE: "LLM response",
    EventType.TOOL_CALL: "Tool call",
    EventType.TOOL_RESULT: "Tool result",
    EventType.KNOWLEDGE: "Knowledge",
    EventType.ERROR: "Error",
    EventType.ARTIFACT: "Artifact",
    EventType.CHECKPOINT: "Checkpoint",
}


def _describe(event_type: str, data: dict[str, Any], duration_ms: int | None) -> str:
    """The console's one-line description; LLM responses leave tokens and cost to their own columns."""
    if event_type != EventType.LLM_RESPONSE:
        return admin_registry.describe_event(event_type, data, duration_ms)
    purpose = "" if is_trainer(data) else f" ({purpose_of(data)})"
    text = " ".join(str(data.get("text") or "").split())
    detail = (
        f"“{text[:80]}…”"
        if len(text) > 80
        else (f"“{text}”" if text else f"stop: {data.get('stop_reason') or '—'}")
    )
    return f"LLM Response ← {data.get('model', '?')}{purpose}  {detail}"


def timeline_rows(
    events: Iterable[AgentSessionEvent],
    *,
    origin: datetime | None,
    link: Callable[[int, str], str],
) -> list[TimelineRow]:
    """The rows of a timeline page; `link(sequence, action)` builds an event action's URL."""
    actions = admin_registry.event_actions()
    rows = []
    for event in events:
        data = event.data if isinstance(event.data, dict) else {"value": event.data}
        is_llm_response = event.event_type == EventType.LLM_RESPONSE
        rows.append(
            TimelineRow(
                sequence=event.sequence_number,
                event_type=event.event_type,
                label=EVENT_LABELS.get(event.event_type, event.event_type),
                icon=admin_registry.event_icon(event.event_type),
                description=_describe(event.event_type, data, event.duration_ms),
                clock=_clock(event.timestamp),
                offset=_offset(event.timestamp, origin),
                duration=format_duration(event.duration_ms) if event.duration_ms is not None else "",
                tokens=_tokens(data) if is_llm_response else None,
                cost=format_cost(data.get("cost_cents")) if is_llm_response else None,
                is_error=event.event_type == EventType.ERROR
                or (event.event_type == EventType.TOOL_RESULT and data.get("success") is False),
                json=json.dumps(data, indent=2, ensure_ascii=False, sort_keys=False, default=str),
                artifact=artifact_view(data) if event.event_type == EventType.ARTIFACT else None,
                links=[
                    (action.label, link(event.sequence_number, action.name))
                    for action in actions
                    if _applies(action, event.event_type, data)
                ],
            )
        )
    return rows


def _applies(action: admin_registry.EventAction, event_type: str, data: dict[str, Any]) -> bool:
    try:
        return bool(action.applies_to(event_type, data))
    except Exception:
        return False


def _url_name(model_admin: ModelAdmin[Any], suffix: str) -> str:
    return (
        f"{model_admin.admin_site.name}:{model_admin.opts.app_label}_{model_admin.opts.model_name}_{suffix}"
    )


def _action_linker(model_admin: ModelAdmin[Any], session_id: uuid.UUID) -> Callable[[int, str], str]:
    name = _url_name(model_admin, "event_action")
    # Reverse once, then fill in: reversing per event would dominate a 200-event page.
    template = reverse(name, args=[session_id, 0, "ACTION"])
    head, tail = template.split("/0/ACTION/")
    return lambda sequence, action: f"{head}/{sequence}/{action}/{tail}"


def _parse_uuid(value: Any) -> uuid.UUID:
    try:
        return uuid.UUID(str(value))
    except ValueError:
        raise Http404("No such session") from None


def _positive_int(value: str | None, default: int) -> int:
    try:
        return max(int(value or default), 1)
    except ValueError:
        return default


def session_detail(request: HttpRequest, *, model_admin: ModelAdmin[Any], object_id: str) -> HttpResponse:
    """The totals header, the traced turns and one page of the timeline (PAGE_SIZE events). Six queries plus
    the admin's own."""
    session_id = _parse_uuid(object_id)
    summary = AgentSessionSummary.objects.filter(pk=session_id).first()
    if summary is None:
        raise Http404("No such session")
    pages = max(math.ceil(summary.event_count / PAGE_SIZE), 1)
    wanted_sequence = request.GET.get("seq")
    if wanted_sequence is not None and wanted_sequence.lstrip("-").isdigit():
        before = AgentSessionEvent.objects.filter(
            session_id=session_id, sequence_number__lt=int(wanted_sequence)
        ).count()
        page = before // PAGE_SIZE + 1
    else:
        page = _positive_int(request.GET.get("page"), 1)
    page = min(page, pages)
    offset = (page - 1) * PAGE_SIZE
    events = AgentSessionEvent.objects.filter(session_id=session_id).order_by("sequence_number")[
        offset : offset + PAGE_SIZE
    ]
    rows = timeline_rows(events, origin=summary.created_at, link=_action_linker(model_admin, session_id))
    is_last_page = page == pages
    context = {
        **model_admin.admin_site.each_context(request),
        "opts": model_admin.opts,
        "title": f"Session {str(session_id)[:8]}",
        "subtitle": str(session_id),
        "summary": summary,
        "user_label": admin_registry.user_labels([summary.user_id]).get(summary.user_id, ""),
        "totals": _summary_cards(summary, active_ms=active_time_ms(summaries=[summary])[summary.pk]),
        "rows": rows,
        "page": page,
        "pages": pages,
        "page_links": _page_links(page, pages),
        "page_size": PAGE_SIZE,
        "first_shown": rows[0].sequence if rows else None,
        "last_shown": rows[-1].sequence if rows else None,
        "is_last_page": is_last_page,
        "follow": is_last_page and summary.status == "active",
        "tail_url": reverse(_url_name(model_admin, "events_json"), args=[session_id]),
        "after_sequence": rows[-1].sequence if rows and is_last_page else summary.last_sequence,
        "dashboard_url": reverse(_url_name(model_admin, "dashboard")),
        "changelist_url": reverse(_url_name(model_admin, "changelist")),
        "delete_url": reverse(_url_name(model_admin, "delete"), args=[session_id])
        if model_admin.has_delete_permission(request)
        else None,
        "metadata_json": json.dumps(summary.metadata, indent=2, ensure_ascii=False, default=str),
        "has_console_format": admin_registry.event_icon(EventType.USER_MESSAGE)
        != admin_registry.DEFAULT_ICON,
        "traces": turn_traces(session_id),
    }
    return TemplateResponse(request, "admin/sessions_app/session_detail.html", context)


@dataclass(frozen=True)
class TurnTrace:
    """A turn's OpenTelemetry trace, as the session page lists it: where it starts and where to open it."""

    start_sequence: int
    status: str
    trace_id: str
    url: str


def trace_url(trace_id: str) -> str:
    """The tracing backend's page of the trace (settings.TRACE_URL_TEMPLATE with `{trace_id}`), or ""."""
    template: str = settings.TRACE_URL_TEMPLATE
    return template.replace("{trace_id}", trace_id) if template and trace_id else ""


def turn_traces(session_id: uuid.UUID) -> list[TurnTrace]:
    """The session's traced turns, oldest first (one query)."""
    turns = AgentTurn.objects.filter(session_id=session_id, trace_id__isnull=False).exclude(trace_id="")
    return [
        TurnTrace(start_sequence=start, status=status, trace_id=trace_id or "", url=trace_url(trace_id or ""))
        for start, status, trace_id in turns.order_by("start_sequence").values_list(
            "start_sequence", "status", "trace_id"
        )
    ]


def _summary_cards(summary: AgentSessionSummary, *, active_ms: int) -> list[tuple[str, str, str]]:
    """(label, value, detail) for the header of a session's page (active time: sessions_app.activity)."""
    input_tokens = summary.prompt_tokens + summary.cached_tokens + summary.cache_write_tokens
    return [
        ("Cost", format_cost(summary.cost_cents), f"{summary.llm_calls} LLM calls"),
        (
            "Tokens",
            format_count(summary.total_tokens),
            f"prompt {format_count(summary.prompt_tokens)} · completion {format_count(summary.completion_tokens)}"
            f" · cached {format_count(summary.cached_tokens)} · cache write {format_count(summary.cache_write_tokens)}",
        ),
        (
            "Cache hit",
            format_cache_hit_rate(summary.cache_hit_rate) if input_tokens else "—",
            "cached / input",
        ),
        ("Iterations", format_count(summary.iterations), f"{summary.user_messages} user messages"),
        (
            "Tools",
            format_count(summary.tool_calls),
            f"{summary.tool_failures} failed · {summary.artifacts} artifacts · {summary.knowledge} knowledge",
        ),
        ("Errors", format_count(summary.errors), "error events"),
        (
            "Duration",
            format_duration(summary.duration_ms) if summary.event_count else "—",
            f"{format_duration(active_ms)} active · {summary.event_count} events"
            if summary.event_count
            else "no events",
        ),
    ]


def _page_links(page: int, pages: int) -> list[int | None]:
    """Page numbers to show: the first, the last and two either side of the current (None = gap)."""
    wanted = sorted({1, pages, *range(max(page - 2, 1), min(page + 2, pages) + 1)})
    links: list[int | None] = []
    for number in wanted:
        if links and links[-1] is not None and number - links[-1] > 1:
            links.append(None)
        links.append(number)
    return links


def events_after(
    request: HttpRequest, *, model_admin: ModelAdmin[Any], session_id: uuid.UUID
) -> JsonResponse:
    """Live tail: the session's status and its events after `?after=N` (at most TAIL_LIMIT), as timeline rows.

    Two queries. `more` is true when the limit cut the answer short (ask again at once).
    """
    session = AgentSession.objects.filter(pk=session_id).values("status", "created_at").first()
    if session is None:
        raise Http404("No such session")
    after_text = request.GET.get("after", "-1")
    after = int(after_text) if after_text.lstrip("-").isdigit() else -1
    events = list(
        AgentSessionEvent.objects.filter(session_id=session_id, sequence_number__gt=after).order_by(
            "sequence_number"
        )[:TAIL_LIMIT]
    )
    rows = timeline_rows(events, origin=session["created_at"], link=_action_linker(model_admin, session_id))
    return JsonResponse(
        {
            "status": session["status"],
            "last_sequence": rows[-1].sequence if rows else after,
            "more": len(rows) == TAIL_LIMIT,
            "events": [
                {
                    "sequence": row.sequence,
                    "event_type": row.event_type,
                    "html": render_to_string("admin/sessions_app/_event_row.html", {"row": row}),
                }
                for row in rows
            ],
        }
    )


def event_action(
    request: HttpRequest, *, model_admin: ModelAdmin[Any], session_id: uuid.UUID, sequence: int, action: str
) -> HttpResponse:
    """Serve a registered event action (e.g. trainer_agent's step replay) inside the admin."""
    registered = admin_registry.get_event_action(action)
    if registered is None:
        raise Http404(f"No event action {action!r} is registered")
    detail_url = reverse(_url_name(model_admin, "change"), args=[session_id])
    admin_context = {
        **model_admin.admin_site.each_context(request),
        "opts": model_admin.opts,
        "session_id": session_id,
        "sequence": sequence,
        "session_url": detail_url,
        "event_url": f"{detail_url}?{urlencode({'seq': sequence})}#e{sequence}",
        "action_url": lambda other_sequence: _action_linker(model_admin, session_id)(other_sequence, action),
    }
    return registered.view(request, session_id=session_id, sequence=sequence, admin_context=admin_context)


# --- the dashboard ---------------------------------------------------------------------------------------


def parse_date_range(params: dict[str, str], *, today: date) -> tuple[DateRange, str | None]:
    """The `start`/`end` GET parameters (ISO dates, UTC) or the last DEFAULT_RANGE_DAYS days; plus a problem."""
    default = DateRange.last_days(DEFAULT_RANGE_DAYS, today=today)
    try:
        start = date.fromisoformat(params["start"]) if params.get("start") else None
        end = date.fromisoformat(params["end"]) if params.get("end") else None
    except ValueError:
        return default, "Dates must look like 2025-01-31; showing the last 30 days."
    end = end or (today if start is None or start <= today else start)
    start = start or end - timedelta(days=DEFAULT_RANGE_DAYS - 1)
    if end < start:
        return default, "The range ends before it starts; showing the last 30 days."
    if (end - start).days + 1 > MAX_RANGE_DAYS:
        start = end - timedelta(days=MAX_RANGE_DAYS - 1)
        return DateRange(
            start=start, end=end
        ), f"Ranges are at most {MAX_RANGE_DAYS} days; showing the last {MAX_RANGE_DAYS}."
    return DateRange(start=start, end=end), None


@dataclass(frozen=True)
class Series:
    name: str
    values: Sequence[float | None]
    color: str


CHART_COLORS = ("#417690", "#e8a33d", "#5aa469", "#b55d8c", "#7a6fc4", "#c25b4e", "#8a8a8a")


TICKS = 4


def nice_tick_step(peak: float, *, integer: bool = False) -> float:
    """A round step (1, 2, 2.5 or 5 × 10^k) so that TICKS steps cover `peak`; whole numbers for counts."""
    if peak <= 0:
        return 1.0
    raw = peak / TICKS
    magnitude = 10 ** math.floor(math.log10(raw))
    for factor in (1, 2, 2.5, 5, 10):
        step = factor * magnitude
        if integer and (step < 1 or not float(step).is_integer()):
            continue
        if step >= raw:
            return step
    return 10 * magnitude


def bar_chart(
    *,
    labels: Sequence[str],
    series: Sequence[Series],
    value_format: Callable[[float], str],
    stacked: bool = False,
    integer: bool = False,
    width: int = 620,
    height: int = 200,
    title: str = "",
) -> SafeString:
    """A bar chart as inline SVG: one slot per label, series stacked or side by side, y grid with 4 ticks."""
    left, right, top, bottom = 64, 8, 10, 24
    plot_w, plot_h = width - left - right, height - top - bottom
    slots = max(len(labels), 1)
    if stacked:
        peak = max((sum(s.values[i] or 0 for s in series) for i in range(len(labels))), default=0)
    else:
        peak = max((v or 0 for s in series for v in s.values), default=0)
    ceiling = nice_tick_step(peak, integer=integer) * TICKS
    slot_w = plot_w / slots
    bar_w = max(slot_w * 0.8 / (1 if stacked else max(len(series), 1)), 1.0)
    parts: list[str] = []
    for tick in range(TICKS + 1):
        value = ceiling * tick / TICKS
        y = top + plot_h - plot_h * tick / TICKS
        parts.append(
            format_html(
                '<line x1="{}" x2="{}" y1="{}" y2="{}" class="grid"/><text x="{}" y="{}" class="ylabel">{}</text>',
                left,
                width - right,
                f"{y:.1f}",
                f"{y:.1f}",
                left - 6,
                f"{y + 4:.1f}",
                value_format(value),
            )
        )
    label_every = max(math.ceil(slots / 10), 1)
    for index, label in enumerate(labels):
        x0 = left + index * slot_w + slot_w * 0.1
        base = 0.0
        for position, one in enumerate(series):
            maybe = one.values[index] if index < len(one.values) else None
            if maybe is None:
                continue
            value = float(maybe)
            bar_h = plot_h * value / ceiling
            x = x0 if stacked else x0 + position * bar_w
            y = top + plot_h - base - bar_h
            parts.append(
                format_html(
                    '<rect x="{}" y="{}" width="{}" height="{}" fill="{}"><title>{} · {}: {}</title></rect>',
                    f"{x:.1f}",
                    f"{y:.1f}",
                    f"{bar_w:.1f}",
                    f"{bar_h:.1f}",
                    one.color,
                    label,
                    one.name,
                    value_format(value),
                )
            )
            if stacked:
                base += bar_h
        if index % label_every == 0:
            parts.append(
                format_html(
                    '<text x="{}" y="{}" class="xlabel">{}</text>',
                    f"{left + index * slot_w + slot_w / 2:.1f}",
                    height - 6,
                    label,
                )
            )
    parts.append(
        format_html(
            '<line x1="{}" x2="{}" y1="{}" y2="{}" class="axis"/>',
            left,
            width - right,
            top + plot_h,
            top + plot_h,
        )
    )
    legend = (
        format_html_join(
            "",
            '<span class="obs-legend-item"><i style="background:{}"></i>{}</span>',
            ((one.color, one.name) for one in series),
        )
        if len(series) > 1
        else ""
    )
    svg = format_html(
        '<svg class="obs-chart" viewBox="0 0 {} {}" width="100%" role="img" aria-label="{}">{}</svg>',
        width,
        height,
        title,
        mark_safe("".join(parts)),  # every part was built with format_html
    )
    return format_html('<div class="obs-chart-box">{}<div class="obs-legend">{}</div></div>', svg, legend)


def _money_axis(cents: float) -> str:
    """Dollars with as few decimals as the value needs: $0, $0.05, $0.0025, $1.50."""
    dollars = cents / 100
    for digits in (2, 3, 4):
        if abs(round(dollars, digits) - dollars) < 1e-9:
            return f"${dollars:.{digits}f}"
    return f"${dollars:.4f}"


def _short_count(value: float) -> str:
    if value >= 1_000_000:
        return f"{value / 1_000_000:.1f}M"
    if value >= 1000:
        return f"{value / 1000:.1f}K"
    return f"{value:g}"


def _charts(days: list[DayTotals], tools: list[ToolUsage]) -> list[tuple[str, SafeString]]:
    labels = [day.day.strftime("%m-%d") for day in days]
    top_tools = tools[:TOP_TOOLS_IN_CHART]
    other = tools[TOP_TOOLS_IN_CHART:]
    tool_series = [
        Series(tool.tool_name, [tool.calls_by_day.get(day.day, 0) for day in days], CHART_COLORS[i % 6])
        for i, tool in enumerate(top_tools)
    ]
    if other:
        tool_series.append(
            Series(
                "other tools",
                [sum(tool.calls_by_day.get(day.day, 0) for tool in other) for day in days],
                CHART_COLORS[6],
            )
        )
    return [
        (
            "Active sessions per day",
            bar_chart(
                labels=labels,
                series=[Series("sessions", [d.sessions for d in days], CHART_COLORS[0])],
                value_format=_short_count,
                integer=True,
            ),
        ),
        (
            "Cost per day",
            bar_chart(
                labels=labels,
                series=[Series("cost", [d.cost_cents for d in days], CHART_COLORS[1])],
                value_format=_money_axis,
            ),
        ),
        (
            "Tokens per day by bucket",
            bar_chart(
                labels=labels,
                series=[
                    Series("prompt", [d.prompt_tokens for d in days], CHART_COLORS[0]),
                    Series("completion", [d.completion_tokens for d in days], CHART_COLORS[1]),
                    Series("cached", [d.cached_tokens for d in days], CHART_COLORS[2]),
                    Series("cache write", [d.cache_write_tokens for d in days], CHART_COLORS[3]),
                ],
                value_format=_short_count,
                stacked=True,
            ),
        ),
        (
            "Cache hit rate per day",
            bar_chart(
                labels=labels,
                series=[
                    Series(
                        "cache hit rate",
                        [d.cache_hit_rate * 100 if d.llm_calls else None for d in days],
                        CHART_COLORS[2],
                    )
                ],
                value_format=lambda v: f"{v:.0f}%",
            ),
        ),
        (
            "Error rate per day (sessions with an error)",
            bar_chart(
                labels=labels,
                series=[
                    Series(
                        "error rate",
                        [d.error_rate * 100 if d.sessions else None for d in days],
                        CHART_COLORS[5],
                    )
                ],
                value_format=lambda v: f"{v:.0f}%",
            ),
        ),
        (
            "Iterations per session (sessions created that day)",
            bar_chart(
                labels=labels,
                series=[
                    Series("p50", [d.iterations_p50 for d in days], CHART_COLORS[0]),
                    Series("p95", [d.iterations_p95 for d in days], CHART_COLORS[1]),
                ],
                value_format=format_decimal,
            ),
        ),
        (
            "Tool calls per day",
            bar_chart(
                labels=labels, series=tool_series, value_format=_short_count, stacked=True, integer=True
            ),
        ),
    ]


def _counts(row: Any, names: Iterable[str]) -> dict[str, str]:
    """Thousands-separated counts of a table row, by attribute name."""
    return {name: format_count(getattr(row, name)) for name in names}


def _model_rows(models: list[ModelUsage]) -> list[dict[str, Any]]:
    top = max((usage.cost_cents for usage in models), default=0) or 1
    return [
        {
            "usage": usage,
            "n": _counts(
                usage,
                ("llm_calls", "prompt_tokens", "completion_tokens", "cached_tokens", "cache_write_tokens"),
            ),
            "cost": format_cost(usage.cost_cents),
            "share": f"{usage.cost_cents / top * 100:.1f}",
            "cache_hit": format_cache_hit_rate(usage.cache_hit_rate)
            if usage.prompt_tokens + usage.cached_tokens + usage.cache_write_tokens
            else "—",
            "latency": format_duration(usage.average_latency_ms),
        }
        for usage in models
    ]


def dashboard(request: HttpRequest, *, model_admin: ModelAdmin[Any]) -> HttpResponse:
    """Per-day charts, totals, cost per model, tool usage, latency percentiles and the per-user days for a
    date range. Nine queries."""
    today = timezone.now().astimezone(UTC).date()
    date_range, problem = parse_date_range(request.GET.dict(), today=today)
    days = daily_totals(date_range=date_range)
    totals = range_totals(days=days, date_range=date_range)
    models = model_usage(date_range=date_range)
    tools = tool_usage(date_range=date_range)
    query = urlencode({"start": date_range.start.isoformat(), "end": date_range.end.isoformat()})
    csv_url = reverse(_url_name(model_admin, "dashboard_csv"))
    context = {
        **model_admin.admin_site.each_context(request),
        "opts": model_admin.opts,
        "title": "Agent dashboard",
        "date_range": date_range,
        "problem": problem,
        "cards": [
            ("Sessions created", format_count(totals.sessions_created), "in the range"),
            ("Cost", format_cost(totals.cost_cents), f"{format_count(totals.sums['llm_calls'])} LLM calls"),
            ("Tokens", _short_count(totals.total_tokens), "all buckets"),
            ("Cache hit rate", format_cache_hit_rate(totals.cache_hit_rate), "cached / input tokens"),
            ("Error rate", format_percent(totals.error_rate, 1), "session-days with an error"),
            (
                "Iterations p50 / p95",
                f"{format_decimal(totals.iterations_p50)} / {format_decimal(totals.iterations_p95)}",
                "per session",
            ),
            (
                "Tool calls",
                format_count(totals.sums["tool_calls"]),
                f"{format_count(totals.sums['tool_failures'])} failed",
            ),
        ],
        "charts": _charts(days, tools),
        "days": [
            {
                "day": day,
                "n": _counts(
                    day,
                    (
                        "sessions",
                        "user_messages",
                        "llm_calls",
                        "iterations",
                        "tool_calls",
                        "errors",
                        "total_tokens",
                    ),
                ),
                "cost": format_cost(day.cost_cents),
                "cache_hit": format_cache_hit_rate(day.cache_hit_rate) if day.llm_calls else "—",
                "error_rate": format_percent(day.error_rate, 1) if day.sessions else "—",
                "p50": format_decimal(day.iterations_p50),
                "p95": format_decimal(day.iterations_p95),
            }
            for day in reversed(days)
        ],
        "models": _model_rows(models),
        "tools": [
            {
                "usage": usage,
                "n": _counts(usage, ("calls", "failures")),
                "failure_rate": format_percent(usage.failure_rate, 1),
                "average": format_duration(usage.average_duration_ms),
                "max": format_duration(usage.max_duration_ms),
            }
            for usage in tools
        ],
        "presets": [
            (
                label,
                "?"
                + urlencode({"start": (today - timedelta(days=n - 1)).isoformat(), "end": today.isoformat()}),
            )
            for label, n in (("7 days", 7), ("30 days", 30), ("90 days", 90))
        ],
        "csv_links": [(label, f"{csv_url}?{query}&table={table}") for label, table in CSV_TABLES],
        "changelist_url": reverse(_url_name(model_admin, "changelist")),
    }
    context.update(_latency_context(date_range))
    context.update(_user_days_context(date_range, model_admin))
    return TemplateResponse(request, "admin/sessions_app/dashboard.html", context)


def _latency_cells(row: ModelLatency) -> list[dict[str, str]]:
    cells = []
    for metric, _label in LATENCY_METRICS:
        latency = row.metrics.get(metric)
        cells.append(
            {
                "metric": metric,
                "p50": _format_latency(latency.p50_ms if latency else None),
                "p95": _format_latency(latency.p95_ms if latency else None),
                "samples": format_count(latency.samples) if latency else "0",
            }
        )
    return cells


def _format_latency(ms: float | None) -> str:
    """A percentile in ms, rounded (not truncated: an interpolated 879.9999 reads 880ms)."""
    return "—" if ms is None else format_duration(round(ms))


def _latency_context(date_range: DateRange) -> dict[str, Any]:
    """Latency p50 / p95 per model over the range and per day (two queries)."""
    return {
        "latency_metrics": [label for _metric, label in LATENCY_METRICS],
        "latency_models": [
            {"model": row.model, "cells": _latency_cells(row)}
            for row in latency_percentiles(date_range=date_range, by_day=False)
        ],
        "latency_days": [
            {"day": row.day, "model": row.model, "cells": _latency_cells(row)}
            for row in latency_percentiles(date_range=date_range, by_day=True)
        ],
    }


def _user_days_context(date_range: DateRange, model_admin: ModelAdmin[Any]) -> dict[str, Any]:
    """The per-user daily view's rows of the range, each user linked to their sessions (two queries)."""
    rows = user_days(date_range=date_range)
    labels = admin_registry.user_labels({row.user_id for row in rows})
    changelist = reverse(_url_name(model_admin, "changelist"))
    return {
        "user_days_limit": USER_DAYS_SHOWN,
        "user_days": [
            {
                "row": row,
                "user_label": labels.get(row.user_id) or f"{str(row.user_id)[:8]}…",
                "sessions_url": f"{changelist}?{urlencode({'q': str(row.user_id)})}",
                "n": _counts(row, ("sessions", "user_messages", "iterations", "tool_calls", "errors")),
                "tokens": format_count(row.total_tokens),
                "cache_hit": format_cache_hit_rate(row.cache_hit_rate)
                if row.prompt_tokens + row.cached_tokens + row.cache_write_tokens
                else "—",
                "cost": format_cost(row.cost_cents),
            }
            for row in rows
        ],
    }


CSV_TABLES = (("per day", "days"), ("per model", "models"), ("per tool", "tools"))


def dashboard_csv(request: HttpRequest) -> HttpResponse:
    """The dashboard's tables as CSV: `table=days` (default), `models` or `tools`, for the same range."""
    today = timezone.now().astimezone(UTC).date()
    date_range, _ = parse_date_range(request.GET.dict(), today=today)
    table = request.GET.get("table", "days")
    if table == "models":
        rows = _model_csv(model_usage(date_range=date_range))
    elif table == "tools":
        rows = _tool_csv(tool_usage(date_range=date_range))
    elif table == "days":
        rows = day_rows_for_csv(daily_totals(date_range=date_range))
    else:
        raise Http404("table must be days, models or tools")
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    filename = f"agent-{table}-{date_range.start.isoformat()}-{date_range.end.isoformat()}.csv"
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    csv.writer(response).writerows(rows)
    return response


def _model_csv(models: list[ModelUsage]) -> list[list[Any]]:
    header = [
        "model",
        "purpose",
        "llm_calls",
        "prompt_tokens",
        "completion_tokens",
        "cached_tokens",
        "cache_write_tokens",
        "total_tokens",
        "cost_cents",
        "cache_hit_rate",
        "average_latency_ms",
    ]
    rows: list[list[Any]] = [header]
    for usage in models:
        rows.append(
            [
                *(getattr(usage, name) for name in header[:8]),
                round(usage.cost_cents, 6),
                round(usage.cache_hit_rate, 6),
                round(usage.average_latency_ms, 1),
            ]
        )
    return rows


def _tool_csv(tools: list[ToolUsage]) -> list[list[Any]]:
    rows: list[list[Any]] = [
        ["tool_name", "calls", "failures", "failure_rate", "average_duration_ms", "max_duration_ms"]
    ]
    for usage in tools:
        rows.append(
            [
                usage.tool_name,
                usage.calls,
                usage.failures,
                round(usage.failure_rate, 6),
                round(usage.average_duration_ms, 1),
                "" if usage.max_duration_ms is None else usage.max_duration_ms,
            ]
        )
    return rows
