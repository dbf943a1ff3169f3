"""lakelet/stack/moto_speedups.py answers every DynamoDB query exactly as moto's own query does.

Each query below runs twice on the same moto state, through boto3 inside ``mock_aws``: once with the patched
``Table.query`` and once with moto's original one, and the two answers (items, order, Count, ScannedCount,
LastEvaluatedKey) must be equal. Between the pages of a paginated query the tests write and delete (puts,
overwrites, batch writes, updates, failed transactions), so the cached sorted keys must follow every change.
The faster serializer of attribute values must give the same response bodies, byte for byte, as moto's.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import boto3
import pytest
from moto import mock_aws
from moto.dynamodb.models.table import Table

from chalicelib.adapters.dynamodb.refs import DynamoRefStore
from chalicelib.adapters.dynamodb.staging import DynamoStagingStore
from chalicelib.adapters.dynamodb.tables import TableNames, create_tables
from chalicelib.graveler.records import (
    Branch,
    BranchID,
    Commit,
    CommitID,
    Entry,
    Key,
    MetaRangeID,
    RepositoryID,
    StagedEntry,
    StagingToken,
    Tag,
    TagID,
)
from lakelet.stack import moto_items, moto_speedups
from tests.lakelet.ddb_tables import create_keyed_table

REGION = "us-east-1"
TABLE = "speedup"
# Few characters, so that keys share prefixes and begins_with/between have something to find.
ALPHABET = "ab/zé"


@pytest.fixture
def client() -> Iterator[Any]:
    was_installed = moto_speedups.installed()
    moto_speedups.install()
    resorted = moto_speedups.counters["resorted"]
    try:
        with mock_aws():
            ddb = boto3.client("dynamodb", region_name=REGION)
            create_keyed_table(ddb, TABLE)
            yield ddb
        # The cached keys followed every write through the hooks: the safety check never had to start over.
        assert moto_speedups.counters["resorted"] == resorted
    finally:
        if not was_installed:
            moto_speedups.uninstall()


@contextmanager
def moto_query() -> Iterator[None]:
    """moto's own Table.query for the duration (the write hooks stay, they change nothing moto does)."""
    patched = Table.query
    Table.query = moto_speedups._state["query"]  # type: ignore[method-assign]
    try:
        yield
    finally:
        Table.query = patched  # type: ignore[method-assign]


def both(ddb: Any, request: dict[str, Any]) -> dict[str, Any]:
    """The patched answer, after checking it equals moto's."""
    fast = ddb.query(**request)
    with moto_query():
        slow = ddb.query(**request)
    fast.pop("ResponseMetadata", None)
    slow.pop("ResponseMetadata", None)
    assert fast == slow, request
    return dict(fast)


def key(rng: random.Random) -> str:
    return "".join(rng.choice(ALPHABET) for _ in range(rng.randint(1, 4)))


def item(rng: random.Random, h: str, r: str, big: bool = False, pad: int | None = None) -> dict[str, Any]:
    if pad is None:
        pad = rng.randint(250_000, 390_000) if big else rng.randint(0, 40)
    return {"h": {"S": h}, "r": {"S": r}, "v": {"N": str(rng.randint(0, 9))}, "pad": {"S": "x" * pad}}


def random_condition(rng: random.Random) -> tuple[str, dict[str, Any]]:
    """A KeyConditionExpression on h = :h and maybe a range condition, with its values (without :h)."""
    a, b = sorted((key(rng), key(rng)))
    choice = rng.randrange(8)
    if choice == 0:
        return "h = :h", {}
    if choice == 7:
        return "h = :h AND r BETWEEN :a AND :b", {":a": {"S": a}, ":b": {"S": b}}
    if choice == 6:
        return "h = :h AND begins_with(r, :a)", {":a": {"S": a[: rng.randint(1, 2)]}}
    op = ["=", "<", "<=", ">", ">="][choice - 1]
    return f"h = :h AND r {op} :a", {":a": {"S": a}}


