"""Keeping the stack's memory to moto's state, for a ``lakelet up`` that runs for hours.

Two things made the stack's resident memory grow with every request rather than with what it stores (measured
with bench/soak.py; moto 5.2.5, pinned):

1. moto remembers every model object it ever made. ``BaseModel.__new__`` appends each new instance to its
   class's ``instances_tracked`` list, for moto's dashboard and for ``reset``, and nothing ever takes it out: every
   DynamoDB ``Item`` (each write, and each deep copy that a query, a scan or a transaction makes), every deep copy
   of a whole table that ``TransactWriteItems`` takes in case it must roll back, every S3 key (with its bytes: a
   key overwritten or deleted is never collected, so its buffer is never freed either), every ACL. In a 3-minute
   soak 423 ``Table`` copies and 15,397 ``Item`` objects were tracked, for 7 tables and ~2,600 live items.
   :func:`install` makes ``BaseModel.__new__`` track nothing. What that costs: moto's dashboard
   (``/moto-api/data.json``) lists no instances, and ``reset`` disposes only the S3 keys that buckets hold (any
   other key closes its buffer when it is collected, moto's ``FakeKey.__del__``).
2. moto keeps every S3 object's bytes in memory (a ``SpooledTemporaryFile`` of up to 5 MiB per key). Ranges and
   metaranges (one or more new ones per commit, never deleted) are most of a busy stack's bytes. :func:`install`
   gives moto's S3 keys a :class:`SpillBuffer` instead: a value of more than ``spill_bytes`` lives in a file of its
   own under the spill directory, opened per call, so that no descriptor stays open per object (moto's own
   ``MOTO_S3_DEFAULT_KEY_BUFFER_SIZE`` would keep one open file per large key, thousands after an hour). The
   files are a cache of memory, not the stack's record: snapshots and the journal hold every byte. While a
   snapshot's forked writer runs, a value deleted or replaced keeps its file until the writer is done
   (:func:`files_kept`, which lakelet.persistence holds around it). The directory
   is removed when the process exits (moto's keys outlive a stack stopped in-process), a killed stack's by the
   next start on the same data directory.
"""

from __future__ import annotations

import atexit
import io
import os
import shutil
import tempfile
import threading
import types
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

# Values above this go to a file: ranges and metaranges of any size, and objects uploaded through moto directly;
# small objects (most uploads of a local stack) stay in memory, where reading them is cheapest.
DEFAULT_SPILL_BYTES = 64 * 1024
_SPILL_DIR_NAME = "spill"

_lock = threading.Lock()
_state: dict[str, Any] = {}
# Removals wait while a snapshot's writer (a forked child) may still read the files (files_kept). Reentrant: a
# value's buffer is removed from __del__, which the collector may run inside these sections.
_removals = threading.RLock()
_kept = [0]
_pending: list[Path] = []


class SpillBuffer:
    """The file-like object moto's ``FakeKey`` keeps its value in (in place of ``SpooledTemporaryFile``): bytes in
    memory while they are at most ``max_size``, else in a file of their own under the spill directory, opened for
    each call. Supports what moto calls on it (seek, read, write, truncate, tell, close) plus :meth:`contents`."""

    def __init__(self, max_size: int = 0, *args: Any, **kwargs: Any) -> None:
        # moto asks for a 5 MiB in-memory buffer; the stack's own limit decides instead.
        self._max = _state.get("spill_bytes", DEFAULT_SPILL_BYTES)
        self._memory: io.BytesIO | None = io.BytesIO()
        self._path: Path | None = None
        self._size = 0
        self._position = 0
        self.closed = False

    @property
    def spilled(self) -> bool:
        return self._path is not None

    def seek(self, position: int, whence: int = 0) -> int:
        if self._memory is not None:
            return self._memory.seek(position, whence)
        base = {0: 0, 1: self._position, 2: self._size}[whence]
        self._position = max(0, base + position)
        return self._position

    def tell(self) -> int:
        return self._memory.tell() if self._memory is not None else self._position

    def read(self, size: int | None = -1) -> bytes:
        if self._memory is not None:
            return self._memory.read(size)
        assert self._path is not None
        wanted = self._size - self._position if size is None or size < 0 else size
        with open(self._path, "rb") as file:
            file.seek(self._position)
            data = file.read(wanted)
        self._position += len(data)
        return data

    def write(self, data: bytes) -> int:
        if self._memory is not None:
            if self._memory.tell() + len(data) <= self._max:
                written = self._memory.write(data)
                self._size = max(self._size, self._memory.tell())
                return written
            self._spill()
        assert self._path is not None
        with open(self._path, "r+b") as file:
            file.seek(self._position)
            file.write(data)
        self._position += len(data)
        self._size = max(self._size, self._position)
        return len(data)

    def truncate(self, size: int | None = None) -> int:
        size = self.tell() if size is None else size
        if self._memory is not None:
            self._size = self._memory.truncate(size)
            return self._size
        if size == 0:  # a new value (moto truncates before it writes one): back to memory until it is large
            self._remove_file()
            self._memory = io.BytesIO()
            self._size = 0
            return 0
        assert self._path is not None
        os.truncate(self._path, size)
        self._size = min(self._size, size)
        return size

    def contents(self) -> bytes:
        """The whole value, without moving the position (snapshots read it while a request may be reading)."""
        if self.closed:
            return b""
        if self._memory is not None:
            return self._memory.getvalue()
        assert self._path is not None
        return self._path.read_bytes()

    def close(self) -> None:
        self.closed = True
        self._memory = None
        self._remove_file()

    def _spill(self) -> None:
        assert self._memory is not None
        path = _spill_dir() / uuid.uuid4().hex
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)  # object bytes: owner-only
        with os.fdopen(fd, "wb") as file:
            file.write(self._memory.getvalue())
        self._position = self._memory.tell()
        self._memory = None
        self._path = path

    def _remove_file(self) -> None:
        path, self._path = self._path, None
        if path is not None:
            _remove(path)

    def __del__(self) -> None:
        self._remove_file()

    def __getstate__(self) -> dict[str, Any]:
        raise TypeError("a SpillBuffer is not pickled: moto's FakeKey pickles its value instead")


