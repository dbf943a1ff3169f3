"""lakeFS's own CLI, lakectl, against the embedded stack: the commands that exited 1 against Lakelet although the
real lakeFS takes them (issue 40: update-metadata's 204, the empty 201s of a group member and of policy
attachments).

lakectl is built from lakeFS's source beside the project, never committed: the tier runs when ``LAKECTL_BIN``
names the binary and is skipped otherwise.
"""

from __future__ import annotations

import json
import os
import subprocess
import uuid
from collections.abc import Callable
from pathlib import Path

import lakefs
import pytest

from .conftest import LocalProcess

LAKECTL = os.environ.get("LAKECTL_BIN", "")

pytestmark = pytest.mark.skipif(
    not LAKECTL or not os.access(LAKECTL, os.X_OK), reason="set LAKECTL_BIN to a lakectl built from lakeFS's source"
)

Lakectl = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def lakectl(local_stack: LocalProcess, tmp_path: Path) -> Lakectl:
    env = {
        **os.environ,
        "HOME": str(tmp_path),
        "LAKECTL_SERVER_ENDPOINT_URL": local_stack.endpoint,
        "LAKECTL_CREDENTIALS_ACCESS_KEY_ID": local_stack.access_key_id,
        "LAKECTL_CREDENTIALS_SECRET_ACCESS_KEY": local_stack.secret_access_key,
        "LAKECTL_INTERACTIVE": "false",
    }

    def run(*args: str, code: int = 0) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [LAKECTL, *args], check=False, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120
        )
        assert done.returncode == code, (args, done.returncode, done.stdout, done.stderr)
        return done

    return run


def test_object_commands(lakectl: Lakectl, repo: lakefs.Repository, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_bytes(b"hello lakectl\n")
    uri = f"lakefs://{repo.id}/main"
    lakectl("fs", "upload", "-s", "a.txt", f"{uri}/a.txt")
    lakectl("fs", "update-metadata", f"{uri}/a.txt", "--metadata", "owner=me")
    assert repo.branch("main").object("a.txt").stat().metadata == {"owner": "me"}
    lakectl("commit", uri, "-m", "add a")
    stats = repo.branch("main").object("a.txt").stat()
    stage = ["--location", stats.physical_address, "--size", str(stats.size_bytes), "--checksum", stats.checksum]
    # lakectl refuses an address inside the namespace before it asks the server (lakeFS's server, like Lakelet's,
    # takes one: tests/api/test_stage_object.py); lakelet fs stage asks.
    refused = lakectl("fs", "stage", f"{uri}/copy.txt", *stage, code=1)
    assert "outside the repository's storage namespace" in refused.stderr + refused.stdout
    lakectl("fs", "cat", f"{uri}/missing.txt", code=1)


def test_auth_commands(lakectl: Lakectl, tmp_path: Path) -> None:
    suffix = uuid.uuid4().hex[:8]
    user, group, policy = f"bob-{suffix}", f"team-{suffix}", f"readers-{suffix}"
    statement = {"statement": [{"effect": "allow", "action": ["fs:ReadObject"], "resource": "*"}]}
    (tmp_path / "policy.json").write_text(json.dumps(statement))
    lakectl("auth", "users", "create", "--id", user)
    lakectl("auth", "groups", "create", "--id", group)
    lakectl("auth", "groups", "members", "add", "--id", group, "--user", user)
    lakectl("auth", "policies", "create", "--id", policy, "--statement-document", "policy.json")
    lakectl("auth", "users", "policies", "attach", "--id", user, "--policy", policy)
    lakectl("auth", "groups", "policies", "attach", "--id", group, "--policy", policy)
    assert user in lakectl("auth", "groups", "members", "list", "--id", group).stdout
    assert policy in lakectl("auth", "users", "policies", "list", "--id", user).stdout
    lakectl("auth", "users", "delete", "--id", user)
