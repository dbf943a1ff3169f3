"""Hooks through the API: a webhook server on 127.0.0.1 guards merges and commits, and the runs API reads what
they did, in lakeFS's shapes."""

from __future__ import annotations

import json
from collections.abc import Iterator

import lakefs_sdk
import pytest
import yaml

from .hook_server import HookServer, start_hook_server
from .support import Api, assert_error


def conforms(model: type, body: dict) -> None:
    """The body parses as the lakefs_sdk model and carries exactly its fields (times as RFC 3339)."""
    parsed = model.from_dict(body)
    assert set(parsed.to_dict()) == set(body)
    for item in body.get("results", [body]):
        assert set(item) == set(type(parsed.results[0] if "results" in body else parsed).__fields__), item


@pytest.fixture
def hook_server() -> Iterator[HookServer]:
    state, server = start_hook_server()
    yield state
    server.shutdown()
    server.server_close()


def action_file(name: str, event: str, url: str, branches: list[str] | None = None, timeout: str = "5s") -> bytes:
    return yaml.safe_dump(
        {
            "name": name,
            "on": {event: {"branches": branches} if branches else None},
            "hooks": [{"id": "quality", "type": "webhook", "properties": {"url": url, "timeout": timeout}}],
        }
    ).encode()


def feature_branch(api: Api, repo: str, url: str, event: str = "pre-merge", **kw: str) -> None:
    assert (
        api.post(f"/repositories/{repo}/branches", json_body={"name": "feature", "source": "main"}).status_code == 201
    )
    api.upload(repo, "feature", "_lakefs_actions/check.yaml", action_file("data quality", event, url, **kw))
    api.upload(repo, "feature", "tables/users.csv", b"id,name\n,missing id\n")
    api.commit(repo, "feature", "new users")


def merge(api: Api, repo: str) -> object:
    return api.post(f"/repositories/{repo}/refs/feature/merge/main", json_body={"message": "publish"})


def head(api: Api, repo: str, branch: str) -> str:
    return json.loads(api.get(f"/repositories/{repo}/branches/{branch}").body)["commit_id"]


def test_failing_pre_merge_hook_refuses_the_merge(api: Api, repo: str, hook_server: HookServer) -> None:
    url = hook_server.on("/quality", 400, "users.csv: 1 row without id")
    feature_branch(api, repo, url, branches=["main"])
    before = head(api, repo, "main")
    response = merge(api, repo)
    message = assert_error(response, 412)
    assert message.startswith("pre-merge hook aborted, run id '")
    assert (
        "\t* hook run id '0000_0000' failed on action 'data quality' hook 'quality': "
        "webhook request failed (status code: 400)" in message
    )
    assert "users.csv: 1 row without id" in message
    assert head(api, repo, "main") == before  # nothing changed
    payload = hook_server.bodies("/quality")[0]
    assert payload["event_type"] == "pre-merge" and payload["branch_id"] == "main"
    assert payload["source_ref"] == "feature" and payload["repository_id"] == repo
    # The run is recorded, with the hook's output.
    runs = json.loads(api.get(f"/repositories/{repo}/actions/runs").body)
    conforms(lakefs_sdk.ActionRunList, runs)
    [run] = runs["results"]
    assert run["status"] == "failed" and run["event_type"] == "pre-merge" and run["branch"] == "main"
    assert f"run id '{run['run_id']}'" in message
    hooks = json.loads(api.get(f"/repositories/{repo}/actions/runs/{run['run_id']}/hooks").body)
    conforms(lakefs_sdk.HookRunList, hooks)
    assert [(h["hook_id"], h["status"]) for h in hooks["results"]] == [("quality", "failed")]
    output = api.get(f"/repositories/{repo}/actions/runs/{run['run_id']}/hooks/0000_0000/output")
    assert output.status_code == 200 and b"users.csv: 1 row without id" in output.body
    conforms(lakefs_sdk.ActionRun, json.loads(api.get(f"/repositories/{repo}/actions/runs/{run['run_id']}").body))


