"""The demo chat page in a real headless Chromium against a live daphne process.

The screenshot goes to docs/screenshots/demo_chat.png when that file is missing or UPDATE_SCREENSHOTS=1 is set
(so a normal test run does not rewrite a committed image), and to the test's temporary directory otherwise.
"""

from __future__ import annotations

import json
import os
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.ui import Select, WebDriverWait

from tests.support.browser import headless_chromium
from tests.support.live_server import BASE_DIR, DaphneServer, LiveDatabase

pytestmark = [pytest.mark.live, pytest.mark.browser, pytest.mark.xdist_group("live")]

SCREENSHOT = BASE_DIR / "docs" / "screenshots" / "demo_chat.png"
WAIT_S = 30


@pytest.fixture(scope="module")
def browser() -> Iterator[WebDriver]:
    with headless_chromium(window_size="1280,900") as driver:
        yield driver


def open_demo(browser: WebDriver, server: DaphneServer, model: str) -> None:
    browser.get(f"{server.base_url}/demo/")
    browser.execute_script("sessionStorage.clear()")
    browser.refresh()  # a fresh page: no session yet
    choose_model(browser, model)


def choose_model(browser: WebDriver, model: str) -> None:
    summary = browser.find_element(By.CSS_SELECTOR, "details.settings summary")
    summary.click()  # open "Connection" (closed when the token is pre-filled)
    Select(browser.find_element(By.ID, "model")).select_by_value(model)
    summary.click()


def send(browser: WebDriver, text: str) -> None:
    box = browser.find_element(By.ID, "message")
    box.send_keys(text)
    browser.find_element(By.ID, "send").click()


def wait_for_turn_end(browser: WebDriver) -> None:
    WebDriverWait(browser, WAIT_S).until(
        lambda d: (
            d.find_element(By.ID, "send").is_enabled()
            and not d.find_elements(By.CSS_SELECTOR, ".line.thinking")
        )
    )


def test_offline_coach_turn_shows_a_workout_card(
    browser: WebDriver, live_server_process: DaphneServer, tmp_path: Path
) -> None:
    """Typing a workout request streams the turn: status lines, the coach's message and an exercise card."""
    open_demo(browser, live_server_process, "offline")
    assert browser.find_element(By.ID, "token").get_attribute("value"), "DEBUG pre-fills a demo token"
    send(browser, "Give me a quick chest workout")

    WebDriverWait(browser, WAIT_S).until(
        lambda d: d.find_elements(By.CSS_SELECTOR, ".workout-card .exercise")
    )
    wait_for_turn_end(browser)

    card = browser.find_element(By.CSS_SELECTOR, ".workout-card")
    exercises = card.find_elements(By.CSS_SELECTOR, ".exercise")
    assert len(exercises) >= 2
    for exercise in exercises:
        assert exercise.find_element(By.CSS_SELECTOR, ".ex-name").text
        assert exercise.find_element(By.CSS_SELECTOR, ".ex-rx").text
        assert "%" in exercise.find_element(By.CSS_SELECTOR, ".ex-muscles").text
    loaded = [rx for rx in (e.find_element(By.CSS_SELECTOR, ".ex-rx").text for e in exercises) if " @ " in rx]
    assert loaded and all("each hand" in rx for rx in loaded), "Home has only dumbbells: loads are per hand"
    lines = [e.text for e in browser.find_elements(By.CSS_SELECTOR, ".line")]
    assert "Loaded: Workout history" in lines
    assert "Workout ready" in lines
    assert lines[0] == "Message received", "the turn's first frame is shown first"
    assert not browser.find_elements(By.CSS_SELECTOR, ".line.running"), "nothing is left spinning after done"
    assert browser.find_elements(By.CSS_SELECTOR, ".bubble.coach")
    assert not browser.find_elements(By.CSS_SELECTOR, ".line.error")
    assert browser.find_element(By.ID, "session-label").text.startswith("Session ")

    target = (
        SCREENSHOT
        if os.environ.get("UPDATE_SCREENSHOTS") == "1" or not SCREENSHOT.exists()
        else tmp_path / "demo_chat.png"
    )
    target.parent.mkdir(parents=True, exist_ok=True)
    # Tall enough to show the whole conversation, top to bottom.
    chrome_height = browser.execute_script("return window.outerHeight - window.innerHeight")
    page_height = browser.execute_script("return document.documentElement.scrollHeight")
    browser.set_window_size(1280, min(2400, page_height + chrome_height))
    browser.execute_script("window.scrollTo(0, 0)")
    try:
        assert browser.save_screenshot(str(target))
    finally:
        browser.set_window_size(1280, 900)


