"""The CLI starts like a native tool: ``lakelet --help`` and ``lakelet repo list`` import a bounded number of
modules, and never lakeFS's SDK (pydantic models for the whole API), pydantic, urllib3, rich or PyYAML; an API
call imports neither http.client nor the email package nor ssl, and a command no other command group.

Counts, never times: each command runs in a subprocess under ``python -X importtime``, which prints one line
per module imported. ``repo list`` talks to a stub lakeFS server in this process (one page of repositories,
basic auth checked), so what is counted is a real round trip through the CLI's HTTP client.

Budgets, measured on this tree (Python 3.12, typer 0.29.1): ``--help`` imports 212 modules the first time (the
whole command tree; 358 before the CLI's own client and its lazy imports), ``repo list`` 175 (603 with
lakefs_sdk and pydantic; 225 while it still built the whole tree and imported http.client). The help budget
leaves some 10% for the standard library and typer moving a little; repo list's about 6%, below the 225 it was.
"""

import base64
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.e2e.conftest import PROJECT_DIR

HELP_BUDGET = 230
# A help screen printed before comes from lakelet/help_cache.py without typer: 77 modules measured.
CACHED_HELP_BUDGET = 95
REPO_LIST_BUDGET = 185
NEVER = (
    "lakefs_sdk",
    "lakefs",
    "pydantic",
    "pydantic_core",
    "urllib3",
    "rich",
    "yaml",
    "requests",
    "boto3",
    "botocore",
    "moto",
    "chalice",
)
# An API call to an http:// server: lakelet/commands/wire.py speaks it over a socket, without http.client (which
# brings the email package's parser and ssl).
NEVER_FOR_A_CALL = (*NEVER, "http", "email", "ssl")
KEY, SECRET = "AKIASTARTUPTEST", "startup-secret"
REPOS = [
    {"id": "alpha", "creation_date": 1700000000, "default_branch": "main", "storage_namespace": "s3://b/alpha"},
    {"id": "beta", "creation_date": 1700000100, "default_branch": "trunk", "storage_namespace": "s3://b/beta"},
]


class _Stub(BaseHTTPRequestHandler):
    """GET /api/v1/repositories: two repositories over two pages, for a caller with the right basic auth."""

    def do_GET(self) -> None:
        expected = "Basic " + base64.b64encode(f"{KEY}:{SECRET}".encode()).decode()
        if self.headers.get("Authorization") != expected:
            self._answer(401, {"message": "authentication required"})
        elif self.path.startswith("/api/v1/repositories?"):
            after = self.path.partition("after=")[2].partition("&")[0]
            page = [r for r in REPOS if r["id"] > after][:1]
            more = bool(page) and page[0]["id"] != REPOS[-1]["id"]
            self._answer(
                200,
                {
                    "results": page,
                    "pagination": {
                        "has_more": more,
                        "next_offset": page[0]["id"] if page else "",
                        "results": len(page),
                        "max_per_page": 1000,
                    },
                },
            )
        else:
            self._answer(404, {"message": "not found"})

    def _answer(self, status: int, body: object) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def stub() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Stub)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _imports(
    args: list[str], tmp_path: Path, env: dict[str, str] | None = None
) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    """Run ``python -X importtime -m lakelet ARGS`` (stdout piped, as in a script); the modules it imported."""
    full_env = {k: v for k, v in os.environ.items() if not k.startswith(("LAKECTL_", "LAKELET_"))}
    full_env.update(
        {"PYTHONPATH": str(PROJECT_DIR), "HOME": str(tmp_path), "LAKELET_DATA_DIR": str(tmp_path / "no"), **(env or {})}
    )
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "lakelet", *args],
        env=full_env,
        text=True,
        capture_output=True,
        timeout=60,
        cwd=tmp_path,
        check=False,
    )
    lines = [line for line in done.stderr.splitlines() if line.startswith("import time:")]
    modules = [line.split("|")[-1].strip() for line in lines[1:]]  # the first line is the header
    return done, modules


