"""Write, audit, publish on the local stack: a data-quality webhook on 127.0.0.1 refuses a bad merge and accepts a
good one; ``lakelet actions`` and the official client's ActionsApi read the runs; the 412 reaches lakefs_sdk."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import lakefs_sdk
import pytest
import yaml

from tests.api.hook_server import HookServer, start_hook_server
from tests.e2e.conftest import LocalProcess

from .conftest import Result


@pytest.fixture
def hook_server() -> Iterator[HookServer]:
    state, server = start_hook_server()
    yield state
    server.shutdown()
    server.server_close()


def sdk(stack: LocalProcess) -> lakefs_sdk.ApiClient:
    return lakefs_sdk.ApiClient(
        lakefs_sdk.Configuration(host=stack.api_url, username=stack.access_key_id, password=stack.secret_access_key)
    )


def test_write_audit_publish(
    cli: Callable[..., Result], repo: str, hook_server: HookServer, tmp_path: Path, cli_stack: LocalProcess
) -> None:
    url = hook_server.on("/quality", 400, "rows without id: 1")
    action = tmp_path / "quality.yaml"
    action.write_text(
        yaml.safe_dump(
            {
                "name": "data quality",
                "on": {"pre-merge": {"branches": ["main"]}},
                "hooks": [{"id": "rows_have_ids", "type": "webhook", "properties": {"url": url, "timeout": "10s"}}],
            }
        )
    )
    assert "is valid" in cli("actions", "validate", str(action)).stdout
    cli("fs", "upload", f"lakefs://{repo}/main/_lakefs_actions/quality.yaml", "--source", str(action))
    cli("commit", f"lakefs://{repo}/main", "-m", "guard main")
    cli("branch", "create", f"lakefs://{repo}/ingest", "--source", f"lakefs://{repo}/main")
    data = tmp_path / "users.csv"
    data.write_text("id,name\n,nobody\n")
    cli("fs", "upload", f"lakefs://{repo}/ingest/users.csv", "--source", str(data))
    cli("commit", f"lakefs://{repo}/ingest", "-m", "bad users")

    client = sdk(cli_stack)
    refs = lakefs_sdk.RefsApi(client)
    main_before = lakefs_sdk.BranchesApi(client).get_branch(repo, "main").commit_id
    with pytest.raises(lakefs_sdk.ApiException) as refused:
        refs.merge_into_branch(repo, "ingest", "main", merge=lakefs_sdk.Merge(message="publish"))
    assert refused.value.status == 412
    assert "pre-merge hook aborted" in json.loads(refused.value.body)["message"]
    assert lakefs_sdk.BranchesApi(client).get_branch(repo, "main").commit_id == main_before

    actions = lakefs_sdk.ActionsApi(client)
    [run] = actions.list_repository_runs(repo, branch="main").results
    assert run.status == "failed" and run.event_type == "pre-merge"
    [hook] = actions.list_run_hooks(repo, run.run_id).results
    assert hook.hook_id == "rows_have_ids" and hook.status == "failed"
    assert b"rows without id: 1" in bytes(actions.get_run_hook_output(repo, run.run_id, hook.hook_run_id))
    listed = cli("actions", "runs", "list", f"lakefs://{repo}").stdout
    assert run.run_id in listed and "failed" in listed
    described = cli("actions", "runs", "describe", f"lakefs://{repo}", run.run_id).stdout
    assert "rows_have_ids" in described and "rows without id: 1" in described

    # Fixed data, and a quality check that now passes: the merge lands.
    hook_server.on("/quality", 200, "all rows have ids")
    data.write_text("id,name\n1,somebody\n")
    cli("fs", "upload", f"lakefs://{repo}/ingest/users.csv", "--source", str(data))
    cli("commit", f"lakefs://{repo}/ingest", "-m", "good users")
    merged = refs.merge_into_branch(repo, "ingest", "main", merge=lakefs_sdk.Merge(message="publish"))
    assert lakefs_sdk.BranchesApi(client).get_branch(repo, "main").commit_id == merged.reference
    assert [r.status for r in actions.list_repository_runs(repo, branch="main").results] == ["completed", "failed"]


def test_commit_latency_with_one_passing_webhook(
    cli: Callable[..., Result], repo: str, hook_server: HookServer, tmp_path: Path, cli_stack: LocalProcess
) -> None:
    """Prints the added latency of a commit with one passing pre-commit webhook (for the notes); asserts that the
    hook ran once per commit."""
    client = sdk(cli_stack)
    objects, commits = lakefs_sdk.ObjectsApi(client), lakefs_sdk.CommitsApi(client)

    small = tmp_path / "small.txt"
    small.write_bytes(b"x")

    def timed_commits(branch: str, n: int = 8) -> float:
        took = []
        for i in range(n):
            objects.upload_object(repo, branch, f"f{i}.txt", content=str(small))
            start = time.perf_counter()
            commits.commit(repo, branch, lakefs_sdk.CommitCreation(message=f"c{i}"))
            took.append(time.perf_counter() - start)
        return sorted(took)[len(took) // 2]

    lakefs_sdk.BranchesApi(client).create_branch(repo, lakefs_sdk.BranchCreation(name="plain", source="main"))
    plain = timed_commits("plain")
    url = hook_server.on("/pass", 200, "ok")
    doc = yaml.safe_dump(
        {
            "name": "pass",
            "on": {"pre-commit": None},
            "hooks": [{"id": "ok_hook", "type": "webhook", "properties": {"url": url}}],
        }
    )
    action = tmp_path / "pass.yaml"
    action.write_text(doc)
    objects.upload_object(repo, "main", "_lakefs_actions/pass.yaml", content=str(action))
    commits.commit(repo, "main", lakefs_sdk.CommitCreation(message="hook"))
    lakefs_sdk.BranchesApi(client).create_branch(repo, lakefs_sdk.BranchCreation(name="hooked", source="main"))
    hooked = timed_commits("hooked")
    print(
        f"\ncommit median: {plain * 1000:.1f} ms without hooks, {hooked * 1000:.1f} ms with one passing "
        f"pre-commit webhook (+{(hooked - plain) * 1000:.1f} ms)"
    )
    # Eight timed commits, and the one that committed the action file (its pre-commit reads the staged file).
    assert len(hook_server.bodies("/pass")) == 9
