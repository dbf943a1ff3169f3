"""A table dropped with the branch it lived on: once no branch reaches its commits, `lakelet gc run` reclaims every
file of it (data, manifests, metadata, pointer), while a table that main keeps stays readable. Tables are ordinary
objects, so GC needs no special case."""

from __future__ import annotations

import time
from collections.abc import Callable

import lakefs
import pyarrow as pa
import pytest
from lakefs.client import Client
from lakefs_sdk.models import GarbageCollectionRule, GarbageCollectionRules
from pyiceberg.catalog.rest import RestCatalog

from lakelet import cli
from tests.e2e.conftest import LocalProcess
from tests.e2e.test_gc_local import data_addresses, gc_run
from tests.gc.support import shared_spark
from tests.spark.support import stop_spark_jvm

pytestmark = pytest.mark.e2e

DAY = 86_400


def rows(ids: list[int]) -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64())})


def addresses(branch: lakefs.Reference, prefix: str) -> set[str]:
    return {o.physical_address for o in branch.objects(prefix=prefix)}


def test_gc_reclaims_the_files_of_a_table_no_branch_reaches(
    stack: LocalProcess,
    lakefs_client: Client,
    repo: lakefs.Repository,
    make_catalog: Callable[..., RestCatalog],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", stack.aws_access_key_id)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", stack.aws_secret_access_key)
    # Spark's Python workers keep the environment of the JVM that started them: one an earlier test started (the e2e
    # tier's GC, against another stack with its own moto key pair) would sign with that stack's keys.
    stop_spark_jvm()
    shared_spark()
    catalog, r, now = make_catalog(), repo.id, time.time()
    main = repo.branch("main")
    catalog.create_namespace((r, "main", "db"))
    catalog.create_table((r, "main", "db", "kept"), rows([1]).schema).append(rows([1]))
    main.commit(message="kept table", date=int(now - 10 * DAY))

    scratch = repo.branch("scratch").create(source_reference="main")
    table = catalog.create_table((r, "scratch", "db", "dropped"), rows([1]).schema)
    table.append(rows([2]))
    catalog.load_table((r, "scratch", "db", "dropped")).append(rows([3]))
    # The table's path in the repository: its files are linked there from the store (docs/iceberg.md).
    dropped = addresses(scratch, "iceberg/db/dropped-") | addresses(scratch, "_iceberg/db/dropped")
    assert len(dropped) >= 8  # 2 data files, 2 manifest lists, 2 manifests, 3 metadata files, the pointer
    scratch.commit(message="a table to drop", date=int(now - 9 * DAY))
    catalog.drop_table((r, "scratch", "db", "dropped"))
    scratch.commit(message="dropped", date=int(now - 8 * DAY))
    scratch.delete()

    kept = addresses(main, "iceberg/db/") | addresses(main, "_iceberg/")
    namespace = repo.properties.storage_namespace
    assert dropped | kept <= data_addresses(stack, namespace)
    rules = GarbageCollectionRules(
        default_retention_days=1, branches=[GarbageCollectionRule(branch_id="main", retention_days=1)]
    )
    lakefs_client.sdk_client.repositories_api.set_gc_rules(r, rules)
    time.sleep(1.05)  # S3 keeps whole seconds: everything above is strictly older than the prepare

    assert cli.main(gc_run(stack, r, "--min-age-seconds", "0")) == 0
    capsys.readouterr()
    left = data_addresses(stack, namespace)
    assert dropped.isdisjoint(left)
    assert kept <= left
    assert catalog.load_table((r, "main", "db", "kept")).scan().to_arrow()["id"].to_pylist() == [1]