def random_write(ddb: Any, rng: random.Random, partitions: list[str], known: dict[str, set[str]]) -> None:
    """One change of the table's keys (or of an item in place), the way the stores and moto's APIs make them."""
    h = rng.choice(partitions)
    keys = known[h]
    kind = rng.randrange(7)
    if kind == 0 or not keys:  # a new key (or an overwrite, when it exists)
        r = key(rng)
        ddb.put_item(TableName=TABLE, Item=item(rng, h, r))
        keys.add(r)
    elif kind == 1:  # delete an existing key
        r = rng.choice(sorted(keys))
        ddb.delete_item(TableName=TABLE, Key={"h": {"S": h}, "r": {"S": r}})
        keys.discard(r)
    elif kind == 2:  # delete a key that may not exist
        r = key(rng)
        ddb.delete_item(TableName=TABLE, Key={"h": {"S": h}, "r": {"S": r}})
        keys.discard(r)
    elif kind == 3:  # batch: puts and deletes of distinct keys
        chosen = {key(rng) for _ in range(rng.randint(1, 20))}
        requests: list[dict[str, Any]] = []
        for r in chosen:
            if rng.random() < 0.5:
                requests.append({"PutRequest": {"Item": item(rng, h, r)}})
                keys.add(r)
            else:
                requests.append({"DeleteRequest": {"Key": {"h": {"S": h}, "r": {"S": r}}}})
                keys.discard(r)
        ddb.batch_write_item(RequestItems={TABLE: requests})
    elif kind == 4:  # update creates an item when missing
        r = key(rng)
        ddb.update_item(
            TableName=TABLE,
            Key={"h": {"S": h}, "r": {"S": r}},
            UpdateExpression="SET v = :v",
            ExpressionAttributeValues={":v": {"N": "5"}},
        )
        keys.add(r)
    elif kind == 5:  # a transaction that fails: moto rolls back to a deep copy of the table
        new = key(rng)
        with pytest.raises(ddb.exceptions.TransactionCanceledException):
            ddb.transact_write_items(
                TransactItems=[
                    {"Put": {"TableName": TABLE, "Item": item(rng, h, new + "!")}},
                    {
                        "ConditionCheck": {
                            "TableName": TABLE,
                            "Key": {"h": {"S": h}, "r": {"S": new + "?"}},
                            "ConditionExpression": "attribute_exists(h)",
                        }
                    },
                ]
            )
    else:  # a transaction that succeeds
        r = key(rng)
        ddb.transact_write_items(TransactItems=[{"Put": {"TableName": TABLE, "Item": item(rng, h, r)}}])
        keys.add(r)


def random_request(rng: random.Random, h: str) -> dict[str, Any]:
    expression, values = random_condition(rng)
    request: dict[str, Any] = {
        "TableName": TABLE,
        "KeyConditionExpression": expression,
        "ExpressionAttributeValues": {":h": {"S": h}, **values},
        "ScanIndexForward": rng.random() < 0.5,
        "ConsistentRead": rng.random() < 0.5,
    }
    if rng.random() < 0.7:
        request["Limit"] = rng.randint(1, 7)
    if rng.random() < 0.2:
        request["FilterExpression"] = "v > :v"
        request["ExpressionAttributeValues"][":v"] = {"N": "4"}
    if rng.random() < 0.2:
        request["ProjectionExpression"] = "r, v"
    if rng.random() < 0.15:
        # A start key where no item is (moto accepts it: the page starts after it).
        request["ExclusiveStartKey"] = {"h": {"S": h}, "r": {"S": key(rng)}}
    return request


@pytest.mark.parametrize("seed", range(6))
def test_random_queries_equal_moto_across_pages_and_writes(client: Any, seed: int) -> None:
    rng = random.Random(seed)
    partitions = ["p", "q/1", "é"]
    known: dict[str, set[str]] = {h: set() for h in partitions}
    for _partition in partitions:
        for _ in range(rng.randint(0, 60)):
            random_write(client, rng, partitions, known)
    # One partition with items big enough that a page ends at 1 MB before its Limit.
    for i in range(rng.randint(0, 7)):
        client.put_item(TableName=TABLE, Item=item(rng, "p", f"b{i}", big=True))
    for _ in range(25):
        h = rng.choice([*partitions, "missing"])
        request = random_request(rng, h)
        for _page in range(40):
            answer = both(client, request)
            if "LastEvaluatedKey" not in answer:
                break
            request["ExclusiveStartKey"] = answer["LastEvaluatedKey"]
            for _ in range(rng.choice([0, 0, 1, 3])):
                random_write(client, rng, partitions, known)


