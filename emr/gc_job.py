"""Lakelet garbage collection as a PySpark job: mark, sweep, report. Runs unchanged on EMR Serverless and in
Spark local mode (``lakelet gc run``). It does not import chalicelib; its whole contract is files in S3.

Usage::

    gc_job.py --storage-namespace s3://bucket/prefix --run-id RUN [--mode mark|sweep|mark-and-sweep]
              [--min-age-seconds 86400] [--commit-partitions 16] [--address-partitions 64]
              [--list-slices 16] [--single-task-objects 1000000] [--endpoint-url URL] [--region REGION]
              [--record-lead-seconds 7]

What it reads (written by the prepare step, chalicelib/gc/prepare.py; paths under
``<ns>/_lakefs/retention/gc/``):

- ``runs/run_id=RUN/prepare.json``: the manifest. Fields used: format_version (1), storage_namespace (must be
  the namespace given), prepared_at (unix seconds), commits_location, staged_locations, staged_addresses
  (how many, which sizes the subtraction).
- ``commits/run_id=RUN/commits.csv``: the active commits; header ``commit_id,meta_range_id,creation_date``.
  Only meta_range_id is used (empty for a commit without objects).
- ``staged/run_id=RUN/part-NNNNN.parquet``: column ``address``, every address staged on any branch.
- The metaranges and ranges of the active commits, ``<ns>/_lakefs/<id>``, Parquet as written by
  chalicelib/graveler/committed/format.py. The job relies on: the schema metadata keys ``lakelet.kind``
  (``metarange`` or ``range``) and ``lakelet.format_version`` (``1``), which it checks; the metarange columns
  ``range_id`` (string, the id of a range stored at ``<ns>/_lakefs/<range_id>``) and ``count`` (int64, the rows of
  that range, which size the subtraction); and the range column ``physical_address`` (string, ``s3://bucket/key``).
  Every other column is ignored.

What it writes, under the same directory:

- mark: ``addresses/run_id=RUN/part-NNNNN.parquet`` (columns address, size, last_modified as unix seconds),
  then ``runs/run_id=RUN/mark.json`` naming exactly the parts of this mark: the sweep reads only those.
- sweep: ``deleted/run_id=RUN/part-NNNNN.parquet`` (same columns): what DeleteObjects confirmed.
- always: ``summary/run_id=RUN/summary.json``: counts and bytes; a mark-only run is a dry run whose
  ``mark.bytes_marked`` is what a sweep would reclaim.
- mark, before anything else: ``sweeps/partition=P/run_id=RUN.json``, the record that tells readers which objects
  a sweep may delete from now on: P is the hourly data partition (countdown, as chalicelib/graveler/addressing.py
  names them) of the cutoff plus an hour, and no object of a partition sorting before P is ever deleted. The API
  caches what it read of these records for a few seconds (chalicelib/graveler/collected.py), so the sweep first
  waits until ``--record-lead-seconds`` (7) have passed since the record was written: by then every container
  answers 410 Gone for what the sweep deletes, instead of handing out URLs to missing data.

Mark: every object under ``<ns>/data/`` is listed in parallel (each partition prefix split into key slices),
and candidates are those last modified at least ``min-age-seconds`` before the prepare step ran (so nothing
written after the prepare is ever collected). The physical addresses of the active commits' ranges (read in
parallel) and the staged addresses are subtracted. Sweep: DeleteObjects in batches of 1000; partial failures
are reported and make the exit status 3. Both are idempotent: a re-run sweep deletes what is left.

Safety rails: only keys under ``<ns>/data/`` of the namespace's bucket are ever deleted; nothing under any
``_lakefs/`` (a repository nested inside ``data/`` is skipped whole); a prepare listing no active commit, or a
missing or unreadable range, stops the job before anything is deleted.

Python 3.9 compatible (the default Python of EMR 7 images), hence no slotted dataclasses or ``match``.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import re
import sys
import time
import zipimport
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import boto3
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from botocore.config import Config

MODE_MARK = "mark"
MODE_SWEEP = "sweep"
MODE_MARK_AND_SWEEP = "mark-and-sweep"
MODES = (MODE_MARK, MODE_SWEEP, MODE_MARK_AND_SWEEP)

GC_DIRECTORY = "_lakefs/retention/gc"
DATA_DIRECTORY = "data/"
METADATA_DIRECTORY = "_lakefs/"
FORMAT_VERSION = 1
# What chalicelib/graveler/committed/format.py stamps on its files.
KIND_KEY = b"lakelet.kind"
VERSION_KEY = b"lakelet.format_version"
RANGE_FORMAT_VERSION = b"1"
COMMITS_HEADER = ("commit_id", "meta_range_id", "creation_date")
DELETE_BATCH = 1000  # the most keys one DeleteObjects request takes
MAX_REPORTED_FAILURES = 100
# S3 timestamps have whole seconds: an object written just after a moment may show a time just before it.
TIMESTAMP_RESOLUTION_SECONDS = 1
# Object ids are hex (uuid4), so these first characters split a partition into even slices.
SLICE_ALPHABET = "0123456789abcdef"
RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")
EXIT_PARTIAL_FAILURE = 3
# The data partitions of chalicelib/graveler/addressing.py: an hourly countdown, 11 hex digits.
PARTITION_HOURS_CEILING = 1 << 40
# Address times come from the writer's clock, last-modified times from S3's: the record allows an hour between.
CLOCK_MARGIN_SECONDS = 3600
# Longer than the API's cache of the records (LAKELET_GC_RECORD_TTL_SECONDS, 5 s by default).
RECORD_LEAD_SECONDS = 7.0

# Rows per Arrow batch a listing task hands to Spark (Spark's own batches into Python are of 10,000 rows too).
ARROW_BATCH_ROWS = 10_000
# A task costs a Python worker tens of milliseconds before its first read (more than a small range takes): the
# metaranges and ranges are spread over --commit-partitions tasks, but each task gets at least this many.
FILES_PER_TASK = 4
# A mark with at most this many old enough objects and referenced addresses (each side) is subtracted and written
# by one task, in Arrow, without a shuffle: one Spark stage of one task instead of three stages of
# --commit-partitions and --address-partitions tasks, whose fixed cost outweighs the rows in a small repository.
# Larger marks use Spark's anti join over --address-partitions. 1M addresses are some 100 MB in one task.
SINGLE_TASK_OBJECTS = 1_000_000
# Up to this many metaranges are read by the driver (small files, one GET each, in READ_THREADS at a time) instead
# of by a Spark job whose fixed cost is larger than the reads; more are read in parallel tasks.
DRIVER_METARANGES = 64
# Files a task (or the driver) reads at a time: GETs wait on S3's latency, not on the CPU.
READ_THREADS = 8
# Where a Python worker process keeps what outlives one task (task_client).
WORKER_STATE_MODULE = "_lakelet_gc_worker_state"
SOURCE_RANGE = "range"
SOURCE_STAGED = "staged"
LISTED_COLUMNS = ["address", "size", "last_modified", "nested_root"]
LISTED_DDL = "address string, size bigint, last_modified bigint, nested_root string"
PARTS_COLUMNS = ["part", "key", "objects", "bytes"]
PARTS_DDL = "part int, key string, objects bigint, bytes bigint"

OBJECTS_SCHEMA = pa.schema(
    [
        pa.field("address", pa.string(), nullable=False),
        pa.field("size", pa.int64(), nullable=False),
        pa.field("last_modified", pa.int64(), nullable=False),
    ]
)

if TYPE_CHECKING:  # aliases only for type checkers: ``X | None`` cannot be evaluated on Python 3.9
    S3Conf = tuple[str | None, str | None]  # (endpoint_url, region): all a task needs to build its client
    ListSlice = tuple[str, str, str | None]  # (prefix, list keys after this one, up to and including this one)
    ListedRow = tuple[str, int, int, str | None]  # address, size, last_modified, nested namespace root or None


class GCJobError(Exception):
    """The job refuses to go on: its inputs are missing, inconsistent or unreadable."""


# ---- the namespace and its paths ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Namespace:
    """A storage namespace ``s3://bucket[/prefix]`` and the keys of Lakelet's files in it."""

    bucket: str
    prefix: str  # "" or ending with "/"

    @classmethod
    def parse(cls, uri: str) -> Namespace:
        if not uri.startswith("s3://"):
            raise GCJobError(f"storage namespace must be s3://bucket[/prefix], got {uri!r}")
        bucket, _, path = uri[len("s3://") :].partition("/")
        if not bucket:
            raise GCJobError(f"storage namespace without a bucket: {uri!r}")
        path = path.rstrip("/")
        return cls(bucket, path + "/" if path else "")

    @property
    def uri(self) -> str:
        return f"s3://{self.bucket}/{self.prefix}".rstrip("/")

    @property
    def data_prefix(self) -> str:
        return self.prefix + DATA_DIRECTORY

    def address(self, key: str) -> str:
        return f"s3://{self.bucket}/{key}"

    def key_of(self, uri: str) -> str:
        """The key of an ``s3://`` URI in this namespace's bucket."""
        head = f"s3://{self.bucket}/"
        if not uri.startswith(head):
            raise GCJobError(f"{uri} is not in bucket {self.bucket}")
        return uri[len(head) :]

    def gc_key(self, relative: str) -> str:
        return f"{self.prefix}{GC_DIRECTORY}/{relative}"

    def metadata_key(self, object_id: str) -> str:
        return f"{self.prefix}{METADATA_DIRECTORY}{object_id}"

    def nested_root(self, key: str) -> str | None:
        """For a key under data/ that belongs to a repository nested there (it has a ``_lakefs/`` segment), the
        key prefix of that repository's namespace."""
        at = key.find("/" + METADATA_DIRECTORY, len(self.data_prefix) - 1)
        return key[: at + 1] if at >= 0 else None

    def collectable_key(self, address: str) -> str | None:
        """The key of an address the sweep may delete, or None: it must be in this bucket, strictly under
        ``data/``, and in no ``_lakefs/`` directory."""
        head = f"s3://{self.bucket}/"
        if not address.startswith(head):
            return None
        key = address[len(head) :]
        if not key.startswith(self.data_prefix) or len(key) == len(self.data_prefix):
            return None
        if self.nested_root(key) is not None:
            return None
        return key

    def normalize(self, address: str) -> str:
        """A physical address as the listing spells it: s3a/s3n schemes as s3, relative ones under the namespace."""
        for scheme in ("s3a://", "s3n://"):
            if address.startswith(scheme):
                return "s3://" + address[len(scheme) :]
        if "://" not in address:
            return self.address(self.prefix + address.lstrip("/"))
        return address


