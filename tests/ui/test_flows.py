"""The flows of issue 14 in a real browser: log in, create a repository, upload, commit, preview, branch,
conflict, merge, tag, GC rules, a Viewer who is offered no writes, and errors shown as messages."""

from __future__ import annotations

import hashlib
import io
import re
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from playwright.sync_api import expect

from .conftest import UI, Stack

CSV = "city,population\nLisbon,545923\nPorto,231800\n"


PARQUET_ROWS = 20_000


def parquet_bytes() -> bytes:
    """About 1.5 MB in ten row groups: a preview that reads only what it needs reads far less than that."""
    rows = range(1, PARQUET_ROWS + 1)
    table = pa.table(
        {
            "id": pa.array(rows, pa.int64()),
            "name": [f"row-{i}" for i in rows],
            "digest": [hashlib.sha256(str(i).encode()).hexdigest() for i in rows],
        }
    )
    sink = io.BytesIO()
    pq.write_table(table, sink, row_group_size=2_000)
    return sink.getvalue()


def create_repository(ui: UI, name: str) -> None:
    ui.open("repositories")
    ui.page.get_by_role("button", name="Create repository").click()
    dialog = ui.page.get_by_role("dialog", name="Create repository")
    dialog.get_by_label("Repository ID").fill(name)
    # The namespace follows the name under the server's default_namespace_prefix.
    expect(dialog.get_by_label("Storage namespace")).to_have_value(re.compile(rf"^s3://[^/]+/{name}$"))
    expect(dialog.get_by_label("Default branch")).to_have_value("main")
    dialog.get_by_role("button", name="Create repository").click()
    expect(ui.page.get_by_role("heading", name=re.compile(name))).to_be_visible()


def upload(ui: UI, files: list[tuple[str, str, bytes]]) -> None:
    ui.page.get_by_label("Upload files").set_input_files(
        [{"name": name, "mimeType": mime, "buffer": data} for name, mime, data in files]
    )
    for name, _, _ in files:
        expect(ui.page.locator(".upload-row", has_text=name)).to_contain_text("done")


def commit(ui: UI, message: str, metadata: dict[str, str] | None = None) -> None:
    ui.page.get_by_role("link", name="Uncommitted changes").click()
    ui.page.get_by_role("button", name="Commit changes").click()
    dialog = ui.page.get_by_role("dialog")
    dialog.get_by_label("Commit message").fill(message)
    for i, (key, value) in enumerate((metadata or {}).items(), start=1):
        dialog.get_by_role("button", name="Add key/value").click()
        dialog.get_by_label(f"Metadata key {i}").fill(key)
        dialog.get_by_label(f"Metadata value {i}").fill(value)
    dialog.get_by_role("button", name="Commit").click()
    # A commit that runs as the workflow (moto's interpreter on a busy machine) may take a while.
    expect(ui.page.get_by_role("status")).to_contain_text("Committed", timeout=90_000)


