"""Refs dump and restore (lakeFS's dumpRefs/restoreRefs and the dump/restore tasks): a repository's commits,
branches and tags written to its storage namespace, and read back into a bare repository, which is how a
repository is rebuilt elsewhere (copy ``_lakefs/`` and ``data/``, create a bare repository there, restore).

lakeFS writes each kind as a metarange of its SSTables and names it by id in ``_lakefs/refs_manifest.json``.
Lakelet keeps the manifest (same name, same JSON: the three ids) and writes each kind as one content-addressed file
of its own, ``_lakefs/refs_dump/<id>.jsonl`` (docs/api.md): a header line
``{"lakelet_refs_dump": 1, "kind": "commits" | "branches" | "tags", "count": N}`` then one JSON record per line in
id order. The id is the SHA-256 of the file, so dumping unchanged refs twice writes the same file. Staged
(uncommitted) changes are not part of a dump, as in lakeFS; restored branches start with empty staging areas.

The repository dump and restore tasks run inline here and record their status as
``_lakefs/refs_dump/tasks/<task id>.json`` in the repository's namespace, which the status calls read.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from . import errors
from .branch_moves import new_staging_token
from .ports import BlockStore, RefStore
from .records import Branch, BranchID, Commit, CommitID, MetaRangeID, Repository, RepositoryID, Tag, TagID

__all__ = ["DUMP_TASK", "RESTORE_TASK", "DumpTask", "RefsDump", "RefsDumpParts", "RefsDumper"]

FORMAT = 1
MANIFEST = "_lakefs/refs_manifest.json"
_DIR = "_lakefs/refs_dump"
_PAGE = 1000
DUMP_TASK, RESTORE_TASK = "dump", "restore"


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


@dataclass(frozen=True, slots=True)
class DumpTask:
    """A dump or restore task's status (lakeFS's RepositoryDumpStatus / RepositoryRestoreStatus)."""

    id: str
    done: bool
    update_time: float
    error: str = ""
    dumped: RefsDump | None = None


@dataclass(frozen=True, slots=True)
class RefsDumpParts:
    """What dump and restore need: the ref store, the block store and the engine's repository reads."""

    refs: RefStore
    blocks: BlockStore
    repository: Callable[[str], Repository]  # the live repository; raises RepositoryNotFound
    writable_repository: Callable[[str, bool], Repository]  # raises ReadOnlyRepository unless forced
    clock: Callable[[], float]


def _address(repo: Repository, name: str) -> str:
    return f"{repo.storage_namespace.rstrip('/')}/{name}"


def _encode(kind: str, records: Sequence[dict[str, Any]]) -> bytes:
    header = {"lakelet_refs_dump": FORMAT, "kind": kind, "count": len(records)}
    lines = [json.dumps(header, sort_keys=True)] + [json.dumps(r, sort_keys=True) for r in records]
    return ("\n".join(lines) + "\n").encode()


def _commit_json(c: Commit) -> dict[str, Any]:
    return {
        "id": c.id,
        "committer": c.committer,
        "message": c.message,
        "creation_date": c.creation_date,
        "meta_range_id": c.meta_range_id,
        "metadata": c.metadata,
        "parents": list(c.parents),
        "generation": c.generation,
    }


