"""graveler/errors.py is the one home of graveler's errors: the tree in its docstring names every class, and the
workflows' failure names come from the tree, not from a hand-kept list."""

from __future__ import annotations

import ast
import pathlib

import chalicelib.auth.errors as auth_errors
from chalicelib.graveler import errors

ROOT = pathlib.Path(__file__).resolve().parents[3]


def _subclasses(cls: type) -> list[type]:
    return [cls] + [s for sub in cls.__subclasses__() for s in _subclasses(sub)]


def test_every_error_maps_to_its_name_and_back() -> None:
    names = errors.error_names()
    every = _subclasses(errors.GravelerError)
    assert len(every) > 30
    for cls in every:
        assert names[cls.__name__] is cls
    # The auth leaves hang under the same families, so a failed task raising one maps back too.
    assert names["UserNotFound"] is auth_errors.UserNotFound
    assert issubclass(names["CredentialNotFound"], errors.NotFound)


def test_the_docstring_draws_every_class_of_the_module() -> None:
    doc = errors.__doc__ or ""
    own = [c for c in _subclasses(errors.GravelerError) if c.__module__ == errors.__name__]
    assert [c.__name__ for c in own if c.__name__ not in doc] == []


def test_no_error_class_is_defined_outside_the_error_modules() -> None:
    """Graveler's errors live in graveler/errors.py (auth's in auth/errors.py), with no exception."""
    allowed = {ROOT / "chalicelib/graveler/errors.py"}
    known: set[tuple[str, str]] = set()
    stray = []
    for path in sorted((ROOT / "chalicelib" / "graveler").rglob("*.py")):
        if path in allowed:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                bases = {ast.unparse(b) for b in node.bases}
                hangs_on_tree = any(
                    b.startswith("errors.") or b in {"Exception", "Invalid", "NotFound", "Conflict"} for b in bases
                )
                if hangs_on_tree and (path.name, node.name) not in known:
                    stray.append(f"{path.relative_to(ROOT)}: {node.name}")
    assert stray == []
