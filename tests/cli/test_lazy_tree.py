"""The console entry builds only the top-level group a command names (lakelet/cli.py): what it prints must be
what the whole tree prints, and anything it cannot place (help, completion, unknown words) gets the whole tree."""

from pathlib import Path

import pytest
from typer.testing import CliRunner

from lakelet.cli import command_name, main, tree
from lakelet.commands.main import GROUPS


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["repo", "list"], "repo"),
        (["--json", "--debug", "--no-color", "branch", "list", "lakefs://r"], "branch"),
        (["-c", "/tmp/x.yaml", "fs", "ls"], "fs"),
        (["--config", "repo", "tag", "list"], "tag"),  # "repo" is the file here, not the command
        (["--config=/tmp/x.yaml", "commit"], "commit"),
        (["-c/tmp/x.yaml", "log"], "log"),
        (["--endpoint-url", "http://h:1", "--access-key-id", "k", "--secret-access-key", "s", "gc"], "gc"),
        (["--help"], None),
        (["-h", "repo"], None),
        (["--", "repo"], None),
        (["--bogus", "repo"], None),
        ([], None),
    ],
)
def test_the_command_is_found_past_the_roots_options(args: list[str], expected: str | None) -> None:
    assert command_name(args) == expected


@pytest.mark.parametrize("name", sorted(GROUPS))
def test_a_groups_own_tree_prints_what_the_whole_tree_prints(name: str) -> None:
    runner = CliRunner()
    for args in ([name, "--help"], [name, "no-such-subcommand"]):
        alone = runner.invoke(tree(name), args, prog_name="lakelet")
        whole = runner.invoke(tree(None), args, prog_name="lakelet")
        assert (alone.exit_code, alone.output) == (whole.exit_code, whole.output), args
    assert set(tree(name).registered_groups or ()) | set(tree(name).registered_commands or ()) != set()


def test_unknown_commands_and_help_get_the_whole_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert main(["rpeo", "list"]) == 2
    assert "No such command 'rpeo'" in capsys.readouterr().err
    assert main(["--help"]) == 0
    screen = capsys.readouterr().out
    assert all(f" {name} " in screen for name in GROUPS), screen
    # Several commands in one process, each with its own group: none sees another's tree.
    assert main(["repo", "--help"]) == 0 and "Usage: lakelet repo " in capsys.readouterr().out
    assert main(["branch", "--help"]) == 0 and "Usage: lakelet branch " in capsys.readouterr().out


def test_every_top_level_command_has_its_group() -> None:
    # A command missing from GROUPS would still run, through the whole tree, but slowly.
    from typer.main import get_command

    whole = get_command(tree(None))
    from lakelet.cli import IMPORT_SOURCE, UP

    # The stack's own top-level commands are built by lakelet/cli.py alone, without the commands package.
    assert set(whole.commands) == set(GROUPS) | {UP, IMPORT_SOURCE}  # type: ignore[attr-defined]  # a click group
