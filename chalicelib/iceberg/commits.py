"""A table commit in two steps, so that one table and a transaction of several share them: ``prepare`` checks the
requirements against the metadata the pointer names now, applies the updates and writes the next metadata file
(a new object under the table's location, never overwriting one); ``move`` moves the pointer with a conditional
write on the ETag it was read with (``move_all``: the pointers of several tables in one atomic write). Of two commits
that read the same pointer, one moves it and the other gets CommitFailed (409): the client reloads the table and
retries."""

from __future__ import annotations

import contextlib
import json
import re
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from chalicelib.graveler import errors

from . import bounds
from .errors import BadRequest, CommitFailed, NoSuchTable, TableAlreadyExists
from .layout import TableName, metadata_file_path, path_of_uri, uri
from .metadata import Json, empty_metadata
from .requirements import AssertCreate, TableRequirement, check_requirements
from .store import Authorize, Stored, TableStore, Write
from .updates import TableUpdate, apply_updates

if TYPE_CHECKING:
    from .files import TableFiles

__all__ = ["Loaded", "Prepared", "TableCommits"]

# How many earlier metadata files a metadata's metadata-log names (Iceberg's default of the property).
PREVIOUS_VERSIONS_MAX = 100
_VERSION = re.compile(r"(\d+)-[^/]*\.metadata\.json$")


@dataclass(frozen=True, slots=True)
class Loaded:
    """A table as its pointer names it at a ref."""

    table: TableName
    ref: str
    pointer: Stored
    metadata: Json

    @property
    def metadata_path(self) -> str:
        return str(self.pointer.value["metadata-path"])

    @property
    def location_path(self) -> str:
        return str(self.pointer.value["location-path"])

    @property
    def version(self) -> int:
        return int(self.pointer.value.get("version", 0))

    @property
    def root(self) -> str | None:
        """The table's physical root (files.py), None for a table engines write through the S3 gateway."""
        return root_of(self.pointer.value)

    def rendered(self, only_referenced: bool = False) -> Json:
        """The metadata as this ref shows it: the location engines write next (the physical root, or for a table
        without one the location at this ref). ``only_referenced``: the snapshots that a branch or tag of the
        table names, and no other (the spec's ``snapshots=refs``)."""
        repo = self.table.namespace.repo
        rendered = {**self.metadata, "location": self.root or uri(repo, self.ref, self.location_path)}
        if only_referenced:
            named = {ref.get("snapshot-id") for ref in (self.metadata.get("refs") or {}).values()}
            named.add(self.metadata.get("current-snapshot-id"))
            rendered["snapshots"] = [s for s in self.metadata.get("snapshots") or [] if s.get("snapshot-id") in named]
        return rendered

    def metadata_location(self) -> str:
        return metadata_location(self.table.namespace.repo, self.ref, self.pointer.value)


@dataclass(frozen=True, slots=True)
class Prepared:
    """A commit whose metadata file is written and whose pointer is still to move (``expected`` None: a create)."""

    table: TableName
    branch: str
    expected: Stored | None
    pointer: Json
    metadata: Json

    @property
    def metadata_location(self) -> str:
        return metadata_location(self.table.namespace.repo, self.branch, self.pointer)


def root_of(pointer: Json) -> str | None:
    root = pointer.get("physical-root")
    return root if isinstance(root, str) and root else None


def metadata_location(repo: str, ref: str, pointer: Json) -> str:
    """Where engines read the metadata file: in the store under the root, or through the gateway at ``ref``."""
    root, path = root_of(pointer), str(pointer["metadata-path"])
    if root is not None:
        return root + path[len(str(pointer["location-path"])) :]
    return uri(repo, ref, path)


def version_of(path: str) -> int:
    match = _VERSION.search(path)
    return int(match.group(1)) if match else 0


