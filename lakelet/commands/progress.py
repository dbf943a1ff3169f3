"""One progress bar for a whole transfer (files, bytes, rate, ETA) and a line naming the file in flight.

Frames are drawn only on a terminal; elsewhere (logs, pipes, CI) nothing is drawn and one summary line is
printed at the end, so logs never fill with carriage-return frames.
"""

from __future__ import annotations

import threading
import time
from types import TracebackType
from typing import Self

from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeRemainingColumn,
    TransferSpeedColumn,
)

from lakelet.commands.output import out
from lakelet.units import human_bytes


class TransferProgress:
    """Thread-safe counters behind the bar; workers call ``start_file``, ``advance`` and ``file_done``."""

    def __init__(self, verb: str, total_files: int, total_bytes: int) -> None:
        self.verb = verb
        self.total_files = total_files
        self.files_done = 0
        self.files_skipped = 0
        self.bytes_done = 0
        self.started = time.monotonic()
        self._lock = threading.Lock()
        console = out().err
        # Frames only when both streams are a terminal: `lakelet ... > log` must leave no frames behind.
        self.enabled = console.is_terminal and out().console.is_terminal
        self._progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(bar_width=30),
            TextColumn("{task.fields[files]}"),
            DownloadColumn(),
            TransferSpeedColumn(),
            TimeRemainingColumn(),
            TextColumn("{task.fields[current]}", style="dim"),
            console=console,
            disable=not self.enabled,
            transient=False,
            refresh_per_second=8,
        )
        self._main: TaskID | None = None
        self.total_bytes = total_bytes

    def __enter__(self) -> Self:
        self._progress.__enter__()
        self._main = self._progress.add_task(self.verb, total=self.total_bytes or None, files=self._files(), current="")
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        if self._main is not None:
            self._progress.update(self._main, current="")
        self._progress.__exit__(kind, error, tb)

    def _files(self) -> str:
        return f"{self.files_done}/{self.total_files} files"

    def start_file(self, name: str) -> None:
        if self.enabled and self._main is not None:
            shown = name if len(name) <= 40 else "…" + name[-39:]
            self._progress.update(self._main, current=shown)

    def advance(self, nbytes: int) -> None:
        with self._lock:
            self.bytes_done += nbytes
        if self._main is not None:
            self._progress.advance(self._main, nbytes)

    def file_done(self, skipped: bool = False, size: int = 0) -> None:
        with self._lock:
            self.files_done += 1
            if skipped:
                self.files_skipped += 1
                self.bytes_done += size
        if self._main is not None:
            if skipped:
                self._progress.advance(self._main, size)
            self._progress.update(self._main, files=self._files())

    def counts(self) -> dict[str, float]:
        elapsed = time.monotonic() - self.started
        return {
            "files": self.files_done,
            "transferred": self.files_done - self.files_skipped,
            "skipped": self.files_skipped,
            "bytes": self.bytes_done,
            "seconds": round(elapsed, 3),
        }

    def summary(self) -> str:
        elapsed = max(time.monotonic() - self.started, 1e-6)
        moved = self.files_done - self.files_skipped
        return (
            f"{self.verb}: {moved} file(s) transferred, {self.files_skipped} already up to date, "
            f"{human_bytes(self.bytes_done)} in {elapsed:.1f} s ({self.files_done / elapsed:.1f} files/s)"
        )
