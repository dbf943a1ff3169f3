"""Dependencies point inward: graveler imports only the standard library (pyarrow only in its range format package,
``committed/``, whose range rewrites run as Arrow columns)."""

import ast
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
GRAVELER = ROOT / "chalicelib" / "graveler"
COMMITTED = GRAVELER / "committed"


def _imports(path):
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.module


def test_graveler_imports_only_the_standard_library():
    offenders = []
    files = sorted(GRAVELER.rglob("*.py"))
    assert len(files) > 10
    for path in files:
        for name in _imports(path):
            top = name.split(".")[0]
            if top in sys.stdlib_module_names:
                continue
            if top == "pyarrow" and COMMITTED in path.parents:
                continue
            offenders.append(f"{path.relative_to(ROOT)}: {name}")
    assert offenders == []


def test_drivers_only_in_adapters():
    offenders = []
    for path in sorted((ROOT / "chalicelib").rglob("*.py")):
        if "adapters" in path.parts or path.name == "wiring.py":
            continue
        for name in _imports(path):
            if name.split(".")[0] in {"boto3", "botocore", "pynamodb"}:
                offenders.append(f"{path.relative_to(ROOT)}: {name}")
    assert offenders == []
