"""Running lakefs-spec's own test suite, unchanged, against a fresh ``lakelet up``.

lakefs-spec ships its tests in its sdist, and they are the closest thing to a second opinion on Lakelet's lakeFS
API: they exercise fsspec paths, transactions, pandas, polars and duckdb through the official client. They are
fetched at test time (nothing of theirs is committed), and their conftest hard-codes what their own CI sets up:
a lakeFS on ``localhost:8000`` with the quickstart key pair. So the stack is started with exactly those, in a
temporary data directory, and nothing else is configured.

Every step fails loudly: a download that does not happen is a ``SuiteUnavailable`` (the tier fails and says
why), never a pass or a skip.
"""

from __future__ import annotations

import importlib.metadata
import os
import signal
import socket
import subprocess
import sys
import tarfile
import time
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

PROJECT_DIR = Path(__file__).resolve().parents[2]
PACKAGE = "lakefs-spec"
VERSION = "0.15.1"
# What lakefs-spec's conftest (tests/conftest.py) and smoke tests connect with, verbatim.
HOST, PORT = "127.0.0.1", 8000
QUICKSTART_ACCESS_KEY_ID = "AKIAIOSFOLQUICKSTART"
QUICKSTART_SECRET_ACCESS_KEY = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
DOWNLOAD_TIMEOUT_SECONDS = 300.0
READY_TIMEOUT_SECONDS = 120.0
STOP_TIMEOUT_SECONDS = 30.0
SUITE_TIMEOUT_SECONDS = 1800.0
# Of the unpacked sdist only these are needed: the tests and the pytest settings they were written for.
_WANTED = ("tests/", "pyproject.toml")


class SuiteUnavailable(Exception):
    """lakefs-spec's tests could not be obtained (download or unpacking failed): the tier must fail on it."""


@dataclass(frozen=True, slots=True)
class SuiteResult:
    """What lakefs-spec's pytest reported (from its JUnit XML), and how long the run took."""

    tests: int
    failures: int
    errors: int
    skipped: int
    seconds: float
    returncode: int
    not_passed: tuple[str, ...] = field(default=())

    @property
    def passed(self) -> int:
        return self.tests - self.failures - self.errors - self.skipped

    def summary(self) -> str:
        return (
            f"lakefs-spec {VERSION}: {self.passed} of {self.tests} passed, {self.failures} failed, "
            f"{self.errors} errors, {self.skipped} skipped in {self.seconds:.1f} s"
        )


def download_sdist(dest: Path, pip_args: Sequence[str] = ()) -> Path:
    """``pip download`` the sdist of lakefs-spec (never a wheel: only the sdist holds tests/) into ``dest``."""
    dest.mkdir(parents=True, exist_ok=True)
    command = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--no-binary",
        ":all:",
        "--disable-pip-version-check",
        "-d",
        str(dest),
        *pip_args,
        f"{PACKAGE}=={VERSION}",
    ]
    try:
        done = subprocess.run(
            command,
            capture_output=True,
            text=True,
            timeout=DOWNLOAD_TIMEOUT_SECONDS,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired as error:
        raise SuiteUnavailable(f"downloading {PACKAGE}=={VERSION} took over {error.timeout:.0f} s") from None
    archives = sorted(dest.glob(f"{PACKAGE.replace('-', '_')}-{VERSION}.tar.gz"))
    if done.returncode != 0 or not archives:
        tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-15:])
        raise SuiteUnavailable(f"downloading {PACKAGE}=={VERSION} with pip failed (exit {done.returncode}):\n{tail}")
    return archives[0]


def unpack_tests(archive: Path, dest: Path) -> Path:
    """Extracts the sdist's ``tests/`` and ``pyproject.toml`` into ``dest``; returns ``dest``."""
    try:
        with tarfile.open(archive, "r:gz") as tar:
            members = []
            for member in tar.getmembers():
                # Members are "<name>-<version>/<path>"; strip the top folder.
                _, _, inner = member.name.partition("/")
                if inner and (inner == "pyproject.toml" or inner.startswith(_WANTED[0])):
                    member.name = inner
                    members.append(member)
            # The "data" filter refuses links and paths leaving dest: the archive is downloaded, not trusted.
            tar.extractall(dest, members=members, filter="data")
    except (tarfile.TarError, OSError, EOFError) as error:
        raise SuiteUnavailable(f"unpacking {archive.name} failed: {error}") from None
    if not (dest / "tests" / "conftest.py").is_file():
        raise SuiteUnavailable(f"{archive.name} holds no tests/conftest.py")
    return dest


