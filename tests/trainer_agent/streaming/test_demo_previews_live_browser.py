"""The demo page in a real headless Chromium against the real service with previews: daphne and a worker on a
database of their own, and `claude-haiku-4-5` through the real Anthropic SDK against the streaming fake model
server (tests/support/fake_model_server.py), which writes a 6-exercise workout into generate_workout slowly
enough to watch. (The offline coach drafts workouts with draft_workout: only its messages preview.)

The test looks at the page while the turn runs, as a person would: the draft card's exercises appear one by
one and the message's words grow before the turn ends; then exactly the delivered card and message are left.
Screenshots of the moments it saw go to the test's temporary directory.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.ui import Select

from tests.support.browser import headless_chromium
from tests.support.fake_model_server import FakeModelServer
from tests.support.live_server import (
    DaphneServer,
    LiveDatabase,
    LiveScripts,
    WorkerProcess,
    create_live_database,
    live_env,
    wait_for,
)

pytestmark = [pytest.mark.live, pytest.mark.browser, pytest.mark.xdist_group("live")]

# The fake Claude: 300 ms to the first token, then 150 tokens a second: the workout's ~1,500 tokens take ~10 s,
# its message a second or two, so the page can be looked at many times while each is written.
FAKE_TTFT_S, FAKE_TOKENS_PER_S = 0.3, 150.0
TURN_TIMEOUT_S = 120.0

# What a person sees, read in one call: the drafts, the delivered cards, the coach's bubbles, the turn's state.
LOOK = """
const shown = (e) => !!(e.offsetWidth || e.offsetHeight || e.getClientRects().length);
const all = (selector, root) => Array.from((root || document).querySelectorAll(selector)).filter(shown);
const rows = (card) => all(".exercise", card).map((row) => ({
  name: row.querySelector(".ex-name").textContent,
  rx: row.querySelector(".ex-rx").textContent,
}));
const style = (e) => getComputedStyle(e);
return {
  drafts: all(".workout-card.draft").map((card) => ({
    rows: rows(card), border: style(card).borderTopStyle, tag: card.querySelector(".draft-tag").innerText,
  })),
  cards: all(".workout-card:not(.draft)").map((card) => ({rows: rows(card), border: style(card).borderTopStyle})),
  bubbles: all(".bubble.coach").map((bubble) => ({
    text: bubble.innerText, streaming: bubble.classList.contains("streaming"),
    background: style(bubble).backgroundColor, radius: style(bubble).borderTopLeftRadius,
  })),
  lines: all(".line").map((line) => line.textContent),
  ended: !document.getElementById("send").disabled && !document.querySelector(".line.thinking"),
};
"""


@dataclass
class Look:
    number: int
    drafts: list[dict[str, Any]]
    cards: list[dict[str, Any]]
    bubbles: list[dict[str, Any]]
    lines: list[str]
    ended: bool

    @property
    def draft_rows(self) -> int:
        return sum(len(draft["rows"]) for draft in self.drafts)

    @property
    def streaming_text(self) -> str | None:
        texts = [bubble["text"] for bubble in self.bubbles if bubble["streaming"]]
        return texts[-1] if texts else None


@pytest.fixture(scope="module")
def previews_database(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveDatabase]:
    """A database of its own: the suite's shared live worker (which writes at full speed) polls the shared one."""
    database = create_live_database(name="previews", tmp_dir=tmp_path_factory.mktemp("previews-db"))
    yield database
    database.drop()


