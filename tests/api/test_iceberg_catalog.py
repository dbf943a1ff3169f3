"""The Iceberg REST catalog through pyiceberg's RestCatalog, in process (iceberg_support.py): namespaces, tables,
schema evolution, commits and their races, reads at refs, and the layout the tables leave in the repository."""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa
import pytest
from chalice.test import Client
from pyiceberg.catalog.rest import RestCatalog
from pyiceberg.exceptions import (
    BadRequestError,
    CommitFailedException,
    NamespaceAlreadyExistsError,
    NamespaceNotEmptyError,
    NoSuchNamespaceError,
    NoSuchTableError,
    TableAlreadyExistsError,
)
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import IdentityTransform
from pyiceberg.types import LongType, NestedField, StringType

from chalicelib.iceberg.commits import TableCommits
from chalicelib.iceberg.store import TableStore

from .iceberg_support import bridge, iceberg_error, iceberg_request, rest_catalog  # noqa: F401
from .support import Api, body_of

pytestmark = pytest.mark.usefixtures("bridge")

NS = ("repo1", "main", "sales")
ORDERS = (*NS, "orders")
SCHEMA = Schema(
    NestedField(7, "id", LongType(), required=True),
    NestedField(9, "region", StringType(), required=False),
    identifier_field_ids=[7],
)


def rows(ids: list[int], region: str = "eu") -> pa.Table:
    return pa.table(
        {"id": pa.array(ids, pa.int64()), "region": pa.array([region] * len(ids))},
        schema=pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("region", pa.string())]),
    )


@pytest.fixture
def catalog(repo: str, credentials: tuple[str, str]) -> RestCatalog:
    cat = rest_catalog(credentials)
    cat.create_namespace(NS, {"owner": "data-team"})
    return cat


def objects(api: Api, ref: str, prefix: str) -> list[str]:
    listed = body_of(api.get(f"/repositories/repo1/refs/{ref}/objects/ls", query={"prefix": prefix}))
    return [o["path"] for o in listed["results"]]


def test_namespaces_are_repositories_refs_and_directories(catalog: RestCatalog, api: Api) -> None:
    assert ("repo1",) in catalog.list_namespaces()
    assert catalog.list_namespaces(("repo1",)) == [("repo1", "main")]
    assert catalog.list_namespaces(("repo1", "main")) == [NS]
    assert catalog.load_namespace_properties(NS) == {"owner": "data-team"}
    assert catalog.load_namespace_properties(("repo1", "main")) == {}
    # The repository and ref levels hold no tables (engines that browse list them all the same).
    assert catalog.list_tables(("repo1", "main")) == [] and catalog.list_tables(("repo1",)) == []
    with pytest.raises(NoSuchNamespaceError):
        catalog.list_tables(("repo1", "nobranch"))
    catalog.create_namespace((*NS, "eu"))
    assert catalog.list_namespaces(NS) == [(*NS, "eu")]
    with pytest.raises(NamespaceAlreadyExistsError):
        catalog.create_namespace(NS)
    with pytest.raises(NoSuchNamespaceError):
        catalog.load_namespace_properties(("repo1", "main", "nope"))
    with pytest.raises(NoSuchNamespaceError):
        catalog.list_namespaces(("repo1", "nobranch"))
    with pytest.raises(BadRequestError, match=r"parent namespace repo1\.main\.a does not exist"):
        catalog.create_namespace(("repo1", "main", "a", "b"))
    # The namespace is an object of the branch, staged like any write.
    assert objects(api, "main", "_iceberg/") == ["_iceberg/sales/_namespace.json", "_iceberg/sales/eu/_namespace.json"]


def test_namespace_properties_and_drop(catalog: RestCatalog) -> None:
    summary = catalog.update_namespace_properties(NS, removals={"owner", "gone"}, updates={"tier": "gold"})
    assert (summary.updated, summary.removed, summary.missing) == (["tier"], ["owner"], ["gone"])
    assert catalog.load_namespace_properties(NS) == {"tier": "gold"}
    assert catalog.namespace_exists(NS) and not catalog.namespace_exists((*NS, "x"))
    catalog.create_table(ORDERS, SCHEMA)
    with pytest.raises(NamespaceNotEmptyError):
        catalog.drop_namespace(NS)
    catalog.drop_table(ORDERS)
    catalog.drop_namespace(NS)
    assert not catalog.namespace_exists(NS)


def test_repository_and_ref_levels_are_not_created_here(catalog: RestCatalog) -> None:
    with pytest.raises(BadRequestError, match="repository or a ref"):
        catalog.create_namespace(("repo1", "newbranch"))
    with pytest.raises(BadRequestError):
        catalog.create_table(("repo1", "main", "t"), SCHEMA)


