"""Infra fixtures: ``make package`` once per run (about 30 s) in a copy of the checkout, and the template and
bundle it wrote."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

PROJECT_DIR = Path(__file__).resolve().parents[2]
STAGE = "dev"
PACKAGE_TIMEOUT_SECONDS = 300
# Left out of the project copy `make package` runs in: version control, environments, caches, build output.
_NOT_COPIED = {
    ".git",
    ".venv",
    "node_modules",
    "__pycache__",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
    ".hypothesis",
}
_NOT_COPIED_AT_TOP = {"build", "dist"}


def _not_copied(directory: str, names: list[str]) -> set[str]:
    here = Path(directory)
    skipped = {name for name in names if name in _NOT_COPIED or name.endswith(".egg-info")}
    if here == PROJECT_DIR:
        skipped |= _NOT_COPIED_AT_TOP & set(names)
    if here == PROJECT_DIR / ".chalice":
        skipped |= {"deployments", "venv"} & set(names)
    return skipped


@dataclass(frozen=True)
class Package:
    """What ``make package`` wrote: the deployable template and the Lambda bundle."""

    directory: Path
    template_path: Path
    bundle_path: Path
    merge_path: Path

    def template(self) -> dict[str, Any]:
        """A fresh copy: tests may change it."""
        return dict(json.loads(self.template_path.read_text()))


def checkout_state() -> dict[str, int]:
    """What packaging could leave in the checkout: Chalice's caches (.chalice/) and build/, with their mtimes."""
    state: dict[str, int] = {}
    for top in (PROJECT_DIR / ".chalice", PROJECT_DIR / "build"):
        for path in top.rglob("*") if top.exists() else ():
            state[str(path.relative_to(PROJECT_DIR))] = path.stat().st_mtime_ns
    return state


def _deployments_cache() -> Path:
    """Where Chalice keeps the dependencies it downloaded for the bundle (74 MB, one per requirements.txt):
    outside the checkout, reused across sessions, so a run does not download them again."""
    root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    cache = root / "lakelet" / "chalice-deployments"
    cache.mkdir(parents=True, exist_ok=True)
    return cache


def _prune(cache: Path) -> None:
    """Keeps the newest dependency bundle; the app-code bundles are rebuilt for every change of the code."""
    bundles = sorted(cache.glob("*.zip"), key=lambda path: path.stat().st_mtime_ns, reverse=True)
    newest_dependencies = next((b for b in bundles if not b.name.startswith("appcode-")), None)
    for bundle in bundles:
        if bundle != newest_dependencies:
            bundle.unlink(missing_ok=True)


@pytest.fixture(scope="session")
def checkout_before_packaging() -> dict[str, int]:
    return checkout_state()


@pytest.fixture(scope="session")
def package(tmp_path_factory: pytest.TempPathFactory, checkout_before_packaging: dict[str, int]) -> Package:
    """``make package`` once per run, in a copy of the checkout. Under pytest-xdist the first worker to ask builds
    it under a lock in the run's shared temporary folder, and the others take what it wrote (one build, one cache)."""
    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent  # the run's folder, above each worker's own
    out = shared / "package" / STAGE
    with (shared / "package.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        built = out / "package" / "sam.json"
        if not built.exists():
            _make_package(tmp_path_factory, out)
    return Package(out, built, out / "package" / "deployment.zip", out / "merge.json")


def _make_package(tmp_path_factory: pytest.TempPathFactory, out: Path) -> None:
    """``make package`` in a copy of the checkout: chalice package writes its caches into the project it
    packages (.chalice/deployments/, 74 MB a run), which here is the copy, and the copy's cache is a link to
    one outside the checkout."""
    venv = Path(sys.executable).parents[1]
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("AWS_DEFAULT_REGION", None)  # the Makefile must set what chalice package needs by itself
    make = ["make", "--no-print-directory", f"VENV={venv}", f"--old-file={venv}/.lakelet-dev-installed"]
    # The web UI is built where its node_modules are, as `make package` would; the copy then takes it as is.
    built = subprocess.run(
        [*make, "webui"],
        cwd=PROJECT_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=PACKAGE_TIMEOUT_SECONDS,
        check=False,
    )
    assert built.returncode == 0, f"make webui failed:\n{built.stdout[-4000:]}\n{built.stderr[-4000:]}"
    project = tmp_path_factory.mktemp("project") / "lakelet"
    shutil.copytree(PROJECT_DIR, project, symlinks=True, ignore=_not_copied)
    cache = _deployments_cache()
    (project / ".chalice" / "deployments").symlink_to(cache, target_is_directory=True)
    out.parent.mkdir(parents=True, exist_ok=True)
    # --old-file: never reinstall the venv from the copy (that would point the editable install at a temp dir),
    # never rebuild the web UI there (no node_modules).
    result = subprocess.run(
        [*make, "--old-file=chalicelib/webui_dist/index.html", "package", f"STAGE={STAGE}", f"PACKAGE_DIR={out}"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=PACKAGE_TIMEOUT_SECONDS,
        check=False,
    )
    _prune(cache)
    assert result.returncode == 0, f"make package failed:\n{result.stdout[-4000:]}\n{result.stderr[-4000:]}"
