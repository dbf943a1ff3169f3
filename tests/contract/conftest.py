"""Fixtures of the contract suites: each port test runs against the in-memory twin and the AWS adapter.

The "aws" variant runs the real adapters against moto in-process, with table names unique to the test.
Two adjustments make moto a faithful stand-in for the behaviour under test:
- moto checks a write's condition and then stores the item without a lock, so two threads can both pass the
  check (a transaction's conditions too). DynamoDB serializes writes to one item; a lock around moto's item
  writes restores that, which keeps the compare-and-swap race test about the adapter (a read-then-write in
  Python would still lose the race).
  moto's S3 PutObject checks If-None-Match: * the same way; S3 makes it atomic, and so does a lock here.
- the DynamoDB operations moto serves are counted, so a test can see how many query pages were fetched.
"""

from __future__ import annotations

import functools
import threading
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import boto3
import pytest
from moto import mock_aws
from moto.dynamodb.models import DynamoDBBackend
from moto.s3.responses import S3Response

from chalicelib.adapters.dynamodb import (
    DynamoAuthStore,
    DynamoRefStore,
    DynamoStagingStore,
    TableNames,
    create_tables,
)
from chalicelib.adapters.dynamodb.staging import DEFAULT_FIRST_PAGE_SIZE, DEFAULT_PAGE_SIZE
from chalicelib.adapters.memory import MemoryAuthStore, MemoryBlockStore, MemoryRefStore, MemoryStagingStore
from chalicelib.adapters.s3 import S3BlockStore
from chalicelib.auth.ports import AuthStore
from chalicelib.graveler.ports import BlockStore, RefStore, StagingStore
from chalicelib.graveler.records import StagedEntry, StagingToken
from chalicelib.settings import Settings
from chalicelib.wiring import s3_client
from lakelet.stack import moto_speedups
from lakelet.stack.moto_partitions import MotoPartitions

REGION = "us-east-1"
VARIANTS = ["memory", "aws"]

_AWS_ENV = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SESSION_TOKEN": "testing",
    "AWS_DEFAULT_REGION": REGION,
    "AWS_REGION": REGION,
}
# Anything that could send a test's requests to a real account or a running server.
_AWS_ENV_UNSET = (
    "AWS_PROFILE",
    "AWS_ENDPOINT_URL",
    "AWS_ENDPOINT_URL_S3",
    "AWS_ENDPOINT_URL_DYNAMODB",
    "AWS_CONFIG_FILE",
    "AWS_SHARED_CREDENTIALS_FILE",
)


@dataclass
class Moto:
    """The aws variant's view of moto: the DynamoDB operations it served, by backend method name."""

    calls: Counter[str] = field(default_factory=Counter)


def set_fake_aws_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in _AWS_ENV_UNSET:
        monkeypatch.delenv(name, raising=False)
    for name, value in _AWS_ENV.items():
        monkeypatch.setenv(name, value)


