"""Hooks in the browser: a pre-merge webhook (a local server on 127.0.0.1) refuses a merge and the compare page
shows the failing hook and its output; the Actions tab lists the runs, filters them and shows each hook's
output; once the check passes the merge lands and its commit shows its post-merge run."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError
from playwright.sync_api import expect

from tests.api.hook_server import HookServer, start_hook_server

from .conftest import UI, Stack
from .test_flows import arrange_repository, pick_ref

REFUSAL = "quality check failed: 2 rows have no population"


@pytest.fixture
def hooks() -> Iterator[HookServer]:
    state, server = start_hook_server()
    yield state
    server.shutdown()
    server.server_close()


def _action(url: str) -> bytes:
    return f"""name: data quality
on:
  pre-merge:
    branches: [main]
  post-merge:
    branches: [main]
hooks:
  - id: quality_check
    type: webhook
    properties:
      url: "{url}/quality"
      timeout: 5s
""".encode()


def test_a_refused_merge_shows_the_hook_and_the_actions_tab_its_run(
    ui: UI, ui_stack: Stack, repo_name: str, hooks: HookServer
) -> None:
    hooks.on("/quality", 400, REFUSAL)
    arrange_repository(
        ui_stack,
        repo_name,
        {"cities.csv": b"city,population\nLisbon,545923\n", "_lakefs_actions/quality.yaml": _action(hooks.url)},
    )
    api = ui_stack.api
    assert api("POST", f"/repositories/{repo_name}/branches", json={"name": "bad", "source": "main"}).status_code == 201
    api(
        "POST",
        f"/repositories/{repo_name}/branches/bad/objects",
        params={"path": "cities.csv"},
        data=b"city,population\nLisbon,545923\nFaro,\nBraga,\n",
    )
    assert api("POST", f"/repositories/{repo_name}/branches/bad/commits", json={"message": "more cities"}).ok
    head = api("GET", f"/repositories/{repo_name}/branches/main").json()["commit_id"]

    ui.login()
    ui.open(f"repositories/{repo_name}/compare")
    pick_ref(ui, "Compare (source)", "bad")
    ui.page.get_by_role("button", name="Merge", exact=True).click()
    refusal = ui.page.locator(".hook-refusal")
    expect(refusal).to_contain_text("Refused by a hook")
    expect(ui.page.locator(".error, [role=alert]").first).to_contain_text("pre-merge hook aborted")
    expect(refusal.locator(".hook-output")).to_contain_text(REFUSAL)
    expect(refusal).to_contain_text("quality_check")
    ui.shot("hooks-merge-refused")
    # Refused: main did not move, and the hook got lakeFS's pre-merge payload.
    assert api("GET", f"/repositories/{repo_name}/branches/main").json()["commit_id"] == head
    (payload,) = hooks.bodies("/quality")
    assert payload["event_type"] == "pre-merge" and payload["source_ref"] == "bad"

    # The run the refusal names, then the Actions tab with it, filtered by branch.
    # The compare view re-reads its diff after a merge attempt, which may re-render the refusal under a click on a
    # loaded machine: click again until the run's page is the one shown.
    for _ in range(3):
        refusal.get_by_role("link").first.click()
        try:
            ui.page.wait_for_url(re.compile(r".*/actions/.+"), timeout=5_000)
            break
        except PlaywrightTimeoutError:
            continue
    expect(ui.page.locator("h2").filter(has_text="failed")).to_have_count(1)
    expect(ui.page.locator(".hook-output")).to_contain_text(REFUSAL)
    ui.page.get_by_role("link", name="Actions", exact=True).click()
    runs = ui.page.locator("table.runs tbody tr")
    expect(runs).to_have_count(1)
    expect(runs.first).to_contain_text("pre-merge")
    expect(runs.first).to_contain_text("failed")
    ui.shot("hooks-actions-tab")
    ui.page.get_by_label("Filter by branch").fill("bad")
    ui.page.get_by_role("button", name="Filter").click()
    expect(ui.page.locator("p.empty")).to_contain_text("No action runs match the filter")

    # The check passes now: the merge lands, and its commit shows the post-merge run.
    hooks.on("/quality", 200, "ok")
    ui.open(f"repositories/{repo_name}/compare?compare=bad")
    ui.page.get_by_role("button", name="Merge", exact=True).click()
    expect(ui.page.get_by_role("status")).to_contain_text("Merged")
    merged = api("GET", f"/repositories/{repo_name}/branches/main").json()["commit_id"]
    assert merged != head
    ui.open(f"repositories/{repo_name}/commits/{merged}")
    commit_runs = ui.page.locator(".commit-runs tbody tr")
    expect(commit_runs).to_have_count(1)
    expect(commit_runs.first).to_contain_text("post-merge")
    expect(commit_runs.first).to_contain_text("completed")
    ui.shot("hooks-commit-runs")
    ui.open(f"repositories/{repo_name}/actions")
    expect(ui.page.locator("table.runs tbody tr")).to_have_count(3)
    expect(ui.page.locator("table.runs tbody tr", has_text=re.compile("pre-merge.*completed"))).to_have_count(1)
