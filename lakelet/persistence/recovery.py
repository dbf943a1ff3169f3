"""Opening a data directory: check the journals written since the newest snapshot (a damaged one refuses the start,
changing nothing, unless the loss is accepted, which sets the files aside first; a torn tail is dropped, saying so),
load the snapshot, and replay the journals in order (lakelet/persistence/store.py describes the whole cycle).
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from lakelet.persistence import datadir, journal, middleware, snapshot, workflows
from lakelet.persistence.journal import Record

log = logging.getLogger("lakelet.persistence")

SNAPSHOT_NAME = re.compile(r"^snapshot-(\d+)\.bin$")
JOURNAL_NAME = re.compile(r"^journal-(\d+)\.log$")
RAISED = 599  # the status journaled for a request whose handling raised in moto


@dataclass
class Recovery:
    """What opening the data directory did."""

    snapshot: str | None = None  # the snapshot loaded, None for a new directory
    replayed: int = 0  # journal records applied on top of it
    mismatches: list[str] = field(default_factory=list)  # replayed requests whose status differed from the first run
    orphans: list[str] = field(default_factory=list)  # executions cut off, now FAILED
    notes: list[str] = field(default_factory=list)  # torn tails dropped, a loss accepted
    seconds: float = 0.0

    def summary(self) -> str:
        if self.snapshot is None and not self.replayed and not self.notes:
            return "new"
        text = f"restored {'a snapshot' if self.snapshot else 'no snapshot'} and {self.replayed} journaled changes"
        text += f" in {self.seconds:.1f} s"
        if self.orphans:
            text += f"; {len(self.orphans)} workflow execution(s) cut off by the stop marked FAILED"
        if self.mismatches:
            text += f"; {len(self.mismatches)} replayed request(s) answered differently (see the log)"
        for note in self.notes:
            text += f"; {note}"
        return text


def recover(data_dir: Path, moto_dir: Path, accept_journal_loss: bool) -> tuple[Recovery, int]:
    """Rebuild moto's state from the directory's newest snapshot and the journals after it: what was done, and
    the generation of the newest file found (the next snapshot and journal take the one after)."""
    started = time.monotonic()
    recovery = Recovery()
    snapshots = numbered_files(moto_dir, SNAPSHOT_NAME)
    journals = numbered_files(moto_dir, JOURNAL_NAME)
    base = snapshots[-1][0] if snapshots else 0
    scans = [journal.scan(path) for number, path in journals if number >= base]
    # Checked before anything is loaded or changed, so a refusal leaves every file as it was.
    replayable = _check_journals(
        data_dir, scans, snapshots[-1][1] if snapshots else None, recovery, accept_journal_loss
    )
    if snapshots:
        snapshot.load(snapshots[-1][1])
        recovery.snapshot = snapshots[-1][1].name
    else:
        snapshot.reset_moto()
    app = middleware.moto_app()
    with _executing_state_machines(), workflows.replaying():
        for scanned in replayable:
            try:
                for record in journal.read_records(scanned.path, scanned.end):
                    _replay(app, record, recovery)
            except ValueError as error:
                raise datadir.DataDirError(f"{error}; every file is left as it was") from None
    recovery.orphans = workflows.fail_orphans()
    generation = max([base] + [number for number, _ in journals])
    recovery.seconds = time.monotonic() - started
    return recovery, generation


def _check_journals(
    data_dir: Path, scans: list[journal.Scan], base: Path | None, recovery: Recovery, accept_journal_loss: bool
) -> list[journal.Scan]:
    """The journals to replay, each up to its ``end``. A torn tail is cut off (the file truncated); damage
    raises DataDirError, or with ``accept_journal_loss`` ends the replay there after setting the files aside."""
    for index, scanned in enumerate(scans):
        if scanned.problem is None:
            continue
        later = scans[index + 1 :]
        readable = scanned.valid_after + sum(s.records + s.valid_after for s in later)
        where = f"journal {scanned.path} at byte {scanned.end} ({scanned.problem})"
        if readable == 0:
            note = f"dropped the torn tail of {where}: {scanned.size - scanned.end} byte(s) a crash cut short"
            log.warning("lakelet up: %s", note)
            recovery.notes.append(note)
            os.truncate(scanned.path, scanned.end)
            continue
        if not accept_journal_loss:
            raise datadir.DataDirError(
                f"{where} is damaged, and {readable} journaled change(s) after it are readable: refusing to "
                "start, every file is left as it was; to start from the "
                f"{sum(s.records for s in scans[: index + 1])}"
                " change(s) before the damage and lose the rest, run again with --accept-journal-loss (the "
                "damaged files are set aside first)"
            )
        aside = _set_aside(data_dir, [s.path for s in scans[index:]] + ([base] if base is not None else []))
        note = f"accepted the loss of {where} and the {readable} change(s) after it; the files are set aside in {aside}"
        log.warning("lakelet up: %s", note)
        recovery.notes.append(note)
        return scans[: index + 1]
    return scans


def _set_aside(data_dir: Path, paths: list[Path]) -> Path:
    """Keep the files as they are in a new ``damaged-<time>`` directory: hard links (these files are never
    written again, and the start-up snapshot only unlinks them), or copies where links are not possible."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    aside = data_dir / f"damaged-{stamp}"
    suffix = 1
    while aside.exists():
        suffix += 1
        aside = data_dir / f"damaged-{stamp}-{suffix}"
    aside.mkdir(mode=0o700)
    for path in paths:
        try:
            os.link(path, aside / path.name)
        except OSError:
            shutil.copy2(path, aside / path.name)
    datadir.sync_directory(aside)
    datadir.sync_directory(data_dir)
    return aside


def _replay(app: middleware.WsgiApp, record: Record, recovery: Recovery) -> None:
    recovery.replayed += 1
    if record.kind == journal.EXECUTION_END:
        workflows.apply_end(record.data)
        return
    environ = middleware.replay_environ(record.environ, record.body)
    try:
        status = int(middleware.run(app, environ, record.seed, record.time)[0][:3])
    except Exception as error:  # noqa: BLE001 - reported like any other difference; recovery goes on
        status = RAISED
        if record.status != RAISED:
            log.warning("lakelet up: replay: %s", error)
    if status != record.status:
        what = f"{record.environ.get('REQUEST_METHOD')} {record.environ.get('PATH_INFO')}"
        target = record.environ.get("HTTP_X_AMZ_TARGET")
        message = f"{what} {target or ''}: answered {status} on replay, {record.status} at first"
        recovery.mismatches.append(message)
        log.warning("lakelet up: replay: %s", message)


def numbered_files(moto_dir: Path, pattern: re.Pattern[str]) -> list[tuple[int, Path]]:
    """(number, path) of the files of ``moto_dir`` whose name the pattern matches, by number."""
    found = []
    for path in moto_dir.iterdir():
        match = pattern.match(path.name)
        if match:
            found.append((int(match.group(1)), path))
    return sorted(found)


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
