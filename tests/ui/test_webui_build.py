"""The UI's own logic (node --test webui/test/) and its size budget: at most 300 KB of JS and CSS, gzipped, on
the first load (build.mjs measures it into build.json; the Parquet reader loads only when a preview needs it)."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from tests.e2e.conftest import PROJECT_DIR

from .conftest import DIST, IN_CI

BUDGET_GZIP_BYTES = 300 * 1024


def _node() -> str:
    node = shutil.which("node")
    if node is None:
        if IN_CI:
            pytest.fail("node is missing: CI builds the web UI")
        pytest.skip("node is missing")
    return node


def test_unit_tests_of_the_ui_logic_pass() -> None:
    result = subprocess.run(
        [_node(), "--test", "test/"],
        check=False,
        cwd=PROJECT_DIR / "webui",
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "# fail 0" in result.stdout


def test_the_first_load_fits_the_budget() -> None:
    report_path = DIST / "build.json"
    if not report_path.is_file():
        if IN_CI:
            pytest.fail("the web UI is not built (make webui)")
        pytest.skip("the web UI is not built (make webui)")
    report = json.loads(report_path.read_text())
    assert 0 < report["first_load_gzip_bytes"] <= BUDGET_GZIP_BYTES
    index = (DIST / "index.html").read_text()
    # Nothing from another origin: no CDN, no web fonts.
    assert "http://" not in index and "https://" not in index and "//" not in index.replace("<!doctype", "")
