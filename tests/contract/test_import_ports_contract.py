"""One suite for the import's ports, over the in-memory twins and the S3-backed adapters (moto): the source
lister (S3SourceLister vs MemorySourceLister) and the status records (the block-store records on S3 and on the
memory store, and MemoryImportRecords)."""

from __future__ import annotations

import hashlib

import pytest

from chalicelib.adapters.import_records import BlockImportRecords, MemoryImportRecords
from chalicelib.adapters.memory import MemoryBlockStore
from chalicelib.adapters.memory_source import MemorySourceLister
from chalicelib.adapters.s3_source import S3SourceLister
from chalicelib.graveler import errors
from chalicelib.graveler.imports import ImportNotFound, ImportRecord, ImportRecords, SourceLister
from chalicelib.graveler.imports.listing import just_below
from chalicelib.graveler.ports import BlockStore
from chalicelib.settings import Settings
from chalicelib.wiring import s3_client

from .conftest import REGION

KEYS = ["a/1", "a/2", "a/b/3", "a/b/c/4", "a/c/5", "a0", "b/6", "a/\u00e9", "a/z\u00e9\u00e9"]


@pytest.fixture
def lister(moto: object, block_store: BlockStore) -> SourceLister:
    if moto is None:
        assert isinstance(block_store, MemoryBlockStore)
        return MemorySourceLister(block_store, page_size=2)
    return S3SourceLister(s3_client(Settings(region=REGION)), page_size=2)


@pytest.fixture
def sources(block_store: BlockStore, bucket: str) -> str:
    for key in KEYS:
        block_store.put(f"s3://{bucket}/{key}", key.encode())
    return bucket


def _keys(lister: SourceLister, bucket: str, prefix: str, after: str = "") -> list[str]:
    return [o.key for page in lister.pages(bucket, prefix, after) for o in page]


def test_pages_list_in_key_order_with_size_and_etag(lister: SourceLister, sources: str) -> None:
    pages = list(lister.pages(sources, "a/"))
    assert all(len(page) <= 2 for page in pages) and len(pages) >= 3
    found = [o for page in pages for o in page]
    assert [o.key for o in found] == sorted(k for k in KEYS if k.startswith("a/"))
    first = found[0]
    assert first.size == len(first.key.encode()) and first.etag == hashlib.md5(first.key.encode()).hexdigest()
    assert first.mtime > 0


def test_start_after_and_just_below_include_the_key(lister: SourceLister, sources: str) -> None:
    assert _keys(lister, sources, "a/", "a/b/3") == ["a/b/c/4", "a/c/5", "a/z\u00e9\u00e9", "a/\u00e9"]
    assert _keys(lister, sources, "a/", just_below("a/b/3"))[0] == "a/b/3"
    assert _keys(lister, sources, "a/", just_below("a/\u00e9")) == ["a/\u00e9"]


def test_common_prefixes_and_head(lister: SourceLister, sources: str) -> None:
    assert lister.common_prefixes(sources, "a/", 100) == ["a/b/", "a/c/"]
    assert lister.common_prefixes(sources, "", 1) == ["a/"]
    assert lister.head(sources, "a/b/3").size == 5
    with pytest.raises(errors.ObjectNotFound):
        lister.head(sources, "a/missing")


def test_an_empty_prefix_lists_nothing(lister: SourceLister, sources: str) -> None:
    assert _keys(lister, sources, "nothing/") == []


@pytest.fixture(params=["block", "memory"])
def records(request: pytest.FixtureRequest, block_store: BlockStore, moto: object) -> ImportRecords:
    if request.param == "memory":
        if moto is not None:
            pytest.skip("the memory twin has no aws variant")
        return MemoryImportRecords()
    return BlockImportRecords(block_store)


def test_records_create_get_save(records: ImportRecords, bucket: str) -> None:
    namespace = f"s3://{bucket}/repo"
    record = ImportRecord("1" * 32, "repo", "main", "running", 10.0)
    records.create(namespace, record)
    with pytest.raises(errors.AlreadyExists):
        records.create(namespace, record)
    assert records.get(namespace, record.import_id) == record
    with pytest.raises(ImportNotFound):
        records.get(namespace, "2" * 32)
    with pytest.raises(ImportNotFound):
        records.get(f"s3://{bucket}/other", record.import_id)
    done = record.completed("c", "m", 7, 11.0)
    records.save(namespace, done)
    assert records.get(namespace, record.import_id) == done


def test_records_progress_per_part_and_cancel(records: ImportRecords, bucket: str) -> None:
    namespace = f"s3://{bucket}/repo"
    records.create(namespace, ImportRecord("1" * 32, "repo", "main", "running", 10.0))
    assert records.progress(namespace, "1" * 32) == 0
    records.report_progress(namespace, "1" * 32, "00000", 5)
    records.report_progress(namespace, "1" * 32, "00001", 3)
    records.report_progress(namespace, "1" * 32, "00000", 6)  # a retry of the part overwrites its count
    assert records.progress(namespace, "1" * 32) == 9
    assert not records.canceled(namespace, "1" * 32)
    records.cancel(namespace, "1" * 32)
    records.cancel(namespace, "1" * 32)
    assert records.canceled(namespace, "1" * 32)
    assert not records.canceled(namespace, "2" * 32)


def test_records_decide_keeps_the_first_outcome(records: ImportRecords, bucket: str) -> None:
    namespace = f"s3://{bucket}/repo"
    assert records.decide(namespace, "3" * 32, "merging") == "merging"
    assert records.decide(namespace, "3" * 32, "canceling") == "merging"
    assert records.decide(namespace, "3" * 32, "merging") == "merging"  # a retry of the winner still wins
    assert records.decide(namespace, "4" * 32, "canceling") == "canceling"
    assert records.decide(namespace, "4" * 32, "merging") == "canceling"
