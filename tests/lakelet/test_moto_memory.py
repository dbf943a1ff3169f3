"""lakelet.stack.moto_memory: moto stops keeping every model object it made, and S3 values above the spill size
live in files of their own (no descriptor kept open), which snapshots read like any other value."""

from __future__ import annotations

import copy
import gc
import hashlib
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from lakelet.persistence import snapshot
from lakelet.stack import moto_memory

SPILL = 1024


@pytest.fixture
def spilling(tmp_path: Path) -> Iterator[Path]:
    was_installed = moto_memory.installed()
    moto_memory.install(tmp_path, spill_bytes=SPILL)
    directory = moto_memory.spill_dir()
    assert directory is not None and directory.is_relative_to(tmp_path / "spill")
    try:
        yield directory
    finally:
        if not was_installed:
            moto_memory.uninstall()


def _key(value: bytes) -> object:
    from moto.s3.models import FakeKey

    return FakeKey("k", value, account_id="123456789012", region_name="us-east-1")


def _files(directory: Path) -> list[Path]:
    return list(directory.iterdir()) if directory.exists() else []


def test_a_large_value_lives_in_a_file_and_reads_back(spilling: Path) -> None:
    big = os.urandom(5 * SPILL + 7)
    key = _key(big)
    assert key._value_buffer.spilled  # type: ignore[attr-defined]
    [file] = _files(spilling)
    assert stat.S_IMODE(file.stat().st_mode) == 0o600 and file.read_bytes() == big
    assert key.value == big  # type: ignore[attr-defined]
    assert key.etag == f'"{hashlib.md5(big).hexdigest()}"'  # type: ignore[attr-defined]  # read in chunks
    assert key.value == big  # type: ignore[attr-defined]  # the etag's reads left the value whole
    assert snapshot._key_state(key)["value"] == big  # what a snapshot pickles
    assert len(os.listdir(f"/proc/{os.getpid()}/fd")) < 10_000  # sanity: nothing is held open per value
    key.value = b"small now"  # type: ignore[attr-defined]  # moto truncates, then writes
    assert not key._value_buffer.spilled and _files(spilling) == []  # type: ignore[attr-defined]
    assert key.value == b"small now"  # type: ignore[attr-defined]


def test_a_small_value_stays_in_memory(spilling: Path) -> None:
    key = _key(b"x" * SPILL)
    assert not key._value_buffer.spilled and _files(spilling) == []  # type: ignore[attr-defined]
    assert key.value == b"x" * SPILL  # type: ignore[attr-defined]
    assert snapshot._key_state(key)["value"] == b"x" * SPILL


def test_a_deleted_or_collected_key_removes_its_file(spilling: Path) -> None:
    disposed = _key(os.urandom(2 * SPILL))
    disposed.dispose()  # type: ignore[attr-defined]  # what moto does when a key is deleted or overwritten
    assert _files(spilling) == []
    assert snapshot._key_state(disposed)["value"] == b""  # as moto's __getstate__ has a deleted key
    dropped = _key(os.urandom(2 * SPILL))
    assert len(_files(spilling)) == 1
    del dropped
    gc.collect()
    assert _files(spilling) == []


def test_a_copied_key_has_its_own_file(spilling: Path) -> None:
    big = os.urandom(3 * SPILL)
    original = _key(big)
    copied = copy.deepcopy(original)  # moto copies keys (CopyObject, versions): through __getstate__
    assert len(_files(spilling)) == 2
    original.dispose()  # type: ignore[attr-defined]
    assert copied.value == big  # type: ignore[attr-defined]


def test_moto_no_longer_tracks_every_instance(spilling: Path) -> None:
    from moto.dynamodb.models.dynamo_type import Item
    from moto.s3.models import FakeKey

    keys_before, items_before = len(FakeKey.instances_tracked), len(Item.instances_tracked)  # type: ignore[attr-defined]
    for i in range(20):
        _key(b"v%d" % i).dispose()  # type: ignore[attr-defined]
        copy.deepcopy(Item({"S": "h"}, {"S": "r"}, {"a": {"S": "b"}}))  # what queries and transactions do
    assert len(FakeKey.instances_tracked) == keys_before  # type: ignore[attr-defined]
    assert len(Item.instances_tracked) == items_before  # type: ignore[attr-defined]


def test_uninstall_gives_moto_its_own_tracking_back(tmp_path: Path) -> None:
    from moto.s3.models import FakeKey

    if moto_memory.installed():
        pytest.skip("a stack of this process installed it for the process's life")
    moto_memory.install(tmp_path)
    moto_memory.uninstall()
    before = len(FakeKey.instances_tracked)  # type: ignore[attr-defined]
    key = _key(b"v")
    assert len(FakeKey.instances_tracked) == before + 1  # type: ignore[attr-defined]
    key.dispose()  # type: ignore[attr-defined]


def test_leftovers_of_a_killed_stack_are_removed(spilling: Path, tmp_path: Path) -> None:
    leftover = tmp_path / "spill" / "lakelet-spill-1-dead"
    leftover.mkdir(parents=True)
    (leftover / "v").write_bytes(b"old")
    alive = _key(os.urandom(2 * SPILL))
    moto_memory.remove_leftovers(tmp_path)
    assert not leftover.exists() and len(_files(spilling)) == 1
    assert alive.value  # type: ignore[attr-defined]


def test_files_stay_while_kept(spilling: Path) -> None:
    key = _key(os.urandom(2 * SPILL))
    [file] = _files(spilling)
    with moto_memory.files_kept():
        with moto_memory.files_kept():
            key.dispose()  # type: ignore[attr-defined]
        assert file.exists()  # a snapshot's writer forked before the delete may still read it
    assert not file.exists()
