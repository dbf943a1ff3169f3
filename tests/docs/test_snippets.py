"""Every example of the README and of docs/ runs against one fresh ``lakelet up`` (docs/README.md, "The
examples"): Python blocks must not raise, shell blocks must exit 0. A page's blocks run in order, in one
Python namespace and one shell state (working directory and exported variables) per page, so a later block may
use what an earlier one made. Then the page runs again, in order, in the same folder with a fresh namespace and
shell, as a reader who follows it a second time would: a page whose first run leaves something in the way of its
own steps (a branch that exists, a dirty main) fails there. A failure names the run, the page and the line of the
block (and, for Python, of the statement: tracebacks carry the Markdown's own line numbers)."""

from __future__ import annotations

import contextlib
import io
import os
import shlex
import stat
import subprocess
import sys
import traceback
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.docs.snippets import PYTHON, SHELL, Snippet, console_commands, doc_pages, extract, rewrite
from tests.e2e.conftest import PROJECT_DIR, LocalProcess, launch_local
from tests.e2e.s3support import s3_endpoint

pytestmark = pytest.mark.e2e

SHELL_TIMEOUT_SECONDS = 180
PAGES = doc_pages(PROJECT_DIR)


@dataclass(frozen=True)
class DocStack:
    local: LocalProcess
    data_dir: Path
    bin_dir: Path

    @property
    def api_hostport(self) -> str:
        return urlsplit(self.local.endpoint).netloc

    @property
    def s3_hostport(self) -> str:
        return urlsplit(s3_endpoint(self.local)).netloc


@pytest.fixture(scope="module")
def doc_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DocStack]:
    """One stack for every page, with the quickstart repository the docs use, and ``lakelet`` / ``aws`` commands
    that run this tree's code with the test's Python."""
    root = tmp_path_factory.mktemp("docs-stack")
    data_dir = root / "data"
    local = launch_local(root, "--sample-data", "--data-dir", str(data_dir))
    bin_dir = root / "bin"
    bin_dir.mkdir()
    for name, module in (("lakelet", "lakelet"), ("aws", "awscli")):
        script = bin_dir / name
        script.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -m {module} "$@"\n')
        script.chmod(script.stat().st_mode | stat.S_IXUSR)
    try:
        yield DocStack(local, data_dir, bin_dir)
    finally:
        code = local.stop()
    assert code == 0, f"lakelet up exited with {code}:\n{local.stderr_tail()}"


def _shell_env(stack: DocStack, home: Path) -> dict[str, str]:
    # Nothing of the developer's (AWS or lakectl settings, config files) may help or hinder a snippet.
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("AWS_", "LAKECTL_", "LAKELET_")) and name != "HOME"
    }
    env.update(
        PATH=f"{stack.bin_dir}{os.pathsep}{env.get('PATH', '')}",
        HOME=str(home),
        PYTHONPATH=str(PROJECT_DIR),
        LAKELET_DATA_DIR=str(stack.data_dir),
        AWS_CONFIG_FILE=str(home / "no-aws-config"),
        AWS_SHARED_CREDENTIALS_FILE=str(home / "no-aws-credentials"),
    )
    return env


RUNS = 2  # each page in order, then once more


def _run_shell(snippet: Snippet, code: str, stack: DocStack, workdir: Path, state: Path, run: str) -> None:
    offset = snippet.line - 2  # the prelude is one line; a failure reports the Markdown's line
    prelude = (
        f"set -eo pipefail; [ -f {shlex.quote(str(state))} ] && source {shlex.quote(str(state))}; "
        f"trap 'rc=$?; echo \"{snippet.path}:$((LINENO + {offset})): exit $rc: $BASH_COMMAND\" >&2' ERR\n"
    )
    epilogue = f'\nexport -p > {shlex.quote(str(state))}; echo "cd $(printf %q "$PWD")" >> {shlex.quote(str(state))}\n'
    result = subprocess.run(
        ["bash", "-c", prelude + code + epilogue],
        cwd=workdir,
        env=_shell_env(stack, workdir),
        capture_output=True,
        text=True,
        timeout=SHELL_TIMEOUT_SECONDS,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    if result.returncode != 0:
        pytest.fail(
            f"{run}shell snippet at {snippet.where} exited with {result.returncode}:\n"
            f"--- stdout\n{result.stdout[-4000:]}\n--- stderr\n{result.stderr[-4000:]}",
            pytrace=False,
        )


@contextlib.contextmanager
def _isolated_process_state(workdir: Path) -> Iterator[None]:
    """A Python snippet may chdir or set environment variables (the docs show Client() reading them); the rest
    of the test process must not see either."""
    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    for name in [n for n in os.environ if n.startswith(("LAKECTL_", "LAKELET_"))]:
        del os.environ[name]
    os.chdir(workdir)
    try:
        yield
    finally:
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)


