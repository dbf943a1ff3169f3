"""POST .../branches/{branch}/commits, GET .../commits/{commitId}, GET .../refs/{ref}/commits."""

from __future__ import annotations

import lakefs_sdk
import pytest

from .support import Api, assert_error, body_of, conforms, seg


def test_commit_and_get(api: Api, repo: str) -> None:
    initial = body_of(api.get(f"/repositories/{repo}/branches/main"))["commit_id"]
    api.upload(repo, "main", "a.txt", b"a")
    response = api.post(
        f"/repositories/{repo}/branches/main/commits",
        json_body={"message": "add a", "metadata": {"k": "v"}, "date": 1_600_000_000},
    )
    assert response.status_code == 201
    commit = conforms(lakefs_sdk.Commit, body_of(response))
    assert commit.message == "add a" and commit.metadata == {"k": "v"} and commit.creation_date == 1_600_000_000
    assert commit.committer == "admin"  # the authenticated user
    assert commit.parents == [initial] and commit.generation == 2
    assert body_of(api.get(f"/repositories/{repo}/branches/main"))["commit_id"] == commit.id

    for ref in (commit.id, commit.id[:10], "main", "main@"):
        got = conforms(lakefs_sdk.Commit, body_of(api.get(f"/repositories/{repo}/commits/{seg(ref)}")))
        assert got == commit
    for ref in ("main~1", "main^1"):
        assert body_of(api.get(f"/repositories/{repo}/commits/{seg(ref)}"))["id"] == initial


def test_percent_encoded_ref_expressions(api: Api, repo: str) -> None:
    api.upload(repo, "main", "a.txt", b"a")
    api.commit(repo, "main")
    initial = body_of(api.get(f"/repositories/{repo}/commits/main~1"))["id"]
    # Clients encode the modifiers: ~ as %7E, ^ as %5E, @ as %40.
    for encoded in ("main%7E1", "main%5E1", "main%5E", "main%7E"):
        assert body_of(api.get(f"/repositories/{repo}/commits/{encoded}"))["id"] == initial, encoded


def test_no_changes_is_400_unless_allowed(api: Api, repo: str) -> None:
    assert_error(api.post(f"/repositories/{repo}/branches/main/commits", json_body={"message": "empty"}), 400)
    body = {"message": "empty", "allow_empty": True}
    response = api.post(f"/repositories/{repo}/branches/main/commits", json_body=body)
    assert response.status_code == 201
    conforms(lakefs_sdk.Commit, body_of(response))


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"message": ""},
        {"message": 1},
        {"message": "m", "metadata": {"k": 1}},
        {"message": "m", "metadata": ["k"]},
        {"message": "m", "date": "yesterday"},
        {"message": "m", "date": True},
        {"message": "m", "allow_empty": "true"},
        [],
    ],
)
def test_bad_bodies_are_400(api: Api, repo: str, body: object) -> None:
    api.upload(repo, "main", "a.txt", b"a")
    assert_error(api.post(f"/repositories/{repo}/branches/main/commits", json_body=body), 400)


def test_commit_targets(api: Api, repo: str) -> None:
    assert_error(api.post(f"/repositories/{repo}/branches/nope/commits", json_body={"message": "m"}), 404)
    assert_error(api.post("/repositories/nope/branches/main/commits", json_body={"message": "m"}), 404)
    assert_error(api.post(f"/repositories/{repo}/branches/{seg('bad name')}/commits", json_body={"message": "m"}), 400)


@pytest.mark.parametrize(
    ("ref", "status"),
    [("main~x", 400), ("main@@", 400), ("main^x", 400), ("nope", 404), ("main~9", 404), ("abcdef0123", 404)],
)
def test_bad_and_missing_refs(api: Api, repo: str, ref: str, status: int) -> None:
    assert_error(api.get(f"/repositories/{repo}/commits/{seg(ref)}"), status)
    assert_error(api.get(f"/repositories/{repo}/refs/{seg(ref)}/commits"), status)


def test_log(api: Api, repo: str) -> None:
    ids = []
    for i in range(3):
        api.upload(repo, "main", f"{i}.txt", b"x")
        ids.append(api.commit(repo, "main", f"commit {i}")["id"])
    log = conforms(lakefs_sdk.CommitList, body_of(api.get(f"/repositories/{repo}/refs/main/commits")))
    assert [c.id for c in log.results][:3] == ids[::-1]
    assert log.results[-1].message == "Repository created" and log.results[-1].parents == []
    assert log.pagination.has_more is False

    response = api.get(f"/repositories/{repo}/refs/main/commits", query={"amount": 2})
    page = conforms(lakefs_sdk.CommitList, body_of(response))
    assert [c.id for c in page.results] == [ids[2], ids[1]]
    assert page.pagination.has_more and page.pagination.next_offset == ids[1]
    rest = body_of(api.get(f"/repositories/{repo}/refs/main/commits", query={"after": ids[1], "amount": 2}))
    assert next(c["id"] for c in rest["results"]) == ids[0] and rest["pagination"]["has_more"] is False

    from_tagless_expr = body_of(api.get(f"/repositories/{repo}/refs/{seg('main~2')}/commits"))
    assert from_tagless_expr["results"][0]["id"] == ids[0]
