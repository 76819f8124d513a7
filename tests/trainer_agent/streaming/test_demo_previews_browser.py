"""The demo page renders preview frames (docs/contracts.md §7.5) in a real headless Chromium.

The page is served by the live daphne process; its `/agent/stream` answer is a stream the test writes frame by
frame (the page's `fetch` is handed a `ReadableStream` the test feeds), so each step of a turn can be looked at:
a message's words growing in one bubble that becomes the message, exercise rows appearing one by one in a card
marked as a draft, the delivered card taking its place, and the drafts going when a turn ends without them.
Screenshots of each step go to the test's temporary directory.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support.ui import WebDriverWait

from tests.support.browser import headless_chromium
from tests.support.live_server import DEMO_WORKOUT_EXERCISES, DaphneServer

pytestmark = [pytest.mark.live, pytest.mark.browser, pytest.mark.xdist_group("live")]

WAIT_S = 15
SESSION_ID = "6f0c1a52-8d1e-4c3b-9f57-2f8a4de0b7aa"
WORKOUT_CALL = "toolu_workout_1"
MESSAGE_CALL = "toolu_message_1"

# Replaces the page's fetch for POST /agent/stream with a 200 whose body the test writes (`window.__push`).
FAKE_STREAM = """
window.__requests = [];
const realFetch = window.fetch;
window.fetch = function (url, init) {
  if (!String(url).endsWith("/agent/stream")) return realFetch.apply(this, arguments);
  window.__requests.push(JSON.parse(init.body));
  const body = new ReadableStream({ start(controller) { window.__sse = controller; } });
  return Promise.resolve(new Response(body, {
    status: 200, headers: { "Content-Type": "text/event-stream", "X-Session-Id": "__SESSION_ID__" }
  }));
};
window.__push = (text) => window.__sse.enqueue(new TextEncoder().encode(text));
window.__close = () => window.__sse.close();
""".replace("__SESSION_ID__", SESSION_ID)


@pytest.fixture(scope="module")
def browser() -> Iterator[WebDriver]:
    with headless_chromium(window_size="1280,900") as driver:
        yield driver


@pytest.fixture
def page(browser: WebDriver, live_server_process: DaphneServer) -> WebDriver:
    """The demo page, fresh, with its stream in the test's hands and a turn sent."""
    browser.get(f"{live_server_process.base_url}/demo/")
    browser.execute_script("sessionStorage.clear()")
    browser.refresh()
    browser.execute_script(FAKE_STREAM)
    browser.find_element(By.ID, "message").send_keys("Give me a quick chest workout")
    browser.find_element(By.ID, "send").click()
    WebDriverWait(browser, WAIT_S).until(lambda d: d.execute_script("return !!window.__sse"))
    return browser


class Shots:
    """Numbered screenshots of the viewport in the test's temporary directory."""

    def __init__(self, browser: WebDriver, directory: Path) -> None:
        self.browser = browser
        self.directory = directory
        self.taken: list[Path] = []

    def take(self, name: str) -> Path:
        path = self.directory / f"{len(self.taken) + 1:02d}-{name}.png"
        assert self.browser.save_screenshot(str(path))
        self.taken.append(path)
        return path


def push(browser: WebDriver, *frames: dict[str, Any], event_id: int | None = None) -> None:
    text = "".join(f"data: {json.dumps(frame)}\n\n" for frame in frames)
    if event_id is not None:  # as the server sends it: the id on the event's last frame
        head, _, last = text.rstrip("\n").rpartition("\n\n")
        text = (head + "\n\n" if head else "") + f"id: {event_id}\n{last}\n\n"
    browser.execute_script("window.__push(arguments[0])", text)


def close(browser: WebDriver) -> None:
    browser.execute_script("window.__close()")


def wait(browser: WebDriver, condition: Any, what: str) -> Any:
    return WebDriverWait(browser, WAIT_S).until(condition, message=f"waiting for {what}")