def test_create_assigns_fresh_ids_and_writes_the_layout(catalog: RestCatalog, api: Api) -> None:
    spec = PartitionSpec(PartitionField(source_id=9, field_id=1000, transform=IdentityTransform(), name="region"))
    table = catalog.create_table(ORDERS, SCHEMA, partition_spec=spec, properties={"format-version": "2", "k": "v"})
    metadata = table.metadata
    assert [(f.field_id, f.name) for f in metadata.schema().fields] == [(1, "id"), (2, "region")]
    assert metadata.schema().identifier_field_ids == [1]
    assert metadata.spec().fields[0].source_id == 2 and metadata.last_partition_id == 1000
    assert metadata.properties == {"k": "v"} and metadata.format_version == 2
    assert table.location().startswith("s3://repo1/main/iceberg/sales/orders-")
    assert table.metadata_location.startswith(table.location() + "/metadata/00000-")
    with pytest.raises(TableAlreadyExistsError):
        catalog.create_table(ORDERS, SCHEMA)
    pointer = json.loads(
        api.get("/repositories/repo1/refs/main/objects", query={"path": "_iceberg/sales/orders.table.json"}).body
    )
    assert table.metadata_location == "s3://repo1/main/" + pointer["metadata-path"]
    assert catalog.list_tables(NS) == [ORDERS]
    assert catalog.table_exists(ORDERS) and not catalog.table_exists((*NS, "nope"))


def test_append_overwrite_and_schema_evolution(catalog: RestCatalog) -> None:
    table = catalog.create_table(ORDERS, SCHEMA)
    table.append(rows([1, 2]))
    table.append(rows([3]))
    assert sorted(catalog.load_table(ORDERS).scan().to_arrow()["id"].to_pylist()) == [1, 2, 3]
    table.overwrite(rows([10], "us"))
    loaded = catalog.load_table(ORDERS)
    assert loaded.scan().to_arrow().to_pylist() == [{"id": 10, "region": "us"}]
    with loaded.update_schema() as update:
        update.add_column("amount", LongType())
    evolved = catalog.load_table(ORDERS)
    assert [f.name for f in evolved.schema().fields] == ["id", "region", "amount"]
    assert evolved.metadata.current_schema_id == 1 and evolved.metadata.last_column_id == 3
    assert len(evolved.metadata.snapshots) == 4  # two appends, the overwrite's delete and its append
    # Metadata files 0 to 3 (create, two appends, the overwrite's one commit) before the current one.
    assert len(evolved.metadata.metadata_log) == 4


def test_reads_at_a_tag_and_a_commit_see_the_table_as_committed(catalog: RestCatalog, api: Api) -> None:
    table = catalog.create_table(ORDERS, SCHEMA)
    table.append(rows([1]))
    first = api.commit("repo1", "main", "orders v1")["id"]
    assert api.post("/repositories/repo1/tags", json_body={"id": "v1", "ref": first}).status_code == 201
    catalog.load_table(ORDERS).append(rows([2]))
    api.commit("repo1", "main", "orders v2")
    at_tag = catalog.load_table(("repo1", "v1", "sales", "orders"))
    assert at_tag.scan().to_arrow()["id"].to_pylist() == [1]
    assert at_tag.metadata_location.startswith("s3://repo1/v1/")
    for ref in (first, "main~1"):
        assert catalog.load_table(("repo1", ref, "sales", "orders")).scan().to_arrow()["id"].to_pylist() == [1]
    assert sorted(catalog.load_table(("repo1", "main@", "sales", "orders")).scan().to_arrow()["id"].to_pylist()) == [
        1,
        2,
    ]
    with pytest.raises(BadRequestError, match="not a branch"):
        at_tag.append(rows([3]))
    assert catalog.load_table(("repo1", "v1", "sales", "orders")).scan().to_arrow()["id"].to_pylist() == [1]


def test_a_stale_commit_fails_its_requirement(catalog: RestCatalog) -> None:
    first = catalog.create_table(ORDERS, SCHEMA)
    second = catalog.load_table(ORDERS)
    with first.update_schema() as update:
        update.add_column("a", LongType())
    with pytest.raises(CommitFailedException, match="requirement failed"), second.update_schema() as update:
        update.add_column("b", LongType())
    assert [f.name for f in catalog.load_table(ORDERS).schema().fields] == ["id", "region", "a"]


