"""The hint after a server error comes from the error's cause (lakeFS's words), not its status: one test per
cause, on the CLI's stack, and the table itself."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import yaml

from lakelet.commands.errors import hint_for
from tests.api.hook_server import HookServer, start_hook_server
from tests.cli.conftest import Result
from tests.cli.test_import import SOURCE, _seed
from tests.e2e.conftest import LocalProcess

Cli = Callable[..., Result]


def _put(cli: Cli, tmp_path: Path, uri: str, text: str) -> None:
    source = tmp_path / "upload.tmp"
    source.write_text(text)
    cli("fs", "upload", uri, "--source", str(source))


@pytest.fixture
def hook_server() -> Iterator[HookServer]:
    state, server = start_hook_server()
    yield state
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize(
    ("status", "message", "expected", "not_expected"),
    [
        (403, "cannot write to protected branch", "branch protection rule", "attach a policy"),
        (403, "user u is not allowed to fs:WriteObject on arn", "attach a policy", "protection"),
        (412, "pre-commit hook aborted, run id 'r': 1 error occurred", "pre-hook refused", "already exists"),
        (409, "conflict found", "--strategy", "already exists"),
        (400, "uncommitted changes (dirty branch): branch main", "commit them", "arguments"),
        (403, "import from s3://x/ is not allowed: the deployment's setting S lists ...", "operator", "attach"),
        (404, "not found: no such API route", "does not offer", "check the repository"),
        (404, "branch not found", "check the repository", "offer"),
    ],
)
def test_the_hint_follows_the_cause(status: int, message: str, expected: str, not_expected: str) -> None:
    hint = hint_for(status, message)
    assert expected in hint and not_expected not in hint


def test_a_failed_pre_commit_hook_shows_the_hook_and_its_output(
    cli: Cli, repo: str, tmp_path: Path, hook_server: HookServer
) -> None:
    url = hook_server.on("/check", 400, "row 7 has no id")
    action = tmp_path / "check.yaml"
    action.write_text(
        yaml.safe_dump(
            {
                "name": "checks",
                "on": {"pre-commit": {"branches": ["main"]}},
                "hooks": [{"id": "ids_present", "type": "webhook", "properties": {"url": url}}],
            }
        )
    )
    cli("fs", "upload", f"lakefs://{repo}/main/_lakefs_actions/check.yaml", "--source", str(action))
    refused = cli("commit", f"lakefs://{repo}/main", "-m", "with hook", code=1)
    assert "pre-commit hook aborted" in refused.stderr and "hook 'ids_present'" in refused.stderr
    assert "row 7 has no id" in refused.stderr and "pre-hook refused" in refused.stderr
    assert "already exists" not in refused.stderr


def test_a_cherry_pick_conflict_prints_the_table_and_exits_3(cli: Cli, repo: str, tmp_path: Path) -> None:
    _put(cli, tmp_path, f"lakefs://{repo}/main/t.csv", "base")
    cli("commit", f"lakefs://{repo}/main", "-m", "base")
    cli("branch", "create", f"lakefs://{repo}/dev", "-s", f"lakefs://{repo}/main")
    _put(cli, tmp_path, f"lakefs://{repo}/dev/t.csv", "dev")
    pick = json.loads(cli("commit", f"lakefs://{repo}/dev", "-m", "dev", "--json").stdout)["id"]
    _put(cli, tmp_path, f"lakefs://{repo}/main/t.csv", "main")
    cli("commit", f"lakefs://{repo}/main", "-m", "main")
    conflict = cli("cherry-pick", f"lakefs://{repo}/{pick}", f"lakefs://{repo}/main", code=3)
    assert ["t.csv", "changed", "changed"] in [line.split() for line in conflict.stdout.splitlines()]
    assert "has conflicts (1)" in conflict.stderr and "already exists" not in conflict.stderr
    assert "settle them on the branch" in conflict.stderr and "--strategy" not in conflict.stderr


def test_an_import_refused_by_the_deployment_names_its_setting_not_a_permission(cli: Cli, repo: str) -> None:
    refused = cli("import", "--from", "s3://not-listed/x/", "--to", f"lakefs://{repo}/main/x/", code=1)
    assert "LAKELET_IMPORT_ALLOWED_LOCATIONS" in refused.stderr and "operator" in refused.stderr
    assert "lacks the permission" not in refused.stderr


def test_an_import_into_a_dirty_branch_says_dirty_branch(
    cli: Cli, cli_stack: LocalProcess, repo: str, tmp_path: Path
) -> None:
    run = uuid.uuid4().hex[:8]
    _seed(cli_stack, {f"{run}/a.csv": b"a"})
    _put(cli, tmp_path, f"lakefs://{repo}/main/uncommitted.txt", "u")
    failed = cli("import", "--from", f"s3://{SOURCE}/{run}/", "--to", f"lakefs://{repo}/main/in/", code=1)
    assert "dirty branch" in failed.stderr and "commit them" in failed.stderr
    assert "fix the cause" not in failed.stderr
