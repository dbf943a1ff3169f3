"""End-to-end fixtures: ``lakelet up`` in a subprocess on free ports, and the official lakeFS client on it.

A subprocess rather than an in-process stack: the stack sets process-wide state (environment, the app's
services, moto's backends) that the rest of the suite must not see, and stopping the process frees every port.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import lakefs
import pytest
from lakefs.client import Client

# The S3 gateway's fixtures, offered to every test here so that no test module imports (and shadows) them.
from .s3support import s3, s3_repo  # noqa: F401

PROJECT_DIR = Path(__file__).resolve().parents[2]
READY_TIMEOUT_SECONDS = 120.0
STOP_TIMEOUT_SECONDS = 30.0
_API_LINE = re.compile(r"^\s*lakeFS API\s+(?P<url>http://\S+)/api/v1\s*$", re.MULTILINE)
_KEY_LINE = re.compile(r"^\s*Access key ID\s+(?P<value>\S+)\s*$", re.MULTILINE)
_SECRET_LINE = re.compile(r"^\s*Secret access key\s+(?P<value>\S+)\s*$", re.MULTILINE)


@dataclass
class LocalProcess:
    """A running ``python -m lakelet up`` and what its banner said."""

    process: subprocess.Popen[bytes]
    stdout_path: Path
    stderr_path: Path
    endpoint: str = ""
    access_key_id: str = ""
    secret_access_key: str = ""
    banner: str = field(default="", repr=False)
    # The key pair of the stack's AWS stand-in (moto): the stack's own, from its state file; not the admin's.
    aws_access_key_id: str = ""
    aws_secret_access_key: str = field(default="", repr=False)

    @property
    def api_url(self) -> str:
        return self.endpoint + "/api/v1"

    def stdout(self) -> str:
        return self.stdout_path.read_text(errors="replace")

    def stderr_tail(self, lines: int = 40) -> str:
        return "\n".join(self.stderr_path.read_text(errors="replace").splitlines()[-lines:])

    def stop(self, sig: int = signal.SIGTERM) -> int:
        """Send ``sig`` and wait for the exit code; kill it (and fail) if it does not stop in time."""
        if self.process.poll() is None:
            self.process.send_signal(sig)
            try:
                self.process.wait(timeout=STOP_TIMEOUT_SECONDS)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
                raise AssertionError(f"lakelet up ignored signal {sig} for {STOP_TIMEOUT_SECONDS} s") from None
        return self.process.returncode


def _die_with_parent() -> None:
    """In the child, before exec: ask Linux to SIGTERM it when pytest dies, even if pytest is killed outright."""
    if sys.platform.startswith("linux"):
        import ctypes

        pr_set_pdeathsig = 1
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGTERM)


def launch_local(log_dir: Path, *args: str, env: dict[str, str] | None = None) -> LocalProcess:
    """Start ``python -m lakelet up --api-port 0 --moto-port 0 --s3-port 0 --aws-limits ARGS``; wait for its banner.

    Unless ARGS name a ``--data-dir`` or ``--ephemeral``, the stack keeps its state (and its state file) in a data
    directory of its own under ``log_dir``: a test never touches the user's data directory.
    """
    log_dir.mkdir(parents=True, exist_ok=True)
    run_id = uuid.uuid4().hex[:8]
    stdout_path, stderr_path = log_dir / f"local-{run_id}.out", log_dir / f"local-{run_id}.err"
    # The developer's LAKELET_* settings (ports, keys) must not leak into the stack under test.
    child_env = {name: value for name, value in os.environ.items() if not name.startswith("LAKELET_")}
    child_env.update(env or {})
    if "--data-dir" not in args and "--ephemeral" not in args:
        args = (*args, "--data-dir", str(log_dir / f"data-{run_id}"))
    # The tiers that start a stack meet what a deployed stack answers (docs/local-stack.md, "AWS limits"); a test
    # that needs the plain stack passes --no-aws-limits, which comes later and wins.
    args = ("--aws-limits", *args)
    with open(stdout_path, "wb") as out, open(stderr_path, "wb") as err:
        process = subprocess.Popen(
            [sys.executable, "-m", "lakelet", "up", "--api-port", "0", "--moto-port", "0", "--s3-port", "0", *args],
            cwd=PROJECT_DIR,
            env=child_env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            # Only prctl runs between fork and exec, and Popen offers no other way to set the parent-death signal.
            preexec_fn=_die_with_parent,  # noqa: PLW1509
        )
    local = LocalProcess(process, stdout_path, stderr_path)
    deadline = time.monotonic() + READY_TIMEOUT_SECONDS
    while True:
        text = local.stdout()
        api = _API_LINE.search(text)
        if api and "Press Ctrl-C to stop." in text:
            break
        if process.poll() is not None:
            raise AssertionError(
                f"lakelet up exited with {process.returncode} before it was ready.\n"
                f"stdout:\n{text}\nstderr:\n{local.stderr_tail()}"
            )
        if time.monotonic() > deadline:
            local.stop(signal.SIGKILL)
            raise AssertionError(f"lakelet up not ready in {READY_TIMEOUT_SECONDS} s:\n{local.stderr_tail()}")
        time.sleep(0.1)
    key, secret = _KEY_LINE.search(text), _SECRET_LINE.search(text)
    assert key and secret, text
    local.endpoint = api.group("url")
    local.access_key_id, local.secret_access_key = key.group("value"), secret.group("value")
    local.banner = text
    if "--ephemeral" not in args:
        data_dir = Path(args[list(args).index("--data-dir") + 1])
        state = json.loads((data_dir / "state.json").read_text())
        local.aws_access_key_id, local.aws_secret_access_key = (
            state["aws_access_key_id"],
            state["aws_secret_access_key"],
        )
    return local


@pytest.fixture(scope="session")
def local_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalProcess]:
    """One stack for the whole e2e session; it must also stop cleanly (exit 0 on SIGTERM) at the end."""
    local = launch_local(tmp_path_factory.mktemp("lakelet-local"))
    try:
        yield local
    finally:
        code = local.stop()
    assert code == 0, f"lakelet up exited with {code}:\n{local.stderr_tail()}"


@pytest.fixture
def launch(tmp_path: Path) -> Iterator[Callable[..., LocalProcess]]:
    """``launch(*args, env=...)`` starts a stack of the test's own; any still running at the end is killed."""
    started: list[LocalProcess] = []

    def start(*args: str, env: dict[str, str] | None = None) -> LocalProcess:
        local = launch_local(tmp_path, *args, env=env)
        started.append(local)
        return local

    yield start
    for local in started:
        if local.process.poll() is None:
            local.process.kill()
            local.process.wait()


@pytest.fixture(scope="session")
def client(local_stack: LocalProcess) -> Client:
    return Client(host=local_stack.endpoint, username=local_stack.access_key_id, password=local_stack.secret_access_key)


@pytest.fixture
def new_repo(client: Client, request: pytest.FixtureRequest) -> Callable[[], lakefs.Repository]:
    """Creates a fresh repository in the namespace the server offers (default_namespace_prefix from /config)."""

    def create() -> lakefs.Repository:
        stem = re.sub(r"[^a-z0-9-]+", "-", request.node.name.lower()).strip("-")[:40]
        name = f"{stem}-{uuid.uuid4().hex[:8]}".lstrip("-")
        prefix = client.storage_config.default_namespace_prefix
        assert prefix, "GET /config gave no default_namespace_prefix"
        namespace = prefix.rstrip("/") + "/" + name
        return lakefs.Repository(name, client=client).create(storage_namespace=namespace)

    return create


@pytest.fixture
def repo(new_repo: Callable[[], lakefs.Repository]) -> lakefs.Repository:
    return new_repo()
