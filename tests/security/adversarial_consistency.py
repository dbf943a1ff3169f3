"""The adversarial run's consistency cases (tests/security/adversarial.py calls ``check_consistency``), against the
same ``lakelet local``, in a repository of their own:

- concurrent commits of one branch's staged changes each answer their own request (201 with their own message
  and metadata, or 400 "no changes"), never another request's commit;
- a read that starts after a write was acknowledged sees it while commits run (API stat and listing);
- a pre-commit hook judges exactly what the commit takes: a file staged while the hook runs stays staged.

The pytest versions: tests/api/test_commit_answers.py, tests/unit/graveler/test_reads_during_commits.py and
tests/e2e/test_reads_during_commits.py; a refused write (429) is forced in tests/unit/graveler/test_refused_writes.py.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import quote

Send = Callable[..., tuple[int, Any]]
Flag = Callable[[str], None]

REPO = "adv-consistency"


def _upload(send_json: Send, port: int, raw: Callable[..., Any], branch: str, path: str, data: bytes) -> int:
    status, _ = raw(port, "POST", f"/repositories/{REPO}/branches/{branch}/objects?path={quote(path)}", data)
    return int(status)


def _listed(send_json: Send, port: int, ref: str, prefix: str) -> set[str]:
    found: set[str] = set()
    after = ""
    while True:
        _, page = send_json(
            port, "GET", f"/repositories/{REPO}/refs/{ref}/objects/ls?prefix={prefix}&amount=1000&after={quote(after)}"
        )
        found.update(item["path"] for item in page.get("results", []))
        if not page.get("pagination", {}).get("has_more"):
            return found
        after = page["pagination"]["next_offset"]


def check_concurrent_commits(send_json: Send, port: int, raw: Callable[..., Any], flag: Flag) -> None:
    for i in range(4):
        _upload(send_json, port, raw, "main", f"race/{i}", b"x")
    barrier = threading.Barrier(8)
    answers: dict[int, tuple[int, Any]] = {}

    def commit(i: int) -> None:
        barrier.wait()
        answers[i] = send_json(
            port, "POST", f"/repositories/{REPO}/branches/main/commits", {"message": f"c{i}", "metadata": {"r": str(i)}}
        )

    threads = [threading.Thread(target=commit, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i, (status, body) in answers.items():
        if status == 201 and (body.get("message") != f"c{i}" or body.get("metadata") != {"r": str(i)}):
            flag(f"concurrent commit {i} answered another request's commit: {body.get('message')!r}")
        elif status != 201 and not (status == 400 and "no changes" in json.dumps(body).lower()):
            flag(f"concurrent commit {i} answered {status}: {str(body)[:120]}")
    if not any(status == 201 for status, _ in answers.values()):
        flag("no concurrent commit landed")


def check_reads_during_commits(send_json: Send, port: int, raw: Callable[..., Any], flag: Flag, seconds: float) -> None:
    acked: list[str] = []
    lock = threading.Lock()
    stop = threading.Event()
    misses: list[str] = []

    def writer() -> None:
        i = 0
        while not stop.is_set():
            key = f"reads/{i:05d}"
            if _upload(send_json, port, raw, "main", key, b"r") == 201:
                with lock:
                    acked.append(key)
                i += 1

    def committer() -> None:
        while not stop.is_set():
            time.sleep(0.2)
            send_json(port, "POST", f"/repositories/{REPO}/branches/main/commits", {"message": "during reads"})

    def reader() -> None:
        while not stop.is_set():
            with lock:
                known = list(acked)
            listed = _listed(send_json, port, "main", "reads/")
            misses.extend(f"listing {k}" for k in known if k not in listed)
            for key in known[-5:]:
                status, _ = send_json(port, "GET", f"/repositories/{REPO}/refs/main/objects/stat?path={quote(key)}")
                if status == 404:
                    misses.append(f"stat {key}")

    threads = [threading.Thread(target=t) for t in (writer, writer, committer, reader, reader)]
    for t in threads:
        t.start()
    time.sleep(seconds)
    stop.set()
    for t in threads:
        t.join()
    if misses:
        flag(f"{len(misses)} reads missed acknowledged writes during commits, first: {misses[:3]}")


def check_pre_commit_hook_sees_sealed(send_json: Send, port: int, raw: Callable[..., Any], flag: Flag) -> None:
    called, gate = threading.Event(), threading.Event()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            called.set()
            gate.wait(30)
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        send_json(port, "POST", f"/repositories/{REPO}/branches", {"name": "hooked", "source": "main"})
        url = f"http://127.0.0.1:{server.server_address[1]}/guard"
        action = "name: guard\non:\n  pre-commit:\n    branches: [hooked]\nhooks:\n  - id: guard\n    type: webhook\n"
        action += f"    properties:\n      url: {url}\n      timeout: 15s\n"
        _upload(send_json, port, raw, "hooked", "_lakefs_actions/guard.yaml", action.encode())
        _upload(send_json, port, raw, "hooked", "ok/a", b"a")
        answer: list[tuple[int, Any]] = []
        committing = threading.Thread(
            target=lambda: answer.append(
                send_json(port, "POST", f"/repositories/{REPO}/branches/hooked/commits", {"message": "guarded"})
            )
        )
        committing.start()
        if not called.wait(20):
            gate.set()
            committing.join()
            flag(f"the pre-commit hook was not called: {answer}")
            return
        _upload(send_json, port, raw, "hooked", "forbidden/z", b"z")
        gate.set()
        committing.join()
        status, body = answer[0]
        if status != 201:
            flag(f"the guarded commit answered {status}: {str(body)[:120]}")
            return
        if "forbidden/z" in _listed(send_json, port, body["id"], "forbidden/"):
            flag("a file staged while the pre-commit hook ran landed in the commit unseen")
        _, diff = send_json(port, "GET", f"/repositories/{REPO}/branches/hooked/diff")
        if [item.get("path") for item in diff.get("results", [])] != ["forbidden/z"]:
            flag(f"the file staged during the hook is not left staged: {diff}")
    finally:
        gate.set()
        server.shutdown()
        server.server_close()


def check_consistency(send_json: Send, port: int, raw: Callable[..., Any], flag: Flag, quick: bool) -> None:
    """``raw(port, method, api_path, bytes)``: an upload body sent as application/octet-stream."""
    status, _ = send_json(
        port, "POST", "/repositories", {"name": REPO, "storage_namespace": f"s3://lakelet-local/{REPO}"}
    )
    if status != 201:
        flag(f"could not create {REPO}: {status}")
        return
    check_concurrent_commits(send_json, port, raw, flag)
    check_reads_during_commits(send_json, port, raw, flag, 4.0 if quick else 15.0)
    check_pre_commit_hook_sees_sealed(send_json, port, raw, flag)
