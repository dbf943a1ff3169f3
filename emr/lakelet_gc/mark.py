"""The mark: list every object under data/, subtract what the active commits and the staged entries reference,
and write what is left (old enough and referenced by nothing) as parts, then the manifest that names them.

Each step is a function of its own: the prepared inputs and the sweep record, the listing with its one
aggregate, the referenced ranges, and the subtraction (in one task for a small mark, Spark's anti join else).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from .inputs import SOURCE_RANGE, SOURCE_STAGED, distinct_ranges, load_prepared, read_commits
from .layout import (
    DATA_DIRECTORY,
    TIMESTAMP_RESOLUTION_SECONDS,
    GCJobError,
    Namespace,
    addresses_prefix,
    mark_manifest_key,
)
from .listing import LISTED_DDL, data_partitions, indexed_frame, list_slices, list_task, listed_row
from .options import JobOptions
from .report import Listing, Part, Referenced, mark_report
from .storage import get_bytes, put_json
from .subtract import PARTS_DDL, metarange_task, referenced_task, subtract_and_write_task, write_marked_task
from .sweep import record_sweep

Progress = Callable[[str, str], None]

# A task costs a Python worker tens of milliseconds before its first read (more than a small range takes): the
# metaranges and ranges are spread over --commit-partitions tasks, but each task gets at least this many.
FILES_PER_TASK = 4
# Up to this many metaranges are read by the driver (small files, one GET each, in READ_THREADS at a time) instead
# of by a Spark job whose fixed cost is larger than the reads; more are read in parallel tasks.
DRIVER_METARANGES = 64


def no_progress(phase: str, message: str) -> None:
    pass


def mark(spark: Any, options: JobOptions, ns: Namespace, s3: Any, progress: Progress = no_progress) -> dict[str, Any]:
    """Marks the objects of ``ns`` a sweep of ``options.run_id`` may delete; writes and returns the manifest."""
    run_id = options.run_id
    manifest = load_prepared(s3, ns, run_id)
    prepared_at = float(manifest["prepared_at"])
    commits = read_commits(get_bytes(s3, ns.bucket, ns.key_of(str(manifest["commits_location"]))))
    if not commits:
        # Every repository has a branch, and every head is active: an empty list means a broken prepare.
        raise GCJobError("the prepared run lists no active commit: refusing to collect")
    staged_locations = [str(x) for x in manifest.get("staged_locations", [])]
    staged_addresses = int(manifest.get("staged_addresses", 0))
    cutoff = int(prepared_at) - options.min_age_seconds - TIMESTAMP_RESOLUTION_SECONDS
    # First of all, so that the wait before a sweep runs concurrently with the mark.
    recorded_at = record_sweep(s3, ns, run_id, cutoff)

    listed, listing = list_objects(spark, options, ns, s3, cutoff, progress)
    # What must stay: the addresses of every range of every active metarange, and every staged address. The
    # range ids come back to the driver once (one short string per distinct range, read by exactly one task);
    # the addresses never do. A range that cannot be read fails the job.
    subtract_started = time.time()
    metaranges = sorted({metarange for _, metarange in commits if metarange})
    ranges = referenced_ranges(spark, options, ns, s3, metaranges)
    sources = [(SOURCE_RANGE, range_id) for range_id in sorted(ranges)]
    sources += [(SOURCE_STAGED, location) for location in staged_locations]
    # Both sides size the subtraction: the old enough objects, and the addresses that must stay (every row of the
    # active ranges and every staged address, which need not be few when few objects are old enough).
    referenced_rows = sum(ranges.values()) + staged_addresses
    eligible, parts = subtract(spark, options, ns, listed, listing, cutoff, sources, referenced_rows)
    subtract_seconds = time.time() - subtract_started
    listed.unpersist()

    referenced = Referenced(len(commits), len(metaranges), len(ranges), staged_addresses)
    result = mark_report(
        options, ns, prepared_at, cutoff, recorded_at, listing, referenced, eligible, parts, subtract_seconds
    )
    # Written last: it is what makes this mark the one a sweep uses.
    put_json(s3, ns.bucket, mark_manifest_key(ns, run_id), result)
    return result


def list_objects(
    spark: Any, options: JobOptions, ns: Namespace, s3: Any, cutoff: int, progress: Progress
) -> tuple[Any, Listing]:
    """Every object under data/ as a persisted DataFrame (LISTED_DDL), and the counts of one pass over it."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import LongType, StringType, StructField, StructType

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
    listing = Listing(
        objects=int(totals["objects"]),
        bytes=int(totals["bytes"]),
        too_young=int(totals["young"]),
        nested_roots=sorted(totals["nested_roots"]),
        seconds=time.time() - listing_started,
    )
    progress(
        "mark",
        f"{listing.objects} objects listed ({listing.seconds:.1f} s); marking those no active "
        "commit or staged entry references",
    )
    return listed, listing


def subtract(
    spark: Any,
    options: JobOptions,
    ns: Namespace,
    listed: Any,
    listing: Listing,
    cutoff: int,
    sources: Sequence[tuple[str, str]],
    referenced_rows: int,
) -> tuple[int, list[Part]]:
    """The old enough objects that no source references, written as parts: (how many were old enough, the
    parts in index order)."""
    from pyspark.sql import functions as F

    candidates = listed.where(F.col("last_modified") <= cutoff)
    for root in listing.nested_roots:
        candidates = candidates.where(~F.col("address").startswith(root))
    # Without nested repositories (the usual case) the old enough objects are known without another pass.
    eligible = candidates.count() if listing.nested_roots else listing.objects - listing.too_young
    candidates = candidates.select("address", "size", "last_modified")
    prefix = addresses_prefix(ns, options.run_id)
    if max(eligible, referenced_rows) <= options.single_task_objects:
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
    return eligible, sorted((int(r["part"]), str(r["key"]), int(r["objects"]), int(r["bytes"])) for r in written)


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