def _assert_light(modules: list[str], budget: int, never: tuple[str, ...] = NEVER_FOR_A_CALL) -> None:
    heavy = sorted({m for m in modules if m.split(".")[0] in never})
    assert not heavy, heavy
    assert len(modules) <= budget, (len(modules), budget)


def test_help_imports_few_modules(tmp_path: Path) -> None:
    done, modules = _imports(["--help"], tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "repo" in done.stdout and "Commands" in done.stdout
    _assert_light(modules, HELP_BUDGET, NEVER)


def test_a_help_screen_printed_before_is_printed_again_without_typer(tmp_path: Path) -> None:
    for args in (["--help"], ["repo", "--help"], ["branch", "create", "-h"]):
        first, rendered = _imports(args, tmp_path)
        again, modules = _imports(args, tmp_path)
        assert first.returncode == again.returncode == 0, (first.stderr[-2000:], again.stderr[-2000:])
        assert "typer" in rendered
        assert again.stdout == first.stdout and again.stdout.startswith("Usage: lakelet ")
        assert not [m for m in modules if m.split(".")[0] in ("typer", "click", *NEVER)], modules
        assert len(modules) <= CACHED_HELP_BUDGET, (args, len(modules))
    # Another width is another screen, rendered by typer and then kept too.
    narrow, modules = _imports(["--help"], tmp_path, {"COLUMNS": "60"})
    assert "typer" in modules and narrow.stdout != first.stdout
    assert max(len(line) for line in narrow.stdout.splitlines()) <= 60
    assert len(list((tmp_path / ".cache" / "lakelet" / "help").glob("*.txt"))) == 4


def test_errors_and_commands_are_never_cached(tmp_path: Path) -> None:
    bad, _ = _imports(["no-such-command", "--help"], tmp_path)
    assert bad.returncode == 2
    listing, _ = _imports(["repo", "list", "--json"], tmp_path, {"LAKECTL_SERVER_ENDPOINT_URL": "http://127.0.0.1:9"})
    assert listing.returncode != 0
    assert not list((tmp_path / ".cache").rglob("*.txt"))


def test_repo_list_imports_few_modules(tmp_path: Path, stub: str) -> None:
    env = {
        "LAKECTL_SERVER_ENDPOINT_URL": stub,
        "LAKECTL_CREDENTIALS_ACCESS_KEY_ID": KEY,
        "LAKECTL_CREDENTIALS_SECRET_ACCESS_KEY": SECRET,
    }
    done, modules = _imports(["repo", "list"], tmp_path, env)
    assert done.returncode == 0, done.stderr[-2000:]
    rows = done.stdout.splitlines()
    assert rows[0].split() == ["REPOSITORY", "CREATION", "DATE", "DEFAULT", "REF", "NAME", "STORAGE", "NAMESPACE"]
    assert [r.split()[0] for r in rows[1:]] == ["alpha", "beta"]  # both pages followed
    assert "2023-11-14 22:13:20 UTC" in rows[1] and rows[2].split()[-2:] == ["trunk", "s3://b/beta"]
    _assert_light(modules, REPO_LIST_BUDGET)


def test_repo_list_json_and_errors_import_few_modules(tmp_path: Path, stub: str) -> None:
    env = {
        "LAKECTL_SERVER_ENDPOINT_URL": stub,
        "LAKECTL_CREDENTIALS_ACCESS_KEY_ID": KEY,
        "LAKECTL_CREDENTIALS_SECRET_ACCESS_KEY": SECRET,
    }
    done, modules = _imports(["repo", "list", "--json"], tmp_path, env)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout) == REPOS
    _assert_light(modules, REPO_LIST_BUDGET)
    refused, modules = _imports(["repo", "list"], tmp_path, {**env, "LAKECTL_CREDENTIALS_SECRET_ACCESS_KEY": "bad"})
    assert refused.returncode == 1
    said = [line for line in refused.stderr.splitlines() if not line.startswith("import time:")]
    assert said == [
        (
            "error: list repositories failed (401 authentication required): check the access key id and "
            "secret ('lakelet doctor')"
        )
    ]
    _assert_light(modules, REPO_LIST_BUDGET)