def test_a_lost_race_answers_409_and_the_clients_retry_succeeds(
    catalog: RestCatalog, monkeypatch: pytest.MonkeyPatch, credentials: tuple[str, str]
) -> None:
    """Two appends read the same pointer and both pass their requirements; the pointer's conditional write lets
    one through. The loser's 409 makes pyiceberg refresh and commit again (commit.retry.num-retries)."""
    table = catalog.create_table(ORDERS, SCHEMA, properties={"commit.retry.num-retries": "3"})
    table.append(rows([1]))
    other = rest_catalog(credentials)
    original_move = TableCommits.move
    raced: list[int] = []

    def move_after_a_rival(self: TableCommits, authorize: Any, prepared: object) -> str:
        if not raced:
            raced.append(1)
            other.load_table(ORDERS).append(rows([100]))  # the rival moves the pointer first
        return original_move(self, authorize, prepared)  # type: ignore[arg-type]

    monkeypatch.setattr(TableCommits, "move", move_after_a_rival)
    moves: list[object] = []
    counting = TableCommits.move

    def count(self: TableCommits, authorize: Any, prepared: object) -> str:
        moves.append(prepared)
        return counting(self, authorize, prepared)

    monkeypatch.setattr(TableCommits, "move", count)
    catalog.load_table(ORDERS).append(rows([2]))
    assert raced == [1]
    # Ours twice (the lost race, then the retry), the rival's once in between.
    assert len(moves) == 3
    assert sorted(catalog.load_table(ORDERS).scan().to_arrow()["id"].to_pylist()) == [1, 2, 100]


def test_a_lost_race_without_retries_is_a_commit_failed(
    catalog: RestCatalog, monkeypatch: pytest.MonkeyPatch, credentials: tuple[str, str]
) -> None:
    catalog.create_table(ORDERS, SCHEMA, properties={"commit.retry.num-retries": "0"})
    other = rest_catalog(credentials)
    original_move = TableCommits.move

    def move_after_a_rival(self: TableCommits, authorize: Any, prepared: object) -> str:
        monkeypatch.setattr(TableCommits, "move", original_move)
        other.load_table(ORDERS).append(rows([100]))
        return original_move(self, authorize, prepared)  # type: ignore[arg-type]

    monkeypatch.setattr(TableCommits, "move", move_after_a_rival)
    with pytest.raises(CommitFailedException, match="changed by another commit"):
        catalog.load_table(ORDERS).append(rows([2]))
    assert catalog.load_table(ORDERS).scan().to_arrow()["id"].to_pylist() == [100]


def test_rename_drop_and_register(catalog: RestCatalog, api: Api, client: Client, credentials: tuple[str, str]) -> None:
    table = catalog.create_table(ORDERS, SCHEMA)
    table.append(rows([1]))
    catalog.create_namespace((*NS, "archive"))
    catalog.rename_table(ORDERS, (*NS, "archive", "orders_2025"))
    assert catalog.list_tables(NS) == [] and not catalog.table_exists(ORDERS)
    moved = catalog.load_table((*NS, "archive", "orders_2025"))
    assert moved.scan().to_arrow()["id"].to_pylist() == [1]
    across = iceberg_request(
        client,
        "POST",
        "/tables/rename",
        credentials,
        {
            "source": {"namespace": [*NS, "archive"], "name": "orders_2025"},
            "destination": {"namespace": ["repo1", "dev", "sales"], "name": "x"},
        },
    )
    assert "within its branch" in iceberg_error(across, 400, "BadRequestException")
    location = moved.metadata_location
    catalog.drop_table((*NS, "archive", "orders_2025"))
    with pytest.raises(NoSuchTableError):
        catalog.load_table((*NS, "archive", "orders_2025"))
    # Without purge the files stay: the metadata file registers the table again.
    registered = catalog.register_table(ORDERS, location)
    assert registered.scan().to_arrow()["id"].to_pylist() == [1]
    with pytest.raises(TableAlreadyExistsError):
        catalog.register_table(ORDERS, location)
    assert any(p.endswith(".metadata.json") for p in objects(api, "main", "iceberg/"))
    catalog.purge_table(ORDERS)
    assert not catalog.table_exists(ORDERS)
    assert objects(api, "main", registered.metadata.location.removeprefix("s3://repo1/main/")) == []


def test_staged_create_comes_to_exist_with_its_commit(catalog: RestCatalog) -> None:
    with catalog.create_table_transaction(ORDERS, SCHEMA, properties={"p": "1"}) as transaction:
        assert not catalog.table_exists(ORDERS)
        transaction.append(rows([5]))
    table = catalog.load_table(ORDERS)
    assert table.properties["p"] == "1"
    assert table.scan().to_arrow()["id"].to_pylist() == [5]
    assert table.location().startswith("s3://repo1/main/iceberg/sales/orders-")


def test_branches_are_isolated_and_merge(catalog: RestCatalog, api: Api) -> None:
    catalog.create_table(ORDERS, SCHEMA).append(rows([1]))
    api.commit("repo1", "main", "orders")
    assert api.post("/repositories/repo1/branches", json_body={"name": "dev", "source": "main"}).status_code == 201
    dev = catalog.load_table(("repo1", "dev", "sales", "orders"))
    assert dev.location().startswith("s3://repo1/dev/")  # engines write on the branch they loaded it from
    dev.append(rows([2]))
    assert catalog.load_table(ORDERS).scan().to_arrow()["id"].to_pylist() == [1]
    api.commit("repo1", "dev", "more orders")
    merged = api.post("/repositories/repo1/refs/dev/merge/main", json_body={})
    assert merged.status_code == 200, merged.body
    assert sorted(catalog.load_table(ORDERS).scan().to_arrow()["id"].to_pylist()) == [1, 2]


