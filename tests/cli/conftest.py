"""CLI fixtures: ONE ``lakelet up`` stack (a subprocess, as in tests/e2e) for every CLI test that needs a
server, and ``cli(...)``, which runs the ``lakelet`` typer app in process through typer's CliRunner with the
lakectl environment pointing at that stack and HOME in a temporary directory (no ~/.lakectl.yaml leaks in).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lakelet.commands.main import app
from tests.e2e.conftest import PROJECT_DIR, LocalProcess, launch_local

ENV_NAMES = (
    "LAKECTL_SERVER_ENDPOINT_URL",
    "LAKECTL_CREDENTIALS_ACCESS_KEY_ID",
    "LAKECTL_CREDENTIALS_SECRET_ACCESS_KEY",
    "LAKECTL_CONFIG_FILE",
    "LAKELET_DATA_DIR",
)


@dataclass
class Result:
    exit_code: int
    stdout: str
    stderr: str


# Commits of more than 500 changes, and merges over ranges of more than 500 entries, run as the Step Functions
# workflows and the synchronous calls answer 202 at once: the flow's 1,000-file commit and its merges are tasks
# the CLI must follow to the end.
STACK_ENV = {
    "LAKELET_COMMIT_WORKFLOW_THRESHOLD": "500",
    "LAKELET_MERGE_WORKFLOW_THRESHOLD": "500",
    "LAKELET_WORKFLOW_WAIT_SECONDS": "0",
    "LAKELET_IMPORT_ALLOWED_LOCATIONS": "s3://cli-import-source/",
}


@pytest.fixture(scope="session")
def cli_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalProcess]:
    local = launch_local(tmp_path_factory.mktemp("cli-stack"), env=STACK_ENV)
    try:
        yield local
    finally:
        local.stop()


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A HOME of the test's own, and no lakectl/lakelet variables from the developer's shell."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("LAKELET_DATA_DIR", str(tmp_path / "no-stack"))
    for name in ENV_NAMES[:-1]:
        monkeypatch.delenv(name, raising=False)
    return tmp_path


def stack_env(stack: LocalProcess) -> dict[str, str]:
    return {
        "LAKECTL_SERVER_ENDPOINT_URL": stack.endpoint,
        "LAKECTL_CREDENTIALS_ACCESS_KEY_ID": stack.access_key_id,
        "LAKECTL_CREDENTIALS_SECRET_ACCESS_KEY": stack.secret_access_key,
    }


@pytest.fixture
def run(home: Path) -> Callable[..., Result]:
    """``run(*args, env=None, input=None)``: the CLI in process, with no configuration unless ``env`` gives one."""
    runner = CliRunner()

    def invoke(*args: str, env: dict[str, str] | None = None, input: str | None = None) -> Result:
        result = runner.invoke(app, list(args), env=env, input=input, catch_exceptions=False)
        return Result(result.exit_code, result.stdout, result.stderr)

    return invoke


@pytest.fixture
def cli(run: Callable[..., Result], cli_stack: LocalProcess) -> Callable[..., Result]:
    """``cli(*args)``: the CLI in process against the session's stack; fails the test on a non-zero exit
    unless ``code=`` says otherwise."""
    env = stack_env(cli_stack)

    def invoke(*args: str, code: int = 0, input: str | None = None) -> Result:
        result = run(*args, env=env, input=input)
        assert result.exit_code == code, (args, result.exit_code, result.stdout, result.stderr)
        return result

    return invoke


@pytest.fixture
def repo(cli: Callable[..., Result], request: pytest.FixtureRequest) -> str:
    """A fresh repository (created through the CLI); its name."""
    stem = re.sub(r"[^a-z0-9-]+", "-", request.node.name.lower()).strip("-")[:30]
    name = f"{stem}-{uuid.uuid4().hex[:6]}".lstrip("-")
    cli("repo", "create", f"lakefs://{name}")
    return name


def lakelet_process(args: list[str], env: dict[str, str], cwd: Path, **kwargs: object) -> subprocess.Popen[bytes]:
    """``python -m lakelet ARGS`` as a shell would run it (stdout and stderr piped: not a terminal)."""
    full_env = {k: v for k, v in os.environ.items() if not k.startswith(("LAKECTL_", "LAKELET_"))}
    full_env.update(env)
    full_env["PYTHONPATH"] = str(PROJECT_DIR)
    # A run started in the background (CI's nohup, `make test &`) ignores SIGINT, and a child inherits an ignored
    # signal, so the interrupt tests would see Ctrl-C ignored. A handler is not inherited (exec resets it to the
    # default, as in a terminal): one is set while the child starts.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        return subprocess.Popen(
            [sys.executable, "-m", "lakelet", *args],
            cwd=cwd,
            env=full_env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            **kwargs,
        )  # type: ignore[call-overload]
    finally:
        signal.signal(signal.SIGINT, previous)


def make_tree(root: Path, count: int, width: int = 10) -> dict[str, bytes]:
    """``count`` small files spread over folders; returns {relative path: content}."""
    files = {}
    for i in range(count):
        rel = f"d{i % width}/sub{i % 3}/file-{i:04d}.txt"
        data = f"file {i} {uuid.uuid4().hex}\n".encode()
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
        files[rel] = data
    return files


def read_tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}
