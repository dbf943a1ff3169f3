"""GET|POST /repositories/{repository}/branches, GET|DELETE .../branches/{branch}."""

from __future__ import annotations

import lakefs_sdk
import pytest

from .support import Api, assert_error, body_of, conforms, seg


def test_create_get_list_delete(api: Api, repo: str) -> None:
    main = conforms(lakefs_sdk.Ref, body_of(api.get(f"/repositories/{repo}/branches/main")))
    response = api.post(f"/repositories/{repo}/branches", json_body={"name": "dev", "source": "main"})
    assert response.status_code == 201
    # lakeFS answers with the commit id as a bare string body.
    assert response.headers["Content-Type"] == "text/html"
    assert response.body.decode() == main.commit_id

    dev = conforms(lakefs_sdk.Ref, body_of(api.get(f"/repositories/{repo}/branches/dev")))
    assert (dev.id, dev.commit_id) == ("dev", main.commit_id)
    listed = conforms(lakefs_sdk.RefList, body_of(api.get(f"/repositories/{repo}/branches")))
    assert [b.id for b in listed.results] == ["dev", "main"]

    response = api.delete(f"/repositories/{repo}/branches/dev")
    assert response.status_code == 204
    assert_error(api.get(f"/repositories/{repo}/branches/dev"), 404)


def test_branch_from_a_ref_expression(api: Api, repo: str) -> None:
    api.upload(repo, "main", "a.txt", b"a")
    first = api.commit(repo, "main", "first")
    api.upload(repo, "main", "b.txt", b"b")
    api.commit(repo, "main", "second")
    for i, source in enumerate(("main~1", "main^1", "main^1^0", first["id"], first["id"][:12])):
        name = f"from-{i}"
        response = api.post(f"/repositories/{repo}/branches", json_body={"name": name, "source": source})
        assert response.status_code == 201, (source, response.body)
        assert response.body.decode() == first["id"]


def test_list_pagination_and_prefix(api: Api, repo: str) -> None:
    for name in ("feature-a", "feature-b", "fix"):
        api.post(f"/repositories/{repo}/branches", json_body={"name": name, "source": "main"})
    page = body_of(api.get(f"/repositories/{repo}/branches", query={"prefix": "feature", "amount": 1}))
    assert [b["id"] for b in page["results"]] == ["feature-a"]
    assert page["pagination"]["has_more"] and page["pagination"]["next_offset"] == "feature-a"
    rest = body_of(api.get(f"/repositories/{repo}/branches", query={"prefix": "feature", "after": "feature-a"}))
    assert [b["id"] for b in rest["results"]] == ["feature-b"]


def test_deleting_the_default_branch_is_403(api: Api, repo: str) -> None:
    assert_error(api.delete(f"/repositories/{repo}/branches/main"), 403)
    assert api.get(f"/repositories/{repo}/branches/main").status_code == 200


def test_duplicate_is_409(api: Api, repo: str) -> None:
    api.post(f"/repositories/{repo}/branches", json_body={"name": "dev", "source": "main"})
    assert_error(api.post(f"/repositories/{repo}/branches", json_body={"name": "dev", "source": "main"}), 409)
    assert_error(api.post(f"/repositories/{repo}/branches", json_body={"name": "main", "source": "main"}), 409)


@pytest.mark.parametrize("name", ["bad name", "-dev", "dev/x", "dév~1", "", "a@"])
def test_invalid_names_are_400(api: Api, repo: str, name: str) -> None:
    assert_error(api.post(f"/repositories/{repo}/branches", json_body={"name": name, "source": "main"}), 400)


@pytest.mark.parametrize("source", ["main~x", "main@@", "main@1", "main^x", "main~1@", "~1", "main branch"])
def test_bad_source_refs_are_400(api: Api, repo: str, source: str) -> None:
    assert_error(api.post(f"/repositories/{repo}/branches", json_body={"name": "dev", "source": source}), 400)


def test_missing_sources_are_404(api: Api, repo: str) -> None:
    assert_error(api.post(f"/repositories/{repo}/branches", json_body={"name": "dev", "source": "nope"}), 404)
    assert_error(api.post("/repositories/nope/branches", json_body={"name": "dev", "source": "main"}), 404)


@pytest.mark.parametrize("body", [{"name": "dev"}, {"source": "main"}, {"name": ["dev"], "source": "main"}, [], 1])
def test_bad_bodies_are_400(api: Api, repo: str, body: object) -> None:
    assert_error(api.post(f"/repositories/{repo}/branches", json_body=body), 400)


def test_get_and_delete_check_names(api: Api, repo: str) -> None:
    assert_error(api.get(f"/repositories/{repo}/branches/{seg('bad name')}"), 400)
    assert_error(api.delete(f"/repositories/{repo}/branches/{seg('bad name')}"), 400)
    assert_error(api.get(f"/repositories/{repo}/branches/nope"), 404)
    assert_error(api.delete(f"/repositories/{repo}/branches/nope"), 404)
    assert_error(api.get("/repositories/nope/branches/main"), 404)
