"""The witness of the stack's branch and tag tables (lakelet/stack/table_writes.py, issue 43): which requests count
as writes of which table, that they count only once answered, and, in a running stack, that branch reads are
answered without a GetItem until a write of the table, whoever sends it."""

from __future__ import annotations

import copy
import io
import json
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Self

import boto3
import pytest
import requests
from botocore.exceptions import ClientError

from lakelet.stack import inprocess_aws, inprocess_direct
from lakelet.stack.app_environment import Credentials
from lakelet.stack.local import LOCAL_BUCKET, LocalStack
from lakelet.stack.table_writes import TableWrites
from tests.lakelet.ddb_tables import create_keyed_table

BRANCHES, TAGS = "p-branches", "p-tags"


def _environ(
    body: bytes = b"", method: str = "POST", path: str = "/", service: str = "dynamodb", target: str = ""
) -> dict[str, Any]:
    environ: dict[str, Any] = {
        "REQUEST_METHOD": method,
        "PATH_INFO": path,
        "QUERY_STRING": "",
        "CONTENT_LENGTH": str(len(body)),
        "wsgi.input": io.BytesIO(body),
        "HTTP_AUTHORIZATION": f"AWS4-HMAC-SHA256 Credential=AKIA/20261202/us-east-1/{service}/aws4_request, "
        "SignedHeaders=host, Signature=0",
    }
    if target:
        environ["HTTP_X_AMZ_TARGET"] = target
        environ["CONTENT_TYPE"] = "application/x-amz-json-1.0"
    elif body.startswith(b"Action="):
        environ["CONTENT_TYPE"] = "application/x-www-form-urlencoded"
    return environ


def _dynamodb(action: str, document: dict[str, Any]) -> dict[str, Any]:
    return _environ(json.dumps(document).encode(), target=f"DynamoDB_20120810.{action}")


class _App:
    """moto's stand-in: answers, reads the whole body, and can look at the witnesses while it answers."""

    def __init__(self, during: Callable[[], None] = lambda: None) -> None:
        self.bodies: list[bytes] = []
        self.during = during

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        self.bodies.append(environ["wsgi.input"].read())
        self.during()
        start_response("200 OK", [])
        return [b"{}"]


def _counted(layer: TableWrites, environ: dict[str, Any]) -> set[str]:
    marks = {table: layer.witness(table).mark() for table in (BRANCHES, TAGS)}
    assert list(layer(environ, lambda *_: None)) == [b"{}"]
    return {table for table, mark in marks.items() if not layer.witness(table).unchanged_since(mark)}


@pytest.mark.parametrize(
    ("environ", "tables"),
    [
        (_dynamodb("PutItem", {"TableName": BRANCHES, "Item": {}}), {BRANCHES}),
        (_dynamodb("PutItem", {"TableName": "p-staging", "Item": {}}), set()),
        (_dynamodb("UpdateItem", {"TableName": TAGS, "Key": {}}), {TAGS}),
        (_dynamodb("BatchWriteItem", {"RequestItems": {BRANCHES: [], "p-commits": []}}), {BRANCHES}),
        (_dynamodb("TransactWriteItems", {"TransactItems": [{"Put": {"TableName": TAGS}}, {"Delete": {}}]}), {TAGS}),
        (_dynamodb("ExecuteStatement", {"Statement": f'DELETE FROM "{BRANCHES}" WHERE a = 1'}), {BRANCHES}),
        (_dynamodb("DeleteTable", {"TableName": TAGS}), {TAGS}),
        # A name spelled with JSON escapes would not be found: every table counts.
        (_dynamodb("PutItem", {"TableName": "p-br\\u0061nches"}), {BRANCHES, TAGS}),
        # Reads count for nothing, nor does S3, whatever it names.
        (_dynamodb("GetItem", {"TableName": BRANCHES, "Key": {}}), set()),
        (_dynamodb("Query", {"TableName": BRANCHES}), set()),
        (_environ(BRANCHES.encode(), method="PUT", path=f"/bucket/{BRANCHES}", service="s3"), set()),
        (_environ(method="GET", path="/bucket/k", service="s3"), set()),
        # moto's own API (a reset wipes every table) and any other service's writes count for every table.
        (_environ(method="POST", path="/moto-api/reset", service="none"), {BRANCHES, TAGS}),
        (_environ(method="GET", path="/moto-api/data.json", service="none"), set()),
        (_environ(b"Action=CreateRole&RoleName=r", service="iam"), {BRANCHES, TAGS}),
        (_environ(b"Action=GetRole&RoleName=r", service="iam"), set()),
    ],
)
def test_which_requests_count_for_which_table(environ: dict[str, Any], tables: set[str]) -> None:
    body = environ["wsgi.input"].getvalue()
    app = _App()
    assert _counted(TableWrites(app, (BRANCHES, TAGS)), environ) == tables
    assert app.bodies == [body]  # moto reads the body the layer may have read first


