"""The checks and their timing: mypy runs strict over chalicelib/ and the GC job (emr/), which EMR runs
without any of chalicelib's tests around it; .ci/run says how long each step and the whole run took."""

from __future__ import annotations

import re
import shutil
import subprocess
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_mypy_is_strict_on_chalicelib_and_the_gc_job() -> None:
    mypy = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]
    assert mypy["strict"] is True
    assert {"chalicelib", "emr"} <= set(mypy["files"])
    # Nothing of either is excluded or has its errors switched off.
    assert "exclude" not in mypy
    overrides = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"].get("overrides", [])
    for override in overrides:
        modules = override["module"] if isinstance(override["module"], list) else [override["module"]]
        assert not any(m.split(".")[0] in {"chalicelib", "emr", "lakelet_gc", "gc_job"} for m in modules)


def _run_ci(tmp_path: Path, failing: str = "") -> subprocess.CompletedProcess[str]:
    """.ci/run in a copy of its folder, with ``make`` and ``apt-get`` replaced by scripts that only say what they
    were asked (``make FAILING`` exits 2)."""
    (tmp_path / ".ci").mkdir()
    shutil.copy(ROOT / ".ci" / "run", tmp_path / ".ci" / "run")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "make").write_text(f'#!/bin/sh\necho "make $*"\n[ "$1" != "{failing}" ]\n')
    (bin_dir / "apt-get").write_text("#!/bin/sh\nexit 0\n")
    for shim in bin_dir.iterdir():
        shim.chmod(0o755)
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin"}
    return subprocess.run(["bash", str(tmp_path / ".ci" / "run")], env=env, capture_output=True, text=True, check=False)


def test_ci_prints_the_time_of_each_step_and_of_the_whole_run(tmp_path: Path) -> None:
    done = _run_ci(tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    for step in ("check", "test", "test-compat"):
        assert f"make {step}" in lines
        assert any(re.fullmatch(rf".ci/run: 'make {step}' took \d+ s", line) for line in lines)
    assert re.fullmatch(r".ci/run: \d+ s in all", lines[-1])


def test_a_failing_step_stops_the_run_and_still_prints_its_time(tmp_path: Path) -> None:
    failed = _run_ci(tmp_path, failing="test")
    assert failed.returncode != 0
    assert "make test-compat" not in failed.stdout
    assert re.fullmatch(r".ci/run: \d+ s in all", failed.stdout.splitlines()[-1])
