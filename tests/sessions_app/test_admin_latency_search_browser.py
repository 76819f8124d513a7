"""In a real headless Chromium: the dashboard's latency percentiles, and a session found by a word of its user
message from the session list's search box."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.contrib.auth import get_user_model
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.ui import WebDriverWait

from tests.sessions_app.test_latency_and_search import latency_fixture
from tests.support.browser import headless_chromium
from tests.trainer_agent.observability.test_admin_browser import PASSWORD, WAIT_S, log_in

pytestmark = [
    pytest.mark.browser,
    pytest.mark.xdist_group("browser"),
    pytest.mark.django_db(transaction=True),
]


@pytest.fixture
def browser() -> Iterator[WebDriver]:
    with headless_chromium(window_size="1400,1000") as driver:
        yield driver


def test_staff_see_latency_percentiles_and_find_a_session_by_a_word(
    browser: WebDriver, live_server: object
) -> None:
    base_url = str(live_server.url)  # type: ignore[attr-defined]
    get_user_model().objects.create_superuser("staff", "staff@example.com", PASSWORD)
    fixture = latency_fixture()
    log_in(browser, base_url)

    search = browser.find_element(By.ID, "searchbar")
    search.send_keys("deadlift", Keys.ENTER)
    WebDriverWait(browser, WAIT_S).until(lambda d: "q=deadlift" in d.current_url)
    rows = browser.find_elements(By.CSS_SELECTOR, "#result_list tbody tr")
    assert [row.find_element(By.CSS_SELECTOR, "th a").text for row in rows] == [str(fixture.deadlift.pk)[:8]]
    rows[0].find_element(By.CSS_SELECTOR, "th a").click()
    WebDriverWait(browser, WAIT_S).until(lambda d: d.find_elements(By.ID, "obs-timeline"))
    assert "How do I fix my deadlift lockout?" in browser.find_element(By.ID, "obs-timeline").text

    browser.get(f"{base_url}/admin/sessions_app/agentsessionsummary/dashboard/")
    WebDriverWait(browser, WAIT_S).until(lambda d: d.find_elements(By.ID, "obs-latency"))
    table = browser.find_element(By.ID, "obs-latency")
    headers = [cell.text.lower() for cell in table.find_elements(By.CSS_SELECTOR, "thead th")]  # CSS capitals
    assert headers[1::2] == ["model call", "time to first frame", "turn duration"]
    [row] = table.find_elements(By.CSS_SELECTOR, "tbody tr")
    cells = [cell.text for cell in row.find_elements(By.TAG_NAME, "td")]
    assert cells == ["claude-haiku-4-5", "300ms / 880ms", "5", "600ms / 780ms", "2", "3.0s / 3.9s", "2"]
    users = browser.find_element(By.ID, "obs-user-days").text
    assert f"{str(fixture.user_id)[:8]}…" in users  # the per-user daily view, the user without a profile
