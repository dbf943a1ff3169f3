"""Lakelet garbage collection as a PySpark job: mark, sweep, report. Runs unchanged on EMR Serverless and in
Spark local mode (``lakelet gc run``). It does not import chalicelib; its whole contract is files in S3.

The entry point is emr/gc_job.py, a script of a few lines that calls :func:`main`; this package goes beside it, in
the checkout (lakelet/stack/local_gc.py loads it from there) or as the zip ``make package`` builds
(infra/gc_bundle.py), which EMR Serverless puts on the job's path (``--conf spark.submit.pyFiles``, set by
chalicelib/gc/schedule.py). Its modules, in the order a run uses them: ``options`` (the command line),
``layout`` (the namespace and its keys), ``storage`` (S3 and Parquet I/O), ``inputs`` (what the prepare step
wrote, and what the active commits reference), ``listing``, ``mark`` with ``subtract`` (its Spark tasks),
``sweep``, ``report`` (the manifests, the summary and the exit status) and ``session`` (the run on a Spark
session).

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
  a sweep may delete from now on: P is the hourly data partition (countdown, as chalicelib/graveler/writes/addressing.py
  names them) of the cutoff plus an hour, and no object of a partition sorting before P is ever deleted. The API
  caches what it read of these records for a few seconds (chalicelib/graveler/reads/collected.py), so the sweep first
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

from .layout import (
    EXIT_PARTIAL_FAILURE,
    MODE_MARK,
    MODE_MARK_AND_SWEEP,
    MODE_SWEEP,
    MODES,
    RECORD_LEAD_SECONDS,
    GCJobError,
    Namespace,
    partition_of,
)
from .options import JobOptions, parse_options
from .report import exit_status
from .session import main, run
from .sweep import record_sweep

__all__ = [
    "EXIT_PARTIAL_FAILURE",
    "MODES",
    "MODE_MARK",
    "MODE_MARK_AND_SWEEP",
    "MODE_SWEEP",
    "RECORD_LEAD_SECONDS",
    "GCJobError",
    "JobOptions",
    "Namespace",
    "exit_status",
    "main",
    "parse_options",
    "partition_of",
    "record_sweep",
    "run",
]
