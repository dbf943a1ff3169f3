"""Browser tests of the web UI: the Debian Chromium at /usr/bin/chromium driven by Playwright, against one
``lakelet up`` shared by every test here.

Never ``playwright install``: the browser is the system's (.ci/run installs it in CI). Without it the tests
are skipped, except in CI (CI=true), where a missing browser is a failure. The UI must be built
(``make webui``); the fixture builds it when it is missing and Node is there.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import requests
from playwright.sync_api import expect

from tests.e2e.conftest import PROJECT_DIR, LocalProcess, launch_local

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
DIST = PROJECT_DIR / "chalicelib" / "webui_dist"
SCREENSHOTS = PROJECT_DIR / "docs" / "screenshots"
IN_CI = os.environ.get("CI", "").lower() == "true"
TIMEOUT_MS = 15_000
# expect() waits 5 s by default; the CI machine runs the whole suite at once, so give it room.
expect.set_options(timeout=TIMEOUT_MS)


def _require(condition: bool, why: str) -> None:
    if condition:
        return
    if IN_CI:
        pytest.fail(f"{why} (browser tests must run in CI: .ci/run installs Chromium)")
    pytest.skip(why)


def _ensure_built() -> None:
    if (DIST / "index.html").is_file():
        return
    _require(shutil.which("npm") is not None, "the web UI is not built and npm is missing (run `make webui`)")
    webui = PROJECT_DIR / "webui"
    subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=webui, check=True)
    subprocess.run(["node", "build.mjs"], cwd=webui, check=True)


@dataclass
class Stack:
    local: LocalProcess

    @property
    def url(self) -> str:
        return self.local.endpoint + "/"

    @property
    def admin(self) -> tuple[str, str]:
        return self.local.access_key_id, self.local.secret_access_key

    def api(self, method: str, path: str, **kw: object) -> requests.Response:
        """The API with the admin's Basic credentials, to arrange or check state beside the browser."""
        response = requests.request(method, self.local.api_url + path, auth=self.admin, timeout=30, **kw)  # type: ignore[arg-type]
        return response


@pytest.fixture(scope="session")
def ui_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    _require(CHROMIUM.exists(), f"{CHROMIUM} is missing (apt-get install chromium chromium-driver)")
    _ensure_built()
    # Commits of more than one change run as the commit workflow and answer 202 at once, so the flows also
    # cover the UI following a long commit to its end.
    workflows = {
        "LAKELET_COMMIT_WORKFLOW_THRESHOLD": "1",
        "LAKELET_WORKFLOW_WAIT_SECONDS": "0",
        "LAKELET_IMPORT_ALLOWED_LOCATIONS": "s3://ui-import-source/",
    }
    local = launch_local(tmp_path_factory.mktemp("lakelet-ui"), env=workflows)
    try:
        yield Stack(local)
    finally:
        local.stop()


# One Chromium a module, not a session: while Playwright's sync API is started, its event loop counts as running
# in the thread, and any later test of the process that calls asyncio.run (the lakefs client's import manager) fails.
@pytest.fixture(scope="module")
def browser(ui_stack: Stack) -> Iterator[object]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


class UI:
    """One browser context (its own cookie jar) on the stack, with the steps every flow repeats."""

    def __init__(self, browser: object, stack: Stack, width: int = 1280, height: int = 860) -> None:
        self.stack = stack
        self.context = browser.new_context(viewport={"width": width, "height": height})  # type: ignore[attr-defined]
        self.context.set_default_timeout(TIMEOUT_MS)
        self.page = self.context.new_page()
        self.errors: list[str] = []
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))

    def open(self, hash_path: str = "") -> None:
        self.page.goto(self.stack.url + ("#/" + hash_path if hash_path else ""))

    def login(self, key: str | None = None, secret: str | None = None) -> None:
        key, secret = (key, secret) if key else self.stack.admin
        self.open()
        self.page.get_by_label("Access key ID").fill(key)
        self.page.get_by_label("Secret access key").fill(secret or "")
        self.page.get_by_role("button", name="Log in").click()
        self.page.get_by_role("button", name="Log out").wait_for()

    def shot(self, name: str) -> None:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        self.page.screenshot(path=str(SCREENSHOTS / f"{name}.png"))

    def close(self) -> None:
        self.context.close()
        assert self.errors == [], f"uncaught errors in the page: {self.errors}"


@pytest.fixture
def ui(browser: object, ui_stack: Stack) -> Iterator[UI]:
    session = UI(browser, ui_stack)
    yield session
    session.close()


@pytest.fixture
def repo_name(request: pytest.FixtureRequest) -> str:
    return f"ui-{uuid.uuid4().hex[:8]}"
