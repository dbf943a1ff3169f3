"""Guarantee 9: smaller leaks.

A task's status answers only through its own repository and branch; bulk delete tells nobody without rights
whether a repository exists; branch names are ASCII as in lakeFS; the local servers authenticate a request
before they read its body, and never read a large body from a caller without valid credentials.
"""

from __future__ import annotations

import dataclasses
import json
import socket
import time

import pytest

from chalicelib.graveler import errors
from chalicelib.graveler.engine import build_engine
from chalicelib.graveler.ports import Execution
from chalicelib.graveler.runs.workflow_runner import Workflows

from .servers import Stack, stack

__all__ = ["stack"]


def _post(stack: Stack, target: str, body: object, **kw: object) -> tuple[int, dict[str, object]]:
    response = stack.api_request("POST", target, json.dumps(body).encode(), **kw)  # type: ignore[arg-type]
    is_json = (response.header("Content-Type") or "").startswith("application/json") and response.body
    return response.status, response.json() if is_json else {}


@pytest.fixture(scope="module")
def repos(stack: Stack) -> Stack:
    for name in ("leaks-a", "leaks-b"):
        status, _ = _post(stack, "/repositories", {"name": name, "storage_namespace": f"s3://security-tests/{name}"})
        assert status == 201
        assert _post(stack, f"/repositories/{name}/branches", {"name": "dev", "source": "main"})[0] == 201
    return stack


def test_a_commit_task_answers_only_through_its_repository_and_branch(repos: Stack) -> None:
    uploaded = repos.api_request("POST", "/repositories/leaks-a/branches/main/objects?path=x", b"x")
    assert uploaded.status == 201
    status, created = _post(repos, "/repositories/leaks-a/branches/main/commits/async", {"message": "m"})
    assert status == 202
    task = created["id"]
    own = repos.api_request("GET", f"/repositories/leaks-a/branches/main/commits/status?id={task}")
    assert own.status == 200 and own.json()["completed"] is True
    for elsewhere in ("/repositories/leaks-a/branches/dev", "/repositories/leaks-b/branches/main"):
        response = repos.api_request("GET", f"{elsewhere}/commits/status?id={task}")
        assert response.status == 404, (elsewhere, response.body)


def test_a_merge_task_answers_only_through_its_destination(repos: Stack) -> None:
    assert repos.api_request("POST", "/repositories/leaks-a/branches/dev/objects?path=y", b"y").status == 201
    assert _post(repos, "/repositories/leaks-a/branches/dev/commits", {"message": "m"})[0] == 201
    status, created = _post(repos, "/repositories/leaks-a/refs/dev/merge/main/async", {})
    assert status == 202
    task = created["id"]
    assert repos.api_request("GET", f"/repositories/leaks-a/refs/dev/merge/main/status?id={task}").status == 200
    for elsewhere in ("/repositories/leaks-a/refs/main/merge/dev", "/repositories/leaks-b/refs/dev/merge/main"):
        response = repos.api_request("GET", f"{elsewhere}/status?id={task}")
        assert response.status == 404, (elsewhere, response.body)


class _Workflows:
    """A state machine with one finished execution, started for repository leaks-a, branch main."""

    def describe(self, name: str) -> Execution | None:
        request = {"repository": "leaks-a", "branch": "main", "destination": "main"}
        return Execution("RUNNING", 0.0, None, "", "", {"request": request}) if name == "w-1" else None


