"""The hook invokers against real endpoints: a webhook server on 127.0.0.1 and a Lambda function on moto."""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Iterator

import boto3
import pytest
from moto import mock_aws

from chalicelib.adapters.hooks import LambdaHooks, WebhookHooks
from chalicelib.adapters.hooks.destinations import Destinations
from chalicelib.adapters.hooks.lambda_invoke import FunctionRef, parse_function
from chalicelib.graveler.actions import HookSpec
from chalicelib.settings import LOCAL_WEBHOOK_DESTINATIONS
from lakelet.stack.stepfunctions_local import route_lambda_invokes
from tests.api.hook_server import HookServer, start_hook_server

PAYLOAD = json.dumps({"event_type": "pre-merge", "hook_id": "h"}).encode()
# The hook servers here listen on loopback, a destination the local stack allows (a deployment does not).
LOCAL = WebhookHooks(Destinations(LOCAL_WEBHOOK_DESTINATIONS))


@pytest.fixture
def hook_server() -> Iterator[HookServer]:
    state, server = start_hook_server()
    yield state
    server.shutdown()
    server.server_close()


def webhook(url: str, **props: object) -> HookSpec:
    return HookSpec("h", "webhook", "", {"url": url, **props}, 60.0)


def test_webhook_passes_on_2xx_with_query_params(hook_server: HookServer) -> None:
    url = hook_server.on("/ok", 201, "fine")
    outcome = LOCAL.invoke(
        webhook(url + "?a=1", query_params={"prefix": "data/", "ext": ["csv", "pq"]}, headers={"X-Token": "t"}),
        PAYLOAD,
        5,
    )
    assert outcome.ok and "201" in outcome.output and "fine" in outcome.output
    got = hook_server.received[0]
    assert got.query == {"a": ["1"], "prefix": ["data/"], "ext": ["csv", "pq"]}
    assert got.headers["X-Token"] == "t" and got.headers["Content-Type"] == "application/json"
    assert got.body == json.loads(PAYLOAD)


def test_webhook_fails_on_other_status_with_its_body(hook_server: HookServer) -> None:
    outcome = LOCAL.invoke(webhook(hook_server.on("/bad", 400, "3 rows without id")), PAYLOAD, 5)
    assert not outcome.ok
    assert outcome.error == "webhook request failed (status code: 400)"
    assert "3 rows without id" in outcome.output


def test_webhook_times_out(hook_server: HookServer) -> None:
    outcome = LOCAL.invoke(webhook(hook_server.on("/slow", 200, "late", delay=2.0)), PAYLOAD, 0.3)
    assert not outcome.ok and "timed out after 0.3s" in outcome.error


def test_webhook_unreachable_fails() -> None:
    outcome = LOCAL.invoke(webhook("http://127.0.0.1:9/none"), PAYLOAD, 2)
    assert not outcome.ok and outcome.error.startswith("webhook request failed")


def test_function_references() -> None:
    arn = "arn:aws:lambda:us-east-1:123456789012:function:check"
    assert parse_function("check", "eu-west-1") == FunctionRef("aws", "eu-west-1", "", "check", "")
    assert parse_function(arn, "eu-west-1") == FunctionRef("aws", "us-east-1", "123456789012", "check", "")
    assert parse_function(arn + ":live", "x").qualifier == "live"
    assert parse_function(arn, "x", qualifier="live").arn == arn + ":live"
    assert parse_function("123456789012:function:check", "eu-west-1").arn == arn.replace("us-east-1", "eu-west-1")
    for bad in ("arn:aws:lambda:us-east-1:1234:function:check", "a b", "check:live:x"):
        with pytest.raises(ValueError):
            parse_function(bad, "us-east-1")
    with pytest.raises(ValueError, match="qualifier"):
        parse_function(arn + ":live", "x", qualifier="beta")


ALLOWED = "arn:aws:lambda:us-east-1:111111111111:function:check"


