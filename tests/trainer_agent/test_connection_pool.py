"""Pooled connections and row-level security (issue 27 item 8): a connection lent to one user's unit of work
carries nothing of it into the next borrower's.

Each test borrows from a pool of ONE connection (the process's pool, replaced for the test), so every borrower gets the
same PostgreSQL backend (asserted by its pid) and any setting left behind would show.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any, cast

import pytest
from django.db import connection, connections, transaction
from django.db.backends.postgresql.base import DatabaseWrapper as PostgresWrapper
from pytest_django import Settings

from sessions_app.models import AgentSession
from tests.trainer_agent.test_row_level_security import ALICE, APP_ROLE, BOB, two_users_data
from trainer_agent.connection_pool import (
    check_unless_just_given_back,
    give_back_connection,
    giving_back_after,
    pooled,
)
from trainer_agent.tenancy import acting_for

pytestmark = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="the pool and row-level security are PostgreSQL's"
)


@pytest.fixture
def pool_of_one(settings: Settings) -> Iterator[str]:
    """The process's pool replaced by one of a single connection; units of work act as trainer_app."""
    settings.DATABASE_ASSUME_ROLE = APP_ROLE
    wrapper = cast(PostgresWrapper, connections["default"])
    options = wrapper.settings_dict.setdefault("OPTIONS", {})
    saved = options.get("pool")
    wrapper.close()
    wrapper.close_pool()
    options["pool"] = {"min_size": 1, "max_size": 1, "timeout": 10}
    try:
        yield "default"
    finally:
        wrapper.close()
        wrapper.close_pool()
        if saved is None:
            options.pop("pool", None)
        else:
            options["pool"] = saved


def backend(alias: str) -> dict[str, Any]:
    """What the borrowed connection's backend says about whose work it does, and what it lets the work see."""
    with connections[alias].cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid(), current_setting('app.user_id', true), current_user")
        pid, user_id, role = cursor.fetchone()
    users = set(AgentSession.objects.using(alias).values_list("user_id", flat=True))
    return {"pid": pid, "user_id": user_id or "", "role": role, "sees": users}


@pytest.mark.django_db(transaction=True)
def test_a_pooled_connection_carries_no_tenant_into_the_next_unit_of_work(pool_of_one: str) -> None:
    """Alice's unit, then a statement outside any unit, then Bob's, on one backend: each sees only its own."""
    two_users_data()
    assert pooled(using=pool_of_one)
    with acting_for(ALICE, using=pool_of_one):
        alice = backend(pool_of_one)
    give_back_connection(using=pool_of_one)
    nobody = backend(pool_of_one)
    give_back_connection(using=pool_of_one)
    with acting_for(BOB, using=pool_of_one):
        bob = backend(pool_of_one)
    give_back_connection(using=pool_of_one)

    assert alice["pid"] == nobody["pid"] == bob["pid"]
    assert (alice["user_id"], alice["role"], alice["sees"]) == (str(ALICE), APP_ROLE, {ALICE})
    assert nobody["user_id"] == "" and nobody["role"] != APP_ROLE
    assert (bob["user_id"], bob["role"], bob["sees"]) == (str(BOB), APP_ROLE, {BOB})


@pytest.mark.django_db(transaction=True)
def test_a_connection_given_back_mid_turn_serves_another_user_and_returns_clean(pool_of_one: str) -> None:
    """Alice's turn gives the connection back around its model call; Bob's unit of work on another thread
    borrows that very backend meanwhile; each statement sees only its own user's rows, before and after."""
    two_users_data()
    seen: dict[str, dict[str, Any]] = {}

    def bobs_request() -> None:
        try:
            with acting_for(BOB, using=pool_of_one):
                seen["bob"] = backend(pool_of_one)
        finally:
            connections.close_all()

    with acting_for(ALICE, using=pool_of_one):
        seen["alice_before"] = backend(pool_of_one)
        give_back_connection(using=pool_of_one)  # what `tracing.model_call_span` does around a model call
        other = threading.Thread(target=bobs_request)
        other.start()
        other.join(timeout=30)
        seen["alice_after"] = backend(pool_of_one)
    give_back_connection(using=pool_of_one)

    assert seen["alice_before"]["pid"] == seen["bob"]["pid"] == seen["alice_after"]["pid"]
    assert seen["alice_before"]["sees"] == seen["alice_after"]["sees"] == {ALICE}
    assert seen["alice_after"]["user_id"] == str(ALICE)
    assert (seen["bob"]["user_id"], seen["bob"]["sees"]) == (str(BOB), {BOB})


