"""manage.py demo_token: print an access token (and ready curl lines) for the demo user."""

from __future__ import annotations

import uuid
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from datasources_app.demo import DEMO_USER_EMAIL, DEMO_USER_ID
from trainer_agent.auth import SigningSecretUnavailable, mint_token


class Command(BaseCommand):
    help = (
        "Print an HS256 access token for the demo user (or --user). Signs with SUPABASE_JWT_SECRET, "
        "or with the built-in development secret while DEBUG is on and no secret is set."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--user", type=uuid.UUID, default=DEMO_USER_ID, help="user id (UUID) to sign for")
        parser.add_argument("--hours", type=float, default=24.0, help="lifetime in hours (default 24)")
        parser.add_argument("--curl", action="store_true", help="also print curl lines that use the token")
        parser.add_argument("--port", type=int, default=None, help="port for the curl lines (default PORT)")

    def handle(self, *args: Any, **options: Any) -> None:
        user_id: uuid.UUID = options["user"]
        hours: float = options["hours"]
        if hours <= 0:
            raise CommandError("--hours must be greater than 0.")
        email = DEMO_USER_EMAIL if user_id == DEMO_USER_ID else None
        try:
            token = mint_token(user_id=user_id, email=email, hours=hours)
        except SigningSecretUnavailable as exc:
            raise CommandError(
                "Cannot sign a token: SUPABASE_JWT_SECRET is not set and DEBUG is off. "
                "Set SUPABASE_JWT_SECRET to your project's JWT secret, or run with DEBUG=1 for local use."
            ) from exc
        # The token alone on the first line, so `TOKEN=$(manage.py demo_token)` works.
        self.stdout.write(token)
        if options["curl"]:
            port = options["port"] or getattr(settings, "PORT", 8000)
            base = f"http://127.0.0.1:{port}"
            auth = f'-H "Authorization: Bearer {token}"'
            self.stdout.write("")
            self.stdout.write(f"curl -s {auth} {base}/agent/whoami")
            self.stdout.write(
                f'curl -s {auth} -H "Content-Type: application/json" '
                f'-d \'{{"message":"Give me a quick chest workout"}}\' {base}/agent/chat'
            )
