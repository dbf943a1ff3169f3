"""Where the CLI finds its server: ~/.lakectl.yaml < LAKECTL_* environment < flags, then a running local stack
through its state file; and what it says when nothing is configured. No server needed."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from lakelet.commands.errors import CLIError
from lakelet.commands.settings import normalize_endpoint, resolve, write_config_file
from lakelet.stack.statefile import write_state
from tests.cli.conftest import Result


def _file(path: Path, endpoint: str = "http://file:1", key: str = "FILEKEY", secret: str = "filesecret") -> Path:
    path.write_text(
        yaml.safe_dump(
            {"credentials": {"access_key_id": key, "secret_access_key": secret}, "server": {"endpoint_url": endpoint}}
        )
    )
    return path


def test_file_then_environment_then_flags(tmp_path: Path) -> None:
    config = _file(tmp_path / ".lakectl.yaml")
    env = {"HOME": str(tmp_path)}
    only_file = resolve(environ=env, state_dir=tmp_path)
    assert (only_file.endpoint, only_file.access_key_id, only_file.secret_access_key) == (
        "http://file:1",
        "FILEKEY",
        "filesecret",
    )
    env |= {"LAKECTL_SERVER_ENDPOINT_URL": "http://env:2/api/v1", "LAKECTL_CREDENTIALS_ACCESS_KEY_ID": "ENVKEY"}
    with_env = resolve(environ=env, state_dir=tmp_path)
    # Environment over file, field by field: the secret still comes from the file.
    assert (with_env.endpoint, with_env.access_key_id, with_env.secret_access_key) == (
        "http://env:2",
        "ENVKEY",
        "filesecret",
    )
    flags = resolve(config, endpoint="http://flag:3/", secret_access_key="flagsecret", environ=env, state_dir=tmp_path)
    assert (flags.endpoint, flags.access_key_id, flags.secret_access_key) == ("http://flag:3", "ENVKEY", "flagsecret")
    assert flags.source == f"config file {config} < environment < flags"


def test_config_flag_and_config_file_variable(tmp_path: Path) -> None:
    other = _file(tmp_path / "other.yaml", endpoint="http://other:9")
    assert resolve(other, environ={"HOME": str(tmp_path)}, state_dir=tmp_path).endpoint == "http://other:9"
    assert (
        resolve(environ={"HOME": str(tmp_path), "LAKECTL_CONFIG_FILE": str(other)}, state_dir=tmp_path).endpoint
        == "http://other:9"
    )
    with pytest.raises(CLIError, match="does not exist"):
        resolve(tmp_path / "missing.yaml", environ={"HOME": str(tmp_path)}, state_dir=tmp_path)


def test_running_local_stack_is_found_through_its_state_file(tmp_path: Path) -> None:
    write_state(
        tmp_path,
        {
            "pid": os.getpid(),
            "api_url": "http://127.0.0.1:4567",
            "access_key_id": "LOCALKEY",
            "secret_access_key": "localsecret",
        },
    )
    found = resolve(environ={"HOME": str(tmp_path)}, state_dir=tmp_path)
    assert (found.endpoint, found.access_key_id, found.source) == (
        "http://127.0.0.1:4567",
        "LOCALKEY",
        "lakelet up (state file)",
    )
    # Any configured endpoint wins over the stack.
    assert (
        resolve(
            environ={
                "HOME": str(tmp_path),
                "LAKECTL_SERVER_ENDPOINT_URL": "http://env:2",
                "LAKECTL_CREDENTIALS_ACCESS_KEY_ID": "K",
                "LAKECTL_CREDENTIALS_SECRET_ACCESS_KEY": "S",
            },
            state_dir=tmp_path,
        ).endpoint
        == "http://env:2"
    )


def test_a_dead_stack_is_not_found(tmp_path: Path) -> None:
    write_state(
        tmp_path,
        {"pid": 2**22 + 12345, "api_url": "http://127.0.0.1:4567", "access_key_id": "K", "secret_access_key": "S"},
    )
    with pytest.raises(CLIError, match="no running 'lakelet up' found"):
        resolve(environ={"HOME": str(tmp_path)}, state_dir=tmp_path)


@pytest.mark.parametrize("text, problem", [("server: [\n", "not valid YAML"), ("- a\n- b\n", "not a YAML mapping")])
def test_broken_config_files_are_named(tmp_path: Path, text: str, problem: str) -> None:
    (tmp_path / ".lakectl.yaml").write_text(text)
    with pytest.raises(CLIError, match=problem):
        resolve(environ={"HOME": str(tmp_path)}, state_dir=tmp_path)


def test_endpoint_forms() -> None:
    assert normalize_endpoint("http://h:1/api/v1/") == "http://h:1"
    with pytest.raises(CLIError, match="not an http"):
        normalize_endpoint("h:1")


def test_no_configuration_is_one_line_and_exit_1(run: Callable[..., Result]) -> None:
    result = run("repo", "list")
    assert result.exit_code == 1
    assert result.stderr.strip().count("\n") == 0
    assert result.stderr.startswith("error: no lakeFS server configured and no running 'lakelet up' found: run")
    assert "Traceback" not in result.stderr + result.stdout


def test_usage_errors_exit_2(run: Callable[..., Result]) -> None:
    assert run("repo", "create").exit_code == 2
    assert run("no-such-command").exit_code == 2
    bad_uri = run(
        "branch",
        "list",
        "s3://x",
        env={
            "LAKECTL_SERVER_ENDPOINT_URL": "http://127.0.0.1:1",
            "LAKECTL_CREDENTIALS_ACCESS_KEY_ID": "K",
            "LAKECTL_CREDENTIALS_SECRET_ACCESS_KEY": "S",
        },
    )
    assert (bad_uri.exit_code, bad_uri.stderr.strip()) == (
        1,
        "error: 's3://x' is not a lakefs:// URI: write it as lakefs://repository/ref/path",
    )


def test_unreachable_server_one_line_and_debug_traceback(run: Callable[..., Result]) -> None:
    env = {
        "LAKECTL_SERVER_ENDPOINT_URL": "http://127.0.0.1:1",
        "LAKECTL_CREDENTIALS_ACCESS_KEY_ID": "K",
        "LAKECTL_CREDENTIALS_SECRET_ACCESS_KEY": "S",
    }
    result = run("repo", "list", env=env)
    assert result.exit_code == 1
    assert result.stderr.strip().startswith("error: cannot reach the lakeFS server at http://127.0.0.1:1")
    assert "Traceback" not in result.stderr
    debug = run("--debug", "repo", "list", env=env)
    assert debug.exit_code == 1 and "Traceback" in debug.stderr


def test_config_writes_the_lakectl_file(run: Callable[..., Result], home: Path) -> None:
    result = run("config", input="AKIAX\nsecretx\nhttp://127.0.0.1:8000\n")
    assert result.exit_code == 0, result.stderr
    written = yaml.safe_load((home / ".lakectl.yaml").read_text())
    assert written == {
        "credentials": {"access_key_id": "AKIAX", "secret_access_key": "secretx"},
        "server": {"endpoint_url": "http://127.0.0.1:8000"},
    }
    assert (home / ".lakectl.yaml").stat().st_mode & 0o077 == 0
    write_config_file(home / ".lakectl.yaml", "http://h:2", "K2", "S2")
    assert yaml.safe_load((home / ".lakectl.yaml").read_text())["server"]["endpoint_url"] == "http://h:2"
