"""What a newcomer tripped on in the UI (issue 40): a merge preview that showed its change list twice, a Markdown
code block whose first line sat one space right of the others, the quickstart README rendered twice once
selected, and lakeFS's UI addresses answered with a JSON 404."""

from __future__ import annotations

import time

import requests
from playwright.sync_api import expect

from .conftest import UI, Stack
from .test_flows import arrange_repository, pick_ref

README = "# Notes\n\nRun this:\n\n```python\nimport lakefs\nrepo = lakefs.repository('x')\n    indented = True\n```\n"


def _wait_commit(stack: Stack, repo: str, branch: str, answer: requests.Response) -> None:
    if answer.status_code == 201:
        return
    assert answer.status_code == 202, answer.text
    deadline = time.monotonic() + 90
    status = f"/repositories/{repo}/branches/{branch}/commits/status"
    while not stack.api("GET", status, params={"id": answer.json()["id"]}).json()["completed"]:
        assert time.monotonic() < deadline, "the commit did not finish"
        time.sleep(0.3)


def test_a_merge_preview_shows_the_change_list_once(ui: UI, ui_stack: Stack, repo_name: str) -> None:
    arrange_repository(ui_stack, repo_name, {"base.csv": b"a\n"})
    created = ui_stack.api("POST", f"/repositories/{repo_name}/branches", json={"name": "feature", "source": "main"})
    assert created.status_code == 201, created.text
    for path in ("new-1.csv", "new-2.csv"):
        put = ui_stack.api(
            "POST", f"/repositories/{repo_name}/branches/feature/objects", params={"path": path}, data=b"x"
        )
        assert put.status_code == 201, put.text
    committed = ui_stack.api("POST", f"/repositories/{repo_name}/branches/feature/commits", json={"message": "two"})
    _wait_commit(ui_stack, repo_name, "feature", committed)
    ui.login()
    ui.open(f"repositories/{repo_name}/compare")
    pick_ref(ui, "Compare (source)", "feature")
    expect(ui.page.get_by_role("cell", name="new-1.csv", exact=True)).to_have_count(1)
    ui.page.get_by_role("button", name="Preview merge").click()
    expect(ui.page.locator(".preview-result")).to_contain_text("2 added")
    # One list of the changes: the preview's, which says what the merge would do; not the diff's beside it.
    expect(ui.page.get_by_role("cell", name="new-1.csv", exact=True)).to_have_count(1)
    expect(ui.page.get_by_role("cell", name="new-2.csv", exact=True)).to_have_count(1)
    # Merged, the diff of the refs is what the page shows again.
    ui.page.get_by_role("button", name="Merge", exact=True).click()
    expect(ui.page.get_by_role("status")).to_contain_text("Merged")
    expect(ui.page.locator(".preview-result")).to_have_count(0)
    expect(ui.page.get_by_role("region", name="Changes")).to_contain_text("No differences.")


def _line_starts(ui: UI, selector: str) -> list[float]:
    """The x of the first character of every line of the element's text, and of its first non-blank one."""
    starts = ui.page.eval_on_selector(
        selector,
        """(el) => {
          const node = el.firstChild
          const text = node.textContent
          const out = []
          for (let i = 0; i < text.length; i++) {
            if (i === 0 || text[i - 1] === '\\n') {
              if (text[i] === '\\n') continue
              let j = i
              while (text[j] === ' ') j++
              for (const k of [i, j]) {
                const range = document.createRange()
                range.setStart(node, k)
                range.setEnd(node, k + 1)
                out.push(range.getBoundingClientRect().left)
              }
            }
          }
          return out
        }""",
    )
    return [float(x) for x in starts]


def test_a_markdown_code_block_starts_every_line_in_one_column(ui: UI, ui_stack: Stack, repo_name: str) -> None:
    arrange_repository(ui_stack, repo_name, {"notes.md": README.encode()})
    ui.login()
    ui.open(f"repositories/{repo_name}/objects?ref=main&path=notes.md")
    code = ui.page.get_by_role("region", name="Preview").locator(".markdown pre code")
    expect(code).to_contain_text("import lakefs")
    first, _, second, _, third, third_text = _line_starts(ui, ".markdown pre code")
    assert abs(first - second) < 0.5, (first, second)  # the first line was padded like inline code
    assert abs(third - second) < 0.5 and third_text > second + 20  # indentation is in the text, not the box


def test_a_selected_readme_renders_once(ui: UI, ui_stack: Stack, repo_name: str) -> None:
    prefix = ui_stack.api("GET", "/config/storage").json()["default_namespace_prefix"]
    created = ui_stack.api(
        "POST",
        "/repositories",
        json={"name": repo_name, "storage_namespace": f"{prefix.rstrip('/')}/{repo_name}", "sample_data": True},
    )
    assert created.status_code == 201, created.text
    ui.login()
    ui.open(f"repositories/{repo_name}/objects")
    expect(ui.page.get_by_role("region", name="README", exact=True)).to_be_visible()
    ui.page.get_by_role("link", name="README.md", exact=True).click()
    expect(ui.page.get_by_role("region", name="Preview").locator(".markdown h3").first).to_be_visible()
    expect(ui.page.locator(".markdown h3", has_text=f"Quickstart: {repo_name}")).to_have_count(1)
    expect(ui.page.get_by_role("region", name="README", exact=True)).to_have_count(0)
    # Closed again, the folder's README is back under the listing.
    ui.page.get_by_role("button", name="Close").click()
    expect(ui.page.get_by_role("region", name="README", exact=True).locator(".markdown h3").first).to_have_text(
        f"Quickstart: {repo_name}"
    )


def test_lakefs_ui_addresses_open_our_pages(ui: UI, ui_stack: Stack, repo_name: str) -> None:
    arrange_repository(ui_stack, repo_name, {"lakes/data.csv": b"a\n", "top.txt": b"t"})
    ui.login()
    ui.page.goto(ui_stack.url + f"repositories/{repo_name}/objects?ref=main&path=lakes/")
    expect(ui.page.get_by_role("link", name="data.csv", exact=True)).to_be_visible()
    assert ui.page.url.endswith(f"/#/repositories/{repo_name}/objects?ref=main&prefix=lakes/"), ui.page.url
    ui.page.goto(ui_stack.url + f"repositories/{repo_name}/branches/")  # a trailing slash is one folder deeper
    expect(ui.page.get_by_role("row", name="main")).to_be_visible()
    # The API keeps its JSON 404s.
    for path in (f"/repositories/{repo_name}/objects-nope", "/repositories/x/branches/y/z/w"):
        answer = requests.get(ui_stack.local.api_url + path, auth=ui_stack.admin, timeout=30, allow_redirects=False)
        assert answer.status_code == 404 and answer.json() == {"message": "not found: no such API route"}
