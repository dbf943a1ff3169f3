"""POST|GET /repositories/{r}/refs/{source}/merge/{dest}: every row of the merge table, strategies, refusals,
the 409 with its conflict list, previews, and the merge base; shapes checked with the lakefs_sdk models."""

from __future__ import annotations

import json
from typing import Any

import lakefs_sdk
import pytest

from .support import Api, assert_error, body_of, conforms

MERGE = "/repositories/repo1/refs/{source}/merge/{dest}"
CONFLICT = "conflict"
KEEP = ("keep",)
DELETE = ("delete",)


def put(content: str) -> tuple[str, str]:
    return ("put", content)


def _apply(api: Api, branch: str, path: str, op: tuple[str, ...]) -> None:
    if op[0] == "put":
        api.upload("repo1", branch, path, op[1].encode())
    elif op[0] == "delete":
        assert api.delete(f"/repositories/repo1/branches/{branch}/objects", query={"path": path}).status_code == 204


def _read(api: Api, ref: str, path: str) -> str | None:
    response = api.get(f"/repositories/repo1/refs/{ref}/objects", query={"path": path})
    if response.status_code == 404:
        return None
    assert response.status_code == 200, response.body
    return response.body.decode()


def _merge(api: Api, source: str = "dev", dest: str = "main", query: dict[str, Any] | None = None, **body: Any):
    return api.post(MERGE.format(source=source, dest=dest), json_body=body, query=query)


def _fork(api: Api, files: dict[str, str]) -> None:
    for path, content in files.items():
        api.upload("repo1", "main", path, content.encode())
    api.commit("repo1", "main", "base")
    assert api.post("/repositories/repo1/branches", json_body={"name": "dev", "source": "main"}).status_code == 201


ROWS = [
    # (base, source, destination, expected), one per row of the table (lakefs-semantics.md section 5)
    pytest.param("v0", KEEP, KEEP, "v0", id="unchanged"),
    pytest.param("v0", put("src"), KEEP, "src", id="changed-on-source-only"),
    pytest.param("v0", KEEP, put("dst"), "dst", id="changed-on-destination-only"),
    pytest.param("v0", put("same"), put("same"), "same", id="changed-identically-on-both"),
    pytest.param("v0", DELETE, KEEP, None, id="deleted-on-source-unchanged-on-destination"),
    pytest.param("v0", KEEP, DELETE, None, id="deleted-on-destination-unchanged-on-source"),
    pytest.param("v0", DELETE, DELETE, None, id="deleted-on-both"),
    pytest.param(None, put("src"), KEEP, "src", id="added-on-source-only"),
    pytest.param(None, KEEP, put("dst"), "dst", id="added-on-destination-only"),
    pytest.param(None, put("same"), put("same"), "same", id="added-identically-on-both"),
    pytest.param("v0", put("src"), put("dst"), CONFLICT, id="conflict-changed-differently"),
    pytest.param("v0", put("src"), DELETE, CONFLICT, id="conflict-changed-on-source-deleted-on-destination"),
    pytest.param("v0", DELETE, put("dst"), CONFLICT, id="conflict-deleted-on-source-changed-on-destination"),
    pytest.param(None, put("src"), put("dst"), CONFLICT, id="conflict-added-differently"),
]


