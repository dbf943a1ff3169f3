"""Where garbage collection keeps its files: everything under ``<namespace>/_lakefs/retention/gc/``.

This layout is the contract with the GC job (emr/lakelet_gc/layout.py), which cannot import chalicelib and spells
the same paths itself (tests/gc checks that both agree). Per-run files are Hive-style partitions (``run_id=<id>``),
so each kind of file reads as one table partitioned by run in Spark, Athena or DuckDB:

- ``rules.json``: the repository's rules (lakeFS GarbageCollectionRules JSON).
- ``commits/run_id=<id>/commits.csv``: the active commits (prepare), columns commit_id, meta_range_id,
  creation_date, with a header line.
- ``staged/run_id=<id>/part-NNNNN.parquet``: every physical address staged on any branch (prepare), column
  ``address``.
- ``runs/run_id=<id>/prepare.json``: the prepare manifest (what the job reads first).
- ``addresses/run_id=<id>/part-NNNNN.parquet``: what the mark found collectable (job), columns address, size,
  last_modified; ``runs/run_id=<id>/mark.json`` lists the parts of the last complete mark.
- ``deleted/run_id=<id>/part-NNNNN.parquet``: what the sweep deleted (job), same columns.
- ``summary/run_id=<id>/summary.json``: counts and bytes of the run (job).
"""

from __future__ import annotations

import re

from chalicelib.graveler.errors import Invalid
from chalicelib.graveler.writes.addressing import metadata_address

GC_DIRECTORY = "_lakefs/retention/gc"
RULES_FILE = "rules.json"
FORMAT_VERSION = 1
# Run ids become path segments and job arguments: keep them to a safe alphabet.
RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")


def validate_run_id(run_id: str) -> str:
    if not RUN_ID.fullmatch(run_id):
        raise Invalid(f"invalid GC run id {run_id!r}")
    return run_id


def gc_root(namespace: str) -> str:
    return metadata_address(namespace, GC_DIRECTORY.removeprefix("_lakefs/"))


def rules_address(namespace: str) -> str:
    return f"{gc_root(namespace)}/{RULES_FILE}"


def commits_address(namespace: str, run_id: str) -> str:
    return f"{gc_root(namespace)}/commits/run_id={validate_run_id(run_id)}/commits.csv"


def staged_location(namespace: str, run_id: str) -> str:
    return f"{gc_root(namespace)}/staged/run_id={validate_run_id(run_id)}/"


def part_name(index: int) -> str:
    return f"part-{index:05d}.parquet"


def prepare_manifest_address(namespace: str, run_id: str) -> str:
    return f"{gc_root(namespace)}/runs/run_id={validate_run_id(run_id)}/prepare.json"


def mark_manifest_address(namespace: str, run_id: str) -> str:
    return f"{gc_root(namespace)}/runs/run_id={validate_run_id(run_id)}/mark.json"


def addresses_location(namespace: str, run_id: str) -> str:
    """Where the mark writes the collectable addresses (lakeFS's gc_addresses_location)."""
    return f"{gc_root(namespace)}/addresses/run_id={validate_run_id(run_id)}/"


def deleted_location(namespace: str, run_id: str) -> str:
    return f"{gc_root(namespace)}/deleted/run_id={validate_run_id(run_id)}/"


def summary_address(namespace: str, run_id: str) -> str:
    return f"{gc_root(namespace)}/summary/run_id={validate_run_id(run_id)}/summary.json"