def test_passing_pre_merge_hook_lets_it_land(api: Api, repo: str, hook_server: HookServer) -> None:
    feature_branch(api, repo, hook_server.on("/quality", 200, "all rows valid"))
    response = merge(api, repo)
    assert response.status_code == 200, response.body
    assert head(api, repo, "main") == json.loads(response.body)["reference"]
    [run] = json.loads(api.get(f"/repositories/{repo}/actions/runs", query={"branch": "main"}).body)["results"]
    assert run["status"] == "completed"


def test_hook_that_times_out_fails_the_run(api: Api, repo: str, hook_server: HookServer) -> None:
    feature_branch(api, repo, hook_server.on("/quality", 200, "late", delay=3.0), timeout="500ms")
    before = head(api, repo, "main")
    message = assert_error(merge(api, repo), 412)
    assert "timed out after 0.5s" in message
    assert head(api, repo, "main") == before


def test_post_commit_payload_and_failure_recorded_without_undoing(api: Api, repo: str, hook_server: HookServer) -> None:
    url = hook_server.on("/notify", 500, "notifier down")
    api.upload(repo, "main", "_lakefs_actions/notify.yaml", action_file("notify", "post-commit", url))
    api.upload(repo, "main", "a.txt", b"a")
    made = api.commit(repo, "main", "add a", metadata={"owner": "data-team"})
    assert head(api, repo, "main") == made["id"]  # the failed post-hook undid nothing
    [payload] = hook_server.bodies("/notify")
    assert set(payload) == {
        "event_type",
        "event_time",
        "action_name",
        "hook_id",
        "repository_id",
        "branch_id",
        "source_ref",
        "commit_id",
        "commit_message",
        "committer",
        "commit_metadata",
    }
    assert payload["event_type"] == "post-commit" and payload["commit_id"] == made["id"]
    assert payload["commit_message"] == "add a" and payload["committer"] == "admin"
    assert payload["commit_metadata"] == {"owner": "data-team"} and payload["branch_id"] == "main"
    assert payload["action_name"] == "notify" and payload["hook_id"] == "quality"
    runs = json.loads(api.get(f"/repositories/{repo}/actions/runs", query={"commit": made["id"]}).body)["results"]
    assert [(r["event_type"], r["status"], r["commit_id"]) for r in runs] == [("post-commit", "failed", made["id"])]


def test_failing_pre_commit_hook_refuses_the_commit(api: Api, repo: str, hook_server: HookServer) -> None:
    url = hook_server.on("/guard", 403, "no")
    api.upload(repo, "main", "_lakefs_actions/guard.yaml", action_file("guard", "pre-commit", url))
    before = head(api, repo, "main")
    response = api.post(f"/repositories/{repo}/branches/main/commits", json_body={"message": "x"})
    assert "pre-commit hook aborted" in assert_error(response, 412)
    assert head(api, repo, "main") == before
    assert api.get(f"/repositories/{repo}/branches/main/diff").status_code == 200


def test_lua_action_refuses_the_operation_clearly(api: Api, repo: str) -> None:
    lua = b"name: lua\non: {pre-commit: }\nhooks: [{id: check, type: lua, properties: {script: 'x'}}]\n"
    api.upload(repo, "main", "_lakefs_actions/lua.yaml", lua)
    response = api.post(f"/repositories/{repo}/branches/main/commits", json_body={"message": "x"})
    assert "Lua hooks are not supported by Lakelet" in assert_error(response, 400)


def test_branch_and_tag_events(api: Api, repo: str, hook_server: HookServer) -> None:
    url = hook_server.on("/refs", 200)
    doc = yaml.safe_dump(
        {
            "name": "refs",
            "on": dict.fromkeys(
                (
                    "pre-create-branch",
                    "post-create-branch",
                    "pre-delete-branch",
                    "post-delete-branch",
                    "pre-create-tag",
                    "post-create-tag",
                    "pre-delete-tag",
                    "post-delete-tag",
                )
            ),
            "hooks": [{"id": "seen", "type": "webhook", "properties": {"url": url}}],
        }
    ).encode()
    api.upload(repo, "main", "_lakefs_actions/refs.yaml", doc)
    api.commit(repo, "main", "actions")
    assert api.post(f"/repositories/{repo}/branches", json_body={"name": "b1", "source": "main"}).status_code == 201
    assert api.delete(f"/repositories/{repo}/branches/b1").status_code == 204
    assert api.post(f"/repositories/{repo}/tags", json_body={"id": "v1", "ref": "main"}).status_code == 201
    assert api.delete(f"/repositories/{repo}/tags/v1").status_code == 204
    seen = [(b["event_type"], b.get("branch_id"), b.get("tag_id")) for b in hook_server.bodies("/refs")]
    assert seen == [
        ("pre-create-branch", "b1", None),
        ("post-create-branch", "b1", None),
        ("pre-delete-branch", "b1", None),
        ("post-delete-branch", "b1", None),
        ("pre-create-tag", "", "v1"),
        ("post-create-tag", "", "v1"),
        ("pre-delete-tag", "", "v1"),
        ("post-delete-tag", "", "v1"),
    ]


