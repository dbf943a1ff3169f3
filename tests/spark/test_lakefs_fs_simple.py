"""lakeFS's own Hadoop FileSystem (lakefs://) in simple mode against a stack under --aws-limits: metadata through
the lakeFS API, bytes with S3A straight to the storage bucket (the stack's moto). Runs when LAKELET_LAKEFS_FS_JAR
names lakeFS's hadoop-lakefs-assembly jar; skipped with that reason otherwise (tests/spark/test_lakefs_fs.py)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import lakefs
import pytest
from lakefs.client import Client

from lakelet.stack.local import LOCAL_BUCKET
from tests.e2e.conftest import LocalProcess

from .lakefs_journeys import delta_table, partitioned_dataset_at_old_refs, start_lakefs_spark
from .support import LAKEFS_FS_JAR_ENV, lakefs_fs_jar

JAR = lakefs_fs_jar()
pytestmark = pytest.mark.skipif(
    JAR is None, reason=f"{LAKEFS_FS_JAR_ENV} is not set (it names lakeFS's hadoop-lakefs-assembly jar: docs/spark.md)"
)


@pytest.fixture(scope="module")
def spark(limited_stack: LocalProcess) -> Iterator[Any]:
    assert JAR is not None
    session = start_lakefs_spark(limited_stack, JAR, "simple")
    try:
        yield session
    finally:
        session.stop()


@pytest.fixture
def repo(limited_stack: LocalProcess) -> lakefs.Repository:
    client = Client(
        host=limited_stack.endpoint, username=limited_stack.access_key_id, password=limited_stack.secret_access_key
    )
    name = f"lakefs-simple-{uuid.uuid4().hex[:8]}"
    return lakefs.Repository(name, client=client).create(storage_namespace=f"s3://{LOCAL_BUCKET}/{name}")


def test_simple_partitioned_dataset_overwrite_and_old_refs(spark: Any, repo: lakefs.Repository) -> None:
    partitioned_dataset_at_old_refs(spark, repo)


def test_simple_delta_table(spark: Any, repo: lakefs.Repository) -> None:
    delta_table(spark, repo)
