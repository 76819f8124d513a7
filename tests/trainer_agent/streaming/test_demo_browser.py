"""The demo chat page in a real headless Chromium against a live daphne process.

The screenshot goes to docs/screenshots/demo_chat.png when that file is missing or UPDATE_SCREENSHOTS=1 is set
(so a normal test run does not rewrite a committed image), and to the test's temporary directory otherwise.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.ui import Select, WebDriverWait

from tests.support.browser import headless_chromium
from tests.support.live_server import BASE_DIR, DaphneServer

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
