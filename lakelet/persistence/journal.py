"""The journal: an append-only file of framed records, written before moto's answer leaves the process.

Each record is ``length (4 bytes, big-endian) | crc32 (4 bytes) | payload`` where the payload is a pickle of a
:class:`Record`. :meth:`Journal.append` hands the whole frame to the kernel with ``write`` before returning, so a
record survives the process being killed (``kill -9``) the moment it is appended. A flusher thread calls
``fsync`` every ``FSYNC_INTERVAL`` seconds when something was appended (a group commit), which bounds what an
OS crash or a power cut can take to the last interval. Reading stops at the first frame that is short or fails
its checksum: a record cut by a kill was never acknowledged, since its request had not been answered.

Before each fsync the file is padded with zeros to a page boundary (a frame of length 0 means "skip to the next
page"): the next appends then go to a fresh page, not to the one being written back, since on some disks an
append to a page under writeback waits for it, which put the fsync back on the request path.
"""

from __future__ import annotations

import os
import pickle
import struct
import threading
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

FSYNC_INTERVAL = 0.2
PAGE = 4096
_HEADER = struct.Struct(">II")
# A frame longer than this is damage, not a record (moto takes at most 5 GiB in one PUT; nobody sends that here).
_MAX_FRAME = 8 * 1024**3

# Kinds of record.
REQUEST = "request"  # an AWS request that may have changed moto's state, replayed through moto's WSGI app
EXECUTION_END = "execution-end"  # a Step Functions execution ended (moto's interpreter changed state by itself)


@dataclass(frozen=True, slots=True)
class Record:
    """One change of moto's state. For a request: its WSGI environ (the string-valued entries), body, the seed
    of the random numbers moto drew while handling it, the time moto saw, and the status it answered (checked
    on replay). For an execution end: ``data`` holds what describe_execution reports."""

    kind: str
    time: float
    seed: int = 0
    status: int = 0
    environ: dict[str, Any] = field(default_factory=dict)
    body: bytes = b""
    data: dict[str, Any] = field(default_factory=dict)


def encode(record: Record) -> bytes:
    payload = pickle.dumps(record, protocol=pickle.HIGHEST_PROTOCOL)
    return _HEADER.pack(len(payload), zlib.crc32(payload)) + payload


def read_records(path: Path) -> Iterator[Record]:
    """The records of one journal file, in order, up to the first incomplete or damaged frame."""
    with open(path, "rb") as source:
        while True:
            offset = source.tell()
            header = source.read(_HEADER.size)
            if len(header) < _HEADER.size:
                return
            length, checksum = _HEADER.unpack(header)
            if length == 0 and checksum == 0:
                source.seek((offset // PAGE + 1) * PAGE)  # padding
                continue
            if length > _MAX_FRAME:
                return
            payload = source.read(length)
            if len(payload) < length or zlib.crc32(payload) != checksum:
                return
            record = pickle.loads(payload)
            if not isinstance(record, Record):
                return
            yield record


class Journal:
    """The journal file being written, with its group-commit flusher. Not thread-safe for appends by itself:
    the caller appends under the lock that orders moto's changes, so the file's order is moto's order."""

    def __init__(self, path: Path, fsync_interval: float = FSYNC_INTERVAL) -> None:
        self.path = path
        self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        self.size = os.fstat(self._fd).st_size
        self.records = 0
        self._dirty = False
        self._fd_lock = threading.Lock()  # guards _fd against the flusher while the file is being closed
        self._stop = threading.Event()
        self._interval = fsync_interval
        self._flusher = threading.Thread(target=self._flush_loop, name=f"journal-fsync {path.name}", daemon=True)
        self._flusher.start()

    def append(self, record: Record) -> None:
        data = encode(record)
        frame = memoryview(data)
        with self._fd_lock:
            if self._fd < 0:
                raise RuntimeError(f"journal {self.path} is closed")
            while frame:
                frame = frame[os.write(self._fd, frame):]
            self._dirty = True
            self.size += len(data)
        self.records += 1

    def sync(self) -> None:
        """fsync now, if anything was appended since the last one."""
        with self._fd_lock:
            if self._fd < 0 or not self._dirty:
                return
            self._dirty = False
            padding = -self.size % PAGE
            if padding:
                if padding < _HEADER.size:
                    padding += PAGE  # a padding frame needs room for its header
                zeros = memoryview(bytes(padding))
                while zeros:
                    zeros = zeros[os.write(self._fd, zeros):]
                self.size += padding
            # A duplicate, so the fsync runs outside the lock and appends never wait for the disk.
            fd = os.dup(self._fd)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    def close(self) -> None:
        """Stop the flusher, fsync and close. Idempotent."""
        self._stop.set()
        if self._flusher.is_alive() and self._flusher is not threading.current_thread():
            self._flusher.join()
        self.sync()
        with self._fd_lock:
            if self._fd >= 0:
                os.close(self._fd)
                self._fd = -1

    def _flush_loop(self) -> None:
        while not self._stop.wait(self._interval):
            try:
                self.sync()
            except OSError:
                pass  # a full or failing disk: the next append reports it to the request that makes it
