"""The stack's own DynamoDB calls through the short pipeline (lakelet/stack/inprocess_lean.py, issue 43) answer
and fail exactly as botocore's whole pipeline does over moto's port: same parsed answers (binary values, pages,
returned items), same errors with their modeled fields, same client-side validation; and only they take it."""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable, Iterator
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError, ParamValidationError

from lakelet.stack import inprocess_lean
from lakelet.stack.app_environment import Credentials
from lakelet.stack.local import LOCAL_BUCKET, LocalStack
from tests.lakelet.ddb_tables import create_keyed_table

pytestmark = pytest.mark.e2e  # starts the embedded stack (moto and the API), in this process

KEYS = Credentials("AKIALEANDYNAMODBTEST", "lean/dynamodb+secret")
TABLE = "pipeline-check"


@pytest.fixture(scope="module")
def stack() -> Iterator[LocalStack]:
    with LocalStack(api_port=0, credentials=KEYS) as running:
        create_keyed_table(_client(running, over_the_port=True), TABLE)
        yield running
    assert not inprocess_lean.installed()


def _client(stack: LocalStack, over_the_port: bool = False, service: str = "dynamodb") -> Any:
    """The stack's key; in process, or over moto's port (another spelling of its host is not answered in process,
    so botocore's whole pipeline sends it, signed, over the socket)."""
    keys = stack.aws_credentials
    url = stack.moto_url.replace("127.0.0.1", "localhost") if over_the_port else stack.moto_url
    return boto3.client(
        service,
        endpoint_url=url,
        region_name=stack.region,
        aws_access_key_id=keys.access_key_id,
        aws_secret_access_key=keys.secret_access_key,
    )


def _answer(call: Callable[[], Any]) -> Any:
    """The parsed answer without its metadata (request ids differ) and an object's time, a streamed body read, or
    the error's code, message and fields."""
    try:
        answer = dict(call())
    except ClientError as error:
        response = {k: v for k, v in error.response.items() if k != "ResponseMetadata"}
        return (type(error).__name__, response)
    answer.pop("ResponseMetadata", None)
    answer.pop("LastModified", None)
    if "Body" in answer:
        answer["Body"] = answer["Body"].read()
    return answer


def _both(stack: LocalStack, calls: Callable[[Any, str], list[Callable[[], Any]]], service: str = "dynamodb") -> None:
    """Runs the same calls through each pipeline, each on its own name, and compares what they return."""
    lean, whole = _client(stack, service=service), _client(stack, over_the_port=True, service=service)
    before = inprocess_lean.counters["lean"]
    by_lean = [_answer(call) for call in calls(lean, "alpha")]
    assert inprocess_lean.counters["lean"] - before == len(by_lean)
    by_whole = [_answer(call) for call in calls(whole, "omega")]
    assert inprocess_lean.counters["lean"] - before == len(by_lean)  # the port's calls took the whole pipeline
    assert _renamed(by_lean, "alpha") == _renamed(by_whole, "omega")


def _renamed(value: Any, name: str) -> Any:
    if isinstance(value, str):
        return value.replace(name, "HASH")
    if isinstance(value, dict):
        return {_renamed(k, name): _renamed(v, name) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_renamed(v, name) for v in value)
    return value


def test_items_pages_and_returned_values_are_the_whole_pipelines(stack: LocalStack) -> None:
    def calls(c: Any, h: str) -> list[Callable[[], Any]]:
        nested = {"M": {"x": {"L": [{"NULL": True}]}}}
        item = {"h": {"S": h}, "r": {"S": "1"}, "blob": {"B": b"\x00\xffbytes"}, "n": {"N": "7"}, "m": nested}
        return [
            lambda: c.put_item(TableName=TABLE, Item=item, ReturnValues="ALL_OLD"),
            lambda: c.put_item(TableName=TABLE, Item={**item, "n": {"N": "8"}}, ReturnValues="ALL_OLD"),
            lambda: c.get_item(TableName=TABLE, Key={"h": {"S": h}, "r": {"S": "1"}}, ConsistentRead=True),
            lambda: c.get_item(TableName=TABLE, Key={"h": {"S": h}, "r": {"S": "missing"}}),
            lambda: c.update_item(
                TableName=TABLE,
                Key={"h": {"S": h}, "r": {"S": "1"}},
                UpdateExpression="SET n = n + :one, s = :s",
                ExpressionAttributeValues={":one": {"N": "1"}, ":s": {"SS": ["a", "b"]}},
                ReturnValues="ALL_NEW",
            ),
            lambda: c.batch_write_item(
                RequestItems={
                    TABLE: [{"PutRequest": {"Item": {"h": {"S": h}, "r": {"S": f"{i}"}}}} for i in range(2, 6)]
                }
            ),
            lambda: c.query(
                TableName=TABLE,
                KeyConditionExpression="h = :h",
                ExpressionAttributeValues={":h": {"S": h}},
                Limit=2,
                ConsistentRead=True,
            ),
            lambda: c.query(
                TableName=TABLE,
                KeyConditionExpression="h = :h AND r > :r",
                ExpressionAttributeValues={":h": {"S": h}, ":r": {"S": "2"}},
                ExclusiveStartKey={"h": {"S": h}, "r": {"S": "3"}},
                Select="COUNT",
            ),
            lambda: c.batch_get_item(RequestItems={TABLE: {"Keys": [{"h": {"S": h}, "r": {"S": "1"}}]}}),
            lambda: c.delete_item(TableName=TABLE, Key={"h": {"S": h}, "r": {"S": "5"}}, ReturnValues="ALL_OLD"),
            lambda: c.describe_table(TableName=TABLE)["Table"]["KeySchema"],
        ]

    _both(stack, calls)