def parse_junit(path: Path, seconds: float, returncode: int) -> SuiteResult:
    """Counts of a JUnit XML report (pytest's), with the ids of the tests that did not pass."""
    try:
        root = ET.parse(path).getroot()
    except (ET.ParseError, OSError) as error:
        raise AssertionError(f"lakefs-spec's run wrote no readable report (exit {returncode}): {error}") from None
    suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
    counts = {
        name: sum(int(suite.get(name, "0")) for suite in suites) for name in ("tests", "failures", "errors", "skipped")
    }
    not_passed = []
    for case in root.iter("testcase"):
        outcome = next((child.tag for child in case if child.tag in ("failure", "error", "skipped")), None)
        if outcome is not None:
            not_passed.append(f"{outcome}: {case.get('classname', '')}::{case.get('name', '')}")
    return SuiteResult(
        counts["tests"], counts["failures"], counts["errors"], counts["skipped"], seconds, returncode, tuple(not_passed)
    )


def port_is_free(host: str = HOST, port: int = PORT) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind((host, port))
        except OSError:
            return False
    return True


def _die_with_parent() -> None:
    """In the child, before exec: have Linux SIGTERM it if pytest dies, so port 8000 is never left taken."""
    if sys.platform.startswith("linux"):
        import ctypes

        pr_set_pdeathsig = 1
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGTERM)


class QuickstartStack:
    """``python -m lakelet up --sample-data`` on 127.0.0.1:8000 with the quickstart keys, in ``workdir``."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.stdout_path = workdir / "lakelet-local.out"
        self.stderr_path = workdir / "lakelet-local.err"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> QuickstartStack:
        if not port_is_free():
            raise AssertionError(f"{HOST}:{PORT} is taken; lakefs-spec's tests can only reach a lakeFS there")
        # The developer's own LAKELET_* settings (ports, keys, data directory) must not reach this stack.
        env = {name: value for name, value in os.environ.items() if not name.startswith("LAKELET_")}
        command = [
            sys.executable,
            "-m",
            "lakelet",
            "up",
            "--sample-data",
            "--api-port",
            str(PORT),
            "--s3-port",
            "0",
            "--moto-port",
            "0",
            "--access-key-id",
            QUICKSTART_ACCESS_KEY_ID,
            "--secret-access-key",
            QUICKSTART_SECRET_ACCESS_KEY,
            "--data-dir",
            str(self.workdir / "data"),
        ]
        with open(self.stdout_path, "wb") as out, open(self.stderr_path, "wb") as err:
            self.process = subprocess.Popen(
                command,
                cwd=PROJECT_DIR,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                preexec_fn=_die_with_parent,  # noqa: PLW1509 (no threads yet)
            )
        deadline = time.monotonic() + READY_TIMEOUT_SECONDS
        while "Press Ctrl-C to stop." not in self.stdout_path.read_text(errors="replace"):
            if self.process.poll() is not None:
                raise AssertionError(
                    f"lakelet up exited with {self.process.returncode} before it was ready:\n{self.stderr_tail()}"
                )
            if time.monotonic() > deadline:
                self.stop()
                raise AssertionError(f"lakelet up not ready in {READY_TIMEOUT_SECONDS:.0f} s:\n{self.stderr_tail()}")
            time.sleep(0.2)
        return self

    def stderr_tail(self, lines: int = 40) -> str:
        return "\n".join(self.stderr_path.read_text(errors="replace").splitlines()[-lines:])

    def stop(self) -> int | None:
        if self.process is None:
            return None
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=STOP_TIMEOUT_SECONDS)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return self.process.returncode


def run_suite(suite_dir: Path, home: Path, extra_args: Sequence[str] = ()) -> SuiteResult:
    """Runs the unpacked suite with this venv's pytest in a subprocess; its output goes to our stdout."""
    report = suite_dir / "report.xml"
    home.mkdir(parents=True, exist_ok=True)
    # HOME is a scratch folder because one of their fixtures writes and then deletes ~/.lakectl.yaml. No
    # PYTHONPATH: `tests` must be their package (the one in the current directory), never Lakelet's.
    env = {
        name: value
        for name, value in os.environ.items()
        if name != "PYTHONPATH" and not name.startswith(("LAKECTL_", "LAKEFS_", "LAKELET_"))
    }
    env["HOME"] = str(home)
    command = [
        sys.executable,
        "-m",
        "pytest",
        "tests",
        "-p",
        "no:cacheprovider",
        f"--junitxml={report}",
        "-q",
        "-rfE",
        *extra_args,
    ]
    started = time.monotonic()
    try:
        done = subprocess.run(
            command, cwd=suite_dir, env=env, stdin=subprocess.DEVNULL, timeout=SUITE_TIMEOUT_SECONDS, check=False
        )
    except subprocess.TimeoutExpired:
        raise AssertionError(f"lakefs-spec's suite ran over {SUITE_TIMEOUT_SECONDS:.0f} s") from None
    return parse_junit(report, time.monotonic() - started, done.returncode)


def installed_version() -> str:
    """The lakefs-spec this interpreter imports: the tests must be those of the library they run against."""
    try:
        return importlib.metadata.version(PACKAGE)
    except importlib.metadata.PackageNotFoundError:
        return ""
