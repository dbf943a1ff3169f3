"""Fuzzing the API with requests schemathesis generates from the served lakeFS spec (positive and negative).

Each example runs against a freshly seeded in-memory deployment through the Chalice test client, as the
admin (so requests reach past authorization). For every one: nothing answers 5xx; the status and body are
what the spec documents, parsed by the lakefs-sdk models; and a request refused with 4xx changed nothing in
any store. Path and ``path`` parameters draw from the seeded names and from names that are missing or
malformed, so the requests reach real repositories, branches, objects, users and groups (and malformed ones).
The number of examples per operation is bounded: LAKELET_FUZZ_EXAMPLES (default 6); examples are derandomized
so CI runs repeat.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest
import requests
import schemathesis
from chalice.test import Client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode

from chalicelib import wiring

from .support import LAKEFS_OSS_501, PREFIX, Seed, app, basic, check_response, snapshot, spec

EXAMPLES = int(os.environ.get("LAKELET_FUZZ_EXAMPLES", "6"))
# Names that exist in the seeded deployment, offered next to arbitrary strings.
SEEDED: dict[str, list[str]] = {
    "repository": ["repo1", "frozen"],
    "branch": ["main", "dev"],
    "destinationBranch": ["main", "dev"],
    "ref": ["main", "dev", "v1", "main~1"],
    "sourceRef": ["dev", "main"],
    "leftRef": ["main"],
    "rightRef": ["dev"],
    "tag": ["v1"],
    "userId": ["admin", "jane"],
    "groupId": ["Admins", "Developers", "Viewers"],
    "policyId": ["FSReadAll", "FSFullAccess"],
    "accessKeyId": ["AKIAIOSFODNN7EXAMPLE"],
    "path": ["a.txt", "dir/b.csv"],
    "dest_path": ["copy.txt", "a.txt"],
}


# Names that exist nowhere or are malformed, mixed into every named parameter.
ODD = ["nope", "BAD NAME", "a/b", "main@@", "x" * 300]


def fuzz_spec() -> dict[str, Any]:
    raw = copy.deepcopy(spec())
    for operations in raw["paths"].values():
        for operation in operations.values():
            for parameter in operation.get("parameters", []):
                seeded = SEEDED.get(parameter["name"])
                if seeded and parameter["in"] in ("path", "query"):
                    parameter["schema"] = {"enum": seeded + ODD}
    return raw


SCHEMA = schemathesis.openapi.from_dict(fuzz_spec())
OPERATIONS = [result.ok() for result in SCHEMA.get_all_operations()]


@pytest.fixture(scope="module")
def seed() -> Seed:
    return Seed()


@pytest.fixture(scope="module")
def client() -> Iterator[Client]:
    with Client(app) as test_client:
        yield test_client


def send(client: Client, case: schemathesis.Case):  # type: ignore[no-untyped-def]
    kwargs = case.as_transport_kwargs(base_url="http://lakelet.test" + PREFIX)
    kwargs.pop("cookies", None)
    prepared = requests.Request(**kwargs).prepare()
    headers = {k: v for k, v in prepared.headers.items() if k.lower() not in ("authorization", "content-length")}
    headers["authorization"] = basic()
    body = prepared.body or b""
    if isinstance(body, str):
        body = body.encode("utf-8")
    url = urlsplit(prepared.url)
    target = url.path + ("?" + url.query if url.query else "")
    return client.http.request(prepared.method, target, headers=headers, body=body)


@pytest.mark.parametrize("operation", OPERATIONS, ids=[f"{o.method.upper()} {o.path}" for o in OPERATIONS])
def test_fuzz(client: Client, seed: Seed, operation: schemathesis.APIOperation) -> None:
    # Requests the spec allows, and requests it does not (wrong types, missing fields, extra junk).
    cases = st.one_of(
        operation.as_strategy(generation_mode=GenerationMode.POSITIVE),
        operation.as_strategy(generation_mode=GenerationMode.NEGATIVE),
    )

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(case=cases)
    def run(case: schemathesis.Case) -> None:
        services = seed.fresh()
        wiring.set_services(services)
        try:
            before = snapshot(services)
            response = send(client, case)
            where = f"{case.method} {case.formatted_path} -> {response.status_code}: {response.body[:300]!r}"
            if operation.definition.raw.get("operationId") in LAKEFS_OSS_501:
                # 501 as lakeFS OSS answers; a body that is not valid JSON is refused first (400), as lakeFS's
                # spec validation refuses it before the handler.
                assert response.status_code in (400, 501), where
                if response.status_code == 501:
                    assert response.body == b'{"message": "Not Implemented"}', where
                return
            assert response.status_code < 500, where
            check_response(case.method, operation.path, response.status_code, response.body)
            if response.status_code >= 400:
                assert snapshot(services) == before, f"refused, yet changed the stores: {where}"
        finally:
            wiring.set_services(None)

    run()
