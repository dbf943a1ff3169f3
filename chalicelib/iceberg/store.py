"""The catalog's reads and writes of repository objects, through the engine's public use cases only: JSON objects
at a ref, conditional writes on a branch, deletes and listings. Refs that do not resolve become the spec's
NoSuchNamespace; writes at refs that are not branches, NotABranch.

This is the catalog's one authorization point for objects: every object it reads, writes or deletes on a caller's
behalf passes ``may`` first, as the lakeFS API would authorize the caller's own request for it (fs:ReadObject,
fs:WriteObject, fs:DeleteObject on that repository and path; fs:ListObjects on the repository for a listing),
with the API's policy engine. Nothing else in the catalog touches an object, so no table's location, metadata or
manifest can lead it to a path the caller could not reach through the API."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from chalicelib.auth.policies import Permission, object_arn, repository_arn
from chalicelib.graveler import errors
from chalicelib.graveler.usecases.conditional_uploads import ConditionalObject

from . import bounds
from .errors import BadRequest, NoSuchNamespace, NotABranch
from .layout import Namespace
from .metadata import Json

if TYPE_CHECKING:
    from .ports import VersionedObjects

__all__ = ["Authorize", "Stored", "TableStore", "Write"]

JSON_TYPE = "application/json"
READ, WRITE, DELETE = "fs:ReadObject", "fs:WriteObject", "fs:DeleteObject"
# Checks that the caller may do all of these (raises Forbidden): the lakeFS API's users, policies and ARNs.
Authorize = Callable[[Sequence[Permission]], None]
# Paths a bulk delete sends at once (the engine's MAX_DELETE_PATHS).
_DELETE_BATCH = 1000


@dataclass(frozen=True, slots=True)
class Stored:
    """A JSON object as read, with the ETag a conditional write of it expects."""

    value: Json
    etag: str


@dataclass(frozen=True, slots=True)
class Write:
    """One JSON object of an atomic write and its condition: ``if_match`` the ETag it must still have, or
    ``if_absent`` (nothing there)."""

    path: str
    value: Json
    if_match: str | None = None
    if_absent: bool = False


class TableStore:
    """One per container, shared by every request: the caller is each call's ``authorize`` (its permissions),
    never kept here."""

    def __init__(self, engine: VersionedObjects) -> None:
        self.engine = engine

    def may(self, authorize: Authorize, action: str, repo: str, *paths: str) -> None:
        """Forbidden unless the caller may do ``action`` on every one of these objects."""
        authorize([Permission(action, object_arn(repo, p)) for p in paths])

    def may_write_location(self, authorize: Authorize, repo: str, location: str) -> None:
        """Forbidden unless the caller may write a table's files at ``location`` (a path): a table's location is
        where the catalog writes its metadata files and engines its data, and what a purge deletes from."""
        self.may(authorize, WRITE, repo, location.rstrip("/") + "/metadata/", location.rstrip("/") + "/data/")

    def check_ref(self, namespace: Namespace) -> None:
        """NoSuchNamespace unless the repository exists and the ref resolves."""
        try:
            self.engine.repositories.get_repository(namespace.repo)
            if namespace.ref is not None:
                self.engine.commits.resolve(namespace.repo, namespace.ref)
        except (errors.NotFound, errors.InvalidRef, errors.InvalidName) as e:
            raise NoSuchNamespace(f"namespace {'.'.join(namespace.parts)} does not exist: {e}") from e

    def check_branch(self, namespace: Namespace) -> str:
        """The branch a write goes to; NotABranch for a tag or commit, NoSuchNamespace for nothing at all."""
        ref = namespace.ref_or_fail()
        self.check_ref(namespace)
        try:
            self.engine.branches.get_branch(namespace.repo, ref)
        except (errors.NotFound, errors.Invalid):
            raise NotABranch(
                f"{ref} is not a branch of {namespace.repo}: tables are read at any ref, written on branches only"
            ) from None
        return ref

    def read(self, authorize: Authorize, repo: str, ref: str, path: str) -> Stored | None:
        self.may(authorize, READ, repo, path)
        try:
            entry = self.engine.objects.stat_object(repo, ref, path)
        except errors.ObjectNotFound:
            return None
        value = bounds.loads(self.engine.objects.read_object(repo, entry), path)
        if not isinstance(value, dict):
            raise BadRequest(f"{path} is not a JSON object")
        return Stored(value, entry.etag)

    def read_bytes(self, authorize: Authorize, repo: str, ref: str, path: str) -> bytes:
        """An object's content; BadRequest when it is not there."""
        self.may(authorize, READ, repo, path)
        try:
            entry = self.engine.objects.stat_object(repo, ref, path)
        except errors.ObjectNotFound:
            raise BadRequest(f"{path} does not exist at {ref}") from None
        return self.engine.objects.read_object(repo, entry)

    def exists(self, authorize: Authorize, repo: str, ref: str, path: str) -> bool:
        self.may(authorize, READ, repo, path)
        try:
            self.engine.objects.stat_object(repo, ref, path)
            return True
        except errors.ObjectNotFound:
            return False

    def write(
        self,
        authorize: Authorize,
        repo: str,
        branch: str,
        path: str,
        value: Json,
        if_match: str | None = None,
        if_absent: bool = False,
    ) -> str:
        """The ETag written. PreconditionFailed when ``if_match`` (an ETag) no longer names the object there, or
        ``if_absent`` and one is there."""
        self.may(authorize, WRITE, repo, path)
        data = json.dumps(value, separators=(",", ":")).encode()
        entry = self.engine.objects.upload_object(
            repo, branch, path, data, content_type=JSON_TYPE, if_absent=if_absent, if_match=if_match
        )
        return entry.etag

    def write_all(self, authorize: Authorize, repo: str, branch: str, writes: Sequence[Write]) -> list[str]:
        """Every object or none, in one atomic write on the branch (staged.uploads.upload_objects_if): no reader sees
        some written without the others. The ETags written, in order. PreconditionFailed when one condition no longer
        holds, with nothing written; Invalid beyond what one atomic write takes (MAX_ATOMIC_CHANGES objects)."""
        self.may(authorize, WRITE, repo, *(w.path for w in writes))
        objects = [
            ConditionalObject(
                w.path,
                json.dumps(w.value, separators=(",", ":")).encode(),
                content_type=JSON_TYPE,
                if_match=w.if_match,
                if_absent=w.if_absent,
            )
            for w in writes
        ]
        return [entry.etag for entry in self.engine.staged.uploads.upload_objects_if(repo, branch, objects)]

    def delete(self, authorize: Authorize, repo: str, branch: str, path: str, if_match: str | None = None) -> None:
        """``if_match``: only while the object there has that ETag (PreconditionFailed otherwise)."""
        self.may(authorize, DELETE, repo, path)
        if if_match is None:
            self.engine.objects.delete_object(repo, branch, path)
        else:
            self.engine.staged.deletes.delete_object_if(repo, branch, path, if_match)

    def undo(self, authorize: Authorize, repo: str, branch: str, path: str, etag: str) -> None:
        """Withdraws an object this very request wrote (``etag``: what its write answered; nothing else is deleted,
        PreconditionFailed if the object changed since): undoing a write needs what the write needed."""
        self.may(authorize, WRITE, repo, path)
        self.engine.staged.deletes.delete_object_if(repo, branch, path, etag)

    def delete_all(self, authorize: Authorize, repo: str, branch: str, paths: Sequence[str]) -> None:
        """Deletes these objects on the branch (a path with nothing there is skipped), once the caller may delete
        every one of them: a path it may not delete fails the whole call before anything is deleted."""
        self.may(authorize, DELETE, repo, *paths)
        for start in range(0, len(paths), _DELETE_BATCH):
            failures = self.engine.objects.delete_objects(repo, branch, list(paths[start : start + _DELETE_BATCH]))
            if failures:
                raise failures[0][1]

    def children(
        self, authorize: Authorize, repo: str, ref: str, directory: str, after: str = "", amount: int = 1000
    ) -> Iterator[tuple[str, bool]]:
        """(name, is a directory) of the direct children of ``directory`` at the ref, in key order, after the child
        whose key is ``directory + after`` (a directory's key ends with "/": the listing seeks past all of it)."""
        authorize([Permission("fs:ListObjects", repository_arn(repo))])
        start = directory + after if after else ""
        while True:
            page = self.engine.objects.list_objects(
                repo, ref, prefix=directory, delimiter="/", after=start, amount=amount
            )
            for listed in page.results:
                key = str(listed.key)
                yield key[len(directory) :].rstrip("/"), listed.entry is None
                start = key
            if not page.has_more:
                return