@pytest.fixture
def fake_aws_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fake credentials and region, and no setting that could reach a real account."""
    set_fake_aws_env(monkeypatch)


def unique_prefix() -> str:
    return f"c{uuid.uuid4().hex[:12]}-"


def _instrument_dynamodb(monkeypatch: pytest.MonkeyPatch, calls: Counter[str]) -> None:
    item_lock = threading.RLock()

    def wrap(name: str, serialize: bool) -> None:
        original: Callable[..., Any] = getattr(DynamoDBBackend, name)

        @functools.wraps(original)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            calls[name] += 1
            if not serialize:
                return original(*args, **kwargs)
            with item_lock:
                return original(*args, **kwargs)

        monkeypatch.setattr(DynamoDBBackend, name, wrapper)

    for name in ("put_item", "update_item", "delete_item", "transact_write_items"):
        wrap(name, serialize=True)
    for name in ("get_item", "query", "scan"):
        wrap(name, serialize=False)


def _serialize_s3_puts(monkeypatch: pytest.MonkeyPatch) -> None:
    lock = threading.Lock()
    original: Callable[..., Any] = S3Response.put_object

    @functools.wraps(original)
    def put_object(self: S3Response, *args: Any, **kwargs: Any) -> Any:
        with lock:
            return original(self, *args, **kwargs)

    monkeypatch.setattr(S3Response, "put_object", put_object)


@pytest.fixture(params=VARIANTS)
def variant(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def moto(variant: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[Moto | None]:
    """None for the memory variant; for the aws variant, moto running in-process for this test."""
    if variant == "memory":
        yield None
        return
    set_fake_aws_env(monkeypatch)
    state = Moto()
    _instrument_dynamodb(monkeypatch, state.calls)
    _serialize_s3_puts(monkeypatch)
    with mock_aws():
        yield state


@pytest.fixture
def table_names(moto: Moto | None) -> TableNames | None:
    """Fresh tables for the aws variant (a prefix unique to the test); None for the memory variant."""
    if moto is None:
        return None
    names = TableNames.from_prefix(unique_prefix())
    create_tables(names, REGION)
    return names


@pytest.fixture
def ref_store(table_names: TableNames | None) -> RefStore:
    return MemoryRefStore() if table_names is None else DynamoRefStore(table_names, REGION)


StagingFactory = Callable[..., StagingStore]


#: The staging suites' variants: besides the two above, "aws-local", the DynamoDB adapter as the embedded stack
#: wires it, its partitions read straight from moto's memory (lakelet/stack/moto_partitions.py) instead of queried.
STAGING_VARIANTS = [*VARIANTS, "aws-local"]


class CountedPartitions(MotoPartitions):
    """MotoPartitions counting the pages it reads (the suites count pages, by Query or not)."""

    def __init__(self, region: str, access_key_id: str) -> None:
        super().__init__(region, access_key_id)
        self.reads = 0
        self.on_page = self._count

    def _count(self, table: str) -> None:
        self.reads += 1


@pytest.fixture
def staged_partitions(variant: str) -> Iterator[CountedPartitions | None]:
    """The "aws-local" variant's reader of staging partitions (it needs moto_speedups' hooks: installed for the
    test when they were not, and given back after it); None for the other variants."""
    if variant != "aws-local":
        yield None
        return
    was_installed = moto_speedups.installed()
    moto_speedups.install()
    try:
        yield CountedPartitions(REGION, _AWS_ENV["AWS_ACCESS_KEY_ID"])
    finally:
        if not was_installed:
            moto_speedups.uninstall()


@pytest.fixture
def make_staging_store(
    table_names: TableNames | None, ref_store: RefStore, staged_partitions: CountedPartitions | None
) -> StagingFactory:
    """Builds stores over the test's staged data, with the page sizes of DynamoStagingStore.

    The in-memory twin has no pages: it ignores them, and every call returns the same store.
    """
    memory = MemoryStagingStore(ref_store if isinstance(ref_store, MemoryRefStore) else None)

    def make(page_size: int = DEFAULT_PAGE_SIZE, first_page_size: int = DEFAULT_FIRST_PAGE_SIZE) -> StagingStore:
        if table_names is None:
            return memory
        return DynamoStagingStore(
            table_names, REGION, page_size=page_size, first_page_size=first_page_size, partitions=staged_partitions
        )

    return make


@pytest.fixture
def staging_store(make_staging_store: StagingFactory) -> StagingStore:
    """A store with the default page sizes."""
    return make_staging_store()


def _stage_all(store: StagingStore, token: StagingToken, entries: Iterable[StagedEntry]) -> None:
    store.set_many(token, entries)


@pytest.fixture
def stage_all() -> Callable[[StagingStore, StagingToken, Iterable[StagedEntry]], None]:
    """Stages many entries, in batches where the store can (moto takes ~4 ms per single put)."""
    return _stage_all


@pytest.fixture
def dynamo_queries(moto: Moto | None, staged_partitions: CountedPartitions | None) -> Callable[[], int | None]:
    """How many DynamoDB queries moto has served so far in this test, and for "aws-local" the partition pages read
    from moto's memory; None for the memory variant."""
    if moto is None:
        return lambda: None
    return lambda: moto.calls["query"] + (staged_partitions.reads if staged_partitions is not None else 0)


@pytest.fixture
def auth_store(table_names: TableNames | None) -> AuthStore:
    return MemoryAuthStore() if table_names is None else DynamoAuthStore(table_names, REGION)


@pytest.fixture
def bucket(moto: Moto | None) -> str:
    """A bucket for blob addresses; created in moto's S3 for the aws variant."""
    name = f"contract-{uuid.uuid4().hex[:12]}"
    if moto is not None:
        boto3.client("s3", region_name=REGION).create_bucket(Bucket=name)
    return name


@pytest.fixture
def block_store(moto: Moto | None, bucket: str) -> BlockStore:
    if moto is None:
        return MemoryBlockStore()
    return S3BlockStore(s3_client(Settings(region=REGION)))  # the deployed client, SigV4 included
