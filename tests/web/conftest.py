"""Fixtures of the web tests: Debian's Chromium (found, or installed with
apt-get), a Playwright browser driving it, and a real uvicorn server on a
free loopback port over a store (SQLite or PostgreSQL).

Playwright's own browser download (`playwright install`) is never used: the
browser is the distribution's, so `pip install -e '.[test]' && pytest` on a
fresh Debian machine needs no other step.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

CANDIDATES = ("/usr/bin/chromium", "/usr/bin/chromium-browser")


def _found() -> str | None:
    for path in CANDIDATES:
        if os.access(path, os.X_OK):
            return path
    return shutil.which("chromium")


def _apt(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    # Another apt run (a parallel test session) holds the lock: wait for it.
    return subprocess.run(["apt-get", "-o", "DPkg::Lock::Timeout=600", *args], env=env, capture_output=True,
                          text=True, timeout=1800)


@pytest.fixture(scope="session")
def chromium_path() -> str:
    """Debian's chromium: found, or installed (as root) with apt-get; its
    package lists are refreshed first when the install cannot find it."""
    path = _found()
    if path:
        return path
    if os.geteuid() != 0:
        pytest.fail("chromium is not installed and the tests do not run as root: apt-get install -y chromium")
    run = _apt("install", "-y", "--no-install-recommends", "chromium")
    if run.returncode != 0:
        _apt("update")
        run = _apt("install", "-y", "--no-install-recommends", "chromium")
    path = _found()
    if not path:
        pytest.fail(f"apt-get install chromium failed:\n{run.stdout[-2000:]}\n{run.stderr[-2000:]}")
    return path


@pytest.fixture(scope="session")
def browser(chromium_path):
    """One headless Chromium for the session (one at a time on the machine)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium_path, headless=True,
                              args=["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"])
        yield b
        b.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(timezone_id="America/New_York", locale="en-US",
                                  viewport={"width": 1100, "height": 900})
    pg = context.new_page()
    yield pg
    context.close()


class LiveWeb:
    """A real server (judge.web.server.Background) on a free port."""

    def __init__(self, config, store_url: str) -> None:
        from judge.web.server import Background, make_server

        self.background = Background(make_server(config, "127.0.0.1", 0, store_url=store_url,
                                                 log_level="warning")).start()
        self.url = f"http://127.0.0.1:{self.background.port}"

    def get(self, path: str):
        import httpx

        return httpx.get(self.url + path, timeout=30)

    def stop(self) -> None:
        self.background.stop()


@pytest.fixture
def live_web(harness):
    """The web server over the harness's store (SQLite and PostgreSQL: the
    `database_url` fixture is parametrised), started after the harness's
    judge has made the tables."""
    web = LiveWeb(harness.config, harness.config.database_url)
    yield web
    web.stop()


def wait_for(predicate, timeout: float = 15.0, step: float = 0.1):
    end = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > end:
            raise AssertionError("timed out waiting")
        time.sleep(step)


REPO = Path(__file__).resolve().parents[2]