def check_run_id(run_id: str) -> str:
    if not RUN_ID.fullmatch(run_id):
        raise GCJobError(f"invalid run id {run_id!r}")
    return run_id


def prepare_manifest_key(ns: Namespace, run_id: str) -> str:
    return ns.gc_key(f"runs/run_id={run_id}/prepare.json")


def mark_manifest_key(ns: Namespace, run_id: str) -> str:
    return ns.gc_key(f"runs/run_id={run_id}/mark.json")


def commits_key(ns: Namespace, run_id: str) -> str:
    return ns.gc_key(f"commits/run_id={run_id}/commits.csv")


def staged_prefix(ns: Namespace, run_id: str) -> str:
    return ns.gc_key(f"staged/run_id={run_id}/")


def addresses_prefix(ns: Namespace, run_id: str) -> str:
    return ns.gc_key(f"addresses/run_id={run_id}/")


def deleted_prefix(ns: Namespace, run_id: str) -> str:
    return ns.gc_key(f"deleted/run_id={run_id}/")


def summary_key(ns: Namespace, run_id: str) -> str:
    return ns.gc_key(f"summary/run_id={run_id}/summary.json")


def partition_of(seconds: float) -> str:
    return f"{PARTITION_HOURS_CEILING - int(seconds // 3600):011x}"


