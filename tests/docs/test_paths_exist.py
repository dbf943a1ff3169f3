"""Nothing points at files that moved: every repository path named in a comment or docstring of the code, in the
docs, the README, the Makefile and the deploy template exists.

A path counts when it starts with one of the repository's top-level folders (chalicelib/, lakelet/, emr/, ...) or,
inside chalicelib/, with one of its packages (graveler/, api/, ...), and ends with a file suffix; it may also be
named relative to the folder of the file that names it. Placeholders and globs (``<stage>``, ``NAME``, ``*``) are
not paths, and a few names of other repositories' files are listed with the reason.
"""

from __future__ import annotations

import ast
import io
import re
import subprocess
import tokenize
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TOP_LEVEL = ("chalicelib", "lakelet", "emr", "infra", "docs", "tests", "bench", "webui", "stepfunctions", ".ci")
# chalicelib's packages, which its own docstrings name without the chalicelib/ prefix.
CHALICELIB_PACKAGES = ("graveler", "api", "adapters", "s3proxy", "workflows", "gc", "auth")
SUFFIXES = ("py", "md", "json", "yaml", "yml", "toml", "txt", "mjs", "js", "css", "html", "sh", "go")
PATH = re.compile(
    r"(?<![\w./@:-])"  # not the tail of a longer path, a URL or a package@version
    rf"((?:{'|'.join(re.escape(p) for p in TOP_LEVEL + CHALICELIB_PACKAGES)})/[\w./-]*?\.(?:{'|'.join(SUFFIXES)}))"
    r"(?![\w/*<{-])"
)
# Paths that are not this repository's, named where they belong to another.
NOT_OURS = {
    "api/swagger.yml": "lakeFS's API contract, a file of lakeFS's repository",
    "docs/report.html": "an object's path in a repository a test creates",
}
# What a build writes (make webui), named before it exists on a fresh checkout.
BUILT = ("chalicelib/webui_dist/", "webui/node_modules/")
# A placeholder such as bench/NAME.py or build/STAGE/...: an all-capitals part.
PLACEHOLDER = re.compile(r"(^|/)[A-Z][A-Z_]*(\.|/|$)")
# Where the text of non-Python files is read whole.
TEXT_FILES = ("README.md", "Makefile", "pyproject.toml", "infra/lakelet.yaml", ".ci/run")


def tracked(*patterns: str) -> list[Path]:
    out = subprocess.run(["git", "ls-files", *patterns], cwd=ROOT, capture_output=True, text=True, check=True)
    return [ROOT / line for line in out.stdout.splitlines() if line and (ROOT / line).exists()]


def comments_and_docstrings(source: str) -> Iterator[tuple[int, str]]:
    """(line, text) of every comment and every docstring of a Python module."""
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            yield token.start[0], token.string
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            first = body[0] if body else None
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
            ):
                yield first.lineno, first.value.value


def texts(path: Path) -> Iterator[tuple[int, str]]:
    source = path.read_text(encoding="utf-8")
    if path.suffix == ".py":
        yield from comments_and_docstrings(source)
    else:
        yield 1, source


def resolves(name: str, named_in: Path) -> bool:
    candidates = [ROOT / name, ROOT / "chalicelib" / name]
    # Relative to the naming file's folder or any folder above it (a package naming its own modules).
    candidates += [folder / name for folder in named_in.parents if ROOT in folder.parents or folder == ROOT]
    return any(candidate.exists() for candidate in candidates)


def stale_paths() -> list[str]:
    files = tracked("*.py", "docs/*.md", "*.md") + [ROOT / name for name in TEXT_FILES if (ROOT / name).exists()]
    found: list[str] = []
    for path in sorted(set(files)):
        if "node_modules" in path.parts:
            continue
        for line, text in texts(path):
            for match in PATH.finditer(text):
                name = match.group(1).rstrip(".")
                if name in NOT_OURS or PLACEHOLDER.search(name) or name.startswith(BUILT):
                    continue
                if not resolves(name, path):
                    at = line + text.count("\n", 0, match.start())
                    found.append(f"{path.relative_to(ROOT)}:{at}: {name}")
    return found


def test_every_path_named_in_code_and_docs_exists() -> None:
    assert stale_paths() == []


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("see chalicelib/graveler/engine.py for", ["chalicelib/graveler/engine.py"]),
        ("(graveler/errors.py)", ["graveler/errors.py"]),
        ("docs/gc.md#packaging", ["docs/gc.md"]),
        ("https://github.com/x/y/blob/main/docs/a.md", []),
        ("s3://bucket/lakelet/<stage>/emr/gc_job.py", []),
        ("tests/**/*.py and emr/lakelet_gc/*.py", []),
        ("lakelet/<stage>/emr/", []),
    ],
)
def test_the_pattern_finds_paths_and_leaves_urls_and_globs(text: str, named: list[str]) -> None:
    assert [m.group(1) for m in PATH.finditer(text)] == named


def test_a_stale_path_is_reported() -> None:
    assert not resolves("chalicelib/graveler/no_such_module.py", ROOT / "chalicelib" / "wiring.py")
    assert resolves("committed/format.py", ROOT / "chalicelib" / "graveler" / "engine.py")
