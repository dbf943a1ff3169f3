"""The record a sweep leaves for readers (emr/gc_job.py) is the one chalicelib/graveler/reads/collected.py reads: same
key, same partitions, written before anything is deleted."""

from __future__ import annotations

import json
from types import ModuleType
from typing import Any

import pytest

from chalicelib.adapters.memory import MemoryBlockStore
from chalicelib.graveler.reads.collected import CollectedCheck, sweeps_prefix
from chalicelib.graveler.writes.addressing import new_data_address, partition_of


class PutOnly:
    def __init__(self) -> None:
        self.objects: dict[str, bytes] = {}

    def put_object(self, Bucket: str, Key: str, Body: bytes, **_: Any) -> None:
        self.objects[f"s3://{Bucket}/{Key}"] = Body


@pytest.mark.parametrize("seconds", [0, 3599, 3600, 1_700_000_000, 1_800_003_599.5])
def test_the_job_names_partitions_as_graveler_does(gc_job: ModuleType, seconds: float) -> None:
    assert gc_job.partition_of(seconds) == partition_of(seconds)


@pytest.mark.parametrize("namespace", ["s3://bucket/repos/one", "s3://bucket"])
def test_the_record_the_job_writes_is_the_one_reads_consult(gc_job: ModuleType, namespace: str) -> None:
    ns = gc_job.Namespace.parse(namespace)
    s3 = PutOnly()
    cutoff = 1_800_000_000
    recorded_at = gc_job.record_sweep(s3, ns, "run-1", cutoff)
    [(address, body)] = s3.objects.items()
    assert address == f"{sweeps_prefix(namespace)}partition={partition_of(cutoff + 3600)}/run_id=run-1.json"
    record = json.loads(body)
    assert record["cutoff"] == cutoff and record["recorded_at"] == recorded_at and record["run_id"] == "run-1"

    blocks = MemoryBlockStore()
    blocks.put(address, body)
    check = CollectedCheck(blocks)
    collectable = new_data_address(namespace, cutoff - 1)
    assert check.is_collected(namespace, collectable) is True  # its data is not in this store
    assert check.may_be_collected(namespace, new_data_address(namespace, cutoff + 7200)) is False


def test_the_record_lead_is_an_option(gc_job: ModuleType) -> None:
    options = gc_job.parse_options(["--storage-namespace", "s3://b/p", "--run-id", "r1"])
    assert options.record_lead_seconds == gc_job.RECORD_LEAD_SECONDS > 5  # the API caches records for 5 s
    options = gc_job.parse_options(["--storage-namespace", "s3://b/p", "--run-id", "r1", "--record-lead-seconds", "0"])
    assert options.record_lead_seconds == 0
    with pytest.raises(gc_job.GCJobError):
        gc_job.JobOptions(storage_namespace="s3://b/p", run_id="r1", record_lead_seconds=-1)
