"""bench/side_by_side.py (issue 43) says it was skipped when LAKEFS_BIN names no lakeFS server, and renders its
table with each ratio against the goal."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import side_by_side


@pytest.mark.parametrize("value", ["", "/nonexistent/lakefs"])
def test_without_a_lakefs_binary_it_says_skipped(
    value: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("LAKEFS_BIN", value)
    assert side_by_side.main(["--quick"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert "skipped" in lines[0]
    assert "skipped" in json.loads(lines[-1])


def test_the_table_marks_rows_over_the_goal() -> None:
    table = side_by_side.render(
        {
            "operations": {
                "stat object": {"lakelet_ms": 12.0, "lakefs_ms": 8.0, "ratio": 1.5},
                "commit of 1 change": {"lakelet_ms": 100.0, "lakefs_ms": 25.0, "ratio": 4.0},
            },
            "bulk": {"uploads through the API (objects/s)": {"lakelet": 150.0, "lakefs": 266.0, "ratio": 0.56}},
        }
    )
    assert "| stat object | 12.0 ms | 8.0 ms | 1.5x |" in table
    assert "| commit of 1 change | 100.0 ms | 25.0 ms | 4.0x (over 3x) |" in table
    assert "| uploads through the API (objects/s) | 150.00 | 266.00 | 0.56 |" in table
