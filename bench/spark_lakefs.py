"""Spark writing and reading the same dataset through lakeFS's Hadoop FileSystem (lakefs://, presigned) and through
the S3 gateway (s3a://), side by side in one run, against a stack under --aws-limits (the deployed limits).

Usage: .venv/bin/python bench/spark_lakefs.py [--mib N] [--files F] [--runs R] [--jar PATH] [--no-aws-limits]
(default 64 MiB in 32 files of 2 MiB: S3A through a deployed gateway cannot write a file over about 4.5 MB).

Needs lakeFS's hadoop-lakefs-assembly jar, named by --jar or LAKELET_LAKEFS_FS_JAR (docs/spark.md, "lakefs://");
without it the script prints why it is skipped and exits 0. One ``lakelet up`` (a subprocess, as the tests start
it) and one Spark session (local[2], the jars of ``make spark-jars`` and the lakeFS jar). Each run writes the same
frame (random doubles: Parquet does not compress them) once per side on main, then reads each side back whole (a sum
of xxhash64 over every column, which must match the frame's); the sides alternate and the best run of each is kept.
Ratios are lakefs:// / s3a://. Then one file of 8 MiB (over Lambda's 6 MB payload) is written both ways: under
--aws-limits S3A's upload is refused, lakefs:// writes it.
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

from lakelet.stack.local import LOCAL_BUCKET  # noqa: E402
from tests.e2e.conftest import launch_local  # noqa: E402
from tests.e2e.s3support import s3_endpoint  # noqa: E402
from tests.spark.support import LAKEFS_FS_JAR_ENV, lakefs_fs_settings, s3a_settings, start_spark  # noqa: E402

COLUMNS = 4  # id and three doubles: 8 bytes a value, incompressible
PROBE_BYTES = 8 * 1024 * 1024


def _write_one_file(spark: Any, url: str, size: int) -> str:
    """Writes ``size`` random bytes to ``url`` with Hadoop's FileSystem API: "ok", or the first line of the error."""
    from py4j.protocol import Py4JJavaError

    jvm = spark.sparkContext._jvm
    path = jvm.org.apache.hadoop.fs.Path(url)
    try:
        fs = path.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration())
        out = fs.create(path, True)
        out.write(bytearray(os.urandom(size)))
        out.close()
        return "ok" if fs.getFileStatus(path).getLen() == size else "wrong length"
    except Py4JJavaError as error:  # only the Java exception's message matters here
        return str(error.java_exception.toString()).splitlines()[0][:300]


def measure(mib: int, files: int, runs: int, jar: str, aws_limits: bool = True) -> dict[str, Any]:
    import lakefs
    from lakefs.client import Client
    from pyspark.sql import functions as F

    with tempfile.TemporaryDirectory(prefix="spark-lakefs-") as tmp:
        local = launch_local(Path(tmp), *(() if aws_limits else ("--no-aws-limits",)))
        spark = None
        try:
            client = Client(host=local.endpoint, username=local.access_key_id, password=local.secret_access_key)
            repo = f"spark-lakefs-{uuid.uuid4().hex[:8]}"
            lakefs.Repository(repo, client=client).create(storage_namespace=f"s3://{LOCAL_BUCKET}/{repo}")
            settings = s3a_settings(s3_endpoint(local), local.access_key_id, local.secret_access_key)
            settings |= lakefs_fs_settings(local.api_url, local.access_key_id, local.secret_access_key, "presigned")
            spark = start_spark(settings, extra_jars=[jar])
            rows = mib * 1024 * 1024 // (8 * COLUMNS)
            frame = spark.range(0, rows, 1, files).select(
                "id", *[F.rand(seed=c).alias(f"c{c}") for c in range(COLUMNS - 1)]
            )
            expected = int(frame.agg(F.sum(F.xxhash64(*frame.columns))).collect()[0][0])
            sides = {"s3a": f"s3a://{repo}/main/bench-s3a", "lakefs": f"lakefs://{repo}/main/bench-lakefs"}
            write: dict[str, list[float]] = {side: [] for side in sides}
            read: dict[str, list[float]] = {side: [] for side in sides}
            for run in range(runs):
                for side, base in sides.items():
                    started = time.perf_counter()
                    frame.write.parquet(f"{base}/{run}/")
                    write[side].append(time.perf_counter() - started)
                for side, base in sides.items():
                    started = time.perf_counter()
                    back = spark.read.parquet(f"{base}/{run}/")
                    got = int(back.agg(F.sum(F.xxhash64(*back.columns))).collect()[0][0])
                    read[side].append(time.perf_counter() - started)
                    if got != expected:
                        raise AssertionError(f"{side} read back other data than was written")
            written = sum(
                o.size_bytes
                for o in lakefs.Repository(repo, client=client).branch("main").objects(prefix="bench-lakefs/0/")
                if o.path.endswith(".parquet")
            )
            probe = {
                side: _write_one_file(spark, f"{base}/probe/8mib.bin", PROBE_BYTES) for side, base in sides.items()
            }
            best = {
                f"{what}_{side}_s": min(values[side])
                for what, values in (("write", write), ("read", read))
                for side in sides
            }
            return {
                "aws_limits": aws_limits,
                "mib": mib,
                "files": files,
                "rows": rows,
                "bytes": written,
                "runs": runs,
                "write_seconds": write,
                "read_seconds": read,
                **best,
                "write_ratio": best["write_lakefs_s"] / best["write_s3a_s"],
                "read_ratio": best["read_lakefs_s"] / best["read_s3a_s"],
                "write_lakefs_mib_per_s": written / 2**20 / best["write_lakefs_s"],
                "read_lakefs_mib_per_s": written / 2**20 / best["read_lakefs_s"],
                "write_s3a_mib_per_s": written / 2**20 / best["write_s3a_s"],
                "read_s3a_mib_per_s": written / 2**20 / best["read_s3a_s"],
                "probe_8mib_file": probe,
            }
        finally:
            if spark is not None:
                spark.stop()
            local.stop()


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="bench/spark_lakefs.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--mib", type=int, default=64, help="MiB of Parquet per side (64)")
    p.add_argument("--files", type=int, default=32, help="Parquet files (32: 2 MiB each)")
    p.add_argument("--runs", type=int, default=2, help="writes and reads per side, alternating; the best is kept (2)")
    p.add_argument("--jar", default=os.environ.get(LAKEFS_FS_JAR_ENV, ""), help=f"the jar (${LAKEFS_FS_JAR_ENV})")
    p.add_argument("--no-aws-limits", dest="aws_limits", action="store_false", help="a stack without AWS's limits")
    args = p.parse_args(argv)
    if not args.jar:
        reason = f"skipped: no lakeFS hadoop-lakefs-assembly jar (pass --jar or set {LAKEFS_FS_JAR_ENV})"
        print(reason, file=sys.stderr)
        print(json.dumps({"skipped": reason}))
        return 0
    if not Path(args.jar).is_file():
        print(f"{args.jar}: no such file", file=sys.stderr)
        return 2
    print(json.dumps(measure(args.mib, args.files, args.runs, args.jar, args.aws_limits)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
