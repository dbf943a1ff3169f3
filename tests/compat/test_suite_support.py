"""The compat tier's own machinery, checked in the ordinary tier (no network, no port 8000): a download that
fails is reported as such, unpacking takes only the tests and refuses a hostile archive, and the counts come
from the JUnit report."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest

from .lakefs_spec_suite import (
    SuiteUnavailable,
    download_sdist,
    parse_junit,
    unpack_tests,
)


def test_a_failed_download_raises_suite_unavailable_with_pips_words(tmp_path: Path) -> None:
    # An index nobody listens on: pip fails at once, offline.
    with pytest.raises(SuiteUnavailable, match=r"downloading lakefs-spec==0\.15\.1 with pip failed \(exit [1-9]"):
        download_sdist(
            tmp_path, pip_args=["--index-url", "http://127.0.0.1:9/simple", "--retries", "0", "--timeout", "2"]
        )


def _sdist(path: Path, files: dict[str, bytes], links: dict[str, str] | None = None) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        for name, target in (links or {}).items():
            info = tarfile.TarInfo(name)
            info.type, info.linkname = tarfile.SYMTYPE, target
            tar.addfile(info)
    return path


def test_unpacking_keeps_the_tests_and_pytest_settings_only(tmp_path: Path) -> None:
    archive = _sdist(
        tmp_path / "lakefs_spec-0.15.1.tar.gz",
        {
            "lakefs_spec-0.15.1/tests/conftest.py": b"# conftest\n",
            "lakefs_spec-0.15.1/tests/smoke_tests/test_a.py": b"def test_a(): pass\n",
            "lakefs_spec-0.15.1/pyproject.toml": b"[tool.pytest.ini_options]\n",
            "lakefs_spec-0.15.1/src/lakefs_spec/__init__.py": b"",
            "lakefs_spec-0.15.1/PKG-INFO": b"",
        },
    )
    out = unpack_tests(archive, tmp_path / "out")
    found = sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file())
    assert found == ["pyproject.toml", "tests/conftest.py", "tests/smoke_tests/test_a.py"]


def test_unpacking_refuses_an_archive_without_tests_or_with_a_link_out(tmp_path: Path) -> None:
    empty = _sdist(tmp_path / "empty.tar.gz", {"lakefs_spec-0.15.1/PKG-INFO": b""})
    with pytest.raises(SuiteUnavailable, match=r"holds no tests/conftest\.py"):
        unpack_tests(empty, tmp_path / "a")
    hostile = _sdist(
        tmp_path / "hostile.tar.gz",
        {"lakefs_spec-0.15.1/tests/conftest.py": b""},
        links={"lakefs_spec-0.15.1/tests/escape": "/etc/passwd"},
    )
    with pytest.raises(SuiteUnavailable, match=r"unpacking hostile\.tar\.gz failed"):
        unpack_tests(hostile, tmp_path / "b")
    truncated = tmp_path / "truncated.tar.gz"
    truncated.write_bytes(empty.read_bytes()[:20])
    with pytest.raises(SuiteUnavailable, match=r"unpacking truncated\.tar\.gz failed"):
        unpack_tests(truncated, tmp_path / "c")


def test_counts_come_from_the_junit_report(tmp_path: Path) -> None:
    report = tmp_path / "report.xml"
    report.write_text(
        '<?xml version="1.0"?><testsuites><testsuite name="pytest" tests="4" failures="1" errors="1" skipped="1">'
        '<testcase classname="tests.test_ls" name="test_ok"/>'
        '<testcase classname="tests.test_ls" name="test_bad"><failure message="x"/></testcase>'
        '<testcase classname="tests.test_rm" name="test_setup"><error message="y"/></testcase>'
        '<testcase classname="tests.test_rm" name="test_skip"><skipped message="z"/></testcase>'
        "</testsuite></testsuites>"
    )
    result = parse_junit(report, 12.5, 1)
    assert (result.tests, result.passed, result.failures, result.errors, result.skipped) == (4, 1, 1, 1, 1)
    assert result.not_passed == (
        "failure: tests.test_ls::test_bad",
        "error: tests.test_rm::test_setup",
        "skipped: tests.test_rm::test_skip",
    )
    assert result.summary() == "lakefs-spec 0.15.1: 1 of 4 passed, 1 failed, 1 errors, 1 skipped in 12.5 s"
    with pytest.raises(AssertionError, match="wrote no readable report"):
        parse_junit(tmp_path / "missing.xml", 1.0, 4)
