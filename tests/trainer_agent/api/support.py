"""Helpers for the JSON API tests: signed-in users with a JSON client, a scripted model, and row counting."""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from typing import Any

from django.apps import apps
from django.test import Client

from trainer_agent.auth import mint_token
from trainer_agent.llm.scripted import ScriptedProvider, tool_response

JWT_SECRET = "api-test-shared-secret-0123456789-abcdefghijklmnopqrstuvwxyz"
# Apps whose tables a rejected request must leave untouched.
DATA_APPS = ("sessions_app", "datasources_app")


@dataclass
class ApiUser:
    """A signed-in user and a Django test client that sends their token."""

    user_id: uuid.UUID
    token: str
    client: Client

    @property
    def auth(self) -> dict[str, str]:
        return {"HTTP_AUTHORIZATION": f"Bearer {self.token}"}

    def get(self, path: str, **extra: Any) -> Any:
        return self.client.get(path, **{**self.auth, **extra})

    def delete(self, path: str, **extra: Any) -> Any:
        return self.client.delete(path, **{**self.auth, **extra})

    def post_json(self, path: str, body: Any, **extra: Any) -> Any:
        return self.send("POST", path, json.dumps(body), **extra)

    def put_json(self, path: str, body: Any, **extra: Any) -> Any:
        return self.send("PUT", path, json.dumps(body), **extra)

    def send(
        self, method: str, path: str, raw: bytes | str, content_type: str = "application/json", **extra: Any
    ) -> Any:
        """Send `raw` as the body, byte for byte (an empty content_type sends no Content-Type header)."""
        headers = {**self.auth, **extra}
        return self.client.generic(method, path, data=raw, content_type=content_type, **headers)


def make_user() -> ApiUser:
    user_id = uuid.uuid4()
    return ApiUser(user_id=user_id, token=mint_token(user_id=user_id, secret=JWT_SECRET), client=Client())


def notify_then_idle(message: str = "Here you go") -> ScriptedProvider:
    """A model that says one thing, then stops (two LLM calls per turn), for as many turns as needed."""
    return ScriptedProvider(
        [
            tool_response("message_notify_user", {"message": message}),
            tool_response("idle", {"reason": "done"}),
        ],
        cycle=True,
    )


def row_counts() -> dict[str, int]:
    """Rows per table of the apps that hold user data and sessions."""
    return {
        model._meta.db_table: model._default_manager.count()
        for app in DATA_APPS
        for model in apps.get_app_config(app).get_models()
    }
