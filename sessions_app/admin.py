"""Staff view of sessions and their events: read-only; deleting goes through delete_session."""

from __future__ import annotations

import json

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from sessions_app.models import AgentSession, AgentSessionEvent
from sessions_app.services import delete_session

DATA_PREVIEW_CHARS = 160


class AgentSessionEventInline(admin.TabularInline):
    model = AgentSessionEvent
    fields = ("sequence_number", "event_type", "timestamp", "duration_ms", "data_preview")
    readonly_fields = fields
    ordering = ("sequence_number",)
    extra = 0
    can_delete = False
    show_change_link = False

    @admin.display(description="data")
    def data_preview(self, event: AgentSessionEvent) -> str:
        text = json.dumps(event.data, ensure_ascii=False, separators=(",", ":"))
        return text if len(text) <= DATA_PREVIEW_CHARS else f"{text[: DATA_PREVIEW_CHARS - 1]}…"

    def has_add_permission(self, request: HttpRequest, obj: AgentSession | None = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: AgentSession | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: AgentSession | None = None) -> bool:
        return False


@admin.register(AgentSession)
class AgentSessionAdmin(admin.ModelAdmin):
    list_display = (
        "id",
        "user_id",
        "status",
        "created_at",
        "total_tokens",
        "cached_tokens",
        "total_cost_cents",
    )
    list_filter = ("status", "created_at")
    # Exact lookups: terms that are not UUIDs are skipped instead of scanning the table.
    search_fields = ("id__exact", "user_id__exact")
    ordering = ("-created_at",)
    inlines = (AgentSessionEventInline,)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # sessions are created by the agent API

    def has_change_permission(self, request: HttpRequest, obj: AgentSession | None = None) -> bool:
        return False  # staff inspect sessions; only the agent writes them

    def delete_model(self, request: HttpRequest, obj: AgentSession) -> None:
        delete_session(session=obj)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[AgentSession]) -> None:
        for session in queryset:
            delete_session(session=session)