def test_keys_deleted_and_put_again_between_pages(client: Any) -> None:
    rng = random.Random(2)
    for r in "abcdefghij":
        client.put_item(TableName=TABLE, Item=item(rng, "p", r))
    request: dict[str, Any] = {
        "TableName": TABLE,
        "KeyConditionExpression": "h = :h",
        "Limit": 3,
        "ExpressionAttributeValues": {":h": {"S": "p"}},
    }
    seen: list[str] = []
    writes = [(["b", "h"], ["h"]), (["e", "f"], ["e", "z"]), (["i"], ["i", "b"]), ([], [])]
    for deleted, put in writes:
        answer = both(client, request)
        seen += [row["r"]["S"] for row in answer["Items"]]
        for r in deleted:
            client.delete_item(TableName=TABLE, Key={"h": {"S": "p"}, "r": {"S": r}})
        for r in put:
            client.put_item(TableName=TABLE, Item=item(rng, "p", r))
        if "LastEvaluatedKey" not in answer:
            break
        request["ExclusiveStartKey"] = answer["LastEvaluatedKey"]
    assert seen == ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "z"]


def test_a_page_ends_at_1_mb_on_an_item_past_the_range_condition(client: Any) -> None:
    """moto walks on past the last matching key and ends the page (LastEvaluatedKey) if an item there would
    take it over 1 MB, or if the Limit is reached."""
    rng = random.Random(4)
    for r in ("a1", "a2", "c1", "c2"):
        client.put_item(TableName=TABLE, Item=item(rng, "p", r, pad=390_000))
    client.put_item(TableName=TABLE, Item=item(rng, "p", "b"))
    for condition, forward in (("r <= :b", True), ("r >= :b", False), ("r BETWEEN :a AND :b", True)):
        for limit in (None, 2, 3):
            request: dict[str, Any] = {
                "TableName": TABLE,
                "KeyConditionExpression": f"h = :h AND {condition}",
                "ExpressionAttributeValues": {
                    ":h": {"S": "p"},
                    ":b": {"S": "b"},
                    **({":a": {"S": "a"}} if ":a" in condition else {}),
                },
                "ScanIndexForward": forward,
                **({"Limit": limit} if limit else {}),
            }
            while "LastEvaluatedKey" in (answer := both(client, request)):
                request["ExclusiveStartKey"] = answer["LastEvaluatedKey"]


def test_legacy_key_conditions_and_select_count(client: Any) -> None:
    rng = random.Random(11)
    for i in range(40):
        client.put_item(TableName=TABLE, Item=item(rng, "p", f"k{i:02d}"))
    for operator, values in [("BEGINS_WITH", ["k1"]), ("BETWEEN", ["k05", "k22"]), ("GT", ["k30"]), ("LE", ["k07"])]:
        for forward in (True, False):
            request: dict[str, Any] = {
                "TableName": TABLE,
                "Limit": 4,
                "ScanIndexForward": forward,
                "KeyConditions": {
                    "h": {"ComparisonOperator": "EQ", "AttributeValueList": [{"S": "p"}]},
                    "r": {"ComparisonOperator": operator, "AttributeValueList": [{"S": v} for v in values]},
                },
            }
            while "LastEvaluatedKey" in (answer := both(client, request)):
                request["ExclusiveStartKey"] = answer["LastEvaluatedKey"]
    count = both(
        client,
        {
            "TableName": TABLE,
            "KeyConditionExpression": "h = :h",
            "Select": "COUNT",
            "ExpressionAttributeValues": {":h": {"S": "p"}},
        },
    )
    assert count["Count"] == 40


