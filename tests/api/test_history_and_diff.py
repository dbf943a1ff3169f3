"""Diff between refs, log filters, revert, cherry-pick, reset and hard reset, through the HTTP API."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime

import lakefs_sdk
import pytest

from chalicelib import wiring
from tests.clocks import engine_clock

from .support import Api, assert_error, body_of, conforms, seg

DIFF = "/repositories/repo1/refs/{left}/diff/{right}"
LOG = "/repositories/repo1/refs/{ref}/commits"


def _read(api: Api, ref: str, path: str) -> str | None:
    response = api.get(f"/repositories/repo1/refs/{ref}/objects", query={"path": path})
    return None if response.status_code == 404 else response.body.decode()


def _commit(api: Api, branch: str, message: str, **files: str | None) -> str:
    for name, content in files.items():
        path = name.replace("__", "/")
        if content is None:
            api.delete(f"/repositories/repo1/branches/{branch}/objects", query={"path": path})
        else:
            api.upload("repo1", branch, path, content.encode())
    return api.commit("repo1", branch, message)["id"]


def _branch(api: Api, name: str, source: str) -> None:
    assert api.post("/repositories/repo1/branches", json_body={"name": name, "source": source}).status_code == 201


def _messages(response) -> list[str]:
    return [c.message for c in conforms(lakefs_sdk.CommitList, body_of(response)).results]


@pytest.fixture
def history(api: Api, repo: str, services: wiring.Services) -> Api:
    """main: c1 (a, d/x) - c2 (b) - c3 (a) - merge of dev (f1: d/z) - c5 (d/y), one second apart."""
    engine_clock(services).source = itertools.count(1_700_000_000).__next__
    _commit(api, "main", "c1", a="1", d__x="x")
    _commit(api, "main", "c2", b="1")
    _branch(api, "dev", "main")
    _commit(api, "main", "c3", a="2")
    _commit(api, "dev", "f1", d__z="z")
    assert api.post("/repositories/repo1/refs/dev/merge/main", json_body={"message": "m"}).status_code == 200
    _commit(api, "main", "c5", d__y="y")
    return api


def test_diff_between_refs(history: Api) -> None:
    api = history
    _commit(api, "dev", "f2", a="dev", b=None, e__f="new")
    three = conforms(lakefs_sdk.DiffList, body_of(api.get(DIFF.format(left="main", right="dev"))))
    assert [(d.path, d.type, d.path_type) for d in three.results] == [
        ("a", "conflict", "object"),
        ("b", "removed", "object"),
        ("e/f", "added", "object"),
    ]
    two = body_of(api.get(DIFF.format(left="main", right="dev"), query={"type": "two_dot"}))
    assert [(d["path"], d["type"]) for d in two["results"]] == [
        ("a", "changed"),
        ("b", "removed"),
        ("d/y", "removed"),
        ("e/f", "added"),
    ]
    stats = conforms(
        lakefs_sdk.DiffList,
        body_of(
            api.get(DIFF.format(left="main", right="dev"), query={"type": "two_dot", "include_right_stats": "True"})
        ),
    )
    added = next(d for d in stats.results if d.path == "e/f")
    assert added.size_bytes == 3 and added.right.content_type == "application/octet-stream" and added.right.checksum
    assert next(d for d in stats.results if d.path == "b").right is None
    grouped = body_of(api.get(DIFF.format(left="main", right="dev"), query={"delimiter": "/", "prefix": "e/"}))
    assert [(d["path"], d["type"]) for d in grouped["results"]] == [("e/f", "added")]
    folded = body_of(api.get(DIFF.format(left="main", right="dev"), query={"delimiter": "/"}))
    assert folded["results"][-1] == {"path": "e/", "path_type": "common_prefix", "type": "prefix_changed"}
    page = body_of(api.get(DIFF.format(left="main", right="dev"), query={"amount": 1, "after": "a"}))
    assert [d["path"] for d in page["results"]] == ["b"] and page["pagination"]["next_offset"] == "b"
    assert body_of(api.get(DIFF.format(left=seg("main~1"), right="main")))["results"][0]["path"] == "d/y"
    assert_error(api.get(DIFF.format(left="main", right="dev"), query={"type": "four_dot"}), 400)
    assert_error(api.get(DIFF.format(left="main", right="nope")), 404)


def test_log_filters(history: Api) -> None:
    api = history
    log = LOG.format(ref="main")
    assert _messages(api.get(log)) == ["c5", "m", "f1", "c3", "c2", "c1", "Repository created"]
    assert _messages(api.get(log, query={"first_parent": "True"})) == [
        "c5",
        "m",
        "c3",
        "c2",
        "c1",
        "Repository created",
    ]
    assert _messages(api.get(log, query={"objects": "a"})) == ["c3", "c1"]
    assert _messages(api.get(log, query=[("objects", "a"), ("objects", "b")])) == ["c3", "c2", "c1"]
    assert _messages(api.get(log, query={"prefixes": "d/"})) == ["c5", "f1", "c1"]
    assert _messages(api.get(log, query={"prefixes": "d/", "first_parent": "true"})) == ["c5", "c1"]
    limited = body_of(api.get(log, query={"amount": 2, "limit": "true"}))
    assert [c["message"] for c in limited["results"]] == ["c5", "m"] and not limited["pagination"]["has_more"]
    c3 = body_of(api.get(log, query={"objects": "a", "amount": 1}))["results"][0]
    assert _messages(api.get(log, query={"stop_at": c3["id"][:12]})) == ["c5", "m", "f1", "c3"]
    since = datetime.fromtimestamp(c3["creation_date"], UTC).isoformat()
    assert _messages(api.get(log, query={"since": since})) == ["c5", "m", "f1", "c3"]
    assert_error(api.get(log, query={"since": "yesterday"}), 400)
    assert_error(api.get(log, query={"stop_at": "nope"}), 404)


def test_revert(history: Api) -> None:
    api = history
    revert = "/repositories/repo1/branches/main/revert"
    c3 = body_of(api.get(LOG.format(ref="main"), query={"objects": "a", "amount": 1}))["results"][0]["id"]
    response = api.post(revert, json_body=lakefs_sdk.RevertCreation(ref="main~2", parent_number=0).to_dict())
    assert response.status_code == 204, response.body
    head = body_of(api.get("/repositories/repo1/commits/main"))
    assert head["message"] == "Revert main~2" and _read(api, "main", "a") == "1"
    merge_commit = body_of(api.get(f"/repositories/repo1/commits/{seg('main~2')}"))
    assert_error(api.post(revert, json_body={"ref": merge_commit["id"], "parent_number": 0}), 400)
    overrides = {"message": "undo dev", "metadata": {"why": "x"}}
    body = {"ref": merge_commit["id"], "parent_number": 1, "commit_overrides": overrides}
    assert api.post(revert, json_body=body).status_code == 204
    assert _read(api, "main", "d/z") is None
    assert body_of(api.get("/repositories/repo1/commits/main"))["metadata"] == {"why": "x"}
    assert_error(api.post(revert, json_body={"ref": c3, "parent_number": 0}), 400)  # already undone
    assert api.post(revert, json_body={"ref": c3, "parent_number": 0, "allow_empty": True}).status_code == 204
    assert_error(api.post(revert, json_body={"ref": "nope", "parent_number": 0}), 404)
    assert_error(api.post(revert, json_body={"parent_number": 0}), 400)


def test_revert_conflict_answers_409_with_the_paths(history: Api) -> None:
    api = history
    c3 = body_of(api.get(LOG.format(ref="main"), query={"objects": "a", "amount": 1}))["results"][0]["id"]
    _commit(api, "main", "a again", a="3")
    response = api.post("/repositories/repo1/branches/main/revert", json_body={"ref": c3, "parent_number": 0})
    assert response.status_code == 409
    assert body_of(response)["conflicts"] == [{"path": "a", "source": "changed", "destination": "changed"}]


def test_cherry_pick(history: Api) -> None:
    api = history
    _branch(api, "hotfix", seg("main~3"))
    pick = "/repositories/repo1/branches/hotfix/cherry-pick"
    response = api.post(pick, json_body=lakefs_sdk.CherryPickCreation(ref="main").to_dict())
    assert response.status_code == 201, response.body
    commit = conforms(lakefs_sdk.Commit, body_of(response))
    assert (
        commit.message == "c5"
        and commit.metadata["cherry-pick-origin"] == body_of(api.get("/repositories/repo1/branches/main"))["commit_id"]
    )
    assert _read(api, "hotfix", "d/y") == "y" and _read(api, "hotfix", "a") == "1"
    assert_error(api.post(pick, json_body={"ref": seg("main~1")}), 400)  # a merge commit needs parent_number
    picked = api.post(pick, json_body={"ref": "main~1", "parent_number": 1, "commit_overrides": {"message": "dev"}})
    assert picked.status_code == 201 and body_of(picked)["message"] == "dev"
    assert _read(api, "hotfix", "d/z") == "z"
    _commit(api, "hotfix", "own a", a="hot")
    clash = api.post(
        pick, json_body={"ref": body_of(api.get(LOG.format(ref="main"), query={"objects": "a"}))["results"][0]["id"]}
    )
    assert clash.status_code == 409 and [c["path"] for c in body_of(clash)["conflicts"]] == ["a"]


def test_reset_and_hard_reset(history: Api) -> None:
    api = history
    branch = "/repositories/repo1/branches/main"
    api.upload("repo1", "main", "a", b"staged")
    api.upload("repo1", "main", "tmp/1", b"1")
    api.upload("repo1", "main", "tmp/2", b"2")
    api.upload("repo1", "main", "z", b"z")

    def reset(**body: object) -> int:
        return api.request("PUT", branch, json_body=lakefs_sdk.ResetCreation(**body).to_dict()).status_code

    assert reset(type="object", path="a") == 204 and _read(api, "main", "a") == "2"
    assert reset(type="common_prefix", path="tmp/") == 204 and _read(api, "main", "tmp/1") is None
    assert [d["path"] for d in body_of(api.get(f"{branch}/diff"))["results"]] == ["z"]
    hard = api.request("PUT", f"{branch}/hard_reset", query={"ref": "main~1"})
    assert "uncommitted" in assert_error(hard, 400)
    assert reset(type="reset") == 204 and body_of(api.get(f"{branch}/diff"))["results"] == []
    assert_error(api.request("PUT", branch, json_body={"type": "everything"}), 400)

    target = body_of(api.get(f"/repositories/repo1/commits/{seg('main~1')}"))["id"]
    assert api.request("PUT", f"{branch}/hard_reset", query={"ref": seg("main~1")}).status_code == 204
    assert body_of(api.get(branch))["commit_id"] == target
    assert_error(api.request("PUT", f"{branch}/hard_reset", query={"ref": "nope"}), 404)
    assert_error(api.request("PUT", f"{branch}/hard_reset"), 400)
