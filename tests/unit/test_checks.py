"""`make check` covers what it must: mypy runs strict over chalicelib/ and the GC job (emr/), which EMR runs
without any of chalicelib's tests around it."""

from __future__ import annotations

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
