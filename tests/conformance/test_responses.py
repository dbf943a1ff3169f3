"""Every operation Lakelet serves, called the way a client does, answers what the lakeFS spec documents and
a body the lakefs-sdk model of that status parses exactly. The walk must cover every operation of the spec."""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote, urlencode

import pyarrow.parquet as pq
import pytest
import yaml
from chalice.test import Client

from chalicelib import wiring
from chalicelib.graveler.identity import commit_id
from chalicelib.graveler.records import Commit

from ..api.hook_server import start_hook_server
from .over_http import served
from .support import (
    PREFIX,
    app,
    basic,
    check_response,
    seeded_services,
    spec,
    template_of,
)

Step = tuple[str, str, dict[str, Any], int]


def commit_record(parent: Commit) -> dict[str, Any]:
    """A CommitRecordCreation for a child of ``parent`` with its tree, under the id its content hashes to."""
    fields: dict[str, Any] = {
        "committer": "restorer",
        "message": "restored",
        "metarange_id": parent.meta_range_id,
        "creation_date": 1_700_000_000,
        "metadata": {},
        "parents": [parent.id],
    }
    record_id = commit_id(fields["committer"], fields["message"], parent.meta_range_id, 1_700_000_000, {}, [parent.id])
    return {**fields, "commit_id": record_id, "version": 1, "generation": parent.generation + 1}


