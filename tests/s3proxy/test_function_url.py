"""The Lambda entry: a Function URL event (payload 2.0) in, a Function URL response out, over the app's
services; and the payload limit a deployed gateway works within."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from types import SimpleNamespace

import pytest

from chalicelib import wiring
from chalicelib.s3proxy import function_url
from chalicelib.s3proxy.model import Request
from chalicelib.wiring import Services, memory_services

from .conftest import ACCESS_KEY, SECRET, signed


@pytest.fixture
def services() -> Iterator[Services]:
    services = memory_services()
    services.auth.ensure_admin(ACCESS_KEY, SECRET, "alice")
    services.engine.repositories.create_repository("repo", "s3://lakelet-test/repo")
    wiring.set_services(services)
    yield services
    wiring.set_services(None)


def event_of(request: Request) -> dict[str, object]:
    """What a Function URL hands Lambda: encoded path and query as sent, headers joined, body base64."""
    return {
        "version": "2.0",
        "rawPath": request.raw_path,
        "rawQueryString": request.raw_query,
        "headers": dict(request.headers),
        "requestContext": {"http": {"method": request.method, "path": request.path}},
        "body": base64.b64encode(request.body).decode(),
        "isBase64Encoded": True,
    }


def test_put_and_get_through_lambda_events(services: Services) -> None:
    body = bytes(range(256)) * 4
    put = function_url.handle_event(event_of(signed("PUT", "/repo/main/dir/a%20b.bin", body=body)))
    assert put["statusCode"] == 200
    assert services.engine.objects.stat_object("repo", "main", "dir/a b.bin").size == len(body)
    got = function_url.handle_event(event_of(signed("GET", "/repo/main/dir/a%20b.bin")))
    assert got["statusCode"] == 200 and got["isBase64Encoded"] is True
    assert base64.b64decode(str(got["body"])) == body
    listed = function_url.handle_event(event_of(signed("GET", "/repo", "list-type=2&prefix=main%2F")))
    assert b"<Key>main/dir/a b.bin</Key>" in base64.b64decode(str(listed["body"]))


def test_the_admin_key_pair_is_the_s3_key_pair(services: Services) -> None:
    refused = function_url.handle_event(event_of(signed("GET", "/", secret="not-the-secret")))
    assert refused["statusCode"] == 403
    assert function_url.handle_event(event_of(signed("GET", "/")))["statusCode"] == 200


def test_text_bodies_arrive_unencoded(services: Services) -> None:
    event = event_of(signed("PUT", "/repo/main/t.txt", body=b"plain text", headers={"Content-Type": "text/plain"}))
    event["body"], event["isBase64Encoded"] = "plain text", False
    assert function_url.handle_event(event)["statusCode"] == 200
    assert services.engine.objects.stat_object("repo", "main", "t.txt").content_type == "text/plain"


def test_reads_beyond_the_payload_limit_are_refused_with_advice(services: Services) -> None:
    services.engine.objects.upload_object("repo", "main", "big", b"x" * (function_url.MAX_RESPONSE_BYTES + 1))
    response = function_url.handle_event(event_of(signed("GET", "/repo/main/big")))
    assert response["statusCode"] == 400
    assert b"presigned URL" in base64.b64decode(str(response["body"]))
    ranged = signed("GET", "/repo/main/big", headers={"Range": f"bytes=0-{function_url.MAX_RESPONSE_BYTES - 1}"})
    response = function_url.handle_event(event_of(ranged))
    assert response["statusCode"] == 206
    assert len(base64.b64decode(str(response["body"]))) == function_url.MAX_RESPONSE_BYTES


def test_the_app_registers_the_gateway_lambda(services: Services) -> None:
    from app import app, s3_gateway

    assert "s3_gateway" in [f.name for f in app.pure_lambda_functions]
    # What the Lambda runtime passes (the app's middleware reads the request id and function name from it).
    context = SimpleNamespace(
        aws_request_id="req-1", function_name="lakelet-dev-s3_gateway", get_remaining_time_in_millis=lambda: 60_000
    )
    response = s3_gateway(event_of(signed("GET", "/")), context)
    assert response["statusCode"] == 200
    assert b"<ListAllMyBucketsResult" in base64.b64decode(str(response["body"]))
