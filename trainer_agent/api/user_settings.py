"""GET / PUT /user-settings: the caller's unit preferences and time zone (docs/contracts.md §4.5 (user data API) supporting endpoints)."""

from __future__ import annotations

import functools
import zoneinfo
from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from datasources_app.models import DistanceUnit, UserSettings, WeightUnit
from datasources_app.selectors import get_settings
from datasources_app.services import upsert_settings
from trainer_agent.api.base import AgentApi, caller_id, read_json_object
from trainer_agent.api.schema import AUTH_ERRORS, BODY_ERRORS

TIMEZONE_MAX_LENGTH = 64


@functools.cache
def known_timezones() -> frozenset[str]:
    return frozenset(zoneinfo.available_timezones())


class UserSettingsSerializer(serializers.ModelSerializer[UserSettings]):
    class Meta:
        model = UserSettings
        ref_name = "UserSettings"
        fields = ("weight_unit", "distance_unit", "timezone")
        read_only_fields = fields


class UserSettingsRetrieveUpdateApi(AgentApi):
    """The caller's unit preferences (kg/lb, km/mi) and time zone."""

    class InputSerializer(serializers.Serializer[Any]):
        weight_unit = serializers.ChoiceField(choices=WeightUnit.choices, required=False)
        distance_unit = serializers.ChoiceField(choices=DistanceUnit.choices, required=False)
        timezone = serializers.CharField(
            max_length=TIMEZONE_MAX_LENGTH,
            required=False,
            help_text="An IANA time zone name, e.g. `Europe/Berlin`.",
        )

        class Meta:
            ref_name = "UserSettingsUpdate"

        def validate_timezone(self, value: str) -> str:
            if value not in known_timezones():
                raise serializers.ValidationError(f"unknown time zone {value[:TIMEZONE_MAX_LENGTH]!r}.")
            return value

        def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
            unknown = sorted(str(key) for key in self.initial_data if key not in self.fields)
            if unknown:
                raise serializers.ValidationError(f"unknown field(s): {', '.join(unknown)[:200]}.")
            if not attrs:
                raise serializers.ValidationError(f"send at least one of: {', '.join(self.fields)}.")
            return attrs

    @extend_schema(
        operation_id="user_settings_retrieve",
        summary="Your unit preferences and time zone",
        description="Defaults (kg, km, UTC) until you save settings.",
        responses={200: UserSettingsSerializer, **AUTH_ERRORS},
        tags=["user"],
    )
    def get(self, request: Request) -> Response:
        return Response(UserSettingsSerializer(get_settings(user_id=caller_id(request))).data)

    @extend_schema(
        operation_id="user_settings_update",
        summary="Change your unit preferences and/or time zone",
        description="Send any of the fields; the others keep their values.",
        request=InputSerializer,
        responses={200: UserSettingsSerializer, **BODY_ERRORS},
        tags=["user"],
    )
    def put(self, request: Request) -> Response:
        serializer = self.InputSerializer(data=read_json_object(request, required=True))
        serializer.is_valid(raise_exception=True)
        saved = upsert_settings(user_id=caller_id(request), **serializer.validated_data)
        return Response(UserSettingsSerializer(saved).data)
