"""The staff admin in a real headless Chromium: log in, open a session, expand an event, replay a step, dashboard.

Runs against pytest-django's live_server (a threaded WSGI server; the admin needs no streaming). Screenshots go
to docs/screenshots/admin_*.png when missing or with UPDATE_SCREENSHOTS=1 (so a normal run does not rewrite the
committed images), else to the test's temporary directory.
"""

from __future__ import annotations

import os
import random
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.ui import WebDriverWait

from datasources_app.demo import DEMO_USER_ID
from sessions_app.models import AgentSession, EventType
from sessions_app.services import append_event
from tests.support.browser import headless_chromium
from tests.trainer_agent.observability.support import (
    WORKOUT_ARTIFACT,
    add_event,
    make_session,
    request_data,
    response_data,
    tool_call,
    tool_result,
)
from trainer_agent.turns import run_turn

pytestmark = [
    pytest.mark.browser,
    pytest.mark.xdist_group("browser"),
    pytest.mark.django_db(transaction=True),
]

SCREENSHOTS = Path(settings.BASE_DIR) / "docs" / "screenshots"
WAIT_S = 20
PASSWORD = "correct horse battery staple"
MODELS = (("claude-haiku-4-5", 1.0, 5.0), ("claude-sonnet-4-5", 3.0, 15.0))
TOOLS = ("generate_workout", "message_notify_user", "swap_exercise", "fetch_data", "idle")


@pytest.fixture
def browser() -> Iterator[WebDriver]:
    with headless_chromium(window_size="1400,1000") as driver:
        yield driver


def screenshot(driver: WebDriver, name: str, tmp_path: Path, *, height: int | None = None) -> Path:
    """Save the page (resized to `height` px, or the whole page up to 2,400 px) as admin_<name>.png."""
    target = SCREENSHOTS / f"admin_{name}.png"
    if target.exists() and os.environ.get("UPDATE_SCREENSHOTS") != "1":
        target = tmp_path / target.name
    target.parent.mkdir(parents=True, exist_ok=True)
    page_height = int(driver.execute_script("return document.documentElement.scrollHeight"))
    driver.set_window_size(1400, height or min(max(page_height, 1000), 2400))
    driver.save_screenshot(str(target))
    driver.set_window_size(1400, 1000)
    assert target.stat().st_size > 10_000
    return target


def synthetic_history(days: int = 14) -> None:
    """A few sessions a day over the last `days` days, so the dashboard has something to draw."""
    rng = random.Random(7)
    today = datetime.now(UTC).replace(hour=9, minute=0, second=0, microsecond=0)
    for back in range(days, 0, -1):
        for number in range(rng.randint(1, 4)):
            start = today - timedelta(days=back) + timedelta(hours=number * 2, minutes=rng.randint(0, 50))
            session = make_session(user_id=uuid.uuid4(), created_at=start, status="completed")
            model, price_in, price_out = MODELS[rng.random() < 0.3]
            add_event(session, 0, EventType.USER_MESSAGE, {"message": "Plan my workout"}, start)
            sequence, moment = 1, start
            for iteration in range(1, rng.randint(2, 5) + 1):
                moment += timedelta(seconds=2)
                prompt, cached = rng.randint(300, 900), rng.randint(0, 9000) if iteration > 1 else 0
                write, completion = (8000 if iteration == 1 else rng.randint(0, 600)), rng.randint(60, 400)
                cost = (
                    prompt * price_in
                    + write * price_in * 1.25
                    + cached * price_in * 0.1
                    + completion * price_out
                ) / 1e4
                add_event(
                    session, sequence, EventType.LLM_REQUEST, request_data(model, iteration=iteration), moment
                )
                add_event(
                    session,
                    sequence + 1,
                    EventType.LLM_RESPONSE,
                    response_data(
                        model,
                        prompt=prompt,
                        completion=completion,
                        cached=cached,
                        cache_write=write,
                        total=prompt + completion + cached + write,
                        cost_cents=cost,
                    ),
                    moment + timedelta(seconds=1),
                    rng.randint(700, 3500),
                )
                tool = rng.choice(TOOLS)
                add_event(
                    session, sequence + 2, EventType.TOOL_CALL, tool_call(tool, f"c{iteration}"), moment
                )
                add_event(
                    session,
                    sequence + 3,
                    EventType.TOOL_RESULT,
                    tool_result(tool, f"c{iteration}", success=rng.random() > 0.1),
                    moment + timedelta(milliseconds=300),
                    rng.randint(1, 200),
                )
                sequence += 4
            if rng.random() < 0.15:
                add_event(session, sequence, EventType.ERROR, {"message": "timeout", "stack": None}, moment)