def _remove(path: Path) -> None:
    if os.getpid() != _state.get("pid"):
        return  # a snapshot's forked writer: the files are the stack's
    with _removals:
        if _kept[0]:
            _pending.append(path)
            return
    path.unlink(missing_ok=True)


@contextmanager
def files_kept() -> Iterator[None]:
    """While it is held, values deleted or replaced keep their files (removed when the last holder leaves): a
    snapshot written by a forked child reads the files of the values as they were at the fork."""
    with _removals:
        _kept[0] += 1
    try:
        yield
    finally:
        with _removals:
            _kept[0] -= 1
            due = list(_pending) if _kept[0] == 0 else []
            if due:
                del _pending[: len(due)]
        for path in due:
            path.unlink(missing_ok=True)


def _spill_dir() -> Path:
    directory: Path = _state["spill_dir"]
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    return directory


def install(data_dir: Path | None = None, spill_bytes: int = DEFAULT_SPILL_BYTES) -> None:
    """Stops moto's instance tracking and makes new S3 keys spill values above ``spill_bytes`` to files under
    ``<data_dir>/spill/<random>/`` (a new temporary directory without a data directory). Installed again, it
    only moves where new values spill (earlier ones keep their files)."""
    from moto.core.common_models import BaseModel
    from moto.core.model_instances import reset_model_data
    from moto.s3 import models as s3_models

    with _lock:
        base = (data_dir / _SPILL_DIR_NAME) if data_dir is not None else Path(tempfile.gettempdir())
        directory = base / f"lakelet-spill-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        _state["spill_dir"] = directory
        _state["spill_bytes"] = spill_bytes
        _state["pid"] = os.getpid()
        _state.setdefault("dirs", []).append(directory)
        if "new" in _state:
            return
        _state["new"] = BaseModel.__dict__["__new__"]

        def untracked_new(cls: type, *args: Any, **kwargs: Any) -> Any:
            return super(BaseModel, cls).__new__(cls)

        BaseModel.__new__ = staticmethod(untracked_new)  # type: ignore[assignment,method-assign]
        reset_model_data()  # forgets what was tracked before (the lists are moto's only reference to dead objects)
        _state["tempfile"] = s3_models.tempfile
        s3_models.tempfile = types.SimpleNamespace(SpooledTemporaryFile=SpillBuffer)  # type: ignore[assignment]
        atexit.register(_remove_dirs)


def _remove_dirs() -> None:
    if os.getpid() != _state.get("pid"):
        return  # a forked child exiting: the directories are its parent's
    for directory in _state.get("dirs", []):
        shutil.rmtree(directory, ignore_errors=True)


def remove_leftovers(data_dir: Path) -> None:
    """Removes the spill directories of stacks that ended without :func:`uninstall` (killed): call with the data
    directory's lock held, so no running stack owns them."""
    base = data_dir / _SPILL_DIR_NAME
    ours = _state.get("spill_dir")
    if base.is_dir():
        for entry in base.iterdir():
            if entry != ours and entry.name.startswith("lakelet-spill-"):
                shutil.rmtree(entry, ignore_errors=True)


def uninstall() -> None:
    """Gives moto its own ``BaseModel.__new__`` and S3 buffers back (tests); keys made meanwhile keep their
    SpillBuffer and its files until the process exits. Idempotent."""
    from moto.core.common_models import BaseModel
    from moto.s3 import models as s3_models

    with _lock:
        if "new" not in _state:
            return
        BaseModel.__new__ = _state.pop("new")  # type: ignore[method-assign]
        s3_models.tempfile = _state.pop("tempfile")


def installed() -> bool:
    return "new" in _state


def spill_dir() -> Path | None:
    """Where spilled values of this process go while installed, else None."""
    found: Path | None = _state.get("spill_dir")
    return found
