"""graveler's root keeps the domain (records, errors, refs, ports, identity, validation, the engine record and its
parts); everything else lives in a sub-package named for what it is (usecases/, writes/, reads/, dumps/, ...).
Counted: every module and every sub-package at chalicelib/graveler/, ``__init__.py`` aside."""

from __future__ import annotations

import pathlib

GRAVELER = pathlib.Path(__file__).resolve().parents[2] / "chalicelib" / "graveler"
MAX_ROOT_MODULES = 20


def root_modules(folder: pathlib.Path) -> list[str]:
    modules = [p.name for p in folder.glob("*.py") if p.name != "__init__.py"]
    packages = [p.name + "/" for p in folder.iterdir() if p.is_dir() and (p / "__init__.py").is_file()]
    return sorted(modules + packages)


def test_graveler_root_holds_at_most_20_modules() -> None:
    found = root_modules(GRAVELER)
    assert len(found) <= MAX_ROOT_MODULES, found


def test_the_count_takes_modules_and_packages(tmp_path: pathlib.Path) -> None:
    (tmp_path / "__init__.py").write_text("")
    (tmp_path / "records.py").write_text("")
    (tmp_path / "writes").mkdir()
    (tmp_path / "writes" / "__init__.py").write_text("")
    (tmp_path / "__pycache__").mkdir()
    assert root_modules(tmp_path) == ["records.py", "writes/"]


def test_the_domain_stays_at_the_root() -> None:
    domain = {"records.py", "errors.py", "refs.py", "ports.py", "identity.py", "validation.py", "engine.py"}
    assert domain <= set(root_modules(GRAVELER))
