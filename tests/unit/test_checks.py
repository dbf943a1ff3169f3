"""The checks and their timing: mypy runs strict over chalicelib/, the CLI and local stack (lakelet/) and the GC job
(emr/), which EMR runs without any of chalicelib's tests around it; ruff covers the whole checkout; the CLI reaches
into typer's private modules only where a comment says why; .ci/run says how long each step and the whole run took."""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_mypy_is_strict_on_chalicelib_lakelet_and_the_gc_job() -> None:
    mypy = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]
    assert mypy["strict"] is True
    assert {"chalicelib", "lakelet", "emr"} <= set(mypy["files"])
    # Nothing of either is excluded or has its errors switched off.
    assert "exclude" not in mypy
    overrides = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"].get("overrides", [])
    for override in overrides:
        modules = override["module"] if isinstance(override["module"], list) else [override["module"]]
        assert not any(m.split(".")[0] in {"chalicelib", "lakelet", "emr", "lakelet_gc", "gc_job"} for m in modules)


def test_ruff_covers_every_package() -> None:
    ruff = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["ruff"]
    assert "exclude" not in ruff
    assert not {"chalicelib", "lakelet", "emr", "infra", "tests", "bench", "app.py"} & set(ruff["extend-exclude"])


# The private imports of typer the CLI keeps, each with a comment saying why (no public API does the same).
KEPT_PRIVATE_IMPORTS = {
    ("lakelet/commands/fastparams.py", "typer._coercion"),
    ("lakelet/commands/misc.py", "typer._completion_shared"),
    # The running command's context, for hints that name its flags: typer vendors its click privately.
    ("lakelet/commands/errors.py", "typer._click.globals"),
}


def _private_imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            modules = [node.module]
        elif isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        else:
            continue
        for module in modules:
            if module.split(".")[0] in {"typer", "click"} and any(p.startswith("_") for p in module.split(".")):
                names.add(module)
    return names


def test_private_typer_and_click_imports_are_only_the_kept_ones() -> None:
    found = {
        (str(path.relative_to(ROOT)), module)
        for path in sorted((ROOT / "lakelet").rglob("*.py"))
        for module in _private_imports(path)
    }
    assert found == KEPT_PRIVATE_IMPORTS


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
