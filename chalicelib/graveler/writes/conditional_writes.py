"""A staged write under a precondition (If-None-Match: *, If-Match), the one way every path that takes one stages:
upload, link (multipart completion, staging/backing), copy, conditional delete, the atomic conditional upload.
The precondition is checked on what the branch shows (preconditions.expectations) and the write is ONE
conditional staging write whose condition is the state it named, guarded by the branch's token
(staging.stage_checked)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from ..committed import CommittedManager
from ..ports import RefStore, StagingStore
from ..records import Branch, Key, MetaRangeID, Repository, StagedEntry, StagedExpectation
from .preconditions import Precondition, expectations
from .staging import stage_checked

__all__ = ["StagingPorts", "expect_on", "stage_conditionally"]


class StagingPorts(Protocol):
    """What a conditional write reads and writes: any record with these three stores (a use case's own)."""

    @property
    def refs(self) -> RefStore: ...
    @property
    def staging(self) -> StagingStore: ...
    @property
    def committed(self) -> CommittedManager: ...


def expect_on(
    parts: StagingPorts, repo: Repository, wanted: Sequence[tuple[Key, Precondition]]
) -> Callable[[Branch], list[StagedExpectation]]:
    """What the conditional write expects on a branch as it is (raises PreconditionFailed when a precondition
    fails there)."""

    def metarange(branch: Branch) -> MetaRangeID:
        return parts.refs.get_commit(repo.id, branch.commit_id).meta_range_id

    def expect(branch: Branch) -> list[StagedExpectation]:
        return expectations(parts.staging, parts.committed, repo.storage_namespace, metarange, branch, wanted)

    return expect


def stage_conditionally(
    parts: StagingPorts,
    repo: Repository,
    branch: Branch,
    changes: Sequence[StagedEntry],
    preconditions: Sequence[Precondition],
    first: Sequence[StagedExpectation] | None = None,
) -> None:
    """Stages the changes, each under its precondition, as one conditional write (``first``: the expectations
    the caller evaluated on ``branch`` already, with expect_on, before writing any data)."""
    wanted = [(change.key, precondition) for change, precondition in zip(changes, preconditions, strict=True)]
    stage_checked(parts.refs, parts.staging, repo.id, branch, changes, expect_on(parts, repo, wanted), first)
