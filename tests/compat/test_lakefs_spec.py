"""The compat tier: lakefs-spec's own suite (0.15.1, 124 tests), unchanged, against a fresh ``lakelet up``.

Marked ``compat``: ``make test`` leaves it out, ``make test-compat`` (and so ``.ci/run``) runs it. It needs the
network (pip downloads the sdist) and TCP port 8000 on 127.0.0.1, where lakefs-spec's conftest looks for lakeFS.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .lakefs_spec_suite import (
    VERSION,
    QuickstartStack,
    SuiteUnavailable,
    download_sdist,
    installed_version,
    run_suite,
    unpack_tests,
)

pytestmark = pytest.mark.compat

# The number of tests lakefs-spec 0.15.1's suite collects: fewer would mean some were silently not run.
EXPECTED_TESTS = 124


def test_lakefs_spec_suite_passes_in_full(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert installed_version() == VERSION, (
        f"the venv has lakefs-spec {installed_version() or 'not installed'}, the suite is {VERSION}'s "
        "(requirements-dev.txt pins it)"
    )
    try:
        archive = download_sdist(tmp_path / "download")
        suite_dir = unpack_tests(archive, tmp_path / "lakefs-spec")
    except SuiteUnavailable as error:
        pytest.fail(f"lakefs-spec's suite is unavailable, so it did not run: {error}", pytrace=False)
    stack = QuickstartStack(tmp_path).start()
    try:
        # Their pytest prints as it goes, straight to the terminal: a long run shows progress, a failure its log.
        with capsys.disabled():
            result = run_suite(suite_dir, tmp_path / "home")
            print(f"\n{result.summary()}", flush=True)
    finally:
        code = stack.stop()
    details = "\n".join(result.not_passed)
    assert result.tests == EXPECTED_TESTS, f"{result.summary()}; expected {EXPECTED_TESTS} tests\n{details}"
    assert result.passed == result.tests and result.returncode == 0, f"{result.summary()}\n{details}"
    assert code == 0, f"lakelet up exited with {code} on SIGTERM:\n{stack.stderr_tail()}"
