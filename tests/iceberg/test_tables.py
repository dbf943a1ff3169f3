"""Tables with data through the S3 gateway: pyiceberg writes data and manifests on the branch as ordinary objects,
the catalog moves the pointer; commits, tags and merges of the repository version them."""

from __future__ import annotations

import re
from collections.abc import Callable

import lakefs
import pyarrow as pa
import pytest
from pyiceberg.catalog.rest import RestCatalog
from pyiceberg.exceptions import NoSuchTableError
from pyiceberg.types import StringType

from tests.e2e.conftest import LocalProcess

pytestmark = pytest.mark.e2e


def rows(ids: list[int], tag: str = "x") -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()), "tag": pa.array([tag] * len(ids))})


def ids(catalog: RestCatalog, *identifier: str) -> list[int]:
    return sorted(catalog.load_table(identifier).scan().to_arrow()["id"].to_pylist())


def test_tables_live_in_the_branch_and_version_with_it(
    repo: lakefs.Repository, make_catalog: Callable[..., RestCatalog]
) -> None:
    catalog = make_catalog()
    r = repo.id
    catalog.create_namespace((r, "main", "sales"))
    table = catalog.create_table((r, "main", "sales", "orders"), rows([1]).schema)
    table.append(rows([1, 2]))
    main = repo.branch("main")
    paths = [o.path for o in main.objects(prefix="iceberg/sales/")]
    assert any(p.endswith(".parquet") and "/data/" in p for p in paths)
    assert any(p.endswith(".avro") for p in paths) and any(p.endswith(".metadata.json") for p in paths)
    assert [o.path for o in main.objects(prefix="_iceberg/")] == [
        "_iceberg/sales/_namespace.json",
        "_iceberg/sales/orders.table.json",
    ]
    first = main.commit(message="orders v1").get_commit().id
    repo.tag("v1").create(first)

    catalog.load_table((r, "main", "sales", "orders")).overwrite(rows([7], "y"))
    with catalog.load_table((r, "main", "sales", "orders")).update_schema() as update:
        update.add_column("note", StringType())
    catalog.load_table((r, "main", "sales", "orders")).append(
        pa.table({"id": pa.array([8], pa.int64()), "tag": ["z"], "note": ["new"]})
    )
    main.commit(message="orders v2")
    assert ids(catalog, r, "main", "sales", "orders") == [7, 8]
    assert ids(catalog, r, "v1", "sales", "orders") == [1, 2]
    assert ids(catalog, r, first, "sales", "orders") == [1, 2]
    assert ids(catalog, r, "main~1", "sales", "orders") == [1, 2]
    newest = catalog.load_table((r, "main", "sales", "orders")).scan().to_arrow().to_pylist()
    assert {"id": 8, "tag": "z", "note": "new"} in newest and {"id": 7, "tag": "y", "note": None} in newest

    # A branch: changes stay there until merged.
    dev = repo.branch("dev").create(source_reference="main")
    catalog.load_table((r, "dev", "sales", "orders")).append(rows([9]))
    assert ids(catalog, r, "main", "sales", "orders") == [7, 8]
    dev.commit(message="dev orders")
    dev.merge_into(main)
    assert ids(catalog, r, "main", "sales", "orders") == [7, 8, 9]
    # Reverting the merge brings the table back with everything else.
    main.revert(main.get_commit().id, parent_number=1)
    assert ids(catalog, r, "main", "sales", "orders") == [7, 8]


def test_purged_tables_leave_staged_deletes(repo: lakefs.Repository, make_catalog: Callable[..., RestCatalog]) -> None:
    catalog = make_catalog()
    r = repo.id
    catalog.create_namespace((r, "main", "tmp"))
    table = catalog.create_table((r, "main", "tmp", "scratch"), rows([1]).schema)
    table.append(rows([1]))
    main = repo.branch("main")
    main.commit(message="scratch")
    location = table.location().removeprefix(f"s3://{r}/main/")
    files = [o.path for o in main.objects(prefix=location + "/")]
    assert any(p.endswith(".parquet") for p in files) and any(p.endswith(".avro") for p in files)
    # Objects that are not the table's, under its location and beside it: a purge leaves them.
    kept = [f"{location}/notes.txt", f"{location}-copy/data/x.parquet"]
    for path in kept:
        main.object(path).upload(b"not the table's")
    catalog.purge_table((r, "main", "tmp", "scratch"))
    with pytest.raises(NoSuchTableError):
        catalog.load_table((r, "main", "tmp", "scratch"))
    assert sorted(o.path for o in main.objects(prefix=location)) == sorted(kept)
    changes = {(c.path, c.type) for c in main.uncommitted()}
    assert ("_iceberg/tmp/scratch.table.json", "removed") in changes
    assert {(p, "removed") for p in files} <= changes
    assert all(kind == "removed" for p, kind in changes if p not in kept)


def test_the_banner_names_the_catalog_a_client_connects_to(stack: LocalProcess, repo: lakefs.Repository) -> None:
    found = re.search(r"Iceberg catalog\s+(?P<uri>http://\S+)", stack.banner)
    assert found, stack.banner
    catalog = RestCatalog(
        "from-the-banner",
        uri=found.group("uri"),
        credential=f"{stack.access_key_id}:{stack.secret_access_key}",
        **{"oauth2-server-uri": found.group("uri") + "/v1/oauth/tokens"},
    )
    assert (repo.id,) in catalog.list_namespaces()  # the first level: the repositories
