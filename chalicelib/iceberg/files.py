"""Tables whose files engines write straight to the storage namespace (docs/iceberg.md, "Data files").

Such a table has a **physical root**: a fresh address under the repository's ``data/`` (new_physical_address)
that no branch name is part of. Engines write data files, manifests and manifest lists under it with the
credentials the catalog vends (credentials.py); the catalog writes the metadata JSON files there too. The table's
Iceberg location is that root, so every absolute path its manifests keep names the store, never a branch: a table
merged into main reads the same bytes after the branch it was written on is deleted.

At each table commit the catalog **links** what the new snapshots add (read from their manifest lists and
manifests, avro.py) as objects of the branch, under the table's path in the repository (``iceberg/<ns>/<table>-
<uuid>/``, the same relative path as under the root): staged entries pointing at those physical addresses. A
commit, diff, merge, revert, tag or GC then sees every file of the table as an ordinary object. The links are
staged before the table's pointer moves, so a pointer never names a snapshot whose files GC could take for garbage;
a commit that then loses its race leaves links to files that exist, which the retry links again (same entries).

Tables created by earlier versions (and tables given a location of their own, ``s3://<repo>/<ref>/<path>``) have
no root: engines reach their files through the S3 gateway on the branch, as before.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

from chalicelib.graveler import errors
from chalicelib.graveler.records import Entry

from .avro import records
from .errors import BadRequest
from .metadata import Json
from .store import READ, WRITE, Authorize, TableStore

__all__ = ["LinkedFile", "TableFiles", "added_snapshots"]

# Status of a manifest entry (the Iceberg spec): 0 existing, 1 added, 2 deleted.
_ADDED = 1
# Files linked at a time (each a HEAD of the file and a staged write).
_LINK_WORKERS = 16


@dataclass(frozen=True, slots=True)
class LinkedFile:
    """One file of the table: its address in the store and its path in the repository."""

    address: str
    path: str
    size: int | None = None
    data: bytes | None = None  # the bytes when the catalog read them (manifests): no HEAD needed


def added_snapshots(before: Json | None, after: Json) -> list[Json]:
    """The snapshots ``after`` has and ``before`` has not."""
    known = {s.get("snapshot-id") for s in (before or {}).get("snapshots") or []}
    return [s for s in after.get("snapshots") or [] if s.get("snapshot-id") not in known]


class TableFiles:
    """The physical side of one repository's tables: writing metadata files under a root, and linking files."""

    def __init__(self, store: TableStore, repo: str) -> None:
        self.store = store
        self.repo = repo
        namespace = store.engine.repositories.get_repository(repo).storage_namespace
        self.files = store.engine.repositories.namespace_files(namespace)

    def new_root(self) -> str:
        return self.store.engine.objects.new_physical_address(self.repo)

    def path_of(self, root: str, location_path: str, address: str) -> str:
        """The repository path of ``address``: the same relative path under the table's location as under its
        root. BadRequest for a file outside the root (a table with a root keeps every file under it)."""
        if not address.startswith(root + "/"):
            raise BadRequest(f"{address} is outside the table's location {root}")
        return location_path + "/" + address[len(root) + 1 :]

    def write_metadata(
        self, authorize: Authorize, branch: str, root: str, location_path: str, path: str, metadata: bytes
    ) -> None:
        """Writes a metadata JSON file under the root and links it at ``path`` (under ``location_path``)."""
        address = root + path[len(location_path) :]
        self.store.may(authorize, WRITE, self.repo, path)
        stored = self.files.put(address, metadata)
        entry = Entry(address, stored.size, stored.etag, int(self.store.engine.ports.clock()), "application/json")
        self.store.engine.objects.link_object(self.repo, branch, path, entry)

    def snapshot_files(self, authorize: Authorize, root: str, location_path: str, snapshot: Json) -> list[LinkedFile]:
        """What ``snapshot`` adds: its manifest list, the manifests it added, and their added data and delete
        files (statistics files too, when under the root)."""
        manifest_list = snapshot.get("manifest-list")
        if not isinstance(manifest_list, str):
            return []  # a v1 snapshot with inline manifests: nothing the catalog can read
        snapshot_id = snapshot.get("snapshot-id")
        list_path = self.path_of(root, location_path, manifest_list)
        listing = self._read(authorize, manifest_list, list_path)
        found = [LinkedFile(manifest_list, list_path, len(listing), listing)]
        for manifest in records(listing, list_path):
            if manifest.get("added_snapshot_id") not in (snapshot_id, None):
                continue  # carried over from an earlier snapshot: linked then
            address = str(manifest.get("manifest_path"))
            path = self.path_of(root, location_path, address)
            data = self._read(authorize, address, path)
            found.append(LinkedFile(address, path, len(data), data))
            for entry in records(data, path):
                data_file = entry.get("data_file")
                if entry.get("status") == _ADDED and isinstance(data_file, dict):
                    file_path = str(data_file.get("file_path"))
                    size = data_file.get("file_size_in_bytes")
                    found.append(
                        LinkedFile(file_path, self.path_of(root, location_path, file_path), int(size or 0) or None)
                    )
        return found

    def _read(self, authorize: Authorize, address: str, path: str) -> bytes:
        """A manifest list or manifest in the store, read as the caller's read of its path would be."""
        self.store.may(authorize, READ, self.repo, path)
        try:
            return self.files.get(address)
        except errors.ObjectNotFound:
            raise BadRequest(f"the snapshot names {address}, which does not exist") from None

    def link(self, authorize: Authorize, branch: str, linked: Sequence[LinkedFile]) -> None:
        """Stages every file at its path on the branch, each authorized first as the caller's write of that path
        (TableStore.may, the catalog's one authorization point)."""
        self.store.may(authorize, WRITE, self.repo, *(f.path for f in linked))
        now = int(self.store.engine.ports.clock())

        def link_one(file: LinkedFile) -> None:
            if file.data is not None:
                size, etag = len(file.data), hashlib.md5(file.data).hexdigest()
            else:
                try:
                    stat = self.files.stat(file.address)
                except errors.ObjectNotFound:
                    raise BadRequest(f"the snapshot names {file.address}, which does not exist") from None
                size, etag = stat.size, stat.etag
            if file.size is not None and size != file.size:
                raise BadRequest(f"{file.address} holds {size} bytes, its manifest says {file.size}")
            self.store.engine.objects.link_object(self.repo, branch, file.path, Entry(file.address, size, etag, now))

        from concurrent.futures import ThreadPoolExecutor  # only when a commit links files: not at cold start

        with ThreadPoolExecutor(max_workers=_LINK_WORKERS) as pool:
            list(pool.map(link_one, linked))