def test_errors_and_their_modeled_fields_are_the_whole_pipelines(stack: LocalStack) -> None:
    def calls(c: Any, h: str) -> list[Callable[[], Any]]:
        key = {"h": {"S": h}, "r": {"S": "e"}}
        return [
            lambda: c.put_item(TableName=TABLE, Item={**key, "v": {"S": "1"}}),
            lambda: c.put_item(
                TableName=TABLE,
                Item={**key, "v": {"S": "2"}},
                ConditionExpression="attribute_not_exists(h)",
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
            ),
            # No ClientRequestToken: botocore's parameter event gives it one, in both pipelines.
            lambda: c.transact_write_items(
                TransactItems=[
                    {"Put": {"TableName": TABLE, "Item": {"h": {"S": h}, "r": {"S": "t"}}}},
                    {
                        "ConditionCheck": {
                            "TableName": TABLE,
                            "Key": key,
                            "ConditionExpression": "v = :x",
                            "ExpressionAttributeValues": {":x": {"S": "no"}},
                            "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
                        }
                    },
                ]
            ),
            lambda: c.get_item(TableName="no-such-table", Key=key),
            lambda: c.query(TableName=TABLE, KeyConditionExpression="nonsense ((", ExpressionAttributeValues={}),
        ]

    _both(stack, calls)


def test_parameters_are_validated_before_anything_is_sent(stack: LocalStack) -> None:
    before = inprocess_lean.counters["lean"]
    for client in (_client(stack), _client(stack, over_the_port=True)):
        with pytest.raises(ParamValidationError, match="TableName"):
            client.put_item(Item={"h": {"S": "x"}})
    assert inprocess_lean.counters["lean"] - before == 1  # entered the short pipeline, refused before sending


def test_objects_ranges_and_their_errors_are_the_whole_pipelines(stack: LocalStack) -> None:
    body = bytes(range(256)) * 5
    digest = base64.b64encode(hashlib.md5(body).digest()).decode()

    def calls(c: Any, h: str) -> list[Callable[[], Any]]:
        key = f"{h}/a b+ü%?#//x"
        return [
            lambda: c.put_object(
                Bucket=LOCAL_BUCKET, Key=key, Body=body, ContentMD5=digest, Metadata={"m": h}, ContentType="text/x"
            ),
            lambda: c.put_object(Bucket=LOCAL_BUCKET, Key=key, Body=b"other", IfNoneMatch="*"),
            lambda: c.put_object(Bucket=LOCAL_BUCKET, Key=f"{h}/bad", Body=b"x", ContentMD5=digest),
            lambda: c.put_object(Bucket="no-such-bucket", Key=key, Body=b"x"),
            lambda: c.head_object(Bucket=LOCAL_BUCKET, Key=key),
            lambda: c.head_object(Bucket=LOCAL_BUCKET, Key=f"{h}/missing"),
            lambda: c.get_object(Bucket=LOCAL_BUCKET, Key=key),
            lambda: c.get_object(Bucket=LOCAL_BUCKET, Key=key, Range="bytes=10-19"),
            lambda: c.get_object(Bucket=LOCAL_BUCKET, Key=key, Range="bytes=5000-"),
            lambda: c.get_object(Bucket=LOCAL_BUCKET, Key=f"{h}/missing"),
            lambda: c.get_object(Bucket="no-such-bucket", Key=key),
            lambda: c.put_object(Bucket=LOCAL_BUCKET, Key=f"{h}/empty", Body=b""),
            lambda: c.get_object(Bucket=LOCAL_BUCKET, Key=f"{h}/empty"),
        ]

    _both(stack, calls, service="s3")


def test_only_the_stacks_own_calls_of_dynamodb_and_s3_objects_take_it_and_handlers_still_run(
    stack: LocalStack,
) -> None:
    before = inprocess_lean.counters["lean"]
    s3 = _client(stack, service="s3")
    s3.list_objects_v2(Bucket=LOCAL_BUCKET, Prefix="lean")  # not an object call: the whole pipeline
    _client(stack, over_the_port=True, service="s3").put_object(Bucket=LOCAL_BUCKET, Key="lean", Body=b"x")
    other = boto3.client(
        "dynamodb",
        endpoint_url=stack.moto_url,
        region_name=stack.region,
        aws_access_key_id="AKIAOTHER",
        aws_secret_access_key="x",
    )
    with pytest.raises(ClientError):
        other.list_tables()  # another key: the whole pipeline, and the guard refuses it as before
    assert inprocess_lean.counters["lean"] == before
    seen: list[str] = []
    lean = _client(stack)
    lean.meta.events.register("before-call.dynamodb", lambda model, **_: seen.append(f"call {model.name}"))
    lean.meta.events.register("after-call.dynamodb", lambda model, **_: seen.append(f"done {model.name}"))
    lean.list_tables()
    assert seen == ["call ListTables", "done ListTables"]
    assert inprocess_lean.counters["lean"] == before + 1


def test_the_parameter_events_still_fill_the_idempotency_token(stack: LocalStack) -> None:
    """botocore gives a TransactWriteItems without ClientRequestToken one (before-parameter-build), in both
    pipelines: seen in the body each sends."""
    bodies: list[bytes] = []
    for client in (_client(stack), _client(stack, over_the_port=True)):
        client.meta.events.register("before-send.dynamodb", lambda request, **_: bodies.append(request.body))
        client.transact_write_items(
            TransactItems=[{"Put": {"TableName": TABLE, "Item": {"h": {"S": "token"}, "r": {"S": "1"}}}}]
        )
    assert len(bodies) == 2 and all(b'"ClientRequestToken"' in body for body in bodies)
