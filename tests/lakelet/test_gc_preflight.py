"""The checks ``lakelet gc run`` makes before Spark: Java 17 found the way Spark's launcher finds it, and one line
when something is missing."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest

from lakelet.stack import gc_preflight
from lakelet.stack.gc_preflight import PreflightError


def fake_java(directory: Path, version: str) -> Path:
    """A ``java`` that prints ``version`` the way ``java -version`` does (on stderr)."""
    directory.mkdir(parents=True, exist_ok=True)
    java = directory / "java"
    java.write_text(
        f"#!{sys.executable}\nimport sys\nsys.stderr.write('openjdk version \"{version}\" 2025-04-15\\n')\n"
    )
    java.chmod(java.stat().st_mode | stat.S_IXUSR)
    return java


@pytest.mark.parametrize(("text", "major"), [("17.0.15", 17), ("1.8.0_392", 8), ("21", 21), ("11.0.2", 11)])
def test_java_major(text: str, major: int) -> None:
    assert gc_preflight.java_major(text) == major


def test_java_17_or_later_on_path_passes(tmp_path: Path) -> None:
    fake_java(tmp_path / "bin", "17.0.15")
    assert gc_preflight.check_java({"PATH": str(tmp_path / "bin")}) == "17.0.15"
    fake_java(tmp_path / "jdk21" / "bin", "21.0.1")
    # JAVA_HOME wins over PATH, as with Spark's launcher.
    assert gc_preflight.check_java({"PATH": str(tmp_path / "bin"), "JAVA_HOME": str(tmp_path / "jdk21")}) == "21.0.1"


def test_no_java_or_an_old_one_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(PreflightError) as none:
        gc_preflight.check_java({"PATH": str(tmp_path)})
    assert "Spark needs Java 17, but there is no java on PATH" in str(none.value)
    with pytest.raises(PreflightError) as unset_home:
        gc_preflight.check_java({"PATH": str(tmp_path), "JAVA_HOME": str(tmp_path / "nowhere")})
    assert "no java in JAVA_HOME" in str(unset_home.value)
    fake_java(tmp_path / "bin", "11.0.2")
    with pytest.raises(PreflightError) as old:
        gc_preflight.check_java({"PATH": str(tmp_path / "bin")})
    assert "Java 17 or later" in str(old.value) and "Java 11.0.2" in str(old.value)
    for error in (none, unset_home, old):
        assert "\n" not in str(error.value) and "install Java 17" in str(error.value)


def test_the_machine_s_own_java_is_found() -> None:
    """This machine runs the GC tests, so it has Java 17 or later: the check must agree."""
    version = gc_preflight.check_java(dict(os.environ))
    assert gc_preflight.java_major(version) >= 17