def test_upload_commit_and_preview(ui: UI, ui_stack: Stack, repo_name: str) -> None:
    ui.login()
    create_repository(ui, repo_name)
    ui.shot("objects-empty")
    upload(
        ui,
        [
            ("cities.csv", "text/csv", CSV.encode()),
            ("numbers.parquet", "application/octet-stream", parquet_bytes()),
            ("scratch.txt", "text/plain", b"not for the commit"),
        ],
    )
    # Presigned straight to the store (moto answers CORS), linked through staging/backing.
    expect(ui.page.locator(".upload-row", has_text="cities.csv")).to_contain_text("direct to S3")

    ui.page.get_by_role("link", name="Uncommitted changes").click()
    rows = ui.page.locator("tbody tr")
    expect(rows).to_have_count(3)
    ui.page.get_by_role("button", name="Reset scratch.txt").click()
    ui.page.get_by_role("dialog").get_by_role("button", name="Reset").click()
    expect(rows).to_have_count(2)
    expect(rows.filter(has_text="cities.csv")).to_contain_text("added")
    expect(rows.filter(has_text="numbers.parquet")).to_contain_text("added")
    ui.shot("uncommitted-changes")
    commit(ui, "First data", {"source": "ui-test"})
    # Two changes: above the stack's workflow threshold, so the commit answered 202 and the UI followed it.
    expect(ui.page.get_by_role("status")).to_contain_text("ran as a workflow")

    log = ui_stack.api("GET", f"/repositories/{repo_name}/refs/main/commits").json()["results"]
    assert log[0]["message"] == "First data" and log[0]["metadata"] == {"source": "ui-test"}

    ui.page.get_by_role("link", name="Objects").click()
    ui.page.get_by_role("link", name="cities.csv", exact=True).click()
    preview = ui.page.get_by_role("region", name="Preview")
    expect(preview.locator("th", has_text="population")).to_be_visible()
    expect(preview.locator("td", has_text="Lisbon")).to_be_visible()
    expect(ui.page.get_by_role("region", name="Object cities.csv")).to_contain_text("text/csv")
    ui.shot("preview-csv")
    with ui.page.expect_download() as download:
        ui.page.get_by_role("region", name="Object cities.csv").get_by_role("link", name="Download").click()
    assert download.value.path().read_text(encoding="utf-8") == CSV

    ui.page.get_by_role("link", name="numbers.parquet", exact=True).click()
    preview = ui.page.get_by_role("region", name="Preview")
    expect(preview.locator("table.schema")).to_contain_text("name")
    expect(preview.locator("td", has_text="row-1").first).to_be_visible()
    expect(preview).to_contain_text(f"of {PARQUET_ROWS} rows")
    # Range requests: the footer and the first row group, not the whole file.
    read_note = preview.locator(".parquet-bytes").inner_text()
    match = re.search(r"Read ([\d.]+) KiB of ([\d.]+) MiB", read_note)
    assert match, read_note
    assert float(match[1]) * 1024 < float(match[2]) * 1024 * 1024 / 4, read_note
    ui.shot("preview-parquet")


def arrange_repository(stack: Stack, name: str, files: dict[str, bytes]) -> None:
    """A repository with one commit of ``files`` on main, made through the API (the flows under test come after)."""
    prefix = stack.api("GET", "/config/storage").json()["default_namespace_prefix"]
    created = stack.api("POST", "/repositories", json={"name": name, "storage_namespace": f"{prefix}/{name}"})
    assert created.status_code == 201, created.text
    for path, data in files.items():
        uploaded = stack.api("POST", f"/repositories/{name}/branches/main/objects", params={"path": path}, data=data)
        assert uploaded.status_code == 201, uploaded.text
    committed = stack.api("POST", f"/repositories/{name}/branches/main/commits", json={"message": "Seed"})
    if committed.status_code == 202:  # above the stack's workflow threshold: wait for the workflow
        status_url = f"/repositories/{name}/branches/main/commits/status"
        deadline = time.monotonic() + 90
        while not stack.api("GET", status_url, params={"id": committed.json()["id"]}).json()["completed"]:
            assert time.monotonic() < deadline, "the seed commit did not finish"
            time.sleep(0.3)
    else:
        assert committed.status_code == 201, committed.text


def pick_ref(ui: UI, label: str, value: str) -> None:
    box = ui.page.get_by_label(label, exact=True)
    box.fill(value)
    box.press("Enter")


