"""The catalog's use cases, joined: namespaces and tables over one store, built once per container
(wiring.Services.iceberg_catalog) and shared by every request."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from .namespaces import Namespaces
from .store import TableStore
from .tables import Tables

if TYPE_CHECKING:
    from .ports import Vendor, VersionedObjects

__all__ = ["Catalog"]


class Catalog:
    """Nothing of a request is kept here: each call takes its caller's ``authorize``, which checks the caller's
    permissions (the lakeFS API's policies) and raises Forbidden. ``vending``: the deployment's vendor of
    credentials, asked at each create: with one, new tables keep their files in the store, and engines get
    credentials for them (files.py, credentials.py)."""

    def __init__(self, engine: VersionedObjects, vending: Callable[[], Vendor | None] = lambda: None) -> None:
        self.store = TableStore(engine)
        self.namespaces = Namespaces(self.store)
        self.tables = Tables(self.store, self.namespaces, physical=lambda: vending() is not None)