@pytest.fixture(scope="module")
def slow_server(
    previews_database: LiveDatabase, live_scripts: LiveScripts, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[DaphneServer]:
    directory = tmp_path_factory.mktemp("previews-live")
    fake = FakeModelServer(ttft=FAKE_TTFT_S, tps=FAKE_TOKENS_PER_S).start()
    model = {"ANTHROPIC_BASE_URL": fake.base_url, "ANTHROPIC_API_KEY": "test", "LLM_MAX_RETRIES": "0"}
    env = {**live_env(previews_database, live_scripts), **model}
    worker = WorkerProcess(env=env, log_path=directory / "worker.log", threads=2).start()
    try:
        server = DaphneServer(env=env, log_path=directory / "daphne.log").start()
    except Exception:
        worker.stop()
        fake.stop()
        raise
    yield server
    server.stop()
    worker.stop()
    fake.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[WebDriver]:
    with headless_chromium(window_size="1280,900") as driver:
        yield driver


def test_the_page_shows_words_growing_and_cards_appearing_before_the_turn_ends(
    browser: WebDriver, slow_server: DaphneServer, tmp_path: Path
) -> None:
    browser.get(f"{slow_server.base_url}/demo/")
    browser.execute_script("sessionStorage.clear()")
    browser.refresh()
    summary = browser.find_element(By.CSS_SELECTOR, "details.settings summary")
    summary.click()
    Select(browser.find_element(By.ID, "model")).select_by_value("claude-haiku-4-5")
    summary.click()
    browser.find_element(By.ID, "message").send_keys("Give me a quick chest workout")
    browser.find_element(By.ID, "send").click()

    looks: list[Look] = []
    shots: list[Path] = []

    def shoot(name: str) -> None:
        path = tmp_path / f"{len(shots) + 1:02d}-{name}.png"
        assert browser.save_screenshot(str(path))
        shots.append(path)

    def look() -> bool:
        seen = Look(number=len(looks) + 1, **browser.execute_script(LOOK))
        previous = looks[-1] if looks else None
        looks.append(seen)
        # A picture of each new thing a person sees: the first draft row, a row more, words more.
        if seen.draft_rows and (previous is None or seen.draft_rows > previous.draft_rows):
            shoot(f"draft-{seen.draft_rows}-exercises")
        elif seen.streaming_text and (previous is None or previous.streaming_text is None):
            shoot("message-begins")
        elif seen.streaming_text and sum(1 for item in looks if item.streaming_text) == 4:
            shoot("message-grows")
        return seen.ended and len(looks) > 1

    wait_for(look, "the turn to end on the page", timeout=TURN_TIMEOUT_S)
    shoot("delivered")

    during = [item for item in looks if not item.ended]
    end = looks[-1]

    # Exercise cards came one by one, as drafts, before the turn's end (and before the delivered card).
    counts = [item.draft_rows for item in during if item.draft_rows and not item.cards]
    assert counts, "no draft exercise was seen before the delivered card"
    assert len(set(counts)) >= 2 and counts == sorted(counts), f"draft rows seen: {counts}"
    first_draft = next(item for item in during if item.draft_rows)
    assert first_draft.drafts[0]["border"] == "dashed" and first_draft.drafts[0]["tag"] == "DRAFT", (
        "a draft is styled as one (dashed border, an upper-case tag): the page's CSS is loaded"
    )
    # The message's words grew in place (the same bubble, longer between two looks) before the turn's end.
    texts = [item.streaming_text for item in during if item.streaming_text is not None]
    assert any(len(b) > len(a) and b.startswith(a.rstrip()) for a, b in pairwise(texts)), (
        f"the message was not seen growing: {texts[:5]}"
    )
    assert all(len(item.bubbles) <= 1 for item in looks), "one coach bubble at a time, never two"

    # The end: exactly the delivered card (the drafts replaced by it) and the delivered message.
    assert not end.drafts
    assert len(end.cards) == 1 and end.cards[0]["border"] == "solid"
    last_draft = [
        row["name"] for row in next(item for item in reversed(looks) if item.drafts).drafts[-1]["rows"]
    ]
    delivered = [row["name"] for row in end.cards[0]["rows"]]
    assert delivered[: len(last_draft)] == last_draft, (
        "the delivered card has the exercises the drafts showed"
    )
    assert all(row["rx"] for row in end.cards[0]["rows"])
    assert len(end.bubbles) == 1 and not end.bubbles[0]["streaming"]
    assert end.bubbles[0]["text"].startswith(texts[-1].rstrip()[:40])
    assert end.bubbles[0]["background"] == "rgb(255, 255, 255)" and end.bubbles[0]["radius"] == "14px"
    assert "Workout ready" in end.lines
    assert len(shots) >= 4