def test_branch_conflict_preview_and_merge_with_a_strategy(ui: UI, ui_stack: Stack, repo_name: str) -> None:
    arrange_repository(ui_stack, repo_name, {"cities.csv": CSV.encode()})
    ui.login()
    ui.open(f"repositories/{repo_name}/branches")
    ui.page.get_by_role("button", name="Create branch").click()
    dialog = ui.page.get_by_role("dialog")
    dialog.get_by_label("Branch name").fill("feature")
    expect(dialog.get_by_label("From ref")).to_have_value("main")
    dialog.get_by_role("button", name="Create branch").click()
    expect(ui.page.get_by_role("row", name=re.compile("feature"))).to_be_visible()

    # The same file changed on both sides, each committed.
    for branch, text in (("feature", CSV + "Faro,64560\n"), ("main", CSV + "Braga,193333\n")):
        ui.open(f"repositories/{repo_name}/objects?ref={branch}")
        upload(ui, [("cities.csv", "text/csv", text.encode())])
        commit(ui, f"Add a city on {branch}")

    ui.page.get_by_role("link", name="Compare & merge").click()
    pick_ref(ui, "Compare (source)", "feature")
    # The three-dot diff already flags the path changed on both sides; its counts come first, above the merge.
    expect(ui.page.locator("tbody tr", has_text="cities.csv").first).to_contain_text("conflict")
    expect(ui.page.locator(".diff-summary")).to_have_text("1 change: 1 conflict")
    summary_y = ui.page.locator(".diff-summary").bounding_box()["y"]  # type: ignore[index]
    merge_y = ui.page.get_by_role("region", name="Merge").bounding_box()["y"]  # type: ignore[index]
    list_y = ui.page.get_by_role("region", name="Changes").bounding_box()["y"]  # type: ignore[index]
    assert summary_y < merge_y < list_y
    ui.page.get_by_role("button", name="Preview merge").click()
    summary = ui.page.locator(".preview-result")
    expect(summary).to_contain_text("1 conflict (1 unresolved)")
    conflict = summary.locator("tr.conflict-row", has_text="cities.csv")
    expect(conflict).to_contain_text("source changed")
    expect(conflict).to_contain_text("destination changed")
    ui.shot("merge-preview")

    # Merging without a strategy fails with the conflict list; resolving the path lets it through.
    ui.page.get_by_role("button", name="Merge", exact=True).click()
    expect(ui.page.get_by_role("alert")).to_contain_text("409")
    ui.page.get_by_label("Resolution of cities.csv").select_option("source-wins")
    ui.shot("merge-conflicts")
    ui.page.get_by_role("button", name="Merge again").click()
    expect(ui.page.get_by_role("status")).to_contain_text("Merged")
    # The diff is read again after the merge: feature has nothing main lacks now.
    expect(ui.page.locator(".diff-summary")).to_have_text("No differences.")
    expect(ui.page.get_by_role("region", name="Changes")).to_contain_text("No differences.")
    merged = ui_stack.api("GET", f"/repositories/{repo_name}/refs/main/objects", params={"path": "cities.csv"}).text
    assert "Faro" in merged and "Braga" not in merged

    ui.page.get_by_role("link", name="See the log of main").click()
    first = ui.page.locator("ol.commits li").first
    expect(first).to_contain_text("Merge")
    expect(first).to_contain_text("merge")
    ui.shot("commits")
    first.locator("a.commit-message").click()
    expect(ui.page.locator("a.parent")).to_have_count(2)
    expect(ui.page.locator("tbody tr", has_text="cities.csv")).to_contain_text("changed")
    ui.shot("commit-details")

    # Revert the merge (mainline: parent 1) onto main: main's own version of the file comes back.
    ui.page.get_by_role("button", name="Revert").click()
    dialog = ui.page.get_by_role("dialog")
    expect(dialog.get_by_label("Parent number (mainline)")).to_have_value("1")
    dialog.get_by_role("button", name="Revert").click()
    expect(ui.page.get_by_role("status")).to_contain_text("Reverted")
    reverted = ui_stack.api("GET", f"/repositories/{repo_name}/refs/main/objects", params={"path": "cities.csv"}).text
    assert "Braga" in reverted and "Faro" not in reverted


