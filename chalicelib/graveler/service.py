"""The Graveler service: repositories, branches, tags, commits and objects, tied together over the ports.

Every public method is one use case the API (or the S3 gateway) calls. It receives its parts through the
constructor and never touches a driver.
"""

from __future__ import annotations

import hashlib
import random
import time
import uuid
from collections.abc import Callable, Iterator

from . import errors
from .addressing import metadata_address, new_data_address
from .committed import CommittedManager
from .identity import commit_id, entry_identity
from .listing import clamp_amount, overlay, paginate
from .ports import BlockStore, RefStore, StagingStore
from .records import (
    EMPTY_METARANGE,
    Branch,
    BranchID,
    Commit,
    CommitID,
    Diff,
    DiffType,
    Entry,
    EntryRecord,
    Key,
    ListedObject,
    MetaRangeID,
    Page,
    RefKind,
    Repository,
    RepositoryID,
    RepositoryState,
    ResolvedRef,
    StagedEntry,
    StagingToken,
    Tag,
    TagID,
)
from .refs import resolve_ref
from .staging import branch_tokens, is_dirty, read_staged, stage, staged_changes
from .validation import (
    validate_branch_id,
    validate_path,
    validate_repository_id,
    validate_storage_namespace,
    validate_tag_id,
)

INITIAL_COMMIT_MESSAGE = "Repository created"
# Marks a storage namespace as owned by a repository: a second repository there would let GC of one delete the
# other's data, so creation refuses a namespace that has it.
NAMESPACE_MARKER = "dummy"
COMMIT_TRIES = 10
SEAL_TRIES = 10
BACKOFF_CAP_SECONDS = 5.0
MAX_DELETE_PATHS = 1000


def new_staging_token(repo_id: str, branch_id: str) -> StagingToken:
    return StagingToken(f"{repo_id}-{branch_id}:{uuid.uuid4()}")


