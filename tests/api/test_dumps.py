"""Refs dump and restore (PUT .../refs/dump, PUT .../refs/restore), the repository dump and restore tasks
(POST|GET .../dump, POST|GET .../restore) and bare repositories (POST /repositories?bare=true)."""

from __future__ import annotations

import json
from typing import Any

import lakefs_sdk

from chalicelib import wiring

from .support import NAMESPACE, Api, assert_error, body_of, conforms


def _history(api: Api, repo: str) -> None:
    api.upload(repo, "main", "a.csv", b"1")
    api.commit(repo, "main", "first", metadata={"k": "v"})
    assert api.post(f"/repositories/{repo}/branches", json_body={"name": "dev", "source": "main"}).status_code == 201
    api.upload(repo, "dev", "b.csv", b"2")
    api.commit(repo, "dev", "second")
    assert api.post(f"/repositories/{repo}/tags", json_body={"id": "v1", "ref": "main"}).status_code == 201


def _refs(api: Api, repo: str) -> dict[str, Any]:
    branches = {b["id"]: b["commit_id"] for b in body_of(api.get(f"/repositories/{repo}/branches"))["results"]}
    tags = {t["id"]: t["commit_id"] for t in body_of(api.get(f"/repositories/{repo}/tags"))["results"]}
    log = body_of(api.get(f"/repositories/{repo}/refs/dev/commits"))["results"]
    return {"branches": branches, "tags": tags, "log": log}


def _bare(api: Api, name: str, namespace: str, **query: Any) -> Any:
    body = {"name": name, "storage_namespace": namespace, "default_branch": "main"}
    return api.post("/repositories", json_body=body, query={"bare": "true", **query})


def test_bare_repository_has_no_branch_or_commit(api: Api) -> None:
    created = _bare(api, "bare1", f"{NAMESPACE}/bare1")
    assert created.status_code == 201, created.body
    repo = conforms(lakefs_sdk.Repository, body_of(created))
    assert (repo.id, repo.default_branch) == ("bare1", "main")
    assert body_of(api.get("/repositories/bare1/branches"))["results"] == []
    assert_error(api.get("/repositories/bare1/branches/main"), 404)
    assert_error(_bare(api, "bare1", f"{NAMESPACE}/other"), 409)
    assert_error(_bare(api, "Bad_Name", f"{NAMESPACE}/x"), 400)


def test_refs_dump_and_restore_round_trip(api: Api, repo: str, services: wiring.Services) -> None:
    _history(api, repo)
    before = _refs(api, repo)
    dumped = api.request("PUT", f"/repositories/{repo}/refs/dump")
    assert dumped.status_code == 201, dumped.body
    refs = conforms(lakefs_sdk.RefsDump, body_of(dumped))
    # The manifest is where lakeFS puts it, in lakeFS's JSON.
    namespace = body_of(api.get(f"/repositories/{repo}"))["storage_namespace"]
    manifest = json.loads(services.engine.ports.blocks.get(f"{namespace}/_lakefs/refs_manifest.json"))
    assert manifest == body_of(dumped)
    # Dumping unchanged refs again names the same files.
    assert body_of(api.request("PUT", f"/repositories/{repo}/refs/dump")) == body_of(dumped)

    # Rebuild it under another name on the same namespace's files (as after copying _lakefs/ elsewhere).
    assert _bare(api, "copy1", namespace).status_code == 201
    restored = api.request("PUT", "/repositories/copy1/refs/restore", json_body=refs.to_dict())
    assert restored.status_code == 200, restored.body
    assert _refs(api, "copy1") == before
    read = api.get("/repositories/copy1/refs/dev/objects", query={"path": "b.csv"}, headers={"accept": "*/*"})
    assert read.body == b"2"
    # The restored branch takes writes and commits as any other.
    api.upload("copy1", "main", "c.csv", b"3")
    api.commit("copy1", "main", "after restore")

    # Only into a bare repository.
    again = api.request("PUT", "/repositories/copy1/refs/restore", json_body=refs.to_dict())
    assert "bare repository" in assert_error(again, 400)