def log_in(driver: WebDriver, base_url: str) -> None:
    driver.get(f"{base_url}/admin/login/?next=/admin/sessions_app/agentsessionsummary/")
    driver.find_element(By.ID, "id_username").send_keys("staff")
    driver.find_element(By.ID, "id_password").send_keys(PASSWORD)
    driver.find_element(By.CSS_SELECTOR, "input[type=submit]").click()
    WebDriverWait(driver, WAIT_S).until(
        lambda d: "agentsessionsummary" in d.current_url and d.find_elements(By.ID, "result_list")
    )


def test_staff_walk_through_the_admin(browser: WebDriver, live_server: object, tmp_path: Path) -> None:
    """Log in, open a session from the list, expand an event, open a step replay and the dashboard."""
    base_url = str(live_server.url)  # type: ignore[attr-defined]
    call_command("seed_demo", stdout=open(os.devnull, "w"))  # noqa: SIM115 - the exercise catalogue and demo user
    get_user_model().objects.create_superuser("staff", "staff@example.com", PASSWORD)
    synthetic_history()
    first = run_turn(user_id=DEMO_USER_ID, message="Give me a 30 minute upper body workout", model="offline")
    run_turn(
        user_id=DEMO_USER_ID,
        message="Swap the first exercise for something easier",
        session_id=first.session_id,
        model="offline",
    )
    session = AgentSession.objects.get(pk=first.session_id)

    log_in(browser, base_url)
    screenshot(browser, "session_list", tmp_path, height=1000)

    browser.find_element(By.CSS_SELECTOR, f'a[href$="/{session.pk}/change/"]').click()
    WebDriverWait(browser, WAIT_S).until(lambda d: d.find_elements(By.ID, "obs-timeline"))
    assert "Upper Body" in browser.find_element(By.ID, "obs-timeline").text
    assert browser.find_elements(By.CSS_SELECTOR, ".obs-artifact table.obs-exercises tbody tr")
    screenshot(browser, "session_detail", tmp_path)

    response_row = browser.find_element(By.CSS_SELECTOR, ".obs-type-llm_response")
    details = response_row.find_element(By.CSS_SELECTOR, "details.obs-json")
    assert details.get_attribute("open") is None
    details.find_element(By.TAG_NAME, "summary").click()
    WebDriverWait(browser, WAIT_S).until(lambda d: details.get_attribute("open") is not None)
    assert '"tokens"' in details.find_element(By.TAG_NAME, "pre").text
    browser.execute_script("arguments[0].scrollIntoView({block: 'start'})", response_row)
    screenshot(browser, "event_expanded", tmp_path, height=1000)

    replay_links = browser.find_elements(By.LINK_TEXT, "Replay step")
    assert len(replay_links) >= 2
    replay_links[1].click()
    WebDriverWait(browser, WAIT_S).until(lambda d: d.find_elements(By.ID, "obs-cache"))
    page = browser.find_element(By.ID, "content-main").text
    assert "cache breakpoint 1" in page and "cache breakpoint 4" in page
    assert "reflects today's data" in page
    assert "the cache could serve up to breakpoint 4" in page
    screenshot(browser, "step_replay", tmp_path, height=1300)
    boundary = browser.find_element(By.CSS_SELECTOR, ".obs-boundary")
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", boundary)
    screenshot(browser, "step_replay_messages", tmp_path, height=1000)

    browser.get(f"{base_url}/admin/sessions_app/agentsessionsummary/dashboard/")
    WebDriverWait(browser, WAIT_S).until(lambda d: d.find_elements(By.CSS_SELECTOR, "svg.obs-chart"))
    assert len(browser.find_elements(By.CSS_SELECTOR, "svg.obs-chart")) == 7
    assert len(browser.find_elements(By.CSS_SELECTOR, "svg.obs-chart rect")) > 20
    screenshot(browser, "dashboard", tmp_path)


def test_live_tail_follows_an_active_session(browser: WebDriver, live_server: object) -> None:
    """An active session's page shows events appended after it was opened, without a reload."""
    base_url = str(live_server.url)  # type: ignore[attr-defined]
    get_user_model().objects.create_superuser("staff", "staff@example.com", PASSWORD)
    session = make_session(user_id=uuid.uuid4(), created_at=datetime.now(UTC), status="active")
    append_event(session=session, event_type=EventType.USER_MESSAGE, data={"message": "Are you there?"})
    log_in(browser, base_url)
    browser.get(f"{base_url}/admin/sessions_app/agentsessionsummary/{session.pk}/change/")
    assert browser.find_element(By.ID, "obs-follow").is_selected()
    assert len(browser.find_elements(By.CSS_SELECTOR, "#obs-timeline .obs-event")) == 1

    append_event(session=session, event_type=EventType.ARTIFACT, data=WORKOUT_ARTIFACT)
    WebDriverWait(browser, WAIT_S).until(
        lambda d: len(d.find_elements(By.CSS_SELECTOR, "#obs-timeline .obs-event")) == 2
    )
    assert "Goblet Squat" in browser.find_element(By.ID, "e1").text
