"""A commit record written as given (lakeFS's CreateCommitRecord): what restoring refs from a dump or another
system needs, since the record's metarange already exists and no staging is involved.

lakeFS stores the record under the id the caller names. Lakelet's commit ids are content hashes that every ref
resolution and merge base relies on, so the id must be the hash of the record (identity.commit_id: lakeFS's own
version 1 hashing, which any record lakeFS wrote carries), and the metarange it names must exist in the
repository's namespace; a record already stored is a 409, as in lakeFS. A read-only repository takes one only
with ``force``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .. import errors
from ..identity import commit_id
from ..ports import BlockStore, RefStore
from ..reads.shared import RepositoryForWrite
from ..records import EMPTY_METARANGE, Commit, CommitID, MetaRangeID
from ..writes.addressing import metadata_address

__all__ = ["CommitRecord", "CommitRecordParts", "CommitRecords"]

# lakeFS's CommitVersion: 0 is the first layout (before parents were ordered), 1 the current one. Lakelet
# hashes version 1 only.
HASHED_VERSION = 1


@dataclass(frozen=True, slots=True)
class CommitRecord:
    """lakeFS's CommitRecordCreation."""

    commit_id: str
    version: int
    committer: str
    message: str
    metarange_id: str
    creation_date: int
    parents: tuple[str, ...]
    generation: int
    metadata: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class CommitRecordParts:
    """What writing commit records uses: the ref and block stores and a repository open for writes."""

    refs: RefStore
    blocks: BlockStore
    repository_for_write: RepositoryForWrite


class CommitRecords:
    """The commit-record use case."""

    def __init__(self, parts: CommitRecordParts) -> None:
        self._parts = parts

    def create_commit_record(self, repo_id: str, record: CommitRecord, force: bool = False) -> Commit:
        """Stores the record. Raises ReadOnlyRepository (without force), Invalid (a version other than 1, an id
        that is not the record's hash, a generation below 1, a metarange that does not exist), CommitExists."""
        repo = self._parts.repository_for_write(repo_id, force)
        if record.version != HASHED_VERSION:
            raise errors.Invalid(f"commit record version {record.version} is not supported: only version 1")
        if record.generation < 1:
            raise errors.Invalid("commit record generation must be at least 1")
        parents = tuple(CommitID(p) for p in record.parents)
        meta_range = MetaRangeID(record.metarange_id)
        expected = commit_id(
            record.committer, record.message, meta_range, record.creation_date, record.metadata, parents
        )
        if record.commit_id != expected:
            raise errors.Invalid(f"commit_id {record.commit_id!r} is not the hash of the record ({expected})")
        if meta_range != EMPTY_METARANGE and not self._parts.blocks.exists(
            metadata_address(repo.storage_namespace, meta_range)
        ):
            raise errors.Invalid(f"metarange {meta_range} does not exist in the repository's storage namespace")
        try:
            self._parts.refs.get_commit(repo.id, expected)
        except errors.CommitNotFound:
            pass
        else:
            raise errors.CommitExists(f"commit {expected} already exists")
        commit = Commit(
            id=expected,
            committer=record.committer,
            message=record.message,
            creation_date=float(record.creation_date),
            meta_range_id=meta_range,
            metadata=dict(record.metadata),
            parents=parents,
            generation=record.generation,
        )
        self._parts.refs.add_commit(repo.id, commit)
        return commit
