"""A damaged journal never loses acknowledged writes silently; the data directory is owner-only; a full disk's
503 says what to do.

- journal.scan tells a torn tail (a last frame cut short: dropped) from damage followed by good frames, for bit
  flips at several offsets, each with its exact outcome;
- Persistence refuses to start on damage with one line naming the file and the byte offset, leaves every file as
  it was, and with accept_journal_loss starts from the changes before the damage after setting the files aside;
- the directory and its files are 0700/0600, new or left wider by an earlier version;
- a journal that cannot be written makes every later write 503 with a message that says to free space and restart.
"""

from __future__ import annotations

import errno
import os
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lakelet.persistence import Persistence, journal
from lakelet.persistence.datadir import DataDirError
from lakelet.persistence.journal import Journal, Record

from .test_persistence_store import Served, crash_image

_HEADER = struct.Struct(">II")


def _request(n: int, body: bytes = b"") -> Record:
    return Record(journal.REQUEST, 1000.0 + n, seed=n, status=200, environ={"PATH_INFO": f"/{n}"}, body=body)


def frames(path: Path) -> list[tuple[int, int]]:
    """(offset, total length) of each record frame of a journal, skipping padding: the format, read by hand."""
    data = path.read_bytes()
    found, offset = [], 0
    while offset + _HEADER.size <= len(data):
        length, checksum = _HEADER.unpack_from(data, offset)
        if length == 0 and checksum == 0:
            offset = (offset // journal.PAGE + 1) * journal.PAGE
            continue
        found.append((offset, _HEADER.size + length))
        offset += _HEADER.size + length
    return found


def flip(path: Path, offset: int, bit: int = 0) -> None:
    data = bytearray(path.read_bytes())
    data[offset] ^= 1 << bit
    path.write_bytes(bytes(data))


def frame_holding(spans: list[tuple[int, int]], offset: int) -> int:
    return next(i for i, (start, length) in enumerate(spans) if start <= offset < start + length)


# ---- journal.scan ---------------------------------------------------------------------------------------------


@pytest.fixture
def written(tmp_path: Path) -> Path:
    """A journal of 40 records of varied sizes, with page padding after some of them (as fsyncs leave it), as a
    kill leaves it (no padding after the last)."""
    path = tmp_path / "journal-1.log"
    log = Journal(path, fsync_interval=3600)
    for n in range(40):
        log.append(_request(n, bytes([n]) * (50 + n * 61)))
        if n % 9 == 4:
            log.sync()
    whole = path.read_bytes()
    log.close()
    path.write_bytes(whole)
    return path


def _place(spans: list[tuple[int, int]], where: str) -> int:
    """A payload byte of the frame the test names."""
    size = spans[-1][0] + spans[-1][1]
    if where == "first frame":
        return spans[0][0] + _HEADER.size + 5
    if where == "last frame":
        return spans[-1][0] + _HEADER.size + 5
    target = size // 3 if where == "a third in" else size // 2
    # The frame holding the target, or the first after it when the target falls in page padding (the frames' sizes
    # vary from run to run: a request's id and time are in them).
    start, length = next((s, n) for s, n in spans if target < s + n)
    return min(max(target, start + _HEADER.size), start + length - 1)  # in the payload, not the header


@pytest.mark.parametrize(
    ("where", "damaged_at", "torn"),
    [
        ("first frame", 0, False),
        ("a third in", None, False),
        ("the middle", None, False),
        ("last frame", 39, True),
    ],
)
def test_bit_flips_are_torn_tails_only_at_the_end(
    written: Path, where: str, damaged_at: int | None, torn: bool
) -> None:
    spans = frames(written)
    assert len(spans) == 40
    offset = _place(spans, where)
    index = frame_holding(spans, offset) if damaged_at is None else damaged_at
    assert 0 < index < 39 or damaged_at is not None
    flip(written, offset, bit=3)
    scanned = journal.scan(written)
    assert (scanned.records, scanned.end, scanned.problem) == (
        index,
        spans[index][0],
        "a frame that fails its checksum",
    )
    # Damage: every frame after the bad one is found; a torn tail has none after it.
    assert scanned.valid_after == (0 if torn else 39 - index)
    assert [r.seed for r in journal.read_records(written, scanned.end)] == list(range(index))


def test_a_flipped_length_is_damage_when_frames_follow(written: Path) -> None:
    spans = frames(written)
    flip(written, spans[12][0], bit=6)  # the length's high byte: the frame claims 1 GiB more than it has
    scanned = journal.scan(written)
    assert (scanned.records, scanned.end, scanned.valid_after) == (12, spans[12][0], 27)
    assert "cut short by the end of the file" in str(scanned.problem)


def test_a_kill_in_the_middle_of_the_last_frame_is_a_torn_tail(written: Path) -> None:
    spans = frames(written)
    written.write_bytes(written.read_bytes()[: spans[-1][0] + 30])
    scanned = journal.scan(written)
    assert (scanned.records, scanned.end, scanned.valid_after) == (39, spans[-1][0], 0)
    written.write_bytes(written.read_bytes()[: spans[-1][0]] + bytes(5))  # a crash during padding: no record
    assert journal.scan(written) == journal.Scan(written, spans[-1][0] + 5, spans[-1][0] + 5, 39)


# ---- Persistence: refuse, or accept the loss after setting the files aside ----------------------------------


def _state_of(data_dir: Path) -> dict[str, tuple[bytes, int]]:
    """Every file's bytes and mode, but the lock (which the opening process takes)."""
    return {
        p.relative_to(data_dir).as_posix(): (p.read_bytes(), p.stat().st_mode & 0o777)
        for p in sorted(data_dir.rglob("*"))
        if p.is_file() and p.name != "lock"
    }


@pytest.fixture(scope="module")
def crashed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A data directory as a kill -9 leaves it: a snapshot, then a journal of a bucket and 40 acknowledged puts."""
    root = tmp_path_factory.mktemp("crashed")
    served = Served(root / "live")
    try:
        s3 = served.client("s3")
        s3.create_bucket(Bucket="bkt")
        for i in range(40):
            s3.put_object(Bucket="bkt", Key=f"k{i:02d}", Body=f"value {i}".encode() * (i + 1))
        image = crash_image(root / "live", root / "image")
    finally:
        served.stop()
    yield image


def _copy(image: Path, target: Path) -> tuple[Path, Path, list[tuple[int, int]]]:
    data_dir = crash_image(image, target)
    (log,) = sorted((data_dir / "moto").glob("journal-*.log"))
    return data_dir, log, frames(log)


def _keys(served: Served) -> list[str]:
    return [o["Key"] for o in served.client("s3").list_objects_v2(Bucket="bkt").get("Contents", [])]


@pytest.mark.e2e
@pytest.mark.parametrize("where", ["first frame", "a third in", "the middle"])
def test_damage_refuses_to_start_and_changes_nothing(crashed: Path, tmp_path: Path, where: str) -> None:
    data_dir, log, spans = _copy(crashed, tmp_path / "d")
    offset = _place(spans, where)
    index = frame_holding(spans, offset)
    flip(log, offset)
    before = _state_of(data_dir)
    with pytest.raises(DataDirError) as refused:
        Persistence(data_dir).open()
    message = str(refused.value)
    assert "\n" not in message
    assert message == (
        f"journal {log} at byte {spans[index][0]} (a frame that fails its checksum) is damaged, and "
        f"{len(spans) - index - 1} journaled change(s) after it are readable: refusing to start, every file is left "
        f"as it was; to start from the {index} change(s) before the damage and lose the rest, run again with "
        "--accept-journal-loss (the damaged files are set aside first)"
    )
    assert _state_of(data_dir) == before


@pytest.mark.e2e
def test_accepting_the_loss_starts_from_before_the_damage_and_keeps_the_files(crashed: Path, tmp_path: Path) -> None:
    data_dir, log, spans = _copy(crashed, tmp_path / "d")
    index = frame_holding(spans, _place(spans, "a third in"))
    flip(log, _place(spans, "a third in"))
    before = _state_of(data_dir)
    served = Served(data_dir, accept_journal_loss=True)
    try:
        (note,) = served.recovery.notes
        assert note.startswith(f"accepted the loss of journal {log} at byte {spans[index][0]} ")
        assert served.recovery.replayed == index
        first_put = len(spans) - 40
        assert _keys(served) == [f"k{i:02d}" for i in range(index - first_put)]
        (aside,) = data_dir.glob("damaged-*")
        assert aside.stat().st_mode & 0o777 == 0o700
        kept = {p.name: p.read_bytes() for p in aside.iterdir()}
        assert kept == {
            name.split("/")[-1]: data for name, (data, _) in before.items() if name.startswith("moto/")
        }  # the damaged journal and its snapshot, byte for byte
        assert note.endswith(f"the files are set aside in {aside}")
        assert f"; accepted the loss of journal {log}" in served.recovery.summary()
    finally:
        served.stop()


@pytest.mark.e2e
def test_a_torn_last_frame_is_dropped_and_said(crashed: Path, tmp_path: Path) -> None:
    data_dir, log, spans = _copy(crashed, tmp_path / "d")
    flip(log, spans[-1][0] + _HEADER.size + 5)  # the last put's frame: as an OS crash may leave it
    size = log.stat().st_size
    served = Served(data_dir)
    try:
        (note,) = served.recovery.notes
        assert note == (
            f"dropped the torn tail of journal {log} at byte {spans[-1][0]} (a frame that fails its "
            f"checksum): {size - spans[-1][0]} byte(s) a crash cut short"
        )
        assert _keys(served) == [f"k{i:02d}" for i in range(39)]
        assert note in served.recovery.summary()
    finally:
        served.stop()


# ---- owner-only data directory -------------------------------------------------------------------------------


def _modes(data_dir: Path) -> dict[str, int]:
    return {
        p.relative_to(data_dir).as_posix() or ".": p.stat().st_mode & 0o777
        for p in [data_dir, *sorted(data_dir.rglob("*"))]
    }


@pytest.mark.e2e
def test_the_data_directory_and_its_files_are_owner_only(tmp_path: Path) -> None:
    previous = os.umask(0o022)
    try:
        served = Served(tmp_path / "new")
        served.client("s3").create_bucket(Bucket="bkt")
        served.stop()
    finally:
        os.umask(previous)
    modes = _modes(tmp_path / "new")
    assert any(name.startswith("moto/snapshot-") for name in modes) and "FORMAT" in modes
    assert {name: mode for name, mode in modes.items() if mode != (0o700 if name in (".", "moto") else 0o600)} == {}

    # A directory an earlier version left readable by all is fixed when it is opened; a link is not followed.
    old = tmp_path / "new"
    for path in [old, *old.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    outside = tmp_path / "outside.txt"
    outside.write_text("not ours")
    outside.chmod(0o644)
    (old / "link").symlink_to(outside)
    again = Served(old)
    again.stop()
    modes = _modes(old)
    modes.pop("link")
    assert {name: mode for name, mode in modes.items() if mode != (0o700 if name in (".", "moto") else 0o600)} == {}
    assert outside.stat().st_mode & 0o777 == 0o644


# ---- a journal that cannot be written ------------------------------------------------------------------------


def _disk_full(*_: Any, **__: Any) -> None:
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


@pytest.mark.e2e
def test_a_full_disk_refuses_writes_and_says_to_free_space_and_restart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    served = Served(tmp_path / "d")
    try:
        s3 = served.client("s3")
        s3.create_bucket(Bucket="bkt")
        s3.put_object(Bucket="bkt", Key="before", Body=b"kept")
        monkeypatch.setattr(Journal, "append", _disk_full)
        for key in ("first", "second"):  # the write that met the full disk, and every one after it
            with pytest.raises(Exception) as refused:
                s3.put_object(Bucket="bkt", Key=key, Body=b"x")
            error = getattr(refused.value, "response", {})
            assert error["ResponseMetadata"]["HTTPStatusCode"] == 503, refused.value
            message = error["Error"]["Message"]
            assert "retry later" not in message
            assert message == (
                f"lakelet up cannot write its journal {tmp_path / 'd' / 'moto' / 'journal-1.log'} (No space left "
                f"on device), so it refuses every write until it is restarted: free space on the disk of "
                f"{tmp_path / 'd'}, then stop lakelet up (Ctrl-C) and start it again; reads work meanwhile"
            )
        assert served.persistence.refusal == message
        assert s3.get_object(Bucket="bkt", Key="before")["Body"].read() == b"kept"  # reads still answer
    finally:
        monkeypatch.undo()
        served.server.stop()
        served.persistence.close()


@pytest.mark.e2e
def test_the_api_and_the_gateway_say_what_to_do_on_a_full_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import boto3
    import requests
    from botocore.config import Config

    from lakelet.stack.local import Credentials, LocalStack

    keys = Credentials("AKIALOCALDISKFULL", "disk/full+secret")
    auth = (keys.access_key_id, keys.secret_access_key)
    with LocalStack(api_port=0, credentials=keys, data_dir=tmp_path / "d") as stack:
        created = requests.post(
            f"{stack.api_url}/repositories",
            auth=auth,
            timeout=30,
            json={
                "name": "full",
                "storage_namespace": stack.default_namespace_prefix.rstrip("/") + "/full",
                "default_branch": "main",
            },
        )
        assert created.status_code == 201, created.text
        upload = f"{stack.api_url}/repositories/full/branches/main/objects"
        assert requests.post(upload, params={"path": "a"}, data=b"a", auth=auth, timeout=30).status_code == 201
        monkeypatch.setattr(Journal, "append", _disk_full)
        refused = requests.post(upload, params={"path": "b"}, data=b"b", auth=auth, timeout=60)
        assert refused.status_code == 503, refused.text
        reason = stack.persistence.refusal if stack.persistence is not None else None
        assert reason is not None and "free space on the disk of" in reason and "start it again" in reason
        assert refused.json() == {"message": reason}
        assert "Retry-After" not in refused.headers
        gateway = boto3.client(
            "s3",
            endpoint_url=stack.s3_url,
            region_name="us-east-1",
            aws_access_key_id=keys.access_key_id,
            aws_secret_access_key=keys.secret_access_key,
            config=Config(retries={"max_attempts": 1}),
        )
        with pytest.raises(Exception) as via_gateway:
            gateway.put_object(Bucket="full", Key="main/c", Body=b"c")
        answer = getattr(via_gateway.value, "response", {})
        assert answer["ResponseMetadata"]["HTTPStatusCode"] == 503, via_gateway.value
        assert answer["Error"]["Message"] == reason
        # Reads still answer.
        read = requests.get(
            f"{stack.api_url}/repositories/full/refs/main/objects", params={"path": "a"}, auth=auth, timeout=30
        )
        assert (read.status_code, read.content) == (200, b"a")
        monkeypatch.undo()


@pytest.mark.e2e
def test_a_start_on_a_full_disk_says_so_and_leaves_no_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lakelet.persistence import snapshot

    served = Served(tmp_path / "d")
    served.client("s3").create_bucket(Bucket="bkt")
    served.client("s3").put_object(Bucket="bkt", Key="kept", Body=b"kept")
    served.stop()
    moto_dir = tmp_path / "d" / "moto"
    before = sorted(p.name for p in moto_dir.iterdir())

    def fills_the_disk(out: Any) -> None:
        out.write(b"x" * 4096)
        out.flush()
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(snapshot, "write", fills_the_disk)
    with pytest.raises(DataDirError) as refused:
        Persistence(tmp_path / "d").open()
    message = str(refused.value)
    assert "Errno" not in message and message.startswith(f"no space left on the disk of {tmp_path / 'd'}")
    assert "free some space and start again" in message
    assert sorted(p.name for p in moto_dir.iterdir()) == before  # no temporary snapshot, no new journal
    monkeypatch.undo()
    again = Served(tmp_path / "d")
    try:
        assert again.client("s3").get_object(Bucket="bkt", Key="kept")["Body"].read() == b"kept"
    finally:
        again.stop()
