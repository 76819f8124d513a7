import threading
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from django.db import connection
from django.test import Client
from django.utils import timezone

from config import health
from sessions_app.models import WorkerHeartbeat
from trainer_agent.streaming import database


@pytest.fixture(autouse=True)
def fresh_reading(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts without the process's last reading (a few seconds old at most, and from another test)."""
    monkeypatch.setattr(health, "_last", None)


@pytest.mark.django_db
def test_healthz_reports_database_round_trip(client: Client) -> None:
    """/healthz answers 200 with the database vendor after a real query."""
    response = client.get("/healthz")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok"
    assert body["database"] in {"sqlite", "postgresql"}


@pytest.mark.django_db(transaction=True)
def test_healthz_answers_while_every_database_thread_is_busy(client: Client, settings: Any) -> None:
    """Under a burst every database thread of the web process is busy: /healthz still answers at once, from
    the event loop, since those threads answered recently (it does not queue behind the burst's work)."""
    settings.TASKS_BACKEND = "database"  # requests use the web process's database threads, as under daphne
    WorkerHeartbeat.objects.create(name="w", threads=1, started_at=timezone.now(), seen_at=timezone.now())
    assert client.get("/healthz").json() == {
        "status": "ok",
        "database": connection.vendor,
        "workers": {"alive": 1, "oldestQueuedSeconds": None},
    }  # a round trip

    release = threading.Event()
    started = threading.Semaphore(0)

    def occupy() -> None:
        started.release()
        release.wait(30)

    threads = settings.WEB_DB_THREADS
    busy = [threading.Thread(target=async_to_sync(database(occupy))) for _ in range(threads)]
    for thread in busy:
        thread.start()
    for _ in range(threads):
        assert started.acquire(timeout=30)
    try:
        response = client.get("/healthz")
        answered_while_busy = not release.is_set()
    finally:
        release.set()
        for thread in busy:
            thread.join()
    assert response.status_code == 200 and response.json()["status"] == "ok"
    assert answered_while_busy


@pytest.mark.django_db
def test_healthz_refuses_post(client: Client) -> None:
    """/healthz is read-only."""
    assert client.post("/healthz").status_code == 405


@pytest.mark.django_db
def test_admin_shows_login_page(client: Client) -> None:
    """Staff reach the Django admin login at /admin/."""
    response = client.get("/admin/", follow=True)
    assert response.status_code == 200
    assert b"id_username" in response.content


def test_settings_refuse_default_secret_with_debug_off() -> None:
    """The service refuses to start with DEBUG off and the built-in development SECRET_KEY."""
    import os
    import subprocess
    import sys

    from config.settings import DEV_SECRET_KEY

    env = {k: v for k, v in os.environ.items() if k not in {"PYTEST_VERSION", "SECRET_KEY", "DEBUG"}}
    # Set, not only removed: the environment wins over a checkout's .env (which `make run` fills with a real key).
    env["DEBUG"] = "0"
    env["SECRET_KEY"] = DEV_SECRET_KEY
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            "import django, os; os.environ['DJANGO_SETTINGS_MODULE']='config.settings'; django.setup()",
        ],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode != 0
    assert "SECRET_KEY" in proc.stderr
    env["SECRET_KEY"] = "x" * 50
    ok = subprocess.run(
        [
            sys.executable,
            "-c",
            "import django, os; os.environ['DJANGO_SETTINGS_MODULE']='config.settings'; django.setup()",
        ],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert ok.returncode == 0, ok.stderr


def test_the_site_favicon_leads_to_the_demo_icon(client: Client) -> None:
    """/favicon.ico (asked for by browsers on the admin and the API docs) redirects to the served icon."""
    response = client.get("/favicon.ico")
    assert response.status_code == 302
    assert response["Location"].endswith("favicon.svg")
    assert client.get(response["Location"]).status_code == 200
