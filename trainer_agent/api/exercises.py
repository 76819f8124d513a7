"""The caller's workout history and training distribution (docs/contracts.md §4.5 (user data API) supporting endpoints).

Only the token's user is ever read. Seed 001's `/exercises/.../<userId>` forms are served too, for clients
written against it: a user id other than the caller's is 404, exactly like an unknown one.
"""

from __future__ import annotations

import uuid
from typing import Any

from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import serializers
from rest_framework.exceptions import NotFound
from rest_framework.request import Request
from rest_framework.response import Response

from datasources_app.distribution import (
    DEFAULT_WINDOW_DAYS,
    category_distribution,
    muscle_distribution,
    training_window,
)
from datasources_app.models import WorkoutLog, WorkoutLogEntry
from datasources_app.selectors import workout_history
from trainer_agent.api.base import AgentApi, caller_id, validated_query
from trainer_agent.api.schema import NOT_FOUND, QUERY_ERRORS

MAX_HISTORY_DAYS = 3650
MAX_DISTRIBUTION_DAYS = 365
USER_NOT_FOUND = "User not found."
USER_ID = OpenApiParameter(
    "user_id", str, OpenApiParameter.PATH, description="Must be your own user id (anything else is 404)."
)


def own_user_id(request: Request, user_id: str | None) -> uuid.UUID:
    """The caller's id; a user id in the path must be that same id, else 404 (no probing of other users)."""
    caller = caller_id(request)
    if user_id is not None:
        try:
            claimed = uuid.UUID(user_id)
        except ValueError:
            raise NotFound(USER_NOT_FOUND) from None
        if claimed != caller:
            raise NotFound(USER_NOT_FOUND)
    return caller


class WorkoutLogEntrySerializer(serializers.ModelSerializer[WorkoutLogEntry]):
    class Meta:
        model = WorkoutLogEntry
        ref_name = "WorkoutLogEntry"
        exclude = ("log",)


class WorkoutLogSerializer(serializers.ModelSerializer[WorkoutLog]):
    entries = WorkoutLogEntrySerializer(many=True, read_only=True)

    class Meta:
        model = WorkoutLog
        ref_name = "WorkoutLog"
        fields = (
            "id",
            "title",
            "notes",
            "session_id",
            "artifact_id",
            "started_at",
            "completed_at",
            "entries",
        )


class WorkoutHistoryListApi(AgentApi):
    """The caller's logged workouts with their entries, newest first."""

    class FilterSerializer(serializers.Serializer[Any]):
        limit = serializers.IntegerField(min_value=1, max_value=100, default=10, required=False)
        days_back = serializers.IntegerField(min_value=1, max_value=MAX_HISTORY_DAYS, required=False)

        class Meta:
            ref_name = "WorkoutHistoryFilter"

    class OutputSerializer(serializers.Serializer[Any]):
        workouts = WorkoutLogSerializer(many=True)

        class Meta:
            ref_name = "WorkoutHistory"

    @extend_schema(
        operation_id="exercises_history",
        summary="Your logged workouts, newest first",
        parameters=[
            OpenApiParameter(
                "limit",
                {"type": "integer", "minimum": 1, "maximum": 100, "default": 10},
                description="How many workouts (1-100, default 10).",
            ),
            OpenApiParameter(
                "days_back",
                {"type": "integer", "minimum": 1, "maximum": MAX_HISTORY_DAYS},
                description="Only workouts completed in the last N days.",
            ),
        ],
        responses={200: OutputSerializer, **QUERY_ERRORS, 404: NOT_FOUND},
        tags=["user"],
    )
    def get(self, request: Request, user_id: str | None = None) -> Response:
        owner = own_user_id(request, user_id)
        query = validated_query(request, self.FilterSerializer)
        logs = workout_history(user_id=owner, limit=query["limit"], days_back=query.get("days_back"))
        return Response(self.OutputSerializer({"workouts": logs}).data)


class ShareRowSerializer(serializers.Serializer[Any]):
    name = serializers.CharField()
    target = serializers.FloatField(help_text="Goal weight (0-1).")
    actual = serializers.FloatField(help_text="Share of the window's volume (0-1).")
    volume = serializers.FloatField(help_text="Volume proxy: sets, minutes / 5, or rounds.")
    debt = serializers.FloatField(help_text="target - actual: positive means under-trained.")

    class Meta:
        ref_name = "ShareRow"


class DistributionSerializer(serializers.Serializer[Any]):
    entry_count = serializers.IntegerField()
    total_volume = serializers.FloatField()
    rows = ShareRowSerializer(many=True, help_text="Most under-trained first.")

    class Meta:
        ref_name = "Distribution"


class DistributionRetrieveApi(AgentApi):
    """The caller's recent training volume per muscle and goal category, against their goals."""

    class FilterSerializer(serializers.Serializer[Any]):
        days = serializers.IntegerField(
            min_value=1, max_value=MAX_DISTRIBUTION_DAYS, default=DEFAULT_WINDOW_DAYS, required=False
        )

        class Meta:
            ref_name = "DistributionFilter"

    class OutputSerializer(serializers.Serializer[Any]):
        window_days = serializers.IntegerField()
        muscles = DistributionSerializer()
        categories = DistributionSerializer()

        class Meta:
            ref_name = "ExerciseDistribution"

    @extend_schema(
        operation_id="exercises_distribution",
        summary="How your recent training is spread over muscles and goal categories",
        parameters=[
            OpenApiParameter(
                "days",
                {"type": "integer", "minimum": 1, "maximum": MAX_DISTRIBUTION_DAYS, "default": 14},
                description=f"Window in days (1-{MAX_DISTRIBUTION_DAYS}, default {DEFAULT_WINDOW_DAYS}).",
            )
        ],
        responses={200: OutputSerializer, **QUERY_ERRORS, 404: NOT_FOUND},
        tags=["user"],
    )
    def get(self, request: Request, user_id: str | None = None) -> Response:
        owner = own_user_id(request, user_id)
        days: int = validated_query(request, self.FilterSerializer)["days"]
        window = training_window(user_id=owner, days=days)
        data = {
            "window_days": days,
            "muscles": muscle_distribution(user_id=owner, window=window),
            "categories": category_distribution(user_id=owner, window=window),
        }
        return Response(self.OutputSerializer(data).data)


@extend_schema_view(
    get=extend_schema(
        operation_id="exercises_history_for_user",
        summary="Your logged workouts (seed 001 path form)",
        description="Same as `GET /exercises/history`; the path's user id must be your own.",
        parameters=[USER_ID],
    )
)
class WorkoutHistoryForUserListApi(WorkoutHistoryListApi):
    """`/exercises/history/<userId>`: the same, for the caller's own id only."""


@extend_schema_view(
    get=extend_schema(
        operation_id="exercises_distribution_for_user",
        summary="Your training distribution (seed 001 path form)",
        description="Same as `GET /exercises/distribution`; the path's user id must be your own.",
        parameters=[USER_ID],
    )
)
class DistributionForUserRetrieveApi(DistributionRetrieveApi):
    """`/exercises/distribution/<userId>`: the same, for the caller's own id only."""
