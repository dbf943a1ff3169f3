"""The everyday flow end to end, as a shell user runs it, against one ``lakelet up``: configure, create a
repository, upload a tree of 1,000 files, commit, branch, change, diff, merge with a conflict table, local
clone/status/commit, download and compare. Plus an interrupted upload resumed without duplicates, and no
progress frames when stdout is not a terminal."""

from __future__ import annotations

import hashlib
import json
import re
import signal
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import lakefs_sdk
import pytest

from tests.cli.conftest import Result, lakelet_process, make_tree, read_tree, stack_env
from tests.e2e.conftest import LocalProcess

pytestmark = pytest.mark.e2e


def _sdk(stack: LocalProcess) -> lakefs_sdk.ObjectsApi:
    conf = lakefs_sdk.Configuration(host=stack.api_url, username=stack.access_key_id, password=stack.secret_access_key)
    return lakefs_sdk.ObjectsApi(lakefs_sdk.ApiClient(conf))


def _all_paths(stack: LocalProcess, repo: str, ref: str, prefix: str) -> list[str]:
    objects, paths, after = _sdk(stack), [], ""
    while True:
        page = objects.list_objects(repo, ref, prefix=prefix, after=after, amount=1000)
        paths += [o.path for o in page.results]
        if not page.pagination.has_more:
            return paths
        after = page.pagination.next_offset


def test_everyday_flow(run: Callable[..., Result], cli_stack: LocalProcess, home: Path, tmp_path: Path) -> None:
    # Configure: the interactive prompt writes ~/.lakectl.yaml, and from then on nothing else is needed.
    configured = run(
        "config", input=f"{cli_stack.access_key_id}\n{cli_stack.secret_access_key}\n{cli_stack.endpoint}\n"
    )
    assert configured.exit_code == 0, configured.stderr
    assert run("doctor").exit_code == 0

    def cli(*args: str, code: int = 0) -> Result:
        result = run(*args)
        assert result.exit_code == code, (args, result.stdout, result.stderr)
        return result

    repo = f"flow-{uuid.uuid4().hex[:8]}"
    cli("repo", "create", f"lakefs://{repo}")
    source = tmp_path / "source"
    files = make_tree(source, 1000)

    # The upload as a shell runs it: not on a terminal, so one summary line and no progress frames.
    upload = lakelet_process(
        ["fs", "upload", "-r", "--source", str(source), f"lakefs://{repo}/main/tree/"], {"HOME": str(home)}, tmp_path
    )
    stdout, stderr = upload.communicate(timeout=240)
    assert upload.returncode == 0, stderr.decode()
    assert b"\r" not in stderr and b"\x1b[" not in stderr and stdout == b""
    assert stderr.decode().splitlines() == [stderr.decode().strip()]
    assert stderr.decode().startswith("upload: 1000 file(s) transferred, 0 already up to date")
    assert len(_all_paths(cli_stack, repo, "main", "tree/")) == 1000

    # More than the stack's workflow threshold: the server answers 202 and the CLI follows the task to the end.
    big_commit = cli("commit", f"lakefs://{repo}/main", "-m", "1,000 files")
    assert re.search(rf"^commit lakefs://{repo}/main completed in \d+\.\d s$", big_commit.stderr, re.MULTILINE)
    assert 'Commit for branch "main" completed.' in big_commit.stdout
    assert json.loads(cli("log", f"lakefs://{repo}/main", "--amount", "1", "--json").stdout)[0]["message"] == (
        "1,000 files"
    )
    cli("branch", "create", f"lakefs://{repo}/dev", "-s", f"lakefs://{repo}/main")
    changed = tmp_path / "changed.txt"
    changed.write_text("dev's version\n")
    cli("fs", "upload", "-s", str(changed), f"lakefs://{repo}/dev/tree/d0/sub0/file-0000.txt")
    changed.write_text("main's version\n")
    cli("fs", "upload", "-s", str(changed), f"lakefs://{repo}/main/tree/d0/sub0/file-0000.txt")
    assert "~ changed  tree/d0/sub0/file-0000.txt" in cli("diff", f"lakefs://{repo}/dev").stdout
    cli("commit", f"lakefs://{repo}/dev", "-m", "dev change")
    cli("commit", f"lakefs://{repo}/main", "-m", "main change")
    assert cli("diff", f"lakefs://{repo}/main", f"lakefs://{repo}/dev").stdout.splitlines() == [
        "! conflict tree/d0/sub0/file-0000.txt"
    ]
    conflict = cli("merge", f"lakefs://{repo}/dev", f"lakefs://{repo}/main", code=3)
    assert conflict.stdout.splitlines() == [
        "Merge conflicts",
        "PATH                        SOURCE   DESTINATION",
        "tree/d0/sub0/file-0000.txt  changed  changed",
    ]
    assert re.search(r"^merge of dev into main failed in \d+\.\d s$", conflict.stderr, re.MULTILINE)
    merged = cli("merge", f"lakefs://{repo}/dev", f"lakefs://{repo}/main", "--strategy", "dest-wins")
    assert re.search(r"^merge of dev into main completed in \d+\.\d s$", merged.stderr, re.MULTILINE)
    assert re.search(r'^Merged "dev" into "main" to get "[0-9a-f]{64}"\.$', merged.stdout, re.MULTILINE)
    files["d0/sub0/file-0000.txt"] = b"main's version\n"

    # A local directory kept in step with one folder of the branch.
    work = tmp_path / "work"
    cli("local", "clone", f"lakefs://{repo}/main/tree/d1/", str(work))
    assert read_tree(work) == {k[3:]: v for k, v in files.items() if k.startswith("d1/")} | {
        ".lakefs_ref.yaml": (work / ".lakefs_ref.yaml").read_bytes()
    }
    assert cli("local", "status", str(work)).stdout.strip() == "No diff found."
    (work / "sub1" / "file-0001.txt").write_text("edited locally\n")
    (work / "added.txt").write_text("added locally\n")
    (work / "sub2" / "file-0011.txt").unlink()
    status = json.loads(cli("local", "status", str(work), "--json").stdout)
    assert {(s["path"], s["type"]) for s in status} == {
        ("sub1/file-0001.txt", "modified"),
        ("added.txt", "added"),
        ("sub2/file-0011.txt", "removed"),
    }
    committed = json.loads(cli("local", "commit", str(work), "-m", "local edits", "--json").stdout)
    assert committed["message"] == "local edits"
    assert cli("local", "status", str(work)).stdout.strip() == "No diff found."
    files["d1/sub1/file-0001.txt"] = b"edited locally\n"
    files["d1/added.txt"] = b"added locally\n"
    del files["d1/sub2/file-0011.txt"]

    # Download the whole tree and compare with what it should be.
    target = tmp_path / "download"
    cli("fs", "download", "-r", f"lakefs://{repo}/main/tree/", str(target))
    assert read_tree(target) == files
    again = cli("fs", "download", "-r", f"lakefs://{repo}/main/tree/", str(target), "--json")
    assert f"0 file(s) transferred, {len(files)} already up to date" in again.stderr
    counts = json.loads(again.stdout)
    assert (counts["files"], counts["transferred"], counts["skipped"]) == (len(files), 0, len(files))


