"""GC safety with the real job (Spark local mode, moto's S3): what must never be deleted, whatever the rules;
idempotent re-runs; a dry run then a sweep of it; an interrupted sweep; inputs the job must refuse."""

from __future__ import annotations

import dataclasses
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from chalicelib import wiring
from chalicelib.adapters.s3 import split_address
from chalicelib.gc import prepare
from chalicelib.gc.rules import RulesStore
from chalicelib.graveler.reads.retention import BranchRetention, RetentionRules
from chalicelib.graveler.records import BranchID

from .support import (
    JobRun,
    addresses_under,
    installed,
    moto_services,
    new_bucket,
    s3_client,
    shared_spark,
)

DAY = 86_400
PREPARE_LEAD = 1.1


@dataclass
class Repo:
    services: wiring.Services
    name: str
    namespace: str
    objects: dict[str, str] = field(default_factory=dict)

    @property
    def engine(self):  # type: ignore[no-untyped-def]
        return self.services.engine

    def upload(self, branch: str, path: str, label: str) -> None:
        self.objects[label] = self.engine.objects.upload_object(
            self.name, branch, path, label.encode()
        ).physical_address

    def commit(self, branch: str, days_ago: float) -> str:
        date = int(time.time() - days_ago * DAY)
        return str(self.engine.commits.commit(self.name, branch, "tester", f"{days_ago} days ago", date=date).id)

    def rules(self, default: int, **branches: int) -> None:
        rules = RetentionRules(default, tuple(BranchRetention(BranchID(b), d) for b, d in branches.items()))
        RulesStore(self.engine.repositories.namespace_files(self.namespace)).set(rules)

    def prepare(self) -> str:
        # The prepare's clock runs 1.1 s ahead: S3 keeps whole seconds, and every object written so far must
        # read as strictly older than the prepare (the real clock would need a sleep per run instead).
        return prepare.prepare(self.engine, self.name, clock=lambda: time.time() + PREPARE_LEAD).run_id

    def labels(self) -> set[str]:
        by_address = {address: label for label, address in self.objects.items()}
        return {by_address.get(address, address) for address in addresses_under(self.namespace)}

    @property
    def job(self) -> JobRun:
        return JobRun(self.namespace)


@pytest.fixture
def repo() -> Iterator[Repo]:
    bucket = new_bucket()
    with installed(moto_services(bucket)) as services:
        name = f"safety-{uuid.uuid4().hex[:8]}"
        namespace = f"s3://{bucket}/{name}"
        services.engine.repositories.create_repository(name, namespace)
        yield Repo(services, name, namespace)


def garbage_history(repo: Repo, versions: int) -> None:
    """main: ``versions`` old commits each overwriting a.txt (A0..An-1, only the last one live), plus b.txt."""
    repo.upload("main", "b.txt", "B")
    for i in range(versions):
        repo.upload("main", "a.txt", f"A{i}")
        repo.commit("main", 30 - i)


def test_zero_days_keeps_every_head_everything_staged_and_all_that_is_not_the_namespaces_data(repo: Repo) -> None:
    repo.upload("main", "a.txt", "A1")
    repo.commit("main", 10)
    repo.upload("main", "a.txt", "A2")
    c2 = repo.commit("main", 5)
    repo.upload("main", "b.txt", "B1")
    repo.commit("main", 3)
    repo.engine.branches.create_branch(repo.name, "dev", c2)
    repo.upload("dev", "s.txt", "S1")  # staged on dev
    repo.upload("main", "b.txt", "B2")  # staged over a committed key
    repo.upload("main", "t.txt", "T1")
    repo.upload("main", "t.txt", "T2")  # T1 was only ever staged, and is overwritten
    repo.rules(0, main=0, dev=0)
    bucket, prefix = split_address(repo.namespace)
    planted = {
        "loose": f"{prefix}/data/loose-object",  # in data/ but in no partition: collected like the rest
        "nested-marker": f"{prefix}/data/nested/_lakefs/dummy",  # a repository nested inside data/
        "nested-data": f"{prefix}/data/nested/data/0000/abc",
        "outside": f"{prefix}-sibling/data/0000/abc",  # another namespace sharing the name's start
        "metadata": f"{prefix}/_lakefs/some-metadata",
    }
    for key in planted.values():
        s3_client().put_object(Bucket=bucket, Key=key, Body=b"planted")

    summary = repo.job.run(repo.prepare())

    # A1 (an old commit's only) and T1 (overwritten while staged) go; heads and staged data stay.
    assert {"A2", "B1", "S1", "B2", "T2"} <= repo.labels()
    assert not {repo.objects["A1"], repo.objects["T1"]} & addresses_under(repo.namespace)
    remaining = {item["Key"] for item in s3_client().list_objects_v2(Bucket=bucket)["Contents"]}
    assert planted["loose"] not in remaining
    assert {planted[k] for k in ("nested-marker", "nested-data", "outside", "metadata")} <= remaining
    assert repo.labels() == {
        "A2",
        "B1",
        "S1",
        "B2",
        "T2",
        f"s3://{bucket}/{planted['nested-marker']}",
        f"s3://{bucket}/{planted['nested-data']}",
    }
    assert summary["mark"]["nested_namespaces_skipped"] == [f"s3://{bucket}/{prefix}/data/nested/"]
    assert summary["sweep"]["objects_deleted"] == 3  # A1, T1 and the loose object