def _commit(d: dict[str, Any]) -> Commit:
    return Commit(
        CommitID(str(d["id"])),
        str(d["committer"]),
        str(d["message"]),
        float(d["creation_date"]),
        MetaRangeID(str(d["meta_range_id"])),
        {str(k): str(v) for k, v in dict(d.get("metadata") or {}).items()},
        tuple(CommitID(str(p)) for p in d.get("parents") or ()),
        int(d.get("generation", 1)),
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
    """Dump and restore of a repository's refs over their parts."""

    def __init__(self, parts: RefsDumpParts) -> None:
        self._parts = parts

    # ---- dump -------------------------------------------------------------------------------------------------

    def dump(self, repo_id: str) -> RefsDump:
        """Writes the three files and the manifest; returns their ids. Raises RepositoryNotFound."""
        p = self._parts
        repo = p.repository(repo_id)
        commits = [_commit_json(c) for c in p.refs.iterate_commits(repo.id)]
        branches = [
            {"id": b.id, "commit_id": b.commit_id, "hidden": b.hidden}
            for b in _all(lambda a, n: p.refs.list_branches(repo.id, a, n), lambda b: b.id)
        ]
        tags = [
            {"id": t.id, "commit_id": t.commit_id}
            for t in _all(lambda a, n: p.refs.list_tags(repo.id, a, n), lambda t: t.id)
        ]
        dump = RefsDump(
            self._write(repo, "commits", commits),
            self._write(repo, "branches", branches),
            self._write(repo, "tags", tags),
        )
        p.blocks.put(_address(repo, MANIFEST), json.dumps(dump.to_json(), indent=2).encode())
        return dump

    def _write(self, repo: Repository, kind: str, records: list[dict[str, Any]]) -> str:
        records.sort(key=lambda r: str(r["id"]))
        data = _encode(kind, records)
        dump_id = hashlib.sha256(data).hexdigest()
        self._parts.blocks.put(_address(repo, f"{_DIR}/{dump_id}.jsonl"), data)
        return dump_id

    # ---- restore ----------------------------------------------------------------------------------------------

    def restore(self, repo_id: str, dump: RefsDump, force: bool = False) -> None:
        """Loads a dump into a bare repository: commits, then branches (each with a new staging area), then tags.
        Everything is read and checked before anything is written. Raises NotBareRepository when the repository
        has a branch, Invalid for a file that is not a dump of that kind or a dump whose branches and tags name
        commits it lacks or that lacks the repository's default branch, ObjectNotFound for a missing file,
        ReadOnlyRepository (unless ``force``)."""
        p = self._parts
        repo = p.writable_repository(repo_id, force)
        if p.refs.list_branches(repo.id, "", 1):
            raise errors.NotBareRepository(f"repository {repo_id} has branches")
        commits = [_commit(d) for d in self._read(repo, "commits", dump.commits_id)]
        branches = self._read(repo, "branches", dump.branches_id)
        tags = self._read(repo, "tags", dump.tags_id)
        known = {c.id for c in commits}
        for ref in [*branches, *tags]:
            if ref["commit_id"] not in known:
                raise errors.Invalid(f"refs dump names commit {ref['commit_id']} of {ref['id']}, which it lacks")
        if repo.default_branch_id not in {b["id"] for b in branches}:
            raise errors.Invalid(
                f"the dump has no branch {repo.default_branch_id!r}, the repository's default branch: create the "
                "bare repository with the default branch of the dumped one"
            )
        rid = RepositoryID(repo.id)
        for commit in commits:
            p.refs.add_commit(rid, commit)
        for b in branches:
            branch_id = str(b["id"])
            p.refs.create_branch(
                rid,
                Branch(
                    BranchID(branch_id),
                    CommitID(str(b["commit_id"])),
                    new_staging_token(repo.id, branch_id),
                    hidden=bool(b.get("hidden", False)),
                ),
            )
        for t in tags:
            p.refs.create_tag(rid, Tag(TagID(str(t["id"])), CommitID(str(t["commit_id"]))))

    def _read(self, repo: Repository, kind: str, dump_id: str) -> list[dict[str, Any]]:
        if not dump_id or not all(ch in "0123456789abcdef" for ch in dump_id) or len(dump_id) != 64:
            raise errors.Invalid(f"{kind}_meta_range_id {dump_id!r} is not the id of a refs dump")
        data = self._parts.blocks.get(_address(repo, f"{_DIR}/{dump_id}.jsonl"))
        lines = data.decode().splitlines()
        try:
            header = json.loads(lines[0]) if lines else {}
            records = [json.loads(line) for line in lines[1:]]
        except ValueError:
            raise errors.Invalid(f"refs dump {dump_id} is not JSON lines") from None
        if header.get("lakelet_refs_dump") != FORMAT or header.get("kind") != kind:
            raise errors.Invalid(f"refs dump {dump_id} is not a dump of {kind}")
        if header.get("count") != len(records) or hashlib.sha256(data).hexdigest() != dump_id:
            raise errors.Invalid(f"refs dump {dump_id} is damaged")
        return [r for r in records if isinstance(r, dict)]

    # ---- the repository dump and restore tasks ------------------------------------------------------------------

    def submit_dump(self, repo_id: str) -> DumpTask:
        """Runs the dump inline and records its status; a failure is recorded, not raised (as a task's would be),
        except that a missing repository is refused at once (404)."""
        repo = self._parts.repository(repo_id)
        task_id = f"{DUMP_TASK}-{uuid.uuid4().hex}"
        try:
            task = DumpTask(task_id, True, self._parts.clock(), dumped=self.dump(repo_id))
        except errors.GravelerError as e:
            task = DumpTask(task_id, True, self._parts.clock(), error=str(e) or type(e).__name__)
        self._record(repo, task)
        return task

    def submit_restore(self, repo_id: str, dump: RefsDump, force: bool = False) -> DumpTask:
        """Runs the restore inline and records its status. Refused at once (not recorded): a missing or read-only
        repository, and one that is not bare (400, as lakeFS answers restoreSubmit)."""
        repo = self._parts.writable_repository(repo_id, force)
        if self._parts.refs.list_branches(repo.id, "", 1):
            raise errors.NotBareRepository(f"repository {repo_id} has branches")
        task_id = f"{RESTORE_TASK}-{uuid.uuid4().hex}"
        try:
            self.restore(repo_id, dump, force)
            task = DumpTask(task_id, True, self._parts.clock())
        except errors.GravelerError as e:
            task = DumpTask(task_id, True, self._parts.clock(), error=str(e) or type(e).__name__)
        self._record(repo, task)
        return task

    def status(self, repo_id: str, kind: str, task_id: str) -> DumpTask:
        """A recorded task of ``kind`` (dump or restore). Raises TaskNotFound."""
        repo = self._parts.repository(repo_id)
        if not task_id.startswith(kind + "-") or not task_id[len(kind) + 1 :].isalnum():
            raise errors.TaskNotFound(f"no {kind} task {task_id}")
        try:
            data = json.loads(self._parts.blocks.get(_address(repo, f"{_DIR}/tasks/{task_id}.json")))
        except errors.ObjectNotFound:
            raise errors.TaskNotFound(f"no {kind} task {task_id}") from None
        refs = data.get("refs")
        return DumpTask(
            task_id,
            bool(data["done"]),
            float(data["update_time"]),
            str(data.get("error") or ""),
            None if refs is None else RefsDump(refs["commits"], refs["branches"], refs["tags"]),
        )

    def _record(self, repo: Repository, task: DumpTask) -> None:
        refs = task.dumped
        body = {
            "id": task.id,
            "done": task.done,
            "update_time": task.update_time,
            "error": task.error,
            "refs": None
            if refs is None
            else {"commits": refs.commits_id, "branches": refs.branches_id, "tags": refs.tags_id},
        }
        self._parts.blocks.put(_address(repo, f"{_DIR}/tasks/{task.id}.json"), json.dumps(body).encode())
