"""The banner tells a new terminal how to reach ``lakelet``: the venv's activate script by its full path, unless
the ``lakelet`` on PATH is already the venv's."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from lakelet.stack import banner


def test_a_new_terminal_is_told_to_activate_the_venv_by_its_full_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    activate = Path(sys.executable).parent / "activate"
    line = banner._on_path()
    if activate.is_file():
        assert line.split()[:3] == ["CLI", "source", str(activate)] and "new terminal" in line
    else:
        assert line == ""


def test_nothing_to_say_when_lakelet_is_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(Path(sys.executable).parent))
    if (Path(sys.executable).parent / "lakelet").is_file():
        assert banner._on_path() == ""