def test_restore_refuses_bad_manifests(api: Api, repo: str) -> None:
    _history(api, repo)
    refs = body_of(api.request("PUT", f"/repositories/{repo}/refs/dump"))
    namespace = body_of(api.get(f"/repositories/{repo}"))["storage_namespace"]
    assert _bare(api, "copy2", namespace).status_code == 201
    swapped = {**refs, "commits_meta_range_id": refs["tags_meta_range_id"]}
    assert "not a dump of commits" in assert_error(
        api.request("PUT", "/repositories/copy2/refs/restore", json_body=swapped), 400
    )
    assert_error(
        api.request("PUT", "/repositories/copy2/refs/restore", json_body={**refs, "tags_meta_range_id": "../x"}), 400
    )
    assert_error(
        api.request("PUT", "/repositories/copy2/refs/restore", json_body={**refs, "tags_meta_range_id": "0" * 64}), 404
    )
    assert_error(api.request("PUT", "/repositories/copy2/refs/restore", json_body={"force": True}), 400)
    # Nothing was written by the refused restores.
    assert body_of(api.get("/repositories/copy2/branches"))["results"] == []
    # A bare repository whose default branch the dump lacks is refused before anything is written.
    assert _bare(api, "copy3", namespace).status_code == 201
    api.request("DELETE", "/repositories/copy3")
    body = {"name": "copy3", "storage_namespace": namespace, "default_branch": "trunk"}
    assert api.post("/repositories", json_body=body, query={"bare": "true"}).status_code == 201
    assert "default branch" in assert_error(api.request("PUT", "/repositories/copy3/refs/restore", json_body=refs), 400)
    assert_error(api.request("PUT", "/repositories/nope/refs/dump"), 404)


def test_dump_and_restore_tasks(api: Api, repo: str) -> None:
    _history(api, repo)
    before = _refs(api, repo)
    submitted = api.post(f"/repositories/{repo}/dump")
    assert submitted.status_code == 202, submitted.body
    task_id = conforms(lakefs_sdk.TaskInfo, body_of(submitted)).id
    status = api.get(f"/repositories/{repo}/dump", query={"task_id": task_id})
    assert status.status_code == 200, status.body
    dump = lakefs_sdk.RepositoryDumpStatus.from_dict(body_of(status))
    assert dump.done and dump.error is None and dump.refs is not None
    assert body_of(status)["update_time"].endswith("Z")
    assert_error(api.get(f"/repositories/{repo}/dump", query={"task_id": "dump-" + "0" * 32}), 404)
    assert_error(api.get(f"/repositories/{repo}/restore", query={"task_id": task_id}), 404)
    assert_error(api.get(f"/repositories/{repo}/dump"), 400)

    namespace = body_of(api.get(f"/repositories/{repo}"))["storage_namespace"]
    assert _bare(api, "copy4", namespace).status_code == 201
    restore = api.post("/repositories/copy4/restore", json_body=dump.refs.to_dict())
    assert restore.status_code == 202, restore.body
    restore_id = body_of(restore)["id"]
    state = lakefs_sdk.RepositoryRestoreStatus.from_dict(
        body_of(api.get("/repositories/copy4/restore", query={"task_id": restore_id}))
    )
    assert state.done and state.error is None
    assert _refs(api, "copy4") == before
    # A second restore is refused at once: the repository is no longer bare.
    assert "bare repository" in assert_error(
        api.post("/repositories/copy4/restore", json_body=dump.refs.to_dict()), 400
    )
    # A restore that fails is recorded as failed.
    assert _bare(api, "copy5", namespace).status_code == 201
    broken = {**dump.refs.to_dict(), "tags_meta_range_id": "0" * 64}
    failed_id = body_of(api.post("/repositories/copy5/restore", json_body=broken))["id"]
    failed = body_of(api.get("/repositories/copy5/restore", query={"task_id": failed_id}))
    assert failed["done"] is True and failed["error"]


def test_read_only_target_needs_force(api: Api, repo: str) -> None:
    _history(api, repo)
    refs = body_of(api.request("PUT", f"/repositories/{repo}/refs/dump"))
    namespace = body_of(api.get(f"/repositories/{repo}"))["storage_namespace"]
    body = {"name": "frozen", "storage_namespace": namespace, "read_only": True}
    assert api.post("/repositories", json_body=body, query={"bare": "true"}).status_code == 201
    assert_error(api.request("PUT", "/repositories/frozen/refs/restore", json_body=refs), 403)
    forced = api.request("PUT", "/repositories/frozen/refs/restore", json_body={**refs, "force": True})
    assert forced.status_code == 200, forced.body
