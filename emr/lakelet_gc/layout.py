"""The job's vocabulary: its modes and limits, the namespace and the keys of every file it reads or writes.

This is the half of the contract with chalicelib/gc/layout.py that the job spells on its own side (it cannot
import chalicelib); tests/gc/test_job_units.py checks that the two agree.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

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
# The data partitions of chalicelib/graveler/writes/addressing.py: an hourly countdown, 11 hex digits.
PARTITION_HOURS_CEILING = 1 << 40
# Address times come from the writer's clock, last-modified times from S3's: the record allows an hour between.
CLOCK_MARGIN_SECONDS = 3600
# Longer than the API's cache of the records (LAKELET_GC_RECORD_TTL_SECONDS, 5 s by default).
RECORD_LEAD_SECONDS = 7.0

if TYPE_CHECKING:  # aliases only for type checkers: ``X | None`` cannot be evaluated on Python 3.9
    S3Conf = tuple[str | None, str | None]  # (endpoint_url, region): all a task needs to build its client
    ListSlice = tuple[str, str, str | None]  # (prefix, list keys after this one, up to and including this one)
    ListedRow = tuple[str, int, int, str | None]  # address, size, last_modified, nested namespace root or None


class GCJobError(Exception):
    """The job refuses to go on: its inputs are missing, inconsistent or unreadable."""


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