def _run_python(snippet: Snippet, code: str, namespace: dict[str, object], workdir: Path, run: str) -> None:
    # Padding puts every statement on its Markdown line, so a traceback names the page's own line.
    compiled = compile("\n" * (snippet.line - 1) + code, str(snippet.path), "exec")
    output = io.StringIO()
    with _isolated_process_state(workdir), contextlib.redirect_stdout(output):
        try:
            exec(compiled, namespace)
        except BaseException:
            pytest.fail(
                f"{run}Python snippet at {snippet.where} raised:\n{traceback.format_exc()}\n"
                f"--- its output\n{output.getvalue()[-4000:]}",
                pytrace=False,
            )


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(PROJECT_DIR)) for p in PAGES])
def test_page_snippets_run(page: Path, doc_stack: DocStack, tmp_path: Path) -> None:
    snippets = [s for s in extract(page, page.relative_to(PROJECT_DIR)) if s.runs]
    for number in range(1, RUNS + 1):
        run = f"(run {number} of {RUNS}) "
        namespace: dict[str, object] = {"__name__": "__docs__"}
        state = tmp_path / f"shell-state-{number}.sh"
        for snippet in snippets:
            code = rewrite(snippet.code, doc_stack.api_hostport, doc_stack.s3_hostport)
            if snippet.language in PYTHON:
                _run_python(snippet, code, namespace, tmp_path, run)
            elif snippet.language in SHELL:
                _run_shell(snippet, code, doc_stack, tmp_path, state, run)
            else:
                _run_shell(snippet, console_commands(code), doc_stack, tmp_path, state, run)


def test_the_quickstart_try_it_runs_after_every_page(doc_stack: DocStack, tmp_path: Path) -> None:
    """Defined after the pages' test, so it runs after all of them: the pages must leave the quickstart repository
    as its own README's "Try it" expects (main with no uncommitted changes, its data as created)."""
    import base64
    import urllib.request

    local = doc_stack.local
    request = urllib.request.Request(f"{local.api_url}/repositories/quickstart/refs/main/objects?path=README.md")
    token = base64.b64encode(f"{local.access_key_id}:{local.secret_access_key}".encode()).decode()
    request.add_header("Authorization", f"Basic {token}")
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(request, timeout=30) as response:
        readme = tmp_path / "quickstart-README.md"
        readme.write_bytes(response.read())
    blocks = [s for s in extract(readme, Path("quickstart/main/README.md")) if s.runs and s.language in PYTHON]
    assert blocks, "the quickstart README has no Python example"
    env = _shell_env(doc_stack, tmp_path)
    env.update(
        LAKECTL_SERVER_ENDPOINT_URL=local.endpoint,
        LAKECTL_CREDENTIALS_ACCESS_KEY_ID=local.access_key_id,
        LAKECTL_CREDENTIALS_SECRET_ACCESS_KEY=local.secret_access_key,
    )
    for block in blocks:
        result = subprocess.run(
            [sys.executable, "-c", block.code],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=SHELL_TIMEOUT_SECONDS,
            check=False,
        )
        assert result.returncode == 0, (
            f"the quickstart's Try it failed:\n{result.stdout[-2000:]}\n{result.stderr[-4000:]}"
        )
