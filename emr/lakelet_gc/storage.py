"""S3 and Parquet I/O, usable on the driver and inside Spark tasks: clients (one per worker process), bytes and
JSON, the objects parts (marked and deleted) and concurrent reads."""

from __future__ import annotations

import json
import os
import sys
import zipimport
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import boto3
import pyarrow as pa
import pyarrow.parquet as pq
from botocore.config import Config

from .layout import GCJobError

if TYPE_CHECKING:
    from .layout import S3Conf

# Files a task (or the driver) reads at a time: GETs wait on S3's latency, not on the CPU.
READ_THREADS = 8
# Where a Python worker process keeps what outlives one task (task_client).
WORKER_STATE_MODULE = "_lakelet_gc_worker_state"

OBJECTS_SCHEMA = pa.schema(
    [
        pa.field("address", pa.string(), nullable=False),
        pa.field("size", pa.int64(), nullable=False),
        pa.field("last_modified", pa.int64(), nullable=False),
    ]
)


def s3_client(conf: S3Conf) -> Any:
    endpoint_url, region = conf
    # Standard retries back off on SlowDown and 5xx, which bulk deletes and listings do meet at scale. A session of
    # its own resolves the credentials now: boto3's default session keeps the first ones it resolved for the life of
    # the process, which in a long-lived driver (lakelet gc run in a process that has used other keys) are stale.
    return boto3.session.Session().client(
        "s3",
        endpoint_url=endpoint_url,
        region_name=region,
        config=Config(retries={"mode": "standard", "max_attempts": 10}),
    )


def task_client(conf: S3Conf) -> Any:
    """The S3 client of this Python worker process for ``conf``, made on its first task. Building a client costs
    tens of milliseconds, more than a task reads of a small range, and Spark reuses its Python workers from task to
    task. The job's code reaches the workers by value, so its own globals are new in every task: the clients live
    in a module entry of the worker process instead. The driver never calls this (its credentials may change
    between runs in one process; a worker's are those its process started with)."""
    state = sys.modules.get(WORKER_STATE_MODULE)
    if state is None:
        state = type(sys)(WORKER_STATE_MODULE)
        state.clients = {}  # type: ignore[attr-defined]
        skip_unchanged_zip_rereads()
        sys.modules[WORKER_STATE_MODULE] = state
    clients: dict[S3Conf, Any] = state.clients
    client = clients.get(conf)
    if client is None:
        client = clients[conf] = s3_client(conf)
    return client


def skip_unchanged_zip_rereads() -> None:
    """Spark's Python worker calls importlib.invalidate_caches() before every task, and on Python 3.10 to 3.12
    that re-reads the whole directory of every zip on the path (pyspark.zip, once per package imported from it:
    CPython issue 103200, fixed in 3.13). In a warm local run that was three quarters of the Python workers' time
    outside the listing. This makes a zip importer of the worker process re-read only an archive that changed
    since its last read (size and modification time), which is what the 3.13 behaviour comes to here."""
    if not (3, 10) <= sys.version_info[:2] <= (3, 12):
        return
    importer = zipimport.zipimporter
    reread = importer.invalidate_caches
    if getattr(reread, "lakelet_checks_stamp", False):
        return

    def invalidate_caches(self: Any) -> None:
        try:
            status = os.stat(self.archive)
            stamp: tuple[int, int] | None = (status.st_mtime_ns, status.st_size)
        except OSError:
            stamp = None
        if stamp is not None and getattr(self, "_lakelet_stamp", None) == stamp:
            return
        reread(self)
        self._lakelet_stamp = stamp

    invalidate_caches.lakelet_checks_stamp = True  # type: ignore[attr-defined]
    importer.invalidate_caches = invalidate_caches  # type: ignore[method-assign]


def get_bytes(s3: Any, bucket: str, key: str) -> bytes:
    return bytes(s3.get_object(Bucket=bucket, Key=key)["Body"].read())


def get_json(s3: Any, bucket: str, key: str, what: str) -> dict[str, Any]:
    try:
        data = get_bytes(s3, bucket, key)
    except s3.exceptions.NoSuchKey:
        raise GCJobError(f"{what} not found at s3://{bucket}/{key}") from None
    return dict(json.loads(data))


def put_bytes(s3: Any, bucket: str, key: str, data: bytes) -> None:
    s3.put_object(Bucket=bucket, Key=key, Body=data)


def put_json(s3: Any, bucket: str, key: str, value: dict[str, Any]) -> None:
    put_bytes(s3, bucket, key, json.dumps(value, indent=2, sort_keys=True).encode())


def parquet_bytes(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, compression="snappy")
    return bytes(sink.getvalue().to_pybytes())


def read_objects_part(data: bytes) -> tuple[list[str], list[int], list[int]]:
    table = pq.read_table(pa.BufferReader(data), columns=["address", "size", "last_modified"])
    return (
        table.column("address").to_pylist(),
        table.column("size").to_pylist(),
        table.column("last_modified").to_pylist(),
    )


def objects_part(addresses: list[str], sizes: list[int], last_modified: list[int]) -> bytes:
    return parquet_bytes(
        pa.Table.from_arrays(
            [pa.array(addresses, pa.string()), pa.array(sizes, pa.int64()), pa.array(last_modified, pa.int64())],
            schema=OBJECTS_SCHEMA,
        )
    )


def read_concurrently(read: Callable[[Any], Any], items: Sequence[Any]) -> Iterator[Any]:
    """``read`` of each item, in order, READ_THREADS at a time (boto3's clients are thread-safe). The first
    failure is raised."""
    if len(items) <= 1:
        yield from (read(item) for item in items)
        return
    with ThreadPoolExecutor(min(READ_THREADS, len(items))) as pool:
        yield from pool.map(read, items)
