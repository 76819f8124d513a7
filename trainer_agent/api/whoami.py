"""GET /agent/whoami: who the access token says the caller is (for checking a token by curl, and tests)."""

from __future__ import annotations

from typing import Any, cast

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from trainer_agent.api.base import AgentApi
from trainer_agent.api.schema import AUTH_ERRORS
from trainer_agent.auth import AuthenticatedUser


class WhoAmIApi(AgentApi):
    """The identity in the caller's access token."""

    class OutputSerializer(serializers.Serializer[Any]):
        user_id = serializers.UUIDField()
        email = serializers.CharField(allow_null=True)
        role = serializers.CharField(allow_null=True)

        class Meta:
            ref_name = "WhoAmI"

    @extend_schema(
        operation_id="agent_whoami",
        summary="Who your access token says you are",
        responses={200: OutputSerializer, **AUTH_ERRORS},
        tags=["agent"],
    )
    def get(self, request: Request) -> Response:
        user = cast(AuthenticatedUser, request.user)
        data = self.OutputSerializer({"user_id": user.user_id, "email": user.email, "role": user.role}).data
        return Response(data)
