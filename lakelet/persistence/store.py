"""Persistence of the local stack's moto server: recover on open, journal while serving, snapshot on close.

Open: check the directory's format and lock it (datadir.py); load the newest snapshot; replay the journals
written since, in order, each request with the seed and time it first ran with (determinism.py), Step Functions
executions recorded but not run again (workflows.py); mark executions that were cut off FAILED; write a fresh
snapshot and start a new journal.

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
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lakelet.persistence import (
    datadir,
    determinism,
    journal,
    middleware,
    snapshot,
    workflows,
)
from lakelet.persistence.journal import Journal, Record

log = logging.getLogger("lakelet.persistence")

SNAPSHOT_RECORDS = 20_000
SNAPSHOT_MIN_BYTES = 256 * 1024 * 1024
_SNAPSHOT_NAME = re.compile(r"^snapshot-(\d+)\.bin$")
_JOURNAL_NAME = re.compile(r"^journal-(\d+)\.log$")
_LEFTOVER = re.compile(r"^\.snapshot-(\d+)\.tmp$")  # a snapshot a kill cut short
_RAISED = 599  # the status journaled for a request whose handling raised in moto
_UNAVAILABLE = b"<Error><Code>ServiceUnavailable</Code><Message>lakelet local is stopping</Message></Error>"


@dataclass
class Recovery:
    """What opening the data directory did."""

    snapshot: str | None = None  # the snapshot loaded, None for a new directory
    replayed: int = 0  # journal records applied on top of it
    mismatches: list[str] = field(default_factory=list)  # replayed requests whose status differed from the first run
    orphans: list[str] = field(default_factory=list)  # executions cut off, now FAILED
    seconds: float = 0.0

    def summary(self) -> str:
        if self.snapshot is None and not self.replayed:
            return "new"
        text = f"restored {'a snapshot' if self.snapshot else 'no snapshot'} and {self.replayed} journaled changes"
        text += f" in {self.seconds:.1f} s"
        if self.orphans:
            text += f"; {len(self.orphans)} workflow execution(s) cut off by the stop marked FAILED"
        if self.mismatches:
            text += f"; {len(self.mismatches)} replayed request(s) answered differently (see the log)"
        return text


class Persistence:
    """The data directory of one running stack. :meth:`open` before moto serves, :meth:`close` after it stops."""

    def __init__(
        self,
        data_dir: Path,
        *,
        fsync_interval: float = journal.FSYNC_INTERVAL,
        snapshot_records: int = SNAPSHOT_RECORDS,
        snapshot_min_bytes: int = SNAPSHOT_MIN_BYTES,
    ) -> None:
        self.data_dir = data_dir
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
            self.recovery = self._recover()
            self.snapshot()
        except BaseException:
            if self._journal is not None:
                self._journal.close()
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
        workflows.uninstall()
        determinism.uninstall()
        self._dir_lock.release()

    # -- serving ----------------------------------------------------------------------------------------------

    def wrap(self, app: middleware.WsgiApp) -> middleware.WsgiApp:
        """moto's WSGI app with every state-changing request journaled before it is answered."""

        def journaled_app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
            if not middleware.may_change_state(environ):
                return app(environ, start_response)
            body = middleware.read_body(environ)
            if not middleware.changes_state(environ, body):
                return app(environ, start_response)
            return self._apply(app, environ, body, start_response)

        return journaled_app

    def server(self, ip_address: str, port: int) -> middleware.WrappedMotoServer:
        return middleware.WrappedMotoServer(self.wrap, ip_address, port)

    def _apply(
        self, app: middleware.WsgiApp, environ: dict[str, Any], body: bytes, start_response: Callable[..., Any]
    ) -> Iterable[bytes]:
        recorded = middleware.recordable(environ)
        seed = secrets.randbits(64)
        with self._lock:
            if self._journal is None or self._failure is not None:
                start_response("503 Service Unavailable", [("Content-Type", "application/xml")])
                return [_UNAVAILABLE]
            when = time.time()
            try:
                status, headers, chunks = middleware.run(app, environ, seed, when)
            except Exception:
                # moto may have changed part of its state before failing; a replay fails at the same point.
                self._journal.append(Record(journal.REQUEST, when, seed, _RAISED, recorded, body))
                raise
            try:
                self._journal.append(Record(journal.REQUEST, when, seed, int(status[:3]), recorded, body))
            except OSError as error:
                # moto changed but the disk did not: stop taking writes rather than acknowledge what is lost.
                self._failure = f"cannot write the journal {self._journal.path}: {error}"
                log.error("lakelet local: %s; writes are refused from now on", self._failure)
                start_response("500 Internal Server Error", [("Content-Type", "text/plain")])
                return [self._failure.encode()]
            if self._needs_snapshot(self._journal):
                self._wanted.set()
        start_response(status, headers)
        return chunks

    def _execution_ended(self, execution: Any, record_the_end: Callable[[], None]) -> None:
        with self._lock:
            record_the_end()
            if self._journal is not None and self._failure is None:
                try:
                    self._journal.append(Record(journal.EXECUTION_END, time.time(), data=workflows.end_data(execution)))
                except OSError as error:
                    self._failure = f"cannot write the journal {self._journal.path}: {error}"
                    log.error("lakelet local: %s", self._failure)

    # -- snapshots --------------------------------------------------------------------------------------------

    def _needs_snapshot(self, current: Journal) -> bool:
        return current.records >= self._snapshot_records or current.size >= max(
            self._snapshot_min_bytes, self._last_snapshot_bytes
        )

    def snapshot(self) -> Path:
        """Write moto's whole state to a new snapshot and start a new journal; older files are then removed."""
        with self._snapshot_lock:
            with self._lock:
                generation = self._generation + 1
                tmp = self.moto_dir / f".snapshot-{generation}.tmp"
                size = self._write_snapshot(tmp)
                previous, self._journal = self._journal, Journal(self._journal_path(generation), self._fsync_interval)
                self._generation = generation
            if previous is not None:
                previous.close()
            fd = os.open(tmp, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
            target = self._snapshot_path(generation)
            os.replace(tmp, target)
            datadir.sync_directory(self.moto_dir)
            self._last_snapshot_bytes = size
            for number, path in self._files(_SNAPSHOT_NAME) + self._files(_JOURNAL_NAME) + self._files(_LEFTOVER):
                if number < generation:
                    path.unlink(missing_ok=True)
            return target

    def _write_snapshot(self, tmp: Path) -> int:
        # Writes wait on the lock, but a read may still add a cache to an object being pickled (moto_speedups
        # does, on a table's first query): pickle then sees a dict change size. Taking it again is enough.
        for attempt in range(3):
            try:
                with open(tmp, "wb") as out:
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
                log.exception("lakelet local: a snapshot failed; the journal keeps growing")

    # -- recovery ---------------------------------------------------------------------------------------------

    def _recover(self) -> Recovery:
        started = time.monotonic()
        recovery = Recovery()
        snapshots = self._files(_SNAPSHOT_NAME)
        journals = self._files(_JOURNAL_NAME)
        base = 0
        if snapshots:
            base, path = snapshots[-1]
            snapshot.load(path)
            recovery.snapshot = path.name
        else:
            snapshot.reset_moto()
        app = middleware.moto_app()
        with _executing_state_machines(), workflows.replaying():
            for number, path in journals:
                if number < base:
                    continue
                for record in journal.read_records(path):
                    self._replay(app, record, recovery)
        recovery.orphans = workflows.fail_orphans()
        self._generation = max([base] + [number for number, _ in journals])
        recovery.seconds = time.monotonic() - started
        return recovery

    def _replay(self, app: middleware.WsgiApp, record: Record, recovery: Recovery) -> None:
        recovery.replayed += 1
        if record.kind == journal.EXECUTION_END:
            workflows.apply_end(record.data)
            return
        environ = middleware.replay_environ(record.environ, record.body)
        try:
            status = int(middleware.run(app, environ, record.seed, record.time)[0][:3])
        except Exception as error:  # noqa: BLE001 - reported like any other difference; recovery goes on
            status = _RAISED
            if record.status != _RAISED:
                log.warning("lakelet local: replay: %s", error)
        if status != record.status:
            what = f"{record.environ.get('REQUEST_METHOD')} {record.environ.get('PATH_INFO')}"
            target = record.environ.get("HTTP_X_AMZ_TARGET")
            message = f"{what} {target or ''}: answered {status} on replay, {record.status} at first"
            recovery.mismatches.append(message)
            log.warning("lakelet local: replay: %s", message)

    def _files(self, pattern: re.Pattern[str]) -> list[tuple[int, Path]]:
        found = []
        for path in self.moto_dir.iterdir():
            match = pattern.match(path.name)
            if match:
                found.append((int(match.group(1)), path))
        return sorted(found)

    def _snapshot_path(self, generation: int) -> Path:
        return self.moto_dir / f"snapshot-{generation}.bin"

    def _journal_path(self, generation: int) -> Path:
        return self.moto_dir / f"journal-{generation}.log"


@contextmanager
def _executing_state_machines() -> Iterator[None]:
    """moto's config as the stack sets it, so a replayed StartExecution reaches the interpreter's backend (the
    one the stack's state machines live in)."""
    from moto.core.config import default_user_config

    saved = dict(default_user_config.get("stepfunctions") or {})
    default_user_config["stepfunctions"] = {**saved, "execute_state_machine": True}  # type: ignore[typeddict-item]
    try:
        yield
    finally:
        default_user_config["stepfunctions"] = saved  # type: ignore[typeddict-item]