def sweep_record_key(ns: Namespace, partition: str, run_id: str) -> str:
    return ns.gc_key(f"sweeps/partition={partition}/run_id={run_id}.json")


def part_name(index: int) -> str:
    return f"part-{index:05d}.parquet"


# ---- options ----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class JobOptions:
    storage_namespace: str
    run_id: str
    mode: str = MODE_MARK_AND_SWEEP
    min_age_seconds: int = 86_400
    commit_partitions: int = 16
    address_partitions: int = 64
    list_slices: int = 16
    single_task_objects: int = SINGLE_TASK_OBJECTS
    endpoint_url: str | None = None
    region: str | None = None
    record_lead_seconds: float = RECORD_LEAD_SECONDS

    def __post_init__(self) -> None:
        check_run_id(self.run_id)
        if self.mode not in MODES:
            raise GCJobError(f"mode must be one of {', '.join(MODES)}")
        if self.min_age_seconds < 0:
            raise GCJobError("min age must not be negative")
        if self.commit_partitions < 1 or self.address_partitions < 1:
            raise GCJobError("partition counts must be at least 1")
        if self.single_task_objects < 1:
            raise GCJobError("single-task objects must be at least 1")
        if self.record_lead_seconds < 0:
            raise GCJobError("the record lead must not be negative")
        if not 1 <= self.list_slices <= len(SLICE_ALPHABET):
            raise GCJobError(f"list slices must be between 1 and {len(SLICE_ALPHABET)}")

    @property
    def s3(self) -> S3Conf:
        return (self.endpoint_url, self.region)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gc_job.py", description="Lakelet garbage collection (PySpark).")
    parser.add_argument("--storage-namespace", required=True, help="the repository's s3://bucket[/prefix]")
    parser.add_argument("--run-id", required=True, help="the run id the prepare step returned")
    parser.add_argument(
        "--mode",
        choices=MODES,
        default=MODE_MARK_AND_SWEEP,
        help="mark only (dry run), sweep an earlier mark of this run, or both",
    )
    parser.add_argument(
        "--min-age-seconds",
        type=int,
        default=86_400,
        help="never collect objects written less than this long before the prepare step",
    )
    parser.add_argument(
        "--commit-partitions",
        type=int,
        default=16,
        help="Spark partitions for reading the active commits' metaranges and ranges",
    )
    parser.add_argument(
        "--address-partitions",
        type=int,
        default=64,
        help="Spark partitions for listing, the subtraction and the marked/deleted parts",
    )
    parser.add_argument(
        "--list-slices",
        type=int,
        default=16,
        help="slices each data/ partition prefix is listed in, in parallel (1-16)",
    )
    parser.add_argument(
        "--single-task-objects",
        type=int,
        default=SINGLE_TASK_OBJECTS,
        help="subtract in one task, without a shuffle, when neither the old enough objects nor the referenced "
        "addresses are more than this many",
    )
    parser.add_argument("--endpoint-url", default=None, help="S3 endpoint (local runs against moto only)")
    parser.add_argument("--region", default=None, help="AWS region of the bucket")
    parser.add_argument(
        "--record-lead-seconds",
        type=float,
        default=RECORD_LEAD_SECONDS,
        help="seconds between recording a sweep and deleting (more than the API's record cache)",
    )
    return parser


def parse_options(argv: Sequence[str]) -> JobOptions:
    args = build_parser().parse_args(list(argv))
    return JobOptions(
        storage_namespace=args.storage_namespace,
        run_id=args.run_id,
        mode=args.mode,
        min_age_seconds=args.min_age_seconds,
        commit_partitions=args.commit_partitions,
        address_partitions=args.address_partitions,
        list_slices=args.list_slices,
        single_task_objects=args.single_task_objects,
        endpoint_url=args.endpoint_url,
        region=args.region,
        record_lead_seconds=args.record_lead_seconds,
    )


# ---- S3 and Parquet, usable on the driver and inside tasks -------------------------------------------------------


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
    clients: dict[S3Conf, Any] = state.clients  # type: ignore[attr-defined]
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


def read_lakelet_parquet(data: bytes, columns: list[str], kind: bytes, where: str) -> pa.Table:
    """Columns of a Lakelet range or metarange, after checking it is one, in the version this job knows."""
    parquet = pq.ParquetFile(pa.BufferReader(data))
    metadata = parquet.schema_arrow.metadata or {}
    if metadata.get(KIND_KEY) != kind or metadata.get(VERSION_KEY) != RANGE_FORMAT_VERSION:
        raise GCJobError(
            f"{where}: expected a Lakelet {kind.decode()} of format {RANGE_FORMAT_VERSION.decode()}, found "
            f"kind {metadata.get(KIND_KEY)!r} version {metadata.get(VERSION_KEY)!r}"
        )
    return parquet.read(columns=columns)


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


