"""Pull requests: GET|POST /repositories/{r}/pulls, GET|PATCH .../pulls/{id}, PUT .../pulls/{id}/merge."""

from __future__ import annotations

from typing import Any

import lakefs_sdk

from .support import Api, assert_error, body_of, conforms


def _branch(api: Api, repo: str, name: str, source: str = "main") -> None:
    response = api.post(f"/repositories/{repo}/branches", json_body={"name": name, "source": source})
    assert response.status_code == 201, response.body


def _open(api: Api, repo: str, source: str = "feature", title: str = "add data", **extra: Any) -> str:
    body = {"title": title, "source_branch": source, "destination_branch": "main", **extra}
    response = api.post(f"/repositories/{repo}/pulls", json_body=body)
    assert response.status_code == 201, response.body
    return str(conforms(lakefs_sdk.PullRequestCreationResponse, body_of(response)).id)


def _dated(model: Any, body: dict[str, Any]) -> Any:
    """``body`` parses as the model, every field kept (its dates come back as datetimes, not the text sent)."""
    parsed = model.from_dict(body)
    assert {k for k, v in parsed.to_dict().items() if v is not None} == set(body), body
    return parsed


def _get(api: Api, repo: str, pr_id: str) -> lakefs_sdk.PullRequest:
    response = api.get(f"/repositories/{repo}/pulls/{pr_id}")
    assert response.status_code == 200, response.body
    pr = _dated(lakefs_sdk.PullRequest, body_of(response))
    assert body_of(response)["creation_date"].endswith("Z")
    return pr


def _patch(api: Api, repo: str, pr_id: str, body: dict[str, Any]) -> Any:
    return api.request("PATCH", f"/repositories/{repo}/pulls/{pr_id}", json_body=body)


def _merge(api: Api, repo: str, pr_id: str, body: dict[str, Any] | None = None) -> Any:
    if body is None:
        return api.request("PUT", f"/repositories/{repo}/pulls/{pr_id}/merge")
    return api.request("PUT", f"/repositories/{repo}/pulls/{pr_id}/merge", json_body=body)


def test_create_get_edit_and_merge(api: Api, repo: str) -> None:
    _branch(api, repo, "feature")
    api.upload(repo, "feature", "a.csv", b"1,2")
    api.commit(repo, "feature", "add a")
    pr_id = _open(api, repo, description="the first file")
    assert len(pr_id) == 20

    pr = _get(api, repo, pr_id)
    assert (pr.status, pr.title, pr.description, pr.author) == ("open", "add data", "the first file", "admin")
    assert (pr.source_branch, pr.destination_branch) == ("feature", "main")
    assert pr.closed_date is None and pr.merged_commit_id is None

    assert _patch(api, repo, pr_id, {"title": "add a.csv", "description": "edited"}).status_code == 204
    pr = _get(api, repo, pr_id)
    assert (pr.title, pr.description, pr.status) == ("add a.csv", "edited", "open")

    merged = _merge(api, repo, pr_id)
    assert merged.status_code == 200, merged.body
    reference = conforms(lakefs_sdk.MergeResult, body_of(merged)).reference
    pr = _get(api, repo, pr_id)
    assert pr.status == "merged" and pr.merged_commit_id == reference and pr.closed_date is not None
    head = body_of(api.get(f"/repositories/{repo}/commits/{reference}"))
    assert head["message"] == "Merge 'feature' into 'main'" and len(head["parents"]) == 2
    assert body_of(api.get(f"/repositories/{repo}/branches/main"))["commit_id"] == reference
    # A merged pull request is not merged again, closed or reopened.
    assert "bad pull request status" in assert_error(_merge(api, repo, pr_id), 400)
    assert_error(_patch(api, repo, pr_id, {"status": "open"}), 400)
    assert_error(_patch(api, repo, pr_id, {"status": "closed"}), 400)


def test_close_and_reopen(api: Api, repo: str) -> None:
    _branch(api, repo, "feature")
    pr_id = _open(api, repo)
    assert _patch(api, repo, pr_id, {"status": "closed"}).status_code == 204
    closed = _get(api, repo, pr_id)
    assert closed.status == "closed" and closed.closed_date is not None
    assert "bad pull request status" in assert_error(_merge(api, repo, pr_id), 400)
    # Status words are taken in any case, as lakeFS takes them.
    assert _patch(api, repo, pr_id, {"status": "OPEN"}).status_code == 204
    reopened = _get(api, repo, pr_id)
    assert reopened.status == "open" and reopened.closed_date is None
    assert_error(_patch(api, repo, pr_id, {"status": "merged"}), 400)
    assert_error(_patch(api, repo, pr_id, {"status": "shelved"}), 400)


