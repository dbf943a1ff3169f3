"""Infra fixtures: ``make package`` once per session (about 30 s), and the template and bundle it wrote."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

PROJECT_DIR = Path(__file__).resolve().parents[2]
STAGE = "dev"
PACKAGE_TIMEOUT_SECONDS = 300


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


@pytest.fixture(scope="session")
def package(tmp_path_factory: pytest.TempPathFactory) -> Package:
    out = tmp_path_factory.mktemp("package") / STAGE
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("AWS_DEFAULT_REGION", None)  # the Makefile must set what chalice package needs by itself
    result = subprocess.run(
        ["make", "--no-print-directory", "package", f"STAGE={STAGE}", f"PACKAGE_DIR={out}",
         f"VENV={Path(sys.executable).parents[1]}"],
        cwd=PROJECT_DIR, env=env, capture_output=True, text=True, timeout=PACKAGE_TIMEOUT_SECONDS, check=False,
    )
    assert result.returncode == 0, f"make package failed:\n{result.stdout[-4000:]}\n{result.stderr[-4000:]}"
    return Package(out, out / "package" / "sam.json", out / "package" / "deployment.zip", out / "merge.json")
