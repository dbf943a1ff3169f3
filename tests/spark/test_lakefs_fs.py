"""lakeFS's own Hadoop FileSystem (lakefs://) in presigned mode against a stack under --aws-limits.

The way docs/spark.md recommends deployed: only small JSON requests reach the API (stat, list, ``staging/backing``),
bytes go straight to and from S3 by presigned URLs, so files far over Lambda's 6 MB payload are written and read.
Runs when LAKELET_LAKEFS_FS_JAR names lakeFS's hadoop-lakefs-assembly jar (built from lakeFS's source, see
docs/spark.md); skipped with that reason otherwise.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import lakefs
import pytest
from lakefs.client import Client

from lakelet.stack.local import LOCAL_BUCKET
from tests.e2e.conftest import LocalProcess

from .lakefs_journeys import delta_table, large_dataset, partitioned_dataset_at_old_refs, start_lakefs_spark
from .support import LAKEFS_FS_JAR_ENV, lakefs_fs_jar

JAR = lakefs_fs_jar()
pytestmark = pytest.mark.skipif(
    JAR is None, reason=f"{LAKEFS_FS_JAR_ENV} is not set (it names lakeFS's hadoop-lakefs-assembly jar: docs/spark.md)"
)
BIG_MB, BIG_FILES = 200, 8  # 25 MB a file


@pytest.fixture(scope="module")
def spark(limited_stack: LocalProcess) -> Iterator[Any]:
    assert JAR is not None
    session = start_lakefs_spark(limited_stack, JAR, "presigned")
    try:
        yield session
    finally:
        session.stop()


@pytest.fixture
def repo(limited_stack: LocalProcess) -> lakefs.Repository:
    client = Client(
        host=limited_stack.endpoint, username=limited_stack.access_key_id, password=limited_stack.secret_access_key
    )
    name = f"lakefs-fs-{uuid.uuid4().hex[:8]}"
    return lakefs.Repository(name, client=client).create(storage_namespace=f"s3://{LOCAL_BUCKET}/{name}")


def test_presigned_partitioned_dataset_overwrite_and_old_refs(spark: Any, repo: lakefs.Repository) -> None:
    partitioned_dataset_at_old_refs(spark, repo)


def test_presigned_delta_table(spark: Any, repo: lakefs.Repository) -> None:
    delta_table(spark, repo)


def test_presigned_200_mb_in_files_over_the_lambda_payload(
    spark: Any, repo: lakefs.Repository, record_property: Any
) -> None:
    measured = large_dataset(spark, repo, BIG_MB, BIG_FILES)
    for key, value in measured.items():
        record_property(key, value)
    print(
        f"\nlakefs:// presigned, {measured['rows']:,.0f} rows, {measured['mb']:.0f} MB in {BIG_FILES} files: "
        f"write {measured['write_s']:.1f} s, read {measured['read_s']:.1f} s"
    )
