"""The quickstart README as a newcomer first sees it: rendered in the web UI, its table as a table and its code
as a code block (the sample dataset's README, chalicelib/samples/documents.py)."""

from __future__ import annotations

from playwright.sync_api import expect

from .conftest import UI, Stack


def test_sample_repository_readme_renders_its_table_and_code(ui: UI, ui_stack: Stack, repo_name: str) -> None:
    prefix = ui_stack.api("GET", "/config/storage").json()["default_namespace_prefix"]
    created = ui_stack.api(
        "POST",
        "/repositories",
        json={
            "name": repo_name,
            "storage_namespace": prefix.rstrip("/") + "/" + repo_name,
            "sample_data": True,
        },
    )
    assert created.status_code == 201, created.text
    ui.login()
    ui.open(f"repositories/{repo_name}/objects")
    expect(ui.page.get_by_role("link", name="images/")).to_be_visible()
    # Rendered under the listing, as lakeFS does, before anyone opens it.
    folder_readme = ui.page.get_by_role("region", name="README")
    expect(folder_readme.locator(".markdown h3").first).to_have_text(f"Quickstart: {repo_name}")
    ui.page.get_by_role("link", name="README.md", exact=True).click()
    markdown = ui.page.get_by_role("region", name="Preview").locator(".markdown")
    expect(markdown.locator("h3").first).to_have_text(f"Quickstart: {repo_name}")
    table = markdown.locator("table")
    expect(table.locator("thead th")).to_have_text(["path", "what"])
    expect(table.locator("tbody tr")).to_have_count(4)
    expect(table.locator("tbody tr td:first-child code")).to_have_text(
        ["lakes.parquet", "data/lakes.source.md", "images/", "README.md"]
    )
    expect(markdown.locator("pre code")).to_contain_text(f'lakefs.repository("{repo_name}")')
    expect(markdown).not_to_contain_text("| --- |")  # no pipe left unrendered
    markdown.locator("h4").first.scroll_into_view_if_needed()  # the shot shows the whole table and the code
    ui.shot("quickstart-readme")