def steps(services: wiring.Services, hook_url: str) -> list[Step]:
    """(method, path, request, expected status), in an order where each finds what it needs. ``hook_url``: a
    webhook the post-commit action on repo2 calls, so the runs API has a run to answer about."""
    commit = services.engine.commits.get_commit("repo1", "main")
    commit_id, meta_range = commit.id, str(commit.meta_range_id)
    metarange_file = pq.read_table(io.BytesIO(services.engine.repositories.read_metadata_file("repo1", meta_range)))
    range_id = metarange_file.column("range_id")[0].as_py()
    action = yaml.safe_dump(
        {
            "name": "notify",
            "on": {"post-commit": None},
            "hooks": [{"id": "notify", "type": "webhook", "properties": {"url": hook_url}}],
        }
    ).encode()
    r2 = "/repositories/repo2"
    policy = {"id": "p1", "statement": [{"effect": "allow", "action": ["fs:Read*"], "resource": "*"}]}
    r = "/repositories/repo1"
    ns = services.engine.repositories.get_repository("repo1").storage_namespace
    return [
        ("GET", "/healthcheck", {}, 204),
        ("GET", "/setup_lakefs", {}, 200),
        ("POST", "/setup_lakefs", {"json": {"username": "second"}}, 409),
        ("GET", "/config", {}, 200),
        ("GET", "/config/storage", {}, 200),
        ("GET", "/config/version", {}, 200),
        ("GET", "/config/garbage-collection", {}, 200),
        (
            "POST",
            "/setup_comm_prefs",
            {"json": {"email": "a@example.com", "featureUpdates": False, "securityUpdates": False}},
            200,
        ),
        ("POST", "/statistics", {"json": {"events": [{"class": "ui-event", "name": "open", "count": 1}]}}, 204),
        ("GET", "/usage-report/summary", {}, 200),
        ("GET", "/user", {}, 200),
        (
            "POST",
            "/auth/login",
            {
                "json": {
                    "access_key_id": "AKIAIOSFODNN7EXAMPLE",
                    "secret_access_key": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
                }
            },
            200,
        ),
        ("GET", "/repositories", {}, 200),
        ("GET", "/repositories", {"query": {"search": "repo"}}, 200),
        ("POST", "/repositories", {"json": {"name": "repo2", "storage_namespace": "s3://conformance/repo2"}}, 201),
        ("GET", r, {}, 200),
        ("GET", r + "/metadata", {}, 200),
        ("POST", r + "/metadata", {"json": {"metadata": {"k": "v"}}}, 204),
        ("DELETE", r + "/metadata", {"json": {"keys": ["k"]}}, 204),
        ("GET", r + "/branches", {}, 200),
        ("POST", r + "/branches", {"json": {"name": "feature", "source": "main"}}, 201),
        ("GET", r + "/branches/dev", {}, 200),
        ("GET", r + "/branches/dev/diff", {}, 200),
        ("GET", r + "/refs/main/diff/dev", {}, 200),
        ("GET", r + "/refs/main/objects", {"query": {"path": "a.txt"}}, 200),
        ("GET", r + "/refs/main/objects", {"query": {"path": "a.txt"}, "headers": {"range": "bytes=1-2"}}, 206),
        ("GET", r + "/refs/main/objects", {"query": {"path": "a.txt", "presign": "true"}}, 302),
        ("HEAD", r + "/refs/main/objects", {"query": {"path": "a.txt"}}, 200),
        ("GET", r + "/refs/main/objects/underlyingProperties", {"query": {"path": "a.txt"}}, 200),
        ("GET", r + "/branches/dev/objects/stage_allowed", {"query": {"path": "a.txt"}}, 204),
        ("GET", r + "/metadata/meta_range/" + meta_range, {}, 200),
        ("GET", r + "/metadata/range/" + range_id, {}, 200),
        ("GET", r + "/metadata/object/range/" + range_id, {}, 200),
        ("GET", r + "/metadata/object/meta_range/" + meta_range, {"query": {"presign": "true"}}, 302),
        ("GET", r + "/refs/main/objects/stat", {"query": {"path": "a.txt", "presign": "true"}}, 200),
        ("GET", r + "/refs/main/objects/ls", {"query": {"delimiter": "/"}}, 200),
        ("POST", r + "/branches/dev/objects", {"query": {"path": "new.txt"}, "body": b"new"}, 201),
        (
            "POST",
            r + "/branches/dev/objects/copy",
            {"query": {"dest_path": "c.txt"}, "json": {"src_path": "a.txt"}},
            201,
        ),
        # Presigned multipart: the part is stored as the client's PUT to its URL would (the "pmpu" steps use the
        # upload the last create answered).
        ("POST", r + "/branches/dev/staging/pmpu", {"query": {"path": "m.bin", "parts": 1}}, 201),
        (
            "PUT",
            r + "/branches/dev/staging/pmpu/{upload_id}/parts/2",
            {"query": {"path": "m.bin"}, "pmpu": "part"},
            200,
        ),
        (
            "PUT",
            r + "/branches/dev/staging/pmpu/{upload_id}/parts/3/copy",
            {"query": {"path": "m.bin"}, "pmpu": "copy"},
            204,
        ),
        ("PUT", r + "/branches/dev/staging/pmpu/{upload_id}", {"query": {"path": "m.bin"}, "pmpu": "complete"}, 200),
        ("POST", r + "/branches/dev/staging/pmpu", {"query": {"path": "m2.bin"}}, 201),
        ("DELETE", r + "/branches/dev/staging/pmpu/{upload_id}", {"query": {"path": "m2.bin"}, "pmpu": "abort"}, 204),
        ("GET", r + "/branches/dev/staging/backing", {"query": {"path": "s.txt", "presign": "true"}}, 200),
        ("PUT", r + "/branches/dev/staging/backing", {"query": {"path": "s.txt"}, "link": True}, 200),
        (
            "PUT",
            r + "/branches/dev/objects/stat/user_metadata",
            {"query": {"path": "c.txt"}, "json": {"set": {"owner": "data-team"}}},
            204,
        ),
        ("DELETE", r + "/branches/dev/objects", {"query": {"path": "c.txt"}}, 204),
        ("POST", r + "/branches/dev/objects/delete", {"json": {"paths": ["new.txt"]}}, 200),
        ("POST", r + "/branches/dev/commits", {"json": {"message": "on dev"}}, 201),
        ("GET", r + "/commits/" + commit_id, {}, 200),
        ("POST", r + "/commits", {"json": commit_record(commit)}, 204),
        ("GET", r + "/refs/dev/commits", {}, 200),
        # No import location is allowed in this deployment: a 403 that names the setting.
        (
            "POST",
            r + "/branches/dev/import",
            {
                "json": {
                    "paths": [{"type": "common_prefix", "path": "s3://elsewhere/x/", "destination": "x/"}],
                    "commit": {"message": "import"},
                }
            },
            403,
        ),
        ("GET", r + "/branches/dev/import", {"query": {"id": "0" * 32}}, 404),
        # stageObject is a one-object import: refused the same way here.
        (
            "PUT",
            r + "/branches/dev/objects",
            {
                "query": {"path": "staged.txt"},
                "json": {"physical_address": "s3://elsewhere/x", "checksum": "c", "size_bytes": 1},
            },
            403,
        ),
        ("DELETE", r + "/branches/dev/import", {"query": {"id": "0" * 32}}, 404),
        ("GET", r + "/refs/dev/merge/main", {}, 200),
        ("POST", r + "/refs/dev/merge/main", {"json": {}}, 200),
        ("POST", r + "/branches/feature/cherry-pick", {"json": {"ref": "dev"}}, 201),
        ("POST", r + "/branches/feature/revert", {"json": {"ref": "feature", "parent_number": 0}}, 204),
        ("PUT", r + "/branches/feature", {"json": {"type": "reset"}}, 204),
        ("PUT", r + "/branches/feature/hard_reset", {"query": {"ref": "main"}}, 204),
        ("DELETE", r + "/branches/feature", {}, 204),
        ("GET", r + "/tags", {}, 200),
        ("POST", r + "/tags", {"json": {"id": "v2", "ref": "main"}}, 201),
        ("GET", r + "/tags/v2", {}, 200),
        ("DELETE", r + "/tags/v2", {}, 204),
        ("GET", r + "/settings/gc_rules", {}, 404),
        ("PUT", r + "/settings/gc_rules", {"json": {"default_retention_days": 7, "branches": []}}, 204),
        ("GET", r + "/settings/gc_rules", {}, 200),
        ("POST", r + "/gc/prepare_commits", {}, 201),
        ("POST", r + "/gc/prepare_commits/async", {}, 202),
        ("GET", r + "/gc/prepare_commits/status", {"query": {"id": "no-such-run"}}, 404),
        ("POST", r + "/gc/prepare_uncommited", {"json": {}}, 201),
        ("POST", r + "/refs/dev/symlink", {"query": {"location": "a"}}, 201),
        ("DELETE", r + "/settings/gc_rules", {}, 204),
        ("POST", r + "/gc/rules", {"json": {"default_retention_days": 3, "branches": []}}, 204),
        ("GET", r + "/gc/rules", {}, 200),
        ("GET", r + "/gc/rules/set_allowed", {}, 204),
        ("DELETE", r + "/gc/rules", {}, 204),
        ("GET", r + "/settings/branch_protection", {}, 200),
        (
            "PUT",
            r + "/settings/branch_protection",
            {"json": [{"pattern": "release-*"}], "headers": {"if-match": '""'}},
            204,
        ),
        ("GET", r + "/branch_protection/set_allowed", {}, 204),
        ("POST", r + "/branch_protection", {"json": {"pattern": "stable"}}, 204),
        ("GET", r + "/branch_protection", {}, 200),
        ("DELETE", r + "/branch_protection", {"json": {"pattern": "stable"}}, 204),
        ("POST", r + "/branches/dev/objects", {"query": {"path": "p.txt"}, "body": b"x"}, 201),
        ("PUT", r + "/settings/branch_protection", {"json": [{"pattern": "dev"}]}, 204),
        ("POST", r + "/branches/dev/objects", {"query": {"path": "p.txt"}, "body": b"x"}, 403),
        ("POST", r + "/branches/dev/commits", {"json": {"message": "refused"}}, 403),
        ("PUT", r + "/settings/branch_protection", {"json": []}, 204),
        ("DELETE", r + "/branches/dev/objects", {"query": {"path": "p.txt"}}, 204),
        ("POST", r + "/branches", {"json": {"name": "pr-src", "source": "main"}}, 201),
        ("POST", r + "/branches/pr-src/objects", {"query": {"path": "pr.txt"}, "body": b"x"}, 201),
        ("POST", r + "/branches/pr-src/commits", {"json": {"message": "for a pull request"}}, 201),
        ("POST", r + "/pulls", {"json": {"title": "t", "source_branch": "pr-src", "destination_branch": "main"}}, 201),
        ("GET", r + "/pulls", {"query": {"status": "open"}}, 200),
        ("GET", r + "/pulls/{pr_id}", {}, 200),
        ("PATCH", r + "/pulls/{pr_id}", {"json": {"description": "d"}}, 204),
        ("PUT", r + "/pulls/{pr_id}/merge", {}, 200),
        ("PUT", r + "/refs/dump", {}, 201),
        ("POST", r + "/dump", {}, 202),
        ("GET", r + "/dump", {"query": {"task_id": "{task_id}"}}, 200),
        ("POST", "/repositories", {"query": {"bare": "true"}, "json": {"name": "bare1", "storage_namespace": ns}}, 201),
        ("PUT", "/repositories/bare1/refs/restore", {"restore": True}, 200),
        ("POST", "/repositories", {"query": {"bare": "true"}, "json": {"name": "bare2", "storage_namespace": ns}}, 201),
        ("POST", "/repositories/bare2/restore", {"restore": True}, 202),
        ("GET", "/repositories/bare2/restore", {"query": {"task_id": "{task_id}"}}, 200),
        ("GET", "/auth/users", {}, 200),
        ("POST", "/auth/users", {"json": {"id": "bob"}}, 201),
        ("GET", "/auth/users/bob", {}, 200),
        ("POST", "/auth/users/bob/credentials", {}, 201),
        ("GET", "/auth/users/bob/credentials", {}, 200),
        ("GET", "/auth/users/admin/credentials/AKIAIOSFODNN7EXAMPLE", {}, 200),
        ("GET", "/auth/users/bob/groups", {}, 200),
        ("GET", "/auth/groups", {}, 200),
        ("POST", "/auth/groups", {"json": {"id": "team"}}, 201),
        ("GET", "/auth/groups/team", {}, 200),
        ("PUT", "/auth/groups/team/members/bob", {}, 201),
        ("GET", "/auth/groups/team/members", {}, 200),
        ("GET", "/auth/policies", {}, 200),
        ("POST", "/auth/policies", {"json": policy}, 201),
        ("GET", "/auth/policies/p1", {}, 200),
        ("PUT", "/auth/policies/p1", {"json": policy}, 200),
        ("PUT", "/auth/groups/team/policies/p1", {}, 201),
        ("GET", "/auth/groups/team/policies", {}, 200),
        ("PUT", "/auth/users/bob/policies/p1", {}, 201),
        ("GET", "/auth/users/bob/policies", {"query": {"effective": "true"}}, 200),
        ("DELETE", "/auth/users/bob/policies/p1", {}, 204),
        ("DELETE", "/auth/groups/team/policies/p1", {}, 204),
        ("DELETE", "/auth/groups/team/members/bob", {}, 204),
        ("DELETE", "/auth/policies/p1", {}, 204),
        ("DELETE", "/auth/groups/team", {}, 204),
        ("DELETE", "/auth/users/bob/credentials/{bob_key}", {}, 204),
        ("DELETE", "/auth/users/bob", {}, 204),
        (
            "POST",
            r2 + "/branches/main/objects",
            {"query": {"path": "_lakefs_actions/notify.yaml"}, "body": action},
            201,
        ),
        ("POST", r2 + "/branches/main/commits", {"json": {"message": "add the action"}}, 201),
        ("GET", r2 + "/actions/runs", {"query": {"branch": "main"}}, 200),
        ("GET", r2 + "/actions/runs/{run_id}", {}, 200),
        ("GET", r2 + "/actions/runs/{run_id}/hooks", {}, 200),
        ("GET", r2 + "/actions/runs/{run_id}/hooks/0000_0000/output", {}, 200),
        ("GET", r2 + "/actions/runs/{run_id}/hooks/9999_9999/output", {}, 404),
        ("GET", r2 + "/actions/runs/0/hooks", {}, 404),
        ("DELETE", "/repositories/repo2", {}, 204),
        # What lakeFS OSS answers 501 to (api/unsupported.py).
        ("POST", "/sts/login", {"json": {"code": "c", "state": "s", "redirect_uri": "http://x"}}, 501),
        ("POST", "/auth/external/principal/login", {"json": {"identityRequest": {}}}, 501),
        ("GET", "/auth/external/principals", {"query": {"principalId": "p"}}, 501),
        ("POST", "/auth/users/bob/external/principals", {"query": {"principalId": "p"}, "json": {}}, 501),
        ("DELETE", "/auth/users/bob/external/principals", {"query": {"principalId": "p"}}, 501),
        ("GET", "/auth/users/bob/external/principals/ls", {}, 501),
    ]


