"""Branch protection in the engine: glob matching as lakeFS's, and the per-container cache that bounds how long a
rule change takes to reach another container (counted reads and a hand-moved clock, no sleeping)."""

from __future__ import annotations

import pytest

from chalicelib.adapters.memory import MemoryBranchProtectionStore, MemoryRefStore
from chalicelib.graveler import errors
from chalicelib.graveler.branches.protection import (
    BranchProtection,
    ProtectionRules,
    clean_etag,
    matches,
    normalize_patterns,
)
from chalicelib.graveler.records import (
    BranchID,
    Repository,
    RepositoryID,
    RepositoryState,
)

REPO = Repository(RepositoryID("repo1"), "s3://b/repo1", BranchID("main"), 1_700_000_000, RepositoryState.ACTIVE)


class CountingStore(MemoryBranchProtectionStore):
    def __init__(self, refs: MemoryRefStore) -> None:
        super().__init__(refs)
        self.reads = 0

    def get(self, repo_id: str, creation_date: int) -> ProtectionRules:
        self.reads += 1
        return super().get(repo_id, creation_date)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.parametrize(
    ("pattern", "branch", "expected"),
    [
        ("main", "main", True),
        ("main", "main2", False),
        ("release-*", "release-1.2", True),
        ("release-*", "release", False),
        ("v?", "v1", True),
        ("v?", "v10", False),
        ("*", "anything", True),
        ("[ab]x", "bx", True),
        ("[ab]x", "cx", False),
        ("Main", "main", False),
    ],
)
def test_patterns_match_whole_branch_names(pattern: str, branch: str, expected: bool) -> None:
    assert matches([pattern], branch) is expected


def test_patterns_are_validated_and_deduplicated() -> None:
    assert normalize_patterns(["a", "b*", "a"]) == ("a", "b*")
    for bad in ([""], ["x" * 257], ["a\nb"], [f"p{i}" for i in range(101)]):
        with pytest.raises(errors.Invalid):
            normalize_patterns(bad)
    assert clean_etag(' W/"abc" ') == "abc" and clean_etag("abc") == "abc"


def test_a_rule_change_reaches_another_container_within_the_ttl() -> None:
    refs = MemoryRefStore()
    refs.create_repository(REPO)
    store = CountingStore(refs)
    clock = Clock()
    here, there = BranchProtection(store, clock, ttl_seconds=5), BranchProtection(store, clock, ttl_seconds=5)
    there.refuse_write(REPO, "main")  # reads the (empty) rules once, then trusts them for 5 s
    assert store.reads == 1
    for _ in range(50):
        there.refuse_write(REPO, "main")
        there.refuse_commit(REPO, "dev")
    assert store.reads == 1

    here.set_rules(REPO, ["main"])
    with pytest.raises(errors.WriteToProtectedBranch, match=r"^cannot write to protected branch$"):
        here.refuse_write(REPO, "main")  # at once where it was changed
    clock.now += 4.9
    there.refuse_write(REPO, "main")  # the other container still trusts what it read
    assert store.reads == 1
    clock.now += 0.2
    with pytest.raises(errors.CommitToProtectedBranch):
        there.refuse_commit(REPO, "main")  # past the TTL it reads again and refuses
    assert store.reads == 2
    with pytest.raises(errors.DeleteProtectedBranch, match=r"^cannot delete protected branch$"):
        there.refuse_delete(REPO, "main")
    there.refuse_delete(REPO, "dev")
    assert store.reads == 2


def test_set_rules_honours_if_match() -> None:
    refs = MemoryRefStore()
    refs.create_repository(REPO)
    protection = BranchProtection(MemoryBranchProtectionStore(refs), Clock())
    first = protection.set_rules(REPO, ["main"], if_match="")
    with pytest.raises(errors.PreconditionFailed):
        protection.set_rules(REPO, ["dev"], if_match="")
    protection.set_rules(REPO, ["dev"], if_match=f'"{first.etag}"')
    assert protection.get_rules(REPO).patterns == ("dev",)
