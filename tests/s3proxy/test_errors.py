"""The single S3 error table: every graveler error has an S3 code, errors render as S3 XML, 5xx hide details,
and an unexpected failure is an InternalError with a request id, not a traceback."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
from botocore.client import BaseClient
from botocore.exceptions import ClientError

from chalicelib.adapters.sigv4 import BotocoreSigner
from chalicelib.graveler import errors
from chalicelib.graveler.records import Repository
from chalicelib.s3proxy import S3Gateway
from chalicelib.s3proxy.errors import (
    CODES,
    GRAVELER_CODES,
    S3Error,
    code_for,
    error_response,
    from_graveler,
)

from .conftest import Harness, lookup, signed


def _leaves(cls: type) -> list[type]:
    found = [cls]
    for sub in cls.__subclasses__():
        found += _leaves(sub)
    return found


def test_every_graveler_error_has_a_known_code() -> None:
    assert set(GRAVELER_CODES.values()) <= set(CODES)
    for cls in _leaves(errors.GravelerError):
        assert code_for(cls.__new__(cls)) in CODES  # some leaves take extra constructor arguments
    assert code_for(errors.BranchNotFound("b")) == "NoSuchKey"
    assert code_for(errors.RepositoryNotFound("r")) == "NoSuchBucket"
    assert code_for(errors.Gone("g")) == "NoSuchVersion"
    assert code_for(errors.TooManyTries("t")) == "SlowDown"


def test_unknown_codes_fail_loudly() -> None:
    with pytest.raises(ValueError):
        S3Error("NoSuchThing")


def test_error_document() -> None:
    response = error_response(S3Error("NoSuchKey", details={"Key": "main/a"}), "/repo/main/a", "REQ1")
    assert response.status == 404
    assert response.headers["x-amz-request-id"] == "REQ1"
    root = ET.fromstring(response.body)
    assert root.tag == "Error"
    assert {child.tag: child.text for child in root} == {
        "Code": "NoSuchKey",
        "Message": CODES["NoSuchKey"][1],
        "Resource": "/repo/main/a",
        "RequestId": "REQ1",
        "Key": "main/a",
    }


def test_server_errors_hide_their_details() -> None:
    converted = from_graveler(errors.StorageError("table lakelet-prod-branches throttled on shard 7"))
    assert converted.status == 503 and "lakelet-prod" not in converted.message
    assert "x.txt" in from_graveler(errors.ObjectNotFound("object x.txt not found")).message


def test_unexpected_failures_answer_internal_error(
    harness: Harness, repo: Repository, monkeypatch: pytest.MonkeyPatch
) -> None:
    def explode(*args: object, **kwargs: object) -> None:
        raise RuntimeError("secret internals")

    monkeypatch.setattr(harness.services.engine.objects, "stat_object", explode)
    response = harness.handle(signed("GET", "/repo/main/a"))
    assert response.status == 500
    assert b"InternalError" in response.body and b"secret internals" not in response.body


def test_s3_clients_see_codes_and_request_ids(s3: BaseClient, repo: Repository) -> None:
    with pytest.raises(ClientError) as error:
        s3.get_object(Bucket="repo", Key="main/missing")
    assert error.value.response["Error"]["Code"] == "NoSuchKey"
    assert error.value.response["ResponseMetadata"]["RequestId"]


def test_gateway_without_an_authorizer_allows_authenticated_users(harness: Harness, repo: Repository) -> None:
    gateway = S3Gateway(harness.services.engine, lookup(harness.keys), BotocoreSigner())
    assert gateway.handle(signed("PUT", "/repo/main/a", body=b"x")).status == 200
