"""The objects page's Import dialog in a real browser: source, destination and message, the progress, then the
resulting commit and the imported objects in the listing; a source the deployment does not allow shows the
server's message."""

from __future__ import annotations

import contextlib
import re

import boto3
from playwright.sync_api import expect

from tests.e2e.s3support import moto_endpoint

from .conftest import UI, Stack
from .test_flows import create_repository

SOURCE = "ui-import-source"


def seed(stack: Stack, files: dict[str, bytes]) -> None:
    local = stack.local
    s3 = boto3.client(
        "s3",
        endpoint_url=moto_endpoint(local),
        region_name="us-east-1",
        aws_access_key_id=local.aws_access_key_id,
        aws_secret_access_key=local.aws_secret_access_key,
    )
    with contextlib.suppress(s3.exceptions.BucketAlreadyOwnedByYou):
        s3.create_bucket(Bucket=SOURCE)
    for key, data in files.items():
        s3.put_object(Bucket=SOURCE, Key=key, Body=data)


def test_import_dialog_imports_and_shows_the_commit(ui: UI, ui_stack: Stack, repo_name: str) -> None:
    seed(ui_stack, {f"{repo_name}/events/2024/a.json": b'{"a": 1}', f"{repo_name}/events/2025/b.json": b'{"b": 2}'})
    ui.login()
    create_repository(ui, repo_name)
    ui.page.get_by_role("button", name="Import").click()
    dialog = ui.page.get_by_role("dialog", name="Import data from S3")
    dialog.get_by_label("Import from").fill(f"s3://{SOURCE}/{repo_name}/events/")
    dialog.get_by_label("Destination").fill("events/")
    dialog.get_by_label("Commit message").fill("Events from the landing bucket")
    ui.shot("import-dialog")
    dialog.get_by_role("button", name="Import", exact=True).click()
    expect(dialog.get_by_role("status")).to_contain_text(re.compile(r"Imported 2 objects: commit [0-9a-f]{12}"))
    # The listing behind the dialog already shows what the import brought in.
    expect(ui.page.locator("main, #app").get_by_role("link", name="events/").first).to_be_visible()
    ui.shot("import-done")
    log = ui_stack.api("GET", f"/repositories/{repo_name}/refs/main/commits").json()["results"]
    # As lakeFS's import: one commit on the branch, one parent, the commit built on _main_imported itself.
    assert log[0]["id"] == ui_stack.api("GET", f"/repositories/{repo_name}/branches/_main_imported").json()["commit_id"]
    assert len(log[0]["parents"]) == 1 and log[0]["parents"][0] == log[1]["id"]
    assert log[0]["message"] == "Events from the landing bucket"
    dialog.get_by_role("link", name=log[0]["id"][:12]).wait_for()
    dialog.get_by_text("Close", exact=True).click()
    ui.page.get_by_role("link", name="events/").click()
    expect(ui.page.get_by_role("link", name="2024/")).to_be_visible()
    expect(ui.page.get_by_role("link", name="2025/")).to_be_visible()


def test_import_dialog_shows_why_a_source_is_refused(ui: UI, ui_stack: Stack, repo_name: str) -> None:
    ui.login()
    create_repository(ui, repo_name)
    ui.page.get_by_role("button", name="Import").click()
    dialog = ui.page.get_by_role("dialog", name="Import data from S3")
    dialog.get_by_label("Import from").fill("s3://not-allowed-bucket/data/")
    dialog.get_by_role("button", name="Import", exact=True).click()
    expect(dialog.locator(".error, [role=alert]").first).to_contain_text("LAKELET_IMPORT_ALLOWED_LOCATIONS")
