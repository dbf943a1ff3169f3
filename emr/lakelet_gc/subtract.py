"""The Spark tasks of the mark's subtraction: metaranges to their distinct ranges, sources to the addresses they
reference, and the candidates no source references written as parts (one row per part, PARTS_DDL)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from .inputs import distinct_ranges, referenced_addresses
from .layout import Namespace, part_name
from .listing import indices
from .storage import OBJECTS_SCHEMA, READ_THREADS, parquet_bytes, put_bytes, read_concurrently, task_client

if TYPE_CHECKING:
    from .layout import S3Conf

PARTS_COLUMNS = ["part", "key", "objects", "bytes"]
PARTS_DDL = "part int, key string, objects bigint, bytes bigint"


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
