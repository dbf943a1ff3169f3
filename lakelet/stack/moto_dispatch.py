"""Two of moto's per-request costs, cached for the embedded stack (installed with lakelet/stack/moto_speedups.py).

A profile of ``lakelet up`` answering stats showed moto spending part of every request on work whose answer never
changes while the process runs (moto is pinned, requirements-dev.txt):

1. ``moto.backends.list_of_moto_modules``, which the server's dispatcher calls to route each request by its host:
   it lists moto's package directory and ``isdir``s each of its ~150 entries. The directory is what was installed;
   the list is read once.
2. ``moto.core.responses.method_names_from_class``, which ``BaseResponse.call_action`` calls on each request to
   find the handler's method for the action: ``inspect.getmembers`` over the whole response class. A class's
   functions are fixed once it is defined; they are read once per class.

:func:`install` and :func:`uninstall` are idempotent and give moto its functions back.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from typing import Any

import moto.backends
import moto.core.responses

_saved: dict[str, Callable[..., Any]] = {}


def install() -> None:
    if _saved:
        return
    listing = moto.backends.list_of_moto_modules
    names = moto.core.responses.method_names_from_class  # type: ignore[attr-defined]
    _saved["list_of_moto_modules"] = listing
    _saved["method_names_from_class"] = names
    modules = tuple(listing())

    def list_of_moto_modules() -> Iterable[str]:
        return modules

    @functools.cache
    def method_names(clazz: type) -> frozenset[str]:
        return frozenset(names(clazz))

    moto.backends.list_of_moto_modules = list_of_moto_modules
    moto.core.responses.method_names_from_class = method_names  # type: ignore[attr-defined,assignment]


def uninstall() -> None:
    if not _saved:
        return
    moto.backends.list_of_moto_modules = _saved.pop("list_of_moto_modules")
    moto.core.responses.method_names_from_class = _saved.pop("method_names_from_class")  # type: ignore[attr-defined]
