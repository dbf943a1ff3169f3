"""pyarrow, imported when a range is first read or written, not when graveler is.

Every request imports graveler, but most never touch a range (a stat of a staged object, a branch listing, the
health check), and pyarrow with numpy is about a fifth of a cold start. The modules of this package name pyarrow as
``pa``, ``pc`` and ``pq`` from here: stand-ins that import the real module on their first attribute lookup and
then hold its namespace, so later lookups cost what a module attribute costs. Type checkers see the real modules.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import TYPE_CHECKING, Any

__all__ = ["pa", "pc", "pq"]


class _LazyModule:
    """Stands for the module ``name`` until something is looked up on it."""

    def __init__(self, name: str) -> None:
        self.__name = name

    def __load(self) -> ModuleType:
        module = importlib.import_module(self.__name)
        # From now on attributes are found in this instance's own dictionary, without __getattr__.
        self.__dict__.update(module.__dict__)
        return module

    def __getattr__(self, attribute: str) -> Any:
        return getattr(self.__load(), attribute)

    def __repr__(self) -> str:
        return f"<lazy module {self.__name!r}>"


if TYPE_CHECKING:
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq
else:
    pa = _LazyModule("pyarrow")
    pc = _LazyModule("pyarrow.compute")
    pq = _LazyModule("pyarrow.parquet")
