"""Static files under daphne (WhiteNoise), with DEBUG on and with DEBUG off, seen by a real browser.

DEBUG on: the shared live server of the checkout (files found in the apps and static/ on each request).
DEBUG off: a daphne process in a fresh clone after `collectstatic`, as `DEBUG=0 SECRET_KEY=… make run` serves
(compressed files with hashed names from STATIC_ROOT). Both must style the admin, not only answer 200.
"""

from __future__ import annotations

import http.client
import re
import uuid
from collections.abc import Iterator

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.ui import WebDriverWait

from tests.support.browser import headless_chromium
from tests.support.fresh_clone import FreshClone
from tests.support.live_server import DaphneServer, LiveDatabase, create_superuser

pytestmark = [pytest.mark.live, pytest.mark.browser, pytest.mark.xdist_group("live")]

STAFF_USER = "static-staff"
STAFF_PASSWORD = f"pw-{uuid.uuid4().hex}"
# admin/css/base.css: `#header { background: var(--header-bg) }`, --header-bg = --secondary = #417690.
ADMIN_HEADER_BACKGROUND = "rgb(65, 118, 144)"
UNSTYLED_BACKGROUND = "rgba(0, 0, 0, 0)"
# The theme toggle's icons are 1rem squares (admin/css/base.css); unstyled, an <svg> is 300×150 px.
MAX_THEME_ICON_PX = 24
WAIT_S = 20


@pytest.fixture(scope="module")
def browser() -> Iterator[WebDriver]:
    with headless_chromium(window_size="1280,900") as driver:
        yield driver


@pytest.fixture(scope="module")
def debug_server(live_server_process: DaphneServer, live_database: LiveDatabase) -> DaphneServer:
    """The shared DEBUG-on live server, with a staff login in its database."""
    create_superuser(live_database, username=STAFF_USER, password=STAFF_PASSWORD)
    return live_server_process


@pytest.fixture(scope="module")
def production_server(
    fresh_clone: FreshClone, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[DaphneServer]:
    """daphne with DEBUG off in a fresh clone, after `collectstatic` in that mode (as `make run` does)."""
    production = {"DEBUG": "0"}
    fresh_clone.run(".venv/bin/python manage.py collectstatic --noinput -v0", extra_env=production)
    fresh_clone.run(
        ".venv/bin/python manage.py createsuperuser --noinput",
        extra_env={
            **production,
            "DJANGO_SUPERUSER_USERNAME": STAFF_USER,
            "DJANGO_SUPERUSER_EMAIL": "staff@example.com",
            "DJANGO_SUPERUSER_PASSWORD": STAFF_PASSWORD,
        },
    )
    log_path = tmp_path_factory.mktemp("production-logs") / "daphne.log"
    server = DaphneServer(env=fresh_clone.env(production), log_path=log_path, cwd=fresh_clone.root).start()
    yield server
    server.stop()


def get(
    server: DaphneServer, path: str, headers: dict[str, str] | None = None
) -> tuple[int, dict[str, str], bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        conn.request("GET", path, headers=headers or {})
        response = conn.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        conn.close()


def computed(browser: WebDriver, selector: str, prop: str) -> str:
    script = "return getComputedStyle(document.querySelector(arguments[0])).getPropertyValue(arguments[1])"
    return str(browser.execute_script(script, selector, prop))


def assert_admin_is_styled(browser: WebDriver, server: DaphneServer) -> None:
    """The login page and the index carry admin's stylesheet: header colour, small theme icons."""
    browser.delete_all_cookies()
    browser.get(f"{server.base_url}/admin/login/?next=/admin/")
    assert computed(browser, "#header", "background-color") == ADMIN_HEADER_BACKGROUND, server.log_tail()
    assert computed(browser, "#login-form input[type=submit]", "background-color") != UNSTYLED_BACKGROUND

    browser.find_element(By.ID, "id_username").send_keys(STAFF_USER)
    browser.find_element(By.ID, "id_password").send_keys(STAFF_PASSWORD)
    browser.find_element(By.CSS_SELECTOR, "#login-form input[type=submit]").click()
    WebDriverWait(browser, WAIT_S).until(
        lambda d: (
            d.find_elements(By.CSS_SELECTOR, "button.theme-toggle")
            and d.execute_script("return document.readyState") == "complete"
        )
    )
    assert computed(browser, "#header", "background-color") == ADMIN_HEADER_BACKGROUND
    # Measured in one script: element handles kept across calls went stale when the page re-rendered.
    icons = browser.execute_script(
        "return [...document.querySelectorAll('button.theme-toggle svg')].map(icon => {"
        " const box = icon.getBoundingClientRect();"
        " return {width: box.width, height: box.height,"
        " shown: box.width > 0 && box.height > 0 && icon.checkVisibility({visibilityProperty: true})}; })"
    )
    assert icons
    for icon in icons:  # hidden ones measure 0; the visible one is small
        assert icon["width"] <= MAX_THEME_ICON_PX and icon["height"] <= MAX_THEME_ICON_PX, icon
    assert any(icon["shown"] for icon in icons), "theme.js and the CSS show one icon"


@pytest.mark.parametrize(
    "path", ["/static/admin/css/base.css", "/static/admin/js/theme.js", "/static/demo/chat.css"]
)
def test_debug_server_serves_static_files(debug_server: DaphneServer, path: str) -> None:
    """With DEBUG on, daphne answers the admin's and the demo's static files."""
    status, headers, body = get(debug_server, path)
    assert status == 200, debug_server.log_tail()
    assert body and headers["content-type"].startswith(("text/css", "text/javascript"))


def test_debug_server_styles_the_admin(browser: WebDriver, debug_server: DaphneServer) -> None:
    """With DEBUG on, the admin in a browser has its colours and its small theme icons."""
    assert_admin_is_styled(browser, debug_server)


@pytest.mark.xdist_group("fresh_clone")
@pytest.mark.parametrize(
    "path", ["/static/admin/css/base.css", "/static/admin/js/theme.js", "/static/demo/chat.css"]
)
def test_production_server_serves_static_files(production_server: DaphneServer, path: str) -> None:
    """With DEBUG off, after collectstatic, daphne answers the static files, compressed when asked."""
    status, headers, body = get(production_server, path, headers={"Accept-Encoding": "gzip"})
    assert status == 200, production_server.log_tail()
    assert body and headers["content-encoding"] == "gzip"


@pytest.mark.xdist_group("fresh_clone")
def test_production_pages_link_hashed_files_cached_for_good(production_server: DaphneServer) -> None:
    """With DEBUG off, pages link content-hashed file names, which are served with far-future caching."""
    status, _, body = get(production_server, "/admin/login/")
    assert status == 200, production_server.log_tail()
    hashed = re.search(r'href="(/static/admin/css/base\.[0-9a-f]{12}\.css)"', body.decode())
    assert hashed, body.decode()[:2000]
    status, headers, _ = get(production_server, hashed.group(1))
    assert status == 200
    assert "immutable" in headers["cache-control"]


@pytest.mark.xdist_group("fresh_clone")
def test_production_server_styles_the_admin(browser: WebDriver, production_server: DaphneServer) -> None:
    """With DEBUG off, the admin in a browser has its colours and its small theme icons."""
    assert_admin_is_styled(browser, production_server)
