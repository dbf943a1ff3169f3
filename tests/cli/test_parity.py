"""lakectl's commands and flags that Lakelet's CLI lacked (issue: lakectl parity), on the CLI's stack: the same
spelling, output shape and exit codes as lakectl v1.84.0."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.cli.conftest import Result

Cli = Callable[..., Result]


def _put(cli: Cli, tmp_path: Path, uri: str, text: str) -> None:
    source = tmp_path / "upload.tmp"
    source.write_text(text)
    cli("fs", "upload", uri, "--source", str(source))


def test_branch_protect_add_list_delete_and_the_protected_branch_hint(cli: Cli, repo: str, tmp_path: Path) -> None:
    assert cli("branch-protect", "list", f"lakefs://{repo}").stdout.split() == ["Branch", "Name", "Pattern"]
    cli("branch-protect", "add", f"lakefs://{repo}", "main")
    cli("branch-protect", "add", f"lakefs://{repo}", "stable_*")
    listed = cli("branch-protect", "list", f"lakefs://{repo}").stdout.splitlines()
    assert [line.strip() for line in listed[1:]] == ["main", "stable_*"]
    source = tmp_path / "x.txt"
    source.write_text("x")
    refused = cli("fs", "upload", f"lakefs://{repo}/main/x.txt", "--source", str(source), code=1)
    assert "403" in refused.stderr and "protected branch" in refused.stderr
    assert "branch protection rule" in refused.stderr and "attach a policy" not in refused.stderr
    missing = cli("branch-protect", "delete", f"lakefs://{repo}", "nope", code=1)
    assert "Branch protection rule not found" in missing.stderr
    cli("branch-protect", "delete", f"lakefs://{repo}", "main")
    assert [line.strip() for line in cli("branch-protect", "list", f"lakefs://{repo}").stdout.splitlines()[1:]] == [
        "stable_*"
    ]
    cli("fs", "upload", f"lakefs://{repo}/main/x.txt", "--source", str(source))


def test_find_merge_base_and_annotate(cli: Cli, repo: str, tmp_path: Path) -> None:
    _put(cli, tmp_path, f"lakefs://{repo}/main/a/one.txt", "1")
    base = json.loads(cli("commit", f"lakefs://{repo}/main", "-m", "one", "--json").stdout)["id"]
    cli("branch", "create", f"lakefs://{repo}/dev", "-s", f"lakefs://{repo}/main")
    _put(cli, tmp_path, f"lakefs://{repo}/dev/b.txt", "2")
    dev = json.loads(cli("commit", f"lakefs://{repo}/dev", "-m", "two\nsecond line", "--json").stdout)["id"]
    found = cli("find-merge-base", f"lakefs://{repo}/dev", f"lakefs://{repo}/main").stdout.splitlines()
    assert found[:2] == [f"Source: lakefs://{repo}/dev", f"Destination: lakefs://{repo}/main"]
    assert found[2] == f'Found base "{base}" when merging "{dev}" into "{base}".'
    other = cli("find-merge-base", f"lakefs://{repo}/dev", "lakefs://elsewhere/main", code=1)
    assert "both references must belong to the same repository" in other.stderr
    lines = cli("annotate", f"lakefs://{repo}/dev/").stdout.splitlines()
    assert [line.split()[0] for line in lines] == ["a/", "b.txt"]
    assert lines[1].split()[2] == dev[:16] and lines[1].endswith("two")
    assert cli("blame", "-r", f"lakefs://{repo}/dev/a/").stdout.split()[0] == "a/one.txt"


def test_log_flags_and_commit_date(cli: Cli, repo: str, tmp_path: Path) -> None:
    ids = []
    for i in range(3):
        _put(cli, tmp_path, f"lakefs://{repo}/main/f{i}.txt", str(i))
        args = ["commit", f"lakefs://{repo}/main", "-m", f"c{i}", "--json"]
        ids.append(json.loads(cli(*args, "--epoch-time-seconds", str(1_600_000_000 + i)).stdout)["id"])
    first = json.loads(cli("log", f"lakefs://{repo}/main", "--json").stdout)
    assert [c["creation_date"] for c in first[:3]] == [1_600_000_002, 1_600_000_001, 1_600_000_000]
    two = json.loads(cli("log", f"lakefs://{repo}/main", "--amount", "2", "--limit", "--json").stdout)
    assert [c["id"] for c in two] == ids[:0:-1]
    stopped = json.loads(cli("log", f"lakefs://{repo}/main", "--stop-at", ids[1], "--json").stdout)
    assert [c["id"] for c in stopped] == [ids[2], ids[1]]
    cli("branch", "create", f"lakefs://{repo}/dev", "-s", f"lakefs://{repo}/main")
    _put(cli, tmp_path, f"lakefs://{repo}/dev/d.txt", "d")
    cli("commit", f"lakefs://{repo}/dev", "-m", "dev")
    cli("merge", f"lakefs://{repo}/dev", f"lakefs://{repo}/main", "--force")
    merges = json.loads(cli("log", f"lakefs://{repo}/main", "--json").stdout)
    assert len(merges[0]["parents"]) == 2
    no_merges = json.loads(cli("log", f"lakefs://{repo}/main", "--no-merges", "--amount", "2", "--json").stdout)
    assert [c["message"] for c in no_merges] == ["dev", "c2"]
    dot = cli("log", f"lakefs://{repo}/main", "--dot", "--amount", "1").stdout
    assert dot.startswith('digraph {\n\trankdir="BT"') and dot.rstrip().endswith("}")
    assert f'"{merges[0]["parents"][0]}" -> "{merges[0]["id"]}";' in dot and "<b>" in dot


def test_identity_completion_plugins_and_routes_the_server_lacks(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert cli("identity").stdout.splitlines()[0].split() == ["User", "ID:", "admin"]
    assert "_LAKELET_COMPLETE" in cli("completion", "bash").stdout
    assert cli("completion", "tcsh", code=2).exit_code == 2
    plugin = tmp_path / "bin" / "lakectl-hello"
    plugin.parent.mkdir()
    plugin.write_text("#!/bin/sh\n")
    plugin.chmod(plugin.stat().st_mode | stat.S_IXUSR)
    (tmp_path / "bin" / "lakectl-not-executable").write_text("")
    monkeypatch.setenv("PATH", f"{plugin.parent}{os.pathsep}{os.environ['PATH']}")
    assert cli("plugin", "list").stdout.splitlines() == ["Available plugins:", "  hello"]
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert cli("plugin", "list").stdout.strip() == "No lakectl plugins found in your PATH."
    # The usage report, as lakectl prints it: the installation id, then this month's requests (these calls among
    # them: the report flushes the server's pending counts first, and counts itself).
    usage = cli("usage", "summary")
    assert usage.stdout.startswith("Usage report for installation ID: ")
    assert usage.stdout.splitlines()[1].split() == ["Year", "Month", "Usage"]
    report = json.loads(cli("usage", "summary", "--json").stdout)
    assert len(report["installation_id"]) == 36 and report["reports"][-1]["count"] > 0
    # ACLs and external principals are the 501s of lakeFS OSS: the server's answer, exit 1.
    for args in (
        ("auth", "groups", "acl", "get", "--id", "Admins"),
        ("auth", "groups", "acl", "set", "--id", "Admins", "--permission", "Read"),
        ("auth", "users", "aws-iam", "list"),
        ("auth", "users", "aws-iam", "lookup", "--principal-id", "arn:aws:iam::1:role/x"),
    ):
        refused = cli(*args, code=1)
        assert "501 Not Implemented" in refused.stderr and "does not offer" in refused.stderr


def test_local_init_and_list(cli: Cli, repo: str, tmp_path: Path) -> None:
    _put(cli, tmp_path, f"lakefs://{repo}/main/data/a.txt", "a")
    head = json.loads(cli("commit", f"lakefs://{repo}/main", "-m", "a", "--json").stdout)["id"]
    work = tmp_path / "work"
    (work / ".git").mkdir(parents=True)
    linked = work / "linked"
    said = cli("local", "init", f"lakefs://{repo}/main/data", str(linked)).stdout.strip()
    assert said == f"Successfully linked local directory '{linked}' with remote 'lakefs://{repo}/main/data/'"
    assert (work / ".gitignore").read_text() == "linked/\n"
    again = cli("local", "init", f"lakefs://{repo}/main/data", str(linked), code=1)
    assert "already linked to a lakeFS path" in again.stderr and "--force" in again.stderr
    cli("local", "init", f"lakefs://{repo}/main/data", str(linked), "--force")
    refused = cli("local", "init", f"lakefs://{repo}/main/data/a.txt", str(tmp_path / "obj"), code=1)
    assert "is an existing object" in refused.stderr
    rows = [line.split() for line in cli("local", "list", str(work)).stdout.splitlines()]
    assert rows == [["Directory", "Remote", "URI", "Synced", "commit"], ["linked", f"lakefs://{repo}/main/data/", head]]
    status = cli("local", "status", str(linked), "-l").stdout
    assert "removed" in status and "a.txt" in status


def test_list_flags(cli: Cli, repo: str) -> None:
    assert repo in cli("repo", "list", "--prefix", repo).stdout
    assert cli("repo", "list", "--prefix", "zz-no-such").stdout.split() == [
        "REPOSITORY",
        "CREATION",
        "DATE",
        "DEFAULT",
        "REF",
        "NAME",
        "STORAGE",
        "NAMESPACE",
    ]
    for tag in ("v1", "v2", "x1"):
        cli("tag", "create", f"lakefs://{repo}/{tag}", f"lakefs://{repo}/main")
    assert [t["id"] for t in json.loads(cli("tag", "list", f"lakefs://{repo}", "--prefix", "v", "--json").stdout)] == [
        "v1",
        "v2",
    ]
    policies = json.loads(cli("auth", "policies", "list", "--prefix", "FS", "--amount", "2", "--json").stdout)
    assert len(policies) == 2 and all(p["id"].startswith("FS") for p in policies)
    after = json.loads(cli("auth", "policies", "list", "--prefix", "FS", "--after", policies[1]["id"], "--json").stdout)
    assert after and after[0]["id"] > policies[1]["id"]
    assert [g["id"] for g in json.loads(cli("auth", "groups", "list", "--prefix", "Adm", "--json").stdout)] == [
        "Admins"
    ]
    direct = json.loads(cli("auth", "users", "policies", "list", "--id", "admin", "--json").stdout)
    effective = json.loads(cli("auth", "users", "policies", "list", "--id", "admin", "--effective", "--json").stdout)
    assert direct == [] and len(effective) > 0
    assert len(json.loads(cli("auth", "users", "list", "--amount", "1", "--json").stdout)) == 1


def test_fs_ls_rm_upload_and_stage_as_lakectl(cli: Cli, repo: str, tmp_path: Path) -> None:
    _put(cli, tmp_path, f"lakefs://{repo}/main/events/a.json", "{}")
    rows = cli("fs", "ls", f"lakefs://{repo}/main/events").stdout.splitlines()
    assert rows[1].split() == ["common_prefix", "events/"]
    refused = cli("fs", "rm", f"lakefs://{repo}/main/events", code=1)
    assert "404" in refused.stderr and "-r" in refused.stderr
    assert cli("fs", "cat", f"lakefs://{repo}/main/events/a.json").stdout == "{}"
    cli("fs", "rm", f"lakefs://{repo}/main/nothing-here", code=1)
    missing = cli("fs", "upload", f"lakefs://{repo}/main/x", "--source", str(tmp_path / "absent.csv"), code=1)
    assert "does not exist" in missing.stderr
    # One of the repository's own objects, staged at another path (a zero-copy copy): lakeFS's server takes it.
    cli("commit", f"lakefs://{repo}/main", "-m", "events")
    stats = json.loads(cli("fs", "stat", f"lakefs://{repo}/main/events/a.json", "--json").stdout)
    own = ["--location", stats["physical_address"], "--size", str(stats["size_bytes"]), "--checksum", stats["checksum"]]
    cli("fs", "stage", f"lakefs://{repo}/main/copy.json", *own)
    assert cli("fs", "cat", f"lakefs://{repo}/main/copy.json").stdout == "{}"
    # The namespace's own files are not object data: the server refuses, and the CLI says so.
    marker = stats["physical_address"].split("/data/")[0] + "/_lakefs/dummy"
    inside = cli(
        "fs", "stage", f"lakefs://{repo}/main/m", "--location", marker, "--size", "1", "--checksum", "00", code=1
    )
    assert "403" in inside.stderr or "not allowed" in inside.stderr


def test_tag_create_force_replaces_a_tag_and_keeps_it_when_the_target_is_wrong(
    cli: Cli, repo: str, tmp_path: Path
) -> None:
    _put(cli, tmp_path, f"lakefs://{repo}/main/a.txt", "a")
    first = json.loads(cli("commit", f"lakefs://{repo}/main", "-m", "a", "--json").stdout)["id"]
    _put(cli, tmp_path, f"lakefs://{repo}/main/b.txt", "b")
    second = json.loads(cli("commit", f"lakefs://{repo}/main", "-m", "b", "--json").stdout)["id"]
    cli("tag", "create", f"lakefs://{repo}/v1", f"lakefs://{repo}/{first}")
    assert "409" in cli("tag", "create", f"lakefs://{repo}/v1", f"lakefs://{repo}/main", code=1).stderr
    cli("tag", "create", f"lakefs://{repo}/v1", f"lakefs://{repo}/no-such-ref", "-f", code=1)
    assert json.loads(cli("tag", "show", f"lakefs://{repo}/v1", "--json").stdout)["commit_id"] == first
    cli("tag", "create", f"lakefs://{repo}/v1", f"lakefs://{repo}/main", "-f")
    assert json.loads(cli("tag", "show", f"lakefs://{repo}/v1", "--json").stdout)["commit_id"] == second
