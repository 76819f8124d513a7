import uuid

import pytest
from django.test import Client

from trainer_agent.auth import mint_token


@pytest.mark.django_db
def test_whoami_route_authenticates_a_minted_token(client: Client, settings) -> None:
    """GET /agent/whoami answers with the token's user when routed through the real URLconf."""
    settings.SUPABASE_JWT_SECRET = "s" * 40
    user_id = uuid.uuid4()
    token = mint_token(user_id=user_id, email="a@example.com")
    response = client.get("/agent/whoami", HTTP_AUTHORIZATION=f"Bearer {token}")
    assert response.status_code == 200
    assert response.json()["user_id"] == str(user_id)


@pytest.mark.django_db
def test_whoami_route_without_token_is_401(client: Client) -> None:
    """The routed endpoint refuses a request with no Authorization header."""
    response = client.get("/agent/whoami")
    assert response.status_code == 401
    assert response.json() == {"error": "Access token required"}
