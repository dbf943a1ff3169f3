"""Makes moto's handling of one journaled request repeatable: the same random numbers and the same clock.

moto draws identifiers from ``moto.moto_api._internal.mock_random`` (execution names, KMS key ids, S3 version
ids), from ``os.urandom`` (multipart upload ids, KMS key material, ``uuid.uuid4``) and reads the time from
``moto.core.utils.utcnow`` (Last-Modified, creation dates). Inside :func:`pinned`, and only in the thread that
entered it, all three come from the request's seed and recorded time. The journal stores both, so replaying the
request after a restart makes the same upload id, the same key material and the same dates that the first run
gave to the app, which may have stored them elsewhere. Other threads (the app, other requests) are untouched.

:func:`install` patches the three sources in this process (``uninstall`` gives them back); the patch costs a
thread-local lookup per call outside :func:`pinned`.

What moto creates lazily, the first time a service, account or region is used (modules imported on first use,
backend objects and their ids, the Flask app of a service), is built unpinned: whether it happens inside a request
depends on what came before
(a read that is not journaled may have created it in the first run), so it must not draw from the request's
numbers, or the replay would draw different ones for everything after it.
"""

from __future__ import annotations

import builtins
import datetime
import os
import random
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

_local = threading.local()
_lock = threading.Lock()
_saved: dict[str, Any] = {}
_CLOCK_NAME = "_lakelet_pinned_utcnow"
_pinned_threads = [0]


def _pinned_rng() -> random.Random | None:
    return getattr(_local, "rng", None)


def _make_getrandbits(original: Callable[[int], int]) -> Callable[[int], int]:
    def getrandbits(k: int) -> int:
        rng = _pinned_rng()
        return rng.getrandbits(k) if rng is not None else original(k)

    return getrandbits


def _make_random(original: Callable[[], float]) -> Callable[[], float]:
    def random_() -> float:
        rng = _pinned_rng()
        return rng.random() if rng is not None else original()

    return random_


def _make_urandom(original: Callable[[int], bytes]) -> Callable[[int], bytes]:
    def urandom(size: int) -> bytes:
        rng = _pinned_rng()
        return rng.randbytes(size) if rng is not None else original(size)

    return urandom


def _utcnow() -> datetime.datetime:
    pinned: datetime.datetime | None = getattr(_local, "now", None)
    if pinned is not None:
        return pinned
    return datetime.datetime.now(datetime.UTC).replace(tzinfo=None)


def _utcnow_shim() -> datetime.datetime:  # its code replaces moto's utcnow's; the name resolves in moto's module
    return _lakelet_pinned_utcnow()  # type: ignore[name-defined,no-any-return]  # noqa: F821


def _run_unpinned(original: Callable[..., Any]) -> Callable[..., Any]:
    # On moto's hot path (every backend lookup): no context manager, one thread-local read when unpinned.
    def run(*args: Any, **kwargs: Any) -> Any:
        local = _local
        rng = getattr(local, "rng", None)
        if rng is None:
            return original(*args, **kwargs)
        now = local.now
        local.rng = local.now = None
        try:
            return original(*args, **kwargs)
        finally:
            local.rng, local.now = rng, now

    return run


def _lazy_creators() -> list[tuple[Any, str]]:
    import importlib

    from moto.core.base_backend import AccountSpecificBackend, BackendDict
    from moto.moto_server.werkzeug_app import DomainDispatcherApplication

    return [
        (builtins, "__import__"),  # moto imports a service's modules inside the first request that needs them
        (importlib, "import_module"),
        (BackendDict, "__init__"),
        (BackendDict, "_create_account_specific_backend"),
        (AccountSpecificBackend, "__init__"),
        (AccountSpecificBackend, "__getitem__"),
        (DomainDispatcherApplication, "get_application"),
    ]


def install() -> None:
    """Routes moto's random numbers, os.urandom and moto's clock through the pinning. Idempotent."""
    from moto.core import utils as moto_utils
    from moto.moto_api._internal import mock_random

    with _lock:
        if _saved:
            return
        _saved["getrandbits"] = mock_random.getrandbits
        _saved["random"] = mock_random.random
        _saved["urandom"] = os.urandom
        _saved["utcnow_code"] = moto_utils.utcnow.__code__
        # Instance attributes win over the class's methods, and Random's choice/randint/... call these two.
        mock_random.getrandbits = _make_getrandbits(_saved["getrandbits"])  # type: ignore[method-assign]
        mock_random.random = _make_random(_saved["random"])  # type: ignore[method-assign]
        os.urandom = _make_urandom(_saved["urandom"])
        # Modules did `from moto.core.utils import utcnow`, so the function object must stay: swap its code.
        setattr(moto_utils, _CLOCK_NAME, _utcnow)
        moto_utils.utcnow.__code__ = _utcnow_shim.__code__
        creators = []
        for owner, name in _lazy_creators():
            original = vars(owner)[name]
            if owner is builtins and name == "__import__":
                # Every import statement of the process calls a replaced __import__ through the import machinery's
                # slow path: the wrapper is in place only while a thread is pinned (_import_while_pinned).
                _saved["import"] = (original, _run_unpinned(original))
                continue
            creators.append((owner, name, original))
            setattr(owner, name, _run_unpinned(original))
        _saved["creators"] = creators
        if _pinned_threads[0] > 0:
            builtins.__import__ = _saved["import"][1]


def uninstall() -> None:
    from moto.core import utils as moto_utils
    from moto.moto_api._internal import mock_random

    with _lock:
        if not _saved:
            return
        del mock_random.getrandbits
        del mock_random.random
        os.urandom = _saved["urandom"]
        moto_utils.utcnow.__code__ = _saved["utcnow_code"]
        delattr(moto_utils, _CLOCK_NAME)
        for owner, name, original in _saved["creators"]:
            setattr(owner, name, original)
        builtins.__import__ = _saved["import"][0]
        _saved.clear()


def installed() -> bool:
    return bool(_saved)


@contextmanager
def pinned(seed: int, when: float) -> Iterator[None]:
    """In this thread, until the block ends: random numbers from ``seed``, and the time frozen at ``when``
    (Unix seconds)."""
    _import_while_pinned(+1)
    _local.rng = random.Random(seed)
    _local.now = datetime.datetime.fromtimestamp(when, datetime.UTC).replace(tzinfo=None)
    try:
        yield
    finally:
        _local.rng = None
        _local.now = None
        _import_while_pinned(-1)


def _import_while_pinned(step: int) -> None:
    """Counts the pinned threads; the first to pin puts the import wrapper in place, the last to leave takes it
    away (threads that are not pinned meanwhile import through it unchanged)."""
    with _lock:
        _pinned_threads[0] += step
        swap = _saved.get("import")
        if swap is not None:
            builtins.__import__ = swap[1] if _pinned_threads[0] > 0 else swap[0]


def randbits() -> Callable[[int], int]:
    """Where moto's random numbers come from in this thread now: the pinned generator's ``getrandbits``, else
    moto's own (what ``mock_random.getrandbits`` calls either way)."""
    rng = _pinned_rng()
    if rng is not None:
        return rng.getrandbits
    original: Callable[[int], int] | None = _saved.get("getrandbits")
    if original is not None:
        return original
    from moto.moto_api._internal import mock_random

    return mock_random.getrandbits


def pinned_now() -> datetime.datetime | None:
    """The frozen time of the request this thread is handling (naive UTC), if any."""
    return getattr(_local, "now", None)