def visible(browser: WebDriver, selector: str) -> list[WebElement]:
    return [element for element in browser.find_elements(By.CSS_SELECTOR, selector) if element.is_displayed()]


def style(browser: WebDriver, element: WebElement, prop: str, pseudo: str | None = None) -> str:
    value = browser.execute_script(
        "return getComputedStyle(arguments[0], arguments[2]).getPropertyValue(arguments[1])",
        element,
        prop,
        pseudo,
    )
    return str(value)


def preview_exercise(index: int) -> dict[str, Any]:
    """An exercise as the model wrote it (no ids yet)."""
    return dict(DEMO_WORKOUT_EXERCISES[index])


def stored_exercise(index: int) -> dict[str, Any]:
    exercise = dict(DEMO_WORKOUT_EXERCISES[index])
    exercise["id"] = f"ex_00000{index}"
    if exercise.get("load_each"):
        exercise["implements"] = 2
    return exercise


def exercise_preview(index: int) -> dict[str, Any]:
    return {
        "type": "exercise_preview",
        "data": {
            "tool": "generate_workout",
            "call_id": WORKOUT_CALL,
            "index": index,
            "exercise": preview_exercise(index),
        },
    }


def message_preview(text: str, call_id: str = MESSAGE_CALL) -> dict[str, Any]:
    return {
        "type": "message_preview",
        "data": {"tool": "message_notify_user", "call_id": call_id, "text": text},
    }


RECEIVED = {"type": "status", "data": {"message": "Message received", "tool": "agent", "phase": "start"}}
FINAL_MESSAGE = "Here is your **quick chest** workout.\n- Warm up first\n- Keep 1-2 reps in reserve"
ARTIFACT = {
    "artifact_id": "art_0a1b2c3d4e5f",
    "type": "exercise_list",
    "schema_version": "1.0",
    "title": "Quick Chest",
    "summary": {
        "exercise_count": 3,
        "estimated_duration_min": 25,
        "muscles_targeted": ["Chest", "Triceps"],
        "primary_goals": ["strength"],
    },
    "auto_start": False,
    "payload": {"title": "Quick Chest", "exercises": [stored_exercise(i) for i in range(3)]},
}


def generate_workout_frames() -> list[dict[str, Any]]:
    return [
        {
            "type": "status",
            "data": {"message": "Creating your workout…", "tool": "generate_workout", "phase": "start"},
        },
        {"type": "generate_workout", "data": {"status": "running", "args": {"title": "Quick Chest"}}},
    ]


def generate_workout_result(success: bool = True) -> list[dict[str, Any]]:
    return [
        {
            "type": "generate_workout",
            "data": {"success": success, "artifact_id": ARTIFACT["artifact_id"], "exercise_count": 3},
            "formatted": "Workout created" if success else "Invalid workout",
            "status": "done" if success else "failed",
        },
        {
            "type": "status",
            "data": {
                "message": "Workout ready" if success else "Adjusting...",
                "tool": "generate_workout",
                "phase": "done" if success else "error",
            },
        },
    ]


def notify_frames() -> list[dict[str, Any]]:
    return [
        {"type": "message_notify_user", "data": {"status": "running", "args": {"message": FINAL_MESSAGE}}},
        {
            "type": "message_notify_user",
            "data": {"success": True, "message": FINAL_MESSAGE, "artifact_id": ARTIFACT["artifact_id"]},
            "formatted": "Message delivered",
            "status": "done",
            "artifact": ARTIFACT,
            "artifact_id": ARTIFACT["artifact_id"],
        },
    ]


def draft_rows(browser: WebDriver) -> list[WebElement]:
    return visible(browser, ".workout-card.draft .exercise")


def coach_bubbles(browser: WebDriver) -> list[WebElement]:
    return visible(browser, ".bubble.coach")


