"""``lakelet up --aws-limits``: past AWS's size limits the local stack answers as the deployed one does, through the
official lakeFS client, boto3 and plain HTTP, and nothing is half-done (numbers: lakelet/stack/aws_limits.py)."""

from __future__ import annotations

import base64
import json
import os
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import boto3
import lakefs
import pytest
from botocore.config import Config as BotoConfig
from botocore.exceptions import ClientError
from lakefs.client import Client
from lakefs.exceptions import ServerException

from infra.build import gateway_responses
from lakelet.stack.app_environment import Credentials
from lakelet.stack.aws_limits import (
    API_GATEWAY_BODY_BYTES,
    DATA_LIMIT_ERROR,
    GATEWAY_RESPONSE_BODY,
    INTERNAL_SERVER_ERROR,
    LAMBDA_REQUEST_BYTES,
    REQUEST_TOO_LONG,
    STATE_PAYLOAD_BYTES,
    URL_REQUEST_TOO_LARGE,
    AwsLimits,
)
from lakelet.stack.local import LocalStack

KEYS = Credentials("AKIAIOSFODNN7LIMITS01", "limits-secret-key")
MIB = 1024 * 1024
_NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))


@pytest.fixture(scope="module")
def stack() -> Iterator[LocalStack]:
    with LocalStack(api_port=0, credentials=KEYS, aws_limits=AwsLimits.deployed()) as running:
        yield running


@pytest.fixture(scope="module")
def repo(stack: LocalStack) -> lakefs.Repository:
    client = Client(host=stack.endpoint, username=KEYS.access_key_id, password=KEYS.secret_access_key)
    return lakefs.Repository("limits", client=client).create(
        storage_namespace=f"{stack.default_namespace_prefix}/limits"
    )


def _s3(stack: LocalStack) -> Any:
    return boto3.client(
        "s3",
        endpoint_url=stack.s3_url,
        region_name="us-east-1",
        aws_access_key_id=KEYS.access_key_id,
        aws_secret_access_key=KEYS.secret_access_key,
        config=BotoConfig(retries={"max_attempts": 1}),
    )


def _json(raw: bytes) -> Any:
    try:
        return json.loads(raw or b"{}")
    except ValueError:
        return raw.decode(errors="replace")  # a branch's creation answers its commit id as text


def _http(method: str, url: str, body: bytes, content_type: str) -> tuple[int, Any]:
    request = urllib.request.Request(url, data=body, method=method)
    token = base64.b64encode(f"{KEYS.access_key_id}:{KEYS.secret_access_key}".encode()).decode()
    request.add_header("Authorization", f"Basic {token}")
    request.add_header("Content-Type", content_type)
    try:
        with _NO_PROXY.open(request, timeout=60) as response:
            return int(response.status), _json(response.read())
    except urllib.error.HTTPError as error:
        return error.code, _json(error.read())


def _staged_paths(repo: lakefs.Repository, branch: str = "main") -> list[str]:
    return [change.path for change in repo.branch(branch).uncommitted()]


def test_the_answers_are_the_deployed_templates_gateway_responses() -> None:
    """The 413/504/502 bodies are what the packaged template makes API Gateway answer, not a local invention."""
    templates = {
        r["Properties"]["ResponseType"]: r["Properties"]["ResponseTemplates"]["application/json"]
        for r in gateway_responses().values()
    }
    shaped = json.dumps({"message": GATEWAY_RESPONSE_BODY.format(type="$context.error.responseType")})
    assert json.loads(templates["DEFAULT_4XX"]) == json.loads(shaped)
    assert json.loads(templates["DEFAULT_5XX"]) == json.loads(shaped)


def test_a_7_mib_upload_through_the_api_is_refused_413_and_stores_nothing(repo: lakefs.Repository) -> None:
    # 7 MiB of octet-stream is 9.3 MB once base64-encoded into the Lambda's event: over its 6 MB. (The client
    # uploads presigned by default, as the stack offers it; pre_sign=False sends the bytes through the API.)
    data = os.urandom(7 * MIB)
    with pytest.raises(ServerException) as refused:
        repo.branch("main").object("big/seven.bin").upload(
            data=data, content_type="application/octet-stream", pre_sign=False
        )
    status, body = REQUEST_TOO_LONG
    assert refused.value.status_code == status
    assert refused.value.body == body  # the client parses the JSON answer
    assert "big/seven.bin" not in _staged_paths(repo)
    assert not repo.branch("main").object("big/seven.bin").exists()


