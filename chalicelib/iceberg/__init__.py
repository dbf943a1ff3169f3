"""An Apache Iceberg REST catalog over the repository's branches (docs/iceberg.md): namespaces are
``<repository>.<ref>.<namespace>...``, tables are objects of the repository (layout.py), table commits are
conditional writes of their pointers. It uses only the engine's use cases its port names (ports.VersionedObjects),
and is built once per container, each call taking its caller's permissions; api/iceberg*.py serves it at
/iceberg/api/v1."""

from __future__ import annotations

from . import bounds, errors, layout
from .catalog import Catalog
from .commits import Loaded, Prepared
from .layout import Namespace, TableName
from .namespaces import Authorize, NamespacePage, PropertiesUpdate, page_size
from .tables import TablePage

__all__ = [
    "Authorize",
    "Catalog",
    "Loaded",
    "Namespace",
    "NamespacePage",
    "Prepared",
    "PropertiesUpdate",
    "TableName",
    "TablePage",
    "bounds",
    "credentials",
    "errors",
    "layout",
    "page_size",
    "ports",
]