def test_list_filters_by_status_and_pages(api: Api, repo: str) -> None:
    for name in ("f1", "f2", "f3"):
        _branch(api, repo, name)
    ids = [_open(api, repo, source=name, title=name, description="secret") for name in ("f1", "f2", "f3")]
    assert ids == sorted(ids)  # the id order is the creation order
    assert _patch(api, repo, ids[1], {"status": "closed"}).status_code == 204

    def listed(**query: Any) -> lakefs_sdk.PullRequestsList:
        response = api.get(f"/repositories/{repo}/pulls", query=query)
        assert response.status_code == 200, response.body
        listing = body_of(response)
        for item in listing["results"]:
            _dated(lakefs_sdk.PullRequest, item)
        return lakefs_sdk.PullRequestsList.from_dict(listing)

    everything = listed()
    assert [p.id for p in everything.results] == ids
    # A listing does not carry the description: reading one needs pr:ReadPullRequest.
    assert {p.description for p in everything.results} == {""}
    assert [p.title for p in listed(status="open").results] == ["f1", "f3"]
    assert [p.title for p in listed(status="closed").results] == ["f2"]
    assert [p.title for p in listed(status="all").results] == ["f1", "f2", "f3"]
    first = listed(amount=2)
    assert [p.id for p in first.results] == ids[:2] and first.pagination.has_more
    assert first.pagination.next_offset == ids[1]
    rest = listed(amount=2, after=first.pagination.next_offset)
    assert [p.id for p in rest.results] == ids[2:] and not rest.pagination.has_more
    assert [p.id for p in listed(prefix=ids[2]).results] == [ids[2]]


def test_bad_input(api: Api, repo: str) -> None:
    _branch(api, repo, "feature")
    pulls = f"/repositories/{repo}/pulls"
    same = {"title": "t", "source_branch": "main", "destination_branch": "main"}
    assert "same branch" in assert_error(api.post(pulls, json_body=same), 400)
    missing = {"title": "t", "source_branch": "nope", "destination_branch": "main"}
    assert "branch not found" in assert_error(api.post(pulls, json_body=missing), 404)
    assert_error(api.post(pulls, json_body={"source_branch": "feature", "destination_branch": "main"}), 400)
    assert_error(api.post(pulls, json_body={"title": "t", "source_branch": "a b", "destination_branch": "main"}), 400)
    assert_error(api.post("/repositories/nope/pulls", json_body={**same, "source_branch": "feature"}), 404)
    assert_error(api.get(f"{pulls}/not-an-id"), 400)
    assert "pull request not found" in assert_error(api.get(f"{pulls}/{'0' * 20}"), 404)
    assert_error(_patch(api, repo, "0" * 20, {"title": "x"}), 404)
    assert_error(_merge(api, repo, "0" * 20), 404)


def test_merge_conflict_is_409_and_strategy_resolves_it(api: Api, repo: str) -> None:
    api.upload(repo, "main", "a.csv", b"base")
    api.commit(repo, "main", "base")
    _branch(api, repo, "feature")
    api.upload(repo, "feature", "a.csv", b"theirs")
    api.commit(repo, "feature", "theirs")
    api.upload(repo, "main", "a.csv", b"ours")
    api.commit(repo, "main", "ours")
    pr_id = _open(api, repo)

    conflict = _merge(api, repo, pr_id)
    assert conflict.status_code == 409
    assert [c["path"] for c in body_of(conflict)["conflicts"]] == ["a.csv"]
    assert _get(api, repo, pr_id).status == "open"

    resolved = _merge(api, repo, pr_id, {"strategy": "source-wins"})
    assert resolved.status_code == 200, resolved.body
    read = api.get(f"/repositories/{repo}/refs/main/objects", query={"path": "a.csv"}, headers={"accept": "*/*"})
    assert read.body == b"theirs"
    assert _get(api, repo, pr_id).status == "merged"


def test_merge_refuses_a_dirty_destination_and_goes_into_a_protected_branch(api: Api, repo: str) -> None:
    _branch(api, repo, "feature")
    api.upload(repo, "feature", "a.csv", b"1")
    api.commit(repo, "feature", "a")
    pr_id = _open(api, repo)
    api.upload(repo, "main", "dirty.csv", b"x")
    assert "dirty" in assert_error(_merge(api, repo, pr_id), 400)
    api.request("DELETE", f"/repositories/{repo}/branches/main/objects", query={"path": "dirty.csv"})
    # As in lakeFS, a protected branch takes no direct commit, and changes only through merges.
    rules = [{"pattern": "main"}]
    assert api.request("PUT", f"/repositories/{repo}/settings/branch_protection", json_body=rules).status_code == 204
    api.upload(repo, "feature", "b.csv", b"2")
    assert_error(api.post(f"/repositories/{repo}/branches/main/commits", json_body={"message": "direct"}), 403)
    assert _merge(api, repo, pr_id).status_code == 200
    assert _get(api, repo, pr_id).status == "merged"


