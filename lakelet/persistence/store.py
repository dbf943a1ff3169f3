"""Persistence of the local stack's moto server: recover on open, journal while serving, snapshot on close.

Open: check the directory's format and lock it (datadir.py); then (recovery.py) read the journals written since
the newest snapshot and refuse to start, changing nothing, when one is damaged (a bad frame followed by good ones:
acknowledged writes would be lost) unless the loss is accepted, which sets the files aside first; drop a torn tail
(a last frame a crash cut short), saying so; load the newest snapshot; replay the journals in order, each request
with the seed and time it first ran with (determinism.py), Step Functions executions recorded but not run again
(workflows.py); mark executions that were cut off FAILED; write a fresh snapshot and start a new journal.

Serve: :meth:`Persistence.wrap` puts the journaling middleware in front of moto's WSGI app. A request that may
change moto's state runs under one lock, which orders moto's changes exactly as the journal does, and its record
is written to the journal (handed to the kernel) before the response leaves: a write moto acknowledged survives
``kill -9`` of the stack; fsync every 200 ms bounds what an OS crash can take. When the journal holds
``snapshot_records`` records or more bytes than the last snapshot (and at least ``snapshot_min_bytes``), a
background thread writes a new snapshot and starts a new journal, so recovery time and disk use stay bounded.

Close: a last snapshot, so the next start loads it without replaying anything.
"""

from __future__ import annotations

import logging
import os
import re
import secrets
import threading
import time
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape as xml_escape

from lakelet.persistence import (
    datadir,
    determinism,
    journal,
    middleware,
    refusals,
    snapshot,
    snapshot_writer,
    workflows,
)
from lakelet.persistence.journal import Journal, Record
from lakelet.persistence.recovery import JOURNAL_NAME, RAISED, SNAPSHOT_NAME, Recovery, numbered_files, recover

log = logging.getLogger("lakelet.persistence")

SNAPSHOT_RECORDS = 20_000
SNAPSHOT_MIN_BYTES = 256 * 1024 * 1024
_LEFTOVER = re.compile(r"^\.snapshot-(\d+)\.tmp$")  # a snapshot a kill cut short
Answerer = Callable[[int, float], "middleware.Answer"]
_UNAVAILABLE = b"<Error><Code>ServiceUnavailable</Code><Message>lakelet up is stopping</Message></Error>"


