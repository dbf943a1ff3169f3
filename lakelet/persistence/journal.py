"""The journal: an append-only file of framed records, written before moto's answer leaves the process.

Each record is ``length (4 bytes, big-endian) | crc32 (4 bytes) | payload`` where the payload is a pickle of a
:class:`Record`. :meth:`Journal.append` hands the whole frame to the kernel with ``write`` before returning, so a
record survives the process being killed (``kill -9``) the moment it is appended. A flusher thread calls
``fsync`` every ``FSYNC_INTERVAL`` seconds when something was appended (a group commit), which bounds what an
OS crash or a power cut can take to the last interval.

Reading a journal (:func:`scan`) tells two kinds of bad frame apart. A torn tail, a last frame cut short or left
half-written by a kill or a crash, is expected: its request was never answered (or, after an OS crash, within the
fsync interval), so the frame is dropped. A bad frame followed by frames that parse is damage: records after it
were acknowledged, so the caller refuses to start rather than replay a prefix silently (store.py). Frames after
the damage are found by searching for the start of a pickle and checking the header and checksum before it.

Before each fsync the file is padded with zeros to a page boundary (a frame of length 0 means "skip to the next
page"): the next appends then go to a fresh page, not to the one being written back, since on some disks an
append to a page under writeback waits for it, which put the fsync back on the request path.
"""

from __future__ import annotations

import contextlib
import mmap
import os
import pickle
import re
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


def read_records(path: Path, end: int | None = None) -> Iterator[Record]:
    """The records of one journal file, in order, up to byte ``end`` (a :class:`Scan`'s) or else up to the first
    incomplete or damaged frame. Raises ValueError for a frame that passes its checksum but holds no record."""
    with open(path, "rb") as source:
        while end is None or source.tell() < end:
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
            try:
                record = pickle.loads(payload)
            except Exception as error:  # noqa: BLE001 - any unpickling failure means the same: not a record
                raise ValueError(f"{path}: the frame at byte {offset} holds no journal record ({error})") from None
            if not isinstance(record, Record):
                raise ValueError(f"{path}: the frame at byte {offset} holds no journal record")
            yield record


@dataclass(frozen=True, slots=True)
class Scan:
    """What one journal file holds: ``records`` good frames, read up to byte ``end``. When reading stopped before
    the end of the file, ``problem`` says why, and ``valid_after`` counts the good frames found after it (0 for
    a torn tail)."""

    path: Path
    size: int
    end: int
    records: int
    problem: str | None = None
    valid_after: int = 0


# Every record's payload starts with pickle's PROTO opcode and a protocol number (2 to 5 since Python 3.8).
_PAYLOAD_START = re.compile(rb"\x80[\x02-\x05]")


def _frame_at(data: bytes | mmap.mmap, offset: int) -> tuple[int, bool, str | None]:
    """(where the next frame starts, whether this one is a record, why it is bad or None) for the frame at
    ``offset``."""
    size = len(data)
    if size - offset < _HEADER.size:
        if not any(data[offset:size]):
            return size, False, None  # padding cut short by a crash: no record was there
        return offset, False, f"{size - offset} byte(s) too few for a frame header"
    length, checksum = _HEADER.unpack_from(data, offset)
    if length == 0 and checksum == 0:
        return (offset // PAGE + 1) * PAGE, False, None  # padding up to the next page
    if length > _MAX_FRAME:
        return offset, False, f"a frame length of {length} bytes"
    start = offset + _HEADER.size
    if start + length > size:
        return offset, False, f"a frame of {length} bytes cut short by the end of the file"
    if zlib.crc32(data[start : start + length]) != checksum:
        return offset, False, "a frame that fails its checksum"
    return start + length, True, None


def _good_frames_from(data: bytes | mmap.mmap, offset: int) -> tuple[int, int, str | None]:
    """Read good frames from ``offset``: (how many, where reading stopped, why it stopped or None at the end)."""
    count = 0
    while offset < len(data):
        following, is_record, problem = _frame_at(data, offset)
        if problem is not None:
            return count, offset, problem
        count += is_record
        offset = following
    return count, min(offset, len(data)), None


def _count_after(data: bytes | mmap.mmap, offset: int) -> int:
    """The good frames anywhere after a bad frame at ``offset``: each pickle start preceded by a header whose
    length and checksum fit is one, and the frames that follow it are read in sequence."""
    count = 0
    search_from = offset + 1 + _HEADER.size
    while True:
        found = _PAYLOAD_START.search(data, search_from)
        if found is None:
            return count
        candidate = found.start() - _HEADER.size
        _, is_record, problem = _frame_at(data, candidate)
        if problem is not None or not is_record:
            search_from = found.start() + 1
            continue
        more, stopped, problem = _good_frames_from(data, candidate)
        count += more
        if problem is None:
            return count
        search_from = stopped + 1 + _HEADER.size


def scan(path: Path) -> Scan:
    """Read a journal file's frames without unpickling them, and classify how it ends (see the module's
    docstring). Changes nothing."""
    size = path.stat().st_size
    if size == 0:
        return Scan(path, 0, 0, 0)
    with open(path, "rb") as source, mmap.mmap(source.fileno(), 0, access=mmap.ACCESS_READ) as data:
        records, end, problem = _good_frames_from(data, 0)
        valid_after = _count_after(data, end) if problem is not None else 0
    return Scan(path, size, end, records, problem, valid_after)


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
                frame = frame[os.write(self._fd, frame) :]
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
                    zeros = zeros[os.write(self._fd, zeros) :]
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
            # A full or failing disk: the next append reports it to the request that makes it.
            with contextlib.suppress(OSError):
                self.sync()
