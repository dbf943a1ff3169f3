"""GET|POST /repositories, GET|DELETE /repositories/{repository}."""

from __future__ import annotations

import lakefs_sdk
import pytest

from .support import NAMESPACE, Api, assert_error, body_of, conforms


def test_create_get_list_delete(api: Api) -> None:
    body = {"name": "repo1", "storage_namespace": f"{NAMESPACE}/repo1", "default_branch": "trunk"}
    response = api.post("/repositories", json_body=body)
    assert response.status_code == 201
    repo = conforms(lakefs_sdk.Repository, body_of(response))
    assert (repo.id, repo.default_branch, repo.read_only) == ("repo1", "trunk", False)
    assert repo.storage_namespace == f"{NAMESPACE}/repo1"

    assert conforms(lakefs_sdk.Repository, body_of(api.get("/repositories/repo1"))) == repo
    listed = conforms(lakefs_sdk.RepositoryList, body_of(api.get("/repositories")))
    assert listed.results == [repo]
    assert (listed.pagination.has_more, listed.pagination.results, listed.pagination.max_per_page) == (False, 1, 1000)

    response = api.delete("/repositories/repo1")
    assert response.status_code == 204 and response.body == b""
    assert_error(api.get("/repositories/repo1"), 404)
    assert_error(api.delete("/repositories/repo1"), 404)


def test_default_branch_defaults_to_main_and_read_only_is_kept(api: Api) -> None:
    repo = api.create_repo("repo1", default_branch=None, read_only=True)  # type: ignore[arg-type]
    assert repo["default_branch"] == "main" and repo["read_only"] is True
    assert body_of(api.get("/repositories/repo1/branches/main"))["id"] == "main"


def test_pagination(api: Api) -> None:
    for name in ("alpha", "beta", "gamma", "other"):
        api.create_repo(name)
    first = conforms(lakefs_sdk.RepositoryList, body_of(api.get("/repositories", query={"amount": 2})))
    assert [r.id for r in first.results] == ["alpha", "beta"]
    assert first.pagination.has_more and first.pagination.next_offset == "beta"
    assert first.pagination.max_per_page == 1000  # lakeFS's maximum, not the amount asked for
    second = body_of(api.get("/repositories", query={"amount": 2, "after": "beta"}))
    assert [r["id"] for r in second["results"]] == ["gamma", "other"]
    assert second["pagination"]["has_more"] is False and second["pagination"]["next_offset"] == ""
    prefixed = body_of(api.get("/repositories", query={"prefix": "ga"}))
    assert [r["id"] for r in prefixed["results"]] == ["gamma"]


def test_amount_follows_lakefs_bounds(api: Api) -> None:
    """swagger's PaginationAmount: minimum -1 ("the server's default"), maximum 1000; lakeFS's request validator
    answers 400 outside them, and its handler serves the default page (100) for -1 and 0."""
    for name in (f"r{i:03d}" for i in range(101)):
        api.create_repo(name)
    for amount in (-1, 0):
        page = body_of(api.get("/repositories", query={"amount": amount}))
        assert (len(page["results"]), page["pagination"]["has_more"]) == (100, True)
        assert page["pagination"]["max_per_page"] == 1000
    assert len(body_of(api.get("/repositories", query={"amount": 1000}))["results"]) == 101
    assert "number must be at most 1000" in assert_error(api.get("/repositories", query={"amount": 1001}), 400)
    assert "number must be at least -1" in assert_error(api.get("/repositories", query={"amount": -2}), 400)
    for bad in ("x", "1.5", "1_0", " 3", ""):
        response = api.get("/repositories", query={"amount": bad})
        if bad == "":
            assert response.status_code == 200
        else:
            assert_error(response, 400)


def test_duplicate_is_409(api: Api) -> None:
    api.create_repo("repo1")
    response = api.post("/repositories", json_body={"name": "repo1", "storage_namespace": f"{NAMESPACE}/elsewhere"})
    assert_error(response, 409)


@pytest.mark.parametrize("name", ["ab", "Repo1", "repo_1", "-repo", "r" * 64, "repo/1"])
def test_invalid_names_are_400(api: Api, name: str) -> None:
    response = api.post("/repositories", json_body={"name": name, "storage_namespace": f"{NAMESPACE}/x"})
    assert_error(response, 400)


@pytest.mark.parametrize("path", ["/repositories/Bad_Name", "/repositories/ab", "/repositories/Bad_Name/branches"])
def test_invalid_names_in_the_path_are_400(api: Api, path: str) -> None:
    assert_error(api.get(path), 400)


@pytest.mark.parametrize(
    "body",
    [
        {"storage_namespace": f"{NAMESPACE}/x"},
        {"name": "repo1"},
        {"name": 5, "storage_namespace": f"{NAMESPACE}/x"},
        {"name": "repo1", "storage_namespace": ["s3://x"]},
        {"name": "repo1", "storage_namespace": f"{NAMESPACE}/x", "read_only": "yes"},
        {"name": "repo1", "storage_namespace": f"{NAMESPACE}/x", "default_branch": 1},
        {"name": "repo1", "storage_namespace": f"{NAMESPACE}/x", "default_branch": "bad branch"},
        {"name": "repo1", "storage_namespace": "gs://bucket/x"},
        {"name": "repo1", "storage_namespace": f"{NAMESPACE}/x", "storage_id": "other-store"},
        {"name": "repo1", "storage_namespace": f"{NAMESPACE}/x", "storage_id": 5},
        {"name": "repo1", "storage_namespace": f"{NAMESPACE}/x", "sample_data": True, "read_only": True},
        [],
        "repo1",
        None,
    ],
)
def test_bad_bodies_are_400(api: Api, body: object) -> None:
    assert_error(api.post("/repositories", json_body=body), 400)
    assert body_of(api.get("/repositories"))["results"] == []


def test_bad_json_is_400(api: Api) -> None:
    for raw in (b"{", b"", b"\xff\xfe", b'{"name": "repo1",}'):
        assert_error(api.post("/repositories", body=raw, headers={"content-type": "application/json"}), 400)


def test_bare_repositories_follow_the_rules_of_names_and_namespaces(api: Api) -> None:
    # The client sends "True"; a bare repository still needs a valid name and an allowed namespace.
    response = api.post(
        "/repositories", query={"bare": "True"}, json_body={"name": "repo1", "storage_namespace": f"{NAMESPACE}/x"}
    )
    assert response.status_code == 201, response.body
    assert_error(
        api.post(
            "/repositories", query={"bare": "True"}, json_body={"name": "r", "storage_namespace": f"{NAMESPACE}/y"}
        ),
        400,
    )
    outside = {"name": "repo2", "storage_namespace": "s3://elsewhere/y"}
    assert_error(api.post("/repositories", query={"bare": "True"}, json_body=outside), 400)