def test_folder_upload_tag_browse_at_the_tag_and_edit_gc_rules(
    ui: UI, ui_stack: Stack, repo_name: str, tmp_path: Path
) -> None:
    arrange_repository(
        ui_stack, repo_name, {"data/cities.csv": CSV.encode(), "README.md": b"# Cities\n\n**Bold** <b>not html</b>\n"}
    )
    ui.login()
    # A folder keeps its inner paths; staged on main, so not in the tag made next.
    folder = tmp_path / "batch"
    (folder / "inner").mkdir(parents=True)
    (folder / "one.txt").write_text("one")
    (folder / "inner" / "two.txt").write_text("two")
    ui.open(f"repositories/{repo_name}/objects")
    ui.page.get_by_label("Upload folder").set_input_files(folder)
    expect(ui.page.locator(".upload-row", has_text="batch/inner/two.txt")).to_contain_text("done")
    ui.page.get_by_role("link", name="batch/").click()
    expect(ui.page.get_by_role("link", name="inner/")).to_be_visible()
    expect(ui.page.get_by_role("link", name="one.txt", exact=True)).to_be_visible()

    ui.open(f"repositories/{repo_name}/tags")
    ui.page.get_by_role("button", name="Create tag").click()
    dialog = ui.page.get_by_role("dialog")
    dialog.get_by_label("Tag name").fill("v1")
    dialog.get_by_role("button", name="Create tag").click()
    ui.page.get_by_role("link", name="v1", exact=True).click()
    # At a tag the tree is read-only: nothing to upload, and the path browser works.
    expect(ui.page.get_by_label("Ref", exact=True)).to_have_value("v1")
    expect(ui.page.get_by_label("Upload files")).to_have_count(0)
    expect(ui.page.get_by_role("link", name="batch/")).to_have_count(0)
    ui.page.get_by_role("link", name="data/").click()
    expect(ui.page.locator(".crumbs")).to_contain_text("data")
    expect(ui.page.get_by_role("link", name="cities.csv", exact=True)).to_be_visible()
    ui.page.locator(".crumbs a").first.click()
    ui.page.get_by_role("link", name="README.md", exact=True).click()
    markdown = ui.page.locator(".markdown")
    expect(markdown.locator("h3")).to_have_text("Cities")
    expect(markdown.locator("strong")).to_have_text("Bold")
    expect(markdown).to_contain_text("<b>not html</b>")  # shown as text, never as markup
    ui.shot("objects-at-tag")

    ui.page.get_by_role("link", name="Settings").click()
    ui.page.get_by_label("Default retention (days)").fill("21")
    ui.page.get_by_role("button", name="Add key/value").first.click()
    ui.page.get_by_label("Per-branch retention (branch, days) key 1").fill("main")
    ui.page.get_by_label("Per-branch retention (branch, days) value 1").fill("60")
    ui.page.get_by_role("button", name="Save GC rules").click()
    expect(ui.page.get_by_role("status")).to_contain_text("GC rules saved")
    ui.shot("settings")
    rules = ui_stack.api("GET", f"/repositories/{repo_name}/settings/gc_rules").json()
    assert rules == {"default_retention_days": 21, "branches": [{"branch_id": "main", "retention_days": 60}]}
    ui.page.reload()
    expect(ui.page.get_by_label("Default retention (days)")).to_have_value("21")


