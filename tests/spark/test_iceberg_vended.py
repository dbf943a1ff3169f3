"""Spark and DuckDB through the catalog alone, under ``lakelet up --aws-limits``: a table whose files are in the
store (docs/iceberg.md, "Data files"), written by pyiceberg with a data file larger than a deployed gateway could
carry and merged from a branch that is then deleted, is read by Spark (iceberg-spark-runtime + iceberg-aws-bundle)
and DuckDB (its iceberg extension) with the credentials the catalog vends: neither is given an S3 endpoint, a key
or an AWS variable. Spark appends with them too."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from typing import Any

import lakefs
import pyarrow as pa
import pytest
from lakefs.client import Client
from pyiceberg.catalog.rest import RestCatalog

from lakelet.stack.local import LOCAL_BUCKET
from tests.e2e.conftest import LocalProcess, launch_local

from . import duckdb_support
from .support import start_spark

pytestmark = pytest.mark.e2e

CATALOG = "lakelet"
ROWS = 9_000  # of 1 KiB of random bytes: one data file of about 9 MB


@pytest.fixture(scope="module")
def limited_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalProcess]:
    local = launch_local(tmp_path_factory.mktemp("vended-stack"))  # --aws-limits
    try:
        yield local
    finally:
        local.stop()


@pytest.fixture(scope="module", autouse=True)
def no_aws_variables() -> Iterator[None]:
    saved = {name: os.environ.pop(name) for name in list(os.environ) if name.startswith("AWS_")}
    yield
    os.environ.update(saved)


def catalog_settings(stack: LocalProcess) -> dict[str, str]:
    """Spark's catalog with nothing but the catalog's endpoint and the lakeFS key pair (docs/iceberg.md)."""
    prefix = f"spark.sql.catalog.{CATALOG}"
    uri = f"{stack.endpoint}/iceberg/api"
    return {
        prefix: "org.apache.iceberg.spark.SparkCatalog",
        f"{prefix}.type": "rest",
        f"{prefix}.uri": uri,
        f"{prefix}.rest.auth.type": "oauth2",
        f"{prefix}.credential": f"{stack.access_key_id}:{stack.secret_access_key}",
        f"{prefix}.oauth2-server-uri": f"{uri}/v1/oauth/tokens",
        f"{prefix}.cache-enabled": "false",
        f"{prefix}.io-impl": "org.apache.iceberg.aws.s3.S3FileIO",
        f"{prefix}.header.X-Iceberg-Access-Delegation": "vended-credentials",
    }


def big_rows(first: int, count: int) -> pa.Table:
    return pa.table(
        {
            "id": pa.array(range(first, first + count), pa.int64()),
            "blob": pa.array([os.urandom(1024) for _ in range(count)], pa.binary()),
        }
    )


def test_spark_and_duckdb_read_a_merged_table_through_the_catalog_alone(limited_stack: LocalProcess) -> None:
    stack = limited_stack
    client = Client(host=stack.endpoint, username=stack.access_key_id, password=stack.secret_access_key)
    name = f"ice-vended-{uuid.uuid4().hex[:8]}"
    repo = lakefs.Repository(name, client=client).create(storage_namespace=f"s3://{LOCAL_BUCKET}/{name}")
    uri = f"{stack.endpoint}/iceberg/api"
    catalog = RestCatalog(
        "lakelet",
        uri=uri,
        credential=f"{stack.access_key_id}:{stack.secret_access_key}",
        **{"oauth2-server-uri": f"{uri}/v1/oauth/tokens"},
    )
    catalog.create_namespace((name, "main", "db"))
    catalog.create_table((name, "main", "db", "t"), big_rows(0, 1).schema).append(big_rows(0, ROWS))
    main = repo.branch("main")
    main.commit(message="t")
    dev = repo.branch("dev").create(source_reference="main")
    catalog.load_table((name, "dev", "db", "t")).append(big_rows(ROWS, 100))
    dev.commit(message="100 more on dev")
    dev.merge_into(main)
    dev.delete()
    expected = ROWS + 100
    sizes = [t.file.file_size_in_bytes for t in catalog.load_table((name, "main", "db", "t")).scan().plan_files()]
    assert max(sizes) > 8 * 1024 * 1024

    spark = start_spark(catalog_settings(stack))
    try:
        table = f"{CATALOG}.`{name}`.main.db.t"
        assert spark.sql(f"SELECT count(*) FROM {table}").collect()[0][0] == expected
        spark.sql(f"INSERT INTO {table} VALUES (-1, X'00')")
        assert spark.sql(f"SELECT count(*) FROM {table}").collect()[0][0] == expected + 1
    finally:
        spark.stop()
    expected += 1

    duck: Any = duckdb_support.connect()
    duck.execute(
        f"CREATE SECRET cat (TYPE iceberg, CLIENT_ID '{stack.access_key_id}', CLIENT_SECRET "
        f"'{stack.secret_access_key}', OAUTH2_SERVER_URI '{uri}/v1/oauth/tokens')"
    )
    duck.execute(f"ATTACH '' AS lake (TYPE iceberg, ENDPOINT '{uri}', SECRET cat)")  # vended credentials
    assert duck.execute(f'SELECT count(*) FROM lake."{name}.main.db".t').fetchone()[0] == expected
    assert catalog.load_table((name, "main", "db", "t")).scan().to_arrow().num_rows == expected