def test_a_workflow_task_answers_only_through_its_repository_and_branch(
    repos: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    workflows = Workflows(_Workflows(), _Workflows())  # type: ignore[arg-type]
    g = build_engine(dataclasses.replace(repos.services.engine.ports, workflows=workflows))
    assert g.commits.commit_status("leaks-a", "main", "w-1").completed is False
    for repo, branch in (("leaks-b", "main"), ("leaks-a", "dev")):
        with pytest.raises(errors.NotFound):
            g.commits.commit_status(repo, branch, "w-1")
        with pytest.raises(errors.NotFound):
            g.merges.merge_status(repo, branch, "w-1")


def test_bulk_delete_does_not_reveal_whether_a_repository_exists(repos: Stack) -> None:
    assert _post(repos, "/auth/users", {"id": "nobody-rights"})[0] == 201
    status, created = _post(repos, "/auth/users/nobody-rights/credentials", {})
    assert status == 201
    import base64

    basic = "Basic " + base64.b64encode(f"{created['access_key_id']}:{created['secret_access_key']}".encode()).decode()
    answers = []
    for repo in ("leaks-a", "no-such-repo"):
        for paths in (["x"], []):
            response = repos.api_request(
                "POST",
                f"/repositories/{repo}/branches/main/objects/delete",
                json.dumps({"paths": paths}).encode(),
                {"Authorization": basic},
                auth=False,
            )
            answers.append((paths, response.status, response.body))
    assert answers[0] == answers[2] and answers[1] == answers[3], answers
    assert answers[0][1] == 200 and b"not allowed" in answers[0][2]
    # Someone who may read the repository still learns it is missing.
    response = repos.api_request("POST", "/repositories/no-such-repo/branches/main/objects/delete", b'{"paths": []}')
    assert response.status == 404


@pytest.mark.parametrize("name", ["m\u0430in", "caf\u00e9", "\u0661\u0662", "x\u200b"])
def test_branch_names_are_ascii_as_in_lakefs(repos: Stack, name: str) -> None:
    status, body = _post(repos, "/repositories/leaks-a/branches", {"name": name, "source": "main"})
    assert status == 400, body


def _open(port: int, head: str) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    sock.sendall(head.encode())
    return sock


def _answer(sock: socket.socket) -> bytes:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    return data


def test_the_api_server_refuses_a_large_unauthenticated_body_before_reading_it(repos: Stack) -> None:
    started = time.monotonic()
    with _open(
        repos.api.port,
        "POST /api/v1/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        f"Content-Length: {50 * 1024 * 1024}\r\n\r\n",
    ) as sock:
        answer = _answer(sock)  # no byte of the 50 MiB was sent
    assert answer.startswith((b"HTTP/1.0 401", b"HTTP/1.1 401")), answer[:200]
    assert time.monotonic() - started < 5
    # Chunked: refused once the chunks pass the limit, without reading on.
    with _open(
        repos.api.port,
        f"POST /api/v1/auth/login HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n{2 * 1024 * 1024:x}\r\n",
    ) as sock:
        answer = _answer(sock)
    assert b" 401 " in answer.split(b"\r\n")[0], answer[:200]


def test_the_api_server_still_reads_a_large_body_with_valid_credentials(repos: Stack) -> None:
    data = b"z" * (2 * 1024 * 1024)
    response = repos.api_request("POST", "/repositories/leaks-b/branches/main/objects?path=big", data)
    assert response.status == 201, response.body


def test_the_s3_server_authenticates_before_it_reads_a_body(repos: Stack) -> None:
    head = (
        "PUT /leaks-a/main/big HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n"
        f"Content-Length: {50 * 1024 * 1024}\r\n\r\n"
    )
    with _open(repos.s3.port, head) as sock:
        answer = _answer(sock)
    assert not answer.startswith(b"HTTP/1.1 100"), answer[:200]  # no invitation to send the body
    assert answer.startswith(b"HTTP/1.1 403"), answer[:200]
    bad_signature = head.replace(
        "Expect: 100-continue\r\n",
        "Authorization: AWS4-HMAC-SHA256 Credential=AKIAX/"
        "20260101/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=" + "0" * 64 + "\r\n"
        "x-amz-date: 20260101T000000Z\r\nx-amz-content-sha256: UNSIGNED-PAYLOAD\r\n",
    )
    with _open(repos.s3.port, bad_signature) as sock:
        answer = _answer(sock)
    assert answer.split(b"\r\n")[0].split()[1] in (b"400", b"403"), answer[:200]