class Graveler:
    """The versioning engine's use cases."""

    def __init__(
        self,
        refs: RefStore,
        staging: StagingStore,
        blocks: BlockStore,
        committed: CommittedManager,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.refs = refs
        self.staging = staging
        self.blocks = blocks
        self.committed = committed
        self._clock = clock
        self._sleep = sleep

    # ---- repositories ---------------------------------------------------------------------------------------

    def create_repository(
        self, repo_id: str, storage_namespace: str, default_branch: str = "main", read_only: bool = False
    ) -> Repository:
        validate_repository_id(repo_id)
        validate_branch_id(default_branch)
        validate_storage_namespace(storage_namespace)
        rid = RepositoryID(repo_id)
        try:
            self.refs.get_repository(rid)
            raise errors.RepositoryExists(f"repository {repo_id} already exists")
        except errors.RepositoryNotFound:
            pass
        namespace = storage_namespace.rstrip("/")
        marker = metadata_address(namespace, NAMESPACE_MARKER)
        if self.blocks.exists(marker):
            raise errors.Invalid(f"storage namespace {storage_namespace} already holds a repository's data")
        self.blocks.put(marker, b"")
        now = int(self._clock())
        # As lakeFS does: the initial commit and the default branch first, the repository record last, so a
        # repository that exists is always complete.
        initial = self._make_commit("", INITIAL_COMMIT_MESSAGE, EMPTY_METARANGE, now, {}, (), 1)
        self.refs.add_commit(rid, initial)
        try:
            self.refs.create_branch(
                rid, Branch(BranchID(default_branch), initial.id, new_staging_token(repo_id, default_branch))
            )
        except errors.BranchExists as e:
            raise errors.RepositoryExists(f"repository {repo_id} is being created concurrently") from e
        repo = Repository(rid, namespace, BranchID(default_branch), now, RepositoryState.ACTIVE, read_only)
        self.refs.create_repository(repo)
        return repo

    def get_repository(self, repo_id: str) -> Repository:
        repo = self.refs.get_repository(RepositoryID(repo_id))
        if repo.state is RepositoryState.IN_DELETION:
            raise errors.RepositoryNotFound(f"repository {repo_id} is being deleted")
        return repo

    def list_repositories(self, prefix: str = "", after: str = "", amount: int | None = 100) -> Page[Repository]:
        return self._page_by_id(lambda a, n: self.refs.list_repositories(a, n), prefix, after, amount)

    def delete_repository(self, repo_id: str) -> None:
        rid = RepositoryID(repo_id)
        self.refs.get_repository(rid)
        branches = self.refs.list_branches(rid, "", 1_000_000)
        self.refs.delete_repository(rid)
        for branch in branches:
            for token in branch_tokens(branch):
                self.staging.drop(token)

    # ---- branches -------------------------------------------------------------------------------------------

    def create_branch(self, repo_id: str, branch_id: str, source_ref: str) -> Branch:
        validate_branch_id(branch_id)
        repo = self.get_repository(repo_id)
        source = self.resolve(repo.id, source_ref)
        branch = Branch(BranchID(branch_id), source.commit_id, new_staging_token(repo_id, branch_id))
        self.refs.create_branch(repo.id, branch)
        return branch

    def get_branch(self, repo_id: str, branch_id: str) -> Branch:
        repo = self.get_repository(repo_id)
        return self.refs.get_branch(repo.id, BranchID(branch_id))

    def list_branches(self, repo_id: str, prefix: str = "", after: str = "", amount: int | None = 100) -> Page[Branch]:
        repo = self.get_repository(repo_id)
        return self._page_by_id(lambda a, n: self.refs.list_branches(repo.id, a, n), prefix, after, amount)

    def delete_branch(self, repo_id: str, branch_id: str) -> None:
        repo = self._writable_repository(repo_id)
        if branch_id == repo.default_branch_id:
            raise errors.Forbidden(f"the default branch {branch_id} cannot be deleted")
        branch = self.refs.get_branch(repo.id, BranchID(branch_id))
        self.refs.delete_branch(repo.id, branch.id)
        for token in branch_tokens(branch):
            self.staging.drop(token)

    # ---- tags -----------------------------------------------------------------------------------------------

    def create_tag(self, repo_id: str, tag_id: str, ref: str) -> Tag:
        validate_tag_id(tag_id)
        repo = self._writable_repository(repo_id)
        tag = Tag(TagID(tag_id), self.resolve(repo.id, ref).commit_id)
        self.refs.create_tag(repo.id, tag)
        return tag

    def get_tag(self, repo_id: str, tag_id: str) -> Tag:
        repo = self.get_repository(repo_id)
        return self.refs.get_tag(repo.id, TagID(tag_id))

    def list_tags(self, repo_id: str, prefix: str = "", after: str = "", amount: int | None = 100) -> Page[Tag]:
        repo = self.get_repository(repo_id)
        return self._page_by_id(lambda a, n: self.refs.list_tags(repo.id, a, n), prefix, after, amount)

    def delete_tag(self, repo_id: str, tag_id: str) -> None:
        repo = self._writable_repository(repo_id)
        self.refs.delete_tag(repo.id, TagID(tag_id))

    # ---- commits and refs -----------------------------------------------------------------------------------

    def resolve(self, repo_id: str, ref: str) -> ResolvedRef:
        return resolve_ref(self.refs, RepositoryID(repo_id), ref)

    def get_commit(self, repo_id: str, ref: str) -> Commit:
        repo = self.get_repository(repo_id)
        return self.refs.get_commit(repo.id, self.resolve(repo.id, ref).commit_id)

    def log(self, repo_id: str, ref: str, after: str = "", amount: int | None = 100) -> Page[Commit]:
        """First-parent history from ``ref``, newest first; ``after`` is the last commit id already seen."""
        repo = self.get_repository(repo_id)
        limit = clamp_amount(amount)
        commits = self._first_parent_history(repo.id, self.resolve(repo.id, ref).commit_id)
        if after:
            for commit in commits:
                if commit.id == after:
                    break
        results: list[Commit] = []
        for commit in commits:
            results.append(commit)
            if len(results) > limit:
                break
        has_more = len(results) > limit
        results = results[:limit]
        return Page(results, has_more, results[-1].id if has_more else "")

    def commit(
        self,
        repo_id: str,
        branch_id: str,
        committer: str,
        message: str,
        metadata: dict[str, str] | None = None,
        date: int | None = None,
        allow_empty: bool = False,
    ) -> Commit:
        """Seals the staging token, applies every sealed token onto the head and moves the branch.

        The branch move is a compare-and-swap; when it loses to another commit the work is redone from what is
        still sealed (the winner may have committed our changes already: then there is nothing left to do).
        """
        if not message:
            raise errors.Invalid("commit message is required")
        repo = self._writable_repository(repo_id)
        bid = BranchID(branch_id)
        current = self.refs.get_branch(repo.id, bid)
        if not allow_empty and not current.sealed_tokens and self._token_is_empty(current.staging_token):
            # Sealing would swap the token (and make concurrent writers retry) for nothing.
            raise errors.NoChanges(f"no changes to commit on branch {branch_id}")
        self._seal(repo.id, bid)
        for attempt in range(COMMIT_TRIES):
            branch = self.refs.get_branch(repo.id, bid)
            head = self.refs.get_commit(repo.id, branch.commit_id)
            changes = staged_changes(self.staging, list(branch.sealed_tokens))
            applied = self.committed.apply(repo.storage_namespace, head.meta_range_id, changes)
            if applied.changes == 0 and not allow_empty:
                raise errors.NoChanges(f"no changes to commit on branch {branch_id}")
            commit = self._make_commit(
                committer,
                message,
                applied.metarange_id,
                int(self._clock()) if date is None else int(date),
                dict(metadata or {}),
                (head.id,),
                head.generation + 1,
            )
            self.refs.add_commit(repo.id, commit)
            moved = Branch(branch.id, commit.id, branch.staging_token, ())
            try:
                self.refs.set_branch(repo.id, moved, expected=branch)
            except errors.Conflict:
                self._sleep(min(BACKOFF_CAP_SECONDS, 0.05 * 2**attempt) * random.uniform(0.5, 1.0))
                continue
            for token in branch.sealed_tokens:
                self.staging.drop(token)
            return commit
        raise errors.TooManyTries(f"branch {branch_id} kept moving during the commit")

    # ---- objects --------------------------------------------------------------------------------------------

    def stat_object(self, repo_id: str, ref: str, path: str) -> Entry:
        validate_path(path)
        repo = self.get_repository(repo_id)
        resolved = self.resolve(repo.id, ref)
        if resolved.include_staging and resolved.branch is not None:
            staged = read_staged(self.staging, resolved.branch, Key(path))
            if staged is not None:
                if staged.value is None:
                    raise errors.ObjectNotFound(f"object {path} not found")
                return staged.value
        head = self.refs.get_commit(repo.id, resolved.commit_id)
        entry = self.committed.get(repo.storage_namespace, head.meta_range_id, Key(path))
        if entry is None:
            raise errors.ObjectNotFound(f"object {path} not found")
        return entry

    def read_object(self, repo_id: str, entry: Entry, start: int | None = None, end: int | None = None) -> bytes:
        try:
            return self.blocks.get(entry.physical_address, start, end)
        except errors.ObjectNotFound as e:
            raise errors.Gone(f"the data of this object was garbage collected ({repo_id})") from e

    def presign_object(self, repo_id: str, entry: Entry, expires_seconds: int) -> str:
        return self.blocks.presign_get(entry.physical_address, expires_seconds)

    def list_objects(
        self,
        repo_id: str,
        ref: str,
        prefix: str = "",
        delimiter: str = "",
        after: str = "",
        amount: int | None = 100,
    ) -> Page[ListedObject]:
        repo = self.get_repository(repo_id)
        view = self._entries_view(repo, self.resolve(repo.id, ref), clamp_amount(amount) + 1)
        page = paginate(
            lambda start: (ListedObject(r.key, r.entry) for r in view(start)),
            lambda common: ListedObject(Key(common), None),
            prefix,
            delimiter,
            after,
            amount,
        )
        return page

    def upload_object(
        self,
        repo_id: str,
        branch_id: str,
        path: str,
        data: bytes,
        content_type: str = "application/octet-stream",
        user_metadata: dict[str, str] | None = None,
        if_absent: bool = False,
    ) -> Entry:
        validate_path(path)
        repo = self._writable_repository(repo_id)
        self.refs.get_branch(repo.id, BranchID(branch_id))
        if if_absent and self._exists(repo, branch_id, path):
            raise errors.PreconditionFailed(f"object {path} already exists")
        now = self._clock()
        address = new_data_address(repo.storage_namespace, now)
        written = self.blocks.put(address, data)
        entry = Entry(
            physical_address=address,
            size=written.size,
            etag=written.etag,
            mtime=int(now),
            content_type=content_type or "application/octet-stream",
            user_metadata=dict(user_metadata or {}),
        )
        stage(self.refs, self.staging, repo.id, BranchID(branch_id), StagedEntry(Key(path), entry))
        return entry

    def new_physical_address(self, repo_id: str) -> str:
        """A fresh, never used address under the repository's data/ for data written outside upload_object
        (presigned uploads, multipart uploads)."""
        repo = self._writable_repository(repo_id)
        return new_data_address(repo.storage_namespace, self._clock())

    def link_object(self, repo_id: str, branch_id: str, path: str, entry: Entry, if_absent: bool = False) -> Entry:
        """Stages an entry whose data is already stored. The caller vouches that the address is the repository's
        own (issued by new_physical_address, or copied from an entry of the same repository)."""
        validate_path(path)
        repo = self._writable_repository(repo_id)
        if not entry.physical_address.startswith(repo.storage_namespace + "/"):
            raise errors.Invalid("the physical address is outside the repository's storage namespace")
        self.refs.get_branch(repo.id, BranchID(branch_id))
        if if_absent and self._exists(repo, branch_id, path):
            raise errors.PreconditionFailed(f"object {path} already exists")
        stage(self.refs, self.staging, repo.id, BranchID(branch_id), StagedEntry(Key(path), entry))
        return entry

    def copy_object(
        self, repo_id: str, src_ref: str, src_path: str, dst_branch: str, dst_path: str, if_absent: bool = False
    ) -> Entry:
        """A shallow copy inside one repository: the new path shares the physical object (a new mtime only)."""
        source = self.stat_object(repo_id, src_ref, src_path)
        copied = Entry(
            physical_address=source.physical_address,
            size=source.size,
            etag=source.etag,
            mtime=int(self._clock()),
            content_type=source.content_type,
            user_metadata=dict(source.user_metadata),
        )
        return self.link_object(repo_id, dst_branch, dst_path, copied, if_absent)

    def delete_object(self, repo_id: str, branch_id: str, path: str) -> None:
        """Hides the path on the branch. A path that exists nowhere is a no-op."""
        validate_path(path)
        repo = self._writable_repository(repo_id)
        branch = self.refs.get_branch(repo.id, BranchID(branch_id))
        staged = read_staged(self.staging, branch, Key(path))
        if staged is None or staged.value is None:
            head = self.refs.get_commit(repo.id, branch.commit_id)
            if staged is not None or self.committed.get(repo.storage_namespace, head.meta_range_id, Key(path)) is None:
                return
        # A tombstone, even for a key that is only staged: it also hides a copy in a token a commit just sealed.
        stage(self.refs, self.staging, repo.id, branch.id, StagedEntry(Key(path), None))

    def delete_objects(
        self, repo_id: str, branch_id: str, paths: list[str]
    ) -> list[tuple[str, errors.GravelerError]]:
        if len(paths) > MAX_DELETE_PATHS:
            raise errors.Invalid(f"at most {MAX_DELETE_PATHS} paths per request")
        self._writable_repository(repo_id)
        failures: list[tuple[str, errors.GravelerError]] = []
        for path in paths:
            try:
                self.delete_object(repo_id, branch_id, path)
            except (errors.Invalid, errors.TooManyTries) as e:
                failures.append((path, e))
        return failures

    def diff_uncommitted(
        self,
        repo_id: str,
        branch_id: str,
        prefix: str = "",
        delimiter: str = "",
        after: str = "",
        amount: int | None = 100,
    ) -> Page[Diff]:
        """Staged changes against the branch head: same identity and tombstones of uncommitted keys are skipped."""
        repo = self.get_repository(repo_id)
        branch = self.refs.get_branch(repo.id, BranchID(branch_id))
        head = self.refs.get_commit(repo.id, branch.commit_id)
        tokens = branch_tokens(branch)

        def view(start: str) -> Iterator[Diff]:
            for staged in staged_changes(self.staging, tokens, start, clamp_amount(amount) + 1):
                base = self.committed.get(repo.storage_namespace, head.meta_range_id, staged.key)
                if staged.value is None:
                    if base is not None:
                        yield Diff(staged.key, DiffType.REMOVED, None)
                elif base is None:
                    yield Diff(staged.key, DiffType.ADDED, staged.value)
                elif entry_identity(base) != entry_identity(staged.value):
                    yield Diff(staged.key, DiffType.CHANGED, staged.value)

        return paginate(view, lambda common: Diff(Key(common), DiffType.PREFIX_CHANGED, None),
                        prefix, delimiter, after, amount)

    def is_dirty(self, repo_id: str, branch_id: str) -> bool:
        repo = self.get_repository(repo_id)
        return is_dirty(self.staging, self.refs.get_branch(repo.id, BranchID(branch_id)))

    # ---- internals ------------------------------------------------------------------------------------------

    def _writable_repository(self, repo_id: str) -> Repository:
        repo = self.get_repository(repo_id)
        if repo.read_only:
            raise errors.ReadOnlyRepository(f"repository {repo_id} is read-only")
        return repo

    def _exists(self, repo: Repository, branch_id: str, path: str) -> bool:
        try:
            self.stat_object(repo.id, branch_id, path)
            return True
        except errors.ObjectNotFound:
            return False

    def _token_is_empty(self, token: StagingToken) -> bool:
        return next(iter(self.staging.iterate(token)), None) is None

    def _make_commit(
        self,
        committer: str,
        message: str,
        meta_range_id: MetaRangeID,
        creation_date: int,
        metadata: dict[str, str],
        parents: tuple[CommitID, ...],
        generation: int,
    ) -> Commit:
        cid = commit_id(committer, message, meta_range_id, creation_date, metadata, parents)
        return Commit(cid, committer, message, creation_date, meta_range_id, metadata, parents, generation)

    def _seal(self, repo_id: RepositoryID, branch_id: BranchID) -> Branch:
        for _ in range(SEAL_TRIES):
            branch = self.refs.get_branch(repo_id, branch_id)
            sealed = Branch(
                branch.id,
                branch.commit_id,
                new_staging_token(repo_id, branch_id),
                (branch.staging_token, *branch.sealed_tokens),
            )
            try:
                self.refs.set_branch(repo_id, sealed, expected=branch)
                return sealed
            except errors.Conflict:
                continue
        raise errors.TooManyTries(f"branch {branch_id} kept changing while sealing its staging area")

    def _first_parent_history(self, repo_id: RepositoryID, start: CommitID) -> Iterator[Commit]:
        current: CommitID | None = start
        while current:
            commit = self.refs.get_commit(repo_id, current)
            yield commit
            current = commit.parents[0] if commit.parents else None

    def _entries_view(
        self, repo: Repository, resolved: ResolvedRef, first_page: int | None = None
    ) -> Callable[[str], Iterator[EntryRecord]]:
        head = self.refs.get_commit(repo.id, resolved.commit_id)
        ns, metarange = repo.storage_namespace, head.meta_range_id
        if resolved.kind is RefKind.BRANCH and resolved.include_staging and resolved.branch is not None:
            tokens = branch_tokens(resolved.branch)
            return lambda start: overlay(
                staged_changes(self.staging, tokens, start, first_page), self.committed.iterate(ns, metarange, start)
            )
        return lambda start: self.committed.iterate(ns, metarange, start)

    @staticmethod
    def _page_by_id(fetch: Callable[[str, int], list], prefix: str, after: str, amount: int | None) -> Page:  # type: ignore[type-arg]
        """A page of records with ``id`` from a store listing ids > after, filtered by prefix."""
        limit = clamp_amount(amount)
        # ids > prefix[:-1] include every id that starts with prefix (and a few before it, skipped below).
        start = prefix[:-1] if prefix and prefix > after else after
        items: list = []  # type: ignore[type-arg]
        while len(items) <= limit:
            batch = fetch(start, limit + 1)
            for item in batch:
                if item.id.startswith(prefix):
                    items.append(item)
                elif item.id > prefix:
                    batch = []
                    break
            if len(batch) <= limit:
                break
            start = batch[-1].id
        has_more = len(items) > limit
        items = items[:limit]
        return Page(items, has_more, items[-1].id if has_more else "")
