"""The engine is a small frozen record of use cases: no base class, no methods, at most 15 fields, each a use case
object (or the ports it was built from), built in one place (``build_engine``) and never changed after."""

from __future__ import annotations

import ast
import dataclasses
import pathlib

import pytest

from chalicelib import wiring
from chalicelib.graveler.engine import Engine, build_engine

ROOT = pathlib.Path(__file__).resolve().parents[3]


def test_the_engine_is_a_frozen_record_of_at_most_15_use_cases() -> None:
    assert Engine.__bases__ == (object,)
    assert dataclasses.is_dataclass(Engine)
    public = [name for name in vars(Engine) if not name.startswith("_")]
    fields = [f.name for f in dataclasses.fields(Engine)]
    assert sorted(public) == sorted(fields), "the engine has names besides its fields"
    assert len(fields) <= 15
    assert not any(callable(getattr(Engine, name, None)) for name in fields)


def test_every_field_is_a_use_case_object_of_graveler() -> None:
    engine = wiring.memory_services().engine
    for field in dataclasses.fields(Engine):
        value = getattr(engine, field.name)
        assert type(value).__module__.startswith("chalicelib.graveler."), field.name
        # A use case has methods of its own: no field is a bound method or a plain value.
        assert not callable(value), field.name


@pytest.mark.parametrize("name", ["objects", "ports", "commits"])
def test_nothing_is_set_after_construction(name: str) -> None:
    engine = wiring.memory_services().engine
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(engine, name, None)
    with pytest.raises((AttributeError, TypeError)):
        engine.clock = lambda: 0.0  # type: ignore[attr-defined]


def test_one_function_builds_the_engine() -> None:
    """``Engine(`` is called in engine.py's build_engine and nowhere else in the checkout."""
    callers = []
    for path in sorted(ROOT.glob("**/*.py")):
        if any(part.startswith(".") or part in ("node_modules", "build") for part in path.relative_to(ROOT).parts):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Engine":
                callers.append(str(path.relative_to(ROOT)))
    assert callers == ["chalicelib/graveler/engine.py"]


def test_a_rebuilt_engine_shares_its_ports() -> None:
    engine = wiring.memory_services().engine
    again = build_engine(engine.ports)
    assert again.ports is engine.ports and again.objects is not engine.objects