def test_an_upload_that_fits_the_event_base64_included_goes_through(repo: lakefs.Repository) -> None:
    # 4 MiB is 5.6 MB once base64-encoded: under the 6 MB event, so deployed it uploads through the API.
    data = os.urandom(4 * MIB)
    repo.branch("main").object("fits/four.bin").upload(
        data=data, content_type="application/octet-stream", pre_sign=False
    )
    assert repo.branch("main").object("fits/four.bin").reader(mode="rb").read() == data


def test_a_body_over_api_gateways_10_mb_is_refused_413_before_the_app(
    stack: LocalStack, repo: lakefs.Repository
) -> None:
    url = f"{stack.api_url}/repositories/limits/branches/main/objects?path=big/eleven.bin"
    status, body = _http("POST", url, b"x" * (API_GATEWAY_BODY_BYTES + 1), "application/octet-stream")
    assert (status, body) == REQUEST_TOO_LONG
    assert "big/eleven.bin" not in _staged_paths(repo)
    # The connection is still usable for the next request (the body was read, not left in the stream).
    assert repo.branch("main").head.id


def test_a_json_body_travels_base64_too(stack: LocalStack) -> None:
    """app.py lists ``*/*`` as binary, so API Gateway base64-encodes every body, JSON included: 4.4 MiB of JSON
    (5.9 MB encoded) reaches the app, 4.6 MiB (6.1 MB encoded) does not."""
    url = f"{stack.api_url}/repositories/limits/branches"

    def body(size: int) -> bytes:
        return json.dumps({"name": "b", "source": "main", "x": "p" * size}).encode()

    status, answer = _http("POST", url, body(int(4.4 * MIB)), "application/json")
    assert status != REQUEST_TOO_LONG[0], answer  # reached the app, which judges the body itself
    assert _http("POST", url, body(int(4.6 * MIB)), "application/json") == REQUEST_TOO_LONG
    assert int(4.6 * MIB) * 4 / 3 > LAMBDA_REQUEST_BYTES


def test_an_api_answer_over_6_mb_is_a_502_and_the_object_is_untouched(repo: lakefs.Repository) -> None:
    """A 5 MiB object (uploaded presigned, as a deployed user would) read back through the API: 6.7 MB of base64
    in the Lambda's result, which API Gateway answers 502; a ranged read and a presigned read still work."""
    data = os.urandom(5 * MIB)
    main = repo.branch("main")
    main.object("big/five.bin").upload(data=data, content_type="application/octet-stream", pre_sign=True)
    with pytest.raises(ServerException) as failed:
        main.object("big/five.bin").reader(mode="rb", pre_sign=False).read()
    assert failed.value.status_code == INTERNAL_SERVER_ERROR[0]
    with main.object("big/five.bin").reader(mode="rb", pre_sign=False) as reader:
        reader.seek(MIB)
        assert reader.read(MIB) == data[MIB : 2 * MIB]
    assert main.object("big/five.bin").reader(mode="rb", pre_sign=True).read() == data


def test_a_whole_5_mib_gateway_get_gets_invalid_request_and_ranges_work(
    stack: LocalStack, repo: lakefs.Repository
) -> None:
    data = os.urandom(5 * MIB)
    repo.branch("main").object("gw/five.bin").upload(data=data, content_type="application/octet-stream", pre_sign=True)
    s3 = _s3(stack)
    with pytest.raises(ClientError) as refused:
        s3.get_object(Bucket="limits", Key="main/gw/five.bin")
    assert refused.value.response["Error"]["Code"] == "InvalidRequest"
    assert refused.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400
    part = s3.get_object(Bucket="limits", Key="main/gw/five.bin", Range=f"bytes=0-{4 * MIB - 1}")["Body"].read()
    assert part == data[: 4 * MIB]


def test_a_5_mib_gateway_put_is_refused_413_and_nothing_is_written(stack: LocalStack, repo: lakefs.Repository) -> None:
    s3 = _s3(stack)
    with pytest.raises(ClientError) as refused:
        s3.put_object(Bucket="limits", Key="main/gw/put-five.bin", Body=os.urandom(5 * MIB))
    assert refused.value.response["ResponseMetadata"]["HTTPStatusCode"] == URL_REQUEST_TOO_LARGE[0]
    assert "gw/put-five.bin" not in _staged_paths(repo)
    # 4 MiB parts of a multipart upload fit (5.6 MB of base64 each), as docs/s3-gateway.md tells clients.
    s3.put_object(Bucket="limits", Key="main/gw/put-four.bin", Body=os.urandom(4 * MIB))
    assert "gw/put-four.bin" in _staged_paths(repo)


