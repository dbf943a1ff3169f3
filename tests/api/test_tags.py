"""GET|POST /repositories/{repository}/tags, GET|DELETE .../tags/{tag}."""

from __future__ import annotations

import lakefs_sdk
import pytest

from .support import Api, assert_error, body_of, conforms, seg


def test_create_get_list_delete(api: Api, repo: str) -> None:
    api.upload(repo, "main", "a.txt", b"a")
    first = api.commit(repo, "main", "first")
    api.upload(repo, "main", "b.txt", b"b")
    api.commit(repo, "main", "second")

    response = api.post(f"/repositories/{repo}/tags", json_body={"id": "v1.0", "ref": "main~1"})
    assert response.status_code == 201
    tag = conforms(lakefs_sdk.Ref, body_of(response))
    assert (tag.id, tag.commit_id) == ("v1.0", first["id"])
    assert conforms(lakefs_sdk.Ref, body_of(api.get(f"/repositories/{repo}/tags/v1.0"))) == tag
    listed = conforms(lakefs_sdk.RefList, body_of(api.get(f"/repositories/{repo}/tags")))
    assert listed.results == [tag]

    # A tag is a ref: reads go through it.
    listing = body_of(api.get(f"/repositories/{repo}/refs/v1.0/objects/ls"))
    assert [o["path"] for o in listing["results"]] == ["a.txt"]

    assert api.delete(f"/repositories/{repo}/tags/v1.0").status_code == 204
    assert_error(api.get(f"/repositories/{repo}/tags/v1.0"), 404)
    assert_error(api.delete(f"/repositories/{repo}/tags/v1.0"), 404)


def test_pagination(api: Api, repo: str) -> None:
    for name in ("v1", "v2", "v3"):
        api.post(f"/repositories/{repo}/tags", json_body={"id": name, "ref": "main"})
    page = conforms(lakefs_sdk.RefList, body_of(api.get(f"/repositories/{repo}/tags", query={"amount": 2})))
    assert [t.id for t in page.results] == ["v1", "v2"] and page.pagination.has_more
    rest = body_of(api.get(f"/repositories/{repo}/tags", query={"after": page.pagination.next_offset}))
    assert [t["id"] for t in rest["results"]] == ["v3"]


def test_duplicate_is_409(api: Api, repo: str) -> None:
    api.post(f"/repositories/{repo}/tags", json_body={"id": "v1", "ref": "main"})
    assert_error(api.post(f"/repositories/{repo}/tags", json_body={"id": "v1", "ref": "main"}), 409)


@pytest.mark.parametrize("tag_id", ["a..b", "x.lock", "a/b", "@", "with space", "a:b", ".hidden", "end."])
def test_invalid_names_are_400(api: Api, repo: str, tag_id: str) -> None:
    assert_error(api.post(f"/repositories/{repo}/tags", json_body={"id": tag_id, "ref": "main"}), 400)


def test_invalid_names_in_the_path_are_400(api: Api, repo: str) -> None:
    assert_error(api.get(f"/repositories/{repo}/tags/{seg('a..b')}"), 400)
    assert_error(api.delete(f"/repositories/{repo}/tags/{seg('x.lock')}"), 400)


@pytest.mark.parametrize(("ref", "status"), [("main~x", 400), ("main@@", 400), ("nope", 404), ("main~5", 404)])
def test_bad_or_missing_refs(api: Api, repo: str, ref: str, status: int) -> None:
    assert_error(api.post(f"/repositories/{repo}/tags", json_body={"id": "v1", "ref": ref}), status)


@pytest.mark.parametrize(
    "body", [{"id": "v1"}, {"ref": "main"}, {"id": 1, "ref": "main"}, {"id": "v1", "ref": "main", "force": "yes"}]
)
def test_bad_bodies_are_400(api: Api, repo: str, body: object) -> None:
    assert_error(api.post(f"/repositories/{repo}/tags", json_body=body), 400)
