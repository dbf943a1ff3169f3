"""The ports graveler reaches storage through. Adapters implement them; in-memory twins back the unit tests.

Every method says what it promises and which graveler error it raises. Nothing here leaks a driver error.
Keys order by raw UTF-8 bytes, which for Python ``str`` is plain ``<`` ordering.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from .records import (
    Branch,
    BranchID,
    BranchKey,
    Commit,
    CommitID,
    Key,
    ProtectionRules,
    PullRequest,
    Repository,
    RepositoryID,
    StagedEntry,
    StagedExpectation,
    StagingSample,
    StagingToken,
    Tag,
    TagID,
)

__all__ = [
    "BlockStore",
    "BranchProtectionStore",
    "Execution",
    "PullRequestStore",
    "PutResult",
    "RefStore",
    "StagingStore",
    "WorkflowRunner",
]


class RefStore(Protocol):
    """Repositories, branches, tags and commits. Creations are put-if-absent; branch moves compare-and-swap."""

    def get_repository(self, repo_id: RepositoryID) -> Repository:
        """The repository record. Raises RepositoryNotFound."""
        ...

    def create_repository(self, repo: Repository) -> None:
        """Stores a new repository record. Raises RepositoryExists if the id is taken."""
        ...

    def list_repositories(self, after: str = "", limit: int = 1000) -> list[Repository]:
        """Up to ``limit`` repositories with id > ``after``, sorted by id."""
        ...

    def delete_repository(self, repo_id: RepositoryID) -> None:
        """Deletes the repository record and its branches, tags and commits. Raises RepositoryNotFound."""
        ...

    def get_branch(self, repo_id: RepositoryID, branch_id: BranchID) -> Branch:
        """A strongly consistent read of the branch. Raises BranchNotFound."""
        ...

    def create_branch(self, repo_id: RepositoryID, branch: Branch, generation: str | None = None) -> None:
        """Stores a new branch. Raises BranchExists if the id is taken.

        With ``generation`` the branch is stored only while the repository record is active with that generation,
        checked atomically with the write: RepositoryNotFound otherwise (deleted, being deleted, or re-created).
        None (a repository's default branch, written before its record) checks nothing.
        """
        ...

    def set_branch(self, repo_id: RepositoryID, branch: Branch, expected: Branch) -> None:
        """Replaces the branch only if the stored record equals ``expected`` (all fields). ``hidden`` is the
        stored one's: it is fixed when the branch is created. Raises Conflict when it does not, or when the branch
        no longer exists."""
        ...

    def delete_branch(self, repo_id: RepositoryID, branch_id: BranchID) -> None:
        """Deletes the branch record. Raises BranchNotFound."""
        ...

    def list_branches(self, repo_id: RepositoryID, after: str = "", limit: int = 1000) -> list[Branch]:
        """Up to ``limit`` branches with id > ``after``, sorted by id."""
        ...

    def get_tag(self, repo_id: RepositoryID, tag_id: TagID) -> Tag:
        """The tag. Raises TagNotFound."""
        ...

    def create_tag(self, repo_id: RepositoryID, tag: Tag, generation: str | None = None) -> None:
        """Stores a new tag. Raises TagExists if the id is taken (tags are immutable). ``generation`` as for
        create_branch: RepositoryNotFound unless the repository is still active with that generation."""
        ...

    def delete_tag(self, repo_id: RepositoryID, tag_id: TagID) -> None:
        """Deletes the tag. Raises TagNotFound."""
        ...

    def list_tags(self, repo_id: RepositoryID, after: str = "", limit: int = 1000) -> list[Tag]:
        """Up to ``limit`` tags with id > ``after``, sorted by id."""
        ...

    def get_commit(self, repo_id: RepositoryID, commit_id: CommitID) -> Commit:
        """The commit with exactly this id. Raises CommitNotFound."""
        ...

    def add_commit(self, repo_id: RepositoryID, commit: Commit) -> None:
        """Stores the commit if absent. Re-adding the same id is a no-op (ids are content hashes)."""
        ...

    def add_commits(self, repo_id: RepositoryID, commits: Sequence[Commit]) -> None:
        """Stores many commits in few calls (a restore's load): as add_commit for each, except that a commit already
        stored is written again with the record given (the same one: ids are content hashes). Not atomic: after a
        failure some may be stored."""
        ...

    def delete_commit(self, repo_id: RepositoryID, commit_id: CommitID) -> None:
        """Removes the commit record if present (a no-op otherwise). Only a restore's roll-back calls it, for
        commits it added itself that nothing references: commits are otherwise never deleted."""
        ...

    def list_commit_ids(self, repo_id: RepositoryID, prefix: str, limit: int) -> list[CommitID]:
        """Up to ``limit`` commit ids starting with ``prefix``, sorted (for unique-prefix resolution)."""
        ...

    def iterate_commits(self, repo_id: RepositoryID, after: str = "") -> Iterator[Commit]:
        """Every commit of the repository with id > ``after``, in id order (for GC, maintenance and the refs dump,
        which resumes after the last id it wrote)."""
        ...


class StagingStore(Protocol):
    """Staged changes keyed by (staging token, key). A StagedEntry with value None is a tombstone."""

    def get(self, token: StagingToken, key: Key) -> StagedEntry | None:
        """A strongly consistent read of the staged change of ``key``; None when nothing is staged."""
        ...

    def set(self, token: StagingToken, staged: StagedEntry) -> StagedEntry | None:
        """Stages ``staged`` under the token, replacing any earlier change of the same key; the change it replaced
        (None when there was none), read in the same write, so that a refused write can put it back."""
        ...

    def set_if(
        self,
        token: StagingToken,
        staged: StagedEntry,
        expected: StagedExpectation,
        current_of: BranchKey | None = None,
    ) -> bool:
        """Stages ``staged`` only if the token's change of the same key is still ``expected`` (None: nothing staged
        there; ABSENT: nothing, or a tombstone), atomically: of concurrent callers expecting the same row at most
        one gets True; the others get False and change nothing. The comparison covers the row's tombstone flag,
        physical address, ETag, size and mtime (not its metadata: an upload always names a fresh address, so any
        upload in between shows).

        ``current_of``: also only while that branch's record (RefStore's) names ``token`` as its staging token,
        checked in the same atomic write: a write that returns True landed while the token was current, so the
        commit that seals it later reads it; one racing a seal gets False and writes nothing (staging.stage_checked)."""
        ...

    def set_if_all(
        self,
        token: StagingToken,
        changes: Sequence[tuple[StagedEntry, StagedExpectation]],
        current_of: BranchKey | None = None,
    ) -> bool:
        """Stages every (change, expected) pair only if each key's row in the token is still its ``expected`` (as
        ``set_if`` compares it, and ``current_of`` as there), all or none, atomically: no reader ever sees some of
        the changes without the others, and of concurrent callers whose expectations overlap at most one gets
        True. False changes no row (sketch items, written first as ``set_if`` writes them, may remain: harmless).
        Raises Invalid, before writing anything, for what preconditions.check_atomic_changes refuses (no change,
        more than MAX_ATOMIC_CHANGES, a key named twice, rows over MAX_ATOMIC_BYTES)."""
        ...

    def get_many(self, token: StagingToken, keys: Iterable[Key]) -> dict[Key, StagedEntry]:
        """Strongly consistent reads of the staged changes of ``keys``, in batches where the store can; keys with
        nothing staged are left out."""
        ...

    def set_many(self, token: StagingToken, entries: Iterable[StagedEntry]) -> None:
        """Stages several changes, in batches where the store can; a later change of a key wins. Not atomic:
        after a failure some of them may be staged, as after repeated ``set``."""
        ...

    def delete(self, token: StagingToken, key: Key) -> None:
        """Forgets the staged change of ``key`` (not a tombstone: the committed value shows again). Idempotent."""
        ...

    def iterate(self, token: StagingToken, from_key: str = "", first_page: int | None = None) -> Iterator[StagedEntry]:
        """The token's staged changes with key >= ``from_key``, in key order, strongly consistent, lazily paged.
        ``first_page`` is a hint: how many entries the caller expects to read before it may stop."""
        ...

    def count(self, token: StagingToken, up_to: int) -> int:
        """The token's changes (tombstones too), counted up to ``up_to`` (exact below it), strongly consistent."""
        ...

    def drop(self, token: StagingToken) -> None:
        """Deletes every staged change of the token, and its sketch (every shard, in parallel where the store
        can). Idempotent."""
        ...

    def iterate_shard(
        self, token: StagingToken, shard: int, from_key: str = "", first_page: int | None = None
    ) -> Iterator[StagedEntry]:
        """The changes of one shard of the token (0 <= ``shard`` < staging_shards.shard_count(token)), those with
        key >= ``from_key``, in key order, strongly consistent, lazily paged: one partition's query. The shards
        hold disjoint keys (staging_shards.shard_of) and ``iterate`` is their merge."""
        ...

    def drop_shard(self, token: StagingToken, shard: int) -> None:
        """Deletes one shard's changes and its part of the sketch (for a caller that drops shards in parallel).
        Idempotent."""
        ...

    def sample(self, token: StagingToken, limit: int) -> StagingSample:
        """A uniform sample of about ``limit`` of the keys ever staged in the token (the sketch: a key deleted
        since may remain) and the number of rows it suggests, reading at most staging_shards.per_shard_sample
        entries of each shard whatever the token holds (staging_shards.combine). Empty for a token written before
        the sketch existed."""
        ...

    def delete_many(self, token: StagingToken, keys: Iterable[Key]) -> None:
        """Forgets the staged changes of ``keys``, in batches where the store can (``delete`` of each). For a
        caller that already knows every key a token holds: a drop without listing the token first."""
        ...


