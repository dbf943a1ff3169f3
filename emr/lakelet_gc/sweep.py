"""The sweep: the record that tells readers which objects may go (written first, by the mark), then DeleteObjects
over the marked parts, one Spark task per part, each writing the matching deleted part."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from .layout import (
    CLOCK_MARGIN_SECONDS,
    DELETE_BATCH,
    FORMAT_VERSION,
    MAX_REPORTED_FAILURES,
    Namespace,
    deleted_prefix,
    part_name,
    partition_of,
    sweep_record_key,
)
from .options import JobOptions
from .report import sweep_report
from .storage import get_bytes, objects_part, put_bytes, put_json, read_objects_part, task_client

if TYPE_CHECKING:
    from .layout import S3Conf


def record_sweep(s3: Any, ns: Namespace, run_id: str, cutoff: int) -> float:
    """Writes the record that readers consult before trusting that an object's data is there (see the package
    package docstring); returns when it was written."""
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


def sweep(spark: Any, options: JobOptions, ns: Namespace, s3: Any, marked: dict[str, Any]) -> dict[str, Any]:
    """Deletes what ``marked`` (the mark's manifest) lists, once readers have had the record for
    ``options.record_lead_seconds``; returns the sweep's part of the summary."""
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
    return sweep_report(results, waited if parts else 0.0)


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
