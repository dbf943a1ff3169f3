"""What the DynamoDB adapters promise beyond the ports: table creation, error translation, a real endpoint."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator

import boto3
import pytest
from moto import mock_aws
from moto.server import ThreadedMotoServer

from chalicelib.adapters.dynamodb import (
    DynamoAuthStore,
    DynamoRefStore,
    DynamoStagingStore,
    TableNames,
    create_tables,
)
from chalicelib.auth.records import User
from chalicelib.graveler import errors
from chalicelib.graveler.records import (
    Branch,
    BranchID,
    CommitID,
    Entry,
    Key,
    RepositoryID,
    StagedEntry,
    StagingToken,
)

REGION = "us-east-1"


def fresh_names() -> TableNames:
    return TableNames.from_prefix(f"d{uuid.uuid4().hex[:12]}-")


@pytest.fixture
def in_process(fake_aws_env: None) -> Iterator[None]:
    with mock_aws():
        yield


def test_table_names_from_prefix() -> None:
    assert TableNames.from_prefix("lakelet-") == TableNames(
        repositories="lakelet-repositories",
        branches="lakelet-branches",
        tags="lakelet-tags",
        commits="lakelet-commits",
        staging="lakelet-staging",
        auth="lakelet-auth",
        pulls="lakelet-pulls",
    )


def test_create_tables_is_idempotent(in_process: None) -> None:
    names = fresh_names()
    create_tables(names, REGION)
    store = DynamoRefStore(names, REGION)
    store.create_branch(RepositoryID("r"), Branch(BranchID("main"), CommitID("c"), StagingToken("t")))
    create_tables(names, REGION)  # existing tables, and what they hold, are left alone
    assert store.get_branch(RepositoryID("r"), BranchID("main")).commit_id == "c"
    client = boto3.client("dynamodb", region_name=REGION)
    expected = {names.repositories, names.branches, names.tags, names.commits, names.staging, names.auth}
    assert expected <= set(client.list_tables()["TableNames"])
    for name in expected:
        table = client.describe_table(TableName=name)["Table"]
        assert table["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST"


def test_missing_tables_raise_storage_errors(in_process: None) -> None:
    names = fresh_names()  # never created
    refs = DynamoRefStore(names, REGION)
    staging = DynamoStagingStore(names, REGION)
    auth = DynamoAuthStore(names, REGION)
    calls: list[Callable[[], object]] = [
        lambda: refs.get_repository(RepositoryID("r")),
        lambda: refs.create_branch(RepositoryID("r"), Branch(BranchID("b"), CommitID("c"), StagingToken("t"))),
        refs.list_repositories,
        lambda: list(refs.iterate_commits(RepositoryID("r"))),
        lambda: staging.get(StagingToken("t"), Key("k")),
        lambda: list(staging.iterate(StagingToken("t"))),
        lambda: staging.drop(StagingToken("t")),
        lambda: auth.get_user("u"),
        lambda: auth.list_credentials("u"),
    ]
    for call in calls:
        with pytest.raises(errors.StorageError) as caught:
            call()
        # Translated, with the driver error kept as the cause for the logs.
        assert caught.value.__cause__ is not None


def test_adapters_over_an_http_endpoint(fake_aws_env: None) -> None:
    # The local stack's path: a moto server on loopback, reached through endpoint_url.
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        endpoint = f"http://{host}:{port}"
        names = fresh_names()
        create_tables(names, REGION, endpoint)
        create_tables(names, REGION, endpoint)

        refs = DynamoRefStore(names, REGION, endpoint)
        branch = Branch(BranchID("main"), CommitID("c1"), StagingToken("t1"), (StagingToken("t0"),))
        refs.create_branch(RepositoryID("r"), branch)
        moved = Branch(BranchID("main"), CommitID("c2"), StagingToken("t2"))
        refs.set_branch(RepositoryID("r"), moved, expected=branch)
        with pytest.raises(errors.Conflict):
            refs.set_branch(RepositoryID("r"), branch, expected=branch)
        assert refs.get_branch(RepositoryID("r"), BranchID("main")) == moved

        staging = DynamoStagingStore(names, REGION, endpoint)
        entry = StagedEntry(Key("a/b"), Entry("s3://b/k", 3, "etag", 1))
        staging.set(StagingToken("t2"), entry)
        staging.set(StagingToken("t2"), StagedEntry(Key("a/a"), None))
        assert list(staging.iterate(StagingToken("t2"))) == [StagedEntry(Key("a/a"), None), entry]

        auth = DynamoAuthStore(names, REGION, endpoint)
        auth.create_user(User("admin", 1))
        assert auth.list_users() == [User("admin", 1)]
    finally:
        server.stop()


def test_rows_written_before_generations_and_retired_tokens(in_process: None) -> None:
    """Rows of a deployment from before these attributes: read as empty, and compare-and-swap still works."""
    names = fresh_names()
    create_tables(names, REGION)
    client = boto3.client("dynamodb", region_name=REGION)
    client.put_item(
        TableName=names.repositories,
        Item={
            "repository_id": {"S": "old"},
            "storage_namespace": {"S": "s3://b/old"},
            "default_branch_id": {"S": "main"},
            "creation_date": {"N": "1700000000"},
            "state": {"S": "active"},
            "read_only": {"BOOL": False},
        },
    )
    client.put_item(
        TableName=names.branches,
        Item={
            "repository_id": {"S": "old"},
            "branch_id": {"S": "main"},
            "commit_id": {"S": "c1"},
            "staging_token": {"S": "t1"},
            "sealed_tokens": {"L": []},
        },
    )
    store = DynamoRefStore(names, REGION)
    old = RepositoryID("old")
    assert store.get_repository(old).generation == ""
    assert store.get_repository(old).range_format == 1  # cut as before range formats: its ids never change
    branch = store.get_branch(old, BranchID("main"))
    assert branch == Branch(BranchID("main"), CommitID("c1"), StagingToken("t1"))
    moved = Branch(BranchID("main"), CommitID("c2"), StagingToken("t1"), (), (StagingToken("t0"),))
    store.set_branch(old, moved, expected=branch)
    assert store.get_branch(old, BranchID("main")) == moved
    store.create_branch(old, Branch(BranchID("dev"), CommitID("c2"), StagingToken("t2")), generation="")
    with pytest.raises(errors.RepositoryNotFound):
        store.create_branch(old, Branch(BranchID("x"), CommitID("c2"), StagingToken("t3")), generation="g")


def test_retired_tokens_are_one_attribute_and_rows_holding_a_list_still_swap(in_process: None) -> None:
    """The retired entries are stored as one string attribute (one value to send, compare and decode however many
    there are); a row written with the older list attribute reads the same, swaps on it, and is rewritten as one
    attribute by that swap."""
    names = fresh_names()
    create_tables(names, REGION)
    client = boto3.client("dynamodb", region_name=REGION)
    old_entries = [{"S": "old-main:a|1700000000.000"}, {"S": "old-main:b|1700000001.000"}]
    client.put_item(
        TableName=names.branches,
        Item={
            "repository_id": {"S": "old"},
            "branch_id": {"S": "main"},
            "commit_id": {"S": "c1"},
            "staging_token": {"S": "t1"},
            "sealed_tokens": {"L": []},
            "hidden": {"BOOL": False},
            "retired_tokens": {"L": old_entries},
        },
    )
    store = DynamoRefStore(names, REGION)
    repo, main = RepositoryID("old"), BranchID("main")
    branch = store.get_branch(repo, main)
    assert branch.retired_tokens == ("old-main:a|1700000000.000", "old-main:b|1700000001.000")
    with pytest.raises(errors.Conflict):  # the list compared whole: one entry short loses
        store.set_branch(
            repo,
            Branch(main, CommitID("c9"), StagingToken("t1")),
            expected=Branch(main, CommitID("c1"), StagingToken("t1"), (), branch.retired_tokens[:1]),
        )
    moved = Branch(main, CommitID("c2"), StagingToken("t2"), (), (*branch.retired_tokens, StagingToken("t1|2.5")))
    store.set_branch(repo, moved, expected=branch)
    assert store.get_branch(repo, main) == moved
    item = client.get_item(TableName=names.branches, Key={"repository_id": {"S": "old"}, "branch_id": {"S": "main"}})
    assert "retired_tokens" not in item["Item"]
    assert item["Item"]["retired"] == {"S": "old-main:a|1700000000.000 old-main:b|1700000001.000 t1|2.5"}
    cleared = Branch(main, CommitID("c2"), StagingToken("t2"))
    store.set_branch(repo, cleared, expected=moved)
    item = client.get_item(TableName=names.branches, Key={"repository_id": {"S": "old"}, "branch_id": {"S": "main"}})
    assert "retired" not in item["Item"] and "retired_tokens" not in item["Item"]
    with pytest.raises(errors.Conflict):  # an expectation of entries the row no longer holds loses
        store.set_branch(repo, cleared, expected=moved)
    store.set_branch(repo, Branch(main, CommitID("c3"), StagingToken("t2")), expected=cleared)
    with pytest.raises(ValueError):
        store.set_branch(
            repo,
            Branch(main, CommitID("c4"), StagingToken("t2"), (), (StagingToken("a b"),)),
            expected=store.get_branch(repo, main),
        )
