"""``lakelet up --aws-limits`` and the Iceberg catalog (issue 40, item 5): a table writer cannot make a table
unloadable. Two 4 MB ``set-properties`` commits used to push the metadata past Lambda's 6 MB response, after which
every load answered 502; the second is now refused with a 400 naming the limit, and the table still loads."""

from __future__ import annotations

import base64
import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import pytest

from lakelet.stack.app_environment import Credentials
from lakelet.stack.aws_limits import LAMBDA_RESPONSE_BYTES, AwsLimits
from lakelet.stack.local import LocalStack

KEYS = Credentials("AKIAIOSFODNN7LIMITS02", "limits-secret-key-2")
_NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))
SCHEMA = {"type": "struct", "fields": [{"id": 1, "name": "id", "type": "long", "required": True}]}


@pytest.fixture(scope="module")
def stack() -> Iterator[LocalStack]:
    with LocalStack(api_port=0, credentials=KEYS, aws_limits=AwsLimits.deployed()) as running:
        yield running


def _http(method: str, url: str, body: Any = None) -> tuple[int, Any]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method)
    token = base64.b64encode(f"{KEYS.access_key_id}:{KEYS.secret_access_key}".encode()).decode()
    request.add_header("Authorization", f"Basic {token}")
    request.add_header("Content-Type", "application/json")
    try:
        with _NO_PROXY.open(request, timeout=120) as response:
            return int(response.status), json.loads(response.read() or b"{}")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"{}")


def test_a_commit_that_would_make_the_table_unloadable_is_refused(stack: LocalStack) -> None:
    api = stack.api_url
    namespace = f"{stack.default_namespace_prefix}/iceberg-limits"
    status, _ = _http("POST", f"{api}/repositories", {"name": "icelimits", "storage_namespace": namespace})
    assert status == 201
    catalog = stack.endpoint + "/iceberg/api/v1"
    assert _http("POST", f"{catalog}/namespaces", {"namespace": ["icelimits", "main", "s"]})[0] == 200
    tables = f"{catalog}/namespaces/{quote(chr(31).join(['icelimits', 'main', 's']), safe='')}/tables"
    assert _http("POST", tables, {"name": "t", "schema": SCHEMA})[0] == 200
    four_mb = "x" * (4 * 1000 * 1000)
    first = _http(
        "POST",
        f"{tables}/t",
        {"requirements": [], "updates": [{"action": "set-properties", "updates": {"a": four_mb}}]},
    )
    assert first[0] == 200
    status, refused = _http(
        "POST",
        f"{tables}/t",
        {"requirements": [], "updates": [{"action": "set-properties", "updates": {"b": four_mb}}]},
    )
    assert status == 400 and refused["error"]["type"] == "BadRequestException"
    assert f"{LAMBDA_RESPONSE_BYTES:,}" in refused["error"]["message"]
    status, loaded = _http("GET", f"{tables}/t")
    assert status == 200 and set(loaded["metadata"]["properties"]) == {"a"}
