"""Spark reads and writes a branch through the S3 gateway (s3a://), with the settings of docs/spark.md.

A partitioned Parquet dataset of 200,000 rows in 20 files is written on a branch, read back, committed and merged;
a partition is overwritten on main; the old version is read by ``main@``, a commit ID and a tag; a branch prefix
of many small files is read whole; a file larger than one part goes up as a multipart upload. Counts and a
checksum over every column (sum of xxhash64) match what was written.
"""

from __future__ import annotations

import hashlib
import time
import uuid
from collections.abc import Iterator
from typing import Any

import lakefs
import pytest
from lakefs.client import Client

from chalicelib.adapters.dynamodb import DynamoRefStore, DynamoStagingStore, TableNames
from chalicelib.graveler.records import BranchID, Entry, Key, RepositoryID, StagedEntry
from lakelet.stack.local import LOCAL_BUCKET, LOCAL_REGION, LOCAL_TABLE_PREFIX
from tests.e2e.conftest import LocalProcess
from tests.e2e.s3support import moto_endpoint, moto_s3, s3_client, s3_endpoint, stack_aws_keys

from .support import PART_BYTES, s3a_settings, start_spark

ROWS = 200_000
FILES = 20
PARTITIONS = 4  # part=0..3, five files each


@pytest.fixture(scope="module")
def spark(spark_stack: LocalProcess) -> Iterator[Any]:
    session = start_spark(
        s3a_settings(s3_endpoint(spark_stack), spark_stack.access_key_id, spark_stack.secret_access_key)
    )
    try:
        yield session
    finally:
        session.stop()


@pytest.fixture(scope="module")
def repo(lakefs_client: Client) -> lakefs.Repository:
    name = f"spark-s3a-{uuid.uuid4().hex[:8]}"
    return lakefs.Repository(name, client=lakefs_client).create(storage_namespace=f"s3://{LOCAL_BUCKET}/{name}")


def dataset(spark: Any, rows: int, files: int, seed: int = 0) -> Any:
    """``rows`` rows in ``files`` slices; each slice holds ids of one ``part`` only, so a partitioned write makes
    exactly one file per slice."""
    from pyspark.sql import functions as F

    per_part = rows // PARTITIONS
    return (
        spark.range(0, rows, 1, files)
        .withColumn("part", (F.col("id") / per_part).cast("int"))
        .withColumn("value", F.col("id") * 7 + seed)
        .withColumn("name", F.concat(F.lit(f"row-{seed}-"), F.col("id").cast("string")))
    )


def fingerprint(frame: Any) -> dict[int, tuple[int, int]]:
    """part -> (row count, sum of xxhash64 over every other column), in one scan."""
    from pyspark.sql import functions as F

    columns = sorted(c for c in frame.columns if c != "part")
    rows = frame.groupBy("part").agg(F.count(F.lit(1)).alias("n"), F.sum(F.xxhash64(*columns)).alias("h")).collect()
    return {int(r["part"]): (int(r["n"]), int(r["h"])) for r in rows}


def test_dataset_on_a_branch_then_old_versions_by_ref(spark: Any, repo: lakefs.Repository) -> None:
    name = repo.id
    ingest = repo.branch("ingest").create(source_reference="main")
    source = dataset(spark, ROWS, FILES)
    expected = fingerprint(source)  # computed in Spark, no I/O
    assert sum(n for n, _ in expected.values()) == ROWS and len(expected) == PARTITIONS

    source.write.partitionBy("part").parquet(f"s3a://{name}/ingest/events/")
    read = spark.read.parquet(f"s3a://{name}/ingest/events/")
    assert len(read.inputFiles()) == FILES
    assert fingerprint(read) == expected
    # The same objects through the lakeFS API: what Spark wrote, nothing left under _temporary.
    listed = [o.path for o in ingest.objects(prefix="events/")]
    assert sum(p.endswith(".parquet") for p in listed) == FILES
    assert not [p for p in listed if "_temporary" in p]

    first = ingest.commit(message="events, 200,000 rows").get_commit().id
    repo.tag("events-v1").create(first)
    ingest.merge_into(repo.branch("main"))

    # Overwrite one partition on main (staged), then read main as it is and as it was.
    replacement = dataset(spark, 1_000, 1, seed=1).where("part = 0").drop("part")
    replacement.write.mode("overwrite").parquet(f"s3a://{name}/main/events/part=2/")
    now = fingerprint(spark.read.parquet(f"s3a://{name}/main/events/"))
    assert now == {**expected, 2: fingerprint(replacement.withColumn("part", replacement.id * 0 + 2))[2]}
    assert now[2][0] == 250
    for ref in ("main@", first, "events-v1"):
        assert fingerprint(spark.read.parquet(f"s3a://{name}/{ref}/events/")) == expected, ref