def test_interrupted_upload_resumes_without_duplicates(
    cli_stack: LocalProcess, tmp_path: Path, run: Callable[..., Result]
) -> None:
    env = stack_env(cli_stack)
    repo = f"resume-{uuid.uuid4().hex[:8]}"
    assert run("repo", "create", f"lakefs://{repo}", env=env).exit_code == 0
    source = tmp_path / "src"
    files = make_tree(source, 200)
    args = ["fs", "upload", "-r", "-p", "4", "--source", str(source), f"lakefs://{repo}/main/up/"]
    first = lakelet_process(args, env, tmp_path)
    deadline = time.monotonic() + 120
    while len(_all_paths(cli_stack, repo, "main", "up/")) < 30:
        assert first.poll() is None and time.monotonic() < deadline, first.communicate()[1].decode()
        time.sleep(0.2)
    first.send_signal(signal.SIGINT)
    _, stderr = first.communicate(timeout=60)
    assert first.returncode == 130, stderr.decode()
    assert (
        stderr.decode().strip().endswith("error: interrupted: what completed is kept; run the command again to resume")
    )
    done_before = len(_all_paths(cli_stack, repo, "main", "up/"))
    assert 30 <= done_before < 200

    second = lakelet_process(args, env, tmp_path)
    _, stderr = second.communicate(timeout=240)
    assert second.returncode == 0, stderr.decode()
    assert f"{200 - done_before} file(s) transferred, {done_before} already up to date" in stderr.decode()
    paths = _all_paths(cli_stack, repo, "main", "up/")
    assert sorted(paths) == sorted("up/" + p for p in files)
    changes = lakefs_sdk.BranchesApi(_sdk(cli_stack).api_client).diff_branch(repo, "main", amount=1000).results
    assert len(changes) == 200 and {c.type for c in changes} == {"added"}
    listed = json.loads(run("fs", "ls", "-r", f"lakefs://{repo}/main/up/", "--json", env=env).stdout)
    assert {o["path"][3:]: o["checksum"] for o in listed} == {
        rel: hashlib.md5(data, usedforsecurity=False).hexdigest() for rel, data in files.items()
    }