def _user(api: Api, client: Any, user_id: str, group: str | None = None, policy: str | None = None) -> Api:
    assert api.post("/auth/users", json_body={"id": user_id}).status_code == 201
    if group:
        assert api.request("PUT", f"/auth/groups/{group}/members/{user_id}").status_code == 201
    if policy:
        assert api.request("PUT", f"/auth/users/{user_id}/policies/{policy}").status_code == 201
    pair = body_of(api.post(f"/auth/users/{user_id}/credentials"))
    return Api(client, (pair["access_key_id"], pair["secret_access_key"]))


def test_permissions(api: Api, repo: str, client: Any) -> None:
    _branch(api, repo, "feature")
    api.upload(repo, "feature", "a.csv", b"1")
    api.commit(repo, "feature", "a")
    pr_id = _open(api, repo)
    # A viewer reads data but may not list or open pull requests.
    viewer = _user(api, client, "viewer", group="Viewers")
    assert_error(viewer.get(f"/repositories/{repo}/pulls"), 403)
    body = {"title": "t", "source_branch": "feature", "destination_branch": "main"}
    assert_error(viewer.post(f"/repositories/{repo}/pulls", json_body=body), 403)
    # pr:* without fs:CreateCommit on the destination may read and edit, not merge.
    statement = {"effect": "allow", "action": ["pr:*"], "resource": "*"}
    assert api.post("/auth/policies", json_body={"id": "PRs", "statement": [statement]}).status_code == 201
    reviewer = _user(api, client, "reviewer", policy="PRs")
    assert reviewer.get(f"/repositories/{repo}/pulls/{pr_id}").status_code == 200
    assert _patch(reviewer, repo, pr_id, {"title": "reviewed"}).status_code == 204
    assert "fs:CreateCommit" in assert_error(_merge(reviewer, repo, pr_id), 403)
    assert _get(api, repo, pr_id).status == "open"


def test_a_failing_pre_merge_hook_keeps_the_pull_request_open(api: Api, repo: str) -> None:
    from .hook_server import start_hook_server
    from .test_actions import action_file

    state, server = start_hook_server()
    try:
        url = state.on("/quality", 400, "a.csv: 1 row without id")
        _branch(api, repo, "feature")
        api.upload(repo, "feature", "_lakefs_actions/check.yaml", action_file("quality", "pre-merge", url))
        api.upload(repo, "feature", "a.csv", b"id\n\n")
        api.commit(repo, "feature", "data")
        pr_id = _open(api, repo)
        before = body_of(api.get(f"/repositories/{repo}/branches/main"))["commit_id"]
        message = assert_error(_merge(api, repo, pr_id), 412)
        assert message.startswith("pre-merge hook aborted") and "a.csv: 1 row without id" in message
        assert state.bodies("/quality")[0]["source_ref"] == "feature"
        assert body_of(api.get(f"/repositories/{repo}/branches/main"))["commit_id"] == before
        assert _get(api, repo, pr_id).status == "open"
    finally:
        server.shutdown()
        server.server_close()


def test_deleting_a_repository_removes_its_pull_requests(api: Api, repo: str, services: Any) -> None:
    _branch(api, repo, "feature")
    first, second = _open(api, repo), _open(api, repo, title="another")
    namespace = body_of(api.get(f"/repositories/{repo}"))["storage_namespace"]
    deleted = services.engine.repositories.get_repository(repo)
    assert api.delete(f"/repositories/{repo}").status_code == 204
    # The rows are gone from the store, not only out of sight (they are kept per repository generation).
    store = services.engine.pulls._parts.store
    assert store.list(deleted) == []
    # A repository created again under the name shows none of the old ones.
    created = api.post("/repositories", json_body={"name": repo, "storage_namespace": namespace + "-again"})
    assert created.status_code == 201, created.body
    assert body_of(api.get(f"/repositories/{repo}/pulls", query={"status": "all"}))["results"] == []
    for pr_id in (first, second):
        assert_error(api.get(f"/repositories/{repo}/pulls/{pr_id}"), 404)
    _branch(api, repo, "feature")
    third = _open(api, repo)
    listed = body_of(api.get(f"/repositories/{repo}/pulls", query={"status": "all"}))["results"]
    assert [p["id"] for p in listed] == [third]
