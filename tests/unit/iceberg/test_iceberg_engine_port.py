"""The catalog depends on ``VersionedObjects`` (chalicelib/iceberg/ports.py), the few use cases of the engine it
calls, not on the engine: no module of it imports graveler's engine, and a catalog run through every operation
over a recording stand-in of the engine calls nothing the port does not name."""

from __future__ import annotations

import typing
from pathlib import Path
from typing import Any

from chalicelib import wiring
from chalicelib.auth.policies import Permission
from chalicelib.iceberg import Catalog, Namespace, TableName, ports
from tests.unit.test_dependency_direction import imports

PACKAGE = Path(ports.__file__).parent
SCHEMA = {"type": "struct", "fields": [{"id": 1, "name": "id", "type": "long", "required": True}]}


def _members(protocol: type, prefix: str = "") -> set[str]:
    """``field.method`` for every method of the port, through its properties (``staged.uploads.upload_objects_if``)."""
    found: set[str] = set()
    for name, member in vars(protocol).items():
        if name.startswith("_"):
            continue
        if isinstance(member, property) and member.fget is not None:
            kind = typing.get_type_hints(member.fget, vars(ports))["return"]
            if getattr(kind, "_is_protocol", False):
                found |= _members(kind, f"{prefix}{name}.")
                continue
        found.add(prefix + name)
    return found


class Recording:
    """Stands in for an object of the engine, noting every method called through it by its dotted path."""

    def __init__(self, target: object, seen: set[str], path: str = "") -> None:
        self._target, self._seen, self._path = target, seen, path

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._target, name)
        path = f"{self._path}{name}"
        if callable(value):
            self._seen.add(path)
            return value
        return Recording(value, self._seen, path + ".")


def allow_all(permissions: typing.Sequence[Permission]) -> None:
    assert permissions


def test_no_module_of_the_catalog_imports_the_engine() -> None:
    offenders = [
        f"{path.name}: {name}"
        for path in sorted(PACKAGE.glob("*.py"))
        for name in imports(path)
        if name.startswith("chalicelib.graveler.engine")
    ]
    assert offenders == []


def test_the_catalog_calls_only_what_its_port_names() -> None:
    services = wiring.memory_services()
    services.engine.repositories.create_repository("repo1", "s3://bucket/repo1")
    seen: set[str] = set()
    stand_in: Any = Recording(services.engine, seen)
    for vending in (lambda: None, object):  # tables through the gateway, and tables in the store
        catalog = Catalog(stand_in, vending)
        sales = Namespace("repo1", "main", ("sales",))
        catalog.namespaces.create(allow_all, sales, {"owner": "me"})
        for parent in (None, Namespace("repo1", None, ()), Namespace("repo1", "main", ())):
            catalog.namespaces.list(allow_all, parent, None, 10)
        catalog.namespaces.update_properties(allow_all, sales, ["owner"], {"a": "1"})
        catalog.tables.create(allow_all, sales, {"name": "t", "schema": SCHEMA})
        table = TableName(sales, "t")
        update = {"action": "set-properties", "updates": {"a": "1"}}
        catalog.tables.commit(allow_all, table, {"requirements": [], "updates": [update]})
        catalog.tables.list(allow_all, sales, None, 10)
        catalog.tables.rename(
            allow_all,
            {
                "source": {"namespace": list(sales.parts), "name": "t"},
                "destination": {"namespace": list(sales.parts), "name": "u"},
            },
        )
        renamed = TableName(sales, "u")
        change = {"identifier": {"namespace": list(sales.parts), "name": "u"}, "updates": [update]}
        catalog.tables.transaction(allow_all, {"table-changes": [change]})
        catalog.tables.load(allow_all, renamed)
        catalog.tables.drop(allow_all, renamed, purge=True)
        catalog.namespaces.drop(allow_all, sales)
    named = _members(ports.VersionedObjects)
    assert seen <= named, seen - named
    # The port names nothing the catalog does not call (exactly what it uses).
    assert named <= seen, named - seen