def _seed_small_files(local: LocalProcess, repo: str, branch: str, count: int) -> int:
    """Stages ``count`` one-line CSV files straight into the stack (each its own physical object in moto), as
    tests/e2e/s3support.py's seed_keys does with one: the subject here is Spark reading them, not writing them.
    Returns the sum of their values."""
    moto = moto_s3(local)
    now = int(time.time())
    staged: list[StagedEntry] = []
    total = 0
    for i in range(count):
        body = f"{i},{i * 3}\n".encode()
        total += i * 3
        address = f"{repo}/data/seed/{uuid.uuid4().hex}"
        moto.put_object(Bucket=LOCAL_BUCKET, Key=address, Body=body)
        entry = Entry(f"s3://{LOCAL_BUCKET}/{address}", len(body), hashlib.md5(body).hexdigest(), now)
        staged.append(StagedEntry(Key(f"small/f-{i:05d}.csv"), entry))
    names = TableNames.from_prefix(LOCAL_TABLE_PREFIX)
    endpoint = moto_endpoint(local)
    with stack_aws_keys(local):
        refs = DynamoRefStore(names, LOCAL_REGION, endpoint)
        token = refs.get_branch(RepositoryID(repo), BranchID(branch)).staging_token
        DynamoStagingStore(names, LOCAL_REGION, endpoint).set_many(token, iter(staged))
    return total


def test_a_branch_prefix_of_many_small_files(spark: Any, spark_stack: LocalProcess, repo: lakefs.Repository) -> None:
    from pyspark.sql import functions as F

    repo.branch("small").create(source_reference="main")
    count = 120
    total = _seed_small_files(spark_stack, repo.id, "small", count)
    frame = spark.read.csv(f"s3a://{repo.id}/small/small/", schema="i LONG, v LONG")
    row = frame.agg(F.count(F.lit(1)).alias("n"), F.sum("v").alias("s"), F.countDistinct("i").alias("d")).collect()[0]
    assert (row["n"], row["s"], row["d"]) == (count, total, count)
    assert len(frame.inputFiles()) == count


def test_a_file_larger_than_one_part_is_a_multipart_upload(
    spark: Any, spark_stack: LocalProcess, repo: lakefs.Repository
) -> None:
    """Through Hadoop's FileSystem API (what every Spark writer uses): 2.5 parts of bytes that do not compress."""
    import os

    data = os.urandom(PART_BYTES * 2 + PART_BYTES // 2)
    jvm = spark.sparkContext._jvm
    path = jvm.org.apache.hadoop.fs.Path(f"s3a://{repo.id}/main/blobs/big.bin")
    fs = path.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration())
    out = fs.create(path, True)
    out.write(bytearray(data))
    out.close()
    assert fs.getFileStatus(path).getLen() == len(data)

    head = s3_client(spark_stack).head_object(Bucket=repo.id, Key="main/blobs/big.bin")
    assert head["ETag"].strip('"').endswith("-3")  # three parts: S3's multipart ETag
    # Read back through S3A too (ranged GETs): the bytes as written.
    read = spark.read.format("binaryFile").load(f"s3a://{repo.id}/main/blobs/big.bin").collect()[0]["content"]
    assert hashlib.sha256(bytes(read)).hexdigest() == hashlib.sha256(data).hexdigest()
