"""The GC endpoints: GET|PUT|DELETE .../settings/gc_rules and POST .../gc/prepare_commits, in lakeFS's shapes."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from typing import Any

import pytest
from chalice.test import Client
from lakefs_sdk.models import GarbageCollectionPrepareResponse, GarbageCollectionRules, PrepareGCUncommittedResponse

from chalicelib import wiring
from chalicelib.gc.job_files import read_addresses_parquet
from tests.api.support import Api, app, assert_error, conforms

RULES = {"default_retention_days": 7, "branches": [{"branch_id": "main", "retention_days": 30}]}


@pytest.fixture
def api(memory: wiring.Services) -> Iterator[Api]:
    credential, secret = memory.auth.setup("admin")
    with Client(app) as client:
        api = Api(client, (credential.access_key_id, secret))
        api.create_repo("repo1")
        yield api


def rules_path(repo: str = "repo1") -> str:
    return f"/repositories/{repo}/settings/gc_rules"


def test_rules_round_trip_in_the_lakefs_shape(api: Api, memory: wiring.Services) -> None:
    assert_error(api.get(rules_path()), 404)
    response = api.request("PUT", rules_path(), json_body=RULES)
    assert response.status_code == 204, response.body
    got = api.get(rules_path())
    assert got.status_code == 200
    conforms(GarbageCollectionRules, json.loads(got.body))
    assert json.loads(got.body) == RULES
    # Stored with the data, as JSON, in the repository's namespace.
    stored = memory.engine.ports.blocks.get("s3://test-bucket/repos/repo1/_lakefs/retention/gc/rules.json")
    assert json.loads(stored) == RULES

    replaced = {"default_retention_days": 0, "branches": []}
    assert api.request("PUT", rules_path(), json_body=replaced).status_code == 204
    assert json.loads(api.get(rules_path()).body) == replaced

    assert api.delete(rules_path()).status_code == 204
    assert_error(api.get(rules_path()), 404)
    assert api.delete(rules_path()).status_code == 204  # deleting unset rules is fine


@pytest.mark.parametrize(
    "body",
    [
        {"branches": []},
        {"default_retention_days": 7},
        {"default_retention_days": -1, "branches": []},
        {"default_retention_days": 1.5, "branches": []},
        {"default_retention_days": True, "branches": []},
        {"default_retention_days": "7", "branches": []},
        {"default_retention_days": 7, "branches": {"main": 3}},
        {"default_retention_days": 7, "branches": [{"branch_id": "main"}]},
        {"default_retention_days": 7, "branches": [{"retention_days": 3}]},
        {"default_retention_days": 7, "branches": [{"branch_id": "bad name!", "retention_days": 3}]},
        {
            "default_retention_days": 7,
            "branches": [{"branch_id": "main", "retention_days": 3}, {"branch_id": "main", "retention_days": 4}],
        },
        {"default_retention_days": 7, "branches": ["main"]},
        [1, 2],
    ],
)
def test_invalid_rules_are_refused(api: Api, body: Any) -> None:
    assert_error(api.request("PUT", rules_path(), json_body=body), 400)
    assert_error(api.get(rules_path()), 404)


def test_rules_need_a_body_an_existing_repository_and_credentials(api: Api) -> None:
    assert_error(api.request("PUT", rules_path(), body=b"not json", headers={"content-type": "application/json"}), 400)
    assert_error(api.request("PUT", rules_path(), body=b""), 400)
    assert_error(api.get(rules_path("nope")), 404)
    assert_error(api.request("PUT", rules_path("nope"), json_body=RULES), 404)
    anonymous = Api(api.client, None)
    assert_error(anonymous.get(rules_path()), 401)
    assert_error(anonymous.post("/repositories/repo1/gc/prepare_commits"), 401)


def test_prepare_commits_answers_where_the_run_is(api: Api, memory: wiring.Services) -> None:
    wiring.set_services(
        dataclasses.replace(memory, settings=dataclasses.replace(memory.settings, pre_sign_support=False))
    )
    assert_error(api.post("/repositories/repo1/gc/prepare_commits"), 404)  # no rules yet
    api.request("PUT", rules_path(), json_body=RULES)
    api.upload("repo1", "main", "a.txt", b"a")
    api.commit("repo1", "main", "one")
    api.upload("repo1", "main", "staged.txt", b"s")

    response = api.post("/repositories/repo1/gc/prepare_commits")

    assert response.status_code == 201, response.body
    body = json.loads(response.body)
    conforms(GarbageCollectionPrepareResponse, body)
    run_id = body["run_id"]
    root = "s3://test-bucket/repos/repo1/_lakefs/retention/gc"
    assert body["gc_commits_location"] == f"{root}/commits/run_id={run_id}/commits.csv"
    assert body["gc_addresses_location"] == f"{root}/addresses/run_id={run_id}/"
    assert "gc_commits_presigned_url" not in body
    blocks = memory.engine.ports.blocks
    lines = blocks.get(body["gc_commits_location"]).decode().splitlines()
    assert len(lines) == 3  # header, the commit and the initial commit (both inside 30 days)
    manifest = json.loads(blocks.get(f"{root}/runs/run_id={run_id}/prepare.json"))
    assert manifest["staged_addresses"] == 1 and manifest["repository"] == "repo1"
    assert_error(api.post("/repositories/nope/gc/prepare_commits"), 404)


def test_prepare_commits_presigns_the_commits_file_when_presign_is_on(memory: wiring.Services) -> None:
    presigning = dataclasses.replace(memory, settings=dataclasses.replace(memory.settings, pre_sign_support=True))
    wiring.set_services(presigning)
    credential, secret = presigning.auth.setup("admin")
    with Client(app) as client:
        api = Api(client, (credential.access_key_id, secret))
        api.create_repo("repo1")
        api.request("PUT", rules_path(), json_body=RULES)
        body = json.loads(api.post("/repositories/repo1/gc/prepare_commits").body)
    conforms(GarbageCollectionPrepareResponse, body)
    assert body["gc_commits_presigned_url"].startswith("https://")
    assert body["run_id"] in body["gc_commits_presigned_url"]


def test_internal_rules_routes_are_the_same_rules(api: Api) -> None:
    """lakeFS's internalGet/Set/DeleteGarbageCollectionRules (.../gc/rules, set is a POST) share the rules of
    .../settings/gc_rules; set_allowed says whether the caller may set them."""
    internal = "/repositories/repo1/gc/rules"
    assert_error(api.get(internal), 404)
    assert api.post(internal, json_body=RULES).status_code == 204
    assert json.loads(api.get(rules_path()).body) == RULES
    assert conforms(GarbageCollectionRules, json.loads(api.get(internal).body)).default_retention_days == 7
    assert_error(api.post(internal, json_body={"branches": []}), 400)
    assert api.delete(internal).status_code == 204
    assert_error(api.get(rules_path()), 404)
    assert api.get(internal + "/set_allowed").status_code == 204


def test_set_allowed_refuses_a_viewer(api: Api) -> None:
    assert api.post("/auth/users", json_body={"id": "viewer"}).status_code == 201
    assert api.request("PUT", "/auth/groups/Viewers/members/viewer").status_code == 201
    pair = json.loads(api.post("/auth/users/viewer/credentials").body)
    viewer = Api(api.client, (pair["access_key_id"], pair["secret_access_key"]))
    assert_error(viewer.get("/repositories/repo1/gc/rules/set_allowed"), 403)
    assert_error(viewer.post("/repositories/repo1/gc/rules", json_body=RULES), 403)


def test_prepare_async_names_the_run_and_its_status_reads_it_back(api: Api, memory: wiring.Services) -> None:
    """lakeFS's prepare_commits/async and its status: Lakelet's prepare completes within the POST (202 with the
    task id, which is the run id), and the status answers the run's locations from its manifest."""
    from lakefs_sdk.models import PrepareGarbageCollectionCommitsStatus, TaskCreation

    assert_error(api.post("/repositories/repo1/gc/prepare_commits/async"), 404)  # no rules yet
    api.request("PUT", rules_path(), json_body=RULES)
    api.upload("repo1", "main", "a.txt", b"a")
    api.commit("repo1", "main", "one")
    started = api.post("/repositories/repo1/gc/prepare_commits/async")
    assert started.status_code == 202
    task_id = conforms(TaskCreation, json.loads(started.body)).id
    status_url = "/repositories/repo1/gc/prepare_commits/status"
    answer = api.get(status_url, query={"id": task_id})
    assert answer.status_code == 200
    raw = json.loads(answer.body)
    assert raw["update_time"].endswith("Z") and "T" in raw["update_time"]  # RFC 3339, as lakeFS
    status = PrepareGarbageCollectionCommitsStatus.from_dict(raw)
    assert status.task_id == task_id and status.completed and status.error is None
    assert status.result is not None and status.result.run_id == task_id
    lines = memory.engine.ports.blocks.get(status.result.gc_commits_location).decode().splitlines()
    assert len(lines) == 3
    assert_error(api.get(status_url, query={"id": "no-such-run"}), 404)
    assert_error(api.get(status_url, query={"id": "../rules.json"}), 400)
    assert_error(api.get(status_url), 400)