def test_draining_a_large_partition_page_by_page(client: Any) -> None:
    """The staging store's drop: a keys-only page, delete it, the next page (the dead keys get swept out);
    then bulk additions between pages (merged by sorting rather than one insertion each)."""
    rng = random.Random(3)
    keys = sorted({f"d/{rng.randrange(10**6):06d}" for _ in range(2200)})
    for start in range(0, len(keys), 25):
        client.batch_write_item(
            RequestItems={TABLE: [{"PutRequest": {"Item": item(rng, "t", k)}} for k in keys[start : start + 25]]}
        )
    request: dict[str, Any] = {
        "TableName": TABLE,
        "KeyConditionExpression": "h = :h",
        "Limit": 200,
        "ExpressionAttributeValues": {":h": {"S": "t"}},
        "ProjectionExpression": "h, r",
    }
    pages = 0
    while True:
        answer = both(client, request)
        pages += 1
        for start in range(0, len(answer["Items"]), 25):
            client.batch_write_item(
                RequestItems={TABLE: [{"DeleteRequest": {"Key": row}} for row in answer["Items"][start : start + 25]]}
            )
        if "LastEvaluatedKey" not in answer:
            break
        request["ExclusiveStartKey"] = answer["LastEvaluatedKey"]
    assert pages == len(keys) // 200 + 1
    del request["ExclusiveStartKey"]
    assert both(client, request)["Count"] == 0

    added = sorted({f"e/{rng.randrange(10**6):06d}" for _ in range(500)})
    request = {
        "TableName": TABLE,
        "KeyConditionExpression": "h = :h AND r >= :a",
        "Limit": 50,
        "ExpressionAttributeValues": {":h": {"S": "t"}, ":a": {"S": "e/3"}},
    }
    for start in range(0, len(added), 25):
        client.batch_write_item(
            RequestItems={TABLE: [{"PutRequest": {"Item": item(rng, "t", k)}} for k in added[start : start + 25]]}
        )
    seen = 0
    while True:
        answer = both(client, request)
        seen += answer["Count"]
        more = [f"e/{rng.randrange(10**6):06d}x" for _ in range(100)]
        for start in range(0, len(more), 25):
            client.batch_write_item(
                RequestItems={TABLE: [{"PutRequest": {"Item": item(rng, "t", k)}} for k in more[start : start + 25]]}
            )
        if "LastEvaluatedKey" not in answer:
            break
        request["ExclusiveStartKey"] = answer["LastEvaluatedKey"]
    assert seen >= len([k for k in added if k >= "e/3"])