@dataclass(frozen=True, slots=True)
class PutResult:
    size: int
    etag: str  # hex MD5 of the bytes written


class BlockStore(Protocol):
    """Immutable blobs addressed by full URI ``s3://bucket/key``: object data and the _lakefs/ ranges."""

    def put(self, address: str, data: bytes) -> PutResult:
        """Writes the blob. Callers never rewrite an address with different bytes."""
        ...

    def put_if_absent(self, address: str, data: bytes) -> bool:
        """Writes the blob only if nothing is stored at the address, atomically (S3 ``If-None-Match: *``): of
        concurrent callers exactly one gets True; the others get False and change nothing."""
        ...

    def get(self, address: str, start: int | None = None, end: int | None = None) -> bytes:
        """The blob, or bytes [start, end] inclusive. Raises ObjectNotFound when the blob is missing."""
        ...

    def exists(self, address: str) -> bool:
        """Whether a blob is stored at the address."""
        ...

    def stat(self, address: str) -> PutResult:
        """The stored blob's size and the store's ETag: the hex MD5 of the bytes for a blob written by one PUT or
        copy (S3 without KMS), ``<hex>-<parts>`` for a multipart upload. Raises ObjectNotFound."""
        ...

    def storage_class(self, address: str) -> str:
        """The store's storage class of the blob (S3's ``STANDARD`` when it names none). Raises ObjectNotFound."""
        ...

    def presign_get(self, address: str, expires_seconds: int) -> str:
        """An HTTPS URL that reads the blob without credentials until it expires."""
        ...

    def presign_put(self, address: str, expires_seconds: int, if_none_match: bool = False) -> str:
        """An HTTPS URL that writes the blob with a plain PUT, without credentials, until it expires. With
        ``if_none_match`` the URL is signed for ``If-None-Match: *``: every PUT must send it, so the store takes
        one only while nothing is stored at the address (the blob can be written once)."""
        ...

    def delete(self, address: str) -> None:
        """Deletes the blob. Idempotent."""
        ...

    # Listing, server-side copy and multipart uploads (the S3 gateway's large-object paths). Bytes handed to
    # these never need to pass through the caller: copies and part copies happen inside the store.

    def list_blobs(self, prefix: str) -> Iterator[tuple[str, int]]:
        """(address, size) of every blob whose address starts with ``prefix`` (a full ``s3://bucket/...``),
        in address order."""
        ...

    def copy(self, source: str, destination: str) -> PutResult:
        """Copies the blob inside the store (bytes never reach the caller). The size and etag are the
        destination's (the store's ETag), whatever happens to the source afterwards. Raises ObjectNotFound when the
        source is missing, Conflict when it was rewritten while being copied."""
        ...

    def create_multipart_upload(self, address: str) -> str:
        """Starts a multipart upload that will write ``address``; returns the store's upload id."""
        ...

    def upload_part(self, address: str, upload_id: str, part_number: int, data: bytes) -> PutResult:
        """Stores part ``part_number`` (1-10000), replacing an earlier one of that number. The etag is what
        complete_multipart_upload must be given back. Raises ObjectNotFound for an unknown upload."""
        ...

    def presign_upload_part(self, address: str, upload_id: str, part_number: int, expires_seconds: int) -> str:
        """An HTTPS URL that stores part ``part_number`` of the upload with a plain PUT of its bytes, without
        credentials, until it expires (the store answers the part's ETag in a header)."""
        ...

    def upload_part_copy(
        self, address: str, upload_id: str, part_number: int, source: str, start: int, end: int
    ) -> PutResult:
        """Stores bytes [start, end] (inclusive) of blob ``source`` as part ``part_number``, inside the store.
        Raises ObjectNotFound for a missing source or an unknown upload, Invalid for a range outside the source."""
        ...

    def list_parts(self, address: str, upload_id: str) -> list[tuple[int, PutResult]]:
        """The upload's parts as (part number, result), by part number. Raises ObjectNotFound for an unknown
        upload."""
        ...

    def complete_multipart_upload(self, address: str, upload_id: str, parts: list[tuple[int, str]]) -> PutResult:
        """Writes ``address`` as the concatenation of the listed (part number, etag) parts, in ascending part
        order; unlisted parts are dropped. As S3: every part but the last must hold at least 5 MiB. Raises
        Invalid for a missing part, a wrong etag, a part too small or a bad order; ObjectNotFound for an unknown
        upload. The result's etag is the store's."""
        ...

    def abort_multipart_upload(self, address: str, upload_id: str) -> None:
        """Drops the upload and its parts. Idempotent."""
        ...


