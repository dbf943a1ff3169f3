"""The data directory of ``lakelet up``: its layout, its format version, and the lock that keeps it to one stack.

Layout (format 1)::

    <data dir>/FORMAT                  {"kind": "lakelet-local-data", "format": 1}: written first, read first
    <data dir>/lock                    held (flock) by the stack that uses the directory
    <data dir>/moto/snapshot-<G>.bin   moto's state before journal G (header line, then a pickle)
    <data dir>/moto/journal-<G>.log    the AWS requests that changed moto's state since snapshot G
    <data dir>/state.json              written by the running stack for the CLI (lakelet/stack/statefile.py)
    <data dir>/damaged-<time>/         a damaged journal, the journals after it and their snapshot, set aside by
                                       --accept-journal-loss (store.py)

The directory and everything in it are owner-only (0700 and 0600): snapshots and journals hold every object, the
KMS key material that seals the users' secrets, and the admin secret. Opening a directory fixes the modes of
files an earlier version left readable by others.

A directory is either empty (it becomes a format-1 directory), a format-1 directory, or refused with a one-line
:class:`DataDirError`: an unknown or newer format, or files that are not ours. It is never reset silently.
"""

from __future__ import annotations

import fcntl
import json
import os
from pathlib import Path

KIND = "lakelet-local-data"
FORMAT = 1
FORMAT_FILE = "FORMAT"
LOCK_FILE = "lock"
MOTO_DIR = "moto"
# Files another part of the stack may put in a directory before it holds any of our data.
_FOREIGN_OK = frozenset({"state.json", LOCK_FILE})


def _foreign_ok(name: str) -> bool:
    return name in _FOREIGN_OK or name.startswith(".state-")  # statefile.write_state's temporary file


class DataDirError(Exception):
    """The data directory cannot be used as it is; the message is one line that says why and what to do."""


def read_format(data_dir: Path) -> int | None:
    """The directory's format number; None when it has no FORMAT file. Raises DataDirError if it is unreadable."""
    path = data_dir / FORMAT_FILE
    try:
        text = path.read_text()
    except FileNotFoundError:
        return None
    except OSError as error:
        raise DataDirError(f"cannot read {path}: {error.strerror}") from error
    try:
        content = json.loads(text)
        kind, number = content["kind"], content["format"]
    except (ValueError, KeyError, TypeError):
        raise DataDirError(f"{path} is not a Lakelet format file; refusing to use {data_dir}") from None
    if kind != KIND or type(number) is not int:
        raise DataDirError(f"{path} is not a Lakelet format file; refusing to use {data_dir}")
    return number


def prepare(data_dir: Path) -> None:
    """Checks that ``data_dir`` holds data this version reads (or nothing yet), creating it and its FORMAT file
    when needed. Raises DataDirError otherwise, before anything in it is changed."""
    if data_dir.exists() and not data_dir.is_dir():
        raise DataDirError(f"data directory {data_dir} is not a directory")
    number = read_format(data_dir) if data_dir.exists() else None
    if number is None:
        leftovers = sorted(p.name for p in data_dir.iterdir() if not _foreign_ok(p.name)) if data_dir.exists() else []
        if leftovers:
            raise DataDirError(
                f"data directory {data_dir} has no {FORMAT_FILE} file but holds {', '.join(leftovers[:3])}"
                f"{' ...' if len(leftovers) > 3 else ''}: not a Lakelet data directory; choose another --data-dir"
            )
        data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        (data_dir / MOTO_DIR).mkdir(mode=0o700, exist_ok=True)
        make_private(data_dir)
        write_atomically(data_dir / FORMAT_FILE, json.dumps({"kind": KIND, "format": FORMAT}).encode() + b"\n")
        return
    if number > FORMAT:
        raise DataDirError(
            f"data directory {data_dir} has format {number}, newer than this Lakelet reads ({FORMAT}): "
            "upgrade Lakelet, or use another --data-dir"
        )
    if number < FORMAT:
        raise DataDirError(
            f"data directory {data_dir} has format {number}, which this Lakelet (format {FORMAT}) cannot read: "
            "run the Lakelet version that wrote it, or use another --data-dir"
        )
    (data_dir / MOTO_DIR).mkdir(mode=0o700, exist_ok=True)
    make_private(data_dir)


def make_private(data_dir: Path) -> None:
    """Make ``data_dir`` and every directory and file in it owner-only. Symbolic links are not followed: what
    they point at is not ours to change. Raises DataDirError when a mode cannot be set."""
    for directory, _, files in os.walk(data_dir):
        paths = [(Path(directory), 0o700)] + [(Path(directory) / name, 0o600) for name in files]
        for path, mode in paths:
            try:
                if path.is_symlink() or path.lstat().st_mode & 0o777 == mode:
                    continue
                path.chmod(mode)
            except FileNotFoundError:
                continue  # a temporary file another process removed meanwhile
            except OSError as error:
                raise DataDirError(
                    f"cannot make {path} private ({error.strerror}); it holds the stack's secrets: fix its owner, "
                    "or use another --data-dir"
                ) from None


class DirectoryLock:
    """An exclusive flock on ``<data dir>/lock``: two stacks writing one journal would corrupt it. The kernel
    drops the lock when the process dies, so a killed stack never leaves it behind."""

    def __init__(self, data_dir: Path) -> None:
        self._path = data_dir / LOCK_FILE
        self._fd: int | None = None

    def acquire(self) -> None:
        fd = os.open(self._path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "another process"
            os.close(fd)
            raise DataDirError(
                f"data directory {self._path.parent} is in use by another lakelet up (pid {holder}); "
                "stop it, or use another --data-dir"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the descriptor releases the flock
            self._fd = None


def write_atomically(path: Path, data: bytes) -> None:
    """Write, fsync, rename over ``path``, fsync the directory: the file is either the old or the new one."""
    tmp = path.with_name(f".{path.name}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    sync_directory(path.parent)


def sync_directory(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