def test_young_objects_are_protected_by_the_minimum_age(repo: Repo) -> None:
    garbage_history(repo, 4)
    repo.rules(0)
    everything = repo.labels()

    guarded = repo.job.run(repo.prepare(), min_age_seconds=3_600)

    assert repo.labels() == everything
    assert guarded["mark"]["objects_marked"] == 0
    assert guarded["mark"]["objects_too_young"] == len(everything) == 5
    assert guarded["mark"]["cutoff"] <= guarded["mark"]["prepared_at"] - 3_600


def test_a_dry_run_deletes_nothing_and_an_interrupted_sweep_completes_when_run_again(
    repo: Repo, gc_job: ModuleType
) -> None:
    garbage_history(repo, 9)
    repo.rules(0)
    run_id = repo.prepare()
    # An unreferenced object written after the prepare is never collected, whatever the minimum age.
    bucket, key = split_address(repo.namespace + "/data/ffffffffff/late-arrival")
    time.sleep(PREPARE_LEAD + 0.1)  # past the prepare's (advanced) clock, into the next whole second
    s3_client().put_object(Bucket=bucket, Key=key, Body=b"late")
    late = f"s3://{bucket}/{key}"

    # Marked by Spark's anti join (not by a single task), so that there are several parts to interrupt the sweep
    # between.
    dry = repo.job.run(run_id, mode="mark", single_task_objects=2)

    assert dry["dry_run"] is True and "sweep" not in dry
    assert dry["mark"]["objects_marked"] == 8 and dry["mark"]["objects_too_young"] == 1
    assert dry["mark"]["bytes_marked"] == sum(len(f"A{i}") for i in range(8))
    assert repo.labels() == {f"A{i}" for i in range(9)} | {"B", late}
    parts = dry["mark"]["parts"]
    assert len(parts) >= 2 and sum(p["objects"] for p in parts) == 8

    # The sweep dies after its first task: part of the marked objects are gone, the rest are still there.
    ns = gc_job.Namespace.parse(repo.namespace)
    first = gc_job.sweep.sweep_part(s3_client(), ns, run_id, parts[0]["index"], ns.key_of(parts[0]["location"]))
    assert first["deleted"] == parts[0]["objects"]
    left = repo.labels() - {"A8", "B", late}
    assert 0 < len(left) < 8

    resumed = repo.job.run(run_id, mode="sweep")

    assert repo.labels() == {"A8", "B", late}
    assert resumed["sweep"]["objects_deleted"] == 8  # S3 counts the already deleted as deleted
    assert resumed["sweep"]["objects_failed"] == 0
    assert resumed["mark"]["objects_marked"] == 8  # the sweep used the earlier mark, not a new one