def test_a_viewer_is_offered_no_writes(ui: UI, browser: object, ui_stack: Stack, repo_name: str) -> None:
    arrange_repository(ui_stack, repo_name, {"cities.csv": CSV.encode()})
    user = f"viewer-{repo_name[3:]}"
    ui.login()
    ui.open("admin/users")
    ui.page.get_by_role("button", name="Create user").click()
    dialog = ui.page.get_by_role("dialog")
    dialog.get_by_label("User ID").fill(user)
    expect(dialog.get_by_label("Add to group")).to_have_value("Viewers")
    dialog.get_by_role("button", name="Create user").click()
    ui.page.get_by_role("link", name=user, exact=True).click()
    expect(ui.page.locator(".card-section", has_text="Groups")).to_contain_text("Viewers")
    ui.page.get_by_role("button", name="Create access key").click()
    key = ui.page.locator("#new-key-id").inner_text()
    secret = ui.page.locator("#new-key-secret").inner_text()
    ui.shot("access-key-once")
    ui.page.get_by_role("button", name="Done").click()

    # The policy editor checks the document before it can be saved.
    ui.page.get_by_role("navigation", name="Administration").get_by_role("link", name="Policies").click()
    ui.page.get_by_role("button", name="Create policy").click()
    editor = ui.page.get_by_label("Policy document (JSON)")
    policy = f"ReadCities{repo_name[3:]}"
    editor.fill(
        f'{{"id": "{policy}", "statement": [{{"effect": "allow", "action": ["fsReadObject"], "resource": "*"}}]}}'
    )
    expect(ui.page.locator("#policy-problems")).to_contain_text('unknown action "fsReadObject"')
    expect(ui.page.get_by_role("button", name="Save policy")).to_be_disabled()
    ui.shot("policy-editor")
    editor.fill(
        f'{{"id": "{policy}", "statement": [{{"effect": "allow", "action": ["fs:ReadObject"], "resource": "*"}}]}}'
    )
    ui.page.get_by_role("button", name="Save policy").click()
    expect(ui.page.get_by_role("button", name=policy, exact=True)).to_be_visible()
    ui.page.get_by_role("button", name="Log out").click()
    expect(ui.page.get_by_label("Access key ID")).to_be_visible()

    ui.login(key, secret)
    expect(ui.page.get_by_role("link", name="Administration")).to_have_count(0)
    expect(ui.page.get_by_role("button", name="Create repository")).to_have_count(0)
    expect(ui.page.get_by_role("button", name=re.compile("^Delete repository"))).to_have_count(0)
    ui.open(f"repositories/{repo_name}/objects")
    expect(ui.page.get_by_role("link", name="cities.csv", exact=True)).to_be_visible()  # reading is allowed
    expect(ui.page.get_by_label("Upload files")).to_have_count(0)
    expect(ui.page.get_by_role("button", name=re.compile("^(Delete|Copy) "))).to_have_count(0)
    ui.shot("viewer-objects")
    ui.page.get_by_role("link", name="Uncommitted changes").click()
    expect(ui.page.get_by_text("No uncommitted changes")).to_be_visible()
    expect(ui.page.get_by_role("button", name="Commit changes")).to_have_count(0)
    ui.page.get_by_role("link", name="Branches").click()
    expect(ui.page.get_by_role("row", name=re.compile("main"))).to_be_visible()
    expect(ui.page.get_by_role("button", name="Create branch")).to_have_count(0)
    expect(ui.page.get_by_role("button", name=re.compile("^(Delete|Reset) branch"))).to_have_count(0)

    # What a Viewer reaches anyway answers with a readable 403, never a blank page.
    ui.open("admin/users")
    expect(ui.page.get_by_role("alert")).to_contain_text("Not allowed")
    expect(ui.page.get_by_role("button", name="Create user")).to_have_count(0)
    ui.shot("viewer-forbidden")


def test_a_wrong_secret_at_login_says_so(ui: UI, ui_stack: Stack) -> None:
    key, _ = ui_stack.admin
    ui.open()
    ui.page.get_by_label("Access key ID").fill(key)
    ui.page.get_by_label("Secret access key").fill("not-the-secret")
    ui.page.get_by_role("button", name="Log in").click()
    alert = ui.page.get_by_role("alert")
    expect(alert).to_contain_text("Wrong access key ID or secret access key")
    expect(alert).not_to_contain_text("session")
    ui.shot("login-wrong-secret")