def test_pre_create_branch_hook_refuses(api: Api, repo: str, hook_server: HookServer) -> None:
    url = hook_server.on("/no", 400, "no branches today")
    api.upload(repo, "main", "_lakefs_actions/a.yaml", action_file("no branches", "pre-create-branch", url))
    api.commit(repo, "main", "actions")
    response = api.post(f"/repositories/{repo}/branches", json_body={"name": "b1", "source": "main"})
    assert "pre-create-branch hook aborted" in assert_error(response, 412)
    assert api.get(f"/repositories/{repo}/branches/b1").status_code == 404


def test_runs_api_errors(api: Api, repo: str) -> None:
    assert_error(api.get(f"/repositories/{repo}/actions/runs/nope"), 404)
    assert_error(api.get(f"/repositories/{repo}/actions/runs/nope/hooks/0000_0000/output"), 404)
    assert_error(api.get("/repositories/missing/actions/runs"), 404)
    assert json.loads(api.get(f"/repositories/{repo}/actions/runs").body)["results"] == []


def test_pre_commit_run_gets_the_commit_id_once_it_lands(api: Api, repo: str, hook_server: HookServer) -> None:
    """lakeFS's PostCommitHook writes the new commit's id onto the pre-commit run: the runs of a commit list it."""
    url = hook_server.on("/guard", 200, "fine")
    api.upload(repo, "main", "_lakefs_actions/guard.yaml", action_file("guard", "pre-commit", url))
    made = api.commit(repo, "main", "add the guard")
    runs = json.loads(api.get(f"/repositories/{repo}/actions/runs", query={"commit": made["id"]}).body)["results"]
    assert [(r["event_type"], r["status"], r["commit_id"]) for r in runs] == [("pre-commit", "completed", made["id"])]
    [listed] = json.loads(api.get(f"/repositories/{repo}/actions/runs").body)["results"]
    assert listed["commit_id"] == made["id"]
    one = json.loads(api.get(f"/repositories/{repo}/actions/runs/{listed['run_id']}").body)
    assert one["commit_id"] == made["id"]


def test_pre_revert_run_gets_the_revert_commit_but_pre_merge_keeps_none(
    api: Api, repo: str, hook_server: HookServer
) -> None:
    """As lakeFS: its PostRevertHook updates the pre-revert run; its PostMergeHook updates nothing."""
    url = hook_server.on("/guard", 200, "fine")
    api.upload(repo, "main", "_lakefs_actions/guard.yaml", action_file("guard", "pre-revert", url))
    api.upload(repo, "main", "a.txt", b"a")
    target = api.commit(repo, "main", "add a")
    response = api.post(f"/repositories/{repo}/branches/main/revert", json_body={"ref": target["id"]})
    assert response.status_code == 204, response.body
    revert = head(api, repo, "main")
    runs = json.loads(api.get(f"/repositories/{repo}/actions/runs", query={"commit": revert}).body)["results"]
    assert [(r["event_type"], r["commit_id"]) for r in runs] == [("pre-revert", revert)]
    feature_branch(api, repo, hook_server.on("/quality", 200, "ok"))
    merged = json.loads(merge(api, repo).body)["reference"]
    [pre_merge] = json.loads(api.get(f"/repositories/{repo}/actions/runs", query={"branch": "main"}).body)["results"][
        :1
    ]
    assert (pre_merge["event_type"], pre_merge["commit_id"]) == ("pre-merge", "")
    assert json.loads(api.get(f"/repositories/{repo}/actions/runs", query={"commit": merged}).body)["results"] == []
