"""No import cycle anywhere in the checkout (the shipped packages, infra/, bench/, the tests and app.py): every
import counts, those under ``TYPE_CHECKING`` and those inside a function included (a deferred import is how a
cycle hides, not how it goes away). A module that imports another which (through any chain) imports it back is
one knot: neither can be read, tested or moved alone.
"""

from __future__ import annotations

import ast
import pathlib
from collections.abc import Iterator

ROOT = pathlib.Path(__file__).resolve().parents[2]
# Every top-level folder and module of the checkout that holds Python (tests/test_* modules import nothing of each
# other, but their support modules and conftests do).
PACKAGES = ("app.py", "bench", "chalicelib", "emr", "infra", "lakelet", "tests")


def _module(path: pathlib.Path, root: pathlib.Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported(path: pathlib.Path, module: str) -> Iterator[str]:
    """Every name the file imports, relative ones resolved (``from . import x`` in package p gives p.x)."""
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
            # ``from p import x`` needs p.x when x is a module, p itself otherwise (import_graph tells which).
            yield from (f"{base}.{alias.name}" if alias.name != "*" else base for alias in node.names)


def import_graph(root: pathlib.Path, packages: tuple[str, ...]) -> dict[str, set[str]]:
    """Module -> the modules of ``packages`` it imports (a name that is not a module, such as a class imported from
    one, counts as that module)."""
    files = {
        _module(p, root): p
        for package in packages
        for p in ([root / package] if package.endswith(".py") else sorted((root / package).rglob("*.py")))
    }
    graph: dict[str, set[str]] = {}
    for module, path in files.items():
        targets = set()
        for imported in _imported(path, module):
            name = imported
            while name and name not in files:
                name = name.rpartition(".")[0]
            if name and name != module:
                targets.add(name)
        graph[module] = targets
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_import_cycle() -> None:
    assert cycles(import_graph(ROOT, PACKAGES)) == []


def test_every_folder_of_python_is_covered() -> None:
    """A folder of Python added to the checkout is added here too, or its cycles go unseen (the web UI's folder
    holds JavaScript and its node_modules)."""
    holding = {p.name for p in ROOT.glob("*.py")}
    for folder in ROOT.iterdir():
        wanted = folder.is_dir() and not folder.name.startswith(".") and folder.name != "webui"
        if wanted and next(folder.rglob("*.py"), None) is not None:
            holding.add(folder.name)
    assert holding <= set(PACKAGES)


def test_a_cycle_is_found(tmp_path: pathlib.Path) -> None:
    """The check bites: a TYPE_CHECKING import back, and a deferred one, each close a cycle; a package importing
    its own submodule and a plain chain do not."""
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("from . import leaf\n")
    (package / "leaf.py").write_text("X = 1\n")
    (package / "facade.py").write_text("from .use_case import UseCase\n")
    (package / "use_case.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .facade import Facade\n"
    )
    (package / "a.py").write_text("def f():\n    from pkg import b\n")
    (package / "b.py").write_text("from .a import f\nfrom .leaf import X\n")
    assert cycles(import_graph(tmp_path, ("pkg",))) == [["pkg.a", "pkg.b"], ["pkg.facade", "pkg.use_case"]]
