"""Every command group through the CLI runner against one ``lakelet up`` stack: what it prints, its JSON,
and what the server holds afterwards."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from lakelet.stack.statefile import write_state
from tests.cli.conftest import Result
from tests.e2e.conftest import LocalProcess

pytestmark = pytest.mark.e2e
Cli = Callable[..., Result]


def _put(cli: Cli, tmp_path: Path, uri: str, text: str) -> None:
    source = tmp_path / f"src-{abs(hash((uri, text)))}"
    source.write_text(text)
    cli("fs", "upload", "--source", str(source), uri)


def test_doctor_and_state_file_discovery(run: Callable[..., Result], cli_stack: LocalProcess, home: Path) -> None:
    # No configuration at all: the state file of a running stack is enough.
    write_state(
        home / "no-stack",
        {
            "pid": cli_stack.process.pid,
            "api_url": cli_stack.endpoint,
            "access_key_id": cli_stack.access_key_id,
            "secret_access_key": cli_stack.secret_access_key,
        },
    )
    result = run("doctor")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith(f"ok: {cli_stack.endpoint} reachable")
    assert "lakelet up (state file)" in result.stdout
    bad = run("doctor", env={"LAKECTL_CREDENTIALS_SECRET_ACCESS_KEY": "wrong"})
    assert bad.exit_code == 1
    assert bad.stderr.strip() == (
        f"error: the server refuses access key {cli_stack.access_key_id} (from "
        "environment < lakelet up (state file)): fix credentials.access_key_id/"
        "secret_access_key ('lakelet config')"
    )


def test_repo_create_list_delete(cli: Cli, repo: str) -> None:
    listed = json.loads(cli("repo", "list", "--json").stdout)
    mine = [r for r in listed if r["id"] == repo]
    assert mine and mine[0]["default_branch"] == "main" and mine[0]["storage_namespace"].endswith("/" + repo)
    assert repo in cli("repo", "list").stdout
    other = cli("--json", "repo", "create", f"lakefs://{repo}-x", "--default-branch", "trunk")
    assert json.loads(other.stdout)["default_branch"] == "trunk"
    dup = cli("repo", "create", f"lakefs://{repo}", code=1)
    assert dup.stderr.startswith(f"error: create repository {repo} failed (409")
    assert cli("repo", "delete", f"lakefs://{repo}-x", code=1).stderr.strip() == (
        f"error: refusing to delete repository {repo}-x without confirmation: pass --yes"
    )
    cli("repo", "delete", f"lakefs://{repo}-x", "--yes")
    assert f"{repo}-x" not in cli("repo", "list").stdout
    bad = cli("repo", "create", "lakefs://X_bad", code=1)
    assert bad.stderr.startswith("error: invalid value:") and "Traceback" not in bad.stderr


def test_sample_data(run: Callable[..., Result], cli_stack: LocalProcess, repo: str) -> None:
    from tests.cli.conftest import stack_env

    env = stack_env(cli_stack)
    created = run("--json", "repo", "create", f"lakefs://{repo}-s", "--sample-data", env=env)
    if created.exit_code == 0:  # a server with sample data (13a)
        assert json.loads(created.stdout)["id"] == f"{repo}-s"
        assert json.loads(run("fs", "ls", "-r", f"lakefs://{repo}-s/main/", "--json", env=env).stdout)
    else:
        assert created.stderr.strip() == (
            f"error: create repository {repo}-s failed (400 bare repositories and "
            "sample data are not supported): check the command's arguments"
        )


def test_branches_tags_commits_log_show(cli: Cli, repo: str, tmp_path: Path) -> None:
    _put(cli, tmp_path, f"lakefs://{repo}/main/a.txt", "one")
    committed = json.loads(cli("commit", f"lakefs://{repo}/main", "-m", "first", "--meta", "k=v", "--json").stdout)
    assert committed["message"] == "first" and committed["metadata"] == {"k": "v"}
    assert cli("commit", f"lakefs://{repo}/main", code=2).exit_code == 2  # no message
    created = cli("branch", "create", f"lakefs://{repo}/dev", "--source", f"lakefs://{repo}/main")
    assert f"created branch 'dev' {committed['id']}" in created.stdout
    assert {b["id"] for b in json.loads(cli("branch", "list", f"lakefs://{repo}", "--json").stdout)} == {"main", "dev"}
    assert committed["id"] in cli("branch", "show", f"lakefs://{repo}/dev").stdout
    _put(cli, tmp_path, f"lakefs://{repo}/dev/b.txt", "two")
    second = json.loads(cli("commit", f"lakefs://{repo}/dev", "-m", "second", "--json").stdout)
    log = json.loads(cli("log", f"lakefs://{repo}/dev", "--json").stdout)
    assert [c["message"] for c in log][:2] == ["second", "first"]
    assert [c["message"] for c in json.loads(cli("log", f"lakefs://{repo}/dev", "--amount", "1", "--json").stdout)] == [
        "second"
    ]
    only_a = json.loads(cli("log", f"lakefs://{repo}/dev", "--objects", "a.txt", "--json").stdout)
    assert [c["message"] for c in only_a] == ["first"]
    assert [
        c["message"] for c in json.loads(cli("log", f"lakefs://{repo}/dev", "--prefixes", "b", "--json").stdout)
    ] == ["second"]
    assert json.loads(cli("log", f"lakefs://{repo}/dev", "--since", "2999-01-01T00:00:00", "--json").stdout) == []
    assert "second" in cli("log", f"lakefs://{repo}/dev", "--first-parent").stdout
    shown = cli("show", "commit", f"lakefs://{repo}/{second['id']}")
    assert f"ID:            {second['id']}" in shown.stdout and "second" in shown.stdout
    cli("tag", "create", f"lakefs://{repo}/v1", f"lakefs://{repo}/dev")
    assert json.loads(cli("tag", "show", f"lakefs://{repo}/v1", "--json").stdout)["commit_id"] == second["id"]
    assert "v1" in cli("tag", "list", f"lakefs://{repo}").stdout
    cli("tag", "delete", f"lakefs://{repo}/v1", "--yes")
    assert json.loads(cli("tag", "list", f"lakefs://{repo}", "--json").stdout) == []
    cli("branch", "delete", f"lakefs://{repo}/dev", "-y")
    missing = cli("branch", "show", f"lakefs://{repo}/dev", code=1)
    assert missing.stderr.startswith(f"error: show branch lakefs://{repo}/dev failed (404")


def test_async_commit_and_status(cli: Cli, repo: str, tmp_path: Path) -> None:
    _put(cli, tmp_path, f"lakefs://{repo}/main/x.txt", "x")
    task = json.loads(cli("commit", f"lakefs://{repo}/main", "-m", "async one", "--async", "--json").stdout)["id"]
    status = json.loads(cli("commit", "status", f"lakefs://{repo}/main", "--id", task, "--json").stdout)
    assert status["completed"] is True and status["result"]["message"] == "async one"
    assert "Task " + task + ": completed" in cli("commit", "status", f"lakefs://{repo}/main", "--id", task).stdout


def test_diff_uncommitted_and_between_refs(cli: Cli, repo: str, tmp_path: Path) -> None:
    _put(cli, tmp_path, f"lakefs://{repo}/main/keep.txt", "k")
    _put(cli, tmp_path, f"lakefs://{repo}/main/gone.txt", "g")
    cli("commit", f"lakefs://{repo}/main", "-m", "base")
    cli("branch", "create", f"lakefs://{repo}/dev", "-s", f"lakefs://{repo}/main")
    _put(cli, tmp_path, f"lakefs://{repo}/dev/new.txt", "n")
    cli("fs", "rm", f"lakefs://{repo}/dev/gone.txt")
    uncommitted = json.loads(cli("diff", f"lakefs://{repo}/dev", "--json").stdout)
    assert {(c["path"], c["type"]) for c in uncommitted} == {("new.txt", "added"), ("gone.txt", "removed")}
    cli("commit", f"lakefs://{repo}/dev", "-m", "change")
    _put(cli, tmp_path, f"lakefs://{repo}/main/main-only.txt", "m")
    cli("commit", f"lakefs://{repo}/main", "-m", "main moves")
    text = cli("diff", f"lakefs://{repo}/main", f"lakefs://{repo}/dev").stdout
    assert text.splitlines() == ["- removed  gone.txt", "+ added    new.txt"]
    # Two-way also shows what main changed on its side.
    two = json.loads(cli("diff", f"lakefs://{repo}/main", f"lakefs://{repo}/dev", "--two-way", "--json").stdout)
    assert ("main-only.txt", "removed") in {(c["path"], c["type"]) for c in two}


def test_merge_conflict_table_dry_run_and_path_strategies(cli: Cli, repo: str, tmp_path: Path) -> None:
    for name in ("logs/a.log", "data/t.csv"):
        _put(cli, tmp_path, f"lakefs://{repo}/main/{name}", "base " + name)
    cli("commit", f"lakefs://{repo}/main", "-m", "base")
    cli("branch", "create", f"lakefs://{repo}/dev", "-s", f"lakefs://{repo}/main")
    for branch in ("main", "dev"):
        for name in ("logs/a.log", "data/t.csv"):
            _put(cli, tmp_path, f"lakefs://{repo}/{branch}/{name}", f"{branch} {name}")
        cli("commit", f"lakefs://{repo}/{branch}", "-m", f"{branch} side")
    conflict = cli("merge", f"lakefs://{repo}/dev", f"lakefs://{repo}/main", code=3)
    lines = [line.split() for line in conflict.stdout.splitlines()]
    assert ["PATH", "SOURCE", "DESTINATION"] in lines
    assert ["data/t.csv", "changed", "changed"] in lines and ["logs/a.log", "changed", "changed"] in lines
    assert conflict.stderr.strip().startswith("error: merge of dev into main has conflicts (2)")
    as_json = cli("merge", f"lakefs://{repo}/dev", f"lakefs://{repo}/main", "--json", code=3)
    assert {c["path"] for c in json.loads(as_json.stdout)["conflicts"]} == {"data/t.csv", "logs/a.log"}
    preview = cli(
        "merge",
        f"lakefs://{repo}/dev",
        f"lakefs://{repo}/main",
        "--dry-run",
        "--path-strategy",
        "logs/**=dest-wins",
        "--json",
        code=3,
    )
    summary = json.loads(preview.stdout)["summary"]
    assert (summary["conflict"], summary["unresolved"]) == (2, 1)
    assert cli("merge", f"lakefs://{repo}/dev", f"lakefs://{repo}/main", "--path-strategy", "bad", code=2)
    merged = cli(
        "merge",
        f"lakefs://{repo}/dev",
        f"lakefs://{repo}/main",
        "--path-strategy",
        "logs/**=dest-wins",
        "--strategy",
        "source-wins",
    )
    assert 'Merged "dev" into "main"' in merged.stdout
    assert cli("fs", "cat", f"lakefs://{repo}/main/logs/a.log").stdout == "main logs/a.log"
    assert cli("fs", "cat", f"lakefs://{repo}/main/data/t.csv").stdout == "dev data/t.csv"


def test_cherry_pick_revert_reset(cli: Cli, repo: str, tmp_path: Path) -> None:
    _put(cli, tmp_path, f"lakefs://{repo}/main/a.txt", "a")
    cli("commit", f"lakefs://{repo}/main", "-m", "a")
    cli("branch", "create", f"lakefs://{repo}/dev", "-s", f"lakefs://{repo}/main")
    _put(cli, tmp_path, f"lakefs://{repo}/dev/b.txt", "b")
    pick = json.loads(cli("commit", f"lakefs://{repo}/dev", "-m", "b", "--json").stdout)
    cli("cherry-pick", f"lakefs://{repo}/{pick['id']}", f"lakefs://{repo}/main")
    assert cli("fs", "cat", f"lakefs://{repo}/main/b.txt").stdout == "b"
    cli("revert", f"lakefs://{repo}/main", "main", "-y")
    assert cli("fs", "stat", f"lakefs://{repo}/main/b.txt", code=1).exit_code == 1
    _put(cli, tmp_path, f"lakefs://{repo}/main/u1.txt", "u")
    _put(cli, tmp_path, f"lakefs://{repo}/main/keep/u2.txt", "u")
    cli("branch", "reset", f"lakefs://{repo}/main", "--object", "u1.txt", "-y")
    assert [c["path"] for c in json.loads(cli("diff", f"lakefs://{repo}/main", "--json").stdout)] == ["keep/u2.txt"]
    cli("branch", "reset", f"lakefs://{repo}/main", "-y")
    assert json.loads(cli("diff", f"lakefs://{repo}/main", "--json").stdout) == []


def test_fs_commands(cli: Cli, repo: str, tmp_path: Path) -> None:
    for name in ("dir/a.txt", "dir/sub/b.txt", "top.txt"):
        _put(cli, tmp_path, f"lakefs://{repo}/main/{name}", f"content of {name}")
    listed = cli("fs", "ls", f"lakefs://{repo}/main/dir/").stdout
    assert [line.split()[0] for line in listed.splitlines()[1:]] == ["object", "common_prefix"]
    assert "a.txt" in listed and "sub/" in listed
    recursive = json.loads(cli("fs", "ls", "-r", f"lakefs://{repo}/main/", "--json").stdout)
    assert [i["path"] for i in recursive] == ["dir/a.txt", "dir/sub/b.txt", "top.txt"]
    stat = json.loads(cli("fs", "stat", f"lakefs://{repo}/main/top.txt", "--json").stdout)
    assert stat["size_bytes"] == len("content of top.txt") and stat["content_type"] == "text/plain"
    assert "Checksum:" in cli("fs", "stat", f"lakefs://{repo}/main/top.txt").stdout
    assert cli("fs", "cat", f"lakefs://{repo}/main/dir/sub/b.txt").stdout == "content of dir/sub/b.txt"
    url = cli("fs", "presign", f"lakefs://{repo}/main/top.txt").stdout.strip()
    assert url.startswith("http") and ("Signature" in url or "X-Amz" in url)
    cli("fs", "rm", "-r", f"lakefs://{repo}/main/dir/")
    assert [i["path"] for i in json.loads(cli("fs", "ls", "-r", f"lakefs://{repo}/main/", "--json").stdout)] == [
        "top.txt"
    ]
    missing = cli("fs", "cat", f"lakefs://{repo}/main/nope", code=1)
    assert missing.stderr.startswith(f"error: read lakefs://{repo}/main/nope failed (404")


def test_update_metadata_sets_or_says_unsupported(
    run: Callable[..., Result], cli_stack: LocalProcess, repo: str, tmp_path: Path
) -> None:
    from tests.cli.conftest import stack_env

    env = stack_env(cli_stack)
    source = tmp_path / "m.txt"
    source.write_text("m")
    assert run("fs", "upload", "-s", str(source), f"lakefs://{repo}/main/m.txt", env=env).exit_code == 0
    result = run("fs", "update-metadata", f"lakefs://{repo}/main/m.txt", "--metadata", "owner=me", env=env)
    if result.exit_code == 0:  # the server has PUT .../objects/stat/user_metadata
        stat = json.loads(run("fs", "stat", f"lakefs://{repo}/main/m.txt", "--json", env=env).stdout)
        assert stat["metadata"] == {"owner": "me"}
    else:
        assert result.stderr.strip() == (
            "error: this server cannot update object metadata (no PUT "
            ".../objects/stat/user_metadata): upgrade the server, or upload the "
            "object again with its metadata"
        )


def test_gc_config(cli: Cli, repo: str, tmp_path: Path) -> None:
    rules = tmp_path / "rules.json"
    rules.write_text(
        json.dumps({"default_retention_days": 7, "branches": [{"branch_id": "main", "retention_days": 30}]})
    )
    cli("gc", "set-config", f"lakefs://{repo}", "-f", str(rules))
    got = json.loads(cli("gc", "get-config", f"lakefs://{repo}", "--json").stdout)
    assert got == {"default_retention_days": 7, "branches": [{"branch_id": "main", "retention_days": 30}]}
    assert "main" in cli("gc", "get-config", f"lakefs://{repo}").stdout
    cli("gc", "delete-config", f"lakefs://{repo}")
    assert cli("gc", "get-config", f"lakefs://{repo}", code=1).stderr.startswith("error: read GC rules")
    rules.write_text("{not json")
    assert "is not valid GC rules" in cli("gc", "set-config", f"lakefs://{repo}", "-f", str(rules), code=1).stderr


def test_auth(cli: Cli, tmp_path: Path) -> None:
    user = f"u{os.getpid()}{abs(hash(tmp_path)) % 10000}"
    cli("auth", "users", "create", "--id", user)
    assert user in [u["id"] for u in json.loads(cli("auth", "users", "list", "--json").stdout)]
    creds = json.loads(cli("auth", "users", "credentials", "create", "--id", user, "--json").stdout)
    assert creds["secret_access_key"]
    assert [
        c["access_key_id"]
        for c in json.loads(cli("auth", "users", "credentials", "list", "--id", user, "--json").stdout)
    ] == [creds["access_key_id"]]
    cli("auth", "groups", "create", "--id", f"{user}-g")
    cli("auth", "groups", "members", "add", "--id", f"{user}-g", "--user", user)
    assert user in cli("auth", "groups", "members", "list", "--id", f"{user}-g").stdout
    doc = tmp_path / "policy.json"
    doc.write_text(json.dumps({"statement": [{"effect": "allow", "action": ["fs:Read*"], "resource": "*"}]}))
    cli("auth", "policies", "create", "--id", f"{user}-p", "--statement-document", str(doc))
    assert "fs:Read*" in cli("auth", "policies", "show", "--id", f"{user}-p").stdout
    cli("auth", "groups", "policies", "attach", "--id", f"{user}-g", "--policy", f"{user}-p")
    cli("auth", "users", "policies", "attach", "--id", user, "--policy", f"{user}-p")
    assert f"{user}-p" in cli("auth", "users", "policies", "list", "--id", user).stdout
    assert f"{user}-p" in cli("auth", "groups", "policies", "list", "--id", f"{user}-g").stdout
    assert f"{user}-g" in cli("auth", "users", "groups", "list", "--id", user).stdout
    cli("auth", "users", "credentials", "delete", "--id", user, "--access-key-id", creds["access_key_id"])
    cli("auth", "users", "delete", "--id", user)
    cli("auth", "groups", "delete", "--id", f"{user}-g")
    cli("auth", "policies", "delete", "--id", f"{user}-p")
    assert user not in cli("auth", "users", "list").stdout


def test_local_and_gc_run_are_in_the_tree(run: Callable[..., Result], capsys: pytest.CaptureFixture[str]) -> None:
    from lakelet.cli import main

    assert main(["up", "--help"]) == 0
    local_help = capsys.readouterr().out
    assert "Usage: lakelet up" in local_help and "--api-port" in local_help
    assert main(["local", "--help"]) == 0
    assert "clone" in capsys.readouterr().out
    assert main(["gc", "run", "--help"]) == 0
    assert "Usage: lakelet gc run" in capsys.readouterr().out
    assert main(["up", "--api-port", "99999"]) == 2  # a usage error, exit 2


def test_local_pull_checkout_and_refusals(cli: Cli, repo: str, tmp_path: Path) -> None:
    for name in ("p/a.txt", "p/b.txt"):
        _put(cli, tmp_path, f"lakefs://{repo}/main/{name}", "v1 " + name)
    cli("commit", f"lakefs://{repo}/main", "-m", "v1")
    work = tmp_path / "work"
    cli("local", "clone", f"lakefs://{repo}/main/p", str(work))
    assert sorted(p.name for p in work.iterdir()) == [".lakefs_ref.yaml", "a.txt", "b.txt"]
    assert cli("local", "clone", f"lakefs://{repo}/main/p", str(work), code=1).stderr.startswith(
        f"error: directory {work} is not empty"
    )
    # The branch moves: status shows it as a remote change, commit refuses, pull brings it.
    _put(cli, tmp_path, f"lakefs://{repo}/main/p/a.txt", "v2 a")
    cli("fs", "rm", f"lakefs://{repo}/main/p/b.txt")
    cli("commit", f"lakefs://{repo}/main", "-m", "v2")
    remote = json.loads(cli("local", "status", str(work), "--json").stdout)
    assert {(c["path"], c["type"], c["source"]) for c in remote} == {
        ("a.txt", "modified", "remote"),
        ("b.txt", "removed", "remote"),
    }
    assert json.loads(cli("local", "status", str(work), "-l", "--json").stdout) == []
    (work / "c.txt").write_text("local")
    refused = cli("local", "commit", str(work), "-m", "x", code=1)
    assert "the branch moved since" in refused.stderr and "run 'lakelet local pull' first" in refused.stderr
    assert "has local changes" in cli("local", "pull", str(work), code=1).stderr
    (work / "c.txt").unlink()
    cli("local", "pull", str(work))
    assert (work / "a.txt").read_text() == "v2 a" and not (work / "b.txt").exists()
    # checkout discards local edits (with --yes), or switches to another ref.
    (work / "a.txt").write_text("scribble")
    assert "pass --yes" in cli("local", "checkout", str(work), code=1).stderr
    cli("local", "checkout", str(work), "--yes")
    assert (work / "a.txt").read_text() == "v2 a"
    cli("local", "checkout", str(work), "--ref", "main~1")
    assert (work / "a.txt").read_text() == "v1 p/a.txt" and (work / "b.txt").read_text() == "v1 p/b.txt"
    assert "not a lakelet local directory" in cli("local", "status", str(tmp_path), code=1).stderr
