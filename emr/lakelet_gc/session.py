"""The run on a Spark session: how the session is set up for the job, the two phases in their mode, the summary,
and ``main`` (the entry point's whole body, emr/gc_job.py)."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Sequence
from typing import Any

from .inputs import load_mark
from .layout import MODE_MARK, MODE_MARK_AND_SWEEP, MODE_SWEEP, Namespace, summary_key
from .mark import Progress, mark, no_progress
from .options import JobOptions, parse_options
from .report import exit_status, summary_head
from .storage import put_json, s3_client
from .sweep import sweep


def ship_code_by_value() -> None:
    """Spark's workers get the job's code inside each task instead of importing it: locally the package is loaded
    from the checkout by path (lakelet/stack/local_gc.py), where a worker could not import it by name, and on EMR
    it comes in a zip (spark.submit.pyFiles). By value, both run alike, and the workers' module globals are new in
    every task (storage.task_client keeps what outlives a task elsewhere)."""
    from pyspark import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__package__])  # type: ignore[no-untyped-call]


def configure(spark: Any, options: JobOptions) -> None:
    spark.conf.set("spark.sql.shuffle.partitions", str(options.address_partitions))
    # One marked part per address partition, as --address-partitions says, even when adaptive execution would
    # merge small partitions.
    spark.conf.set("spark.sql.adaptive.coalescePartitions.enabled", "false")
    # The referenced addresses come out of Python (mapInArrow) over a few row numbers, so Spark would size them by
    # those numbers and broadcast a side that holds every live address of the repository: no broadcast joins.
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")


def run(spark: Any, options: JobOptions, progress: Progress = no_progress) -> dict[str, Any]:
    """Runs the job in ``options.mode`` on an existing SparkSession; writes and returns the summary.
    ``progress(phase, message)`` hears of each phase (list, mark, sweep) as it starts (lakelet gc run prints it)."""
    ship_code_by_value()
    configure(spark, options)
    ns = Namespace.parse(options.storage_namespace)
    s3 = s3_client(options.s3)
    summary = summary_head(options, ns)
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


def main(argv: Sequence[str] | None = None) -> int:
    """Parses the command line, runs on the session spark-submit gave (EMR) and prints the summary as JSON."""
    options = parse_options(sys.argv[1:] if argv is None else argv)
    from pyspark.sql import SparkSession

    spark = SparkSession.builder.appName(f"lakelet-gc-{options.run_id}").getOrCreate()
    summary = run(spark, options)
    print(json.dumps(summary, indent=2, sort_keys=True))
    return exit_status(summary)
