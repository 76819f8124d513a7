"""A lost database connection is told from a failed statement, and answered with JSON 503, never HTML 500.

The end-to-end proof (real processes, every backend terminated mid-turn) is
tests/trainer_agent/streaming/test_database_loss.py; these are the pieces it relies on.
"""

from __future__ import annotations

import json
import uuid

import psycopg
import pytest
from django.db import IntegrityError, OperationalError, connection, transaction
from django.http import HttpResponse
from django.test import RequestFactory

from sessions_app.models import AgentSession
from trainer_agent.connection_loss import connection_lost, database_unavailable
from trainer_agent.connection_pool import conninfo
from trainer_agent.middleware import DatabaseUnavailableMiddleware
from trainer_agent.tenancy import acting_for


def _raised_from(cause: BaseException, error: Exception) -> Exception:
    try:
        raise error from cause
    except Exception as exc:
        return exc


def test_an_operational_error_anywhere_in_the_chain_means_the_database_did_not_answer() -> None:
    shutdown = psycopg.errors.AdminShutdown("terminating connection due to administrator command")
    assert database_unavailable(shutdown)
    assert database_unavailable(_raised_from(shutdown, OperationalError(str(shutdown))))
    assert database_unavailable(_raised_from(shutdown, transaction.TransactionManagementError("broken")))
    assert not database_unavailable(IntegrityError("duplicate key"))
    assert not database_unavailable(ValueError("not a database error"))


@pytest.mark.django_db(transaction=True)
def test_a_failed_statement_on_a_healthy_connection_is_not_a_lost_connection() -> None:
    assert connection_lost(OperationalError("server closed the connection unexpectedly"))
    assert not connection_lost(IntegrityError("duplicate key"))
    assert not connection_lost(ValueError("not a database error"))
    with transaction.atomic():
        # The outer block's transaction went with the connection: only its owner may start again.
        assert not connection_lost(OperationalError("server closed the connection unexpectedly"))


def test_a_view_whose_database_does_not_answer_gets_a_json_503() -> None:
    middleware = DatabaseUnavailableMiddleware(lambda request: HttpResponse())
    request = RequestFactory().get("/agent/sessions")
    response = middleware.process_exception(request, OperationalError("terminating connection"))
    assert response is not None
    assert (response.status_code, response["Content-Type"], response["Retry-After"]) == (
        503,
        "application/json",
        "2",
    )
    assert json.loads(response.content) == {"detail": "The service is busy; try again shortly."}
    assert middleware.process_exception(request, ValueError("a bug")) is None, "a bug stays a 500"


@pytest.mark.skipif(
    connection.vendor != "postgresql", reason="row-level security's set_config is PostgreSQL's"
)
@pytest.mark.django_db(transaction=True)
def test_a_unit_of_work_whose_connection_was_terminated_raises_django_s_error_and_the_next_one_reconnects() -> (
    None
):
    """`tenancy`'s own statement (set_config, before every transaction of a unit of work) fails like an ORM
    statement: django.db.OperationalError, which the reconnect paths catch, not psycopg's AdminShutdown."""
    user_id = uuid.uuid4()
    with acting_for(user_id):
        assert not AgentSession.objects.filter(user_id=user_id).exists()
        pid = connection.connection.info.backend_pid
        with psycopg.connect(conninfo(), autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", [pid])
        with pytest.raises(OperationalError) as raised:
            AgentSession.objects.filter(user_id=user_id).exists()
        assert connection_lost(raised.value)
    connection.close()
    with acting_for(user_id):
        assert not AgentSession.objects.filter(user_id=user_id).exists()
