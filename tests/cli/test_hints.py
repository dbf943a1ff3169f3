"""The hint after a server error comes from the error's cause (lakeFS's words), not its status: one test per
cause, on the CLI's stack, and the table itself."""

from __future__ import annotations

import ast
import itertools
import json
import re
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from lakelet.cli import tree
from lakelet.commands.errors import _CAUSES, _HINTS, COMMAND_CAUSES, hint_for
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
        (409, "conflict found", "settle them on the branches", "--strategy"),
        (400, "uncommitted changes (dirty branch): branch main", "commit them", "arguments"),
        (403, "import from s3://x/ is not allowed: the deployment's setting S lists ...", "operator", "attach"),
        (404, "not found: no such API route", "does not offer", "check the repository"),
        (404, "branch not found", "check the repository", "offer"),
    ],
)
def test_the_hint_follows_the_cause(status: int, message: str, expected: str, not_expected: str) -> None:
    hint = hint_for(status, message)
    assert expected in hint and not_expected not in hint


FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")


def _options(path: str) -> set[str]:
    """Every option string (``--allow-empty-commit``, ``--no-color``) of the command at ``path``, and the root's."""
    from typer.main import get_command

    command: Any = get_command(tree(None))
    names = {name for p in command.params for name in (*p.opts, *p.secondary_opts)}
    for part in path.split():
        command = command.commands[part]
        names |= {name for p in command.params for name in (*p.opts, *p.secondary_opts)}
    return names


def test_every_hint_names_a_flag_its_command_has() -> None:
    checked = 0
    for path, words, hint in COMMAND_CAUSES:
        # A flag inside a quoted command line ('lakelet gc set-config ... --filename F') is that command's.
        for quoted in re.findall(r"'lakelet ([^']*)'", hint):
            named = " ".join(itertools.takewhile(lambda w: re.fullmatch(r"[a-z][a-z-]*", w), quoted.split()))
            flags = set(FLAG.findall(quoted))
            assert flags and not flags - _options(named), (quoted, flags)
            checked += len(flags)
        flags = set(FLAG.findall(re.sub(r"'lakelet [^']*'", "", hint)))
        missing = flags - _options(path)
        assert not missing, (path, words, hint, missing)
        checked += len(flags)
    assert checked >= 6
    # A hint shown whatever the command names no flag: it would be wrong for every command that lacks it.
    assert not [hint for _, hint in _CAUSES if FLAG.search(hint)]
    assert not [hint for hint in _HINTS.values() if FLAG.search(hint)]


def test_every_flag_a_command_module_names_in_an_error_exists() -> None:
    # The hints written inline in the command modules (CLIError, BadParameter): each flag they name is an option
    # of some command of the tree (the table above is checked command by command).
    from typer.main import get_command

    everything: set[str] = set()

    def collect(command: Any) -> None:
        everything.update(name for p in command.params for name in (*p.opts, *p.secondary_opts))
        for child in getattr(command, "commands", {}).values():
            collect(child)

    collect(get_command(tree(None)))
    named: dict[str, str] = {}
    for module in sorted(Path("lakelet/commands").glob("*.py")):
        for node in ast.walk(ast.parse(module.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) in (
                "CLIError",
                "BadParameter",
                "MergeConflict",
            ):
                for part in ast.walk(node):
                    if isinstance(part, ast.Constant) and isinstance(part.value, str):
                        named.update(dict.fromkeys(FLAG.findall(part.value), module.name))
    assert len(named) >= 10
    assert {flag: where for flag, where in named.items() if flag not in everything} == {}


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("commit", "--allow-empty-commit"),
        ("merge", "--allow-empty to merge"),
        ("branch revert", "--allow-empty to commit"),
        ("tag create", "there is nothing to do"),
    ],
)
def test_no_changes_names_the_commands_own_flag(command: str, expected: str) -> None:
    assert expected in hint_for(400, "commit: no changes", command)


def test_a_commit_with_nothing_to_commit_hints_allow_empty_commit(cli: Cli, repo: str) -> None:
    refused = cli("commit", f"lakefs://{repo}/main", "-m", "nothing", code=1)
    assert "pass --allow-empty-commit" in refused.stderr, refused.stderr
    assert "--allow-empty " not in refused.stderr
    cli("commit", f"lakefs://{repo}/main", "-m", "nothing", "--allow-empty-commit")


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


def test_gc_get_config_without_rules_says_there_are_none_and_how_to_set_them(
    cli: Cli, repo: str, tmp_path: Path
) -> None:
    missing = cli("gc", "get-config", f"lakefs://{repo}", code=1)
    assert "no GC rules" in missing.stderr and "lakelet gc set-config" in missing.stderr, missing.stderr
    assert "check the repository, ref and path" not in missing.stderr
    rules = tmp_path / "rules.json"
    rules.write_text('{"default_retention_days": 21, "branches": []}')
    cli("gc", "set-config", f"lakefs://{repo}", "--filename", str(rules))
    assert "default retention days: 21" in cli("gc", "get-config", f"lakefs://{repo}").stdout
    gone = cli("gc", "get-config", "lakefs://no-such-repository-here", code=1)
    assert "check the repository" in gone.stderr and "no GC rules" not in gone.stderr
