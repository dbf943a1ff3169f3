"""The state file: written atomically and privately, ignored when its process is gone."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from lakelet.stack import statefile


def test_round_trip_and_private(tmp_path: Path) -> None:
    path = statefile.write_state(tmp_path, {"pid": os.getpid(), "api_url": "http://127.0.0.1:1"})
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    state = statefile.read_state(tmp_path)
    assert state is not None and state["api_url"] == "http://127.0.0.1:1" and state["format"] == 1


def test_dead_pid_reads_as_absent(tmp_path: Path) -> None:
    statefile.write_state(tmp_path, {"pid": 2**22 + 12345})
    assert statefile.read_state(tmp_path) is None


def test_remove_only_own(tmp_path: Path) -> None:
    statefile.write_state(tmp_path, {"pid": os.getpid()})
    statefile.remove_state(tmp_path, pid=os.getpid() + 1)
    assert statefile.read_state(tmp_path) is not None
    statefile.remove_state(tmp_path, pid=os.getpid())
    assert statefile.read_state(tmp_path) is None


def test_default_data_dir_precedence(tmp_path: Path) -> None:
    assert statefile.default_data_dir({"LAKELET_DATA_DIR": str(tmp_path)}) == tmp_path
    assert statefile.default_data_dir({"XDG_DATA_HOME": str(tmp_path)}) == tmp_path / "lakelet"
