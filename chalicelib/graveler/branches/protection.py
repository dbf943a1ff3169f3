"""Branch protection: per-repository rules (lakeFS's BranchProtectionRule patterns) and the check that every write
path of the engine makes before it changes a branch.

A protected branch takes no direct change: no staged write (upload, link, copy, delete, reset of uncommitted
changes), no commit, revert, cherry-pick or hard reset, and it cannot be deleted. Merges into it are what it is
for, so they stay allowed. As in lakeFS, a pattern is an fnmatch glob over the branch name (``*``, ``?``,
``[...]``); a branch is protected when any pattern matches it whole.

The rules are read through a port (the repository's own DynamoDB item when deployed) and kept in a per-container
cache for ``ttl_seconds``: a change made in one Lambda container applies there at once and in every other one
within that time. The API, the S3 gateway and the workflow tasks all reach the check through the same engine,
so none of them can skip it.

Setting the rules is a compare-and-swap on their ETag (lakeFS's If-Match): the ETag is a hash of the stored
patterns, ``""`` while none were ever stored.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import time
from collections.abc import Callable, Iterable

from .. import errors
from ..ports import BranchProtectionStore
from ..records import ProtectionRules, Repository
from ..storage.caches import TTLCache

__all__ = [
    "BranchProtection",
    "BranchProtectionStore",
    "NoProtection",
    "ProtectionRules",
]

# How long a container trusts the rules it read; the README states it as the time a change takes to reach every
# container.
DEFAULT_TTL_SECONDS = 5.0
MAX_PATTERNS = 100
MAX_PATTERN_CHARS = 256

WRITE_MESSAGE = "cannot write to protected branch"
COMMIT_MESSAGE = "cannot commit to protected branch"
DELETE_MESSAGE = "cannot delete protected branch"


def etag_of(patterns: Iterable[str]) -> str:
    return hashlib.sha256(json.dumps(list(patterns)).encode()).hexdigest()


def normalize_patterns(patterns: Iterable[str]) -> tuple[str, ...]:
    """The patterns without duplicates (first occurrence kept). Raises Invalid for an empty, overlong or
    malformed pattern, or too many of them."""
    unique: list[str] = []
    for pattern in patterns:
        if not isinstance(pattern, str) or not pattern or len(pattern) > MAX_PATTERN_CHARS:
            raise errors.Invalid(f"a branch protection pattern is a string of 1-{MAX_PATTERN_CHARS} characters")
        if any(c in pattern for c in "\r\n\0"):
            raise errors.Invalid("a branch protection pattern cannot hold control characters")
        if pattern not in unique:
            unique.append(pattern)
    if len(unique) > MAX_PATTERNS:
        raise errors.Invalid(f"at most {MAX_PATTERNS} branch protection rules per repository")
    return tuple(unique)


def clean_etag(value: str) -> str:
    """An If-Match value as the ETag it names: quotes and a weak prefix are tolerated."""
    value = value.strip()
    value = value.removeprefix("W/")
    return value.strip('"')


def matches(patterns: Iterable[str], branch_id: str) -> bool:
    return any(fnmatch.fnmatchcase(branch_id, pattern) for pattern in patterns)


class BranchProtection:
    """Reads and sets the rules, and refuses operations on protected branches. Thread-safe."""

    def __init__(
        self,
        store: BranchProtectionStore,
        clock: Callable[[], float] = time.monotonic,
        ttl_seconds: float = DEFAULT_TTL_SECONDS,
    ) -> None:
        self.store = store
        self._patterns_of: TTLCache[tuple[str, int], tuple[str, ...]] = TTLCache(ttl_seconds, clock)

    def get_rules(self, repo: Repository) -> ProtectionRules:
        """The stored rules, read now (not from the cache): what GET .../settings/branch_protection shows."""
        rules = self.store.get(repo.id, repo.creation_date)
        self._remember(repo, rules.patterns)
        return rules

    def set_rules(self, repo: Repository, patterns: Iterable[str], if_match: str | None = None) -> ProtectionRules:
        """Replaces the rules, only if their ETag is still ``if_match`` when given. Raises Invalid,
        PreconditionFailed."""
        normalized = normalize_patterns(patterns)
        rules = ProtectionRules(normalized, etag_of(normalized))
        self.store.set(repo.id, repo.creation_date, rules, None if if_match is None else clean_etag(if_match))
        self._remember(repo, normalized)
        return rules

    def is_protected(self, repo: Repository, branch_id: str) -> bool:
        return matches(self._patterns(repo), branch_id)

    def refuse_write(self, repo: Repository, branch_id: str) -> None:
        """Raises WriteToProtectedBranch for a staged change (upload, link, delete, reset) of a protected branch."""
        if self.is_protected(repo, branch_id):
            raise errors.WriteToProtectedBranch(WRITE_MESSAGE)

    def refuse_commit(self, repo: Repository, branch_id: str) -> None:
        """Raises CommitToProtectedBranch for a new head made on a protected branch other than by a merge."""
        if self.is_protected(repo, branch_id):
            raise errors.CommitToProtectedBranch(COMMIT_MESSAGE)

    def refuse_delete(self, repo: Repository, branch_id: str) -> None:
        if self.is_protected(repo, branch_id):
            raise errors.DeleteProtectedBranch(DELETE_MESSAGE)

    def _patterns(self, repo: Repository) -> tuple[str, ...]:
        return self._patterns_of.lookup(
            (repo.id, repo.creation_date), lambda: self.store.get(repo.id, repo.creation_date).patterns
        )

    def _remember(self, repo: Repository, patterns: tuple[str, ...]) -> None:
        self._patterns_of.put((repo.id, repo.creation_date), patterns)


class NoProtection:
    """The check of an engine built without a rules store (some unit tests): nothing is ever protected."""

    def refuse_write(self, repo: Repository, branch_id: str) -> None:
        return None

    def refuse_commit(self, repo: Repository, branch_id: str) -> None:
        return None

    def refuse_delete(self, repo: Repository, branch_id: str) -> None:
        return None
