"""lakeFS compatibility, round 2, through the official clients (lakefs, lakefs-sdk, lakefs-spec) on the one
embedded stack of the e2e session: the client calls that depend on each behaviour."""

from __future__ import annotations

import io
import time
from collections.abc import Callable

import lakefs
import lakefs_sdk
import pyarrow.parquet as pq
import pytest
from lakefs.client import Client
from lakefs.exceptions import BadRequestException, ConflictException
from lakefs_spec import LakeFSFileSystem

from chalicelib.samples import SAMPLE_COMMIT_MESSAGE, sample_objects

from .conftest import LocalProcess

pytestmark = pytest.mark.e2e
NewRepo = Callable[[], lakefs.Repository]


def _namespace(client: Client, name: str) -> str:
    return client.storage_config.default_namespace_prefix.rstrip("/") + "/" + name


def test_transact_works_on_a_hidden_branch(repo: lakefs.Repository) -> None:
    """1. Branch.transact() works on a hidden ephemeral branch, which listings leave out unless asked."""
    main = repo.branch("main")
    main.object("keep.txt").upload("keep")
    main.commit(message="base")
    with main.transact(commit_message="in a transaction") as tx:
        tx.object("new.txt").upload("made in the transaction")
        assert [b.id for b in repo.branches()] == ["main"]
        assert tx.id in [b.id for b in repo.branches(show_hidden=True)]
    assert main.object("new.txt").reader(mode="r").read() == "made in the transaction"
    assert [b.id for b in repo.branches(show_hidden=True)] == ["main"]  # the transaction's branch is gone
    assert [c.message for c in main.log(max_amount=2)][1] == "in a transaction"


def test_diffs_say_the_size_of_removed_objects(repo: lakefs.Repository, client: Client) -> None:
    """2. size_bytes is 0 for a removed object in the branch diff and the ref diff (lakeFS's Diff)."""
    main = repo.branch("main")
    main.object("gone.txt").upload("12345")
    main.commit(message="base")
    dev = repo.branch("dev").create(source_reference="main")
    dev.object("gone.txt").delete()
    dev.object("new.txt").upload("abc")
    assert [(c.path, c.type, c.size_bytes) for c in dev.uncommitted()] == [
        ("gone.txt", "removed", 0),
        ("new.txt", "added", 3),
    ]
    dev.commit(message="changes")
    assert [(c.path, c.type, c.size_bytes) for c in main.diff(dev)] == [
        ("gone.txt", "removed", 0),
        ("new.txt", "added", 3),
    ]
    raw = client.sdk_client.refs_api.diff_refs(repo.id, "main", "dev", type="two_dot")
    assert [(d.path, d.size_bytes) for d in raw.results] == [("gone.txt", 0), ("new.txt", 3)]


def test_repository_shape_and_creating_with_samples(client: Client) -> None:
    """3 and 4. storage_id in the Repository; an unknown one is a 400; include_samples commits the sample
    dataset; exist_ok with include_samples answers the existing repository (409 before any other check)."""
    name = f"samples-{time.time_ns() % 10**10}"
    repo = lakefs.Repository(name, client=client).create(
        storage_namespace=_namespace(client, name), include_samples=True
    )
    assert client.sdk_client.repositories_api.get_repository(name).storage_id == ""
    main = repo.branch("main")
    assert [c.message for c in main.log()] == [SAMPLE_COMMIT_MESSAGE, "Repository created"]
    expected = sample_objects(name)
    assert [(o.path, o.size_bytes) for o in main.objects()] == [(s.path, len(s.data)) for s in expected]
    with main.object("lakes.parquet").reader(mode="rb") as handle:
        table = pq.read_table(io.BytesIO(handle.read()))
    assert table.num_rows > 50 and "area_km2" in table.column_names
    assert list(main.uncommitted()) == []

    again = lakefs.Repository(name, client=client).create(
        storage_namespace=_namespace(client, name + "-2"), include_samples=True, exist_ok=True
    )
    assert again.properties.storage_namespace == _namespace(client, name)
    with pytest.raises(ConflictException):
        lakefs.Repository(name, client=client).create(
            storage_namespace=_namespace(client, name + "-3"), include_samples=True
        )
    with pytest.raises(BadRequestException) as refused:
        lakefs.Repository(name + "-x", client=client).create(
            storage_namespace=_namespace(client, name + "-x"), storage_id="elsewhere"
        )
    assert "storage_id" in refused.value.body["message"]


