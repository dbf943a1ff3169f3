"""lakelet/help_cache.py: which arguments are help screens, and what makes a recorded screen stale."""

from __future__ import annotations

import io
import os
import sys
from pathlib import Path

import pytest

from lakelet import help_cache


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--help"], True),
        (["-h"], True),
        (["repo", "--help"], True),
        (["repo", "list", "-h"], True),
        ([], False),
        (["repo", "list"], False),
        (["--json", "--help"], False),  # an option may change what runs: typer decides
        (["--help", "repo"], False),
        (["repo", "", "--help"], False),
    ],
)
def test_only_subcommand_names_then_a_help_flag_are_cached(args: list[str], expected: bool) -> None:
    assert help_cache.cacheable(args) is expected


def test_the_key_changes_with_the_code_the_arguments_and_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "lakelet"
    (package / "commands").mkdir(parents=True)
    module = package / "commands" / "repo.py"
    module.write_text("HELP = 'one'\n")
    monkeypatch.setattr(help_cache, "PACKAGE_DIR", package)
    monkeypatch.delenv("COLUMNS", raising=False)
    first = help_cache.key(["--help"])
    assert help_cache.key(["--help"]) == first
    assert help_cache.key(["repo", "--help"]) != first
    module.write_text("HELP = 'two'\n")
    edited = help_cache.key(["--help"])
    assert edited != first
    os.utime(module, ns=(1, 1))
    assert help_cache.key(["--help"]) != edited
    touched = help_cache.key(["--help"])
    monkeypatch.setenv("COLUMNS", "60")
    assert help_cache.key(["--help"]) != touched
    monkeypatch.delenv("COLUMNS")
    monkeypatch.setenv("LAKECTL_CREDENTIALS_SECRET_ACCESS_KEY", "s3cr3t")  # never part of the key
    assert help_cache.key(["--help"]) == touched


def test_a_run_is_stored_only_when_it_succeeded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    with help_cache.recording(["tag", "--help"]) as codes:
        print("Usage: lakelet tag")
        codes.append(2)
    assert help_cache.lookup(["tag", "--help"]) is None
    with help_cache.recording(["tag", "--help"]) as codes:
        print("Usage: lakelet tag")
        codes.append(0)
    assert help_cache.lookup(["tag", "--help"]) == "Usage: lakelet tag\n"
    assert sys.stdout.getvalue() == "Usage: lakelet tag\n" * 2  # written through both times


def test_old_screens_are_pruned(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    for n in range(help_cache.KEPT + 5):
        with help_cache.recording([f"c{n}", "--help"]) as codes:
            print(n)
            codes.append(0)
    assert len(list(help_cache.cache_dir().glob("*.txt"))) == help_cache.KEPT
    assert help_cache.lookup([f"c{help_cache.KEPT + 4}", "--help"]) == f"{help_cache.KEPT + 4}\n"
