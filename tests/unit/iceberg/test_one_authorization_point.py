"""The catalog touches objects only through TableStore (chalicelib/iceberg/store.py), whose every object method
authorizes the caller first (issue 40, item 2): no other module of the catalog calls the Graveler's object use
cases, and every TableStore method that reaches them checks a permission before it does."""

from __future__ import annotations

import ast
import inspect
import re
from pathlib import Path

from chalicelib.iceberg import store

PACKAGE = Path(store.__file__).parent
OBJECT_CALLS = re.compile(
    r"\.(upload_object|upload_objects_if|read_object|stat_object|list_objects|delete_object|delete_objects"
    r"|delete_object_if|copy_object|link_object|stage_object)\("
)


def test_no_module_but_the_store_calls_the_graveler_on_objects() -> None:
    offenders = [
        f"{path.name}: {match.group(0)}"
        for path in sorted(PACKAGE.glob("*.py"))
        if path.name != "store.py"
        for match in OBJECT_CALLS.finditer(path.read_text())
    ]
    assert offenders == []


def test_every_store_method_that_reaches_objects_authorizes_first() -> None:
    tree = ast.parse(inspect.getsource(store.TableStore))
    methods = [node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)]
    reaching = [m for m in methods if OBJECT_CALLS.search(ast.unparse(m))]
    assert len(reaching) >= 6
    for method in reaching:
        calls = [(node.lineno, ast.unparse(node.func)) for node in ast.walk(method) if isinstance(node, ast.Call)]
        checks = [line for line, name in calls if name in ("self.may", "self.authorize")]
        touches = [line for line, name in calls if OBJECT_CALLS.search(name + "(")]
        assert checks and min(checks) < min(touches), method.name
