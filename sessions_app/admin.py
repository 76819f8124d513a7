"""Staff admin for agent sessions, read from the `agent_session_summaries` view.

The list shows one row per session with its aggregates, its user by the name another app registers
(admin_registry.register_user_labeller) and its active time (sessions_app.activity); a row opens the
session's timeline (admin_views).
Extra pages under the same admin: the dashboard (+ CSV), the live-tail JSON endpoint, and the event actions
other apps register (trainer_agent's step replay). Nothing here writes except deletion, which goes through
sessions_app.services.delete_session (the only path the append-only trigger lets through).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from datetime import UTC, date, datetime, time, timedelta
from typing import Any
from uuid import UUID

from django.contrib import admin
from django.contrib.admin.views.main import ChangeList
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.urls import URLPattern, path
from django.utils.html import format_html

from sessions_app import admin_registry, admin_views
from sessions_app.activity import ACTIVE_TIME_HELP, active_time_ms
from sessions_app.admin_views import format_cost, format_duration
from sessions_app.dashboards import format_cache_hit_rate, session_models
from sessions_app.models import AgentSession, AgentSessionSummary
from sessions_app.selectors import sessions_mentioning
from sessions_app.services import delete_session


class ModelFilter(admin.SimpleListFilter):
    title = "model"
    parameter_name = "model"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [(model, model) for model in session_models()]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        return queryset.filter(model=self.value()) if self.value() else queryset


class HasErrorsFilter(admin.SimpleListFilter):
    title = "errors"
    parameter_name = "has_errors"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [("yes", "With errors"), ("no", "Without errors")]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        if self.value() == "yes":
            return queryset.filter(errors__gt=0)
        if self.value() == "no":
            return queryset.filter(errors=0)
        return queryset


class CreatedRangeFilter(admin.ListFilter):
    """Sessions created between two UTC dates (both included), from `created_from` / `created_to`."""

    title = "created (UTC)"
    template = "admin/sessions_app/date_range_filter.html"
    parameter_from = "created_from"
    parameter_to = "created_to"

    def __init__(self, request: HttpRequest, params: dict[str, Any], model: Any, model_admin: Any) -> None:
        super().__init__(request, params, model, model_admin)
        self.raw: dict[str, str] = {}
        self.bounds: dict[str, date] = {}
        for name in (self.parameter_from, self.parameter_to):
            value = params.pop(name, None)
            if isinstance(value, list):
                value = value[-1] if value else None
            if value:
                self.raw[name] = str(value)
                self.used_parameters[name] = str(value)
                # An unreadable date filters nothing; the form shows it as typed.
                with contextlib.suppress(ValueError):
                    self.bounds[name] = date.fromisoformat(str(value))

    def has_output(self) -> bool:
        return True

    def expected_parameters(self) -> list[str | None]:
        return [self.parameter_from, self.parameter_to]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        start = self.bounds.get(self.parameter_from)
        end = self.bounds.get(self.parameter_to)
        if start is not None:
            queryset = queryset.filter(created_at__gte=datetime.combine(start, time.min, tzinfo=UTC))
        if end is not None:
            after = datetime.combine(end + timedelta(days=1), time.min, tzinfo=UTC)
            queryset = queryset.filter(created_at__lt=after)
        return queryset

    def choices(self, changelist: ChangeList) -> Iterator[Mapping[str, object]]:
        keep = {
            key: value
            for key, value in changelist.params.items()
            if key not in (self.parameter_from, self.parameter_to) and key != "p"
        }
        yield {
            "from": self.raw.get(self.parameter_from, ""),
            "to": self.raw.get(self.parameter_to, ""),
            "parameter_from": self.parameter_from,
            "parameter_to": self.parameter_to,
            "hidden": sorted(keep.items()),
            "clear_url": changelist.get_query_string(remove=[self.parameter_from, self.parameter_to]),
            "active": bool(self.raw),
        }


# Read for a whole page of rows at once by SessionChangeList and kept on each row for the display methods.
USER_LABEL = "_user_label"
ACTIVE_MS = "_active_ms"


class SessionChangeList(ChangeList):
    """The list's page, with its users' labels and its sessions' active time read in one query each."""

    def get_results(self, request: HttpRequest) -> None:
        super().get_results(request)
        rows: list[AgentSessionSummary] = list(self.result_list)
        labels = admin_registry.user_labels({row.user_id for row in rows})
        active = active_time_ms(summaries=rows)
        for row in rows:
            setattr(row, USER_LABEL, labels.get(row.user_id))
            setattr(row, ACTIVE_MS, active.get(row.pk))


