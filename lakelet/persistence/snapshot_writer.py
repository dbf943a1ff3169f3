"""Writing a snapshot without holding the write lock for the seconds it takes, and what to say when it fails.

A snapshot is moto's whole state pickled to one file (snapshot.py). Pickling a large state takes seconds (a 108 MB
data directory took 3.1 s), and every write waited for it when the write lock was held throughout. On Linux the
process forks instead, under the lock: the child has a copy-on-write image of moto's state at that instant and
pickles it to disk while the parent releases the lock and goes on taking writes, into the journal that starts
with this snapshot. Elsewhere the snapshot is written in process, under the lock, as before.
"""

from __future__ import annotations

import errno
import os
import sys
import warnings
from collections.abc import Callable
from pathlib import Path

from lakelet.persistence import datadir


def refusal(data_dir: Path, error: OSError) -> str:
    if error.errno in (errno.ENOSPC, errno.EDQUOT):
        return (
            f"no space left on the disk of {data_dir}: the stack writes a snapshot of its state before it serves, "
            "and it did not fit; free some space and start again (nothing was lost: the earlier snapshot and "
            "journals are as they were, and the partial snapshot was removed)"
        )
    return (
        f"cannot write a snapshot in {data_dir / datadir.MOTO_DIR} ({error.strerror or error}); nothing was lost: "
        "fix the directory (permissions, disk) and start again"
    )


class SnapshotWriter:
    """Writes a snapshot with ``write(tmp)`` in a forked child when the platform forks safely (Linux), else at
    once in this process. Build it with moto's state still (the caller holds the write lock); :meth:`wait`
    outside the lock. The child reports the size written, or an errno, through a pipe and its exit status."""

    def __init__(self, tmp: Path, write: Callable[[Path], int]) -> None:
        self._pid = 0
        self._size = 0
        if not sys.platform.startswith("linux"):
            self._size = write(tmp)
            return
        read_end, write_end = os.pipe()
        with warnings.catch_warnings():
            # Python warns that forking a threaded process may deadlock the child: the child here only pickles
            # moto's objects (taking none of their locks: snapshot._key_state) and writes a file, then _exits.
            warnings.simplefilter("ignore", DeprecationWarning)
            pid = os.fork()
        if pid == 0:  # pragma: no cover - the child's coverage is not collected
            os.close(read_end)
            code = 1
            try:
                os.write(write_end, str(write(tmp)).encode())
                code = 0
            except OSError as error:
                code = error.errno or 1
            except BaseException:  # noqa: BLE001 - any failure is the parent's to report
                code = 1
            finally:
                os._exit(code)
        os.close(write_end)
        self._pid, self._pipe = pid, read_end

    def wait(self) -> int:
        """The snapshot's size in bytes once written. Raises OSError as the write did."""
        if not self._pid:
            return self._size
        with os.fdopen(self._pipe, "rb") as told:
            answer = told.read()
        _, status = os.waitpid(self._pid, 0)
        code = os.waitstatus_to_exitcode(status)
        if code != 0 or not answer.isdigit():
            number = code if code > 1 else errno.EIO
            raise OSError(number, os.strerror(number) if code > 1 else "the snapshot writer failed")
        return int(answer)
