"""GET /agent/whoami: who the access token says the caller is (for checking a token by curl, and tests)."""

from __future__ import annotations

from typing import cast

from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from trainer_agent.auth import AuthenticatedUser, IsAuthenticatedUser, SupabaseJWTAuthentication


class WhoAmIApi(APIView):
    authentication_classes = [SupabaseJWTAuthentication]
    permission_classes = [IsAuthenticatedUser]

    class OutputSerializer(serializers.Serializer):
        user_id = serializers.UUIDField()
        email = serializers.CharField(allow_null=True)
        role = serializers.CharField(allow_null=True)

    def get(self, request: Request) -> Response:
        user = cast(AuthenticatedUser, request.user)
        data = self.OutputSerializer({"user_id": user.user_id, "email": user.email, "role": user.role}).data
        return Response(data)
