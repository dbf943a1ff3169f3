"""Guarantee 6: bad input is a 4xx in the lakeFS error shape, never a 5xx, through the local API server.

Every route that takes a body (enumerated from app.routes, not a hand list) gets JSON nested 100,000 deep and
JSON full of lone surrogates; names, dates and metadata go past their documented limits; unknown routes answer
a lakeFS 404 that does not quote the caller's credentials back.
"""

from __future__ import annotations

import json
import re
import time

import pytest
from botocore.exceptions import ClientError
from pynamodb.exceptions import PutError

from app import app
from chalicelib.adapters.dynamodb.translate import storage_errors
from chalicelib.api.errors import graveler_error_response
from chalicelib.graveler import errors
from chalicelib.observability import redact_text

from .servers import PREFIX, RawResponse, Stack, stack

__all__ = ["stack"]

REPO = "badinput"
BODY_METHODS = {"POST", "PUT", "PATCH", "DELETE"}
# Real names, so requests reach the views; never the caller's own user or group, which a DELETE would remove.
VALUES = {
    "{repository}": REPO,
    "{branch}": "main",
    "{ref}": "main",
    "{destinationBranch}": "main",
    "{tag}": "v1",
    "{userId}": "nobody",
    "{groupId}": "Viewers",
    "{policyId}": "FSReadAll",
    "{accessKeyId}": "AKIANOSUCHKEY",
}
# DELETE takes no body anywhere; it goes to names that do not exist, so the rest of the run keeps its repository.
GONE = {"{repository}": "gone-repo", "{branch}": "gone"}


def body_routes() -> list[tuple[str, str]]:
    routes = [(m, p.removeprefix(PREFIX)) for p, methods in app.routes.items() for m in methods if m in BODY_METHODS]
    return sorted(routes, key=lambda r: (r[0] == "DELETE", r))


def concrete(path: str, key: str, method: str = "POST") -> str:
    names = {**VALUES, **GONE} if method == "DELETE" else VALUES
    return re.sub(r"\{[^}]+\}", lambda m: names.get(m[0], key), path)


ROUTES = body_routes()
DEEP = b"[" * 100_000 + b"]" * 100_000
DEEP_OBJECT = b'{"a":' * 50_000 + b"1" + b"}" * 50_000
# Every field name a lakeFS request body uses, each holding a lone surrogate (as JSON escapes allow).
FIELDS = [
    "name",
    "id",
    "message",
    "ref",
    "source",
    "storage_namespace",
    "default_branch",
    "path",
    "staging",
    "physical_address",
    "checksum",
    "content_type",
    "access_key_id",
    "secret_access_key",
    "username",
    "friendly_name",
    "destination",
    "strategy",
    "parent_number",
    "type",
    "force",
    "allow_empty",
]
SURROGATES = (
    "{"
    + ", ".join(f'"{f}": "a\\ud800b"' for f in FIELDS)
    + ', "metadata": {"k\\udfff": "v\\ud800"}, "user_metadata": {"k": "\\udc00"},'
    + ' "paths": ["x\\ud800"], "keys": ["\\ud800"], "statement": [{"action": ["fs:\\ud800"],'
    + ' "effect": "allow", "resource": "*"}], "staging": {"physical_address": "\\ud800"}}'
).encode()


@pytest.fixture(scope="module")
def seeded(stack: Stack) -> Stack:
    created = stack.api_request(
        "POST",
        "/repositories",
        json.dumps(
            {"name": REPO, "storage_namespace": f"s3://security-tests/{REPO}", "default_branch": "main"}
        ).encode(),
    )
    assert created.status == 201, created.body
    assert stack.api_request("POST", f"/repositories/{REPO}/tags", b'{"id": "v1", "ref": "main"}').status == 201
    return stack


def assert_lakefs_4xx(response: RawResponse, where: str) -> str:
    assert 400 <= response.status < 500, f"{where}: {response.status} {response.body[:200]!r}"
    body = response.json()
    assert set(body) == {"message"} and isinstance(body["message"], str), f"{where}: {body}"
    return str(body["message"])


@pytest.mark.parametrize(("method", "path"), ROUTES, ids=[f"{m} {p}" for m, p in ROUTES])
def test_deep_json_and_lone_surrogates_are_4xx_on_every_body_route(seeded: Stack, method: str, path: str) -> None:
    target = concrete(path, seeded.key, method)
    for body in (DEEP, DEEP_OBJECT, SURROGATES):
        response = seeded.api_request(method, target, body, {"Content-Type": "application/json"})
        where = f"{method} {target} with {body[:20]!r}"
        assert response.status < 500, f"{where}: {response.status} {response.body[:200]!r}"
        if response.status >= 400:
            assert_lakefs_4xx(response, where)


