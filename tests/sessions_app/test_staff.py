"""Which requests are staff work (sessions_app/staff.py): the admin's, and nothing the mobile client calls."""

from __future__ import annotations

import asyncio

import pytest
from asgiref.sync import sync_to_async
from django.http import HttpRequest, HttpResponse
from django.test import RequestFactory
from django.urls import clear_script_prefix, set_script_prefix

from sessions_app.models import AgentSession
from sessions_app.staff import StaffRouter, StaffWorkMiddleware, in_staff_work, staff_work

PATHS = [
    ("/admin/", True),
    ("/admin/sessions_app/agentsessionsummary/", True),
    ("/admin/login/", True),
    ("/agent/chat", False),
    ("/agent/stream", False),
    ("/agent/sessions/3f1c7a52-0000-4000-8000-000000000000/events", False),
    ("/demo/", False),
    ("/administrator/", False),
]


@pytest.mark.parametrize(("path", "staff"), PATHS)
def test_sync_requests_under_the_admin_are_staff_work(path: str, staff: bool) -> None:
    seen: list[bool] = []

    def view(request: HttpRequest) -> HttpResponse:
        seen.append(in_staff_work())
        return HttpResponse()

    StaffWorkMiddleware(view)(RequestFactory().get(path))
    assert seen == [staff]
    assert not in_staff_work()


@pytest.mark.parametrize(("path", "staff"), PATHS)
def test_async_requests_under_the_admin_are_staff_work_in_their_sync_views(path: str, staff: bool) -> None:
    """Under daphne the middleware runs async and the admin's sync view in a thread (asgiref)."""
    seen: list[bool] = []

    def view(request: HttpRequest) -> HttpResponse:
        seen.append(in_staff_work())
        return HttpResponse()

    middleware = StaffWorkMiddleware(sync_to_async(view))

    async def admin_then_this() -> None:
        await middleware(RequestFactory().get("/admin/"))
        await middleware(RequestFactory().get(path))  # the same task: nothing left over from the admin's

    asyncio.run(admin_then_this())
    assert seen == [True, staff]


def test_a_service_mounted_under_a_path_finds_its_admin() -> None:
    """With a script prefix (daphne --root-path, FORCE_SCRIPT_NAME) the admin is /app/admin/."""
    seen: list[bool] = []

    def view(request: HttpRequest) -> HttpResponse:
        seen.append(in_staff_work())
        return HttpResponse()

    set_script_prefix("/app/")
    try:
        for path in ("/admin/sessions_app/agentsessionsummary/", "/agent/chat"):
            StaffWorkMiddleware(view)(RequestFactory(SCRIPT_NAME="/app").get(path))
    finally:
        clear_script_prefix()
    assert seen == [True, False]


def test_the_router_sends_staff_apps_and_staff_work_to_the_staff_alias(settings: object) -> None:
    from django.contrib.auth.models import User
    from django.contrib.sessions.models import Session

    settings.STAFF_DATABASE = "staff"  # type: ignore[attr-defined]
    router = StaffRouter()
    assert router.db_for_read(User) == "staff" and router.db_for_write(Session) == "staff"
    assert router.db_for_read(AgentSession) is None and router.db_for_write(AgentSession) is None
    with staff_work() as alias:
        assert alias == "staff"
        assert router.db_for_read(AgentSession) == "staff" and router.db_for_write(AgentSession) == "staff"
    assert router.db_for_read(AgentSession) is None
