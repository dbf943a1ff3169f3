"""What the lakefs:// tier runs in each access mode (tests/spark/test_lakefs_fs*.py): lakeFS's own Hadoop FileSystem
against a stack under --aws-limits, with the settings of docs/spark.md ("lakefs://").

Counts and a checksum over every column (sum of xxhash64) match what was written; old versions are read by a
commit ID and by ``main~1``.
"""

from __future__ import annotations

import time
from typing import Any

import lakefs

from lakelet.stack.local import LOCAL_BUCKET
from tests.e2e.conftest import LocalProcess
from tests.e2e.s3support import moto_endpoint

from .support import TABLE_SETTINGS, lakefs_fs_settings, start_spark
from .test_s3a import FILES, PARTITIONS, ROWS, dataset, fingerprint


def start_lakefs_spark(stack: LocalProcess, jar: str, mode: str) -> Any:
    """A Spark session with lakefs:// in ``mode`` on ``stack``'s API, Delta's and Iceberg's extensions on."""
    settings = {**lakefs_fs_settings(stack.api_url, stack.access_key_id, stack.secret_access_key, mode)}
    if mode == "simple":
        # Simple mode reads and writes the physical objects with S3A (s3://bucket/key becomes s3a://bucket/key):
        # the storage bucket's endpoint and key pair, the stack's moto here (the account's S3 deployed).
        bucket = f"spark.hadoop.fs.s3a.bucket.{LOCAL_BUCKET}"
        settings |= {
            f"{bucket}.endpoint": moto_endpoint(stack),
            f"{bucket}.access.key": stack.aws_access_key_id,
            f"{bucket}.secret.key": stack.aws_secret_access_key,
            f"{bucket}.path.style.access": "true",
            f"{bucket}.connection.ssl.enabled": "false",
            f"{bucket}.endpoint.region": "us-east-1",
        }
    return start_spark({**settings, **TABLE_SETTINGS}, extra_jars=[jar])


def partitioned_dataset_at_old_refs(spark: Any, repo: lakefs.Repository) -> None:
    """200,000 rows in 20 files, partitioned, on a branch; committed and merged; overwritten on main and committed;
    read at main, at the first commit's ID and at ``main~1``."""
    name = repo.id
    main = repo.branch("main")
    ingest = repo.branch("ingest").create(source_reference="main")
    source = dataset(spark, ROWS, FILES)
    expected = fingerprint(source)  # computed in Spark, no I/O
    assert sum(n for n, _ in expected.values()) == ROWS and len(expected) == PARTITIONS

    source.write.partitionBy("part").parquet(f"lakefs://{name}/ingest/events/")
    read = spark.read.parquet(f"lakefs://{name}/ingest/events/")
    assert len(read.inputFiles()) == FILES
    assert fingerprint(read) == expected
    listed = [o.path for o in ingest.objects(prefix="events/")]
    assert sum(p.endswith(".parquet") for p in listed) == FILES
    assert not [p for p in listed if "_temporary" in p]
    first = ingest.commit(message="events, 200,000 rows").get_commit().id
    ingest.merge_into(main)

    replacement = dataset(spark, ROWS // 2, FILES // 2, seed=1)
    replaced = fingerprint(replacement)
    replacement.write.mode("overwrite").partitionBy("part").parquet(f"lakefs://{name}/main/events/")
    assert fingerprint(spark.read.parquet(f"lakefs://{name}/main/events/")) == replaced
    main.commit(message="events overwritten, 100,000 rows")
    assert fingerprint(spark.read.parquet(f"lakefs://{name}/main/events/")) == replaced
    for ref in (first, "main~1"):
        old = spark.read.parquet(f"lakefs://{name}/{ref}/events/")
        assert fingerprint(old) == expected, ref
        assert len(old.inputFiles()) == FILES, ref


def _summary(frame: Any) -> tuple[int, int]:
    row = frame.selectExpr("count(*) AS n", "sum(v) AS s").collect()[0]
    return int(row["n"]), int(row["s"] or 0)


def delta_table(spark: Any, repo: lakefs.Repository) -> None:
    """A Delta table on main: written, committed, appended to, rows deleted; read at Delta versions, at the
    lakeFS commit and at ``main~1``; DESCRIBE HISTORY lists the three operations."""
    name = repo.id
    main = repo.branch("main")
    table = f"lakefs://{name}/main/tables/people"
    spark.range(1000).selectExpr("id", "id * 2 AS v").write.format("delta").save(table)
    created = main.commit(message="people: created").get_commit().id
    spark.range(1000, 1500).selectExpr("id", "id * 2 AS v").write.format("delta").mode("append").save(table)
    spark.sql(f"DELETE FROM delta.`{table}` WHERE id < 100")
    main.commit(message="people: appended, deleted")

    first, appended = (1000, 999 * 1000), (1500, 1499 * 1500)
    now = (1400, 1499 * 1500 - 99 * 100)
    assert _summary(spark.read.format("delta").load(table)) == now
    assert _summary(spark.read.format("delta").option("versionAsOf", 0).load(table)) == first
    assert _summary(spark.read.format("delta").option("versionAsOf", 1).load(table)) == appended
    history = spark.sql(f"DESCRIBE HISTORY delta.`{table}`").orderBy("version").collect()
    assert [(int(h["version"]), h["operation"]) for h in history] == [(0, "WRITE"), (1, "WRITE"), (2, "DELETE")]
    for ref in (created, "main~1"):
        old = spark.read.format("delta").load(f"lakefs://{name}/{ref}/tables/people")
        assert _summary(old) == first, ref
    logs = [o.path for o in main.objects(prefix="tables/people/_delta_log/") if o.path.endswith(".json")]
    assert len(logs) == 3, logs


def large_dataset(spark: Any, repo: lakefs.Repository, mb: int, files: int) -> dict[str, float]:
    """At least ``mb`` MB of Parquet in ``files`` files, each well over Lambda's 6 MB payload: written through
    lakefs://, committed, read back whole (a sum of xxhash64 over every column). Returns rows, MB and seconds."""
    from pyspark.sql import functions as F

    doubles = 3  # random doubles do not compress: 8 bytes a value on disk; the id column adds a little more
    rows = mb * 1_000_000 // (8 * doubles) + 1
    frame = spark.range(0, rows, 1, files).select("id", *[F.rand(seed=c).alias(f"c{c}") for c in range(doubles)])
    expected = int(frame.agg(F.sum(F.xxhash64(*frame.columns))).collect()[0][0])
    url = f"lakefs://{repo.id}/main/big/"
    started = time.perf_counter()
    frame.write.parquet(url)
    wrote = time.perf_counter() - started
    repo.branch("main").commit(message=f"{mb} MB")
    sizes = [o.size_bytes for o in repo.branch("main").objects(prefix="big/") if o.path.endswith(".parquet")]
    assert len(sizes) == files
    assert sum(sizes) >= mb * 1_000_000, sizes
    assert min(sizes) > 6 * 1_000_000, sizes  # each file over the Lambda payload limit
    started = time.perf_counter()
    read = spark.read.parquet(url)
    got = read.agg(F.sum(F.xxhash64(*read.columns)).alias("h"), F.count(F.lit(1)).alias("n")).collect()[0]
    seconds_read = time.perf_counter() - started
    assert (int(got["h"]), int(got["n"])) == (expected, rows)
    return {"rows": rows, "mb": sum(sizes) / 1e6, "write_s": wrote, "read_s": seconds_read}