def test_the_job_refuses_inputs_it_cannot_trust(repo: Repo, gc_job: ModuleType) -> None:
    garbage_history(repo, 3)
    repo.rules(0)
    with pytest.raises(gc_job.GCJobError, match="prepare manifest not found"):
        repo.job.run("never-prepared")
    with pytest.raises(gc_job.GCJobError, match="mark not found"):
        repo.job.run("never-prepared", mode="sweep")

    run_id = repo.prepare()
    other = JobRun(repo.namespace + "-elsewhere")
    with pytest.raises(gc_job.GCJobError):
        other.run(run_id)  # a run prepared for another namespace

    # A range of an active commit is missing: the job fails before deleting anything.
    head = repo.engine.commits.get_commit(repo.name, "main")
    ranges = repo.engine.ports.committed.ranges(repo.namespace, head.meta_range_id)
    bucket, key = split_address(f"{repo.namespace}/_lakefs/{ranges[0].id}")
    s3_client().delete_object(Bucket=bucket, Key=key)
    before = repo.labels()
    with pytest.raises(Exception, match=r"NoSuchKey|does not exist|Not Found"):
        repo.job.run(run_id)
    assert repo.labels() == before


def marked_addresses(summary: dict[str, Any]) -> set[str]:
    """Every address the parts of a mark name."""
    found: set[str] = set()
    for part in summary["mark"]["parts"]:
        bucket, key = split_address(part["location"])
        data = s3_client().get_object(Bucket=bucket, Key=key)["Body"].read()
        found.update(pq.read_table(pa.BufferReader(data)).column("address").to_pylist())
    return found


def mark_counting_spark_work(gc_job: ModuleType, options: Any) -> tuple[dict[str, Any], tuple[int, int, int]]:
    """Runs a job and counts the Spark jobs, stages and tasks of its own work, after the listing."""
    spark = shared_spark()
    context = spark.sparkContext
    tracker = context.statusTracker()
    group = f"mark-{uuid.uuid4().hex}"
    before_subtracting: set[int] = set()

    def progress(phase: str, message: str) -> None:
        if phase == "mark":  # the listing is done: what follows is the job's own work
            before_subtracting.update(tracker.getJobIdsForGroup(group))

    context.setJobGroup(group, "a GC mark under test")
    try:
        summary: dict[str, Any] = gc_job.run(spark, options, progress)
    finally:
        context.setLocalProperty("spark.jobGroup.id", None)  # type: ignore[arg-type]
    jobs = sorted(set(tracker.getJobIdsForGroup(group)) - before_subtracting)
    stages = [tracker.getStageInfo(stage) for job_id in jobs for stage in tracker.getJobInfo(job_id).stageIds]
    return summary, (len(jobs), len(stages), sum(stage.numTasks for stage in stages if stage))


def test_a_small_mark_subtracts_and_writes_in_one_spark_task_and_agrees_with_the_anti_join(
    repo: Repo, gc_job: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    garbage_history(repo, 6)
    repo.rules(0)
    run_id = repo.prepare()
    small, work = mark_counting_spark_work(gc_job, repo.job.options(run_id, "mark"))

    # The referenced side (metaranges on the driver, ranges in the task) and the parts need no job of their own.
    assert work == (1, 1, 1)
    assert len(small["mark"]["parts"]) == 1 and small["mark"]["objects_marked"] == 5
    marked = marked_addresses(small)  # before the next mark of the run writes its parts under the same names
    assert len(marked) == 5

    # The same mark by Spark's anti join over the address partitions, the metaranges read by Spark tasks.
    monkeypatch.setattr(gc_job.mark, "DRIVER_METARANGES", 0)
    split = repo.job.run(run_id, mode="mark", single_task_objects=1)

    assert len(split["mark"]["parts"]) > 1
    assert split["mark"]["ranges_read"] == small["mark"]["ranges_read"] > 0
    assert marked_addresses(split) == marked
    assert repo.labels() == {f"A{i}" for i in range(6)} | {"B"}  # a mark deletes nothing


def test_a_mark_with_few_old_objects_but_many_referenced_ones_joins_in_spark(repo: Repo, gc_job: ModuleType) -> None:
    for i in range(6):
        repo.upload("main", f"live-{i}.txt", f"L{i}")
    repo.commit("main", 1)
    repo.upload("main", "staged.txt", "S")
    repo.rules(0)
    run_id = repo.prepare()
    # Nothing is old enough, and 7 addresses must stay (6 in a range, 1 staged): more than a single task may hold.
    options = dataclasses.replace(repo.job.options(run_id, "mark", min_age_seconds=DAY * 30), single_task_objects=3)

    summary, (_, stages, tasks) = mark_counting_spark_work(gc_job, options)

    assert summary["mark"]["objects_marked"] == 0 and summary["mark"]["objects_too_young"] == 7
    assert stages > 1 and tasks > 1  # the referenced side is read by tasks of its own and shuffled
