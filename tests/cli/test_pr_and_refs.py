"""``lakelet pr ...``, ``lakelet refs-dump``, ``lakelet refs-restore`` and ``lakelet repo create-bare`` against one
``lakelet up`` stack: what they print, their exit codes, and what the server holds afterwards."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.cli.conftest import Result

pytestmark = pytest.mark.e2e
Cli = Callable[..., Result]


def _put(cli: Cli, tmp_path: Path, uri: str, text: str) -> None:
    source = tmp_path / f"src-{abs(hash((uri, text)))}"
    source.write_text(text)
    cli("fs", "upload", "--source", str(source), uri)


def test_pr_create_list_show_merge_close(cli: Cli, repo: str, tmp_path: Path) -> None:
    r = f"lakefs://{repo}"
    cli("branch", "create", f"{r}/feature", "--source", f"{r}/main")
    _put(cli, tmp_path, f"{r}/feature/a.csv", "1,2\n")
    cli("commit", f"{r}/feature", "-m", "add a")
    created = json.loads(cli("pr", "create", f"{r}/feature", f"{r}/main", "-t", "add a", "--json").stdout)
    pr_id = created["id"]
    assert cli("pr", "create", f"{r}/feature", f"{r}/main", "-t", "again").stdout.startswith("Pull request ")

    listed = cli("pr", "list", r, "--status", "open").stdout
    assert pr_id in listed and "feature" in listed and "STATUS" in listed
    shown = cli("pr", "show", r, pr_id).stdout
    assert f"ID: {pr_id}" in shown and "Status: open" in shown and "Title: add a" in shown

    merged = cli("pr", "merge", r, pr_id).stdout
    assert merged.startswith(f"Pull request {pr_id} merged: ")
    reference = merged.strip().rsplit(" ", 1)[1]
    shown = json.loads(cli("pr", "show", r, pr_id, "--json").stdout)
    assert shown["status"] == "merged" and shown["merged_commit_id"] == reference
    # Merging it again is refused by the server: exit 1 with its words.
    again = cli("pr", "merge", r, pr_id, code=1)
    assert "bad pull request status" in again.stderr

    [other] = json.loads(cli("pr", "list", r, "--status", "open", "--json").stdout)
    assert cli("pr", "close", r, other["id"]).stdout.strip() == f"Pull request {other['id']} closed"
    closed = json.loads(cli("pr", "list", r, "--status", "closed", "--json").stdout)
    assert {p["id"] for p in closed} == {pr_id, other["id"]}
    assert cli("pr", "reopen", r, other["id"]).stdout.strip() == f"Pull request {other['id']} reopened"
    assert cli("pr", "list", r, "--status", "shelved", code=2).exit_code == 2
    assert "not found" in cli("pr", "show", r, "0" * 20, code=1).stderr


def test_pr_merge_conflict_exits_3_with_the_table(cli: Cli, repo: str, tmp_path: Path) -> None:
    r = f"lakefs://{repo}"
    _put(cli, tmp_path, f"{r}/main/a.csv", "base")
    cli("commit", f"{r}/main", "-m", "base")
    cli("branch", "create", f"{r}/feature", "--source", f"{r}/main")
    _put(cli, tmp_path, f"{r}/feature/a.csv", "theirs")
    cli("commit", f"{r}/feature", "-m", "theirs")
    _put(cli, tmp_path, f"{r}/main/a.csv", "ours")
    cli("commit", f"{r}/main", "-m", "ours")
    pr_id = json.loads(cli("pr", "create", f"{r}/feature", f"{r}/main", "-t", "t", "--json").stdout)["id"]
    conflict = cli("pr", "merge", r, pr_id, code=3)
    assert "a.csv" in conflict.stdout + conflict.stderr
    cli("pr", "merge", r, pr_id, "--strategy", "source-wins")
    assert json.loads(cli("pr", "show", r, pr_id, "--json").stdout)["status"] == "merged"


def test_refs_dump_create_bare_and_restore(cli: Cli, repo: str, tmp_path: Path) -> None:
    r = f"lakefs://{repo}"
    _put(cli, tmp_path, f"{r}/main/a.csv", "1")
    cli("commit", f"{r}/main", "-m", "first")
    cli("tag", "create", f"{r}/v1", f"{r}/main")
    log_before = json.loads(cli("log", f"{r}/main", "--json").stdout)
    namespace = json.loads(cli("repo", "list", "--json").stdout)
    [entry] = [x for x in namespace if x["id"] == repo]

    dumped = cli("refs-dump", r, "--poll-interval", "1s").stdout
    refs = json.loads(dumped)
    assert list(refs) == ["branches_meta_range_id", "commits_meta_range_id", "tags_meta_range_id"]
    assert dumped.startswith('{\n  "branches_meta_range_id": ')
    manifest = tmp_path / "manifest.json"
    written = cli("refs-dump", r, "-o", str(manifest))
    assert written.stdout.strip() == f"Writing refs to {manifest}"
    assert json.loads(manifest.read_text()) == refs
    assert "Poll interval must be at least 1s" in cli("refs-dump", r, "--poll-interval", "10ms", code=1).stderr

    cli("repo", "delete", r, "--yes")
    bare = cli("repo", "create-bare", r, entry["storage_namespace"]).stdout
    assert bare.startswith(f"Repository: {r}\nRepository '{repo}' created:\nstorage namespace: ")
    assert "default branch: main" in bare
    assert json.loads(cli("branch", "list", r, "--json").stdout) == []

    restored = cli("refs-restore", r, "--manifest", "-", input=manifest.read_text()).stdout
    assert restored.startswith(f"Repository: {r}\n") and "All references restored successfully!" in restored
    assert json.loads(cli("log", f"{r}/main", "--json").stdout) == log_before
    assert cli("fs", "cat", f"{r}/v1/a.csv").stdout == "1"
    again = cli("refs-restore", r, "--manifest", str(manifest), code=1)
    assert "bare repository" in again.stderr
    assert cli("refs-restore", r, "--manifest", str(tmp_path / "missing.json"), code=1).exit_code == 1