@pytest.mark.parametrize(("base", "source", "dest", "expected"), ROWS)
def test_merge_table_row(api: Api, repo: str, base, source, dest, expected) -> None:
    # Unrelated changes on both sides make every case a true three-way merge.
    _fork(api, {"other": "o"} if base is None else {"k": base, "other": "o"})
    _apply(api, "dev", "k", source)
    api.upload("repo1", "dev", "dev-only", b"d")
    api.commit("repo1", "dev", "dev side")
    _apply(api, "main", "k", dest)
    api.upload("repo1", "main", "main-only", b"m")
    head = api.commit("repo1", "main", "main side")["id"]
    dev_head = body_of(api.get("/repositories/repo1/branches/dev"))["commit_id"]

    response = _merge(api)

    if expected == CONFLICT:
        assert response.status_code == 409, response.body
        payload = body_of(response)
        assert lakefs_sdk.Error.from_dict(payload).message.startswith("conflict found")
        side = {"put": "changed" if base else "added", "delete": "deleted"}
        assert payload["conflicts"] == [{"path": "k", "source": side[source[0]], "destination": side[dest[0]]}]
        assert payload["pagination"] == {"has_more": False, "next_offset": "", "results": 1, "max_per_page": 1000}
        assert body_of(api.get("/repositories/repo1/branches/main"))["commit_id"] == head
        return
    assert response.status_code == 200, response.body
    reference = conforms(lakefs_sdk.MergeResult, body_of(response)).reference
    assert _read(api, "main", "k") == expected
    assert (_read(api, "main", "dev-only"), _read(api, "main", "main-only")) == ("d", "m")
    commit = conforms(lakefs_sdk.Commit, body_of(api.get(f"/repositories/repo1/commits/{reference}")))
    assert commit.parents == [head, dev_head]
    assert commit.message == "Merge 'dev' into 'main'"
    assert commit.metadata == {".lakefs.merge.strategy": "default"}


def _conflicting(api: Api) -> None:
    _fork(api, {"a": "a0", "b": "b0", "c": "c0"})
    for path in ("a", "b", "c"):
        api.upload("repo1", "dev", path, f"{path}-dev".encode())
    api.upload("repo1", "dev", "new", b"n")
    api.commit("repo1", "dev", "dev side")
    for path in ("a", "b"):
        api.upload("repo1", "main", path, f"{path}-main".encode())
    api.delete("/repositories/repo1/branches/main/objects", query={"path": "c"})
    api.commit("repo1", "main", "main side")


@pytest.mark.parametrize(("strategy", "a", "c"), [("dest-wins", "a-main", None), ("source-wins", "a-dev", "c-dev")])
def test_strategies(api: Api, repo: str, strategy: str, a: str, c: str | None) -> None:
    _conflicting(api)
    response = _merge(api, strategy=strategy, message="settle", metadata={"k": "v"})
    assert response.status_code == 200, response.body
    reference = body_of(response)["reference"]
    assert (_read(api, "main", "a"), _read(api, "main", "c"), _read(api, "main", "new")) == (a, c, "n")
    commit = body_of(api.get(f"/repositories/repo1/commits/{reference}"))
    assert commit["message"] == "settle"
    assert commit["metadata"] == {"k": "v", ".lakefs.merge.strategy": strategy}


def test_path_strategies(api: Api, repo: str) -> None:
    _conflicting(api)
    rules = [{"path": "a", "strategy": "source-wins"}, {"path": "[bc]", "strategy": "dest-wins"}]
    response = _merge(api, path_strategies=rules)
    assert response.status_code == 200, response.body
    assert (_read(api, "main", "a"), _read(api, "main", "b"), _read(api, "main", "c")) == ("a-dev", "b-main", None)
    commit = body_of(api.get(f"/repositories/repo1/commits/{body_of(response)['reference']}"))
    assert json.loads(commit["metadata"][".lakelet.merge.path_strategies"]) == rules


def test_conflict_list_is_paginated_and_continues_in_a_preview(api: Api, repo: str) -> None:
    _conflicting(api)
    first = _merge(api, query={"amount": 2})
    assert first.status_code == 409
    payload = body_of(first)
    assert [c["path"] for c in payload["conflicts"]] == ["a", "b"]
    assert payload["pagination"]["has_more"] and payload["pagination"]["next_offset"] == "b"
    rest = _merge(api, query={"dry_run": "true", "only_conflicts": "true", "after": "b"})
    assert [r["path"] for r in body_of(rest)["results"]] == ["c"]
    assert body_of(rest)["results"][0]["conflict"] == {"path": "c", "source": "changed", "destination": "deleted"}
    # A rule that fails a path keeps it a conflict even under a strategy.
    failing = _merge(api, strategy="source-wins", path_strategies=[{"path": "b", "strategy": "fail"}])
    assert [c["path"] for c in body_of(failing)["conflicts"]] == ["b"]


