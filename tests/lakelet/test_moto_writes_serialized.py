"""Without a data directory the stack still answers moto's state-changing requests one at a time
(lakelet/persistence/middleware.py ``WriteLock``), as the journal's lock does with one, its own writes past the WSGI
chain included (inprocess_direct.py): a TransactWriteItems that moto cancels puts back copies of its tables taken at
its start, which dropped an item put meanwhile.
"""

from __future__ import annotations

import copy
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError

from lakelet.persistence.middleware import WriteLock
from lakelet.stack import inprocess_direct
from lakelet.stack.app_environment import Credentials
from lakelet.stack.local import LocalStack
from tests.lakelet.ddb_tables import create_keyed_table
from tests.lakelet.test_table_writes import _dynamodb, _environ

KEYS = Credentials("AKIASERIALIZEDWRITES", "serialized/writes+secret")


class _Overlaps:
    """moto's stand-in: each request sleeps a little; records how many writes and reads ran at once."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.writes = 0
        self.reads = 0
        self.most_writes = 0
        self.read_beside_write = False

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        write = environ["REQUEST_METHOD"] == "POST"
        with self.lock:
            if write:
                self.writes += 1
                self.most_writes = max(self.most_writes, self.writes)
            else:
                self.reads += 1
            self.read_beside_write |= self.writes > 0 and self.reads > 0
        time.sleep(0.02)
        with self.lock:
            if write:
                self.writes -= 1
            else:
                self.reads -= 1
        start_response("200 OK", [])
        return [b"{}"]


def test_writes_run_one_at_a_time_and_reads_beside_them() -> None:
    app = _Overlaps()
    layer = WriteLock().wrap(app)

    def send(environ: dict[str, Any]) -> None:
        assert list(layer(environ, lambda *_: None)) == [b"{}"]

    writes = [_dynamodb("PutItem", {"TableName": "t"}) for _ in range(6)]
    reads = [_environ(method="GET", path="/bucket/key", service="s3") for _ in range(6)]
    threads = [threading.Thread(target=send, args=(environ,)) for environ in writes + reads]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert app.most_writes == 1
    assert app.read_beside_write


@pytest.fixture(scope="module")
def stack() -> Iterator[LocalStack]:
    with LocalStack(api_port=0, credentials=KEYS) as running:
        assert running.data_dir is None
        yield running


def test_a_cancelled_transaction_keeps_an_item_put_beside_it(
    stack: LocalStack, monkeypatch: pytest.MonkeyPatch
) -> None:
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