class Persistence:
    """The data directory of one running stack. :meth:`open` before moto serves, :meth:`close` after it stops."""

    def __init__(
        self,
        data_dir: Path,
        *,
        fsync_interval: float = journal.FSYNC_INTERVAL,
        snapshot_records: int = SNAPSHOT_RECORDS,
        snapshot_min_bytes: int = SNAPSHOT_MIN_BYTES,
        accept_journal_loss: bool = False,
        keep_files: Callable[[], AbstractContextManager[None]] = nullcontext,
    ) -> None:
        self.data_dir = data_dir
        # Held from the fork of a snapshot's writer until it is written: files that moto's state points to (the
        # stack's spilled S3 values, lakelet/stack/moto_memory.py) stay until the writer has read them.
        self._keep_files = keep_files
        self._accept_journal_loss = accept_journal_loss
        self.moto_dir = data_dir / datadir.MOTO_DIR
        self._fsync_interval = fsync_interval
        self._snapshot_records = snapshot_records
        self._snapshot_min_bytes = snapshot_min_bytes
        self._dir_lock = datadir.DirectoryLock(data_dir)
        # Orders every change of moto's state; the journal's order is this lock's order.
        self._lock = threading.Lock()
        self._snapshot_lock = threading.Lock()
        self._journal: Journal | None = None
        self._generation = 0
        self._last_snapshot_bytes = 0
        self._failure: str | None = None
        self._wanted = threading.Event()
        self._stopping = threading.Event()
        self._snapshotter: threading.Thread | None = None
        self.recovery = Recovery()

    # -- lifecycle --------------------------------------------------------------------------------------------

    def open(self) -> Recovery:
        """Check and lock the directory, rebuild moto's state from it, and start journaling. Raises
        DataDirError (nothing changed) when the directory cannot be used."""
        datadir.prepare(self.data_dir)
        self._dir_lock.acquire()
        try:
            determinism.install()
            workflows.install(self._execution_ended)
            self.recovery, self._generation = recover(self.data_dir, self.moto_dir, self._accept_journal_loss)
            try:
                self.snapshot()
            except OSError as error:
                raise datadir.DataDirError(snapshot_writer.refusal(self.data_dir, error)) from error
        except BaseException:
            if self._journal is not None:
                self._journal.close()
                if self._journal.records == 0:
                    self._journal.path.unlink(missing_ok=True)  # the new journal took nothing: as it was
                self._journal = None
            self._release()
            raise
        self._snapshotter = threading.Thread(target=self._snapshot_loop, name="lakelet-snapshots", daemon=True)
        self._snapshotter.start()
        return self.recovery

    def close(self) -> None:
        """A last snapshot, then stop journaling (later writes answer 503) and unlock. Idempotent."""
        self._stopping.set()
        self._wanted.set()
        if self._snapshotter is not None:
            self._snapshotter.join()
            self._snapshotter = None
        try:
            if self._journal is not None and self._failure is None:
                self.snapshot()
        finally:
            with self._lock:
                if self._journal is not None:
                    self._journal.close()
                    self._journal = None
            self._release()

    def _release(self) -> None:
        refusals.forget(self)
        workflows.uninstall()
        determinism.uninstall()
        self._dir_lock.release()

    # -- serving ----------------------------------------------------------------------------------------------

    def wrap(self, app: middleware.WsgiApp) -> middleware.WsgiApp:
        """moto's WSGI app with every state-changing request journaled before it is answered."""
        return middleware.writes_through(app, lambda environ, body, start: self._apply(app, environ, body, start))

    def server(self, ip_address: str, port: int) -> middleware.WrappedMotoServer:
        return middleware.WrappedMotoServer(self.wrap, ip_address, port)

    def _apply(
        self, app: middleware.WsgiApp, environ: dict[str, Any], body: bytes, start_response: Callable[..., Any]
    ) -> Iterable[bytes]:
        status, headers, chunks = self.journaled(
            middleware.recordable(environ), body, lambda seed, when: middleware.run(app, environ, seed, when)
        )
        start_response(status, headers)
        return chunks

    def journaled(self, recorded: dict[str, Any], body: bytes, answer: Answerer) -> middleware.Answer:
        """Runs ``answer(seed, when)`` (moto's answer to the request ``recorded``, ``body``, with its randomness
        and clock pinned to them) under the lock, and journals the request before its answer is returned: the
        WSGI layer's core, and that of the stack's own writes that skip the WSGI chain (inprocess_direct.py).
        A 503 answer, with nothing run, once the journal cannot take records."""
        seed = secrets.randbits(64)
        with self._lock:
            if self._journal is None or self._failure is not None:
                return self._unavailable_answer()
            when = time.time()
            try:
                status, headers, chunks = answer(seed, when)
            except Exception:
                # moto may have changed part of its state before failing; a replay fails at the same point.
                self._journal.append(Record(journal.REQUEST, when, seed, RAISED, recorded, body))
                raise
            try:
                self._journal.append(Record(journal.REQUEST, when, seed, int(status[:3]), recorded, body))
            except OSError as error:
                # moto changed but the disk did not: stop taking writes rather than acknowledge what is lost.
                self._fail(error)
                return self._unavailable_answer()
            if self._needs_snapshot(self._journal):
                self._wanted.set()
        return status, headers, chunks

    def _unavailable_answer(self) -> middleware.Answer:
        return "503 Service Unavailable", [("Content-Type", "application/xml")], [self._unavailable()]

    def _execution_ended(self, execution: Any, record_the_end: Callable[[], None]) -> None:
        with self._lock:
            record_the_end()
            if self._journal is not None and self._failure is None:
                try:
                    self._journal.append(Record(journal.EXECUTION_END, time.time(), data=workflows.end_data(execution)))
                except OSError as error:
                    self._fail(error)

    def _fail(self, error: OSError) -> None:
        """Refuse every later write: the journal cannot take them, and an unjournaled write is lost at restart.
        A restart is what clears it (writes start on a new journal after recovery and a snapshot), so the
        message says that, not "retry later"."""
        assert self._journal is not None
        self._failure = (
            f"lakelet up cannot write its journal {self._journal.path} ({error.strerror or error}), so it refuses "
            f"every write until it is restarted: free space on the disk of {self.data_dir}, then stop lakelet up "
            "(Ctrl-C) and start it again; reads work meanwhile"
        )
        log.error("%s", self._failure)

    @property
    def refusal(self) -> str | None:
        """Why writes are refused until a restart (the journal could not be written), or None."""
        return self._failure

    def _unavailable(self) -> bytes:
        if self._failure is None:
            return _UNAVAILABLE
        message = xml_escape(self._failure).encode()
        return b"<Error><Code>ServiceUnavailable</Code><Message>" + message + b"</Message></Error>"

    # -- snapshots --------------------------------------------------------------------------------------------

    def _needs_snapshot(self, current: Journal) -> bool:
        return current.records >= self._snapshot_records or current.size >= max(
            self._snapshot_min_bytes, self._last_snapshot_bytes
        )

    def snapshot(self) -> Path:
        """Write moto's whole state to a new snapshot and start a new journal; older files are then removed.

        The write lock is held only while the process forks (copy-on-write: the child sees moto's state as it was
        at that instant, and pickles it to disk while the parent goes on taking writes into the new journal), not
        for the seconds a large state takes to pickle. Raises OSError when the snapshot cannot be written; the
        temporary file is removed, and the older snapshot and journals, still in place, recover everything."""
        with self._snapshot_lock, self._keep_files():
            with self._lock:
                generation = self._generation + 1
                tmp = self.moto_dir / f".snapshot-{generation}.tmp"
                following = Journal(self._journal_path(generation), self._fsync_interval)
                try:
                    writer = snapshot_writer.SnapshotWriter(tmp, self._write_snapshot)
                except BaseException:
                    following.close()
                    following.path.unlink(missing_ok=True)
                    raise
                previous, self._journal = self._journal, following
                self._generation = generation
            if previous is not None:
                previous.close()
            try:
                size = writer.wait()
                fd = os.open(tmp, os.O_RDONLY)
                try:
                    os.fsync(fd)
                finally:
                    os.close(fd)
                target = self._snapshot_path(generation)
                os.replace(tmp, target)
                datadir.sync_directory(self.moto_dir)
            except BaseException:
                tmp.unlink(missing_ok=True)
                raise
            self._last_snapshot_bytes = size
            for number, path in (
                numbered_files(self.moto_dir, SNAPSHOT_NAME)
                + numbered_files(self.moto_dir, JOURNAL_NAME)
                + numbered_files(self.moto_dir, _LEFTOVER)
            ):
                if number < generation:
                    path.unlink(missing_ok=True)
            return target

    def _write_snapshot(self, tmp: Path) -> int:
        # In a forked child nothing else runs; in process (no fork), writes wait on the lock, but a read may
        # still add a cache to an object being pickled (moto_speedups does, on a table's first query): pickle
        # then sees a dict change size. Taking it again is enough.
        for attempt in range(3):
            try:
                # Owner-only: a snapshot holds every object and the KMS key material (datadir.make_private).
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                os.fchmod(fd, 0o600)  # a leftover of an earlier version may exist with a wider mode
                with os.fdopen(fd, "wb") as out:
                    snapshot.write(out)
                    out.flush()
                    return out.tell()
            except RuntimeError:
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def _snapshot_loop(self) -> None:
        while True:
            self._wanted.wait()
            self._wanted.clear()
            if self._stopping.is_set():
                return
            try:
                self.snapshot()
            except Exception:
                log.exception("lakelet up: a snapshot failed; the journal keeps growing")

    def _snapshot_path(self, generation: int) -> Path:
        return self.moto_dir / f"snapshot-{generation}.bin"

    def _journal_path(self, generation: int) -> Path:
        return self.moto_dir / f"journal-{generation}.log"
