"""Output shapes shared by several endpoints: sessions and events (docs/contracts.md §6 (sessions and events) field names), error bodies."""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from sessions_app.models import AgentSession, AgentSessionEvent

# Bookkeeping once kept in session metadata that clients have no use for (older sessions may still carry it).
INTERNAL_METADATA_KEYS = frozenset({"turn_running_since", "usage_counted_through"})


def public_metadata(metadata: Any) -> dict[str, Any]:
    if not isinstance(metadata, dict):
        return {}
    return {key: value for key, value in metadata.items() if key not in INTERNAL_METADATA_KEYS}


class SessionSerializer(serializers.ModelSerializer[AgentSession]):
    metadata = serializers.SerializerMethodField()

    class Meta:
        model = AgentSession
        ref_name = "AgentSession"
        fields = (
            "id",
            "user_id",
            "created_at",
            "updated_at",
            "context_start_sequence",
            "total_tokens",
            "cached_tokens",
            "total_cost_cents",
            "status",
            "metadata",
        )
        read_only_fields = fields

    @extend_schema_field(OpenApiTypes.OBJECT)
    def get_metadata(self, session: AgentSession) -> dict[str, Any]:
        """Free-form session data, e.g. `usage` (token buckets, llm_calls, cache_hit_rate) after a turn."""
        return public_metadata(session.metadata)


class EventSerializer(serializers.ModelSerializer[AgentSessionEvent]):
    session_id = serializers.UUIDField(read_only=True)

    class Meta:
        model = AgentSessionEvent
        ref_name = "AgentSessionEvent"
        fields = ("id", "session_id", "sequence_number", "event_type", "timestamp", "duration_ms", "data")
        read_only_fields = fields


class ErrorSerializer(serializers.Serializer[Any]):
    detail = serializers.CharField(help_text="What was wrong, in one sentence a person can act on.")

    class Meta:
        ref_name = "Error"


class UnauthorizedSerializer(serializers.Serializer[Any]):
    error = serializers.ChoiceField(choices=["Access token required", "Invalid token"])

    class Meta:
        ref_name = "Unauthorized"