def read_commits(data: bytes) -> list[tuple[str, str]]:
    """(commit_id, meta_range_id) of each active commit."""
    rows = list(csv.reader(io.StringIO(data.decode())))
    if not rows or tuple(rows[0]) != COMMITS_HEADER:
        raise GCJobError(f"commits.csv must start with the header {','.join(COMMITS_HEADER)}")
    return [(row[0], row[1]) for row in rows[1:] if row]


# ---- listing ------------------------------------------------------------------------------------------------------


def list_slices(prefix: str, count: int) -> list[ListSlice]:
    """``count`` disjoint slices covering every key under ``prefix``: keys after the slice's start (exclusive)
    up to its end (inclusive), with boundaries at the prefix followed by evenly spaced hex digits."""
    bounds = [prefix + SLICE_ALPHABET[(i * len(SLICE_ALPHABET)) // count] for i in range(1, count)]
    starts = [""] + bounds
    ends: list[str | None] = list(bounds) + [None]
    return [(prefix, start, end) for start, end in zip(starts, ends)]


def list_slice(s3: Any, bucket: str, piece: ListSlice, page_size: int = 1000) -> Iterator[dict[str, Any]]:
    """Every object of the slice, in key order (S3 orders keys by UTF-8 bytes, as Python orders str)."""
    prefix, start_after, last = piece
    request: dict[str, Any] = {"Bucket": bucket, "Prefix": prefix, "MaxKeys": page_size}
    if start_after:
        request["StartAfter"] = start_after
    while True:
        page = s3.list_objects_v2(**request)
        for item in page.get("Contents", []):
            if last is not None and item["Key"] > last:
                return
            yield item
        if not page.get("IsTruncated"):
            return
        request["ContinuationToken"] = page["NextContinuationToken"]


def data_partitions(s3: Any, ns: Namespace) -> tuple[list[str], list[dict[str, Any]]]:
    """The partition prefixes under data/, and the objects directly in data/ (not in any partition)."""
    prefixes: list[str] = []
    loose: list[dict[str, Any]] = []
    request: dict[str, Any] = {"Bucket": ns.bucket, "Prefix": ns.data_prefix, "Delimiter": "/"}
    while True:
        page = s3.list_objects_v2(**request)
        prefixes.extend(p["Prefix"] for p in page.get("CommonPrefixes", []))
        loose.extend(page.get("Contents", []))
        if not page.get("IsTruncated"):
            return prefixes, loose
        request["ContinuationToken"] = page["NextContinuationToken"]


def listed_row(ns: Namespace, item: dict[str, Any]) -> ListedRow:
    key = item["Key"]
    root = ns.nested_root(key)
    return (
        ns.address(key),
        int(item.get("Size", 0)),
        int(item["LastModified"].timestamp()),
        ns.address(root) if root is not None else None,
    )


def listed_batch(ns: Namespace, items: list[dict[str, Any]]) -> pa.RecordBatch:
    """One page or more of a listing as the columns of LISTED_DDL."""
    keys = pa.array([item["Key"] for item in items], pa.string())
    # A key under a nested repository's _lakefs/ is rare: its root is found row by row only when there is one.
    after_data = pc.utf8_slice_codeunits(keys, len(ns.data_prefix) - 1)
    if pc.any(pc.match_substring(after_data, "/" + METADATA_DIRECTORY)).as_py():
        roots = pa.array([listed_row(ns, item)[3] for item in items], pa.string())
    else:
        roots = pa.nulls(len(items), pa.string())
    return pa.RecordBatch.from_arrays(
        [
            pc.binary_join_element_wise(f"s3://{ns.bucket}/", keys, ""),
            pa.array([int(item.get("Size", 0)) for item in items], pa.int64()),
            pa.array([int(item["LastModified"].timestamp()) for item in items], pa.int64()),
            roots,
        ],
        names=LISTED_COLUMNS,
    )


def indices(batches: Iterator[pa.RecordBatch]) -> Iterator[int]:
    """The row numbers a task of ``indexed_frame`` was given."""
    for batch in batches:
        yield from batch.column(0).to_pylist()


def indexed_frame(spark: Any, count: int, partitions: int, per_task: int = 1) -> Any:
    """Row numbers 0..count-1 in at most ``partitions`` Spark partitions, each of at least ``per_task`` rows
    (and at least one partition): the input of tasks that read the ``count`` items of a list they carry. No
    shuffle and no Python per row on Spark's side."""
    return spark.range(0, count, 1, max(1, min(partitions, -(-count // per_task))))


def list_task(
    ns: Namespace, conf: S3Conf, pieces: Sequence[ListSlice]
) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        s3 = task_client(conf)
        for index in indices(batches):
            items: list[dict[str, Any]] = []
            for item in list_slice(s3, ns.bucket, pieces[index]):
                items.append(item)
                if len(items) == ARROW_BATCH_ROWS:
                    yield listed_batch(ns, items)
                    items = []
            if items:
                yield listed_batch(ns, items)

    return run


# ---- reading what is referenced --------------------------------------------------------------------------------


def normalize_addresses(ns: Namespace, column: Any) -> pa.Array:
    """``Namespace.normalize`` over a column of physical addresses, without a Python object per row. A missing
    address references nothing and is dropped."""
    addresses = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    addresses = pc.drop_null(addresses.cast(pa.string()))
    addresses = pc.replace_substring_regex(addresses, pattern="^s3[an]://", replacement="s3://")
    relative = pc.invert(pc.match_substring(addresses, "://"))
    if pc.any(relative).as_py():
        joined = pc.binary_join_element_wise(ns.address(ns.prefix), pc.utf8_ltrim(addresses, characters="/"), "")
        addresses = pc.if_else(relative, joined, addresses)
    return addresses


def read_concurrently(read: Callable[[Any], Any], items: Sequence[Any]) -> Iterator[Any]:
    """``read`` of each item, in order, READ_THREADS at a time (boto3's clients are thread-safe). The first
    failure is raised."""
    if len(items) <= 1:
        yield from (read(item) for item in items)
        return
    with ThreadPoolExecutor(min(READ_THREADS, len(items))) as pool:
        yield from pool.map(read, items)


def metarange_ranges(s3: Any, ns: Namespace, metarange_id: str) -> dict[str, int]:
    """The ranges of a metarange: id -> rows."""
    key = ns.metadata_key(metarange_id)
    table = read_lakelet_parquet(get_bytes(s3, ns.bucket, key), ["range_id", "count"], b"metarange", key)
    return dict(zip(table.column("range_id").to_pylist(), table.column("count").to_pylist()))


def distinct_ranges(s3: Any, ns: Namespace, metarange_ids: Sequence[str]) -> dict[str, int]:
    """The ranges of all of ``metarange_ids``, each once (commits share most of theirs): id -> rows."""
    seen: dict[str, int] = {}
    for ranges in read_concurrently(lambda metarange: metarange_ranges(s3, ns, metarange), metarange_ids):
        seen.update(ranges)
    return seen


def referenced_addresses(s3: Any, ns: Namespace, source: tuple[str, str]) -> pa.Array:
    """The addresses of one source, normalized: ``(SOURCE_RANGE, range id)`` or ``(SOURCE_STAGED, part
    location)``."""
    kind, name = source
    if kind == SOURCE_RANGE:
        key = ns.metadata_key(name)
        table = read_lakelet_parquet(get_bytes(s3, ns.bucket, key), ["physical_address"], b"range", key)
    else:
        table = pq.read_table(pa.BufferReader(get_bytes(s3, ns.bucket, ns.key_of(name))), columns=["address"])
    return normalize_addresses(ns, table.column(0))


def metarange_task(
    ns: Namespace, conf: S3Conf, metarange_ids: Sequence[str]
) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """Metarange ids (by row number) -> the distinct ranges they hold, as columns ``range_id`` and ``count``.
    Commits share most of their ranges, so each task sends each range once (the driver merges what the tasks
    send)."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        seen = distinct_ranges(task_client(conf), ns, [metarange_ids[index] for index in indices(batches)])
        if seen:
            yield pa.RecordBatch.from_arrays(
                [pa.array(list(seen), pa.string()), pa.array(list(seen.values()), pa.int64())],
                names=["range_id", "count"],
            )

    return run


def referenced_task(
    ns: Namespace, conf: S3Conf, sources: Sequence[tuple[str, str]]
) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """Sources (by row number) -> the addresses they hold, normalized, as column ``address``."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        s3 = task_client(conf)
        wanted = [sources[index] for index in indices(batches)]
        for addresses in read_concurrently(lambda source: referenced_addresses(s3, ns, source), wanted):
            yield pa.RecordBatch.from_arrays([addresses], names=["address"])

    return run


# ---- writing parts and sweeping ----------------------------------------------------------------------------------


def write_marked_task(
    ns: Namespace, conf: S3Conf, prefix: str
) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """One Spark partition of marked objects (columns address, size, last_modified, part) -> one part file, sorted
    by address, and one row that describes it (PARTS_DDL)."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        collected = [batch for batch in batches if batch.num_rows]
        if collected:
            index = int(collected[0].column("part")[0].as_py())
            yield write_part(task_client(conf), ns, prefix, index, collected)

    return run


def subtract_and_write_task(
    ns: Namespace, conf: S3Conf, prefix: str, sources: Sequence[tuple[str, str]]
) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """The whole subtraction in one task, for a mark of a single part: every candidate (columns address, size,
    last_modified) that none of ``sources`` references -> part 0 and the row that describes it (PARTS_DDL). The
    referenced addresses are read first, all of them, so a source that cannot be read fails the task even when
    there is no candidate."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        s3 = task_client(conf)
        with ThreadPoolExecutor(READ_THREADS) as pool:
            # The reads wait on S3 while Spark converts and sends the candidates: both at once.
            reads = [pool.submit(referenced_addresses, s3, ns, source) for source in sources]
            candidates = [batch for batch in batches if batch.num_rows]
            read = [future.result() for future in reads]
        protected = pa.concat_arrays(read) if read else pa.array([], pa.string())
        kept = [batch.filter(pc.invert(pc.is_in(batch.column("address"), value_set=protected))) for batch in candidates]
        kept = [batch for batch in kept if batch.num_rows]
        if kept:
            yield write_part(s3, ns, prefix, 0, kept)

    return run


def write_part(s3: Any, ns: Namespace, prefix: str, index: int, batches: Iterable[pa.RecordBatch]) -> pa.RecordBatch:
    """Marked objects (columns address, size, last_modified, any others ignored) -> part ``index``, sorted by
    address, and the row that describes it (PARTS_DDL)."""
    table = pa.Table.from_batches(list(batches))
    objects = pa.Table.from_arrays(
        [
            table.column("address").cast(pa.string()),
            table.column("size").cast(pa.int64()),
            table.column("last_modified").cast(pa.int64()),
        ],
        schema=OBJECTS_SCHEMA,
    ).sort_by("address")
    key = prefix + part_name(index)
    put_bytes(s3, ns.bucket, key, parquet_bytes(objects))
    total = pc.sum(objects.column("size")).as_py() or 0
    return pa.RecordBatch.from_arrays(
        [
            pa.array([index], pa.int32()),
            pa.array([key], pa.string()),
            pa.array([objects.num_rows], pa.int64()),
            pa.array([total], pa.int64()),
        ],
        names=PARTS_COLUMNS,
    )


def delete_batch(s3: Any, ns: Namespace, addresses: Sequence[str]) -> tuple[list[int], list[dict[str, str]]]:
    """Deletes up to DELETE_BATCH addresses with one DeleteObjects. Returns the positions deleted (S3 counts a
    key that is already gone as deleted, which makes a re-run idempotent) and the failures."""
    failures: list[dict[str, str]] = []
    positions: dict[str, int] = {}
    for position, address in enumerate(addresses):
        key = ns.collectable_key(address)
        if key is None:
            failures.append({"address": address, "code": "Refused", "message": "not under the namespace's data/"})
        else:
            positions[key] = position
    if not positions:
        return [], failures
    response = s3.delete_objects(
        Bucket=ns.bucket, Delete={"Objects": [{"Key": key} for key in positions], "Quiet": True}
    )
    failed_keys = set()
    for error in response.get("Errors", []):
        failed_keys.add(error.get("Key", ""))
        failures.append(
            {
                "address": ns.address(error.get("Key", "")),
                "code": str(error.get("Code", "")),
                "message": str(error.get("Message", "")),
            }
        )
    deleted = [position for key, position in positions.items() if key not in failed_keys]
    return sorted(deleted), failures


def sweep_part(s3: Any, ns: Namespace, run_id: str, index: int, key: str) -> dict[str, Any]:
    """Deletes the objects of one marked part and writes what was deleted as the matching deleted part."""
    addresses, sizes, modified = read_objects_part(get_bytes(s3, ns.bucket, key))
    kept: list[int] = []
    failures: list[dict[str, str]] = []
    for start in range(0, len(addresses), DELETE_BATCH):
        deleted, failed = delete_batch(s3, ns, addresses[start : start + DELETE_BATCH])
        kept.extend(start + position for position in deleted)
        failures.extend(failed)
    report_key = deleted_prefix(ns, run_id) + part_name(index)
    # Written even when empty, so a re-run replaces what an interrupted run left under the same name.
    put_bytes(
        s3,
        ns.bucket,
        report_key,
        objects_part([addresses[i] for i in kept], [sizes[i] for i in kept], [modified[i] for i in kept]),
    )
    return {
        "index": index,
        "location": ns.address(report_key),
        "deleted": len(kept),
        "bytes": sum(sizes[i] for i in kept),
        "failed": len(failures),
        "failures": failures[:MAX_REPORTED_FAILURES],
    }


def sweep_task(
    ns: Namespace, conf: S3Conf, run_id: str
) -> Callable[[Iterator[tuple[int, str]]], Iterator[dict[str, Any]]]:
    def run(parts: Iterator[tuple[int, str]]) -> Iterator[dict[str, Any]]:
        s3 = task_client(conf)
        for index, key in parts:
            yield sweep_part(s3, ns, run_id, index, key)

    return run


# ---- the two phases ------------------------------------------------------------------------------------------------


def load_prepared(s3: Any, ns: Namespace, run_id: str) -> dict[str, Any]:
    manifest = get_json(s3, ns.bucket, prepare_manifest_key(ns, run_id), "prepare manifest")
    if manifest.get("format_version") != FORMAT_VERSION:
        raise GCJobError(f"prepare manifest of format {manifest.get('format_version')!r}, expected {FORMAT_VERSION}")
    if Namespace.parse(str(manifest.get("storage_namespace", ""))) != ns:
        raise GCJobError(f"run {run_id} was prepared for {manifest.get('storage_namespace')}, not {ns.uri}")
    if manifest.get("run_id") != run_id:
        raise GCJobError(f"prepare manifest names run {manifest.get('run_id')!r}, expected {run_id!r}")
    return manifest


def _no_progress(phase: str, message: str) -> None:
    pass


def mark(spark: Any, options: JobOptions, ns: Namespace, s3: Any, progress: Any = _no_progress) -> dict[str, Any]:
    from pyspark.sql import functions as F
    from pyspark.sql.types import LongType, StringType, StructField, StructType

    run_id = options.run_id
    manifest = load_prepared(s3, ns, run_id)
    prepared_at = float(manifest["prepared_at"])
    commits = read_commits(get_bytes(s3, ns.bucket, ns.key_of(str(manifest["commits_location"]))))
    if not commits:
        # Every repository has a branch, and every head is active: an empty list means a broken prepare.
        raise GCJobError("the prepared run lists no active commit: refusing to collect")
    staged_locations = [str(x) for x in manifest.get("staged_locations", [])]
    cutoff = int(prepared_at) - options.min_age_seconds - TIMESTAMP_RESOLUTION_SECONDS
    # First of all, so that the wait before a sweep runs concurrently with the mark.
    recorded_at = record_sweep(s3, ns, run_id, cutoff)

    # What there is: every object under data/, listed in parallel slices of each partition prefix. Rows reach
    # Spark as Arrow batches, a page at a time.
    prefixes, loose = data_partitions(s3, ns)
    pieces = [piece for prefix in prefixes for piece in list_slices(prefix, options.list_slices)]
    listed = indexed_frame(spark, len(pieces), options.address_partitions).mapInArrow(
        list_task(ns, options.s3, pieces), LISTED_DDL
    )
    if loose:
        listed = listed.union(
            spark.createDataFrame(
                [listed_row(ns, item) for item in loose],
                StructType(
                    [
                        StructField("address", StringType(), False),
                        StructField("size", LongType(), False),
                        StructField("last_modified", LongType(), False),
                        StructField("nested_root", StringType(), True),
                    ]
                ),
            )
        )
    listed = listed.persist()
    listing_started = time.time()
    progress("list", f"listing {ns.uri}/{DATA_DIRECTORY} in {len(pieces) + (1 if loose else 0)} slices")
    totals = listed.agg(
        F.count(F.lit(1)).alias("objects"),
        F.coalesce(F.sum("size"), F.lit(0)).alias("bytes"),
        F.coalesce(F.sum(F.when(F.col("last_modified") > cutoff, 1).otherwise(0)), F.lit(0)).alias("young"),
        F.collect_set("nested_root").alias("nested_roots"),
    ).collect()[0]
    nested_roots = sorted(totals["nested_roots"])
    listing_seconds = time.time() - listing_started
    progress(
        "mark",
        f"{int(totals['objects'])} objects listed ({listing_seconds:.1f} s); marking those no active "
        "commit or staged entry references",
    )

    # What must stay: the addresses of every range of every active metarange, and every staged address. The
    # range ids come back to the driver once (one short string per distinct range, read by exactly one task);
    # the addresses never do. A range that cannot be read fails the job.
    subtract_started = time.time()
    metaranges = sorted({metarange for _, metarange in commits if metarange})
    ranges = referenced_ranges(spark, options, ns, s3, metaranges)
    range_ids = sorted(ranges)
    sources = [(SOURCE_RANGE, range_id) for range_id in range_ids]
    sources += [(SOURCE_STAGED, location) for location in staged_locations]

    candidates = listed.where(F.col("last_modified") <= cutoff)
    for root in nested_roots:
        candidates = candidates.where(~F.col("address").startswith(root))
    # Without nested repositories (the usual case) the old enough objects are known without another pass.
    eligible = candidates.count() if nested_roots else int(totals["objects"]) - int(totals["young"])
    candidates = candidates.select("address", "size", "last_modified")
    # Both sides size the subtraction: the old enough objects, and the addresses that must stay (every row of the
    # active ranges and every staged address, which need not be few when few objects are old enough).
    referenced = sum(ranges.values()) + int(manifest.get("staged_addresses", 0))
    prefix = addresses_prefix(ns, run_id)
    if max(eligible, referenced) <= options.single_task_objects:
        # One part: one task reads what is referenced and filters the candidates against it in Arrow. No
        # shuffle, and no stage of its own for the referenced side; the candidates come from the listing's cache.
        marked = candidates.coalesce(1).mapInArrow(subtract_and_write_task(ns, options.s3, prefix, sources), PARTS_DDL)
    else:
        protected = indexed_frame(spark, len(sources), options.commit_partitions, FILES_PER_TASK).mapInArrow(
            referenced_task(ns, options.s3, sources), "address string"
        )
        # The anti join's own partitioning (by address) makes the parts: no other shuffle, no sort in Spark.
        marked = (
            candidates.join(protected, on="address", how="left_anti")
            .withColumn("part", F.spark_partition_id())
            .mapInArrow(write_marked_task(ns, options.s3, prefix), PARTS_DDL)
        )
    written = marked.collect()
    parts = sorted((int(r["part"]), str(r["key"]), int(r["objects"]), int(r["bytes"])) for r in written)
    subtract_seconds = time.time() - subtract_started
    listed.unpersist()

    objects_marked = sum(p[2] for p in parts)
    result = {
        "format_version": FORMAT_VERSION,
        "run_id": run_id,
        "storage_namespace": ns.uri,
        "marked_at": time.time(),
        "prepared_at": prepared_at,
        "min_age_seconds": options.min_age_seconds,
        "cutoff": cutoff,
        "sweep_recorded_at": recorded_at,
        "active_commits": len(commits),
        "metaranges_read": len(metaranges),
        "ranges_read": len(range_ids),
        "staged_addresses": int(manifest.get("staged_addresses", 0)),
        "objects_listed": int(totals["objects"]),
        "bytes_listed": int(totals["bytes"]),
        "objects_too_young": int(totals["young"]),
        "nested_namespaces_skipped": nested_roots,
        "objects_protected": eligible - objects_marked,
        "objects_marked": objects_marked,
        "bytes_marked": sum(p[3] for p in parts),
        "parts": [{"index": p[0], "location": ns.address(p[1]), "objects": p[2], "bytes": p[3]} for p in parts],
        # Wall time of the listing (with its aggregate), and of reading the ranges, subtracting and writing.
        "seconds": {"listing": round(listing_seconds, 3), "subtract_and_write": round(subtract_seconds, 3)},
    }
    # Written last: it is what makes this mark the one a sweep uses.
    put_json(s3, ns.bucket, mark_manifest_key(ns, run_id), result)
    return result


def referenced_ranges(
    spark: Any, options: JobOptions, ns: Namespace, s3: Any, metaranges: Sequence[str]
) -> dict[str, int]:
    """The distinct ranges of ``metaranges``, id -> rows: read by the driver when they are few, else by Spark tasks
    (each sends the ranges it found once; one short row per range comes back)."""
    if len(metaranges) <= DRIVER_METARANGES:
        return distinct_ranges(s3, ns, metaranges)
    rows = (
        indexed_frame(spark, len(metaranges), options.commit_partitions, FILES_PER_TASK)
        .mapInArrow(metarange_task(ns, options.s3, metaranges), "range_id string, count bigint")
        .collect()
    )
    return {str(row[0]): int(row[1]) for row in rows}


def record_sweep(s3: Any, ns: Namespace, run_id: str, cutoff: int) -> float:
    """Writes the record that readers consult before trusting that an object's data is there (see the module
    docstring); returns when it was written."""
    partition = partition_of(cutoff + CLOCK_MARGIN_SECONDS)
    recorded_at = time.time()
    put_json(
        s3,
        ns.bucket,
        sweep_record_key(ns, partition, run_id),
        {
            "format_version": FORMAT_VERSION,
            "run_id": run_id,
            "cutoff": cutoff,
            "partition": partition,
            "recorded_at": recorded_at,
        },
    )
    return recorded_at


def load_mark(s3: Any, ns: Namespace, run_id: str) -> dict[str, Any]:
    manifest = get_json(s3, ns.bucket, mark_manifest_key(ns, run_id), "mark")
    if Namespace.parse(str(manifest.get("storage_namespace", ""))) != ns or manifest.get("run_id") != run_id:
        raise GCJobError(f"the mark of run {run_id} belongs to another namespace or run")
    return manifest


def sweep(spark: Any, options: JobOptions, ns: Namespace, s3: Any, marked: dict[str, Any]) -> dict[str, Any]:
    parts = [(int(p["index"]), ns.key_of(str(p["location"]))) for p in marked.get("parts", [])]
    recorded_at = marked.get("sweep_recorded_at")
    if recorded_at is None:  # a mark written before sweeps were recorded
        recorded_at = record_sweep(s3, ns, options.run_id, int(marked["cutoff"]))
    waited = max(0.0, float(recorded_at) + options.record_lead_seconds - time.time())
    if parts and waited:
        time.sleep(waited)
    results: list[dict[str, Any]] = []
    if parts:
        results = (
            spark.sparkContext.parallelize(parts, len(parts))
            .mapPartitions(sweep_task(ns, options.s3, options.run_id))
            .collect()
        )
    results.sort(key=lambda r: r["index"])
    failures = [f for r in results for f in r["failures"]][:MAX_REPORTED_FAILURES]
    return {
        "swept_at": time.time(),
        "waited_for_readers_seconds": round(waited if parts else 0.0, 3),
        "objects_deleted": sum(r["deleted"] for r in results),
        "bytes_deleted": sum(r["bytes"] for r in results),
        "objects_failed": sum(r["failed"] for r in results),
        "failures": failures,
        "parts": [
            {"index": r["index"], "location": r["location"], "objects": r["deleted"], "bytes": r["bytes"]}
            for r in results
        ],
    }


def _pickle_this_module_by_value() -> None:
    """Imported as a module (locally), Spark's workers could not import it by name: ship its code instead.
    Run as the entry point (EMR), it is __main__, which Spark already ships by value."""
    if __name__ != "__main__":
        from pyspark import cloudpickle

        cloudpickle.register_pickle_by_value(sys.modules[__name__])  # type: ignore[no-untyped-call]


def run(spark: Any, options: JobOptions, progress: Any = _no_progress) -> dict[str, Any]:
    """Runs the job in ``options.mode`` on an existing SparkSession; writes and returns the summary.
    ``progress(phase, message)`` hears of each phase (list, mark, sweep) as it starts (lakelet gc run prints it)."""
    _pickle_this_module_by_value()
    spark.conf.set("spark.sql.shuffle.partitions", str(options.address_partitions))
    # One marked part per address partition, as --address-partitions says, even when adaptive execution would
    # merge small partitions.
    spark.conf.set("spark.sql.adaptive.coalescePartitions.enabled", "false")
    # The referenced addresses come out of Python (mapInArrow) over a few row numbers, so Spark would size them by
    # those numbers and broadcast a side that holds every live address of the repository: no broadcast joins.
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")
    ns = Namespace.parse(options.storage_namespace)
    s3 = s3_client(options.s3)
    started_at = time.time()
    summary: dict[str, Any] = {
        "format_version": FORMAT_VERSION,
        "run_id": options.run_id,
        "storage_namespace": ns.uri,
        "mode": options.mode,
        "dry_run": options.mode == MODE_MARK,
        "started_at": started_at,
    }
    if options.mode in (MODE_MARK, MODE_MARK_AND_SWEEP):
        summary["mark"] = mark(spark, options, ns, s3, progress)
    else:
        summary["mark"] = load_mark(s3, ns, options.run_id)
    if options.mode in (MODE_SWEEP, MODE_MARK_AND_SWEEP):
        progress("sweep", f"deleting {summary['mark'].get('objects_marked', 0)} marked objects")
        summary["sweep"] = sweep(spark, options, ns, s3, summary["mark"])
    summary["finished_at"] = time.time()
    summary["summary_location"] = ns.address(summary_key(ns, options.run_id))
    put_json(s3, ns.bucket, summary_key(ns, options.run_id), summary)
    return summary


def exit_status(summary: dict[str, Any]) -> int:
    return EXIT_PARTIAL_FAILURE if summary.get("sweep", {}).get("objects_failed", 0) else 0


def main(argv: Sequence[str] | None = None) -> int:
    options = parse_options(sys.argv[1:] if argv is None else argv)
    from pyspark.sql import SparkSession

    spark = SparkSession.builder.appName(f"lakelet-gc-{options.run_id}").getOrCreate()
    summary = run(spark, options)
    print(json.dumps(summary, indent=2, sort_keys=True))
    return exit_status(summary)


if __name__ == "__main__":
    sys.exit(main())
