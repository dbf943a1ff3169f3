"""What the job reports: the mark's manifest (``runs/run_id=RUN/mark.json``), the sweep's counts, the run's
summary (``summary/run_id=RUN/summary.json``) and the exit status they give."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .layout import EXIT_PARTIAL_FAILURE, FORMAT_VERSION, MAX_REPORTED_FAILURES, MODE_MARK, Namespace
from .options import JobOptions

# A written part: (index, key, objects, bytes), in index order.
Part = tuple[int, str, int, int]


@dataclass(frozen=True)
class Listing:
    """What the listing found under data/: the counts of its one aggregate and how long it took."""

    objects: int
    bytes: int
    too_young: int
    nested_roots: Sequence[str]
    seconds: float


@dataclass(frozen=True)
class Referenced:
    """What must stay: the active commits, their metaranges and distinct ranges, and the staged addresses."""

    active_commits: int
    metaranges: int
    ranges: int
    staged_addresses: int


def mark_report(
    options: JobOptions,
    ns: Namespace,
    prepared_at: float,
    cutoff: int,
    recorded_at: float,
    listing: Listing,
    referenced: Referenced,
    eligible: int,
    parts: Sequence[Part],
    subtract_seconds: float,
) -> dict[str, Any]:
    """The mark's manifest: what a sweep of this run deletes (``parts``), and the counts a dry run reports."""
    objects_marked = sum(p[2] for p in parts)
    return {
        "format_version": FORMAT_VERSION,
        "run_id": options.run_id,
        "storage_namespace": ns.uri,
        "marked_at": time.time(),
        "prepared_at": prepared_at,
        "min_age_seconds": options.min_age_seconds,
        "cutoff": cutoff,
        "sweep_recorded_at": recorded_at,
        "active_commits": referenced.active_commits,
        "metaranges_read": referenced.metaranges,
        "ranges_read": referenced.ranges,
        "staged_addresses": referenced.staged_addresses,
        "objects_listed": listing.objects,
        "bytes_listed": listing.bytes,
        "objects_too_young": listing.too_young,
        "nested_namespaces_skipped": list(listing.nested_roots),
        "objects_protected": eligible - objects_marked,
        "objects_marked": objects_marked,
        "bytes_marked": sum(p[3] for p in parts),
        "parts": [{"index": p[0], "location": ns.address(p[1]), "objects": p[2], "bytes": p[3]} for p in parts],
        # Wall time of the listing (with its aggregate), and of reading the ranges, subtracting and writing.
        "seconds": {"listing": round(listing.seconds, 3), "subtract_and_write": round(subtract_seconds, 3)},
    }


def sweep_report(results: list[dict[str, Any]], waited: float) -> dict[str, Any]:
    """The sweep's part of the summary from what each part's task returned (sweep.sweep_part)."""
    results = sorted(results, key=lambda r: r["index"])
    failures = [f for r in results for f in r["failures"]][:MAX_REPORTED_FAILURES]
    return {
        "swept_at": time.time(),
        "waited_for_readers_seconds": round(waited, 3),
        "objects_deleted": sum(r["deleted"] for r in results),
        "bytes_deleted": sum(r["bytes"] for r in results),
        "objects_failed": sum(r["failed"] for r in results),
        "failures": failures,
        "parts": [
            {"index": r["index"], "location": r["location"], "objects": r["deleted"], "bytes": r["bytes"]}
            for r in results
        ],
    }


def summary_head(options: JobOptions, ns: Namespace) -> dict[str, Any]:
    """The summary's fields known before either phase starts; the phases add ``mark`` and ``sweep``."""
    return {
        "format_version": FORMAT_VERSION,
        "run_id": options.run_id,
        "storage_namespace": ns.uri,
        "mode": options.mode,
        "dry_run": options.mode == MODE_MARK,
        "started_at": time.time(),
    }


def exit_status(summary: dict[str, Any]) -> int:
    """3 when some deletes failed (the summary lists up to MAX_REPORTED_FAILURES of them), else 0."""
    return EXIT_PARTIAL_FAILURE if summary.get("sweep", {}).get("objects_failed", 0) else 0