def test_a_failed_request_shows_its_message(ui: UI, ui_stack: Stack) -> None:
    ui.login()
    expect(ui.page.locator(".card").first).to_be_visible()
    ui.shot("repositories")  # the repositories the flows above made
    ui.open("repositories/no-such-repository/objects")
    expect(ui.page.get_by_role("alert")).to_contain_text("404")
    expect(ui.page.get_by_role("alert")).to_contain_text("not found")
    ui.open("repositories")
    ui.page.get_by_role("button", name="Create repository").click()
    dialog = ui.page.get_by_role("dialog")
    dialog.get_by_label("Repository ID").fill("bad-namespace")
    dialog.get_by_label("Storage namespace").fill("gs://elsewhere/bad")
    dialog.get_by_role("button", name="Create repository").click()
    alert = dialog.get_by_role("alert")
    expect(alert).to_contain_text("400")
    message = ui_stack.api(
        "POST", "/repositories", json={"name": "bad-namespace", "storage_namespace": "gs://elsewhere/bad"}
    ).json()["message"]
    expect(alert).to_contain_text(message)  # the server's own words
    ui.shot("error-message")
    ui.page.keyboard.press("Escape")  # keyboard: Escape closes a dialog, focus goes back to what opened it
    expect(ui.page.get_by_role("dialog")).to_have_count(0)
    expect(ui.page.get_by_role("button", name="Create repository")).to_be_focused()


def test_usable_at_390_px(browser: object, ui_stack: Stack, repo_name: str) -> None:
    arrange_repository(ui_stack, repo_name, {"data/cities.csv": CSV.encode()})
    phone = UI(browser, ui_stack, width=390, height=844)
    try:
        phone.login()
        for hash_path in (
            "repositories",
            f"repositories/{repo_name}/objects?prefix=data%2F&path=data%2Fcities.csv",
            f"repositories/{repo_name}/commits",
            f"repositories/{repo_name}/compare?compare=main",
        ):
            phone.open(hash_path)
            phone.page.locator("main").wait_for()
            phone.page.wait_for_load_state("networkidle")
            # Nothing wider than the screen: no sideways scrolling of the page itself.
            assert phone.page.evaluate("document.documentElement.scrollWidth") <= 390, hash_path
        phone.open(f"repositories/{repo_name}/objects?prefix=data%2F&path=data%2Fcities.csv")
        expect(phone.page.locator("td", has_text="Lisbon")).to_be_visible()
        phone.shot("phone-objects")
    finally:
        phone.close()


def test_the_banner_names_the_ui(ui_stack: Stack) -> None:
    assert f"Web UI              {ui_stack.local.endpoint}/" in ui_stack.local.banner


def test_a_folders_readme_renders_under_its_listing_and_a_new_page_starts_at_its_top(
    ui: UI, ui_stack: Stack, repo_name: str
) -> None:
    files = {f"many/file-{i:03d}.txt": b"x" for i in range(105)}
    files["many/README.md"] = b"# About many\n\nA folder of **105** files.\n"
    arrange_repository(ui_stack, repo_name, files)
    ui.login()
    ui.page.set_viewport_size({"width": 1280, "height": 600})
    ui.open(f"repositories/{repo_name}/objects?ref=main&prefix=many%2F")
    readme = ui.page.get_by_role("region", name="README")
    expect(readme.get_by_role("heading", name="About many")).to_be_visible()
    expect(readme.locator(".markdown strong")).to_have_text("105")
    ui.page.get_by_role("button", name="Next").scroll_into_view_if_needed()
    assert ui.page.evaluate("window.scrollY") > 0
    ui.page.get_by_role("button", name="Next").click()
    expect(ui.page.get_by_role("link", name="file-099.txt", exact=True)).to_be_visible()
    assert ui.page.evaluate("window.scrollY") == 0
    # The README was listed on the first page; it still shows under the second.
    expect(readme.get_by_role("heading", name="About many")).to_be_visible()
    ui.open(f"repositories/{repo_name}/objects?ref=main")
    expect(ui.page.get_by_role("link", name="many/", exact=True)).to_be_visible()
    expect(ui.page.get_by_role("region", name="README")).to_have_count(0)
    ui.shot("folder-readme")
