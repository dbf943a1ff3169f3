"""Refs dump and restore (lakeFS's dumpRefs/restoreRefs and the dump/restore tasks): a repository's commits,
branches and tags written to its storage namespace, and read back into a bare repository, which is how a
repository is rebuilt elsewhere (copy ``_lakefs/`` and ``data/``, create a bare repository there, restore).

lakeFS writes each kind as a metarange of its SSTables and names it by id in ``_lakefs/refs_manifest.json``.
Lakelet keeps the manifest (same name, same JSON: the three ids) and writes each kind as one content-addressed file
of its own, ``_lakefs/refs_dump/<id>.jsonl`` (docs/api.md): a header line
``{"lakelet_refs_dump": 1, "kind": "commits" | "branches" | "tags", "count": N}`` then one JSON record per line in
id order. The id is the SHA-256 of the file, so dumping unchanged refs twice writes the same file. Staged
(uncommitted) changes are not part of a dump, as in lakeFS; restored branches start with empty staging areas.

The restore's steps are refs_restore.py; the repository dump and restore tasks (inline or as workflows, with
their status records) are dump_tasks.py.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from .. import errors
from ..ports import BlockStore, RefStore, StagingStore
from ..records import Commit, CommitID, MetaRangeID, Repository
from .dump_files import FORMAT, ChunkCursor, CommitsFile, header_line

__all__ = [
    "DUMP_DIR",
    "FORMAT",
    "KINDS",
    "DumpProgress",
    "RefsDump",
    "RefsDumpParts",
    "RefsDumper",
    "dump_address",
    "parse_commit",
]

MANIFEST = "_lakefs/refs_manifest.json"
DUMP_DIR = "_lakefs/refs_dump"
KINDS = ("commits", "branches", "tags")
_PAGE = 1000


@dataclass(frozen=True, slots=True)
class RefsDump:
    """The ids of the three files of a dump (lakeFS's RefsDump: its ``*_meta_range_id`` fields)."""

    commits_id: str
    branches_id: str
    tags_id: str

    def to_json(self) -> dict[str, str]:
        return {
            "commits_meta_range_id": self.commits_id,
            "branches_meta_range_id": self.branches_id,
            "tags_meta_range_id": self.tags_id,
        }

    def ids(self) -> dict[str, str]:
        """The id of each kind's file."""
        return {"commits": self.commits_id, "branches": self.branches_id, "tags": self.tags_id}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RefsDump:
        return cls(
            str(data["commits_meta_range_id"]), str(data["branches_meta_range_id"]), str(data["tags_meta_range_id"])
        )


@dataclass(frozen=True, slots=True)
class RefsDumpParts:
    """What dump and restore need: the ref store, the block store and the engine's repository reads."""

    refs: RefStore
    blocks: BlockStore
    repository: Callable[[str], Repository]  # the live repository; raises RepositoryNotFound
    writable_repository: Callable[[str, bool], Repository]  # raises ReadOnlyRepository unless forced
    clock: Callable[[], float]
    # Where a restored branch's staging area is dropped on roll-back (empty unless someone wrote to it meanwhile).
    staging: StagingStore | None = None


def _address(repo: Repository, name: str) -> str:
    return f"{repo.storage_namespace.rstrip('/')}/{name}"


def dump_address(repo: Repository, dump_id: str) -> str:
    """Where the dump file of that id lives in the repository's namespace."""
    return _address(repo, f"{DUMP_DIR}/{dump_id}.jsonl")


def _encode(kind: str, records: Sequence[dict[str, Any]]) -> bytes:
    lines = [json.dumps(r, sort_keys=True) for r in records]
    return header_line(kind, len(records)) + "".join(line + "\n" for line in lines).encode()


@dataclass(frozen=True, slots=True)
class DumpProgress:
    """A dump under way (the dump workflow's loop state): the branches and tags files, written first, and the
    commits file's cursor (dump_files.py)."""

    branches_id: str
    tags_id: str
    commits: ChunkCursor

    def to_json(self) -> dict[str, Any]:
        return {"branches_id": self.branches_id, "tags_id": self.tags_id, "commits": self.commits.to_json()}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> DumpProgress:
        return cls(str(data["branches_id"]), str(data["tags_id"]), ChunkCursor.from_json(data["commits"]))


def _field(d: dict[str, Any], name: str, *kinds: type) -> Any:
    value = d.get(name)
    if not isinstance(value, kinds) or isinstance(value, bool):
        raise errors.Invalid(f"damaged commit record {d.get('id')!r} in the refs dump: {name}")
    return value


def parse_commit(d: Any) -> Commit:
    """A commit record of a dump; raises Invalid for a damaged one (a field missing or of the wrong type)."""
    if not isinstance(d, dict):
        raise errors.Invalid("damaged commit record in the refs dump: not an object")
    metadata = d.get("metadata") or {}
    parents = d.get("parents") or []
    if not isinstance(metadata, dict) or not all(isinstance(v, str) for v in [*metadata, *metadata.values()]):
        raise errors.Invalid(f"damaged commit record {d.get('id')!r} in the refs dump: metadata")
    if not isinstance(parents, list) or not all(isinstance(p, str) and p for p in parents) or len(parents) > 2:
        raise errors.Invalid(f"damaged commit record {d.get('id')!r} in the refs dump: parents")
    commit_id = _field(d, "id", str)
    if not commit_id:
        raise errors.Invalid("damaged commit record in the refs dump: empty id")
    return Commit(
        CommitID(commit_id),
        _field(d, "committer", str),
        _field(d, "message", str),
        float(_field(d, "creation_date", int, float)),
        MetaRangeID(_field(d, "meta_range_id", str)),
        dict(metadata),
        tuple(CommitID(p) for p in parents),
        int(_field(d, "generation", int)),
    )


def _all[T](fetch: Callable[[str, int], list[T]], key: Callable[[T], str]) -> Iterator[T]:
    after = ""
    while True:
        batch = fetch(after, _PAGE)
        yield from batch
        if len(batch) < _PAGE:
            return
        after = key(batch[-1])


class RefsDumper:
    """The dump of a repository's refs over their parts: begin (branches and tags), a chunk of commits at a time,
    then finish (the commits file and the manifest). ``dump`` runs them all."""

    def __init__(self, parts: RefsDumpParts) -> None:
        self._parts = parts

    def dump(self, repo_id: str, scratch: str = "") -> RefsDump:
        """Writes the three files and the manifest; returns their ids. Raises RepositoryNotFound."""
        progress = self.begin(repo_id, scratch or f"sync-{uuid.uuid4().hex}")
        try:
            while not progress.commits.done:
                progress = self.step(repo_id, progress)
            dump = self.finish(repo_id, progress)
            # Nothing retries a dump run in one go: the result kept for a retried finish is not needed.
            self._file(repo_id).forget_result(progress.commits)
            return dump
        except errors.GravelerError:
            self.discard(repo_id, progress)
            raise

    def begin(self, repo_id: str, scratch: str) -> DumpProgress:
        """Writes the branches and tags files. First, so that every commit they name is in the commits listed
        after: commits are immutable and stay (only a restore's roll-back deletes any, in a bare target)."""
        p = self._parts
        repo = p.repository(repo_id)
        branches = [
            {"id": b.id, "commit_id": b.commit_id, "hidden": b.hidden}
            for b in _all(lambda a, n: p.refs.list_branches(repo.id, a, n), lambda b: b.id)
        ]
        tags = [
            {"id": t.id, "commit_id": t.commit_id}
            for t in _all(lambda a, n: p.refs.list_tags(repo.id, a, n), lambda t: t.id)
        ]
        return DumpProgress(
            self._write(repo, "branches", branches), self._write(repo, "tags", tags), ChunkCursor(scratch)
        )

    def step(self, repo_id: str, progress: DumpProgress) -> DumpProgress:
        """Writes the next chunk of commits (dump_files.py)."""
        cursor = self._file(repo_id).write_chunk(progress.commits)
        return DumpProgress(progress.branches_id, progress.tags_id, cursor)

    def finish(self, repo_id: str, progress: DumpProgress) -> RefsDump:
        """Joins the commits file, writes the manifest and removes the chunks. Idempotent."""
        repo = self._parts.repository(repo_id)
        commits = self._file(repo_id, repo)
        saved = commits.saved_result(progress.commits)
        if saved is not None:
            return RefsDump.from_json(saved)
        commits_id = commits.join(progress.commits, lambda file_id: dump_address(repo, file_id))
        dump = RefsDump(commits_id, progress.branches_id, progress.tags_id)
        self._parts.blocks.put(_address(repo, MANIFEST), json.dumps(dump.to_json(), indent=2).encode())
        commits.save_result(progress.commits, dump.to_json())
        commits.discard(progress.commits)
        return dump

    def discard(self, repo_id: str, progress: DumpProgress) -> None:
        """Removes a failed dump's chunks (the branches and tags files stay: content-addressed, harmless)."""
        with contextlib.suppress(errors.RepositoryNotFound):
            self._file(repo_id).discard(progress.commits)

    def _file(self, repo_id: str, repo: Repository | None = None) -> CommitsFile:
        p = self._parts
        return CommitsFile(p.refs, p.blocks, repo or p.repository(repo_id))

    def _write(self, repo: Repository, kind: str, records: list[dict[str, Any]]) -> str:
        records.sort(key=lambda r: str(r["id"]))
        data = _encode(kind, records)
        dump_id = hashlib.sha256(data).hexdigest()
        self._parts.blocks.put(dump_address(repo, dump_id), data)
        return dump_id
