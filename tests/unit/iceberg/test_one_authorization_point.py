"""Every object the catalog touches is authorized first, through its one authorization point, TableStore.may
(chalicelib/iceberg/store.py; issue 40, item 2): in every module of the catalog, a function or method that calls
one of the Graveler's object use cases (reads, stats, listings, writes, links, deletes) checks a permission with
``may`` (or the store's ``authorize``, for a listing) before its first such call."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

from chalicelib.iceberg import store

PACKAGE = Path(store.__file__).parent
OBJECT_CALLS = re.compile(
    r"\.(upload_object|upload_objects_if|read_object|stat_object|list_objects|delete_object|delete_objects"
    r"|delete_object_if|copy_object|link_object|stage_object)$"
)
CHECKS = re.compile(r"(^|\.)(may|authorize)$")


def _functions(tree: ast.Module) -> Iterator[ast.FunctionDef]:
    """Top-level functions and methods of top-level classes (a nested function counts with its outer one)."""
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            yield node
        elif isinstance(node, ast.ClassDef):
            yield from (n for n in node.body if isinstance(n, ast.FunctionDef))


def test_every_function_that_touches_objects_authorizes_first() -> None:
    reaching = 0
    for path in sorted(PACKAGE.glob("*.py")):
        for function in _functions(ast.parse(path.read_text())):
            calls = [(n.lineno, ast.unparse(n.func)) for n in ast.walk(function) if isinstance(n, ast.Call)]
            touches = [line for line, name in calls if OBJECT_CALLS.search(name)]
            if not touches:
                continue
            reaching += 1
            checks = [line for line, name in calls if CHECKS.search(name)]
            assert checks and min(checks) < min(touches), f"{path.name}: {function.name}"
    assert reaching >= 6  # the store's read, read_bytes, exists, write, write_all, delete, delete_all, children
