"""``lakelet`` argument parsing: flags, their environment variables, printed defaults, and bad values."""

from __future__ import annotations

import pytest

from lakelet.stack.cli import build_parser, main
from lakelet.stack.local import DEFAULT_ACCESS_KEY_ID, DEFAULT_SECRET_ACCESS_KEY


def test_local_defaults() -> None:
    options = build_parser({}).parse_args(["local"])
    assert options.command == "local"
    assert options.api_port == 8000
    assert options.s3_port == 8001
    assert options.moto_port == 0
    assert options.access_key_id == DEFAULT_ACCESS_KEY_ID == "AKIAIOSFOLKFSSAMPLES"
    assert options.secret_access_key == DEFAULT_SECRET_ACCESS_KEY


def test_environment_sets_the_defaults() -> None:
    environ = {
        "LAKELET_API_PORT": "9100",
        "LAKELET_S3_PORT": "9101",
        "LAKELET_MOTO_PORT": "9102",
        "LAKELET_ACCESS_KEY_ID": "AKIAEXAMPLE",
        "LAKELET_SECRET_ACCESS_KEY": "s3cr3t",
    }
    options = build_parser(environ).parse_args(["local"])
    assert (options.api_port, options.s3_port, options.moto_port) == (9100, 9101, 9102)
    assert (options.access_key_id, options.secret_access_key) == ("AKIAEXAMPLE", "s3cr3t")


def test_flags_win_over_the_environment() -> None:
    parser = build_parser({"LAKELET_API_PORT": "9100", "LAKELET_ACCESS_KEY_ID": "FROM_ENV"})
    options = parser.parse_args(["local", "--api-port", "0", "--access-key-id", "FROM_FLAG"])
    assert options.api_port == 0
    assert options.access_key_id == "FROM_FLAG"


@pytest.mark.parametrize("argv", [["local", "--api-port", "70000"], ["local", "--s3-port", "http"]])
def test_bad_ports_are_usage_errors(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        build_parser({}).parse_args(argv)
    assert exit_info.value.code == 2
    assert "port" in capsys.readouterr().err


def test_a_bad_port_in_the_environment_is_reported_like_a_bad_flag(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        build_parser({"LAKELET_API_PORT": "eight"}).parse_args(["local"])
    assert exit_info.value.code == 2
    assert "eight" in capsys.readouterr().err


def test_a_command_is_required(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main([])
    assert exit_info.value.code == 2
    assert "COMMAND" in capsys.readouterr().err


def test_help_prints_defaults_and_environment_names(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        build_parser({}).parse_args(["local", "--help"])
    text = " ".join(capsys.readouterr().out.split())  # argparse wraps lines
    for expected in ("8000", "8001", "LAKELET_API_PORT", "LAKELET_S3_PORT", "AKIAIOSFOLKFSSAMPLES",
                     "LAKELET_SECRET_ACCESS_KEY", "port of the S3 gateway"):
        assert expected in text