def turn_ended(browser: WebDriver) -> bool:
    return bool(
        browser.find_element(By.ID, "send").is_enabled()
        and not browser.find_elements(By.CSS_SELECTOR, ".thinking")
    )


def test_words_grow_in_one_bubble_and_cards_appear_as_drafts_then_the_delivered_card_replaces_them(
    page: WebDriver, tmp_path: Path
) -> None:
    browser = page
    shots = Shots(browser, tmp_path)
    push(browser, RECEIVED, event_id=1)
    wait(browser, lambda d: visible(d, ".line.running"), "Message received")

    # Exercise rows come one by one, in a card that says it is a draft.
    push(browser, exercise_preview(0))
    wait(browser, lambda d: len(draft_rows(d)) == 1, "the first draft row")
    shots.take("first-draft-exercise")
    card = visible(browser, ".workout-card.draft")[0]
    assert style(browser, card, "border-top-style") == "dashed", (
        "a draft looks different from a delivered card"
    )
    tag = card.find_element(By.CSS_SELECTOR, ".draft-tag")
    assert tag.is_displayed() and tag.text.lower() == "draft"
    assert style(browser, tag, "text-transform") == "uppercase", "the page's styles are loaded"
    first = draft_rows(browser)[0]
    assert first.find_element(By.CSS_SELECTOR, ".ex-name").text == "Dumbbell Bench Press"
    assert first.find_element(By.CSS_SELECTOR, ".ex-rx").text == "3×10/10/8 @ 20/20/22.5kg · rest 90s"
    assert style(browser, first, "display") == "grid", "rows are laid out as the final card's"

    push(browser, exercise_preview(1))
    wait(browser, lambda d: len(draft_rows(d)) == 2, "the second draft row")
    assert ["fresh" in str(r.get_attribute("class")) for r in draft_rows(browser)] == [False, True], (
        "only the new exercise fades in; the one already shown stays still"
    )
    push(browser, exercise_preview(2), *generate_workout_frames())
    wait(browser, lambda d: len(draft_rows(d)) == 3, "the third draft row")
    shots.take("three-draft-exercises")
    assert [r.find_element(By.CSS_SELECTOR, ".ex-order").text for r in draft_rows(browser)] == ["1", "2", "3"]
    assert len(visible(browser, ".workout-card")) == 1, "one draft card, growing"
    draft_texts = [r.find_element(By.CSS_SELECTOR, ".ex-rx").text for r in draft_rows(browser)]
    push(browser, *generate_workout_result(), event_id=7)
    wait(browser, lambda d: "Workout ready" in [e.text for e in visible(d, ".line")], "Workout ready")

    # The message's words grow in a single bubble.
    lengths = []
    for text in (
        "Here is",
        "Here is your **quick",
        "Here is your **quick chest** workout.\n- Warm",
        FINAL_MESSAGE,
    ):
        push(browser, message_preview(text))
        shown = text.replace("**", "").replace("- ", "")
        wait(
            browser,
            lambda d, shown=shown: (
                [b.text.replace("\n", "") for b in coach_bubbles(d)] == [shown.replace("\n", "")]
            ),
            f"the bubble to read {shown!r}",
        )
        lengths.append(len(coach_bubbles(browser)[0].text))
        shots.take(f"message-{len(lengths)}")
    assert lengths == sorted(lengths) and lengths[0] < lengths[-1], "the text visibly grows"
    bubble = coach_bubbles(browser)[0]
    assert "streaming" in str(bubble.get_attribute("class"))
    assert (
        style(browser, bubble.find_element(By.CSS_SELECTOR, "li:last-child"), "content", "::after") == '""'
    ), "a caret follows the last words while they are written"
    assert bubble.find_element(By.CSS_SELECTOR, "strong").text == "quick chest"
    assert visible(browser, ".workout-card.draft"), "the draft stays until the workout is delivered"

    # The delivered message and card: the bubble becomes the message, the card takes the draft's place.
    push(browser, *notify_frames(), event_id=11)
    wait(browser, lambda d: visible(d, ".workout-card:not(.draft)"), "the delivered card")
    push(
        browser, message_preview(FINAL_MESSAGE + " (late)"), exercise_preview(1)
    )  # previews that arrive late
    push(browser, {"type": "done", "sessionId": SESSION_ID}, event_id=12)
    close(browser)
    wait(browser, turn_ended, "the turn's end")
    shots.take("delivered")

    bubbles = coach_bubbles(browser)
    assert len(bubbles) == 1, "no second bubble when the message is delivered"
    assert "streaming" not in str(bubbles[0].get_attribute("class"))
    assert bubbles[0].text == "Here is your quick chest workout.\nWarm up first\nKeep 1-2 reps in reserve"
    cards = visible(browser, ".workout-card")
    assert len(cards) == 1 and "draft" not in str(cards[0].get_attribute("class"))
    final = cards[0]
    assert final.get_attribute("data-artifact-id") == ARTIFACT["artifact_id"]
    assert final.find_element(By.CSS_SELECTOR, "h3").text == "Quick Chest"
    assert style(browser, final, "border-top-style") == "solid"
    rows = final.find_elements(By.CSS_SELECTOR, ".exercise")
    assert [r.find_element(By.CSS_SELECTOR, ".ex-name").text for r in rows] == [
        "Dumbbell Bench Press",
        "Push-Up",
        "Plank",
    ]
    final_texts = [r.find_element(By.CSS_SELECTOR, ".ex-rx").text for r in rows]
    assert final_texts[1:] == draft_texts[1:], "a draft row shows the prescription the final card shows"
    assert final_texts[0] == draft_texts[0].replace("kg ·", "kg each hand ·"), "the tool resolved the pair"
    # The card stayed where the draft was: above the status line and the message, no jump to the end.
    order = browser.execute_script(
        "return Array.from(document.querySelectorAll('#log > *')).map(n => n.className)"
    )
    assert order.index("card workout-card") < order.index("bubble coach")
    assert [e.text for e in visible(browser, ".line")] == ["Message received", "Workout ready"]


