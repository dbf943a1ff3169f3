"""Delta and Iceberg tables on branches, through s3a:// (docs/spark.md, "Tables on branches").

Each table is created on a branch, changed, merged into main and read at the old commit; a change made on two
branches to the same table version stops the second merge with a 409 naming the table's metadata file (Delta's
log entry, Iceberg's vN.metadata.json).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import lakefs
import pytest
from lakefs.client import Client
from lakefs.exceptions import ConflictException

from lakelet.stack.local import LOCAL_BUCKET
from tests.e2e.conftest import LocalProcess
from tests.e2e.s3support import s3_endpoint

from .support import TABLE_SETTINGS, s3a_settings, start_spark


@pytest.fixture(scope="module")
def spark(spark_stack: LocalProcess) -> Iterator[Any]:
    settings = s3a_settings(s3_endpoint(spark_stack), spark_stack.access_key_id, spark_stack.secret_access_key)
    session = start_spark({**settings, **TABLE_SETTINGS})
    try:
        yield session
    finally:
        session.stop()


@pytest.fixture
def repo(lakefs_client: Client) -> lakefs.Repository:
    name = f"spark-tables-{uuid.uuid4().hex[:8]}"
    return lakefs.Repository(name, client=lakefs_client).create(storage_namespace=f"s3://{LOCAL_BUCKET}/{name}")


def summary(frame: Any) -> tuple[int, int]:
    row = frame.selectExpr("count(*) AS n", "sum(v) AS s").collect()[0]
    return int(row["n"]), int(row["s"] or 0)


def conflict_paths(caught: pytest.ExceptionInfo[ConflictException]) -> list[str]:
    return [c["path"] for c in caught.value.body["conflicts"]]


def test_delta_table_across_branches(spark: Any, repo: lakefs.Repository) -> None:
    main = repo.branch("main")
    dev = repo.branch("delta-dev").create(source_reference="main")
    table = f"s3a://{repo.id}/delta-dev/tables/people"
    spark.range(1000).selectExpr("id", "id * 2 AS v").write.format("delta").save(table)
    created = dev.commit(message="people: created").get_commit().id
    dev.merge_into(main)

    spark.sql(f"UPDATE delta.`{table}` SET v = v + 1 WHERE id < 100")
    dev.commit(message="people: changed")
    dev.merge_into(main)

    original = (1000, sum(range(0, 2000, 2)))
    changed = (1000, original[1] + 100)
    assert summary(spark.read.format("delta").load(f"s3a://{repo.id}/main/tables/people")) == changed
    assert summary(spark.read.format("delta").load(f"s3a://{repo.id}/{created}/tables/people")) == original
    # Delta's own time travel reads the same history on main (its log merged whole).
    old = spark.read.format("delta").option("versionAsOf", 0).load(f"s3a://{repo.id}/main/tables/people")
    assert summary(old) == original

    # The same table version made on two branches: the second merge names the table's log entry.
    for name, first in (("left", 5000), ("right", 6000)):
        branch = repo.branch(name).create(source_reference="main")
        rows = spark.range(first, first + 10).selectExpr("id", "CAST(1 AS BIGINT) AS v")
        rows.write.format("delta").mode("append").save(f"s3a://{repo.id}/{name}/tables/people")
        branch.commit(message=f"{name}: 10 rows")
    repo.branch("left").merge_into(main)
    with pytest.raises(ConflictException) as caught:
        repo.branch("right").merge_into(main)
    assert "tables/people/_delta_log/00000000000000000002.json" in conflict_paths(caught)
    merged = spark.read.format("delta").load(f"s3a://{repo.id}/main/tables/people")
    assert summary(merged) == (1010, changed[1] + 10)


def use_catalog(spark: Any, name: str, warehouse: str) -> None:
    """An Iceberg Hadoop catalog whose warehouse is a branch (or ref) path; Spark loads it on first use."""
    spark.conf.set(f"spark.sql.catalog.{name}", "org.apache.iceberg.spark.SparkCatalog")
    spark.conf.set(f"spark.sql.catalog.{name}.type", "hadoop")
    spark.conf.set(f"spark.sql.catalog.{name}.warehouse", warehouse)


def test_iceberg_table_across_branches(spark: Any, repo: lakefs.Repository) -> None:
    main = repo.branch("main")
    dev = repo.branch("ice-dev").create(source_reference="main")
    use_catalog(spark, "ice_dev", f"s3a://{repo.id}/ice-dev/warehouse")
    spark.sql("CREATE TABLE ice_dev.db.events (id BIGINT, v BIGINT) USING iceberg")
    spark.range(500).selectExpr("id", "id * 3 AS v").writeTo("ice_dev.db.events").append()
    created = dev.commit(message="events: created").get_commit().id
    dev.merge_into(main)

    spark.range(500, 800).selectExpr("id", "id * 3 AS v").writeTo("ice_dev.db.events").append()
    spark.sql("DELETE FROM ice_dev.db.events WHERE id < 100")
    dev.commit(message="events: changed")
    dev.merge_into(main)

    use_catalog(spark, "ice_main", f"s3a://{repo.id}/main/warehouse")
    use_catalog(spark, "ice_old", f"s3a://{repo.id}/{created}/warehouse")
    assert summary(spark.table("ice_main.db.events")) == (700, sum(3 * i for i in range(100, 800)))
    assert summary(spark.table("ice_old.db.events")) == (500, sum(3 * i for i in range(500)))

    for name, first in (("ice-left", 1000), ("ice-right", 2000)):
        branch = repo.branch(name).create(source_reference="main")
        catalog = name.replace("-", "_")
        use_catalog(spark, catalog, f"s3a://{repo.id}/{name}/warehouse")
        spark.range(first, first + 10).selectExpr("id", "id AS v").writeTo(f"{catalog}.db.events").append()
        branch.commit(message=f"{name}: 10 rows")
    repo.branch("ice-left").merge_into(main)
    with pytest.raises(ConflictException) as caught:
        repo.branch("ice-right").merge_into(main)
    # Both wrote the table's fifth metadata file (their version-hint.text says "5" alike: no conflict there).
    assert conflict_paths(caught) == ["warehouse/db/events/metadata/v5.metadata.json"]
