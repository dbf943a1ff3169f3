"""GET|POST|DELETE /repositories/{r}/metadata: lakeFS's key/value pairs on a repository."""

from __future__ import annotations

from .support import Api, assert_error, body_of

METADATA = "/repositories/{repo}/metadata"


def test_set_get_and_delete(api: Api, repo: str) -> None:
    url = METADATA.format(repo=repo)
    assert body_of(api.get(url)) == {}
    assert api.post(url, json_body={"metadata": {"owner": "data-team", "tier": "gold"}}).status_code == 204
    assert api.post(url, json_body={"metadata": {"tier": "silver"}}).status_code == 204
    assert body_of(api.get(url)) == {"owner": "data-team", "tier": "silver"}
    assert api.delete(url, json_body={"keys": ["tier", "absent"]}).status_code == 204
    assert body_of(api.get(url)) == {"owner": "data-team"}


def test_metadata_goes_with_its_repository(api: Api, repo: str) -> None:
    api.post(METADATA.format(repo=repo), json_body={"metadata": {"k": "v"}})
    api.delete(f"/repositories/{repo}")
    assert_error(api.get(METADATA.format(repo=repo)), 404)


def test_errors(api: Api, repo: str) -> None:
    url = METADATA.format(repo=repo)
    assert_error(api.get(METADATA.format(repo="nope")), 404)
    assert_error(api.post(METADATA.format(repo="nope"), json_body={"metadata": {"k": "v"}}), 404)
    assert_error(api.get(METADATA.format(repo="BAD_NAME")), 400)
    for body in ({}, {"metadata": {}}, {"metadata": {"k": 1}}, {"metadata": {"": "v"}}, {"metadata": {"k" * 300: "v"}}):
        assert_error(api.post(url, json_body=body), 400)
    assert_error(api.post(url, json_body={"metadata": {f"k{i}": "v" for i in range(101)}}), 400)
    assert_error(api.delete(url, json_body={"keys": "k"}), 400)
    assert body_of(api.get(url)) == {}


def test_read_only_repositories_keep_their_metadata(api: Api) -> None:
    api.create_repo("frozen", read_only=True)
    assert_error(api.post(METADATA.format(repo="frozen"), json_body={"metadata": {"k": "v"}}), 403)
    assert body_of(api.get(METADATA.format(repo="frozen"))) == {}