def test_prepare_uncommitted_writes_every_staged_address(api: Api, memory: wiring.Services) -> None:
    api.upload("repo1", "main", "committed.txt", b"c")
    api.commit("repo1", "main", "one")
    api.request("POST", "/repositories/repo1/branches", json_body={"name": "dev", "source": "main"})
    staged = [api.upload("repo1", branch, "s.txt", b"s")["physical_address"] for branch in ("main", "dev")]

    # No rules needed, as lakeFS; a body is optional, and an empty token is no token.
    for kwargs in ({}, {"json_body": {}}, {"json_body": {"continuation_token": ""}}):
        response = api.post("/repositories/repo1/gc/prepare_uncommited", **kwargs)
        assert response.status_code == 201, response.body
        body = json.loads(response.body)
        conforms(PrepareGCUncommittedResponse, body)
        assert "continuation_token" not in body  # everything in one call
        root = "s3://test-bucket/repos/repo1/_lakefs/retention/gc"
        assert body["gc_uncommitted_location"] == f"{root}/staged/run_id={body['run_id']}/"
        part = memory.engine.ports.blocks.get(body["gc_uncommitted_location"] + "part-00000.parquet")
        assert read_addresses_parquet(part) == sorted(staged)


def test_prepare_uncommitted_with_nothing_staged_still_writes_a_part(api: Api, memory: wiring.Services) -> None:
    body = json.loads(api.post("/repositories/repo1/gc/prepare_uncommited").body)
    assert (
        read_addresses_parquet(memory.engine.ports.blocks.get(body["gc_uncommitted_location"] + "part-00000.parquet"))
        == []
    )


def test_prepare_uncommitted_bad_input(api: Api) -> None:
    url = "/repositories/repo1/gc/prepare_uncommited"
    assert_error(api.post(url, json_body={"continuation_token": "abc"}), 400)
    assert_error(api.post(url, json_body={"continuation_token": 5}), 400)
    assert_error(api.post(url, body=b"[1]", headers={"content-type": "application/json"}), 400)
    assert_error(api.post("/repositories/nope1/gc/prepare_uncommited"), 404)
    assert api.post("/auth/users", json_body={"id": "viewer"}).status_code == 201
    assert api.request("PUT", "/auth/groups/Viewers/members/viewer").status_code == 201
    pair = json.loads(api.post("/auth/users/viewer/credentials").body)
    viewer = Api(api.client, (pair["access_key_id"], pair["secret_access_key"]))
    assert_error(viewer.post(url), 403)
