"""Hooks through the API under hostile action files: a pathological branch glob, a Host header, credentials in the
URL, a metadata-service address, a dripping server. Each refuses or ends within its bounds, with its reason."""

from __future__ import annotations

import json
import time

import yaml

from chalicelib.settings import Settings

from .hook_server import Raw
from .support import Api, assert_error, memory_services


def guard(url: str, timeout: str = "5s", branches: list[str] | None = None, **props: object) -> bytes:
    return yaml.safe_dump(
        {
            "name": "guard",
            "on": {"pre-commit": {"branches": branches} if branches else None},
            "hooks": [{"id": "gate", "type": "webhook", "properties": {"url": url, "timeout": timeout, **props}}],
        }
    ).encode()


def commit(api: Api, repo: str, branch: str = "main") -> object:
    return api.post(f"/repositories/{repo}/branches/{branch}/commits", json_body={"message": "x"})


def test_a_pathological_glob_on_a_long_branch_answers_at_once(api: Api, repo: str) -> None:
    """``*a*a*a*a*a*a*a*a*a*a*b`` against a 64-character branch: hours with the backtracking regex."""
    branch = "a" * 64
    assert api.post(f"/repositories/{repo}/branches", json_body={"name": branch, "source": "main"}).status_code == 201
    api.upload(repo, branch, "_lakefs_actions/g.yaml", guard("http://127.0.0.1:9/x", branches=["*a" * 10 + "*b"]))
    response = commit(api, repo, branch)
    assert response.status_code == 201, response.body  # the glob does not match: no hook ran


def test_header_and_credential_tricks_refuse_the_commit_at_validation(api: Api, repo: str) -> None:
    for props, reason in (
        ({"headers": {"Host": "169.254.169.254"}}, "header 'Host' may not be set"),
        ({"headers": {"Transfer-Encoding": "chunked"}}, "may not be set"),
    ):
        api.upload(repo, "main", "_lakefs_actions/g.yaml", guard("http://example.com/h", **props))
        assert reason in assert_error(commit(api, repo), 400)
    api.upload(repo, "main", "_lakefs_actions/g.yaml", guard("http://user:secret@example.com/h"))
    assert "must not carry credentials" in assert_error(commit(api, repo), 400)
    api.upload(repo, "main", "_lakefs_actions/g.yaml", guard("http://0x7f000001/h"))
    assert "spelled as a number" in assert_error(commit(api, repo), 400)


def test_a_deployment_refuses_the_metadata_service() -> None:
    """Settings as deployed (no destinations listed): the hook fails without a request, the commit is refused,
    and the run's output says why (no answer of the metadata service to read)."""
    from chalice.test import Client

    from .support import app

    # Settings as deployed: no webhook destination allowed beyond the defaults.
    with memory_services(settings=Settings(bucket="test-bucket")) as services:
        credential, secret = services.auth.setup("admin")
        with Client(app) as client:
            api = Api(client, (credential.access_key_id, secret))
            api.create_repo("repo1")
            for url in ("http://169.254.169.254/latest/meta-data/", "http://[fd00:ec2::254]/", "http://[::1]:9001/"):
                api.upload("repo1", "main", "_lakefs_actions/g.yaml", guard(url))
                message = assert_error(commit(api, "repo1"), 412)
                assert "webhook destination refused" in message, message
            runs = json.loads(api.get("/repositories/repo1/actions/runs").body)["results"]
            output = api.get(f"/repositories/repo1/actions/runs/{runs[0]['run_id']}/hooks/0000_0000/output")
            assert b"not sent:" in output.body


def test_a_dripping_pre_commit_hook_ends_the_commit_at_its_timeout(api: Api, repo: str) -> None:
    """Before: a byte every 1.5 s held a commit 75 s under ``timeout: 2s``. Now the commit answers 412 once the
    hook's 1 s are spent; the server got out about ten bytes."""
    server = Raw(b"HTTP/1.1 200 OK\r\nX-Slow: ", drip=True).start()
    try:
        api.upload(repo, "main", "_lakefs_actions/g.yaml", guard(f"http://127.0.0.1:{server.port}/drip", timeout="1s"))
        started = time.monotonic()
        message = assert_error(commit(api, repo), 412)
        elapsed = time.monotonic() - started
    finally:
        server.stop()
    assert "timed out after 1s" in message
    assert server.sent < 30
    assert elapsed < 3.0
