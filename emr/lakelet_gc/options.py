"""The job's command line (what chalicelib/gc/schedule.py passes on EMR and lakelet/stack/local_gc.py builds
locally) as one checked, frozen record."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .layout import MODE_MARK_AND_SWEEP, MODES, RECORD_LEAD_SECONDS, SLICE_ALPHABET, GCJobError, check_run_id

if TYPE_CHECKING:
    from .layout import S3Conf

# A mark with at most this many old enough objects and referenced addresses (each side) is subtracted and written
# by one task, in Arrow, without a shuffle: one Spark stage of one task instead of three stages of
# --commit-partitions and --address-partitions tasks, whose fixed cost outweighs the rows in a small repository.
# Larger marks use Spark's anti join over --address-partitions. 1M addresses are some 100 MB in one task.
SINGLE_TASK_OBJECTS = 1_000_000


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