def _dynamodb(stack: LocalStack) -> Any:
    keys = stack.aws_credentials
    return boto3.client(
        "dynamodb",
        endpoint_url=stack.moto_url,
        region_name=stack.region,
        aws_access_key_id=keys.access_key_id,
        aws_secret_access_key=keys.secret_access_key,
    )


def test_dynamodb_refuses_a_big_item_and_a_transaction_over_4_mb_writing_nothing(stack: LocalStack) -> None:
    ddb = _dynamodb(stack)
    ddb.create_table(
        TableName="limits-probe",
        KeySchema=[{"AttributeName": "k", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "k", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    with pytest.raises(ClientError) as big:
        ddb.put_item(TableName="limits-probe", Item={"k": {"S": "big"}, "v": {"S": "x" * 410_000}})
    assert big.value.response["Error"]["Code"] == "ValidationException"  # moto's own 400 KB check
    # Eleven items of 380 KB: each fits, together they pass the transaction's 4 MB.
    puts = [
        {"Put": {"TableName": "limits-probe", "Item": {"k": {"S": f"t{i}"}, "v": {"S": "y" * 380_000}}}}
        for i in range(11)
    ]
    with pytest.raises(ClientError) as refused:
        ddb.transact_write_items(TransactItems=puts)
    assert refused.value.response["Error"]["Code"] == "ValidationException"
    assert "4 MB" in refused.value.response["Error"]["Message"]

    def stored() -> int:  # a scan page stops at 1 MB: look each key up
        return sum("Item" in ddb.get_item(TableName="limits-probe", Key={"k": {"S": f"t{i}"}}) for i in range(11))

    assert stored() == 0
    ddb.transact_write_items(TransactItems=puts[:5])  # 1.9 MB: written
    assert stored() == 5


def test_a_state_over_256_kib_fails_the_workflow_past_its_catch(stack: LocalStack, repo: lakefs.Repository) -> None:
    """A Seal whose result is over Step Functions' 256 KiB: States.DataLimitExceeded, which AWS's States.ALL does not
    catch, so the execution fails at once (no retry, no Failed state). The seal itself happened: the sealed change
    is still there and the next commit takes it."""
    from chalicelib.workflows import tasks
    from lakelet.stack.stepfunctions_local import route_lambda_invokes

    real_seal = tasks.HANDLERS["commit_seal"]
    calls = 0

    def oversized_seal(event: dict[str, Any]) -> Any:
        nonlocal calls
        calls += 1
        answer = real_seal(event)
        return {**answer, "padding": "z" * (STATE_PAYLOAD_BYTES + 1)} if isinstance(answer, dict) else answer

    branch = repo.branch("statesize").create(source_reference="main")
    branch.object("s/one.txt").upload(data=b"1", pre_sign=False)
    head = branch.head.id
    sfn = boto3.client("stepfunctions", region_name=stack.region, endpoint_url=stack.moto_url)
    request = {
        "repository": "limits",
        "branch": "statesize",
        "request_id": "big-state",
        "committer": "admin",
        "message": "big state",
        "date": 1_700_000_000,
        "metadata": {},
    }
    with route_lambda_invokes({"commit_seal": oversized_seal}):
        execution = sfn.start_execution(
            stateMachineArn=os.environ["LAKELET_COMMIT_STATE_MACHINE_ARN"],
            name="big-state",
            input=json.dumps({"request": request}),
        )["executionArn"]
        for _ in range(600):
            if sfn.describe_execution(executionArn=execution)["status"] != "RUNNING":
                break
            time.sleep(0.05)
    described = sfn.describe_execution(executionArn=execution)
    assert described["status"] == "FAILED"
    assert described.get("error") == DATA_LIMIT_ERROR, described
    entered = [
        e["stateEnteredEventDetails"]["name"]
        for e in sfn.get_execution_history(executionArn=execution)["events"]
        if "stateEnteredEventDetails" in e
    ]
    assert "Failed" not in entered and calls == 1  # not caught, not retried
    assert branch.head.id == head
    assert [c.path for c in branch.uncommitted()] == ["s/one.txt"]
    branch.commit("after the big state")
    assert [o.path for o in branch.objects(prefix="s/")] == ["s/one.txt"]
