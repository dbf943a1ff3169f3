"""GET /repositories/{repository}/branches/{branch}/diff: uncommitted changes."""

from __future__ import annotations

import lakefs_sdk

from .support import Api, assert_error, body_of, conforms, seg

DIFF = "/repositories/repo1/branches/{branch}/diff"


def test_uncommitted_changes(api: Api, repo: str) -> None:
    api.upload("repo1", "main", "keep.txt", b"same")
    api.upload("repo1", "main", "change.txt", b"old")
    api.upload("repo1", "main", "remove.txt", b"bye")
    api.commit("repo1", "main")
    assert body_of(api.get(DIFF.format(branch="main")))["results"] == []

    api.upload("repo1", "main", "change.txt", b"newer")
    api.upload("repo1", "main", "dir/add.txt", b"hi")
    api.delete("/repositories/repo1/branches/main/objects", query={"path": "remove.txt"})
    diff = conforms(lakefs_sdk.DiffList, body_of(api.get(DIFF.format(branch="main"))))
    assert [(d.path, d.type, d.path_type, d.size_bytes) for d in diff.results] == [
        ("change.txt", "changed", "object", 5),
        ("dir/add.txt", "added", "object", 2),
        ("remove.txt", "removed", "object", 0),
    ]

    grouped = conforms(lakefs_sdk.DiffList, body_of(api.get(DIFF.format(branch="main"), query={"delimiter": "/"})))
    assert [(d.path, d.type, d.path_type) for d in grouped.results] == [
        ("change.txt", "changed", "object"),
        ("dir/", "prefix_changed", "common_prefix"),
        ("remove.txt", "removed", "object"),
    ]
    page = body_of(api.get(DIFF.format(branch="main"), query={"amount": 1, "after": "change.txt"}))
    assert [d["path"] for d in page["results"]] == ["dir/add.txt"]
    assert page["pagination"]["has_more"] and page["pagination"]["next_offset"] == "dir/add.txt"
    prefixed = body_of(api.get(DIFF.format(branch="main"), query={"prefix": "dir/"}))
    assert [d["path"] for d in prefixed["results"]] == ["dir/add.txt"]


def test_diff_errors(api: Api, repo: str) -> None:
    assert_error(api.get(DIFF.format(branch="nope")), 404)
    assert_error(api.get(DIFF.format(branch=seg("bad name"))), 400)
    assert_error(api.get("/repositories/nope/branches/main/diff"), 404)
    assert_error(api.get(DIFF.format(branch="main"), query={"amount": "-5"}), 400)
