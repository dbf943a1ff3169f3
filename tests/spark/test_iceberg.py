"""Spark, pyiceberg and DuckDB on one table through Lakelet's Iceberg REST catalog (docs/iceberg.md).

Spark creates a table on a branch and writes to it; pyiceberg appends to the same table; the branch is merged into
main with the lakeFS API; DuckDB, attached to the catalog, reads main and the commit before the merge (by its ID);
Spark reads the table at a tag. Each engine is configured as docs/iceberg.md tells a user to, with nothing but the
API's endpoint and the lakeFS key pair: the catalog sends each its table's storage settings.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from typing import Any

import lakefs
import pyarrow as pa
import pytest
import requests
from lakefs.client import Client
from pyiceberg.catalog.rest import RestCatalog

from lakelet.stack.local import LOCAL_BUCKET
from tests.e2e.conftest import LocalProcess
from tests.e2e.s3support import s3_endpoint

from . import duckdb_support
from .support import iceberg_rest_settings, start_spark

CATALOG = "lakelet"


@pytest.fixture(scope="module")
def spark(spark_stack: LocalProcess) -> Iterator[Any]:
    session = start_spark(
        iceberg_rest_settings(
            CATALOG,
            spark_stack.endpoint,
            s3_endpoint(spark_stack),
            spark_stack.access_key_id,
            spark_stack.secret_access_key,
        )
    )
    try:
        yield session
    finally:
        session.stop()


@pytest.fixture
def repo(lakefs_client: Client) -> lakefs.Repository:
    name = f"ice-engines-{uuid.uuid4().hex[:8]}"
    return lakefs.Repository(name, client=lakefs_client).create(storage_namespace=f"s3://{LOCAL_BUCKET}/{name}")


def rest_catalog(stack: LocalProcess) -> RestCatalog:
    """pyiceberg as docs/iceberg.md configures it: the catalog, and the S3 gateway for data files."""
    uri = f"{stack.endpoint}/iceberg/api"
    return RestCatalog(
        "lakelet",
        uri=uri,
        credential=f"{stack.access_key_id}:{stack.secret_access_key}",
        **{
            "oauth2-server-uri": f"{uri}/v1/oauth/tokens",
            "s3.endpoint": s3_endpoint(stack),
            "s3.access-key-id": stack.access_key_id,
            "s3.secret-access-key": stack.secret_access_key,
            "s3.region": "us-east-1",
        },
    )


def summary_sql(table: str) -> str:
    return f"SELECT count(*), coalesce(sum(v), 0) FROM {table}"


def spark_summary(spark: Any, table: str) -> tuple[int, int]:
    row = spark.sql(summary_sql(table)).collect()[0]
    return int(row[0]), int(row[1])


def duck_summary(connection: Any, table: str) -> tuple[int, int]:
    count, total = connection.execute(summary_sql(table)).fetchone()
    return int(count), int(total)


def test_one_table_across_spark_pyiceberg_and_duckdb(
    spark: Any, repo: lakefs.Repository, spark_stack: LocalProcess
) -> None:
    def in_spark(ref: str) -> str:
        return f"{CATALOG}.`{repo.id}`.`{ref}`.db.events"

    def in_duckdb(ref: str) -> str:
        return f'lake."{repo.id}.{ref}.db".events'

    main = repo.branch("main")
    dev = repo.branch("dev").create(source_reference="main")
    spark.sql(f"CREATE NAMESPACE {CATALOG}.`{repo.id}`.dev.db")
    spark.sql(f"CREATE TABLE {in_spark('dev')} (id BIGINT, v BIGINT) USING iceberg")
    spark.range(500).selectExpr("id", "id * 3 AS v").writeTo(in_spark("dev")).append()
    by_spark = (500, sum(3 * i for i in range(500)))
    spark_commit = dev.commit(message="events: created by Spark").get_commit().id
    repo.tag("v1").create(spark_commit)

    table = rest_catalog(spark_stack).load_table((repo.id, "dev", "db", "events"))
    table.append(pa.table({"id": pa.array(range(500, 600), pa.int64()), "v": pa.array([1] * 100, pa.int64())}))
    dev.commit(message="events: 100 rows appended by pyiceberg")
    dev.merge_into(main)
    merged = (600, by_spark[1] + 100)

    # The table's files are in the store: its config carries vended credentials and the store's endpoint, never
    # the gateway (which the settings above name and the table's config overrides).
    loaded = requests.get(
        f"{spark_stack.endpoint}/iceberg/api/v1/namespaces/{repo.id}%1Fmain%1Fdb/tables/events",
        auth=(spark_stack.access_key_id, spark_stack.secret_access_key),
        timeout=30,
    )
    config = loaded.json()["config"]
    assert config["s3.session-token"] and config["s3.endpoint"] != s3_endpoint(spark_stack)

    duck = duckdb_support.connect()
    duckdb_support.attach_catalog(
        duck,
        "lake",
        spark_stack.endpoint,
        s3_endpoint(spark_stack),
        spark_stack.access_key_id,
        spark_stack.secret_access_key,
    )
    assert duck_summary(duck, in_duckdb("main")) == merged
    assert duck_summary(duck, in_duckdb(spark_commit)) == by_spark
    # Browsing walks repositories, branches and namespaces (the catalog lists no tables at the first two levels).
    listed = duck.execute("SELECT schema, name FROM (SHOW ALL TABLES) WHERE database = 'lake'").fetchall()
    assert (f"{repo.id}.main.db", "events") in listed and (f"{repo.id}.dev.db", "events") in listed

    assert spark_summary(spark, in_spark("v1")) == by_spark
    assert spark_summary(spark, in_spark("main")) == merged
    # The table's history came along with the merge: Spark's snapshot, then pyiceberg's on top of it.
    snapshots = spark.sql(f"SELECT snapshot_id, parent_id FROM {in_spark('main')}.snapshots ORDER BY committed_at")
    first, second = snapshots.collect()
    assert first["parent_id"] is None and second["parent_id"] == first["snapshot_id"]

    # DuckDB writes too (a multi-table transaction of one table); Spark sees the row on the branch.
    duck.execute(f"INSERT INTO {in_duckdb('dev')} VALUES (1000, 7)")
    assert spark_summary(spark, in_spark("dev")) == (merged[0] + 1, merged[1] + 7)
    assert duck_summary(duck, in_duckdb("main")) == merged


PYICEBERG_APPENDS = 40


def test_spark_and_pyiceberg_commit_at_once_and_lose_nothing(
    spark: Any, repo: lakefs.Repository, spark_stack: LocalProcess
) -> None:
    """Two engines append to one table on one branch at the same time: each commit moves the table's pointer with a
    conditional write, the loser of a race gets the spec's 409 and its client retries on the new state, so every
    append ends up in the table, one snapshot each (a probe run saw 5 such 409s in 13 commits)."""
    table_name = f"{CATALOG}.`{repo.id}`.main.db.race"
    spark.sql(f"CREATE NAMESPACE {CATALOG}.`{repo.id}`.main.db")
    # pyiceberg appends in a tight loop, straight to the store: Spark's default 4 retries can all lose to it.
    spark.sql(
        f"CREATE TABLE {table_name} (id BIGINT, v BIGINT) USING iceberg TBLPROPERTIES ('commit.retry.num-retries'='20')"
    )
    table = rest_catalog(spark_stack).load_table((repo.id, "main", "db", "race"))
    stop = threading.Event()
    appended: list[int] = []
    failures: list[BaseException] = []

    def append_with_pyiceberg() -> None:
        # At most PYICEBERG_APPENDS, a short pause apart: enough to race every Spark commit, never so many that a
        # fast store starves Spark's retries for good (each append also makes the next metadata larger).
        try:
            while not stop.is_set() and len(appended) < PYICEBERG_APPENDS:
                row = 10_000 + len(appended)
                table.append(pa.table({"id": pa.array([row], pa.int64()), "v": pa.array([1], pa.int64())}))
                appended.append(row)
                stop.wait(0.05)
        except BaseException as e:  # surfaced by the assertion below
            failures.append(e)

    worker = threading.Thread(target=append_with_pyiceberg)
    worker.start()
    try:
        for first in (0, 10):
            spark.range(first, first + 10).selectExpr("id", "1 AS v").writeTo(table_name).append()
    finally:
        stop.set()
        worker.join(timeout=120)
    assert not failures and appended
    expected = 20 + len(appended)
    assert spark_summary(spark, table_name) == (expected, expected)
    assert spark.sql(f"SELECT count(*) FROM {table_name}.snapshots").collect()[0][0] == 2 + len(appended)