def multipart_step(
    services: wiring.Services, upload: dict[str, Any], path: str, request: dict[str, Any]
) -> tuple[str, dict[str, Any]]:
    """The step's path and request for the upload ``upload`` (the last create's answer); for "complete", its one
    part stored first, as the client's PUT to the part's URL stores it."""
    body: dict[str, Any] = {"physical_address": upload["physical_address"]}
    if request["pmpu"] == "copy":
        body["copy_source"] = {"repository": "repo1", "ref": "main", "path": "a.txt"}
    if request["pmpu"] == "complete":
        blocks = services.engine.ports.blocks
        etag = blocks.upload_part(upload["physical_address"], upload["upload_id"], 1, b"one part").etag
        body["parts"] = [{"part_number": 1, "etag": etag}]
    return path.format(upload_id=upload["upload_id"]), {"query": request["query"], "json": body}


@pytest.fixture
def hook_url() -> Iterator[str]:
    state, server = start_hook_server()
    yield state.on("/notify", 200, "notified")
    server.shutdown()
    server.server_close()


def only_run_id(services: wiring.Services, repository: str) -> str:
    hooks = services.engine.ports.hooks
    assert hooks is not None
    [run] = hooks.store.list(services.engine.repositories.get_repository(repository).storage_namespace).results
    return run.run_id


