"""Dependencies point inward: graveler imports only the standard library (pyarrow only in its range format package,
``committed/``, whose range rewrites run as Arrow columns, and cachetools only in ``storage/caches.py``); drivers
only in adapters; the API, the workflows and GC import no adapter; nothing outside graveler imports
``graveler.committed``; adapters import only the ports they implement. Relative imports are read too, resolved
against the importing module's package.
"""

from __future__ import annotations

import ast
import pathlib
import sys
from collections.abc import Iterator

ROOT = pathlib.Path(__file__).resolve().parents[2]
CHALICELIB = ROOT / "chalicelib"
GRAVELER = CHALICELIB / "graveler"
COMMITTED = GRAVELER / "committed"
# Ports that sit above their adapters, named so that no other module can grow the same way: GC's JobStarter
# (implemented by adapters/emr.py and its memory twin). The S3 gateway's Signer is auth's (auth/ports.py).
PORTS_ABOVE_ADAPTERS = {"chalicelib.gc.ports", "chalicelib.iceberg.ports", "chalicelib.usage.ports"}


def _module(path: pathlib.Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: pathlib.Path) -> Iterator[str]:
    """Every module the file imports, relative imports resolved to absolute names (``from . import x`` in
    package p gives ``p.x``: it may name a module)."""
    module = _module(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                base = node.module or ""
            else:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join(anchor + ([node.module] if node.module else []))
            yield base
            yield from (f"{base}.{alias.name}" for alias in node.names if alias.name != "*")


def _files(*roots: pathlib.Path) -> list[pathlib.Path]:
    found = [p for root in roots for p in ([root] if root.is_file() else sorted(root.rglob("*.py")))]
    assert found, roots
    return found


def _under(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def test_relative_imports_are_resolved() -> None:
    names = set(imports(GRAVELER / "usecases" / "commits.py"))
    assert "chalicelib.graveler.errors" in names and "chalicelib.graveler.commit" in names
    assert "chalicelib.graveler.committed.merge" in set(imports(GRAVELER / "merge" / "steps.py"))


def test_graveler_imports_only_the_standard_library() -> None:
    offenders = []
    for path in _files(GRAVELER):
        for name in imports(path):
            top = name.split(".")[0]
            if top in sys.stdlib_module_names or _under(name, "chalicelib.graveler"):
                continue
            if top == "pyarrow" and COMMITTED in path.parents:
                continue
            if top == "cachetools" and path == GRAVELER / "storage" / "caches.py":
                continue
            offenders.append(f"{path.relative_to(ROOT)}: {name}")
    assert offenders == []


def test_drivers_only_in_adapters() -> None:
    offenders = []
    for path in _files(CHALICELIB):
        if "adapters" in path.parts or path.name == "wiring.py":
            continue
        for name in imports(path):
            if name.split(".")[0] in {"boto3", "botocore", "pynamodb"}:
                offenders.append(f"{path.relative_to(ROOT)}: {name}")
    assert offenders == []


def test_api_workflows_and_gc_import_no_adapters() -> None:
    offenders = [
        f"{path.relative_to(ROOT)}: {name}"
        for path in _files(CHALICELIB / "api", CHALICELIB / "workflows", CHALICELIB / "gc")
        for name in imports(path)
        if _under(name, "chalicelib.adapters")
    ]
    assert offenders == []


def test_nothing_outside_graveler_imports_its_committed_package() -> None:
    offenders = [
        f"{path.relative_to(ROOT)}: {name}"
        for path in [*_files(CHALICELIB), ROOT / "app.py"]
        if GRAVELER not in path.parents
        for name in imports(path)
        if _under(name, "chalicelib.graveler.committed")
    ]
    assert offenders == []


def test_adapters_import_only_ports_records_and_errors_of_the_core() -> None:
    """An adapter implements a port: it may import graveler and auth (their ports, records and errors) and the
    ports named in PORTS_ABOVE_ADAPTERS; never the API, the gateway, the workflows, GC's logic or wiring."""
    offenders = []
    for path in _files(CHALICELIB / "adapters"):
        for name in imports(path):
            if not _under(name, "chalicelib") or _under(name, "chalicelib.adapters"):
                continue
            if _under(name, "chalicelib.graveler") or _under(name, "chalicelib.auth"):
                continue
            if any(_under(name, port) for port in PORTS_ABOVE_ADAPTERS) or name == "chalicelib.gc":
                continue
            offenders.append(f"{path.relative_to(ROOT)}: {name}")
    assert offenders == []


# The faces: what answers requests (the API's routes, the S3 gateway, the web UI) or runs as a workflow's handler.
FACES = ("chalicelib.api", "chalicelib.s3proxy", "chalicelib.workflows", "chalicelib.webui", "app")


def test_assembly_knows_no_faces() -> None:
    """wiring.py builds the services; each face assembles itself from them (``S3Gateway.from_services``), so
    no import of wiring's, TYPE_CHECKING ones included, reaches a face: no exception."""
    offenders = [name for name in imports(CHALICELIB / "wiring.py") if any(_under(name, face) for face in FACES)]
    assert offenders == []


def test_a_face_in_wiring_is_found(tmp_path: pathlib.Path) -> None:
    sample = CHALICELIB / "_wiring_probe.py"
    sample.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .s3proxy import S3Gateway\n")
    try:
        names = set(imports(sample))
    finally:
        sample.unlink()
    assert any(_under(name, "chalicelib.s3proxy") for name in names)


# The engine's stores (engine.ports.<store>): only graveler (and wiring and the adapters, which build them) may touch
# them. Code above graveler uses the engine's use cases (engine.repositories.namespace_files, engine.collection, ...).
STORE_ATTRIBUTES = {"blocks", "refs", "staging", "committed"}
ABOVE_GRAVELER = ("api", "s3proxy", "gc", "workflows")
# Attributes of these names that are no store of the engine, each with its reason (file, attribute): none today.
STORE_ATTRIBUTE_EXCEPTIONS: set[tuple[str, str]] = set()


def store_accesses(path: pathlib.Path) -> Iterator[str]:
    """``<line>: .<attribute>`` for every attribute access named like one of the engine's stores."""
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Attribute) and node.attr in STORE_ATTRIBUTES:
            yield f"{node.lineno}: .{node.attr}"


def test_store_accesses_are_found(tmp_path: pathlib.Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text("x = services().engine.ports.blocks.presign_get(a, 1)\ny = ctx.engine.ports.refs\nz = blocks\n")
    assert sorted(store_accesses(sample)) == ["1: .blocks", "2: .refs"]


def test_nothing_above_graveler_touches_its_stores() -> None:
    offenders = [
        f"{path.relative_to(ROOT)}:{access}"
        for path in _files(*(CHALICELIB / package for package in ABOVE_GRAVELER))
        for access in store_accesses(path)
        if (str(path.relative_to(ROOT)), access.split(".")[-1]) not in STORE_ATTRIBUTE_EXCEPTIONS
    ]
    assert offenders == []


LAKELET = ROOT / "lakelet"
# The stack's state file is how the CLI finds a running stack: a JSON file, read with the standard library only.
STATE_FILE = "lakelet.stack.statefile"
# `lakelet actions validate` checks an action file with the server's own parser, so both accept the same files:
# graveler's actions package, which imports only the standard library (test above), and nothing else of chalicelib.
ACTIONS_PARSER = "chalicelib.graveler.actions"
# ... and the server's bounded YAML decoder of action files (PyYAML and the bounds of graveler's actions only).
ACTIONS_DECODER = "chalicelib.adapters.action_yaml"


def _lakelet_offenders(folder: str, forbidden: tuple[str, ...], allowed: tuple[str, ...] = ()) -> list[str]:
    return [
        f"{path.relative_to(ROOT)}: {name}"
        for path in _files(LAKELET / folder)
        for name in imports(path)
        if not any(_under(name, a) for a in allowed) and any(_under(name, f) for f in forbidden)
    ]


def test_the_cli_commands_talk_http_only() -> None:
    """lakelet/commands/ is what `pip install lakelet` gives without the [local] extra: HTTP to a server, the
    running stack's state file to find one, and the pure action-file parser."""
    forbidden = (
        "chalicelib",
        "app",
        "moto",
        "chalice",
        "boto3",
        "botocore",
        "pynamodb",
        "pyspark",
        "lakelet.stack",
        "lakelet.persistence",
        "lakelet.cli",
    )
    assert _lakelet_offenders("commands", forbidden, allowed=(STATE_FILE, ACTIONS_PARSER, ACTIONS_DECODER)) == []


def test_the_data_directory_imports_no_chalicelib_nor_the_cli() -> None:
    forbidden = ("chalicelib", "app", "lakelet.commands", "lakelet.cli", "lakelet.stack")
    assert _lakelet_offenders("persistence", forbidden) == []


def test_the_state_file_imports_only_the_standard_library() -> None:
    path = LAKELET / "stack" / "statefile.py"
    assert [n for n in imports(path) if n.split(".")[0] not in sys.stdlib_module_names] == []
