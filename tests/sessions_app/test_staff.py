"""Which requests are staff work (sessions_app/staff.py): the admin's, and nothing the mobile client calls."""

from __future__ import annotations

import asyncio

import pytest
from django.http import HttpRequest, HttpResponse
from django.test import RequestFactory

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
def test_async_requests_under_the_admin_are_staff_work(path: str, staff: bool) -> None:
    seen: list[bool] = []

    async def view(request: HttpRequest) -> HttpResponse:
        seen.append(in_staff_work())
        return HttpResponse()

    asyncio.run(StaffWorkMiddleware(view)(RequestFactory().get(path)))
    assert seen == [staff]


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
