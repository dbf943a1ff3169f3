"""Namespaces as clients build them: ``f"{default_namespace_prefix}/{name}"``.

GET /config reports the prefix without a trailing ``/`` (as lakeFS), and a doubled ``/`` right after the bucket
(what that expression gives with a prefix ending in ``/``) is accepted and folded into one spelling, so
``s3://b//x`` and ``s3://b/x`` are one namespace to the claim, the nesting checks and the policies.
"""

from __future__ import annotations

import pytest
from chalice.test import Client

from chalicelib import wiring
from tests.security.test_namespaces import race, with_latency

from .support import BUCKET, Api, assert_error, body_of

ROOT = f"s3://{BUCKET}"


def create(api: Api, name: str, namespace: str) -> tuple[int, dict[str, object]]:
    response = api.post("/repositories", json_body={"name": name, "storage_namespace": namespace})
    return response.status_code, body_of(response)


def names(api: Api) -> list[str]:
    return [r["id"] for r in body_of(api.get("/repositories"))["results"]]


def test_the_reported_prefix_plus_slash_name_creates_a_repository(api: Api) -> None:
    prefix = body_of(api.get("/config/storage"))["default_namespace_prefix"]
    assert prefix == ROOT
    status, repo = create(api, "lakefs-spec-tests", f"{prefix}/lakefs-spec-tests")
    assert status == 201, repo
    assert repo["storage_namespace"] == f"{ROOT}/lakefs-spec-tests"


@pytest.mark.parametrize("spelling", [f"{ROOT}//x", f"{ROOT}//x/", f"{ROOT}//x/y"])
def test_a_doubled_slash_after_the_bucket_is_accepted_and_folded(api: Api, spelling: str) -> None:
    status, repo = create(api, "repo1", spelling)
    assert status == 201, repo
    folded = spelling.replace("//x", "/x", 1).removesuffix("/")
    assert repo["storage_namespace"] == folded
    assert body_of(api.get("/repositories/repo1"))["storage_namespace"] == folded
    # Its objects live under the folded prefix: no key starts with "/".
    api.upload("repo1", "main", "a.txt", b"a")
    stat = body_of(api.get("/repositories/repo1/refs/main/objects/stat", query={"path": "a.txt"}))
    assert stat["physical_address"].startswith(folded + "/data/")


@pytest.mark.parametrize(
    ("first", "second"), [(f"{ROOT}//x", f"{ROOT}/x"), (f"{ROOT}/x", f"{ROOT}//x"), (f"{ROOT}//x", f"{ROOT}//x/")]
)
def test_two_spellings_of_one_namespace_are_never_two_repositories(api: Api, first: str, second: str) -> None:
    assert create(api, "first", first)[0] == 201
    status, error = create(api, "second", second)
    assert status == 400 and "already in use" in str(error["message"]), error
    assert names(api) == ["first"]


def test_nesting_is_seen_through_the_spellings(api: Api) -> None:
    assert create(api, "outer", f"{ROOT}//outer")[0] == 201
    for inside in (f"{ROOT}/outer/in", f"{ROOT}//outer/in", f"{ROOT}//outer/a/b"):
        status, error = create(api, "inner", inside)
        assert status == 400 and "inside" in str(error["message"]), (inside, error)
    assert create(api, "deep", f"{ROOT}/around/a/b")[0] == 201
    for around in (f"{ROOT}//around", f"{ROOT}//around/a", f"{ROOT}/around/"):
        status, error = create(api, "around", around)
        assert status == 400 and "contains" in str(error["message"]), (around, error)
    assert names(api) == ["deep", "outer"]


def test_other_empty_segments_stay_refused(api: Api) -> None:
    for bad in (f"{ROOT}///x", f"{ROOT}/x//y", f"{ROOT}//", f"{ROOT}//./x", f"{ROOT}//x/.."):
        assert_error(api.post("/repositories", json_body={"name": "repo1", "storage_namespace": bad}), 400)
    assert names(api) == []