def test_values_that_need_converting_still_get_typers_checks(tmp_path: Path, stub: str) -> None:
    # Strings and absent values skip typer's pydantic coercion; numbers still go through it, with its messages.
    env = {
        "LAKECTL_SERVER_ENDPOINT_URL": stub,
        "LAKECTL_CREDENTIALS_ACCESS_KEY_ID": KEY,
        "LAKECTL_CREDENTIALS_SECRET_ACCESS_KEY": SECRET,
    }
    one, modules = _imports(["repo", "list", "--amount", "1", "--json"], tmp_path, env)
    assert one.returncode == 0 and [r["id"] for r in json.loads(one.stdout)] == ["alpha"]
    assert "pydantic" in modules  # the int was converted by typer's own adapter
    for value, message in (
        ("0", "Input should be greater than or equal to 1"),
        ("x", "Input should be a valid integer, unable to parse string as an integer"),
    ):
        bad, _ = _imports(["repo", "list", "--amount", value], tmp_path, env)
        said = [line for line in bad.stderr.splitlines() if not line.startswith("import time:")]
        assert bad.returncode == 2 and said[-1] == f"Error: Invalid value for '--amount': {message}", said


def test_repository_name_checked_before_sending(tmp_path: Path, stub: str) -> None:
    # lakeFS's naming rule, as the SDK's model checked it: nothing reaches the server (the stub would answer 404).
    env = {
        "LAKECTL_SERVER_ENDPOINT_URL": stub,
        "LAKECTL_CREDENTIALS_ACCESS_KEY_ID": KEY,
        "LAKECTL_CREDENTIALS_SECRET_ACCESS_KEY": SECRET,
    }
    bad, modules = _imports(["repo", "create", "lakefs://X_bad", "s3://bucket/x"], tmp_path, env)
    said = [line for line in bad.stderr.splitlines() if not line.startswith("import time:")]
    assert bad.returncode == 1 and said == [
        (
            "error: invalid value: \"repository name 'X_bad' must match /^[a-z0-9][a-z0-9-]{2,62}$/\": check the "
            "names in the command (lakeFS naming rules)"
        )
    ]
    namespace, _ = _imports(["repo", "create", "lakefs://good-name", "ftp://bucket/x"], tmp_path, env)
    assert namespace.returncode == 1 and "storage namespace 'ftp://bucket/x' must match" in namespace.stderr
    _assert_light(modules, REPO_LIST_BUDGET)


# Each command module of lakelet/commands/ that ``repo list`` has no use for, and the stack's commands.
OTHER_GROUPS = (
    "lakelet.commands.branch",
    "lakelet.commands.tag",
    "lakelet.commands.commit",
    "lakelet.commands.diff",
    "lakelet.commands.merge",
    "lakelet.commands.imports",
    "lakelet.commands.fs",
    "lakelet.commands.transfer",
    "lakelet.commands.upload",
    "lakelet.commands.download",
    "lakelet.commands.localdir",
    "lakelet.commands.gc",
    "lakelet.commands.actions",
    "lakelet.commands.auth",
    "lakelet.commands.doctor",
    "lakelet.stack.cli",
    "lakelet.stack.export_cli",
)


def test_a_command_imports_only_its_own_group(tmp_path: Path, stub: str) -> None:
    env = {
        "LAKECTL_SERVER_ENDPOINT_URL": stub,
        "LAKECTL_CREDENTIALS_ACCESS_KEY_ID": KEY,
        "LAKECTL_CREDENTIALS_SECRET_ACCESS_KEY": SECRET,
    }
    config = tmp_path / "lakectl.yaml"
    config.write_text(f"server:\n  endpoint_url: {stub}\n")
    for args in (["repo", "list"], ["--json", "-c", str(config), "repo", "list"]):
        done, modules = _imports(args, tmp_path, env)
        assert done.returncode == 0, done.stderr[-2000:]
        assert "lakelet.commands.repo" in modules
        assert not [m for m in modules if m in OTHER_GROUPS], modules
