"""Every package of chalicelib/, lakelet/ and the GC job says what it offers: ``__all__`` in its ``__init__``,
naming the names it offers (graveler's: the names it binds; others still list their public modules too), and in
every module another package imports from. Nothing in chalicelib imports, from outside a package, a name its
package or module leaves out of ``__all__``: what is not listed is private, whatever its spelling. A package's
sub-modules are offered unless their name starts with an underscore (PEP 8's mark of an internal module): a
module's own ``__all__`` says which of its names are.

A name counts as used both when it is imported (``from chalicelib.graveler.errors import BranchNotFound``) and when
it is read off a module bound by an import (``errors.BranchNotFound`` after ``from chalicelib.graveler import
errors``).

Importers checked: chalicelib itself and app.py (tests and the CLI may reach further: tests by design, the CLI
through its own lane's rules).
"""

from __future__ import annotations

import ast
import pathlib
from collections.abc import Iterator

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
CHALICELIB = ROOT / "chalicelib"


def _module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _source(module: str) -> pathlib.Path | None:
    base = ROOT.joinpath(*module.split("."))
    if (base / "__init__.py").is_file():
        return base / "__init__.py"
    if base.with_suffix(".py").is_file():
        return base.with_suffix(".py")
    return None


def _is_package(module: str) -> bool:
    source = _source(module)
    return source is not None and source.name == "__init__.py"


def declared_all(module: str) -> set[str] | None:
    """The names of the module's ``__all__`` (a literal list or tuple of strings), None when it has none."""
    source = _source(module)
    assert source is not None, module
    for node in ast.parse(source.read_text()).body:
        targets = (
            node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        )
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
            assert isinstance(node.value, (ast.List, ast.Tuple)), f"{module}: __all__ must be a literal list"
            return {e.value for e in node.value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)}
    return None