def test_six_parallel_creates_with_both_spellings_make_exactly_one_repository(
    api: Api, credentials: tuple[str, str], services: wiring.Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    with_latency(services, monkeypatch)
    spellings = [f"{ROOT}/shared", f"{ROOT}//shared", f"{ROOT}/shared/", f"{ROOT}//shared/"] * 2
    statuses = race(credentials, [{"name": f"racer-{i}", "storage_namespace": spellings[i]} for i in range(6)])
    assert sorted(statuses) == [201] + [400] * 5, statuses
    assert [r["storage_namespace"] for r in body_of(api.get("/repositories"))["results"]] == [f"{ROOT}/shared"]


def test_parallel_creates_of_a_namespace_and_one_inside_it_in_the_other_spelling_never_both_succeed(
    api: Api, credentials: tuple[str, str], services: wiring.Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    with_latency(services, monkeypatch)
    for round_ in range(4):
        outer, inner = (
            (f"{ROOT}//n{round_}", f"{ROOT}/n{round_}/in")
            if round_ % 2
            else (f"{ROOT}/n{round_}", f"{ROOT}//n{round_}/in")
        )
        statuses = race(
            credentials,
            [
                {"name": f"outer-{round_}", "storage_namespace": outer},
                {"name": f"inner-{round_}", "storage_namespace": inner},
            ],
        )
        assert statuses.count(201) <= 1 and all(s in (201, 400) for s in statuses), statuses


def test_a_deny_on_a_namespace_also_covers_its_doubled_slash_spelling(api: Api, client: Client) -> None:
    policy = {
        "id": "no-secret",
        "statement": [
            {"effect": "allow", "action": ["fs:*"], "resource": "*"},
            {
                "effect": "deny",
                "action": ["fs:AttachStorageNamespace"],
                "resource": f"arn:lakefs:fs:::namespace/{ROOT}/secret*",
            },
        ],
    }
    assert api.post("/auth/policies", json_body=policy).status_code == 201
    assert api.post("/auth/users", json_body={"id": "sam"}).status_code == 201
    assert api.request("PUT", "/auth/users/sam/policies/no-secret").status_code == 201
    pair = body_of(api.post("/auth/users/sam/credentials"))
    sam = Api(client, (pair["access_key_id"], pair["secret_access_key"]))
    for spelling in (f"{ROOT}/secret", f"{ROOT}//secret", f"{ROOT}//secret/"):
        assert_error(sam.post("/repositories", json_body={"name": "leak", "storage_namespace": spelling}), 403)
    assert create(sam, "open", f"{ROOT}//open")[0] == 201
    assert names(api) == ["open"]


def test_bounds_are_400_in_the_lakefs_shape_and_create_nothing(api: Api) -> None:
    for bad, said in (
        (f"{ROOT}/" + "x" * 769, "too long"),
        (f"{ROOT}/x\u200b", "invisible"),
        (f"{ROOT}/x ", "space"),
        (f"{ROOT}/_lakelet/x", "_lakelet"),
        (f"{ROOT}/x/_lakefs", "_lakefs"),
    ):
        assert said in assert_error(
            api.post("/repositories", json_body={"name": "repo1", "storage_namespace": bad}), 400
        )
    assert names(api) == []
    assert create(api, "repo1", f"{ROOT}/" + "x" * 768)[0] == 201


NFC, NFD = "caf\u00e9", "cafe\u0301"


@pytest.mark.parametrize(
    ("spelling", "stored"),
    [
        (f"{ROOT}/%76", f"{ROOT}/v"),
        (f"{ROOT}/a%2Db/%7Ex", f"{ROOT}/a-b/~x"),
        (f"{ROOT}/a%2fb", f"{ROOT}/a%2Fb"),  # a reserved character stays escaped, in one spelling
        (f"{ROOT}/{NFD}", f"{ROOT}/{NFC}"),
        (f"{ROOT}/caf%c3%a9", f"{ROOT}/{NFC}"),
        (f"{ROOT}/a%20b%ff", f"{ROOT}/a%20b%FF"),  # not UTF-8: kept as escapes
    ],
)
def test_escapes_and_unicode_forms_are_folded_into_one_spelling(api: Api, spelling: str, stored: str) -> None:
    status, repo = create(api, "repo1", spelling)
    assert status == 201, repo
    assert repo["storage_namespace"] == stored


@pytest.mark.parametrize(
    ("first", "second"),
    [(f"{ROOT}/v", f"{ROOT}/%76"), (f"{ROOT}/%76", f"{ROOT}/v/"), (f"{ROOT}/{NFC}", f"{ROOT}/{NFD}")],
)
def test_an_escaped_or_decomposed_spelling_is_the_same_namespace(api: Api, first: str, second: str) -> None:
    assert create(api, "first", first)[0] == 201
    status, error = create(api, "second", second)
    assert status == 400 and "already in use" in str(error["message"]), error
    status, error = create(api, "inner", second.rstrip("/") + "/in")
    assert status == 400 and "inside" in str(error["message"]), error
    assert names(api) == ["first"]


def test_an_escaped_dot_segment_is_refused_as_the_dot_is(api: Api) -> None:
    for bad in (f"{ROOT}/x/%2E%2E", f"{ROOT}/%2e/x", f"{ROOT}/x%E2%80%8B"):  # the last: a zero-width space
        assert_error(api.post("/repositories", json_body={"name": "repo1", "storage_namespace": bad}), 400)


def test_a_deny_on_a_namespace_covers_its_escaped_and_unicode_spellings(api: Api, client: Client) -> None:
    policy = {
        "id": "no-secret",
        "statement": [
            {"effect": "allow", "action": ["fs:*"], "resource": "*"},
            {
                "effect": "deny",
                "action": ["fs:AttachStorageNamespace"],
                "resource": f"arn:lakefs:fs:::namespace/{ROOT}/{NFC}*",
            },
        ],
    }
    assert api.post("/auth/policies", json_body=policy).status_code == 201
    assert api.post("/auth/users", json_body={"id": "sam"}).status_code == 201
    assert api.request("PUT", "/auth/users/sam/policies/no-secret").status_code == 201
    pair = body_of(api.post("/auth/users/sam/credentials"))
    sam = Api(client, (pair["access_key_id"], pair["secret_access_key"]))
    for spelling in (f"{ROOT}/{NFD}", f"{ROOT}/caf%C3%A9", f"{ROOT}/%63af\u00e9"):
        assert_error(sam.post("/repositories", json_body={"name": "leak", "storage_namespace": spelling}), 403)
    assert names(api) == []