@pytest.mark.django_db(transaction=True)
def test_a_unit_of_work_that_fails_in_its_transaction_leaves_no_tenant_behind(pool_of_one: str) -> None:
    """A failed `atomic` block of Alice's, then the connection given back: the next borrower has no user."""
    two_users_data()
    with (
        pytest.raises(RuntimeError),
        acting_for(ALICE, using=pool_of_one),
        transaction.atomic(using=pool_of_one),
    ):
        assert backend(pool_of_one)["sees"] == {ALICE}
        give_back_connection(using=pool_of_one)  # refused: the transaction owns its connection
        raise RuntimeError("a tool failed")
    give_back_connection(using=pool_of_one)
    after = backend(pool_of_one)
    assert after["user_id"] == "" and after["role"] != APP_ROLE


@pytest.mark.django_db(transaction=True)
def test_the_pool_rolls_back_a_connection_returned_inside_a_transaction(pool_of_one: str) -> None:
    """Defence in depth: a connection handed to the pool while a transaction with Alice's setting is open (no
    code path does it) is rolled back before it is lent again."""
    pool = cast(PostgresWrapper, connections[pool_of_one]).pool
    pool.open()
    raw = pool.getconn()
    raw.execute("BEGIN")
    raw.execute("SELECT set_config('app.user_id', %s, true)", [str(ALICE)])
    pool.putconn(raw)
    again = pool.getconn()
    try:
        row = again.execute("SELECT current_setting('app.user_id', true)").fetchone()
        assert row is not None and (row[0] or "") == ""
    finally:
        pool.putconn(again)


def test_a_model_callback_gives_the_connection_back_after_each_call(monkeypatch: pytest.MonkeyPatch) -> None:
    """A preview publication during a model call borrows the connection and returns it at once."""
    given_back: list[str] = []
    monkeypatch.setattr(
        "trainer_agent.connection_pool.give_back_connection", lambda **kw: given_back.append("back")
    )
    publish = giving_back_after(lambda value: value * 2)
    assert publish(21) == 42
    assert given_back == ["back"]


def terminate_backend(pid: int) -> None:
    """End one server backend from a connection of its own (what a database restart does to it)."""
    import psycopg

    with psycopg.connect(connection_url(), autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", [pid])


def connection_url() -> str:
    params = connections["default"].get_connection_params()
    return (
        f"host={params.get('host') or 'localhost'} port={params.get('port') or 5432} "
        f"dbname={params['dbname']} user={params.get('user') or 'postgres'}"
    )


@pytest.fixture
def checked_pool_of_one(pool_of_one: str) -> str:
    """`pool_of_one` with the service's check of a connection before it is lent (config/settings.py)."""
    options = connections[pool_of_one].settings_dict["OPTIONS"]
    options["pool"] = {**options["pool"], "check": check_unless_just_given_back}
    return pool_of_one


@pytest.mark.django_db(transaction=True)
def test_a_connection_the_server_dropped_in_the_pool_is_replaced_before_it_is_lent(
    checked_pool_of_one: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Given back a while ago, then ended by the server: the next borrower gets a new backend that answers."""
    monkeypatch.setattr("trainer_agent.connection_pool.JUST_GIVEN_BACK_SECONDS", 0.0)
    first = backend(checked_pool_of_one)["pid"]
    give_back_connection(using=checked_pool_of_one, lend_unchecked=True)
    terminate_backend(first)
    after = backend(checked_pool_of_one)
    assert after["pid"] != first


@pytest.mark.django_db(transaction=True)
def test_a_connection_given_back_a_moment_ago_is_lent_unchecked_and_a_drop_fails_once(
    checked_pool_of_one: str,
) -> None:
    """The trade of the unchecked lend: a backend the server ended in that moment fails its first statement
    with Django's error (which the worker and the stream treat as a lost connection); the next one reconnects."""
    from django.db import OperationalError

    first = backend(checked_pool_of_one)["pid"]
    give_back_connection(using=checked_pool_of_one, lend_unchecked=True)  # around a worker's model call
    assert backend(checked_pool_of_one)["pid"] == first  # lent again, the same backend
    give_back_connection(using=checked_pool_of_one, lend_unchecked=True)
    terminate_backend(first)
    with pytest.raises(OperationalError):
        backend(checked_pool_of_one)
    connections[checked_pool_of_one].close()
    assert backend(checked_pool_of_one)["pid"] != first


@pytest.mark.django_db(transaction=True)
def test_a_connection_a_request_gave_back_is_always_checked(checked_pool_of_one: str) -> None:
    """Given back by anything but a worker's model call (a web request, a stream's read): a backend the server
    ended is replaced before the next borrower sees it, however soon."""
    first = backend(checked_pool_of_one)["pid"]
    give_back_connection(using=checked_pool_of_one)
    terminate_backend(first)
    assert backend(checked_pool_of_one)["pid"] != first
