"""Spark reading Parquet from a branch through the S3 gateway (s3a://), against reading the same files from moto.

Usage: .venv/bin/python bench/spark_read.py [--mib N] [--files F] [--runs R]   (default 64 MiB in 8 files; --mib 1024
for the 1 GiB of docs/performance.md)

One ``lakelet local`` (a subprocess, as the tests start it) and one Spark session (local[2], the jars of ``make
spark-jars``). Spark writes N MiB of Parquet (random doubles: it does not compress) straight into moto, under
the repository's storage namespace; the files are then staged on branch main as they are (no byte copied), so
both sides read the very same objects: ``s3a://<repo>/main/data/`` through the gateway and
``s3a://lakelet-local/<repo>/...`` from moto (S3A's per-bucket endpoint). Each side reads every column of every
row (a sum of xxhash64) R times, alternating; the best run of each is kept and the ratio is gateway / moto.
lakeFS's Hadoop FileSystem (lakefs://, presigned) is reported as not measured here: bench/spark_lakefs.py measures
it against s3a:// when given its jar (docs/spark.md).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

PROJECT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROJECT))

from chalicelib.adapters.dynamodb import DynamoRefStore, DynamoStagingStore, TableNames  # noqa: E402
from chalicelib.graveler.records import BranchID, Entry, Key, RepositoryID, StagedEntry  # noqa: E402
from lakelet.stack.local import LOCAL_BUCKET, LOCAL_REGION, LOCAL_TABLE_PREFIX  # noqa: E402
from tests.e2e.conftest import launch_local  # noqa: E402
from tests.e2e.s3support import moto_endpoint, moto_s3, s3_endpoint  # noqa: E402
from tests.spark.support import s3a_settings, start_spark  # noqa: E402

COLUMNS = 4  # doubles: 8 bytes a value, incompressible


def _stage_files(local: Any, repo: str, prefix: str) -> int:
    """Stages every object under ``<repo>/<prefix>`` in moto on main as ``data/<name>``; returns the bytes."""
    moto = moto_s3(local)
    entries, total = [], 0
    for page in moto.get_paginator("list_objects_v2").paginate(Bucket=LOCAL_BUCKET, Prefix=f"{repo}/{prefix}"):
        for obj in page.get("Contents", []):
            name = obj["Key"].rsplit("/", 1)[-1]
            if not name.endswith(".parquet"):
                continue
            total += obj["Size"]
            etag = obj["ETag"].strip('"')
            entry = Entry(f"s3://{LOCAL_BUCKET}/{obj['Key']}", obj["Size"], etag, int(time.time()))
            entries.append(StagedEntry(Key(f"data/{name}"), entry))
    names = TableNames.from_prefix(LOCAL_TABLE_PREFIX)
    endpoint = moto_endpoint(local)
    # PynamoDB signs with the environment's keys; the stack's moto takes only the stack's own pair (its state file's).
    os.environ["AWS_ACCESS_KEY_ID"], os.environ["AWS_SECRET_ACCESS_KEY"] = (
        local.aws_access_key_id,
        local.aws_secret_access_key,
    )
    token = DynamoRefStore(names, LOCAL_REGION, endpoint).get_branch(RepositoryID(repo), BranchID("main")).staging_token
    DynamoStagingStore(names, LOCAL_REGION, endpoint).set_many(token, iter(entries))
    return total


def measure(mib: int, files: int, runs: int = 2) -> dict[str, Any]:
    import lakefs
    from lakefs.client import Client
    from pyspark.sql import functions as F

    with tempfile.TemporaryDirectory(prefix="spark-read-") as tmp:
        # A data directory of its own, not --ephemeral: its state file names the key pair the stack's moto trusts.
        # The plain stack, not launch_local's --aws-limits: this row measures the local gateway's speed, and under
        # the limits its 4 MiB read cap refuses S3A's whole reads of files of 8 MiB (deployed, Spark reads through
        # lakefs:// presigned: docs/spark.md).
        local = launch_local(Path(tmp), "--no-aws-limits")
        spark = None
        try:
            client = Client(host=local.endpoint, username=local.access_key_id, password=local.secret_access_key)
            repo = f"spark-read-{uuid.uuid4().hex[:8]}"
            lakefs.Repository(repo, client=client).create(storage_namespace=f"s3://{LOCAL_BUCKET}/{repo}")
            settings = s3a_settings(s3_endpoint(local), local.access_key_id, local.secret_access_key)
            # The storage bucket is moto itself: S3A's per-bucket settings point it there.
            settings[f"spark.hadoop.fs.s3a.bucket.{LOCAL_BUCKET}.endpoint"] = moto_endpoint(local)
            settings[f"spark.hadoop.fs.s3a.bucket.{LOCAL_BUCKET}.access.key"] = local.aws_access_key_id
            settings[f"spark.hadoop.fs.s3a.bucket.{LOCAL_BUCKET}.secret.key"] = local.aws_secret_access_key
            spark = start_spark(settings)
            rows = mib * 1024 * 1024 // (8 * COLUMNS)
            frame = spark.range(0, rows, 1, files).select(
                "id", *[F.rand(seed=c).alias(f"c{c}") for c in range(COLUMNS - 1)]
            )
            frame.write.parquet(f"s3a://{LOCAL_BUCKET}/{repo}/bench-src/")
            size = _stage_files(local, repo, "bench-src/")
            sides = {"moto": f"s3a://{LOCAL_BUCKET}/{repo}/bench-src/", "gateway": f"s3a://{repo}/main/data/"}
            seconds: dict[str, list[float]] = {side: [] for side in sides}
            sums: dict[str, int] = {}
            for _ in range(runs):
                for side, url in sides.items():
                    started = time.perf_counter()
                    read = spark.read.parquet(url)
                    sums[side] = int(read.agg(F.sum(F.xxhash64(*read.columns))).collect()[0][0])
                    seconds[side].append(time.perf_counter() - started)
            if sums["moto"] != sums["gateway"]:
                raise AssertionError(f"the two sides read different data: {sums}")
            best = {side: min(values) for side, values in seconds.items()}
            return {
                "mib": mib,
                "files": files,
                "bytes": size,
                "rows": rows,
                "runs": runs,
                "seconds": seconds,
                "moto_seconds": best["moto"],
                "gateway_seconds": best["gateway"],
                "gateway_ratio": best["gateway"] / best["moto"],
                "gateway_mib_per_s": size / 2**20 / best["gateway"],
                "moto_mib_per_s": size / 2**20 / best["moto"],
                "lakefs_ratio": None,
                "lakefs_reason": "needs io.lakefs:hadoop-lakefs-assembly, not served by the Maven Central reachable "
                "here: bench/spark_lakefs.py measures lakefs:// against s3a:// when LAKELET_LAKEFS_FS_JAR names it",
            }
        finally:
            if spark is not None:
                spark.stop()
            local.stop()


def main(argv: list[str]) -> None:
    p = argparse.ArgumentParser(prog="bench/spark_read.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--mib", type=int, default=64, help="MiB of Parquet to read (64; 1024 for 1 GiB)")
    p.add_argument("--files", type=int, default=8, help="Parquet files (8)")
    p.add_argument("--runs", type=int, default=2, help="reads per side, alternating; the best is kept (2)")
    args = p.parse_args(argv)
    print(json.dumps(measure(args.mib, args.files, args.runs)))


if __name__ == "__main__":
    main(sys.argv[1:])
