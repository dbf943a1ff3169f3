"""What there is: every object under ``<ns>/data/``, listed in parallel slices of each partition prefix, reaching
Spark as Arrow batches (LISTED_DDL), a page at a time."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from .layout import METADATA_DIRECTORY, SLICE_ALPHABET, Namespace
from .storage import task_client

if TYPE_CHECKING:
    from .layout import ListedRow, ListSlice, S3Conf

# Rows per Arrow batch a listing task hands to Spark (Spark's own batches into Python are of 10,000 rows too).
ARROW_BATCH_ROWS = 10_000
LISTED_COLUMNS = ["address", "size", "last_modified", "nested_root"]
LISTED_DDL = "address string, size bigint, last_modified bigint, nested_root string"


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