@pytest.mark.parametrize("ending", ["error frame", "stream cut", "failed call"])
def test_a_turn_that_does_not_deliver_leaves_no_drafts(page: WebDriver, tmp_path: Path, ending: str) -> None:
    browser = page
    push(browser, RECEIVED, event_id=1)
    push(browser, exercise_preview(0), exercise_preview(1))
    wait(browser, lambda d: len(draft_rows(d)) == 2, "two draft rows")
    if ending == "failed call":
        # The model's workout was refused: its drafts go; the model then answers without one.
        push(browser, *generate_workout_frames(), *generate_workout_result(success=False), event_id=7)
        wait(browser, lambda d: not draft_rows(d), "the refused workout's drafts to go")
        assert [e.text for e in visible(browser, ".line")][-1] == "Adjusting..."
    push(browser, message_preview("Here is your"))
    wait(browser, lambda d: coach_bubbles(d), "the message preview")
    Shots(browser, tmp_path).take(f"before-{ending.replace(' ', '-')}")
    if ending == "error frame":
        push(
            browser, {"type": "error", "message": "The model's service failed. Please try again."}, event_id=9
        )
    elif ending == "failed call":
        push(browser, {"type": "done", "sessionId": SESSION_ID}, event_id=9)
    close(browser)
    wait(browser, turn_ended, "the turn's end")
    Shots(browser, tmp_path).take(f"after-{ending.replace(' ', '-')}")

    assert not visible(browser, ".workout-card"), "no draft card is left"
    assert not coach_bubbles(browser), "a message that was not delivered is not shown"
    if ending == "error frame":
        assert [e.text for e in visible(browser, ".line.error")] == [
            "The model's service failed. Please try again."
        ]