@pytest.fixture
def services() -> Iterator[wiring.Services]:
    built = seeded_services()
    wiring.set_services(built)
    yield built
    wiring.set_services(None)


def call(client: Client, method: str, path: str, request: dict[str, Any]):  # type: ignore[no-untyped-def]
    headers = {"authorization": basic(), "accept": "*/*", **request.get("headers", {})}
    body = request.get("body", b"")
    if "json" in request:
        body = json.dumps(request["json"]).encode()
        headers["content-type"] = "application/json"
    elif body:
        headers["content-type"] = "application/octet-stream"
    url = PREFIX + quote(path) + ("?" + urlencode(request["query"]) if "query" in request else "")
    return client.http.request(method, url, headers=headers, body=body)


@pytest.mark.parametrize("transport", ["test-client", "http"])
def test_every_served_operation_answers_in_lakefs_shapes(
    services: wiring.Services, hook_url: str, transport: str
) -> None:
    """Through chalice's test client (the app's answers as built) and through the local stack's HTTP server (what
    goes on the wire, where an empty answer must not gain a JSON type)."""
    covered: set[tuple[str, str]] = set()
    empty: set[tuple[str, str, int]] = set()
    previous = None
    upload: dict[str, Any] = {}
    with Client(app) if transport == "test-client" else served(app) as client:
        for method, step_path, step_request, expected in steps(services, hook_url):
            path, request = step_path, step_request
            if step_request.get("pmpu"):
                path, request = multipart_step(services, upload, step_path, step_request)
            if "{bob_key}" in step_path:  # made by an earlier step
                path = step_path.format(bob_key=services.auth.list_credentials("bob")[0].access_key_id)
            if "{run_id}" in step_path:  # the run the commit's post-commit hook made
                path = step_path.format(run_id=only_run_id(services, "repo2"))
            if "{pr_id}" in step_path:  # the pull request an earlier step opened
                [pr] = services.engine.pulls.list("repo1").results
                path = step_path.format(pr_id=pr.id)
            if step_request.get("query", {}).get("task_id") == "{task_id}":  # the task the previous step made
                assert previous is not None
                request = {**step_request, "query": {"task_id": json.loads(previous.body)["id"]}}
            if step_request.get("restore"):  # the manifest the dump wrote
                ns = services.engine.repositories.get_repository("repo1").storage_namespace
                manifest = json.loads(services.engine.ports.blocks.get(f"{ns}/_lakefs/refs_manifest.json"))
                request = {"json": manifest}
            if step_request.get("link"):  # the client uploads to the location the previous step handed out
                assert previous is not None
                staging = json.loads(previous.body)
                services.engine.ports.blocks.put(staging["physical_address"], b"staged")
                checksum = hashlib.md5(b"staged").hexdigest()  # link checks the claim against the upload
                request = {**step_request, "json": {"staging": staging, "checksum": checksum, "size_bytes": 6}}
            response = call(client, method, path, request)
            previous = response
            if method == "POST" and step_path.endswith("/staging/pmpu"):
                upload = json.loads(response.body)
            assert response.status_code == expected, (method, path, response.status_code, response.body[:300])
            template = template_of(method, path)
            check_response(method, template, response.status_code, response.body)
            covered.add((method, template))
            if not response.body and method != "HEAD":
                # lakectl parses any answer typed JSON and fails on an empty one, though the change was made.
                types = [v for k, v in response.headers.items() if k.lower() == "content-type"]
                assert types == [], (method, path, response.status_code, types)
                empty.add((method, template, response.status_code))
    everything = {(m.upper(), p) for p, ops in spec()["paths"].items() for m in ops}
    assert everything - covered == set()
    # The walk met the empty answers lakectl tripped on (201s of membership and attachments) and the 204s.
    assert {
        ("PUT", "/auth/groups/{groupId}/members/{userId}", 201),
        ("PUT", "/auth/users/{userId}/policies/{policyId}", 201),
    } <= empty
    assert len({e for e in empty if e[2] == 204}) > 20