class TableCommits:
    """``physical``: whether new tables get a root (files.py), asked at each create (the deployment's vendor of
    credentials may come later). Shared by every request: each call's ``authorize`` is its caller's."""

    def __init__(self, store: TableStore, physical: Callable[[], bool] = lambda: False) -> None:
        self.store = store
        self.physical = physical

    def files(self, table: TableName) -> TableFiles:
        from .files import TableFiles  # tables in the store only: not at cold start

        return TableFiles(self.store, table.namespace.repo)

    def now_ms(self) -> int:
        return int(self.store.engine.ports.clock() * 1000)

    def load(self, authorize: Authorize, table: TableName, ref: str) -> Loaded | None:
        repo = table.namespace.repo
        pointer = self.store.read(authorize, repo, ref, table.pointer)
        if pointer is None:
            return None
        path = pointer.value.get("metadata-path")
        metadata = self.store.read(authorize, repo, ref, str(path)) if isinstance(path, str) else None
        if metadata is None:
            raise NoSuchTable(f"table {table}: its metadata file {path} is missing at {ref}")
        return Loaded(table, ref, pointer, metadata.value)

    def write_new(
        self,
        authorize: Authorize,
        table: TableName,
        branch: str,
        metadata: Json,
        location_path: str,
        version: int,
        root: str | None = None,
    ) -> Json:
        """Writes the metadata file (under the root, linked, for a table with one); the pointer that would name
        it. BadRequest for metadata a load could not answer (bounds.py)."""
        bounds.check_loadable(metadata, table)
        path = metadata_file_path(location_path, version, str(uuid.uuid4()))
        if root is None:
            self.store.write(authorize, table.namespace.repo, branch, path, metadata)
        else:
            data = json.dumps(metadata, separators=(",", ":")).encode()
            self.files(table).write_metadata(authorize, branch, root, location_path, path, data)
        pointer = {
            "metadata-path": path,
            "location-path": location_path,
            "version": version,
            "table-uuid": metadata.get("table-uuid"),
        }
        return pointer if root is None else {**pointer, "physical-root": root}

    def link_added(
        self, authorize: Authorize, table: TableName, branch: str, before: Json | None, after: Json, pointer: Json
    ) -> None:
        """Links the files of the snapshots ``after`` adds (a table with a root only: files.py)."""
        root = root_of(pointer)
        if root is None:
            return
        from .files import added_snapshots

        files = self.files(table)
        linked = [
            found
            for snapshot in added_snapshots(before, after)
            for found in files.snapshot_files(authorize, root, str(pointer["location-path"]), snapshot)
        ]
        if linked:
            files.link(authorize, branch, linked)

    def prepare(
        self,
        authorize: Authorize,
        table: TableName,
        branch: str,
        requirements: Sequence[TableRequirement],
        updates: Sequence[TableUpdate],
    ) -> Prepared:
        """Raises CommitFailed for a requirement that does not hold, NoSuchTable for a table that does not exist
        (unless the commit asserts its creation: a staged create), BadRequest for a malformed update."""
        current = self.load(authorize, table, branch)
        repo = table.namespace.repo
        if current is None:
            if not any(isinstance(r, AssertCreate) for r in requirements):
                raise NoSuchTable(f"table {table} does not exist")
            check_requirements(None, requirements)
            table_uuid = str(uuid.uuid4())
            physical = self.physical()
            root = self.files(table).new_root() if physical else None
            base = empty_metadata(
                table_uuid, root or uri(repo, branch, table.default_location(table_uuid)), self.now_ms()
            )
            metadata = apply_updates(base, updates, self.now_ms())
            location = str(metadata["location"])
            if physical and location.startswith(self.files(table).files.namespace + "/data/"):
                # The root the staged create answered (the client sets it back as the location): engines may
                # already have written the table's first files under it (CTAS).
                root, location_path = location, table.default_location(str(metadata.get("table-uuid", table_uuid)))
            else:
                root, location_path = None, path_of_uri(repo, location)
                metadata["location"] = uri(repo, branch, location_path)
            self.store.may_write_location(authorize, repo, location_path)
            pointer = self.write_new(authorize, table, branch, metadata, location_path, 0, root)
            self.link_added(authorize, table, branch, None, metadata, pointer)
            return Prepared(table, branch, None, pointer, metadata)
        check_requirements(current.metadata, requirements)
        metadata = apply_updates(current.metadata, updates, self.now_ms())
        location_path = current.location_path
        root = current.root
        if root is not None:
            if metadata.get("location") not in (root, current.metadata.get("location")):
                raise BadRequest("the location of a table whose files are in the store cannot change")
            metadata["location"] = root
        else:
            if metadata.get("location") != current.metadata.get("location"):
                location_path = path_of_uri(repo, str(metadata["location"]))
                self.store.may_write_location(authorize, repo, location_path)
            metadata["location"] = uri(repo, branch, location_path)
        log = [
            *(current.metadata.get("metadata-log") or []),
            {"timestamp-ms": current.metadata.get("last-updated-ms"), "metadata-file": current.metadata_location()},
        ]
        keep = _int_property(metadata, "write.metadata.previous-versions-max", PREVIOUS_VERSIONS_MAX)
        metadata["metadata-log"] = log[-keep:] if keep > 0 else []
        pointer = self.write_new(authorize, table, branch, metadata, location_path, current.version + 1, root)
        self.link_added(authorize, table, branch, current.metadata, metadata, pointer)
        return Prepared(table, branch, current.pointer, pointer, metadata)

    def move(self, authorize: Authorize, prepared: Prepared) -> str:
        """Moves the pointer (the ETag now there); CommitFailed when another commit moved it first (or created the
        table, for a create), with the prepared metadata file withdrawn."""
        repo, path = prepared.table.namespace.repo, prepared.table.pointer
        try:
            if prepared.expected is None:
                return self.store.write(authorize, repo, prepared.branch, path, prepared.pointer, if_absent=True)
            etag = prepared.expected.etag
            return self.store.write(authorize, repo, prepared.branch, path, prepared.pointer, if_match=etag)
        except errors.PreconditionFailed:
            self.withdraw(authorize, prepared)
            if prepared.expected is None:
                raise TableAlreadyExists(f"table {prepared.table} was created concurrently") from None
            raise CommitFailed(
                f"table {prepared.table} was changed by another commit since it was read: reload it and retry"
            ) from None

    def move_all(self, authorize: Authorize, prepared: Sequence[Prepared]) -> list[str]:
        """Moves every pointer (of one branch) in one atomic write, each on the ETag it was read with (a create:
        on nothing there): a reader of the branch sees all of the tables committed or none, and a crash before the
        write leaves every pointer where it was (the metadata files written are clutter no pointer names).
        CommitFailed when another commit moved (or created) one of them first, with no pointer moved and the
        prepared metadata files withdrawn."""
        writes = [
            Write(p.table.pointer, p.pointer, if_absent=True)
            if p.expected is None
            else Write(p.table.pointer, p.pointer, if_match=p.expected.etag)
            for p in prepared
        ]
        try:
            return self.store.write_all(authorize, prepared[0].table.namespace.repo, prepared[0].branch, writes)
        except (errors.PreconditionFailed, errors.Invalid) as e:
            for item in prepared:
                self.withdraw(authorize, item)
            if isinstance(e, errors.Invalid):
                raise
            names = ", ".join(str(p.table) for p in prepared)
            raise CommitFailed(
                f"one of the tables {names} was changed by another commit since it was read: reload them and retry;"
                " none was changed"
            ) from None

    def withdraw(self, authorize: Authorize, prepared: Prepared) -> None:
        """Best effort: a metadata file no pointer names is only clutter on the branch."""
        with contextlib.suppress(errors.GravelerError):
            metadata_path = str(prepared.pointer["metadata-path"])
            self.store.delete(authorize, prepared.table.namespace.repo, prepared.branch, metadata_path)


def _int_property(metadata: Json, name: str, default: int) -> int:
    try:
        return int((metadata.get("properties") or {}).get(name, default))
    except ValueError:
        return default