def test_question_options_are_buttons_that_answer(
    browser: WebDriver, live_server_process: DaphneServer
) -> None:
    """A question's options become buttons; clicking one sends it as the next message in the same session."""
    open_demo(browser, live_server_process, "scripted-ask")
    send(browser, "Plan my next session")
    WebDriverWait(browser, WAIT_S).until(lambda d: d.find_elements(By.CSS_SELECTOR, ".question .option"))
    wait_for_turn_end(browser)
    session_label = browser.find_element(By.ID, "session-label").get_attribute("title")
    options = browser.find_elements(By.CSS_SELECTOR, ".question .option")
    assert [o.text for o in options] == ["20 min", "45 min"]

    options[0].click()
    WebDriverWait(browser, WAIT_S).until(lambda d: len(d.find_elements(By.CSS_SELECTOR, ".question")) == 2)
    wait_for_turn_end(browser)
    assert [b.text for b in browser.find_elements(By.CSS_SELECTOR, ".bubble.user")] == [
        "Plan my next session",
        "20 min",
    ]
    assert browser.find_element(By.ID, "session-label").get_attribute("title") == session_label


# Whether the element's centre is inside the viewport and is the element itself there (not the sticky composer
# or anything else drawn over it).
CLICKABLE_AT_CENTRE = """
const element = arguments[0];
const box = element.getBoundingClientRect();
const x = box.left + box.width / 2, y = box.top + box.height / 2;
if (x < 0 || y < 0 || x > window.innerWidth || y > window.innerHeight) return "outside the viewport";
const hit = document.elementFromPoint(x, y);
return element === hit || element.contains(hit) ? "" : "covered by " + (hit ? hit.outerHTML.slice(0, 80) : "nothing");
"""


def user_messages(database: LiveDatabase, session_id: str) -> list[str]:
    key = session_id if database.postgres_admin_url else uuid.UUID(session_id).hex
    rows = database.query(
        "SELECT data FROM agent_session_events WHERE session_id = %s AND event_type = 'user_message' "
        "ORDER BY sequence_number",
        [key],
    )
    data: list[Any] = [json.loads(row[0]) if isinstance(row[0], str) else row[0] for row in rows]
    return [str(item["message"]) for item in data]


def test_a_question_at_the_end_of_a_long_reply_is_in_view_and_a_chip_answers_it(
    browser: WebDriver, live_server_process: DaphneServer, live_database: LiveDatabase
) -> None:
    """After a workout card, a question's last chip is scrolled into view above the composer; clicking it sends
    its text as the next message of the same session."""
    open_demo(browser, live_server_process, "scripted-workout")
    send(browser, "Give me a quick chest workout")
    WebDriverWait(browser, WAIT_S).until(lambda d: d.find_elements(By.CSS_SELECTOR, ".workout-card"))
    wait_for_turn_end(browser)
    choose_model(browser, "scripted-ask")
    send(browser, "Plan my next session")
    WebDriverWait(browser, WAIT_S).until(lambda d: d.find_elements(By.CSS_SELECTOR, ".question .option"))
    wait_for_turn_end(browser)
    assert browser.execute_script("return document.documentElement.scrollHeight > window.innerHeight"), (
        "the conversation is longer than the window, so the page had to scroll"
    )

    last = browser.find_elements(By.CSS_SELECTOR, ".question .option")[-1]
    assert last.text == "45 min"
    assert browser.execute_script(CLICKABLE_AT_CENTRE, last) == ""
    session_id = str(browser.find_element(By.ID, "session-label").get_attribute("title"))

    last.click()
    WebDriverWait(browser, WAIT_S).until(lambda d: len(d.find_elements(By.CSS_SELECTOR, ".question")) == 2)
    wait_for_turn_end(browser)
    assert browser.find_elements(By.CSS_SELECTOR, ".bubble.user")[-1].text == "45 min"
    assert user_messages(live_database, session_id)[-1] == "45 min"
    assert (
        browser.execute_script(CLICKABLE_AT_CENTRE, browser.find_elements(By.CSS_SELECTOR, ".option")[-1])
        == ""
    )


def visible_new_session_controls(browser: WebDriver) -> int:
    found = browser.find_elements(By.XPATH, "//*[normalize-space(text())='New session']")
    return sum(1 for element in found if element.is_displayed())


def test_new_session_is_shown_once(browser: WebDriver, live_server_process: DaphneServer) -> None:
    """One "New session" control: before the first turn, beside the session label, and after starting over."""
    open_demo(browser, live_server_process, "scripted-ask")
    assert visible_new_session_controls(browser) == 1
    send(browser, "Plan my next session")
    WebDriverWait(browser, WAIT_S).until(lambda d: d.find_elements(By.CSS_SELECTOR, ".question .option"))
    wait_for_turn_end(browser)
    assert browser.find_element(By.ID, "session-label").text.startswith("Session ")
    assert visible_new_session_controls(browser) == 1
    browser.find_element(By.ID, "new-session").click()
    assert visible_new_session_controls(browser) == 1


def test_the_page_has_a_favicon_served_by_staticfiles(
    browser: WebDriver, live_server_process: DaphneServer
) -> None:
    """The icon link resolves with 200 and an SVG."""
    open_demo(browser, live_server_process, "offline")
    link = browser.find_element(By.CSS_SELECTOR, 'link[rel="icon"]')
    href = str(link.get_property("href"))
    assert href.startswith(f"{live_server_process.base_url}/static/")
    with urllib.request.urlopen(href, timeout=10) as response:
        assert response.status == 200
        assert response.headers["Content-Type"].startswith("image/svg+xml")
        assert b"<svg" in response.read()
