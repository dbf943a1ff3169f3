"""Through the API, in process: concurrent commits each answer their own request, and a pre-commit hook judges
exactly what the commit takes (a change staged while the hook runs goes to the next commit)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from .support import Api, assert_error
from .test_actions import action_file, feature_branch, merge

RACERS = 8


def test_concurrent_commits_answer_their_own_request(api: Api, repo: str) -> None:
    for i in range(4):
        api.upload(repo, "main", f"k{i}", b"x")
    barrier = threading.Barrier(RACERS)
    answers: dict[int, Any] = {}

    def commit(i: int) -> None:
        barrier.wait()
        answers[i] = api.post(
            f"/repositories/{repo}/branches/main/commits",
            json_body={"message": f"commit {i}", "metadata": {"request": str(i)}},
        )

    threads = [threading.Thread(target=commit, args=(i,)) for i in range(RACERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    made = {i: json.loads(r.body) for i, r in answers.items() if r.status_code == 201}
    assert made, {i: r.body for i, r in answers.items()}
    for i, body in made.items():
        assert body["message"] == f"commit {i}" and body["metadata"] == {"request": str(i)}, (i, body)
    for i, response in answers.items():
        if i not in made:
            assert "no changes" in assert_error(response, 400)
    log = json.loads(api.get(f"/repositories/{repo}/refs/main/commits").body)["results"]
    assert {body["id"] for body in made.values()} <= {c["id"] for c in log}


class GatedHook:
    """A webhook that, once called, waits until the test opens its gate, then answers 200."""

    def __init__(self) -> None:
        self.called = threading.Event()
        self.gate = threading.Event()
        hook = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                hook.called.set()
                hook.gate.wait(20)
                self.send_response(200)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/guard"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@pytest.fixture
def gated() -> Iterator[GatedHook]:
    hook = GatedHook()
    yield hook
    hook.gate.set()
    hook.server.shutdown()
    hook.server.server_close()


def test_a_change_staged_while_the_pre_commit_hook_runs_goes_to_the_next_commit(
    api: Api, repo: str, gated: GatedHook
) -> None:
    api.upload(repo, "main", "_lakefs_actions/guard.yaml", action_file("guard", "pre-commit", gated.url))
    api.upload(repo, "main", "ok/a", b"a")
    answer: list[Any] = []
    committing = threading.Thread(
        target=lambda: answer.append(
            api.post(f"/repositories/{repo}/branches/main/commits", json_body={"message": "guarded"})
        )
    )
    committing.start()
    assert gated.called.wait(20)
    api.upload(repo, "main", "forbidden/z", b"z")  # staged while the hook judges the commit
    gated.gate.set()
    committing.join(30)
    assert answer and answer[0].status_code == 201, answer and answer[0].body
    commit_id = json.loads(answer[0].body)["id"]
    listed = json.loads(api.get(f"/repositories/{repo}/refs/{commit_id}/objects/ls").body)["results"]
    assert [o["path"] for o in listed] == ["_lakefs_actions/guard.yaml", "ok/a"]
    staged = json.loads(api.get(f"/repositories/{repo}/branches/main/diff").body)["results"]
    assert [(d["path"], d["type"]) for d in staged] == [("forbidden/z", "added")]


def test_a_change_staged_while_the_pre_merge_hook_runs_is_not_merged(api: Api, repo: str, gated: GatedHook) -> None:
    feature_branch(api, repo, gated.url, branches=["main"], timeout="20s")
    answer: list[Any] = []
    merging = threading.Thread(target=lambda: answer.append(merge(api, repo)))
    merging.start()
    assert gated.called.wait(20)
    api.upload(repo, "main", "forbidden/z", b"z")  # staged on the destination while the hook judges the merge
    gated.gate.set()
    merging.join(30)
    assert answer and answer[0].status_code == 200, answer and answer[0].body
    merged = json.loads(answer[0].body)["reference"]
    listed = json.loads(api.get(f"/repositories/{repo}/refs/{merged}/objects/ls").body)["results"]
    assert "forbidden/z" not in [o["path"] for o in listed]
    staged = json.loads(api.get(f"/repositories/{repo}/branches/main/diff").body)["results"]
    assert [(d["path"], d["type"]) for d in staged] == [("forbidden/z", "added")]
