"""The Pull requests tab in a real browser: one opened from Compare & merge, its changes, merged from its page;
the list's status filter; another closed and reopened."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from .conftest import UI, Stack


def arrange(stack: Stack, repo: str) -> None:
    namespace = stack.api("GET", "/config").json()["storage_config"]["default_namespace_prefix"] + "/" + repo
    assert stack.api("POST", "/repositories", json={"name": repo, "storage_namespace": namespace}).status_code == 201
    for branch in ("feature", "other"):
        created = stack.api("POST", f"/repositories/{repo}/branches", json={"name": branch, "source": "main"})
        assert created.status_code == 201
        upload = stack.api(
            "POST", f"/repositories/{repo}/branches/{branch}/objects", params={"path": f"{branch}/a.csv"}, data=b"1,2\n"
        )
        assert upload.status_code == 201
        commit = stack.api(
            "POST", f"/repositories/{repo}/branches/{branch}/commits", json={"message": f"{branch} data"}
        )
        assert commit.status_code == 201


def test_open_review_and_merge_a_pull_request(ui: UI, ui_stack: Stack, repo_name: str) -> None:
    arrange(ui_stack, repo_name)
    ui.login()
    ui.open(f"repositories/{repo_name}/compare?base=main&compare=feature")
    ui.page.get_by_role("button", name="Open pull request").click()
    dialog = ui.page.get_by_role("dialog", name="Pull request: feature into main")
    dialog.get_by_label("Title").fill("Add the feature data")
    dialog.get_by_label("Description").fill("One CSV file for the feature.")
    dialog.get_by_role("button", name="Open pull request").click()

    pull = ui.page.get_by_role("article", name="Pull request")
    expect(pull.get_by_role("heading", name=re.compile("Add the feature data"))).to_be_visible()
    expect(pull.get_by_text("One CSV file for the feature.")).to_be_visible()
    expect(pull.get_by_role("cell", name="feature/a.csv")).to_be_visible()
    ui.shot("pull-request")
    pull.get_by_role("button", name="Merge pull request").click()
    expect(pull.get_by_role("status")).to_contain_text(re.compile(r"Merged as [0-9a-f]{12}"))
    expect(pull.locator(".badge.pr-merged")).to_be_visible()
    ui.shot("pull-request-merged")
    listed = ui_stack.api("GET", f"/repositories/{repo_name}/pulls", params={"status": "closed"}).json()["results"]
    assert [(p["title"], p["status"]) for p in listed] == [("Add the feature data", "merged")]
    main = ui_stack.api("GET", f"/repositories/{repo_name}/branches/main").json()["commit_id"]
    assert ui_stack.api("GET", f"/repositories/{repo_name}/pulls/{listed[0]['id']}").json()["merged_commit_id"] == main

    # Another, opened through the API, closed and reopened from its page; the list filters by status.
    other = ui_stack.api(
        "POST",
        f"/repositories/{repo_name}/pulls",
        json={"title": "Other data", "source_branch": "other", "destination_branch": "main"},
    ).json()["id"]
    ui.page.get_by_role("link", name="Pull requests", exact=True).click()
    table = ui.page.get_by_role("table", name="Pull requests")
    expect(table.get_by_role("link", name="Other data")).to_be_visible()
    expect(table.get_by_role("link", name="Add the feature data")).to_have_count(0)
    ui.shot("pull-requests")
    table.get_by_role("link", name="Other data").click()
    ui.page.get_by_role("button", name="Close pull request").click()
    expect(ui.page.locator(".badge.pr-closed")).to_be_visible()
    assert ui_stack.api("GET", f"/repositories/{repo_name}/pulls/{other}").json()["status"] == "closed"
    ui.page.get_by_role("button", name="Reopen").click()
    expect(ui.page.locator(".badge.pr-open")).to_be_visible()
    ui.page.get_by_role("link", name="← All pull requests").click()
    ui.page.get_by_role("link", name="All", exact=True).click()
    expect(ui.page.get_by_role("table", name="Pull requests").get_by_role("row")).to_have_count(3)
