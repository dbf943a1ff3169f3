"""CreateCommitRecord (POST /repositories/{r}/commits): a commit record stored as given, checked to be the hash
of its content and to name a metarange that exists (graveler/usecases/commit_records.py)."""

from __future__ import annotations

from typing import Any

import lakefs_sdk
import pytest
from chalice.test import Client

from chalicelib.graveler.identity import commit_id
from chalicelib.graveler.records import CommitID, MetaRangeID

from .support import Api, assert_error, body_of, conforms


def record(parent: dict[str, Any], **change: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "version": 1,
        "committer": "restorer",
        "message": "restored",
        "metarange_id": parent["meta_range_id"],
        "creation_date": 1_700_000_000,
        "parents": [parent["id"]],
        "metadata": {"source": "dump"},
        "generation": parent["generation"] + 1,
        **change,
    }
    body.setdefault(
        "commit_id",
        commit_id(
            body["committer"],
            body["message"],
            MetaRangeID(body["metarange_id"]),
            body["creation_date"],
            body["metadata"],
            [CommitID(p) for p in body["parents"]],
        ),
    )
    return body


@pytest.fixture
def head(api: Api, repo: str) -> dict[str, Any]:
    api.upload(repo, "main", "a.txt", b"alpha")
    return api.commit(repo, "main")


def test_a_record_is_stored_as_given(api: Api, repo: str, head: dict[str, Any]) -> None:
    body = record(head)
    response = api.post(f"/repositories/{repo}/commits", json_body=body)
    assert response.status_code == 204, response.body
    stored = conforms(lakefs_sdk.Commit, body_of(api.get(f"/repositories/{repo}/commits/{body['commit_id']}")))
    assert (stored.message, stored.committer, stored.parents) == ("restored", "restorer", [head["id"]])
    generation = head["generation"] + 1
    assert (stored.creation_date, stored.generation, stored.metadata) == (1_700_000_000, generation, {"source": "dump"})
    # A branch can point at it, and reads its tree.
    assert (
        api.post(f"/repositories/{repo}/branches", json_body={"name": "r", "source": body["commit_id"]}).status_code
        == 201
    )
    assert api.get(f"/repositories/{repo}/refs/r/objects", query={"path": "a.txt"}).body == b"alpha"
    assert_error(api.post(f"/repositories/{repo}/commits", json_body=body), 409)


@pytest.mark.parametrize(
    "change",
    [
        {"commit_id": "f" * 64},  # not the hash of the record
        {"version": 0},  # Lakelet hashes version 1 only
        {"version": 2},
        {"metarange_id": "0" * 64},  # no such metarange
        {"generation": 0},
        {"parents": "abc"},
        {"creation_date": "yesterday"},
        {"metadata": {"k": 1}},
    ],
)
def test_records_that_would_break_the_history_are_refused(
    api: Api, repo: str, head: dict[str, Any], change: dict[str, Any]
) -> None:
    before = body_of(api.get(f"/repositories/{repo}/refs/main/commits"))
    # A change of a hashed field comes with the matching id, so what is refused is the field itself.
    hashed = {"metarange_id", "parents"}
    body = record(head, **change) if set(change) <= hashed else {**record(head), **change}
    assert_error(api.post(f"/repositories/{repo}/commits", json_body=body), 400)
    assert body_of(api.get(f"/repositories/{repo}/refs/main/commits")) == before


def test_missing_fields_are_400(api: Api, repo: str, head: dict[str, Any]) -> None:
    body = record(head)
    del body["message"]
    assert_error(api.post(f"/repositories/{repo}/commits", json_body=body), 400)


def test_read_only_needs_force_and_viewers_are_refused(api: Api, client: Client) -> None:
    api.create_repo("frozen", read_only=True)
    [first] = body_of(api.get("/repositories/frozen/refs/main/commits"))["results"]
    body = record(first)
    assert_error(api.post("/repositories/frozen/commits", json_body=body), 403)
    assert api.post("/auth/users", json_body={"id": "viewer"}).status_code == 201
    assert api.request("PUT", "/auth/groups/Viewers/members/viewer").status_code == 201
    pair = body_of(api.post("/auth/users/viewer/credentials"))
    viewer = Api(client, (pair["access_key_id"], pair["secret_access_key"]))
    assert_error(viewer.post("/repositories/frozen/commits", json_body={**body, "force": True}), 403)
    assert api.post("/repositories/frozen/commits", json_body={**body, "force": True}).status_code == 204