def test_other_shapes_fall_back_to_moto(client: Any, moto_calls: Callable[[], int]) -> None:
    """Number range keys and hash-only tables go to moto's query; answers are moto's."""
    client.create_table(
        TableName="numbers",
        KeySchema=[{"AttributeName": "h", "KeyType": "HASH"}, {"AttributeName": "n", "KeyType": "RANGE"}],
        AttributeDefinitions=[
            {"AttributeName": "h", "AttributeType": "S"},
            {"AttributeName": "n", "AttributeType": "N"},
        ],
        BillingMode="PAY_PER_REQUEST",
    )
    client.create_table(
        TableName="single",
        KeySchema=[{"AttributeName": "h", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "h", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    for i in range(12):
        client.put_item(TableName="numbers", Item={"h": {"S": "a"}, "n": {"N": str(i * 7 % 12)}})
        client.put_item(TableName="single", Item={"h": {"S": f"s{i}"}})
    before = moto_calls()
    answer = both(
        client,
        {
            "TableName": "numbers",
            "KeyConditionExpression": "h = :h AND n > :n",
            "Limit": 3,
            "ExpressionAttributeValues": {":h": {"S": "a"}, ":n": {"N": "4"}},
        },
    )
    assert [row["n"]["N"] for row in answer["Items"]] == ["5", "6", "7"]
    assert (
        both(
            client,
            {
                "TableName": "single",
                "KeyConditionExpression": "h = :h",
                "ExpressionAttributeValues": {":h": {"S": "s3"}},
            },
        )["Count"]
        == 1
    )
    # A start key of another partition: left to moto too.
    both(
        client,
        {
            "TableName": TABLE,
            "KeyConditionExpression": "h = :h",
            "ExpressionAttributeValues": {":h": {"S": "a"}},
            "ExclusiveStartKey": {"h": {"S": "b"}, "r": {"S": "x"}},
        },
    )
    assert moto_calls() - before == 6  # each of the three, patched and unpatched


@pytest.fixture
def moto_calls(client: Any, monkeypatch: pytest.MonkeyPatch) -> Callable[[], int]:
    """How many queries went to moto's own implementation since the test began."""
    original = moto_speedups._state["query"]
    count = [0]

    def counted(*args: Any, **kwargs: Any) -> Any:
        count[0] += 1
        return original(*args, **kwargs)

    monkeypatch.setitem(moto_speedups._state, "query", counted)
    return lambda: count[0]


def test_the_stores_queries_take_the_fast_path(client: Any, moto_calls: Callable[[], int]) -> None:
    """The staging store (pages, from_key, drop) and the ref store's listings never reach moto's query."""
    names = TableNames.from_prefix("speedups-")
    create_tables(names, REGION)
    staging = DynamoStagingStore(names, REGION, page_size=50, first_page_size=10)
    refs = DynamoRefStore(names, REGION)
    token = StagingToken("tok")
    entries = [StagedEntry(Key(f"k/{i:04d}"), Entry(f"s3://b/{i}", i, f"e{i}", 1)) for i in range(0, 600, 3)]
    staging.set_many(token, entries)
    staging.delete(token, Key("k/0300"))
    assert [s.key for s in staging.iterate(token)] == [e.key for e in entries if e.key != "k/0300"]
    assert [s.key for s in staging.iterate(token, "k/0500")] == [e.key for e in entries if e.key >= "k/0500"]
    staging.drop(token)
    assert list(staging.iterate(token)) == []
    repo = RepositoryID("repo")
    for i in range(30):
        refs.create_branch(repo, Branch(BranchID(f"b{i:02d}"), CommitID("c"), StagingToken(f"t{i}"), ()))
    assert [b.id for b in refs.list_branches(repo, after="b09", limit=5)] == ["b10", "b11", "b12", "b13", "b14"]
    ids = [CommitID(f"{i:02x}" * 4) for i in range(40)]
    for cid in ids:
        refs.add_commit(repo, Commit(cid, "me", "m", 1, MetaRangeID(""), {}, (), 1))
        refs.create_tag(repo, Tag(TagID(f"t-{cid}"), cid))
    assert refs.list_commit_ids(repo, "1", 10) == sorted(c for c in ids if c.startswith("1"))[:10]
    assert [c.id for c in refs.iterate_commits(repo)] == sorted(ids)
    assert [t.id for t in refs.list_tags(repo, after="t-10101010", limit=3)] == [
        "t-11111111",
        "t-12121212",
        "t-13131313",
    ]
    assert moto_calls() == 0


def test_install_and_uninstall_are_idempotent_and_forget_stale_caches(client: Any) -> None:
    request = {"TableName": TABLE, "KeyConditionExpression": "h = :h", "ExpressionAttributeValues": {":h": {"S": "p"}}}
    rng = random.Random(5)
    for r in ("a", "b", "c"):
        client.put_item(TableName=TABLE, Item=item(rng, "p", r))
    assert [row["r"]["S"] for row in both(client, request)["Items"]] == ["a", "b", "c"]
    moto_speedups.uninstall()
    moto_speedups.uninstall()
    assert not moto_speedups.installed()
    assert Table.query is not moto_speedups._query
    # Unwatched: one key in, one out, so the partition keeps its size.
    client.put_item(TableName=TABLE, Item=item(rng, "p", "d"))
    client.delete_item(TableName=TABLE, Key={"h": {"S": "p"}, "r": {"S": "a"}})
    moto_speedups.install()
    moto_speedups.install()
    assert moto_speedups.installed()
    assert [row["r"]["S"] for row in both(client, request)["Items"]] == ["b", "c", "d"]


def test_attribute_values_serialize_to_the_same_bytes(client: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Answers with every kind of attribute value have the same body, byte for byte, with moto's serializer."""
    from moto.core.serialize import BaseJSONSerializer

    bodies: list[bytes] = []
    client.meta.events.register("after-call.dynamodb", lambda http_response, **_: bodies.append(http_response.content))
    nested = {
        "M": {
            "s": {"S": "x"},
            "l": {"L": [{"N": "1"}, {"NULL": True}, {"M": {}}, {"L": []}]},
            "b": {"BOOL": False},
            "e": {"S": ""},
        }
    }
    rows = [
        {
            "h": {"S": "k"},
            "r": {"S": "1"},
            "n": {"N": "-1.5e3"},
            "m": nested,
            "ss": {"SS": ["b", "a"]},
            "ns": {"NS": ["1", "2.5"]},
            "t": {"BOOL": True},
            "z": {"NULL": True},
            "u": {"S": 'é\u2603\n"'},
        },
        {
            "h": {"S": "k"},
            "r": {"S": "2"},
            "bin": {"B": b"\x00\xff"},
            "bs": {"BS": [b"a", b"b"]},
            "mb": {"M": {"b": {"B": b"z"}}},
            "lb": {"L": [{"S": "x"}, {"B": b"y"}]},
        },
    ]
    for row in rows:
        client.put_item(TableName=TABLE, Item=row)
    calls = [0]
    patched = moto_items._attribute_value

    def counted(value: Any) -> Any:
        calls[0] += 1
        return patched(value)

    monkeypatch.setattr(moto_items, "_attribute_value", counted)

    def requests() -> None:
        client.query(TableName=TABLE, KeyConditionExpression="h = :h", ExpressionAttributeValues={":h": {"S": "k"}})
        client.get_item(TableName=TABLE, Key={"h": {"S": "k"}, "r": {"S": "1"}})
        client.scan(TableName=TABLE)
        client.batch_get_item(RequestItems={TABLE: {"Keys": [{"h": {"S": "k"}, "r": {"S": "2"}}]}})

    bodies.clear()
    requests()
    fast = list(bodies)
    assert calls[0] > 0
    monkeypatch.setattr(BaseJSONSerializer, "_serialize_type_structure", moto_items._saved["serialize_structure"])
    monkeypatch.setattr(BaseJSONSerializer, "_serialize_type_map", moto_items._saved["serialize_map"])
    bodies.clear()
    requests()
    assert fast == bodies
    assert len(fast) == 4


def test_pages_look_items_up_with_moto_s_own_key_objects(client: Any) -> None:
    """The probes a page looks its items up with are the key objects moto keys its partition with (found by
    identity), through puts and deletes; the answers stay moto's."""
    from moto.core import DEFAULT_ACCOUNT_ID
    from moto.dynamodb.models import dynamodb_backends

    rng = random.Random(3)
    for r in ("a", "b", "c"):
        client.put_item(TableName=TABLE, Item=item(rng, "p", r))
    request = {"TableName": TABLE, "KeyConditionExpression": "h = :h", "ExpressionAttributeValues": {":h": {"S": "p"}}}
    both(client, request)
    table = dynamodb_backends[DEFAULT_ACCOUNT_ID][REGION].tables[TABLE]
    partition = table.items[next(key for key in table.items if key.value == "p")]
    entry = table.__dict__["_lakelet_sorted_ranges"].partitions["p"]

    def moto_keys() -> dict[str, int]:
        return {key.value: id(key) for key in partition}

    assert {key: id(probe) for key, probe in entry.probes.items()} == moto_keys()
    client.put_item(TableName=TABLE, Item=item(rng, "p", "d"))  # a new key
    client.put_item(TableName=TABLE, Item=item(rng, "p", "a"))  # an overwrite: moto keeps its key object
    client.delete_item(TableName=TABLE, Key={"h": {"S": "p"}, "r": {"S": "b"}})
    assert [row["r"]["S"] for row in both(client, request)["Items"]] == ["a", "c", "d"]
    assert {key: id(probe) for key, probe in entry.probes.items()} == moto_keys()