@pytest.mark.parametrize(
    ("name", "qualifier"),
    [
        ("arn:aws:lambda:us-east-1:222222222222:function:check", ""),  # another account
        ("arn:aws:lambda:eu-west-1:111111111111:function:check", ""),  # another region
        ("arn:aws-cn:lambda:us-east-1:111111111111:function:check", ""),  # another partition
        (ALLOWED + ":live", ""),  # a qualifier the unqualified grant does not cover
        (ALLOWED, "live"),
        ("222222222222:function:check", ""),
        ("check", "live"),
        ("check-other", ""),
    ],
)
def test_the_allowlist_compares_whole_functions(name: str, qualifier: str) -> None:
    """Before: only the name was compared, so ``check`` in any account, region or alias was invoked."""
    hooks = LambdaHooks([ALLOWED, "arn:aws:lambda:us-east-1:111111111111:function:other:live"], "us-east-1")
    assert hooks.allowed_function(name, qualifier) is None
    props = {"function_name": name, **({"qualifier": qualifier} if qualifier else {})}
    outcome = hooks.invoke(HookSpec("h", "lambda", "", props, 60.0), PAYLOAD, 5)
    assert not outcome.ok and "not allowed" in outcome.error


def test_a_bare_name_means_the_one_allowed_function_of_that_name() -> None:
    hooks = LambdaHooks([ALLOWED, "arn:aws:lambda:us-east-1:111111111111:function:other:live"], "us-east-1")
    assert hooks.allowed_function("check") == parse_function(ALLOWED, "x")
    assert hooks.allowed_function(ALLOWED) == parse_function(ALLOWED, "x")
    assert hooks.allowed_function("other", "live") is not None
    assert hooks.allowed_function("other:live") is not None
    assert hooks.allowed_function("111111111111:function:check") is not None
    two = LambdaHooks([ALLOWED, ALLOWED.replace("111111111111", "333333333333")], "us-east-1")
    assert two.allowed_function("check") is None  # which account's? refused rather than guessed


def quality_check(event: dict) -> dict:
    """The function's code, run in process: moto's simple Lambda backend routes the invoke here."""
    if event.get("hook_id") == "refuse":
        return {"statusCode": 412, "body": "bad data"}
    if event.get("hook_id") == "boom":
        raise ValueError("exploded")
    return {"statusCode": 200, "body": "seen " + event["event_type"]}


@pytest.fixture
def lambda_function(fake_aws_env: None) -> Iterator[str]:
    with mock_aws(config={"lambda": {"use_docker": False}}), route_lambda_invokes({"quality-check": quality_check}):
        iam = boto3.client("iam", region_name="us-east-1")
        role = iam.create_role(RoleName="hook-role", AssumeRolePolicyDocument="{}")["Role"]["Arn"]
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as z:
            z.writestr("index.py", "def handler(event, context): pass")
        boto3.client("lambda", region_name="us-east-1").create_function(
            FunctionName="quality-check",
            Runtime="python3.12",
            Role=role,
            Handler="index.handler",
            Code={"ZipFile": buf.getvalue()},
        )
        yield "quality-check"


def lambda_hook(hook_id: str, name: str) -> HookSpec:
    return HookSpec(hook_id, "lambda", "", {"function_name": name}, 60.0)


def test_lambda_not_in_the_allowed_set_is_refused_without_a_call() -> None:
    outcome = LambdaHooks(["other"], "us-east-1").invoke(lambda_hook("h", "quality-check"), PAYLOAD, 5)
    assert not outcome.ok and "not allowed" in outcome.error


def test_lambda_hook_answers_decide(lambda_function: str) -> None:
    arn = f"arn:aws:lambda:us-east-1:123456789012:function:{lambda_function}"
    hooks = LambdaHooks([arn], "us-east-1")
    ok = hooks.invoke(lambda_hook("h", arn), json.dumps({"hook_id": "h", "event_type": "pre-merge"}).encode(), 30)
    assert ok.ok and "seen pre-merge" in ok.output
    refused = hooks.invoke(lambda_hook("refuse", lambda_function), b'{"hook_id": "refuse"}', 30)
    assert not refused.ok and refused.error == "lambda hook failed (status code: 412)"
    assert "bad data" in refused.output
    boom = hooks.invoke(lambda_hook("boom", lambda_function), b'{"hook_id": "boom"}', 30)
    assert not boom.ok and boom.error == "lambda function failed (Unhandled)" and "exploded" in boom.output
