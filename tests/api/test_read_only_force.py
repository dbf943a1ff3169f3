"""Read-only repositories as lakeFS has them: every write is refused (403) unless it says ``force``, which then
writes as in any repository, with no hooks run; createBranch and deleteRepository are writes too."""

from __future__ import annotations

import pytest

from .support import Api, assert_error, body_of

FROZEN = "/repositories/frozen"
MAIN = FROZEN + "/branches/main"


@pytest.fixture
def frozen(api: Api) -> str:
    api.create_repo("frozen", read_only=True)
    return "frozen"


def _upload(api: Api, path: str, force: bool) -> int:
    query = {"path": path, **({"force": "True"} if force else {})}
    response = api.post(MAIN + "/objects", query=query, body=b"data", headers={"content-type": "text/plain"})
    return response.status_code


def test_upload_and_delete_object_with_force(api: Api, frozen: str) -> None:
    assert _upload(api, "a.txt", force=False) == 403
    assert _upload(api, "a.txt", force=True) == 201
    assert api.get(FROZEN + "/refs/main/objects", query={"path": "a.txt"}).body == b"data"
    assert_error(api.delete(MAIN + "/objects", query={"path": "a.txt"}), 403)
    assert api.delete(MAIN + "/objects", query={"path": "a.txt", "force": "true"}).status_code == 204
    assert_error(api.get(FROZEN + "/refs/main/objects/stat", query={"path": "a.txt"}), 404)


def test_create_branch_needs_force(api: Api, frozen: str) -> None:
    assert_error(api.post(FROZEN + "/branches", json_body={"name": "dev", "source": "main"}), 403)
    assert_error(api.get(FROZEN + "/branches/dev"), 404)
    created = api.post(FROZEN + "/branches", json_body={"name": "dev", "source": "main", "force": True})
    assert created.status_code == 201
    assert_error(api.delete(FROZEN + "/branches/dev"), 403)
    assert api.delete(FROZEN + "/branches/dev", query={"force": "true"}).status_code == 204
    assert_error(api.get(FROZEN + "/branches/dev"), 404)


def test_tags_need_force_and_force_does_not_overwrite(api: Api, frozen: str) -> None:
    assert_error(api.post(FROZEN + "/tags", json_body={"id": "v1", "ref": "main"}), 403)
    created = api.post(FROZEN + "/tags", json_body={"id": "v1", "ref": "main", "force": True})
    assert created.status_code == 201
    # As lakeFS (graveler.CreateTag): force only lifts read-only; an existing tag is still a 409.
    assert_error(api.post(FROZEN + "/tags", json_body={"id": "v1", "ref": "main", "force": True}), 409)
    assert_error(api.delete(FROZEN + "/tags/v1"), 403)
    assert api.delete(FROZEN + "/tags/v1", query={"force": "true"}).status_code == 204


def test_force_on_a_writable_repository_changes_nothing(api: Api, repo: str) -> None:
    assert (
        api.post(f"/repositories/{repo}/tags", json_body={"id": "v1", "ref": "main", "force": True}).status_code == 201
    )
    assert_error(api.post(f"/repositories/{repo}/tags", json_body={"id": "v1", "ref": "main", "force": True}), 409)


def test_delete_repository_needs_force(api: Api, frozen: str) -> None:
    assert_error(api.delete(FROZEN), 403)
    assert body_of(api.get(FROZEN))["read_only"] is True
    assert api.delete(FROZEN, query={"force": "true"}).status_code == 204
    assert_error(api.get(FROZEN), 404)


def test_force_is_a_boolean(api: Api, frozen: str) -> None:
    assert_error(api.delete(FROZEN, query={"force": "maybe"}), 400)
    assert_error(api.post(FROZEN + "/branches", json_body={"name": "dev", "source": "main", "force": "yes"}), 400)


def test_commit_needs_force(api: Api, frozen: str) -> None:
    assert _upload(api, "c.txt", force=True) == 201
    assert_error(api.post(MAIN + "/commits", json_body={"message": "refused"}), 403)
    assert api.get(FROZEN + "/branches/main/diff").status_code == 200
    assert [row["path"] for row in body_of(api.get(FROZEN + "/branches/main/diff"))["results"]] == ["c.txt"]
    created = api.post(MAIN + "/commits", json_body={"message": "forced", "force": True})
    assert created.status_code == 201
    assert body_of(created)["message"] == "forced"
    assert body_of(api.get(FROZEN + "/branches/main/diff"))["results"] == []
