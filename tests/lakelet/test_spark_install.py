"""Spark is the [gc] extra, not the local stack's: ``make run`` installs no pyspark, and ``lakelet gc run``
installs it with pip the first time it needs it. pip is replaced at the subprocess boundary: these tests check
the command it is given, the lines the user sees, and the one-line error of a failed (offline) install."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from lakelet import cli
from lakelet.stack import gc_preflight, local_gc, spark_local
from lakelet.stack.spark_local import SparkInstallError

ROOT = Path(__file__).resolve().parents[2]
PIN = re.search(r"^pyspark==\S+", (ROOT / "requirements-gc.txt").read_text(), re.MULTILINE)
assert PIN is not None
PYSPARK = PIN.group(0)
# Every pin of the [gc] extra, pyspark's first: what the first `lakelet gc run` installs (pandas: pyspark's
# mapInArrow requires it).
GC_PINS = tuple(line.split("#")[0].strip() for line in (ROOT / "requirements-gc.txt").read_text().splitlines())
GC_PINS = (PYSPARK, *(pin for pin in GC_PINS if pin and pin != PYSPARK))
LABEL = " ".join(GC_PINS)
# What pip 23 prints (on stderr) for an install without a network.
OFFLINE_STDERR = """\
WARNING: Retrying (Retry(total=4, connect=None, read=None, redirect=None, status=None)) after connection broken by \
'NewConnectionError('<pip._vendor.urllib3.connection.HTTPSConnection object at 0x7f>: Failed to establish a new \
connection: [Errno -3] Temporary failure in name resolution')': /simple/pyspark/
ERROR: Could not find a version that satisfies the requirement pyspark==3.5.9 (from versions: none)
ERROR: No matching distribution found for pyspark==3.5.9
"""


class FakePip:
    """Stands in for ``subprocess.run``: records each command and answers like pip; on success pyspark 'appears'."""

    def __init__(self, returncode: int = 0, stderr: str = "", on_run: Callable[[], None] | None = None) -> None:
        self.returncode, self.stderr, self.on_run = returncode, stderr, on_run
        self.commands: list[list[str]] = []
        self.installed = False

    def __call__(self, command: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
        self.commands.append(list(command))
        assert kwargs.get("capture_output") and kwargs.get("text") and kwargs.get("check") is False
        if self.on_run is not None:
            self.on_run()
        if self.returncode == 0:
            self.installed = True
        out = "Successfully installed py4j-0.10.9.7 pyspark-3.5.9\n" if self.returncode == 0 else ""
        return subprocess.CompletedProcess(command, self.returncode, out, self.stderr)


@pytest.fixture
def fake_pip(monkeypatch: pytest.MonkeyPatch) -> Callable[..., FakePip]:
    """pyspark missing until the fake pip succeeds."""

    def install(**kwargs: Any) -> FakePip:
        pip = FakePip(**kwargs)
        monkeypatch.setattr(subprocess, "run", pip)
        monkeypatch.setattr(spark_local, "pyspark_installed", lambda: pip.installed)
        return pip

    return install


def test_the_pin_comes_from_requirements_gc_in_a_checkout(tmp_path: Path) -> None:
    assert spark_local.pyspark_requirement() == PYSPARK
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    (tmp_path / "requirements-gc.txt").write_text("# a comment naming pyspark==0.0.1\npyspark == 3.5.1  # why\n")
    assert spark_local.pyspark_requirement(tmp_path) == "pyspark==3.5.1"
    (tmp_path / "requirements-gc.txt").write_text("py4j==0.10.9.7\n")
    with pytest.raises(SparkInstallError, match="pins no pyspark version"):
        spark_local.pyspark_requirement(tmp_path)


def test_a_wheel_install_finds_the_pin_in_its_own_metadata(tmp_path: Path) -> None:
    """Installed from a wheel there is no requirements-gc.txt: the pin comes from the package's metadata, where
    pyproject.toml put it as the [gc] extra (and not in [local], which make run installs)."""
    source = tmp_path / "src"
    ignore = shutil.ignore_patterns("__pycache__", "node_modules", "*.egg-info", "build")
    for name in ("lakelet", "chalicelib", "stepfunctions", "emr"):
        shutil.copytree(ROOT / name, source / name, ignore=ignore)
    for path in [*ROOT.glob("requirements*.txt"), ROOT / "pyproject.toml", ROOT / "README.md", ROOT / "app.py"]:
        shutil.copy2(path, source / path.name)
    # Another pin than this checkout's, so that the answer can only come from the wheel's metadata.
    wheel_pin = "pyspark==3.5.1"
    pins = source / "requirements-gc.txt"
    pins.write_text(pins.read_text().replace(PYSPARK, wheel_pin))
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation", "-w", str(tmp_path)]
        + [str(source)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (wheel,) = tmp_path.glob("lakelet-*.whl")
    site = tmp_path / "site"
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(site)
        metadata = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        requires = [line for line in archive.read(metadata).decode().splitlines() if line.startswith("Requires-Dist")]
    pyspark_lines = [line for line in requires if "pyspark" in line]
    assert sorted(pyspark_lines) == sorted(
        [f'Requires-Dist: {wheel_pin}; extra == "gc"', f'Requires-Dist: {wheel_pin}; extra == "dev"']
    )
    assert not (site / "requirements-gc.txt").exists()
    probe = "from lakelet.stack import spark_local as s; print(s.__file__); print(*s.gc_requirements())"
    done = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=tmp_path,
        env={"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    module_file, pin, *others = done.stdout.split()
    # The [gc] extra's other pins come along (pandas), and nothing of [dev] or [local].
    assert others == list(GC_PINS[1:])
    assert Path(module_file).is_relative_to(site) and pin == wheel_pin


def test_the_extras_put_spark_in_gc_and_dev_not_in_local() -> None:
    from setuptools.config.pyprojecttoml import read_configuration

    extras = read_configuration(ROOT / "pyproject.toml", expand=True)["project"]["optional_dependencies"]
    assert extras["gc"] == list(GC_PINS) and any(pin.startswith("pandas==") for pin in GC_PINS)
    assert not any(r.startswith("pyspark") for r in extras["local"])
    assert set(extras["local"]) | set(extras["gc"]) <= set(extras["dev"])  # make test still runs the Spark tests


def test_a_missing_pyspark_is_installed_with_this_interpreter_s_pip(fake_pip: Callable[..., FakePip]) -> None:
    pip = fake_pip(on_run=lambda: __import__("time").sleep(0.3))
    lines: list[str] = []
    assert spark_local.ensure_pyspark(lines.append, heartbeat_seconds=0.05) is True
    assert pip.commands == [
        [sys.executable, "-m", "pip", "install", "--disable-pip-version-check", "--no-input", *GC_PINS]
    ]
    assert lines[0].startswith("Spark for local GC is not installed yet: installing " + LABEL)
    assert sys.prefix in lines[0] and "~317 MB" in lines[0]
    assert any(line.startswith(f"still installing {LABEL} (") for line in lines[1:-1])
    assert lines[-1].startswith(f"{LABEL} installed in ") and "stays for later runs" in lines[-1]
    # Installed now: a second call neither runs pip nor says anything.
    assert spark_local.ensure_pyspark(lines.append) is False
    assert len(pip.commands) == 1


def test_an_offline_install_fails_in_one_line(fake_pip: Callable[..., FakePip]) -> None:
    fake_pip(returncode=1, stderr=OFFLINE_STDERR)
    lines: list[str] = []
    with pytest.raises(SparkInstallError) as failed:
        spark_local.ensure_pyspark(lines.append)
    message = str(failed.value)
    assert "\n" not in message
    assert f"pip could not install {LABEL} (exit 1)" in message
    assert "pip cannot reach the package index (offline?)" in message
    assert "No matching distribution found for pyspark==3.5.9" in message
    assert message.endswith(f"{sys.executable} -m pip install " + " ".join(f"'{pin}'" for pin in GC_PINS))
    assert len(lines) == 1  # the start line; no "installed" line


def test_no_pip_in_the_environment_is_one_line(fake_pip: Callable[..., FakePip]) -> None:
    fake_pip(returncode=1, stderr=f"{sys.executable}: No module named pip\n")
    with pytest.raises(SparkInstallError) as failed:
        spark_local.ensure_pyspark(lambda line: None)
    assert "\n" not in str(failed.value) and "No module named pip" in str(failed.value)
    assert "offline" not in str(failed.value)


def no_network_checks(monkeypatch: pytest.MonkeyPatch, java: Callable[[], str] = lambda: "17.0.15") -> None:
    monkeypatch.setattr(gc_preflight, "check_api", lambda endpoint, hint: None)
    monkeypatch.setattr(gc_preflight, "check_moto", lambda url, keys=None: None)
    monkeypatch.setattr(gc_preflight, "check_java", java)


GC_RUN = ["gc", "run", "quickstart", "--endpoint", "http://127.0.0.1:9", "--s3-endpoint", "http://127.0.0.1:9"]


def test_gc_run_reports_a_failed_install_in_one_line_and_exits_1(
    monkeypatch: pytest.MonkeyPatch, fake_pip: Callable[..., FakePip], tmp_path: Path, capsys: Any
) -> None:
    no_network_checks(monkeypatch)
    pip = fake_pip(returncode=1, stderr=OFFLINE_STDERR)
    assert cli.main([*GC_RUN, "--data-dir", str(tmp_path)]) == 1
    captured = capsys.readouterr()
    assert captured.out == "" and len(pip.commands) == 1
    progress, error = captured.err.splitlines()
    assert progress.startswith(f"[setup] Spark for local GC is not installed yet: installing {LABEL}")
    assert error.startswith(f"lakelet gc run: Spark is not installed and pip could not install {LABEL}")
    assert "offline" in error


def test_gc_run_goes_on_to_the_job_once_spark_is_installed(
    monkeypatch: pytest.MonkeyPatch, fake_pip: Callable[..., FakePip], tmp_path: Path, capsys: Any
) -> None:
    no_network_checks(monkeypatch)
    pip = fake_pip()
    ran: list[str] = []

    def run_gc(api: local_gc.LakeFSApi, repository: str, s3_endpoint: str | None, **kwargs: Any) -> dict[str, Any]:
        assert pip.installed  # Spark's session starts only after the install
        ran.append(repository)
        return {
            "run_id": "r1",
            "repository": repository,
            "storage_namespace": "s3://b/q",
            "mode": "mark",
            "mark": {"objects_marked": 0},
        }

    monkeypatch.setattr(local_gc, "run_gc", run_gc)
    assert cli.main([*GC_RUN, "--data-dir", str(tmp_path), "--mark-only"]) == 0
    captured = capsys.readouterr()
    assert ran == ["quickstart"] and "GC run r1 of quickstart" in captured.out
    assert [line.split()[0] for line in captured.err.splitlines()] == ["[setup]", "[setup]"]
    assert f"{LABEL} installed in " in captured.err


def test_no_java_means_no_download(
    monkeypatch: pytest.MonkeyPatch, fake_pip: Callable[..., FakePip], tmp_path: Path, capsys: Any
) -> None:
    def no_java() -> str:
        raise gc_preflight.PreflightError("Spark needs Java 17, but there is no java on PATH")

    no_network_checks(monkeypatch, java=no_java)
    pip = fake_pip()
    assert cli.main([*GC_RUN, "--data-dir", str(tmp_path)]) == 1
    assert pip.commands == [] and capsys.readouterr().err.count("\n") == 1


@pytest.mark.e2e
def test_lakelet_local_never_imports_spark(tmp_path: Path) -> None:
    """The stack of `make run` starts, makes its sample repository and serves its API without
    importing pyspark or py4j, which `make run` no longer installs (the venv here has them: a stray import would
    show). Every import of the process is listed by ``-X importtime``."""
    import base64
    import json
    import signal
    import urllib.request

    from lakelet.defaults import DEFAULT_ACCESS_KEY_ID, DEFAULT_SECRET_ACCESS_KEY

    command = [sys.executable, "-X", "importtime", "-m", "lakelet", "up", "--ephemeral", "--sample-data"]
    log = (tmp_path / "stderr.log").open("w")
    stack = subprocess.Popen(
        [*command, "--api-port", "0", "--s3-port", "0"],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        stderr=log,  # a file: thousands of import lines would fill a pipe nobody reads until the end
        text=True,
    )
    try:
        assert stack.stdout is not None
        api = ""
        for line in stack.stdout:
            if line.strip().startswith("lakeFS API"):
                api = line.split()[-1]
                break
        assert api.startswith("http://127.0.0.1:"), "the stack printed no banner"
        token = base64.b64encode(f"{DEFAULT_ACCESS_KEY_ID}:{DEFAULT_SECRET_ACCESS_KEY}".encode()).decode()
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback: never a proxy
        for path in ("/repositories", "/repositories/quickstart/refs/main/objects/ls"):
            request = urllib.request.Request(api + path, headers={"Authorization": f"Basic {token}"})
            with opener.open(request, timeout=60) as answer:
                assert json.load(answer)["results"], path
    finally:
        stack.send_signal(signal.SIGTERM)
        stack.communicate(timeout=60)
        log.close()
    err = (tmp_path / "stderr.log").read_text()
    modules = {line.split("|")[-1].strip() for line in err.splitlines() if line.startswith("import time:")}
    assert {"moto", "chalice", "lakelet.stack.local"} <= modules  # the list is complete enough to trust
    assert not {m for m in modules if m.split(".")[0] in ("pyspark", "py4j")}
    assert stack.returncode == 0


def test_spark_counts_as_installed_only_with_pandas(monkeypatch: pytest.MonkeyPatch) -> None:
    """pyspark's mapInArrow, which the GC job uses, refuses to run without pandas: a pyspark installed alone (by
    hand, or by an older lakelet) is completed by the first `lakelet gc run` instead of failing in the job."""
    import importlib.util

    found = {"pyspark", "pandas"}
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: (object() if name in found else None) if name in {"pyspark", "pandas"} else real(name, *a),
    )
    assert spark_local.pyspark_installed()
    found.discard("pandas")
    assert not spark_local.pyspark_installed()
