"""Tables: list, create (also staged), load, exists, commit, drop (with or without purge), register, rename within
a branch, and multi-table transactions on one branch. Permissions are the lakeFS API's, on the objects a table
lives in: its pointer, and its metadata files under its location."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from chalicelib.auth.policies import Permission, repository_arn
from chalicelib.graveler import errors
from chalicelib.graveler.usecases.conditional_uploads import MAX_ATOMIC_CHANGES

from . import bounds
from .commits import Loaded, Prepared, TableCommits, version_of
from .errors import BadRequest, CommitFailed, NoSuchNamespace, NoSuchTable, TableAlreadyExists
from .layout import POINTER_SUFFIX, Namespace, TableName, path_of_uri, uri
from .metadata import Json, new_table_metadata
from .namespaces import Authorize, Namespaces
from .requirements import parse_requirements
from .store import TableStore
from .updates import parse_updates

__all__ = ["TablePage", "Tables"]

# How often a drop or a rename starts again when a commit of the table came in between.
RACE_TRIES = 3


@dataclass(frozen=True, slots=True)
class TablePage:
    identifiers: list[Json]
    next_token: str | None


def _list(value: object, what: str) -> list[Json]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise BadRequest(f"{what} must be a list of objects")
    return value


class Tables:
    """Shared by every request: each call's ``authorize`` checks its own caller (store.py). ``physical``: whether
    new tables keep their files in the store (files.py)."""

    def __init__(self, store: TableStore, namespaces: Namespaces, physical: Callable[[], bool] = lambda: False) -> None:
        self.store = store
        self.namespaces = namespaces
        self.commits = TableCommits(store, physical)

    def _may(self, authorize: Authorize, action: str, table: TableName, *paths: str) -> None:
        """Checked before anything is done, so that a refusal changes nothing; the store checks every object it
        touches again (store.py), including those a request names only indirectly."""
        self.store.may(authorize, action, table.namespace.repo, table.pointer, *paths)

    def may_write(self, authorize: Authorize, table: TableName) -> bool:
        """Whether the caller may commit to the table (its vended credentials may write, files.py)."""
        try:
            self._may(authorize, "fs:WriteObject", table)
        except errors.Forbidden:
            return False
        return True

    def list(self, authorize: Authorize, namespace: Namespace, token: str | None, size: int) -> TablePage:
        authorize([Permission("fs:ListObjects", repository_arn(namespace.repo))])
        if not namespace.in_ref:
            # A repository or a ref holds no tables, and is a namespace all the same (listed and loaded): its list
            # is empty, not an error. DuckDB lists the tables of every namespace it browses and stops at an error.
            self.namespaces.load(authorize, namespace)
            return TablePage([], None)
        self.namespaces.require(authorize, namespace)
        found: list[Json] = []
        after = token + POINTER_SUFFIX if token else ""
        for name, is_directory in self.store.children(
            authorize, namespace.repo, namespace.ref_or_fail(), namespace.directory, after
        ):
            if is_directory or not name.endswith(POINTER_SUFFIX):
                continue
            if len(found) == size:
                return TablePage(found, found[-1]["name"])
            found.append({"namespace": namespace.parts, "name": name.removesuffix(POINTER_SUFFIX)})
        return TablePage(found, None)

    def load(self, authorize: Authorize, table: TableName) -> Loaded:
        self._may(authorize, "fs:ReadObject", table)
        try:
            self.store.check_ref(table.namespace)
            loaded = self.commits.load(authorize, table, table.namespace.ref_or_fail())
            if loaded is None:
                self.namespaces.require(authorize, table.namespace)
        except NoSuchNamespace as e:
            # The spec's loadTable answers NoSuchTableException for a table whose namespace is missing too, and
            # clients rely on it: Spark looks a metadata table up (``t.snapshots``) first as table ``snapshots`` of
            # namespace ``...t``, and falls back to it only on NoSuchTableException.
            raise NoSuchTable(f"table {table} does not exist: {e}") from e
        if loaded is None:
            raise NoSuchTable(f"table {table} does not exist")
        return loaded

    def exists(self, authorize: Authorize, table: TableName) -> None:
        self.load(authorize, table)

    def create(self, authorize: Authorize, namespace: Namespace, request: Json) -> tuple[Json, str | None, str | None]:
        """(metadata, metadata location, physical root); the location is None for a staged create, which writes
        nothing: the table comes to exist with the commit that asserts its creation."""
        table = TableName.of(namespace, request.get("name"))
        table_uuid = str(uuid.uuid4())
        location = request.get("location")
        if location is not None and not isinstance(location, str):
            raise BadRequest("location must be a string")
        repo = namespace.repo
        location_path = path_of_uri(repo, location) if location else table.default_location(table_uuid)
        self._may(authorize, "fs:WriteObject", table)
        self.store.may_write_location(authorize, repo, location_path)
        branch = self.store.check_branch(namespace)
        self.namespaces.require(authorize, namespace)
        if self.store.exists(authorize, repo, branch, table.pointer):
            raise TableAlreadyExists(f"table {table} already exists")
        # A table of the store (files.py) unless the client chose a location (a path of the repository).
        root = self.commits.files(table).new_root() if self.commits.physical() and not location else None
        metadata = new_table_metadata(
            request, root or uri(repo, branch, location_path), table_uuid, self.commits.now_ms()
        )
        if request.get("stage-create"):
            return metadata, None, root
        pointer = self.commits.write_new(authorize, table, branch, metadata, location_path, 0, root)
        prepared = Prepared(table, branch, None, pointer, metadata)
        self.commits.move(authorize, prepared)
        return metadata, prepared.metadata_location, root

    def commit(self, authorize: Authorize, table: TableName, request: Json) -> Prepared:
        requirements = parse_requirements(request.get("requirements"))
        updates = parse_updates(request.get("updates"))
        self._may(authorize, "fs:WriteObject", table)
        branch = self.store.check_branch(table.namespace)
        self.namespaces.require(authorize, table.namespace)
        prepared = self.commits.prepare(authorize, table, branch, requirements, updates)
        self.commits.move(authorize, prepared)
        return prepared

    def drop(self, authorize: Authorize, table: TableName, purge: bool) -> None:
        """The pointer is deleted only while it is the one read (a conditional delete): a commit that came in
        between is dropped with the table, as if it had come first, never left half-dropped."""
        for _ in range(RACE_TRIES):
            loaded = self._loaded_on_branch(authorize, table, "fs:DeleteObject")
            files = self._files(authorize, loaded) if purge else []
            try:
                self.store.delete(
                    authorize, table.namespace.repo, loaded.ref, table.pointer, if_match=loaded.pointer.etag
                )
                break
            except errors.PreconditionFailed:
                continue
        else:
            raise errors.TooManyTries(f"table {table} kept changing while it was dropped")
        if files:
            # Staged deletes: once committed, and once no kept commit names them, GC reclaims the files.
            self.store.delete_all(authorize, table.namespace.repo, loaded.ref, files)

    def _files(self, authorize: Authorize, loaded: Loaded) -> Sequence[str]:
        """What a purge of the table deletes (purge.py: the files its metadata names, under its location), once
        the caller is known to may delete every one of them: a purge is refused whole, before the pointer goes."""
        # Imported here: purges are rare, and a cold start imports neither the purge nor its Avro reader.
        from .purge import table_files

        repo = loaded.table.namespace.repo
        files = table_files(
            self.store,
            authorize,
            repo,
            loaded.ref,
            loaded.metadata_path,
            loaded.metadata,
            loaded.location_path,
            loaded.root,
        )
        self.store.may(authorize, "fs:DeleteObject", repo, *files)
        return files

    def _loaded_on_branch(self, authorize: Authorize, table: TableName, action: str) -> Loaded:
        self._may(authorize, action, table)
        branch = self.store.check_branch(table.namespace)
        loaded = self.commits.load(authorize, table, branch)
        if loaded is None:
            self.namespaces.require(authorize, table.namespace)
            raise NoSuchTable(f"table {table} does not exist")
        return loaded

    def register(self, authorize: Authorize, namespace: Namespace, request: Json) -> Loaded:
        table = TableName.of(namespace, request.get("name"))
        location = request.get("metadata-location")
        if not isinstance(location, str):
            raise BadRequest("metadata-location is required")
        repo = namespace.repo
        path = path_of_uri(repo, location)
        self._may(authorize, "fs:WriteObject", table, path)
        branch = self.store.check_branch(namespace)
        self.namespaces.require(authorize, namespace)
        metadata = self.store.read(authorize, repo, branch, path)
        if metadata is None:
            raise BadRequest(f"no metadata file at {path} on branch {branch}")
        bounds.check_loadable(metadata.value, table)
        location_path = path_of_uri(repo, str(metadata.value.get("location", "")))
        self.store.may_write_location(authorize, repo, location_path)
        pointer = {
            "metadata-path": path,
            "location-path": location_path,
            "version": version_of(path),
            "table-uuid": metadata.value.get("table-uuid"),
        }
        existing = self.store.read(authorize, repo, branch, table.pointer)
        if existing is not None and not request.get("overwrite"):
            raise TableAlreadyExists(f"table {table} already exists")
        try:
            if existing is None:
                etag = self.store.write(authorize, repo, branch, table.pointer, pointer, if_absent=True)
            else:
                etag = self.store.write(authorize, repo, branch, table.pointer, pointer, if_match=existing.etag)
        except errors.PreconditionFailed:
            raise CommitFailed(f"table {table} changed while it was registered") from None
        return Loaded(table, branch, type(existing or metadata)(pointer, etag), metadata.value)

    def rename(self, authorize: Authorize, request: Json) -> None:
        source = TableName.from_identifier(request.get("source"))
        destination = TableName.from_identifier(request.get("destination"))
        src_ns, dst_ns = source.namespace, destination.namespace
        if (src_ns.repo, src_ns.ref) != (dst_ns.repo, dst_ns.ref):
            raise BadRequest("a table is renamed within its branch: the repository and ref levels must not change")
        self._may(authorize, "fs:DeleteObject", source)
        self._may(authorize, "fs:WriteObject", destination)
        for _ in range(RACE_TRIES):
            if self._rename_once(authorize, source, destination):
                return
        raise errors.TooManyTries(f"table {source} kept changing while it was renamed")

    def _rename_once(self, authorize: Authorize, source: TableName, destination: TableName) -> bool:
        """Writes the destination's pointer, then deletes the source's only while it is the one copied. False when
        a commit of the source came in between: the destination is withdrawn and the rename starts again from the
        source as that commit left it, so the commit moves with the table. Readers may see both names for a
        moment: a rename is two writes."""
        loaded = self._loaded_on_branch(authorize, source, "fs:ReadObject")
        self.namespaces.require(authorize, destination.namespace)
        repo = source.namespace.repo
        try:
            written = self.store.write(
                authorize, repo, loaded.ref, destination.pointer, loaded.pointer.value, if_absent=True
            )
        except errors.PreconditionFailed:
            raise TableAlreadyExists(f"table {destination} already exists") from None
        try:
            self.store.delete(authorize, repo, loaded.ref, source.pointer, if_match=loaded.pointer.etag)
            return True
        except errors.PreconditionFailed:
            with contextlib.suppress(errors.PreconditionFailed):
                self.store.undo(authorize, repo, loaded.ref, destination.pointer, written)
            return False

    def transaction(self, authorize: Authorize, request: Json) -> None:
        """All or nothing on one branch, and isolated: every requirement is checked and every metadata file written
        first; then all of the pointers move in one atomic conditional write (TableCommits.move_all), so a reader
        of the branch sees every table committed or none, a lost race moves none, and a crash before that write
        leaves none moved. At most MAX_ATOMIC_CHANGES tables (one DynamoDB transaction)."""
        changes = _list(request.get("table-changes"), "table-changes")
        if not changes:
            raise BadRequest("table-changes must name at least one table")
        if len(changes) > MAX_ATOMIC_CHANGES:
            raise BadRequest(f"a transaction changes at most {MAX_ATOMIC_CHANGES} tables, not {len(changes)}")
        tables = [TableName.from_identifier(c.get("identifier")) for c in changes]
        parsed = [(parse_requirements(c.get("requirements")), parse_updates(c.get("updates"))) for c in changes]
        if len({str(t) for t in tables}) != len(tables):
            raise BadRequest("a transaction changes each table once")
        places = {(t.namespace.repo, t.namespace.ref) for t in tables}
        if len(places) != 1:
            raise BadRequest("a transaction's tables must all be on one branch of one repository")
        for table in tables:
            self._may(authorize, "fs:WriteObject", table)
        branch = self.store.check_branch(tables[0].namespace)
        prepared: list[Prepared] = []
        try:
            for table, (requirements, updates) in zip(tables, parsed, strict=True):
                self.namespaces.require(authorize, table.namespace)
                prepared.append(self.commits.prepare(authorize, table, branch, requirements, updates))
        except errors.GravelerError:
            for done in prepared:
                self.commits.withdraw(authorize, done)
            raise
        self.commits.move_all(authorize, prepared)