def imported_names(path: pathlib.Path) -> Iterator[tuple[int, str, str]]:
    """(line, module, name) of every ``from module import name`` and (line, parent, child) of every
    ``import parent.child``, relative imports resolved."""
    module = _module_name(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join(anchor + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            for alias in node.names:
                yield node.lineno, base, alias.name
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parent, _, child = alias.name.rpartition(".")
                if parent:
                    yield node.lineno, parent, child


def _inside(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def _steps(module: str, name: str) -> Iterator[tuple[str, str]]:
    """(container, member) of every step of ``module.name``: chalicelib.a.b, x gives (chalicelib, a),
    (chalicelib.a, b), (chalicelib.a.b, x)."""
    parts = [*module.split("."), name]
    for i in range(1, len(parts)):
        yield ".".join(parts[:i]), parts[i]


def module_aliases(path: pathlib.Path) -> dict[str, str]:
    """The names under which the file binds a chalicelib module: ``from chalicelib.graveler import errors`` binds
    ``errors``, ``import chalicelib.settings as settings`` binds ``settings`` (relative imports resolved)."""
    module = _module_name(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    aliases: dict[str, str] = {}
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join(anchor + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            for alias in node.names:
                if alias.name != "*" and _is_module(f"{base}.{alias.name}"):
                    aliases[alias.asname or alias.name] = f"{base}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname and _is_module(alias.name):
                    aliases[alias.asname] = alias.name
    return {name: target for name, target in aliases.items() if _inside(target, "chalicelib")}


def _is_module(module: str) -> bool:
    return _source(module) is not None


def attribute_uses(path: pathlib.Path) -> Iterator[tuple[int, str, str]]:
    """(line, module, attribute) of every ``alias.attribute`` where ``alias`` names a chalicelib module."""
    aliases = module_aliases(path)
    if not aliases:
        return
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases:
            yield node.lineno, aliases[node.value.id], node.attr


# Names used from outside their package that their module does not offer yet, each with its reason: (module, name).
NOT_YET_OFFERED = {
    # workflows/ is being reshaped on another branch (import becomes a use case like commit and merge, issue 30);
    # its __all__ comes with that change.
    ("chalicelib.workflows.imports", "importer"),
}


def offences(path: pathlib.Path) -> Iterator[str]:
    importer = _module_name(path)
    for line, module, name in [*imported_names(path), *attribute_uses(path)]:
        if not _inside(module, "chalicelib") or name == "*" or (module, name) in NOT_YET_OFFERED:
            continue
        for container, member in _steps(module, name):
            if container == "chalicelib" or _source(container) is None:
                continue
            # A package's own modules may use what it keeps to itself; a module's privacy is its package's.
            scope = container if _is_package(container) else container.rpartition(".")[0]
            if _inside(importer, scope):
                continue
            if _is_package(container) and _is_module(f"{container}.{member}") and not member.startswith("_"):
                continue
            listed = declared_all(container)
            if listed is None or member not in listed:
                yield f"{path.relative_to(ROOT)}:{line}: {container} does not offer {member}"


def _packages() -> list[str]:
    """Every package of chalicelib/, lakelet/ and the GC job (emr/lakelet_gc/)."""
    roots = (CHALICELIB, ROOT / "lakelet", ROOT / "emr" / "lakelet_gc")
    return sorted(_module_name(p) for root in roots for p in root.rglob("__init__.py"))


def test_every_package_declares_all() -> None:
    assert [package for package in _packages() if declared_all(package) is None] == []


def test_names_offered_exist() -> None:
    """A name in a package's ``__all__`` is a module of the package or a name its ``__init__`` binds."""
    missing = []
    for package in _packages():
        source = _source(package)
        assert source is not None
        bound = {
            alias.asname or alias.name
            for node in ast.walk(ast.parse(source.read_text()))
            if isinstance(node, (ast.Import, ast.ImportFrom))
            for alias in node.names
        }
        for node in ast.parse(source.read_text()).body:
            targets = (
                node.targets
                if isinstance(node, ast.Assign)
                else [node.target]
                if isinstance(node, ast.AnnAssign)
                else []
            )
            bound |= {n.id for n in targets if isinstance(n, ast.Name)}
        for name in declared_all(package) or set():
            if _source(f"{package}.{name}") is None and name not in bound:
                missing.append(f"{package}.{name}")
    assert missing == []


def test_nothing_imports_a_name_left_out_of_all() -> None:
    found = [o for path in [*sorted(CHALICELIB.rglob("*.py")), ROOT / "app.py"] for o in offences(path)]
    assert found == []


class _Probe(type(pathlib.Path())):  # type: ignore[misc]
    """A module of chalicelib that exists only in this test: its path names where it would be, its text is given.
    Nothing is written into the checkout, which other tests (another pytest-xdist worker's) walk meanwhile."""

    text = ""

    def read_text(self, encoding: str | None = None, errors: str | None = None, newline: str | None = None) -> str:
        return self.text


def _probe(where: pathlib.Path, text: str) -> pathlib.Path:
    probe = _Probe(where)
    probe.text = text
    return probe


def test_an_unlisted_name_is_an_offence() -> None:
    # The rule on real modules: graveler.identity is graveler's own module, and commit_id its own function.
    sample = _probe(
        CHALICELIB / "api" / "_surface_probe.py",
        "from chalicelib.graveler.identity import commit_id\nfrom chalicelib.graveler import errors, Entry\n"
        "from chalicelib.graveler import records_by_hand\n",
    )
    found = list(offences(sample))
    assert [o.split(": ", 1)[1] for o in found] == [
        "chalicelib.graveler.identity does not offer commit_id",
        "chalicelib.graveler does not offer records_by_hand",
    ]


def test_a_private_module_is_not_offered(monkeypatch: pytest.MonkeyPatch) -> None:
    """A sub-module is offered unless its name starts with an underscore: the probe adds one to graveler."""
    private = _probe(CHALICELIB / "graveler" / "_probe_private.py", "__all__ = ['X']\nX = 1\n")
    real_source = _source
    monkeypatch.setitem(
        globals(),
        "_source",
        lambda module: private if module == "chalicelib.graveler._probe_private" else real_source(module),
    )
    sample = _probe(
        CHALICELIB / "api" / "_surface_probe.py",
        "from chalicelib.graveler._probe_private import X\nfrom chalicelib.graveler import writes\n",
    )
    found = list(offences(sample))
    assert [o.split(": ", 1)[1] for o in found] == ["chalicelib.graveler does not offer _probe_private"]


def test_attribute_access_is_checked_too() -> None:
    # ``errors.X`` after ``from chalicelib.graveler import errors``: X must be in errors' __all__.
    sample = _probe(
        CHALICELIB / "api" / "_surface_probe.py",
        "from chalicelib.graveler import errors\nimport chalicelib.graveler.identity as identity\n"
        "x = errors.BranchNotFound\ny = errors.NoSuchError\nz = identity.commit_id\n",
    )
    found = list(offences(sample))
    assert {o.split(": ", 1)[1] for o in found} == {
        "chalicelib.graveler.errors does not offer NoSuchError",
        "chalicelib.graveler.identity does not offer commit_id",
    }
    assert not any("BranchNotFound" in o for o in found)


def _top_level_classes(module: str) -> set[str]:
    source = _source(module)
    assert source is not None
    return {n.name for n in ast.parse(source.read_text()).body if isinstance(n, ast.ClassDef)}


def test_every_error_module_offers_its_whole_tree() -> None:
    """An errors module's __all__ names every public class it defines, not only those someone imported so far."""
    missing = {
        module: sorted(
            name
            for name in _top_level_classes(module)
            if not name.startswith("_") and name not in (declared_all(module) or set())
        )
        for module in (_module_name(p) for p in CHALICELIB.rglob("errors.py"))
    }
    assert {module: names for module, names in missing.items() if names} == {}


def test_the_routes_decorator_module_offers_its_public_functions() -> None:
    source = _source("chalicelib.api.endpoint")
    assert source is not None
    public = {
        n.name
        for n in ast.parse(source.read_text()).body
        if isinstance(n, ast.FunctionDef) and not n.name.startswith("_")
    }
    assert public - (declared_all("chalicelib.api.endpoint") or set()) == set()
