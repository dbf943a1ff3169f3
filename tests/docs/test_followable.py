"""A page can be followed in order: every name a Python example uses is bound by that example or an earlier one of
the same page (skipped examples included: a reader runs them too), and the Spark page keeps its examples
re-runnable and says which Python Spark's workers use. The docs tier (test_snippets.py) runs the runnable
examples twice; this check covers the examples it cannot run (Spark, deployed AWS)."""

from __future__ import annotations

import ast
import builtins
import re
from pathlib import Path

import pytest

from tests.docs.snippets import PYTHON, doc_pages, extract

PROJECT_DIR = Path(__file__).resolve().parents[2]
PAGES = doc_pages(PROJECT_DIR)


def _bound(tree: ast.AST) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            names.update(node.names)
    return names


def unbound_names(page: Path) -> list[str]:
    """``path:line: name`` for each name a Python example of ``page`` loads that nothing up to it binds."""
    known = set(dir(builtins))
    problems: list[str] = []
    for snippet in extract(page, page.relative_to(PROJECT_DIR)):
        if snippet.language not in PYTHON:
            continue
        try:
            tree = ast.parse(snippet.code)
        except SyntaxError as e:
            problems.append(f"{snippet.where}: does not parse ({e.msg})")
            continue
        known |= _bound(tree)
        loaded = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        problems.extend(f"{snippet.where}: {name}" for name in sorted(loaded - known))
    return problems


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(PROJECT_DIR)) for p in PAGES])
def test_every_name_an_example_uses_is_bound_before(page: Path) -> None:
    assert unbound_names(page) == []


def test_the_check_sees_a_name_no_example_binds(tmp_path: Path) -> None:
    page = PROJECT_DIR / "docs" / "followable-check.md"
    page.write_text("```python\nimport lakefs\n```\n\n```python\nframe.write.parquet(lakefs.x)\n```\n")
    try:
        assert unbound_names(page) == ["docs/followable-check.md:6: frame"]
    finally:
        page.unlink()


def test_the_spark_page_runs_in_order_and_again() -> None:
    text = (PROJECT_DIR / "docs" / "spark.md").read_text(encoding="utf-8")
    examples = [
        s.code for s in extract(PROJECT_DIR / "docs" / "spark.md", Path("docs/spark.md")) if s.language in PYTHON
    ]
    assert "PYSPARK_PYTHON" in text and ".venv/bin/activate" in text
    code = "\n".join(examples)
    # Nothing is written on main, which a later example merges into: a merge into a dirty branch is refused.
    assert not re.search(r"\.(parquet|save|csv|json)\(\s*f?[\"']s3a://quickstart/main/", code)
    # A second run finds its branches made and its output written: both are taken as they are.
    assert all("exist_ok=True" in call for call in re.findall(r"\.create\([^)]*\)", code))
    writes = re.findall(r"\.write\.[^\n]*", code)
    assert len(writes) >= 3 and all(".mode(" in w for w in writes), writes
    creates = re.findall(r"CREATE TABLE[^\n]*", code)
    assert creates and all("IF NOT EXISTS" in c for c in creates), creates
