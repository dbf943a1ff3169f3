"""A snapshot: every moto backend of this process (S3, DynamoDB, KMS, Step Functions, IAM, ...) in one pickle.

moto keeps each service's state in a module-level ``BackendDict`` (account -> region -> backend object). A
snapshot pickles all the BackendDicts of the moto modules loaded, together, so objects shared between them stay
shared; loading one puts the backend objects back in place. What pickle cannot take is reduced to what can be
rebuilt: locks become new locks, weak caches empty ones, private keys their DER bytes, the workers of Step
Functions executions nothing (an execution that was running is dealt with by workflows.fail_orphans), and
lakelet.stack.moto_speedups' query caches a stale marker that makes them rebuild, the items' texts of
lakelet.stack.moto_item_texts nothing.

The file starts with one JSON line (the snapshot format, the moto version that wrote it) before the pickle:
a snapshot from another moto version is refused, since its classes may no longer match. Pickle runs code from
the file when loading: the data directory must be as private as the user's home (it holds the admin secret).
"""

from __future__ import annotations

import copyreg
import importlib
import io
import json
import os
import pickle
import sys
import threading
import weakref
from collections import defaultdict
from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path
from typing import IO, Any

from lakelet.persistence.datadir import DataDirError

SNAPSHOT_FORMAT = 1
_LOCK_TYPES = (type(threading.Lock()), type(threading.RLock()))
_BACKEND_DICT_OWN = frozenset({"backend", "service_name", "_use_boto3_regions", "_additional_regions", "_id"})
_PLAIN_EMPTY = (dict, list, set, int, str)
_WEAK_TYPES = (weakref.WeakValueDictionary, weakref.WeakKeyDictionary, weakref.WeakSet)


def moto_version() -> str:
    return version("moto")


def _backend_dicts() -> dict[str, Any]:
    """``{"module:attribute": BackendDict}`` for every BackendDict in a loaded moto module (each once)."""
    from moto.core.base_backend import BackendDict

    found: dict[str, Any] = {}
    seen: set[int] = set()
    for module_name, module in sorted(sys.modules.items()):
        if not module_name.startswith("moto.") or module is None:
            continue
        for attribute, value in list(vars(module).items()):
            if isinstance(value, BackendDict) and id(value) not in seen:
                seen.add(id(value))
                found[f"{module_name}:{attribute}"] = value
    return found


def _load_private_key(der: bytes) -> Any:
    from cryptography.hazmat.primitives.serialization import load_der_private_key

    return load_der_private_key(der, password=None)


def _nothing() -> None:
    return None


class _Pickler(pickle.Pickler):
    def reducer_override(self, obj: Any) -> Any:
        kind = type(obj)
        if kind in _LOCK_TYPES:
            return (threading.RLock if kind is _LOCK_TYPES[1] else threading.Lock, ())
        if kind in _WEAK_TYPES:
            return (kind, ())
        if isinstance(obj, threading.Thread):
            return (_nothing, ())
        if kind is defaultdict and obj.default_factory is not None and "<lambda>" in obj.default_factory.__qualname__:
            # moto's `defaultdict(lambda: {})` and the like: the same factory, by a name pickle can store.
            empty = obj.default_factory()
            if type(empty) in _PLAIN_EMPTY and not empty:
                return (defaultdict, (type(empty),), None, None, iter(obj.items()))
        module = kind.__module__
        if module.startswith("cryptography.") and hasattr(obj, "private_bytes"):
            from cryptography.hazmat.primitives import serialization

            der = obj.private_bytes(
                serialization.Encoding.DER, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
            )
            return (_load_private_key, (der,))
        if module == "lakelet.stack.moto_speedups" and kind.__name__ == "_Cache":
            return (kind, (-1,))  # generation -1 never matches: the first query rebuilds the cache
        if module == "lakelet.stack.moto_item_texts" and kind.__name__ == "KnownText":
            return (_nothing, ())  # an item's text is written again at its next put
        if module == "moto.s3.models" and "_value_buffer" in vars(obj) and "lock" in vars(obj):
            return (copyreg.__newobj__, (kind,), _key_state(obj))  # type: ignore[attr-defined]
        if module == "moto.stepfunctions.parser.backend.execution" and hasattr(obj, "exec_worker"):
            state = dict(vars(obj))
            state["exec_worker"] = None  # a worker holds threads and a live interpreter
            return (copyreg.__newobj__, (kind,), state)  # type: ignore[attr-defined]
        return NotImplemented


