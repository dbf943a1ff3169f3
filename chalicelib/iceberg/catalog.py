"""The catalog's use cases for one caller, joined: namespaces and tables over one store."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .namespaces import Authorize, Namespaces
from .store import TableStore
from .tables import Tables

if TYPE_CHECKING:
    from chalicelib.graveler.engine import Engine

    from .ports import Vendor

__all__ = ["Catalog"]


class Catalog:
    """``authorize`` checks the caller's permissions (the lakeFS API's policies), raising Forbidden. ``vendor``:
    new tables keep their files in the store, and engines get credentials for them (files.py, credentials.py)."""

    def __init__(self, engine: Engine, authorize: Authorize, vendor: Vendor | None = None) -> None:
        store = TableStore(engine, authorize)
        self.namespaces = Namespaces(store, authorize)
        self.tables = Tables(store, self.namespaces, authorize, physical=vendor is not None)
        self.vendor = vendor
