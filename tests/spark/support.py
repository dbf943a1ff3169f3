"""Spark against the embedded local stack, configured as docs/spark.md tells a user to.

The jars come from ``make spark-jars`` (tests/spark/pom.xml) and go on ``spark.jars``: nothing is downloaded at test
time. ``s3a_settings`` is the block a user copies from the docs, the one thing that differs being the endpoint.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

JARS_DIR = Path(__file__).resolve().parent / "jars"
EXPECTED_JARS = (
    "hadoop-aws-3.3.4.jar",
    "aws-java-sdk-bundle-1.12.262.jar",
    "delta-spark_2.12-3.3.3.jar",
    "delta-storage-3.3.3.jar",
    "iceberg-spark-runtime-3.5_2.12-1.12.0.jar",
    "iceberg-aws-bundle-1.12.0.jar",
)
# S3A's smallest part size: a file of more than one part is written as a multipart upload.
PART_BYTES = 5 * 1024 * 1024


def jars() -> list[str]:
    """The pinned jars; a missing one fails (CI must run this tier), telling how to fetch them."""
    missing = [name for name in EXPECTED_JARS if not (JARS_DIR / name).is_file()]
    if missing:
        raise AssertionError(f"missing {missing} in {JARS_DIR}: run `make spark-jars` (Maven)")
    return [str(JARS_DIR / name) for name in EXPECTED_JARS]


def s3a_settings(endpoint: str, key: str, secret: str) -> dict[str, str]:
    """docs/spark.md, "s3a:// through the S3 gateway": the settings a user copies."""
    return {
        "spark.hadoop.fs.s3a.endpoint": endpoint,
        "spark.hadoop.fs.s3a.path.style.access": "true",
        "spark.hadoop.fs.s3a.access.key": key,
        "spark.hadoop.fs.s3a.secret.key": secret,
        "spark.hadoop.fs.s3a.connection.ssl.enabled": str(endpoint.startswith("https")).lower(),
        "spark.hadoop.fs.s3a.endpoint.region": "us-east-1",
        # Parent directory markers are kept: no DeleteObjects after every file written.
        "spark.hadoop.fs.s3a.directory.marker.retention": "keep",
        # A task's output moves to the destination when the task commits: one shallow copy per file.
        "spark.hadoop.mapreduce.fileoutputcommitter.algorithm.version": "2",
        "spark.hadoop.fs.s3a.multipart.size": str(PART_BYTES),
    }


# lakeFS's Hadoop FileSystem (lakefs://): users take io.lakefs:hadoop-lakefs-assembly from Maven Central; the Maven
# Central reachable from this project's machines does not serve it, so the lakefs:// tier runs when this variable
# names the jar (built from lakeFS's source, docs/spark.md "lakefs://") and is skipped otherwise.
LAKEFS_FS_JAR_ENV = "LAKELET_LAKEFS_FS_JAR"
READ_RANGE_BYTES = 8 * 1024 * 1024


def lakefs_fs_jar() -> str | None:
    """The hadoop-lakefs-assembly jar that LAKELET_LAKEFS_FS_JAR names, or None when it is unset."""
    named = os.environ.get(LAKEFS_FS_JAR_ENV, "").strip()
    if not named:
        return None
    if not Path(named).is_file():
        raise AssertionError(f"{LAKEFS_FS_JAR_ENV}={named}: no such file")
    return named


def lakefs_fs_settings(api_url: str, key: str, secret: str, mode: str = "presigned") -> dict[str, str]:
    """docs/spark.md, "lakefs://": lakeFS's FileSystem on the lakeFS API (``api_url`` ends in /api/v1). In
    ``presigned`` mode it moves the bytes itself by presigned URLs; in ``simple`` mode through S3A, whose settings
    for the storage bucket the caller adds."""
    return {
        "spark.hadoop.fs.lakefs.impl": "io.lakefs.LakeFSFileSystem",
        "spark.hadoop.fs.lakefs.endpoint": api_url,
        "spark.hadoop.fs.lakefs.access.key": key,
        "spark.hadoop.fs.lakefs.secret.key": secret,
        "spark.hadoop.fs.lakefs.access.mode": mode,
        # Delta's log on lakefs:// (one writer per table at a time, as on S3).
        "spark.delta.logStore.lakefs.impl": "io.delta.storage.S3SingleDriverLogStore",
        # A presigned read fetches ranges of the buffer size Hadoop opens a file with: Parquet opens with
        # io.file.buffer.size, 4 KiB by default, one GET per 4 KiB. 8 MiB ranges (straight to S3, no Lambda between).
        "spark.hadoop.io.file.buffer.size": str(READ_RANGE_BYTES),
    }


def iceberg_rest_settings(catalog: str, api_endpoint: str, s3_endpoint: str, key: str, secret: str) -> dict[str, str]:
    """docs/iceberg.md, "Spark": Lakelet's Iceberg REST catalog as the Spark catalog ``catalog``, signed in with the
    lakeFS key pair through its OAuth2 token endpoint. Tables' data and manifest files go through the S3 gateway on
    the branch, with S3FileIO (iceberg-aws-bundle) and the same key pair."""
    prefix = f"spark.sql.catalog.{catalog}"
    uri = f"{api_endpoint}/iceberg/api"
    return {
        prefix: "org.apache.iceberg.spark.SparkCatalog",
        f"{prefix}.type": "rest",
        f"{prefix}.uri": uri,
        f"{prefix}.rest.auth.type": "oauth2",
        f"{prefix}.credential": f"{key}:{secret}",
        f"{prefix}.oauth2-server-uri": f"{uri}/v1/oauth/tokens",
        # Tables change outside Spark's sight (other engines' commits, and merges, reverts and resets of the
        # branch): without its cache, Spark loads a table's metadata at each query instead of up to 30 s stale.
        f"{prefix}.cache-enabled": "false",
        f"{prefix}.io-impl": "org.apache.iceberg.aws.s3.S3FileIO",
        f"{prefix}.s3.endpoint": s3_endpoint,
        f"{prefix}.s3.path-style-access": "true",
        f"{prefix}.s3.access-key-id": key,
        f"{prefix}.s3.secret-access-key": secret,
        f"{prefix}.client.region": "us-east-1",
    }


TABLE_SETTINGS = {
    "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension,"
    "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions",
    "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
}


def start_spark(settings: dict[str, str], extra_jars: Sequence[str] = ()) -> Any:
    """A local[2] session with the pinned jars (and ``extra_jars``) and ``settings``; the caller stops it."""
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession

    # Jars and S3A settings take effect only in a new JVM: a session the GC tests left (they share one for the
    # process, and the stack's local GC may have started one in another thread, where getActiveSession does not see
    # it) would be reused by getOrCreate without them.
    stop_spark_jvm()
    builder = (
        SparkSession.builder.master("local[2]")
        .appName("lakelet-spark-tests")
        .config("spark.jars", ",".join([*jars(), *extra_jars]))
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.driver.memory", "1g")
    )
    for name, value in settings.items():
        builder = builder.config(name, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def stop_spark_jvm() -> None:
    """Stops every session and context this process holds, then the JVM behind them (its class path is fixed when it
    starts), so that the next ``getOrCreate`` launches a JVM of its own."""
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    for session in (SparkSession._instantiatedSession, SparkSession._activeSession):
        if session is not None:
            with contextlib.suppress(Exception):  # its JVM may be gone already
                session.stop()
    if SparkContext._active_spark_context is not None:
        with contextlib.suppress(Exception):
            SparkContext._active_spark_context.stop()
    SparkSession._instantiatedSession = None
    SparkSession._activeSession = None
    SparkContext._active_spark_context = None
    gateway = SparkContext._gateway
    if gateway is not None:
        with contextlib.suppress(Exception):
            gateway.shutdown()
        process = getattr(gateway, "proc", None)
        if process is not None and process.poll() is None:
            process.terminate()
            process.wait(timeout=30)
    SparkContext._gateway = None
    SparkContext._jvm = None
