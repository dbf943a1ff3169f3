"""The restore of a refs dump (refs_dump.py) into a bare repository, as idempotent steps that run inline or one per
Lambda of the restore workflow (stepfunctions/restore.asl.json): check, load the commits (a byte range of the
commits file at a time, so a large dump never sits whole in memory nor in one Lambda's 15 minutes), load the
branches and tags, and roll back.

Check writes nothing: the target must be writable and bare (no branch, no commit: lakeFS's test), each file must be
a dump of its kind whose SHA-256 is its id, the history inside must hold together (restore_checks.py: parents
present, no cycle, ref names valid, refs naming dumped commits, metaranges in the namespace), and the branches must
hold the repository's default branch. What only
shows once writing has begun (a damaged commit record in a later chunk, a branch or tag naming a commit the dump
lacks, a store error) rolls back: the tags and branches the dump names that point where it says, then the commits
it names. The target had no commit and no branch before (check), so it is left bare, as it was, unless someone wrote
to a restored branch meanwhile: that branch stays, with every commit it reaches (a roll-back never loses a write).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from .. import errors
from ..branches.branch_moves import new_staging_token
from ..records import Branch, BranchID, Commit, CommitID, Repository, RepositoryID, Tag, TagID
from ..writes.staging import branch_tokens, drop_tokens
from .refs_dump import FORMAT, RefsDump, RefsDumpParts, dump_address, parse_commit
from .restore_checks import History, check_ref_name

__all__ = ["CHUNK_BYTES", "RefsRestorer", "RestorePlan"]

# How much of the commits file one load step reads: about 3,000 commit records, some 120 DynamoDB batch writes,
# well within the task's timeout.
CHUNK_BYTES = 1024 * 1024
_HASH_BYTES = 8 * 1024 * 1024
# Refs a roll-back looks at once the dump's own are removed: those created or written to during the restore.
_MAX_KEPT = 10_000


@dataclass(frozen=True, slots=True)
class RestorePlan:
    """What check found: the target (and its generation, so that a repository deleted and created again meanwhile
    takes nothing), the dump, and where the commits file's records lie."""

    repository: str
    generation: str
    dump: RefsDump
    force: bool
    commits_size: int
    first_record: int

    def to_json(self) -> dict[str, Any]:
        return {
            "repository": self.repository,
            "generation": self.generation,
            "dump": self.dump.to_json(),
            "force": self.force,
            "commits_size": self.commits_size,
            "first_record": self.first_record,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RestorePlan:
        return cls(
            str(data["repository"]),
            str(data["generation"]),
            RefsDump.from_json(data["dump"]),
            bool(data["force"]),
            int(data["commits_size"]),
            int(data["first_record"]),
        )


def _check_id(kind: str, dump_id: str) -> None:
    if len(dump_id) != 64 or not all(ch in "0123456789abcdef" for ch in dump_id):
        raise errors.Invalid(f"{kind}_meta_range_id {dump_id!r} is not the id of a refs dump")


def _ref_record(kind: str, record: Any) -> tuple[str, str]:
    if not isinstance(record, dict) or not all(
        isinstance(record.get(f), str) and record[f] for f in ("id", "commit_id")
    ):
        raise errors.Invalid(f"damaged {kind} record in the refs dump: {str(record)[:100]}")
    return str(record["id"]), str(record["commit_id"])


def _parse(line: bytes) -> Commit:
    try:
        record = json.loads(line)
    except ValueError:
        raise errors.Invalid(f"damaged commit record in the refs dump: {line[:100]!r}") from None
    return parse_commit(record)


class RefsRestorer:
    """The restore's steps over the dump's parts."""

    def __init__(self, parts: RefsDumpParts) -> None:
        self._parts = parts

    def refuse_not_bare(self, repo: Repository) -> None:
        """Raises NotBareRepository when the repository has a branch or a commit."""
        refs = self._parts.refs
        if refs.list_branches(repo.id, "", 1) or next(iter(refs.iterate_commits(repo.id)), None) is not None:
            raise errors.NotBareRepository(f"repository {repo.id} is not bare")

    def commits_count(self, repo_id: str, dump: RefsDump) -> int | None:
        """How many commits the dump's commits file says it holds (its header), None when it cannot be read."""
        repo = self._parts.repository(repo_id)
        try:
            _check_id("commits", dump.commits_id)
            head = self._parts.blocks.get(dump_address(repo, dump.commits_id), 0, 4095)
            count = json.loads(head.split(b"\n", 1)[0]).get("count")
        except (errors.GravelerError, ValueError, AttributeError):
            return None
        return count if isinstance(count, int) else None

    # ---- check ------------------------------------------------------------------------------------------------

    def check(self, repo_id: str, dump: RefsDump, force: bool = False) -> RestorePlan:
        """Checks the target and the dump, writing nothing. Raises ReadOnlyRepository (unless ``force``),
        NotBareRepository, Invalid (not a dump of that kind, damaged, no default branch), ObjectNotFound."""
        repo = self._parts.writable_repository(repo_id, force)
        self.refuse_not_bare(repo)
        found = {kind: self._verify(repo, kind, dump_id) for kind, dump_id in dump.ids().items()}
        size, first = found["commits"]
        plan = RestorePlan(repo.id, repo.generation, dump, force, size, first)
        # The history inside (restore_checks.py), read a chunk at a time as load reads it.
        history = History()
        start: int | None = first
        while start is not None:
            lines, start = self._lines(repo, plan, start)
            history.add(_parse(line) for line in lines)
        history.check()
        branches = [_ref_record("branches", r) for r in self._records(repo, "branches", dump.branches_id)]
        tags = [_ref_record("tags", r) for r in self._records(repo, "tags", dump.tags_id)]
        for kind, refs in (("branches", branches), ("tags", tags)):
            for ref_id, commit_id in refs:
                check_ref_name(kind, ref_id)
                if commit_id not in history:
                    raise errors.Invalid(f"refs dump names commit {commit_id} for {ref_id}, which its commits lack")
        if repo.default_branch_id not in {branch_id for branch_id, _ in branches}:
            raise errors.Invalid(
                f"the dump has no branch {repo.default_branch_id!r}, the repository's default branch: create the "
                "bare repository with the default branch of the dumped one"
            )
        history.check_metaranges(self._parts.blocks, repo.storage_namespace)
        return plan

    def _verify(self, repo: Repository, kind: str, dump_id: str) -> tuple[int, int]:
        """(the file's size, where its first record starts) once its header, record count and hash are right."""
        _check_id(kind, dump_id)
        address = dump_address(repo, dump_id)
        size = self._parts.blocks.stat(address).size
        digest = hashlib.sha256()
        lines = 0
        head = b""
        for start in range(0, size, _HASH_BYTES):
            data = self._parts.blocks.get(address, start, min(size, start + _HASH_BYTES) - 1)
            digest.update(data)
            lines += data.count(b"\n")
            if start == 0:
                head = data.split(b"\n", 1)[0]
        try:
            header = json.loads(head) if head else {}
        except ValueError:
            header = {}
        if not isinstance(header, dict) or header.get("lakelet_refs_dump") != FORMAT or header.get("kind") != kind:
            raise errors.Invalid(f"refs dump {dump_id} is not a dump of {kind}")
        if digest.hexdigest() != dump_id or header.get("count") != lines - 1:
            raise errors.Invalid(f"refs dump {dump_id} is damaged")
        return size, len(head) + 1

    def _records(self, repo: Repository, kind: str, dump_id: str) -> list[Any]:
        """The records of a small file (branches, tags), read whole."""
        lines = self._parts.blocks.get(dump_address(repo, dump_id)).decode().splitlines()[1:]
        try:
            return [json.loads(line) for line in lines]
        except ValueError:
            raise errors.Invalid(f"refs dump {dump_id} is not JSON lines") from None

    # ---- load -------------------------------------------------------------------------------------------------

    def _target(self, plan: RestorePlan) -> Repository:
        """The repository checked, still there under the same generation (else RepositoryNotFound)."""
        repo = self._parts.writable_repository(plan.repository, plan.force)
        if repo.generation != plan.generation:
            raise errors.RepositoryNotFound(f"repository {plan.repository} was deleted during the restore")
        return repo

    def _lines(self, repo: Repository, plan: RestorePlan, start: int) -> tuple[list[bytes], int | None]:
        """The whole records starting in [start, start + CHUNK_BYTES) and where the next chunk starts."""
        address = dump_address(repo, plan.dump.commits_id)
        end = min(plan.commits_size, start + CHUNK_BYTES)
        data = self._parts.blocks.get(address, start, end - 1)
        while b"\n" not in data and end < plan.commits_size:
            # One record runs past the whole chunk: read on to its end.
            more = min(plan.commits_size, end + CHUNK_BYTES)
            data += self._parts.blocks.get(address, end, more - 1)
            end = more
        cut = data.rfind(b"\n") + 1 if end < plan.commits_size else len(data)
        following = start + cut
        return data[:cut].splitlines(), (following if following < plan.commits_size else None)

    def load_commits(self, plan: RestorePlan, start: int) -> int | None:
        """Adds the commits of one chunk; where the next chunk starts, None after the last. Raises Invalid for a
        damaged record (the chunks before it stay written: the caller rolls back)."""
        repo = self._target(plan)
        lines, following = self._lines(repo, plan, start)
        commits = [_parse(line) for line in lines]
        # One call for the chunk: the store batches it (DynamoDB: 25 commits a request), where one put per commit
        # made a 1,000,000-commit restore a million round trips.
        self._parts.refs.add_commits(RepositoryID(repo.id), commits)
        return following

    def load_refs(self, plan: RestorePlan) -> None:
        """Creates the branches (each with a new, empty staging area) and the tags. A ref already there with the
        dump's commit is taken as this step's own earlier try. Raises Invalid for a ref naming a commit the dump
        lacks, BranchExists/TagExists for one created meanwhile elsewhere."""
        p = self._parts
        repo = self._target(plan)
        rid = RepositoryID(repo.id)
        # Tags first: branches are what can be written to, so they appear last, when nothing of the restore is left
        # to fail but their own creation (lakeFS loads branches, then tags).
        for kind, dump_id in (("tags", plan.dump.tags_id), ("branches", plan.dump.branches_id)):
            for record in self._records(repo, kind, dump_id):
                ref_id, commit_id = _ref_record(kind, record)
                try:
                    p.refs.get_commit(rid, CommitID(commit_id))
                except errors.CommitNotFound:
                    raise errors.Invalid(
                        f"refs dump names commit {commit_id} for {ref_id}, which its commits lack"
                    ) from None
                try:
                    if kind == "branches":
                        token = new_staging_token(repo.id, ref_id)
                        hidden = record.get("hidden") is True
                        branch = Branch(BranchID(ref_id), CommitID(commit_id), token, hidden=hidden)
                        p.refs.create_branch(rid, branch, generation=plan.generation)
                    else:
                        p.refs.create_tag(rid, Tag(TagID(ref_id), CommitID(commit_id)), generation=plan.generation)
                except errors.AlreadyExists:
                    if self._points_to(rid, kind, ref_id) != commit_id:
                        raise

    def _points_to(self, rid: RepositoryID, kind: str, ref_id: str) -> str | None:
        try:
            if kind == "branches":
                return self._parts.refs.get_branch(rid, BranchID(ref_id)).commit_id
            return self._parts.refs.get_tag(rid, TagID(ref_id)).commit_id
        except errors.NotFound:
            return None

    def run(self, repo_id: str, dump: RefsDump, force: bool = False) -> None:
        """Every step here; a failure after check rolls back and is raised."""
        plan = self.check(repo_id, dump, force)
        try:
            self.load(plan)
        except errors.GravelerError:
            self.roll_back(plan)
            raise

    def load(self, plan: RestorePlan) -> None:
        """Every load step after check: the commits, a chunk at a time, then the refs. Does not roll back."""
        start: int | None = plan.first_record
        while start is not None:
            start = self.load_commits(plan, start)
        self.load_refs(plan)

    # ---- roll back --------------------------------------------------------------------------------------------

    def roll_back(self, plan: RestorePlan) -> list[str]:
        """Removes what the restore wrote: the dump's tags and branches that point where it says, then its commits
        (the target had none). Idempotent; a repository deleted meanwhile has nothing left to remove.

        A branch written to since the restore created it (committed to, or holding staged changes), and any branch
        or tag created meanwhile, is kept, with every commit it reaches: a roll-back never loses a write nor leaves
        a branch whose history is gone. Returns the branches kept (empty: the target is bare again)."""
        p = self._parts
        try:
            repo = p.repository(plan.repository)
        except errors.RepositoryNotFound:
            return []
        if repo.generation != plan.generation:
            return []
        rid = RepositoryID(repo.id)
        for kind, dump_id in (("tags", plan.dump.tags_id), ("branches", plan.dump.branches_id)):
            for record in self._records(repo, kind, dump_id):
                if not isinstance(record, dict) or not isinstance(record.get("id"), str):
                    continue
                ref_id = str(record["id"])
                if self._points_to(rid, kind, ref_id) != record.get("commit_id"):
                    continue
                if kind == "tags":
                    p.refs.delete_tag(rid, TagID(ref_id))
                    continue
                branch = p.refs.get_branch(rid, BranchID(ref_id))
                if self._has_staged(branch):
                    continue
                p.refs.delete_branch(rid, BranchID(ref_id))
                if p.staging is not None:
                    drop_tokens(p.staging, branch_tokens(branch))
        left = p.refs.list_branches(rid, "", _MAX_KEPT)
        heads = [b.commit_id for b in left] + [t.commit_id for t in p.refs.list_tags(rid, "", _MAX_KEPT)]
        needed = self._reachable(rid, heads)
        for commit_id in self._commit_ids(repo, plan):
            if commit_id not in needed:
                p.refs.delete_commit(rid, CommitID(commit_id))
        return [str(b.id) for b in left]

    def _has_staged(self, branch: Branch) -> bool:
        staging = self._parts.staging
        if staging is None:
            return False
        return any(
            next(iter(staging.iterate(token, first_page=1)), None) is not None for token in branch_tokens(branch)
        )

    def _reachable(self, rid: RepositoryID, heads: list[CommitID]) -> set[str]:
        """Every commit the heads reach through their parents (one read each: only when writes raced the restore)."""
        seen: set[str] = set()
        todo = list(heads)
        while todo:
            commit_id = todo.pop()
            if commit_id in seen:
                continue
            seen.add(commit_id)
            try:
                todo.extend(self._parts.refs.get_commit(rid, commit_id).parents)
            except errors.CommitNotFound:
                continue
        return seen

    def _commit_ids(self, repo: Repository, plan: RestorePlan) -> Iterator[str]:
        start: int | None = plan.first_record
        while start is not None:
            lines, start = self._lines(repo, plan, start)
            for line in lines:
                try:
                    record = json.loads(line)
                except ValueError:
                    continue
                if isinstance(record, dict) and isinstance(record.get("id"), str) and record["id"]:
                    yield str(record["id"])
