"""A real headless Chromium (Debian's chromium + chromium-driver) driven by Selenium, for browser tests."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.chrome.webdriver import WebDriver

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")


@contextmanager
def headless_chromium(*, window_size: str = "1280,900") -> Iterator[WebDriver]:
    """Start Chromium headless with no background networking; skip the test when it is not installed."""
    if not CHROMIUM.exists() or not CHROMEDRIVER.exists():
        pytest.skip(
            "Debian chromium and chromium-driver are not installed (/usr/bin/chromium, /usr/bin/chromedriver)"
        )
    previous = os.environ.get("SE_OFFLINE")
    os.environ["SE_OFFLINE"] = "true"  # never let Selenium Manager reach for the network
    options = Options()
    options.binary_location = str(CHROMIUM)
    for argument in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        f"--window-size={window_size}",
        "--disable-background-networking",
    ):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER)), options=options)
    try:
        yield driver
    finally:
        driver.quit()
        if previous is None:
            os.environ.pop("SE_OFFLINE", None)
        else:
            os.environ["SE_OFFLINE"] = previous