def _key_state(key: Any) -> dict[str, Any]:
    """What moto's FakeKey.__getstate__ returns, without its lock and without moving its buffer's position: a
    snapshot may be written by a forked copy of the process (store.py), where a lock a reader held at the fork
    stays held forever, and where a file buffer's position is shared with the reader that still uses it."""
    state = {k: v for k, v in vars(key).items() if k not in ("_value_buffer", "lock")}
    state["value"] = _buffer_bytes(key._value_buffer)
    return state


def _buffer_bytes(buffer: Any) -> bytes:
    contents = getattr(buffer, "contents", None)
    if callable(contents):  # lakelet.stack.moto_memory's buffer: in memory or in a file of its own
        return bytes(contents())
    inner = getattr(buffer, "_file", buffer)
    if getattr(inner, "closed", False):
        return b""  # a deleted key's buffer, as moto's __getstate__ has it
    if isinstance(inner, io.BytesIO):
        return inner.getvalue()
    fd = inner.fileno()
    size = os.fstat(fd).st_size
    parts, offset = [], 0
    while offset < size:
        part = os.pread(fd, size - offset, offset)
        if not part:
            break
        parts.append(part)
        offset += len(part)
    return b"".join(parts)


def write(out: IO[bytes]) -> None:
    """Pickle every moto backend to ``out``. The caller keeps moto's state still while this runs."""
    header = {"snapshot_format": SNAPSHOT_FORMAT, "moto": moto_version()}
    out.write(json.dumps(header).encode() + b"\n")
    content = {
        name: {
            "accounts": {account: dict(regions) for account, regions in backend_dict.items()},
            # What a BackendDict subclass keeps besides its backends (S3's bucket name -> account map).
            "extras": {k: v for k, v in vars(backend_dict).items() if k not in _BACKEND_DICT_OWN},
        }
        for name, backend_dict in _backend_dicts().items()
    }
    _Pickler(out, protocol=pickle.HIGHEST_PROTOCOL).dump(content)


def dumps() -> bytes:
    buffer = io.BytesIO()
    write(buffer)
    return buffer.getvalue()


def read_header(source: IO[bytes], path: Path) -> dict[str, Any]:
    line = source.readline(4096)
    try:
        header = json.loads(line)
        number, written_by = header["snapshot_format"], header["moto"]
    except (ValueError, KeyError, TypeError):
        raise DataDirError(
            f"{path} is not a Lakelet snapshot (damaged?); move it away to start from the journal"
        ) from None
    if number != SNAPSHOT_FORMAT:
        raise DataDirError(f"{path} has snapshot format {number}; this Lakelet reads {SNAPSHOT_FORMAT}")
    if written_by != moto_version():
        data_dir = path.parent.parent  # <data dir>/moto/snapshot-<G>.bin
        raise DataDirError(
            f"{data_dir} was written with moto {written_by} and this Lakelet runs moto {moto_version()}, which "
            f"cannot read it: with the Lakelet that wrote it run `lakelet local export EXPORT_DIR --data-dir "
            f"{data_dir}`, then with this one `lakelet local import EXPORT_DIR --data-dir NEW_DIR` (README: "
            "upgrading)"
        )
    return dict(header)


def load(path: Path) -> None:
    """Replace every moto backend of this process by the snapshot's (backends it does not name are reset)."""
    # First: moto's reset disposes of every S3 key object it tracks, the ones unpickled below included.
    reset_moto()
    with open(path, "rb") as source:
        read_header(source, path)
        try:
            content: dict[str, dict[str, Any]] = _Unpickler(source).load()
        except (pickle.UnpicklingError, EOFError, AttributeError, ImportError, TypeError, ValueError) as error:
            raise DataDirError(f"{path} cannot be read ({type(error).__name__}: {error})") from error
    for name, saved in content.items():
        backend_dict = _resolve(name)
        for account, regions in saved["accounts"].items():
            per_account = backend_dict[account]
            for region, backend in regions.items():
                dict.__setitem__(per_account, region, backend)
        for attribute, value in saved["extras"].items():
            setattr(backend_dict, attribute, value)


# Modules that moved: snapshots written before the move name them by their old path.
_MOVED_MODULES = {"lakelet.moto_speedups": "lakelet.stack.moto_speedups"}


class _Unpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        return super().find_class(_MOVED_MODULES.get(module, module), name)


def reset_moto() -> None:
    """Every moto backend back to empty, as ``POST /moto-api/reset`` does."""
    from moto.moto_api._internal.models import moto_api_backend

    moto_api_backend.reset()


def _resolve(name: str) -> Any:
    module_name, attribute = name.split(":", 1)
    module = importlib.import_module(module_name)
    found: Callable[..., Any] = getattr(module, attribute)
    return found