def test_clients_read_lakefs_words(repo: lakefs.Repository) -> None:
    """5. merge_into on a dirty destination, a commit of nothing, an existing tag and branch: lakeFS's words."""
    main = repo.branch("main")
    main.object("a.txt").upload("a")
    main.commit(message="base")
    dev = repo.branch("dev").create(source_reference="main")
    dev.object("b.txt").upload("b")
    dev.commit(message="on dev")
    main.object("dirty.txt").upload("not committed")
    with pytest.raises(BadRequestException) as dirty:
        dev.merge_into(main)
    assert dirty.value.body["message"].startswith("uncommitted changes (dirty branch)")
    main.reset_changes()
    with pytest.raises(BadRequestException) as nothing:
        main.commit(message="nothing")
    assert nothing.value.body["message"].startswith("no changes")
    repo.tag("v1").create("main")
    with pytest.raises(ConflictException) as tag:
        repo.tag("v1").create("main")
    assert tag.value.body["message"].startswith("tag already exists")
    with pytest.raises(ConflictException) as branch:
        repo.branch("dev").create(source_reference="main")
    assert branch.value.body["message"].startswith("branch already exists")


def test_version_and_lakefs_spec_touch(client: Client, local_stack: LocalProcess, repo: lakefs.Repository) -> None:
    """6. The version is the lakeFS API's (the pinned SDK's), so lakefs-spec's touch() (lakeFS >= 1.3.1) works."""
    config = client.sdk_client.config_api.get_config()
    assert config.version_config.version == lakefs_sdk.__version__
    LakeFSFileSystem.clear_instance_cache()
    fs = LakeFSFileSystem(
        host=local_stack.endpoint, username=local_stack.access_key_id, password=local_stack.secret_access_key
    )
    fs.touch(f"lakefs://{repo.id}/main/empty.txt")
    assert fs.info(f"lakefs://{repo.id}/main/empty.txt")["size"] == 0


def _next_second() -> None:
    """Waits for the start of a wall-clock second, so the next few operations share it."""
    time.sleep(1.0 - time.time() % 1.0 + 0.01)


def test_a_fast_history_lists_in_lakefs_order(repo: lakefs.Repository) -> None:
    """7. commit on a branch, commit on main, merge, commit, inside one second: the log is newest first by the
    sub-second time (lakeFS's order), not by generation (the branch's commit has the higher one)."""
    main, dev = repo.branch("main"), repo.branch("dev").create(source_reference="main")
    dev.object("f1").upload("1")
    dev.commit(message="f1")
    dev.object("f2").upload("2")
    main.object("c2").upload("2")
    _next_second()
    dev.commit(message="f2")
    main.commit(message="c2")
    dev.object("f3").upload("3")
    dev.commit(message="f3")
    dev.merge_into(main, message="m")
    main.object("c3").upload("3")
    main.commit(message="c3")
    log = list(main.log())
    assert [c.message for c in log] == ["c3", "m", "f3", "c2", "f2", "f1", "Repository created"]
    assert all(isinstance(c.creation_date, int) for c in log)


def test_update_object_user_metadata(repo: lakefs.Repository, client: Client) -> None:
    """9. updateObjectUserMetadata (lakefs-sdk) replaces the user metadata as a staged change."""
    main = repo.branch("main")
    main.object("a.csv").upload("x,y\n", metadata={"owner": "old"})
    main.commit(message="base")
    client.sdk_client.objects_api.update_object_user_metadata(
        repo.id, "main", "a.csv", lakefs_sdk.UpdateObjectUserMetadata(set={"owner": "data-team", "pii": "no"})
    )
    assert main.object("a.csv").stat().metadata == {"owner": "data-team", "pii": "no"}
    assert [(c.path, c.type) for c in main.uncommitted()] == [("a.csv", "changed")]
    assert repo.ref("main@").object("a.csv").stat().metadata == {"owner": "old"}
    main.commit(message="metadata")
    assert repo.ref("main@").object("a.csv").stat().metadata == {"owner": "data-team", "pii": "no"}
    assert main.object("a.csv").reader(mode="r").read() == "x,y\n"