def test_every_json_route_refuses_deep_nesting_by_name(seeded: Stack) -> None:
    """The routes that parse JSON say why (the upload route takes any bytes: a deep JSON file is a file)."""
    refused = []
    for method, path in ROUTES:
        response = seeded.api_request(
            method, concrete(path, seeded.key, method), DEEP, {"Content-Type": "application/json"}
        )
        if response.status == 400 and "nests deeper" in response.json()["message"]:
            refused.append((method, path))
    assert ("POST", "/auth/login") in refused
    assert ("POST", "/repositories") in refused
    assert len(refused) >= 20, refused


def test_unauthenticated_login_with_deep_json_is_400(seeded: Stack) -> None:
    response = seeded.api_request("POST", "/auth/login", DEEP, {"Content-Type": "application/json"}, auth=False)
    assert "nests deeper" in assert_lakefs_4xx(response, "login")


def test_surrogates_in_the_path_query_and_url_are_4xx(seeded: Stack) -> None:
    for target in (
        f"/repositories/{REPO}/refs/main/objects/stat?path=%ED%A0%80",
        f"/repositories/{REPO}/branches/%ED%A0%80",
        f"/repositories/{REPO}/refs/main/objects?path=a%00b",
    ):
        response = seeded.api_request("GET", target)
        assert_lakefs_4xx(response, target)


@pytest.mark.parametrize(
    ("target", "body"),
    [
        ("/branches", {"name": "b" * 2000, "source": "main"}),
        ("/branches", {"name": "m\u0430in", "source": "main"}),  # a Cyrillic a
        ("/tags", {"id": "t" * 1500, "ref": "main"}),
        ("/tags", {"id": "\u00e9" * 200, "ref": "main"}),  # 400 bytes of UTF-8
        ("/branches/main/commits", {"message": "m", "date": 10**40}),
        ("/branches/main/commits", {"message": "m", "date": 1e40}),
        ("/branches/main/commits", {"message": "m", "date": -1}),
        ("/branches/main/commits", {"message": "m", "metadata": {"k": "v" * 400_000}}),
        ("/metadata", {"metadata": {"k": "v" * 400_000}}),
    ],
)
def test_oversized_names_dates_and_metadata_are_400(seeded: Stack, target: str, body: dict[str, object]) -> None:
    response = seeded.api_request("POST", f"/repositories/{REPO}{target}", json.dumps(body).encode())
    assert response.status == 400, f"{target}: {response.status} {response.body[:200]!r}"
    assert_lakefs_4xx(response, target)


def test_a_60000_character_path_is_answered_at_once(seeded: Stack) -> None:
    """Logging the request's path used a regex quadratic in a long word: about 100 s for this one (284 s at
    100,000 characters, which the local server refuses as too long a request line)."""
    started = time.monotonic()
    response = seeded.api_request("GET", "/auth/groups/" + "x" * 60_000)
    assert response.status == 404
    assert time.monotonic() - started < 5
    started = time.monotonic()
    redacted = redact_text("tokenx" * 40_000 + "=1 " + "a" * 200_000)
    assert "=1 " not in redacted and redacted.endswith(" " + "a" * 200_000)
    assert time.monotonic() - started < 2


def test_nan_and_infinity_are_not_json(seeded: Stack) -> None:
    response = seeded.api_request(
        "POST", f"/repositories/{REPO}/branches/main/commits", b'{"message": "m", "date": NaN}'
    )
    assert assert_lakefs_4xx(response, "NaN") == "request body is not valid JSON"


def test_a_dynamodb_validation_error_is_400_and_a_throttle_503_with_retry_after() -> None:
    def raised(code: str) -> errors.GravelerError:
        cause = ClientError({"Error": {"Code": code, "Message": "Item size has exceeded the maximum"}}, "PutItem")
        try:
            with storage_errors():
                raise PutError("put failed", cause=cause)
        except errors.GravelerError as e:
            return e
        raise AssertionError("not translated")

    too_large = graveler_error_response(raised("ValidationException"))
    assert too_large.status_code == 400
    throttled = graveler_error_response(raised("ProvisionedThroughputExceededException"))
    assert throttled.status_code == 503
    assert throttled.headers["Retry-After"] == "1"


@pytest.mark.parametrize("method", ["GET", "PUT", "POST", "DELETE", "HEAD"])
@pytest.mark.parametrize("target", ["/nope", f"/repositories/{REPO}/settings/branch_protection_nope", "/a/b/c/d"])
def test_unknown_routes_are_a_lakefs_404_that_quotes_no_credentials(seeded: Stack, method: str, target: str) -> None:
    response = seeded.api_request(method, target, b"{}")
    assert response.status == 404, response.body
    secret_part = seeded.basic().split()[1].encode()
    assert secret_part not in response.body and secret_part not in response.head
    assert seeded.key.encode() not in response.body
    if method != "HEAD":
        assert response.json() == {"message": "not found: no such API route"}
