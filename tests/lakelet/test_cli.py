"""``lakelet up`` and ``lakelet gc run`` in the one typer tree: flags, their environment variables, printed
defaults, bad values, and the lakectl subcommands living next to the stack's flags."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from lakelet import cli
from lakelet.defaults import DEFAULT_ACCESS_KEY_ID, DEFAULT_SECRET_ACCESS_KEY
from lakelet.stack import cli as stack_cli
from lakelet.stack import local_gc

_STACK_ENV = (
    "LAKELET_API_PORT",
    "LAKELET_S3_PORT",
    "LAKELET_MOTO_PORT",
    "LAKELET_ACCESS_KEY_ID",
    "LAKELET_SECRET_ACCESS_KEY",
    "LAKELET_DATA_DIR",
    "LAKECTL_SERVER_ENDPOINT_URL",
    "LAKECTL_CREDENTIALS_ACCESS_KEY_ID",
    "LAKECTL_CREDENTIALS_SECRET_ACCESS_KEY",
    "LAKELET_AWS_ENDPOINT_URL",
)


@pytest.fixture
def parsed(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> dict[str, Any]:
    """Runs the real tree, with the stack's and the GC's runners replaced by recorders of what they were given."""
    for name in _STACK_ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    seen: dict[str, Any] = {}

    def record(key: str) -> Any:
        def runner(options: Any) -> int:
            seen[key] = options
            return 0

        return runner

    monkeypatch.setattr(stack_cli, "run_local", record("local"))
    monkeypatch.setattr(local_gc, "run_command", record("gc"))
    return seen


def test_local_defaults(parsed: dict[str, Any], tmp_path: Path) -> None:
    assert cli.main(["up"]) == 0
    options = parsed["local"]
    assert (options.api_port, options.s3_port, options.moto_port) == (8000, 8001, 0)
    assert options.access_key_id == DEFAULT_ACCESS_KEY_ID == "AKIAIOSFOLKFSSAMPLES"
    assert options.secret_access_key == DEFAULT_SECRET_ACCESS_KEY
    assert options.data_dir == tmp_path / "xdg" / "lakelet"
    assert not options.sample_data and not options.verbose and not options.accept_journal_loss


def test_environment_sets_the_defaults(parsed: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in {
        "LAKELET_API_PORT": "9100",
        "LAKELET_S3_PORT": "9101",
        "LAKELET_MOTO_PORT": "9102",
        "LAKELET_ACCESS_KEY_ID": "AKIAEXAMPLE",
        "LAKELET_SECRET_ACCESS_KEY": "s3cr3t",
    }.items():
        monkeypatch.setenv(name, value)
    assert cli.main(["up", "--sample-data", "--verbose", "--accept-journal-loss"]) == 0
    options = parsed["local"]
    assert (options.api_port, options.s3_port, options.moto_port) == (9100, 9101, 9102)
    assert (options.access_key_id, options.secret_access_key) == ("AKIAEXAMPLE", "s3cr3t")
    assert options.sample_data and options.verbose and options.accept_journal_loss


def test_flags_win_over_the_environment(parsed: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LAKELET_API_PORT", "9100")
    monkeypatch.setenv("LAKELET_ACCESS_KEY_ID", "FROM_ENV")
    assert cli.main(["up", "--api-port", "0", "--access-key-id", "FROM_FLAG"]) == 0
    assert (parsed["local"].api_port, parsed["local"].access_key_id) == (0, "FROM_FLAG")


def test_the_data_directory_comes_from_the_flag_the_environment_or_the_user_folder(
    parsed: dict[str, Any], monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("LAKELET_DATA_DIR", str(tmp_path / "env"))
    assert cli.main(["up"]) == 0 and parsed["local"].data_dir == tmp_path / "env"
    assert cli.main(["up", "--data-dir", str(tmp_path / "flag")]) == 0
    assert parsed["local"].data_dir == tmp_path / "flag"
    assert cli.main(["up", "--ephemeral"]) == 0 and parsed["local"].data_dir is None
    parsed.clear()
    assert cli.main(["up", "--ephemeral", "--data-dir", "x"]) == 2 and "local" not in parsed
    assert "not both" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [["local", "--api-port", "70000"], ["local", "--s3-port", "http"]])
def test_bad_ports_are_usage_errors(
    argv: list[str], parsed: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(argv) == 2
    assert "port" in capsys.readouterr().err and "local" not in parsed


def test_a_bad_port_in_the_environment_is_reported_like_a_bad_flag(
    parsed: dict[str, Any], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("LAKELET_API_PORT", "eight")
    assert cli.main(["up"]) == 2
    assert "LAKELET_API_PORT" in capsys.readouterr().err and "local" not in parsed


def test_the_old_spelling_with_the_stacks_flags_still_starts_it_with_a_deprecation_note(
    parsed: dict[str, Any], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert cli.main(["local", "--data-dir", str(tmp_path / "old")]) == 0
    assert parsed["local"].data_dir == tmp_path / "old"
    err = capsys.readouterr().err
    assert "deprecated" in err and "use 'lakelet up'" in err


def test_lakelet_local_alone_is_lakectls_group_and_starts_nothing(
    parsed: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    cli.main(["local"])
    captured = capsys.readouterr()
    text = " ".join((captured.out + captured.err).split())
    assert "local" not in parsed and "deprecated" not in text
    for subcommand in ("init", "list", "clone", "status", "pull", "commit", "checkout"):
        assert subcommand in text
    assert cli.main(["local", "--help"]) == 0 and "local" not in parsed
    assert "--api-port" not in capsys.readouterr().out


def test_the_stack_flags_are_refused_with_a_lakectl_subcommand(
    parsed: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["up", "--api-port", "9000", "status"]) == 2
    assert "unexpected extra argument" in capsys.readouterr().err and "local" not in parsed


def test_help_prints_defaults_environment_names_and_the_subcommands(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["up", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    for expected in (
        "8000",
        "8001",
        "LAKELET_API_PORT",
        "LAKELET_S3_PORT",
        "AKIAIOSFOLKFSSAMPLES",
        "LAKELET_SECRET_ACCESS_KEY",
        "port of the S3 gateway",
        "--ephemeral",
        "--sample-data",
        "--accept-journal-loss",
        "lakelet local export",
    ):
        assert expected in text


def test_gc_run_options_and_their_environment_defaults(parsed: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LAKECTL_SERVER_ENDPOINT_URL", "http://127.0.0.1:9999")
    monkeypatch.setenv("LAKELET_AWS_ENDPOINT_URL", "http://moto:1")
    assert cli.main(["gc", "run", "repo", "--mark-only", "--min-age-seconds", "0", "--list-slices", "3"]) == 0
    options = parsed["gc"]
    assert options.repository == "repo" and options.mark_only and options.sweep_run is None
    assert options.min_age_seconds == 0 and options.list_slices == 3
    assert options.endpoint == "http://127.0.0.1:9999" and options.s3_endpoint == "http://moto:1"
    assert options.access_key_id is None
    monkeypatch.delenv("LAKECTL_SERVER_ENDPOINT_URL")
    monkeypatch.delenv("LAKELET_AWS_ENDPOINT_URL")
    monkeypatch.setenv("LAKELET_DATA_DIR", "/tmp/lakelet-data")
    assert cli.main(["gc", "run", "repo", "--json"]) == 0
    defaults = parsed["gc"]
    assert defaults.endpoint is None and defaults.s3_endpoint is None and defaults.json
    assert defaults.data_dir == defaults.implied_data_dir == Path("/tmp/lakelet-data")
    assert defaults.min_age_seconds == 86_400 and (defaults.commit_partitions, defaults.address_partitions) == (2, 4)


def test_gc_run_marks_or_sweeps_not_both(parsed: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["gc", "run", "repo", "--mark-only", "--sweep-run", "r1"]) == 2
    assert "gc" not in parsed and "--sweep-run" in capsys.readouterr().err


def test_the_tree_has_no_argparse_left() -> None:
    root = Path(__file__).resolve().parents[2] / "lakelet"
    users = [str(p.relative_to(root)) for p in root.rglob("*.py") if "import argparse" in p.read_text()]
    assert users == []


def test_the_stack_process_takes_arrow_buffers_from_the_system_allocator(monkeypatch: pytest.MonkeyPatch) -> None:
    import pyarrow

    from lakelet.stack.cli import use_system_allocator

    chosen: list[Any] = []
    monkeypatch.setattr(pyarrow, "set_memory_pool", chosen.append)
    use_system_allocator()
    assert [pool.backend_name for pool in chosen] == ["system"]


def test_the_stack_process_warms_what_its_first_commit_would_import() -> None:
    """pyarrow imports pandas (installed with the dev dependencies) on its first conversion of a list, and the
    range writer pyarrow.parquet (and pyarrow.fs through it) on its first range: the stack pays both in the
    background once it answers, not in its first commit. A fresh interpreter, so that nothing the tests imported
    already counts."""
    probe = """
import sys
from lakelet.stack.cli import warm_range_writes
warm_range_writes().join()
before = set(sys.modules)
from chalicelib.graveler.committed.columns import RangeColumns
from chalicelib.graveler.committed.format import encode_range
encode_range(RangeColumns.from_lists(["k"], ["s3://b/a"], [1], ["e"], [1], ["t"], ["{}"], [b"i"]))
print(sorted(m for m in set(sys.modules) - before if m.split(".")[0] in ("pandas", "pyarrow", "numpy")))
"""
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout.strip() == "[]", done.stdout
