"""schemathesis against the live OpenAPI schema: generated valid and invalid requests, no 5xx, every response conforms.

The schema is fetched from `/api/schema/` through the WSGI app in-process, and every generated request goes
through the full Django stack with a valid token. Models are scripted (no network). The SSE endpoints are
left to the live daphne tests, since a streaming response cannot be validated as one JSON document.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from tests.trainer_agent.api.support import ApiUser, make_user, notify_then_idle
from trainer_agent.llm.models import model_ids
from trainer_agent.llm.providers import override_provider

EXAMPLES_PER_OPERATION = 20

schema = schemathesis.openapi.from_wsgi("/api/schema/?format=json", get_wsgi_application()).exclude(
    path_regex=r"^/agent/stream$|/events$"
)
schema.config.generation.update(max_examples=EXAMPLES_PER_OPERATION, deterministic=True, database="none")


@pytest.fixture
def every_model_scripted() -> Iterator[None]:
    """Whatever model a generated request names, it answers notify → idle."""
    with ExitStack() as stack:
        for model_id in model_ids():
            stack.enter_context(override_provider(model_id, notify_then_idle()))
        yield


@pytest.fixture
def keep_db_connection() -> Iterator[None]:
    """Keep the real WSGI handler from closing the test's database connection after each request.

    Django's own test client does the same; without it PostgreSQL would lose the test transaction.
    """
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


@pytest.fixture
def caller() -> ApiUser:
    return make_user()


@schema.parametrize()
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@pytest.mark.django_db
def test_api_conforms_to_its_schema(
    case: schemathesis.Case, caller: ApiUser, every_model_scripted: None, keep_db_connection: None
) -> None:
    """Generated requests never cause a 5xx, and each response's status, content type and body are documented."""
    case.call_and_validate(
        headers={"Authorization": f"Bearer {caller.token}"},
        checks=[
            not_a_server_error,
            status_code_conformance,
            content_type_conformance,
            response_schema_conformance,
        ],
    )