def test_preview_commits_nothing(api: Api, repo: str) -> None:
    _conflicting(api)
    head = body_of(api.get("/repositories/repo1/branches/main"))["commit_id"]
    response = _merge(api, dry_run=True, strategy="dest-wins")
    assert response.status_code == 200
    payload = body_of(response)
    assert lakefs_sdk.MergeResult.from_dict(payload).reference == head
    assert payload["summary"] == {"added": 1, "removed": 0, "changed": 0, "conflict": 3, "unresolved": 0}
    listed = lakefs_sdk.DiffList.from_dict({"pagination": payload["pagination"], "results": payload["results"]})
    assert [(d.path, d.type) for d in listed.results] == [
        ("a", "conflict"),
        ("b", "conflict"),
        ("c", "conflict"),
        ("new", "added"),
    ]
    assert payload["results"][0]["conflict"] == {
        "path": "a",
        "source": "changed",
        "destination": "changed",
        "resolution": "dest-wins",
    }
    paged = body_of(_merge(api, query={"dry_run": "True", "amount": 1, "after": "a"}))
    assert [r["path"] for r in paged["results"]] == ["b"] and paged["pagination"]["next_offset"] == "b"
    assert body_of(api.get("/repositories/repo1/branches/main"))["commit_id"] == head
    assert body_of(api.get("/repositories/repo1/refs/main/commits"))["results"][0]["id"] == head


def test_refusals(api: Api, repo: str) -> None:
    _fork(api, {"a": "1"})
    assert "holds every change" in assert_error(_merge(api), 400)  # nothing new on dev
    assert _merge(api, allow_empty=True).status_code == 200
    api.upload("repo1", "dev", "a", b"2")
    api.commit("repo1", "dev")
    assert "strategy" in assert_error(_merge(api, strategy="theirs"), 400)
    assert_error(_merge(api, path_strategies=[{"path": "a", "strategy": "mine"}]), 400)
    assert_error(_merge(api, path_strategies="a"), 400)
    assert_error(_merge(api, path_strategies=[{"glob": "a"}]), 400)
    api.upload("repo1", "main", "dirty", b"x")
    assert "uncommitted" in assert_error(_merge(api), 400)
    assert_error(_merge(api, dest="nope"), 404)
    assert_error(_merge(api, source="nope"), 404)
    assert_error(_merge(api, dest="bad%20name"), 400)
    bad_json = api.post(
        MERGE.format(source="dev", dest="main"), body=b"{", headers={"content-type": "application/json"}
    )
    assert_error(bad_json, 400)


def test_empty_body_and_squash_merge(api: Api, repo: str) -> None:
    _fork(api, {"a": "1"})
    api.upload("repo1", "dev", "a", b"2")
    api.commit("repo1", "dev")
    head = body_of(api.get("/repositories/repo1/branches/main"))["commit_id"]
    response = api.post(MERGE.format(source="dev", dest="main"))  # lakeFS takes a merge without a body
    assert response.status_code == 200, response.body
    api.upload("repo1", "dev", "b", b"3")
    api.commit("repo1", "dev")
    squashed = body_of(_merge(api, squash_merge=True))["reference"]
    commit = body_of(api.get(f"/repositories/repo1/commits/{squashed}"))
    assert commit["parents"] == [body_of(response)["reference"]] and head != commit["parents"][0]


def test_merge_base(api: Api, repo: str) -> None:
    _fork(api, {"a": "1"})
    fork = body_of(api.get("/repositories/repo1/branches/main"))["commit_id"]
    api.upload("repo1", "dev", "a", b"2")
    dev = api.commit("repo1", "dev")["id"]
    found = conforms(lakefs_sdk.FindMergeBaseResult, body_of(api.get(MERGE.format(source="dev", dest="main"))))
    assert (found.source_commit_id, found.destination_commit_id, found.base_commit_id) == (dev, fork, fork)
    assert_error(api.get(MERGE.format(source="dev", dest="nope")), 404)
