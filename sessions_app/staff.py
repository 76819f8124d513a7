"""Staff work on its own, privileged database connection (docs/architecture.md "Tenant isolation in PostgreSQL").

On PostgreSQL the application logs in as `trainer_app`: row-level security shows it one user's rows per unit of
work, and it has no rights on Django's auth tables, the admin log or the SQL views. Staff work sees every user
and those tables, so it runs on the `staff` connection alias (`STAFF_DATABASE_URL`: the tables' owner, a superuser or
with `BYPASSRLS`, since the policies are forced on the owner too):
- always for Django's own staff apps (auth, admin, contenttypes, sessions): the admin's login, its users and
  its log;
- for every model inside `staff_work()`: the admin's pages (`StaffWorkMiddleware` enters it for every
  request under the admin's URL), `replay_session` and `import_session`.
Without `STAFF_DATABASE_URL` (SQLite, `make run`, the test process) `settings.STAFF_DATABASE` is `default`
and nothing changes: one login does everything.

Writes inside `staff_work()` that open their own transaction must open it on `staff_alias()` (Django's
`transaction.atomic()` defaults to `default`): the admin's own views do (they ask the router), and so do
`services.delete_session` and `import_session`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from asgiref.sync import iscoroutinefunction, markcoroutinefunction
from django.conf import settings
from django.db.models import Model
from django.http import HttpRequest, HttpResponseBase
from django.urls import get_script_prefix, reverse

# Django's staff-only apps: their tables are granted to no application role.
STAFF_APP_LABELS = frozenset({"admin", "auth", "contenttypes", "sessions"})

_staff_work: ContextVar[bool] = ContextVar("staff_work", default=False)


def staff_alias() -> str:
    """The connection alias of staff work: `staff` when STAFF_DATABASE_URL is set, else `default`."""
    alias: str = settings.STAFF_DATABASE
    return alias


@contextmanager
def staff_work() -> Iterator[str]:
    """Every query of the block (this thread or task, and the threads it hands work to through asgiref) goes
    to the staff connection. Yields its alias."""
    token = _staff_work.set(True)
    try:
        yield staff_alias()
    finally:
        _staff_work.reset(token)


def in_staff_work() -> bool:
    return _staff_work.get()


class StaffRouter:
    """DATABASE_ROUTERS: staff apps and staff work read and write on `staff_alias()`; everything else on the
    default connection (the application's login). Migrations are not routed: they run with the owner's login
    as DATABASE_URL (README "PostgreSQL and row-level security"; their data steps use the default alias)."""

    def db_for_read(self, model: type[Model], **hints: Any) -> str | None:
        if _staff_work.get() or model._meta.app_label in STAFF_APP_LABELS:
            return staff_alias()
        return None

    db_for_write = db_for_read


class StaffWorkMiddleware:
    """Runs every request under the admin's URL (`admin:index`) as staff work; other requests are untouched.

    Sync and async capable, so the streaming views stay async end to end."""

    sync_capable = True
    async_capable = True

    def __init__(self, get_response: Callable[[HttpRequest], Any]) -> None:
        self.get_response = get_response
        self.is_async = iscoroutinefunction(get_response)
        if self.is_async:
            markcoroutinefunction(self)
        self._admin_path: str | None = None  # the admin's URL below the script prefix, as path_info has it

    def is_staff_request(self, request: HttpRequest) -> bool:
        if self._admin_path is None:
            # reverse() puts the current request's script prefix (a service mounted under a path) in front.
            self._admin_path = "/" + reverse("admin:index").removeprefix(get_script_prefix())
        return request.path_info.startswith(self._admin_path)

    def __call__(self, request: HttpRequest) -> Any:
        if self.is_async:
            return self.__acall__(request)
        if not self.is_staff_request(request):
            return self.get_response(request)
        with staff_work():
            return self.get_response(request)

    async def __acall__(self, request: HttpRequest) -> HttpResponseBase:
        get_response: Callable[[HttpRequest], Awaitable[HttpResponseBase]] = self.get_response
        if not self.is_staff_request(request):
            return await get_response(request)
        with staff_work():
            return await get_response(request)