def test_a_table_changed_on_both_branches_conflicts_by_name(catalog: RestCatalog, api: Api) -> None:
    catalog.create_table(ORDERS, SCHEMA)
    catalog.create_table((*NS, "customers"), SCHEMA)
    api.commit("repo1", "main", "tables")
    api.post("/repositories/repo1/branches", json_body={"name": "dev", "source": "main"})
    catalog.load_table(("repo1", "dev", "sales", "orders")).append(rows([2]))
    catalog.load_table(("repo1", "dev", "sales", "customers")).append(rows([3]))  # dev only: merges cleanly
    catalog.load_table(ORDERS).append(rows([1]))
    api.commit("repo1", "dev", "dev orders")
    api.commit("repo1", "main", "main orders")
    response = api.post("/repositories/repo1/refs/dev/merge/main", json_body={})
    assert response.status_code == 409
    body = body_of(response)
    assert body["message"].endswith("Iceberg tables changed on both sides: sales.orders")
    assert [c["path"] for c in body["conflicts"]] == ["_iceberg/sales/orders.table.json"]
    # The per-path strategies apply to the table as a whole.
    resolved = api.post("/repositories/repo1/refs/dev/merge/main", json_body={"strategy": "source-wins"})
    assert resolved.status_code == 200, resolved.body
    assert catalog.load_table(ORDERS).scan().to_arrow()["id"].to_pylist() == [2]
    assert catalog.load_table((*NS, "customers")).scan().to_arrow()["id"].to_pylist() == [3]


def test_a_commit_racing_a_rename_or_a_drop_is_never_lost(
    catalog: RestCatalog, monkeypatch: pytest.MonkeyPatch, credentials: tuple[str, str]
) -> None:
    """The source pointer is deleted only while it is the one the rename (or drop) read: a commit in between
    moves with the renamed table (the rename starts again), and is dropped with a dropped one, as if it came
    first; it is never left behind under the old name."""
    catalog.create_table(ORDERS, SCHEMA).append(rows([1]))
    other = rest_catalog(credentials)
    original = TableStore.write

    def write_then_rival(
        self: TableStore, authorize: Any, repo: str, branch: str, path: str, value: Any, **kw: Any
    ) -> str:
        etag = original(self, authorize, repo, branch, path, value, **kw)
        if path.endswith("/renamed.table.json"):
            monkeypatch.setattr(TableStore, "write", original)
            other.load_table(ORDERS).append(rows([2]))
        return etag

    monkeypatch.setattr(TableStore, "write", write_then_rival)
    catalog.rename_table(ORDERS, (*NS, "renamed"))
    assert catalog.list_tables(NS) == [(*NS, "renamed")]
    assert sorted(catalog.load_table((*NS, "renamed")).scan().to_arrow()["id"].to_pylist()) == [1, 2]
    catalog.rename_table((*NS, "renamed"), ORDERS)

    original_delete = TableStore.delete

    def rival_then_delete(
        self: TableStore, authorize: Any, repo: str, branch: str, path: str, if_match: str | None = None
    ) -> None:
        monkeypatch.setattr(TableStore, "delete", original_delete)
        other.load_table(ORDERS).append(rows([3]))
        original_delete(self, authorize, repo, branch, path, if_match)

    monkeypatch.setattr(TableStore, "delete", rival_then_delete)
    catalog.drop_table(ORDERS)
    assert catalog.list_tables(NS) == []


def test_a_table_commit_costs_two_writes_and_a_few_reads(
    catalog: RestCatalog, services: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What one commit asks of the engine (counted, not timed): the pointer and the metadata file it names are
    read (a stat and a read each), the next metadata file and the pointer written; nothing is listed."""
    table = catalog.create_table(ORDERS, SCHEMA)
    engine = services.engine
    calls: dict[str, int] = {}
    for name in ("stat_object", "read_object", "upload_object", "list_objects", "delete_object"):
        method = getattr(engine.objects, name)

        def counted(*args: Any, _name: str = name, _method: Any = method, **kwargs: Any) -> Any:
            calls[_name] = calls.get(_name, 0) + 1
            return _method(*args, **kwargs)

        monkeypatch.setattr(engine.objects, name, counted)
    with table.update_schema() as update:
        update.add_column("note", StringType())
    # The namespace's marker is checked (a stat); the pointer and its metadata file are each stat'ed and read.
    assert calls == {"stat_object": 3, "read_object": 2, "upload_object": 2}