def test_a_write_counts_once_answered_even_when_moto_fails() -> None:
    seen: list[bool] = []
    layer: TableWrites

    def look() -> None:
        seen.append(layer.witness(BRANCHES).unchanged_since(mark))

    layer = TableWrites(_App(look), (BRANCHES, TAGS))
    mark = layer.witness(BRANCHES).mark()
    _counted(layer, _dynamodb("PutItem", {"TableName": BRANCHES}))
    assert seen == [True]  # not yet while moto answers: the change may not be visible
    assert not layer.witness(BRANCHES).unchanged_since(mark)

    def fail(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        raise RuntimeError("moto failed half way")

    failing = TableWrites(fail, (BRANCHES,))
    mark = failing.witness(BRANCHES).mark()
    with pytest.raises(RuntimeError):
        failing(_dynamodb("PutItem", {"TableName": BRANCHES}), lambda *_: None)
    assert not failing.witness(BRANCHES).unchanged_since(mark)


# ---- in a running stack -------------------------------------------------------------------------------------

KEYS = Credentials("AKIATABLEWRITESTEST", "table/writes+secret")
REPO = "witnessed"


@pytest.fixture(scope="module")
def stack() -> Iterator[LocalStack]:
    with LocalStack(api_port=0, credentials=KEYS) as running:
        _api(running, "POST", "/repositories", 201, {"name": REPO, "storage_namespace": f"s3://{LOCAL_BUCKET}/{REPO}"})
        yield running


def _api(stack: LocalStack, method: str, path: str, status: int, body: Any = None, **kwargs: Any) -> Any:
    auth = (KEYS.access_key_id, KEYS.secret_access_key)
    response = requests.request(method, stack.api_url + path, json=body, auth=auth, timeout=30, **kwargs)
    assert response.status_code == status, response.text
    return response


class _BranchReads:
    """Counts the GetItem requests on the branch table the stack's own clients send (inprocess_aws reads the
    server's app per call)."""

    def __init__(self, stack: LocalStack) -> None:
        moto: Any = stack._moto
        self.server = moto._server
        self.app = self.server.app
        self.count = 0

    def __enter__(self) -> Self:
        def counting(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
            if environ.get("HTTP_X_AMZ_TARGET", "").endswith(".GetItem"):
                length = int(environ.get("CONTENT_LENGTH") or 0)
                body = environ["wsgi.input"].read(length)
                environ["wsgi.input"] = io.BytesIO(body)
                self.count += b"-branches" in body
            return self.app(environ, start_response)

        self.server.app = counting
        return self

    def __exit__(self, *_: object) -> None:
        self.server.app = self.app


@pytest.mark.e2e
def test_uploads_and_reads_of_a_branch_no_write_moved_read_it_once(stack: LocalStack) -> None:
    path = f"/repositories/{REPO}/branches/main/objects"
    with _BranchReads(stack) as reads:
        calls = inprocess_aws.counters["in_process"]
        for i in range(5):
            _api(stack, "POST", path, 201, params={"path": f"k{i}"}, files={"content": b"x"})
        # Each upload: the object and its staged row (one key in 16 also sketched), no branch re-check; and the
        # first branch read (none if an earlier test's read is still good).
        uploads, calls = inprocess_aws.counters["in_process"] - calls, inprocess_aws.counters["in_process"]
        assert reads.count <= 1 and 5 * 2 <= uploads <= 5 * 2 + 5 + 1
        for i in range(5):
            _api(stack, "GET", f"/repositories/{REPO}/refs/main/objects/stat", 200, params={"path": f"k{i}"})
        # Each: its staged row, no branch read (and, once, a request on the bucket).
        assert 5 <= inprocess_aws.counters["in_process"] - calls <= 5 + 1
        assert reads.count <= 1
        _api(stack, "POST", f"/repositories/{REPO}/branches/main/commits", 201, {"message": "five"})
        reads.count = 0
        _api(stack, "GET", f"/repositories/{REPO}/refs/main/commits", 200)
        assert reads.count == 1  # the commit moved the branch: read once again
        _api(stack, "GET", f"/repositories/{REPO}/refs/main/commits", 200)
        assert reads.count == 1


@pytest.mark.e2e
def test_a_write_from_outside_the_api_is_seen_by_the_next_read(stack: LocalStack) -> None:
    """Another process over moto's port (here a client of this one; its request takes the same chain)."""
    _api(stack, "POST", f"/repositories/{REPO}/branches", 201, {"name": "outside", "source": "main"})
    _api(stack, "GET", f"/repositories/{REPO}/branches/outside", 200)
    _api(stack, "GET", f"/repositories/{REPO}/branches/outside", 200)
    keys = stack.aws_credentials
    dynamodb = boto3.client(
        "dynamodb",
        endpoint_url=stack.moto_url,
        region_name=stack.region,
        aws_access_key_id=keys.access_key_id,
        aws_secret_access_key=keys.secret_access_key,
    )
    table = f"{stack.table_prefix}branches"
    items = dynamodb.scan(TableName=table)["Items"]
    (item,) = [item for item in items if "outside" in json.dumps(item)]
    key_names = [key["AttributeName"] for key in dynamodb.describe_table(TableName=table)["Table"]["KeySchema"]]
    dynamodb.delete_item(TableName=table, Key={name: item[name] for name in key_names})
    _api(stack, "GET", f"/repositories/{REPO}/branches/outside", 404)
    _api(stack, "GET", f"/repositories/{REPO}/branches/outside", 404)
    # Missing was remembered; the API's own creation is seen too.
    _api(stack, "POST", f"/repositories/{REPO}/branches", 201, {"name": "outside", "source": "main"})
    _api(stack, "GET", f"/repositories/{REPO}/branches/outside", 200)


@pytest.mark.e2e
def test_a_cancelled_transaction_keeps_an_item_put_beside_it(
    stack: LocalStack, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without a data directory moto's writes still run one at a time (middleware.WriteLock), the stack's own put
    past the WSGI chain included: moto's cancelled transaction puts back a copy of its table taken at its start."""
    assert stack.data_dir is None
    client = boto3.client(
        "dynamodb",
        region_name=stack.region,
        endpoint_url=stack.moto_url,
        aws_access_key_id=stack.aws_credentials.access_key_id,
        aws_secret_access_key=stack.aws_credentials.secret_access_key,
    )
    create_keyed_table(client, "serialized")
    client.put_item(TableName="serialized", Item={"h": {"S": "a"}, "r": {"S": "exists"}})
    copied, put_done = threading.Event(), threading.Event()
    deepcopy = copy.deepcopy

    def held(value: Any, memo: Any = None) -> Any:
        made = deepcopy(value, memo)
        if type(value).__name__ == "Table" and not copied.is_set():
            copied.set()  # moto's copy of the table, taken at the transaction's start: let the put try now
            put_done.wait(2)  # the put waits for the transaction instead (never set in time: 2 s)
        return made

    monkeypatch.setattr(copy, "deepcopy", held)
    failures: list[str] = []

    def cancelled() -> None:
        try:
            client.transact_write_items(
                TransactItems=[
                    {
                        "Put": {
                            "TableName": "serialized",
                            "Item": {"h": {"S": "a"}, "r": {"S": "exists"}},
                            "ConditionExpression": "attribute_not_exists(h)",
                        }
                    }
                ]
            )
        except ClientError as e:
            failures.append(e.response["Error"]["Code"])

    transaction = threading.Thread(target=cancelled)
    transaction.start()
    assert copied.wait(10)
    direct = inprocess_direct.counters["direct"]
    client.put_item(TableName="serialized", Item={"h": {"S": "a"}, "r": {"S": "beside"}})
    assert inprocess_direct.counters["direct"] == direct + 1  # the stack's own plain put, past the WSGI chain
    put_done.set()
    transaction.join(10)
    monkeypatch.setattr(copy, "deepcopy", deepcopy)
    assert failures == ["TransactionCanceledException"]
    kept = client.get_item(TableName="serialized", Key={"h": {"S": "a"}, "r": {"S": "beside"}})
    assert "Item" in kept
