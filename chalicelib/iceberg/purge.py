"""What a purge deletes: the files a table's own metadata names (its metadata files, current and logged, its
statistics files, every snapshot's manifest list, the manifests those list and the data and delete files those
name), and of them only those under the table's own location. Nothing else under the location, nothing beside it:
a location shared with other objects (or pointed at them) loses only the table's files. Every read and every
delete goes through the TableStore, which authorizes each path as the caller's own request would be."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable

from .avro import records
from .errors import BadRequest
from .layout import path_of_uri
from .metadata import Json
from .store import Authorize, TableStore

__all__ = ["table_files"]


def _gateway_path(repo: str, address: object) -> str | None:
    """The repository path of an ``s3://<repo>/<ref>/<path>`` address; None for anything else (another
    repository's file is never this table's to delete)."""
    if not isinstance(address, str):
        return None
    with contextlib.suppress(BadRequest):
        return path_of_uri(repo, address)
    return None


def _list(value: object) -> list[object]:
    """A list of the metadata as it should be one; anything else (a hostile file's) names nothing."""
    return value if isinstance(value, list) else []


def _named(items: object, field: str) -> Iterable[object]:
    return [item.get(field) for item in _list(items) if isinstance(item, dict)]


def table_files(
    store: TableStore,
    authorize: Authorize,
    repo: str,
    ref: str,
    metadata_path: str,
    metadata: Json,
    location: str,
    root: str | None = None,
) -> list[str]:
    """The paths (at ``ref``) of the table's files under ``location`` (a path without its trailing "/"), in order
    of discovery: BadRequest for a manifest that cannot be read (the purge then deletes nothing). ``root``: a
    table whose files are in the store (files.py) names them by their addresses under it, each linked at the same
    relative path under the location."""
    inside = location.rstrip("/") + "/"
    found: dict[str, None] = {}

    def _path(repo: str, address: object) -> str | None:
        if root is not None and isinstance(address, str) and address.startswith(root + "/"):
            return inside + address[len(root) + 1 :]
        return _gateway_path(repo, address)

    def add(path: str | None) -> bool:
        if path is None or not path.startswith(inside) or path in found:
            return False
        found[path] = None
        return True

    add(metadata_path)
    for address in _named(metadata.get("metadata-log"), "metadata-file"):
        add(_path(repo, address))
    for key in ("statistics", "partition-statistics"):
        for address in _named(metadata.get(key), "statistics-path"):
            add(_path(repo, address))
    manifests: list[str] = []
    for snapshot in _list(metadata.get("snapshots")):
        if not isinstance(snapshot, dict):
            continue
        manifests.extend(p for p in (_path(repo, a) for a in _list(snapshot.get("manifests"))) if p is not None)
        manifest_list = _path(repo, snapshot.get("manifest-list"))
        if manifest_list is not None and _readable(store, authorize, repo, ref, manifest_list, add):
            for entry in records(store.read_bytes(authorize, repo, ref, manifest_list), manifest_list):
                path = _path(repo, entry.get("manifest_path"))
                if path is not None:
                    manifests.append(path)
    for manifest in manifests:
        if not _readable(store, authorize, repo, ref, manifest, add):
            continue
        for entry in records(store.read_bytes(authorize, repo, ref, manifest), manifest):
            data_file = entry.get("data_file")
            if isinstance(data_file, dict):
                add(_path(repo, data_file.get("file_path")))
    return list(found)


def _readable(
    store: TableStore, authorize: Authorize, repo: str, ref: str, path: str, add: Callable[[str | None], bool]
) -> bool:
    """Whether a manifest list or manifest is to be read: under the location, seen for the first time, and
    there (a file already gone names nothing more to delete)."""
    return add(path) and store.exists(authorize, repo, ref, path)
