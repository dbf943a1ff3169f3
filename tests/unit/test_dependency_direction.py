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


LAKELET = ROOT / "lakelet"
# The stack's state file is how the CLI finds a running stack: a JSON file, read with the standard library only.
STATE_FILE = "lakelet.stack.statefile"


def _lakelet_offenders(folder: str, forbidden: tuple[str, ...], allowed: tuple[str, ...] = ()) -> list[str]:
    offenders = []
    files = sorted((LAKELET / folder).rglob("*.py"))
    assert files
    for path in files:
        for name in _imports(path):
            if name in allowed:
                continue
            if any(name == f or name.startswith(f + ".") for f in forbidden):
                offenders.append(f"{path.relative_to(ROOT)}: {name}")
    return offenders


def test_the_cli_commands_talk_http_only():
    forbidden = ("chalicelib", "app", "moto", "chalice", "boto3", "botocore", "pynamodb", "pyspark",
                 "lakelet.stack", "lakelet.persistence", "lakelet.cli")
    assert _lakelet_offenders("commands", forbidden, allowed=(STATE_FILE,)) == []


def test_the_data_directory_imports_no_chalicelib_nor_the_cli():
    assert _lakelet_offenders("persistence", ("chalicelib", "app", "lakelet.commands", "lakelet.cli")) == []


def test_the_state_file_imports_only_the_standard_library():
    path = LAKELET / "stack" / "statefile.py"
    assert [n for n in _imports(path) if n.split(".")[0] not in sys.stdlib_module_names] == []
