"""``lakelet gc run`` fails fast, in one line and before Spark starts, when the stack does not answer, when the
S3 gateway's URL is given for the moto URL, and when there is no Java (PATH without it): as typed in a shell."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import lakefs
import pytest

from tests.e2e.conftest import PROJECT_DIR, LocalProcess

pytestmark = pytest.mark.e2e

_GATEWAY_LINE = re.compile(r"S3 gateway\s+(?P<url>http://\S+)")
_MOTO_LINE = re.compile(r"AWS stand-in\s+moto at (?P<url>http://\S+)")


def gc_run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "lakelet", "gc", "run", *args],
        cwd=PROJECT_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def shell_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LAKELET_", "LAKECTL_"))}
    env["LAKELET_DATA_DIR"] = str(tmp_path / "no-stack-here")
    env.update(extra)
    return env


def stack_flags(local: LocalProcess, s3_endpoint: str) -> list[str]:
    return [
        "--endpoint",
        local.endpoint,
        "--access-key-id",
        local.access_key_id,
        "--secret-access-key",
        local.secret_access_key,
        "--s3-endpoint",
        s3_endpoint,
    ]


def assert_one_line_refusal(done: subprocess.CompletedProcess[str], expected: str) -> None:
    """Refused in one line before anything ran: the prepare step (the first of four, before Spark starts) did not
    print. Counted, not timed: the machine is shared."""
    assert done.returncode == 1, done.stderr
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("lakelet gc run: "), done.stderr
    assert expected in done.stderr
    assert done.stdout == "" and "[1/4]" not in done.stderr  # not even the prepare ran


def test_no_stack(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        free = probe.getsockname()[1]
    # Nothing configured: no state file, and nothing on the port named by the environment.
    done = gc_run(["quickstart"], shell_env(tmp_path, LAKECTL_SERVER_ENDPOINT_URL=f"http://127.0.0.1:{free}"))
    assert_one_line_refusal(done, f"no Lakelet stack answers at http://127.0.0.1:{free}")
    assert "start one with `lakelet up`" in done.stderr


def test_the_gateway_url_given_by_mistake(local_stack: LocalProcess, repo: lakefs.Repository, tmp_path: Path) -> None:
    gateway = _GATEWAY_LINE.search(local_stack.banner)
    assert gateway, local_stack.banner
    done = gc_run([repo.id, *stack_flags(local_stack, gateway.group("url"))], shell_env(tmp_path))
    assert_one_line_refusal(done, f"{gateway.group('url')} is the Lakelet S3 gateway, not the stack's moto")


def test_no_java(local_stack: LocalProcess, repo: lakefs.Repository, tmp_path: Path) -> None:
    moto = _MOTO_LINE.search(local_stack.banner)
    assert moto, local_stack.banner
    env = shell_env(tmp_path, PATH=str(tmp_path / "empty-bin"))  # the interpreter is run by its full path
    env.pop("JAVA_HOME", None)
    moto_keys = ["--s3-access-key-id", local_stack.aws_access_key_id]
    moto_keys += ["--s3-secret-access-key", local_stack.aws_secret_access_key]
    done = gc_run([repo.id, *stack_flags(local_stack, moto.group("url")), *moto_keys], env)
    assert_one_line_refusal(done, "Spark needs Java 17, but there is no java on PATH")


def test_the_admin_key_is_not_moto_s(local_stack: LocalProcess, repo: lakefs.Repository, tmp_path: Path) -> None:
    moto = _MOTO_LINE.search(local_stack.banner)
    assert moto, local_stack.banner
    done = gc_run([repo.id, *stack_flags(local_stack, moto.group("url"))], shell_env(tmp_path))
    assert_one_line_refusal(done, "refuses this key pair: pass the stack's own (--s3-access-key-id")