@dataclass(frozen=True, slots=True)
class Execution:
    """One run of a workflow, as far as the task status needs it: its status and, once it ended, its output or
    its error."""

    status: str  # RUNNING, SUCCEEDED, FAILED, TIMED_OUT, ABORTED
    updated: float  # unix seconds: the stop date, or the start date while running
    output: dict[str, Any] | None = None
    error: str = ""  # the error name (the failing task's error class name, as a Lambda's errorType)
    cause: str = ""  # the cause (a Lambda's is JSON: errorType, errorMessage, stackTrace)
    input: dict[str, Any] | None = None  # what it was started with: says which repository and branch it is for


class WorkflowRunner(Protocol):
    """One workflow (a state machine whose tasks are the commit's or the merge's steps) and its executions,
    named by the caller: the name is the task id clients poll."""

    def start(self, name: str, payload: dict[str, Any]) -> None:
        """Starts an execution and returns without waiting for it. Starting a running execution again with the
        same payload is a no-op; a name used before otherwise raises AlreadyExists."""
        ...

    def describe(self, name: str) -> Execution | None:
        """The execution of that name, or None when there is none."""
        ...


class PullRequestStore(Protocol):
    """The pull requests of repositories (pull_requests.py), kept per repository generation: a repository
    deleted and created again under the same id sees none of the old one's."""

    def get(self, repo: Repository, pr_id: str) -> PullRequest:
        """Raises PullRequestNotFound."""
        ...

    def create(self, repo: Repository, pr: PullRequest) -> None:
        """Put-if-absent. Raises PullRequestExists when the id is taken."""
        ...

    def list(self, repo: Repository, after: str = "", limit: int = 1000) -> list[PullRequest]:
        """Up to ``limit`` pull requests with id > after, in id order."""
        ...

    def update(self, repo: Repository, pr: PullRequest, expected: PullRequest) -> None:
        """Compare-and-swap: replaces the stored pull request only while it still equals ``expected``.
        Raises PreconditionFailed when it changed meanwhile, PullRequestNotFound when it is gone."""
        ...

    def delete_all(self, repo: Repository) -> int:
        """Removes every pull request of this repository generation (the repository was deleted); how many."""
        ...


class BranchProtectionStore(Protocol):
    """The rules of repositories, each identified by (id, creation date), so that rules never outlive their
    repository: one deleted and created again under the same name starts unprotected."""

    def get(self, repo_id: str, creation_date: int) -> ProtectionRules:
        """The stored rules (no patterns, ETag "" when none were stored). Raises RepositoryNotFound for another
        generation of the repository."""
        ...

    def set(self, repo_id: str, creation_date: int, rules: ProtectionRules, expected_etag: str | None) -> None:
        """Stores ``rules`` if the stored ETag is ``expected_etag`` ("" = none stored yet; None = whatever is
        stored). Raises PreconditionFailed when it is not, RepositoryNotFound when the repository is gone."""
        ...