@admin.register(AgentSessionSummary)
class AgentSessionSummaryAdmin(admin.ModelAdmin[AgentSessionSummary]):
    list_display = (
        "session",
        "user",
        "created",
        "status_badge",
        "model",
        "iteration_count",
        "tokens",
        "cache_hit",
        "cost",
        "active_time",
        "duration",
        "error_count",
    )
    list_display_links = ("session",)
    list_filter = ("status", ModelFilter, CreatedRangeFilter, HasErrorsFilter)
    # A full UUID finds the session or the user's sessions (exact lookups); any other text searches the
    # sessions' user messages, tool calls and errors (`get_search_results`).
    search_fields = ("id__exact", "user_id__exact")
    search_help_text = (
        "A session id or a user id (full UUID), or words of a user message, a tool call or an error."
    )
    ordering = ("-created_at",)
    list_per_page = 50
    show_facets = admin.ShowFacets.NEVER
    change_list_template = "admin/sessions_app/session_changelist.html"

    @admin.display(description="session", ordering="id")
    def session(self, summary: AgentSessionSummary) -> str:
        return str(summary.id)[:8]

    def get_changelist(self, request: HttpRequest, **kwargs: Any) -> type[ChangeList]:
        return SessionChangeList

    def get_search_results(
        self, request: HttpRequest, queryset: QuerySet[AgentSessionSummary], search_term: str
    ) -> tuple[QuerySet[AgentSessionSummary], bool]:
        term = search_term.strip()
        if not term:
            return queryset, False
        try:
            UUID(term)
        except ValueError:
            return queryset.filter(pk__in=sessions_mentioning(text=term)), False
        return super().get_search_results(request, queryset, term)

    def changelist_view(
        self, request: HttpRequest, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        return super().changelist_view(
            request, {"active_time_help": ACTIVE_TIME_HELP, **(extra_context or {})}
        )

    @admin.display(description="user", ordering="user_id")
    def user(self, summary: AgentSessionSummary) -> str:
        label = getattr(summary, USER_LABEL, None)
        if label:
            return format_html('<span title="{}">{}</span>', summary.user_id, label)
        return format_html('<span title="{}">{}…</span>', summary.user_id, str(summary.user_id)[:8])

    @admin.display(description="created", ordering="created_at")
    def created(self, summary: AgentSessionSummary) -> str:
        return summary.created_at.astimezone(UTC).strftime("%Y-%m-%d %H:%M")

    @admin.display(description="status", ordering="status")
    def status_badge(self, summary: AgentSessionSummary) -> str:
        return format_html('<span class="obs-status obs-status-{}">{}</span>', summary.status, summary.status)

    @admin.display(description="iter.", ordering="iterations")
    def iteration_count(self, summary: AgentSessionSummary) -> int:
        return summary.iterations

    @admin.display(description="tokens", ordering="total_tokens")
    def tokens(self, summary: AgentSessionSummary) -> str:
        return f"{summary.total_tokens:,}"

    @admin.display(description="cache", ordering="cache_hit_rate")
    def cache_hit(self, summary: AgentSessionSummary) -> str:
        if not (summary.prompt_tokens + summary.cached_tokens + summary.cache_write_tokens):
            return "—"
        return format_cache_hit_rate(summary.cache_hit_rate)

    @admin.display(description="cost", ordering="cost_cents")
    def cost(self, summary: AgentSessionSummary) -> str:
        return format_cost(summary.cost_cents)

    @admin.display(description="active")
    def active_time(self, summary: AgentSessionSummary) -> str:
        active_ms = getattr(summary, ACTIVE_MS, None)
        if not summary.event_count or active_ms is None:
            return "—"
        return format_html('<span title="{}">{}</span>', ACTIVE_TIME_HELP, format_duration(active_ms))

    @admin.display(description="span", ordering="duration_ms")
    def duration(self, summary: AgentSessionSummary) -> str:
        return format_duration(summary.duration_ms) if summary.event_count else "—"

    @admin.display(description="errors", ordering="errors")
    def error_count(self, summary: AgentSessionSummary) -> str:
        if summary.errors:
            return format_html('<span class="obs-error-count">{}</span>', summary.errors)
        return "0"

    def get_urls(self) -> list[URLPattern]:
        info = f"{self.opts.app_label}_{self.opts.model_name}"
        wrap = self.admin_site.admin_view
        extra = [
            path("dashboard/", wrap(self.dashboard_view), name=f"{info}_dashboard"),
            path("dashboard.csv", wrap(self.dashboard_csv_view), name=f"{info}_dashboard_csv"),
            path("<uuid:session_id>/events.json", wrap(self.events_json_view), name=f"{info}_events_json"),
            path(
                "<uuid:session_id>/events/<int:sequence>/<slug:action>/",
                wrap(self.event_action_view),
                name=f"{info}_event_action",
            ),
        ]
        return extra + super().get_urls()

    def change_view(
        self,
        request: HttpRequest,
        object_id: str,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        """A session's page is its timeline; there is nothing to edit."""
        if not self.has_view_or_change_permission(request):
            raise PermissionDenied
        return admin_views.session_detail(request, model_admin=self, object_id=object_id)

    def dashboard_view(self, request: HttpRequest) -> HttpResponse:
        if not self.has_view_or_change_permission(request):
            raise PermissionDenied
        return admin_views.dashboard(request, model_admin=self)

    def dashboard_csv_view(self, request: HttpRequest) -> HttpResponse:
        if not self.has_view_or_change_permission(request):
            raise PermissionDenied
        return admin_views.dashboard_csv(request)

    def events_json_view(self, request: HttpRequest, session_id: UUID) -> HttpResponse:
        if not self.has_view_or_change_permission(request):
            raise PermissionDenied
        return admin_views.events_after(request, model_admin=self, session_id=session_id)

    def event_action_view(
        self, request: HttpRequest, session_id: UUID, sequence: int, action: str
    ) -> HttpResponse:
        if not self.has_view_or_change_permission(request):
            raise PermissionDenied
        return admin_views.event_action(
            request, model_admin=self, session_id=session_id, sequence=sequence, action=action
        )

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # sessions are created by the agent API

    def has_change_permission(self, request: HttpRequest, obj: AgentSessionSummary | None = None) -> bool:
        return False  # staff inspect sessions; only the agent writes them

    def delete_model(self, request: HttpRequest, obj: AgentSessionSummary) -> None:
        delete_session(session=AgentSession(pk=obj.pk))

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[AgentSessionSummary]) -> None:
        for session_id in queryset.values_list("pk", flat=True):
            delete_session(session=AgentSession(pk=session_id))
