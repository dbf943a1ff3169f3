"""Four of moto's per-request costs, cached or left out for the embedded stack (installed with
lakelet/stack/moto_speedups.py).

A profile of ``lakelet up`` answering stats showed moto spending part of every request on work whose answer never
changes while the process runs (moto is pinned, requirements-dev.txt):

1. ``moto.backends.list_of_moto_modules``, which the server's dispatcher calls to route each request by its host:
   it lists moto's package directory and ``isdir``s each of its ~150 entries. The directory is what was installed;
   the list is read once.
2. ``moto.core.responses.method_names_from_class``, which ``BaseResponse.call_action`` calls on each request to
   find the handler's method for the action: ``inspect.getmembers`` over the whole response class. A class's
   functions are fixed once it is defined; they are read once per class.
3. Flask's ``attach_enctype_error_multidict``, which Flask calls on every request that reads a body when the app
   is in debug mode (moto's Flask apps are): it defines a new class each time, only to word the error of a form
   sent without its files better. It does nothing here.
4. flask-cors on each of moto's service apps, which answers every request with an ``after_request`` hook that
   reflects the caller's Origin: the guard in front of moto (lakelet/stack/moto_guard.py) drops those headers and
   writes its own, for the stack's UI only, so moto's service apps are built without it (moto's own
   ``MOTO_DISABLE_GLOBAL_CORS`` switch, read where the apps are built). An app built before :func:`install` keeps
   it, which changes nothing the guard lets out.

:func:`install` and :func:`uninstall` are idempotent and give moto its functions back.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import Any

import flask.debughelpers
import moto.backends
import moto.core.responses
import moto.moto_server.werkzeug_app as moto_apps

_saved: dict[str, Any] = {}
# The name under which moto's app builder reads its switch (from moto.settings, at import).
_CORS_SWITCH = "DISABLE_GLOBAL_CORS"


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
    _saved["attach_enctype_error_multidict"] = flask.debughelpers.attach_enctype_error_multidict
    flask.debughelpers.attach_enctype_error_multidict = _leave_as_is
    moto.core.responses.method_names_from_class = method_names  # type: ignore[attr-defined,assignment]
    _saved["cors"] = vars(moto_apps)[_CORS_SWITCH]
    setattr(moto_apps, _CORS_SWITCH, True)


def uninstall() -> None:
    if not _saved:
        return
    moto.backends.list_of_moto_modules = _saved.pop("list_of_moto_modules")
    flask.debughelpers.attach_enctype_error_multidict = _saved.pop("attach_enctype_error_multidict")
    moto.core.responses.method_names_from_class = _saved.pop("method_names_from_class")  # type: ignore[attr-defined]
    setattr(moto_apps, _CORS_SWITCH, _saved.pop("cors"))


def _leave_as_is(request: Any) -> None:
    """The request's files stay as Flask read them."""
