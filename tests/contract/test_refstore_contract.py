"""RefStore contract: the in-memory twin and DynamoRefStore (on moto) behave the same."""

from __future__ import annotations

import threading
from collections import Counter
from typing import Any

import pytest
from moto.dynamodb.responses import DynamoHandler

from chalicelib.graveler import errors
from chalicelib.graveler.ports import RefStore
from chalicelib.graveler.records import (
    EMPTY_METARANGE,
    Branch,
    BranchID,
    Commit,
    CommitID,
    MetaRangeID,
    Repository,
    RepositoryID,
    RepositoryState,
    StagingToken,
    Tag,
    TagID,
)

from .conftest import Moto

REPO = RepositoryID("repo1")


def make_repo(repo_id: str, **overrides: object) -> Repository:
    fields: dict[str, object] = {
        "id": RepositoryID(repo_id),
        "storage_namespace": f"s3://bucket/{repo_id}",
        "default_branch_id": BranchID("main"),
        "creation_date": 1_700_000_000,
    }
    fields.update(overrides)
    return Repository(**fields)  # type: ignore[arg-type]


def make_branch(branch_id: str, commit: str = "c0", token: str = "t0", sealed: tuple[str, ...] = ()) -> Branch:
    return Branch(
        id=BranchID(branch_id),
        commit_id=CommitID(commit),
        staging_token=StagingToken(token),
        sealed_tokens=tuple(StagingToken(t) for t in sealed),
    )


def make_commit(commit_id: str, **overrides: object) -> Commit:
    fields: dict[str, object] = {
        "id": CommitID(commit_id),
        "committer": "alice",
        "message": f"commit {commit_id}",
        "creation_date": 1_700_000_100,
        "meta_range_id": MetaRangeID("mr-" + commit_id),
    }
    fields.update(overrides)
    return Commit(**fields)  # type: ignore[arg-type]


# repositories


def test_repository_round_trip(ref_store: RefStore) -> None:
    repo = make_repo("alpha", read_only=True, default_branch_id=BranchID("trunk"))
    ref_store.create_repository(repo)
    assert ref_store.get_repository(RepositoryID("alpha")) == repo


def test_repository_defaults_round_trip(ref_store: RefStore) -> None:
    repo = make_repo("beta")
    ref_store.create_repository(repo)
    got = ref_store.get_repository(RepositoryID("beta"))
    assert got == repo
    assert got.state is RepositoryState.ACTIVE
    assert got.read_only is False


def test_get_missing_repository(ref_store: RefStore) -> None:
    with pytest.raises(errors.RepositoryNotFound):
        ref_store.get_repository(RepositoryID("nope"))


def test_create_existing_repository_keeps_the_first(ref_store: RefStore) -> None:
    first = make_repo("alpha")
    ref_store.create_repository(first)
    with pytest.raises(errors.RepositoryExists):
        ref_store.create_repository(make_repo("alpha", storage_namespace="s3://other/ns"))
    assert ref_store.get_repository(RepositoryID("alpha")) == first


def test_list_repositories_sorted_and_paged(ref_store: RefStore) -> None:
    ids = ["m", "b", "z", "a", "k", "b-1", "B"]
    for repo_id in ids:
        ref_store.create_repository(make_repo(repo_id))
    expected = sorted(ids)
    assert [r.id for r in ref_store.list_repositories()] == expected
    assert [r.id for r in ref_store.list_repositories(limit=3)] == expected[:3]
    assert [r.id for r in ref_store.list_repositories(after="b", limit=2)] == ["b-1", "k"]
    assert [r.id for r in ref_store.list_repositories(after="z")] == []
    # Walking page by page visits every repository exactly once.
    seen: list[str] = []
    after = ""
    while page := ref_store.list_repositories(after=after, limit=2):
        seen.extend(r.id for r in page)
        after = page[-1].id
    assert seen == expected


def test_delete_repository_removes_it_and_what_it_owns(ref_store: RefStore) -> None:
    ref_store.create_repository(make_repo("doomed"))
    ref_store.create_repository(make_repo("kept"))
    doomed, kept = RepositoryID("doomed"), RepositoryID("kept")
    for repo_id in (doomed, kept):
        ref_store.create_branch(repo_id, make_branch("main"))
        ref_store.create_branch(repo_id, make_branch("dev"))
        ref_store.create_tag(repo_id, Tag(id=TagID("v1"), commit_id=CommitID("c1")))
        ref_store.add_commit(repo_id, make_commit("c1"))
        ref_store.add_commit(repo_id, make_commit("c2"))

    ref_store.delete_repository(doomed)

    with pytest.raises(errors.RepositoryNotFound):
        ref_store.get_repository(doomed)
    assert [r.id for r in ref_store.list_repositories()] == ["kept"]
    assert ref_store.list_branches(doomed) == []
    assert ref_store.list_tags(doomed) == []
    assert ref_store.list_commit_ids(doomed, "", 100) == []
    assert list(ref_store.iterate_commits(doomed)) == []
    with pytest.raises(errors.BranchNotFound):
        ref_store.get_branch(doomed, BranchID("main"))
    with pytest.raises(errors.CommitNotFound):
        ref_store.get_commit(doomed, CommitID("c1"))
    # The other repository is untouched.
    assert [b.id for b in ref_store.list_branches(kept)] == ["dev", "main"]
    assert [t.id for t in ref_store.list_tags(kept)] == ["v1"]
    assert ref_store.list_commit_ids(kept, "", 100) == ["c1", "c2"]


def test_recreated_repository_starts_empty(ref_store: RefStore) -> None:
    ref_store.create_repository(make_repo("again"))
    ref_store.create_branch(RepositoryID("again"), make_branch("old"))
    ref_store.delete_repository(RepositoryID("again"))
    ref_store.create_repository(make_repo("again"))
    assert ref_store.list_branches(RepositoryID("again")) == []


def test_create_branch_tied_to_a_generation(ref_store: RefStore) -> None:
    ref_store.create_repository(make_repo("repo1", generation="g1"))
    assert ref_store.get_repository(REPO).generation == "g1"
    ref_store.create_branch(REPO, make_branch("dev"), generation="g1")
    assert ref_store.get_branch(REPO, BranchID("dev")) == make_branch("dev")
    with pytest.raises(errors.BranchExists):
        ref_store.create_branch(REPO, make_branch("dev", commit="c9"), generation="g1")
    # Begun against another generation (the repository was deleted and created again meanwhile): refused.
    with pytest.raises(errors.RepositoryNotFound):
        ref_store.create_branch(REPO, make_branch("stale"), generation="g0")
    ref_store.delete_repository(REPO)
    with pytest.raises(errors.RepositoryNotFound):
        ref_store.create_branch(REPO, make_branch("late"), generation="g1")
    ref_store.create_repository(make_repo("repo1", generation="g2"))
    with pytest.raises(errors.RepositoryNotFound):
        ref_store.create_branch(REPO, make_branch("late"), generation="g1")
    assert ref_store.list_branches(REPO) == []


def test_create_tag_tied_to_a_generation(ref_store: RefStore) -> None:
    ref_store.create_repository(make_repo("repo1", generation="g1"))
    ref_store.create_tag(REPO, Tag(TagID("v1"), CommitID("c1")), generation="g1")
    with pytest.raises(errors.TagExists):
        ref_store.create_tag(REPO, Tag(TagID("v1"), CommitID("c2")), generation="g1")
    with pytest.raises(errors.RepositoryNotFound):
        ref_store.create_tag(REPO, Tag(TagID("v2"), CommitID("c1")), generation="g0")
    assert ref_store.list_tags(REPO) == [Tag(TagID("v1"), CommitID("c1"))]


@pytest.mark.parametrize("state", [RepositoryState.IN_DELETION])
def test_create_branch_refused_while_the_repository_is_deleted(ref_store: RefStore, state: RepositoryState) -> None:
    ref_store.create_repository(make_repo("repo1", generation="g1", state=state))
    with pytest.raises(errors.RepositoryNotFound):
        ref_store.create_branch(REPO, make_branch("dev"), generation="g1")
    with pytest.raises(errors.BranchNotFound):
        ref_store.get_branch(REPO, BranchID("dev"))


def test_create_branch_in_a_repository_from_before_generations(ref_store: RefStore) -> None:
    ref_store.create_repository(make_repo("repo1"))
    assert ref_store.get_repository(REPO).generation == ""
    ref_store.create_branch(REPO, make_branch("dev"), generation="")
    with pytest.raises(errors.RepositoryNotFound):
        ref_store.create_branch(REPO, make_branch("dev2"), generation="g1")


def test_repository_range_format_is_stored(ref_store: RefStore) -> None:
    ref_store.create_repository(make_repo("repo1", range_format=2))
    ref_store.create_repository(make_repo("repo2"))
    assert ref_store.get_repository(REPO).range_format == 2
    assert ref_store.get_repository(RepositoryID("repo2")).range_format == 1
    assert [r.range_format for r in ref_store.list_repositories()] == [2, 1]


def test_delete_missing_repository(ref_store: RefStore) -> None:
    with pytest.raises(errors.RepositoryNotFound):
        ref_store.delete_repository(RepositoryID("nope"))


# branches


def test_branch_round_trip(ref_store: RefStore) -> None:
    branch = make_branch("main", commit="abc", token="tok-1", sealed=("tok-0", "tok-00"))
    ref_store.create_branch(REPO, branch)
    assert ref_store.get_branch(REPO, BranchID("main")) == branch


def test_get_missing_branch(ref_store: RefStore) -> None:
    with pytest.raises(errors.BranchNotFound):
        ref_store.get_branch(REPO, BranchID("nope"))


def test_create_existing_branch(ref_store: RefStore) -> None:
    ref_store.create_branch(REPO, make_branch("main", commit="c1"))
    with pytest.raises(errors.BranchExists):
        ref_store.create_branch(REPO, make_branch("main", commit="c2"))
    assert ref_store.get_branch(REPO, BranchID("main")).commit_id == "c1"


def test_same_branch_name_in_two_repositories(ref_store: RefStore) -> None:
    ref_store.create_branch(REPO, make_branch("main", commit="c1"))
    ref_store.create_branch(RepositoryID("repo2"), make_branch("main", commit="c2"))
    assert ref_store.get_branch(REPO, BranchID("main")).commit_id == "c1"
    assert ref_store.get_branch(RepositoryID("repo2"), BranchID("main")).commit_id == "c2"


def test_set_branch_with_the_current_state_succeeds(ref_store: RefStore) -> None:
    old = make_branch("main", commit="c1", token="t1")
    ref_store.create_branch(REPO, old)
    sealed = make_branch("main", commit="c1", token="t2", sealed=("t1",))
    ref_store.set_branch(REPO, sealed, expected=old)
    assert ref_store.get_branch(REPO, BranchID("main")) == sealed
    committed = make_branch("main", commit="c2", token="t2")
    ref_store.set_branch(REPO, committed, expected=sealed)
    assert ref_store.get_branch(REPO, BranchID("main")) == committed


@pytest.mark.parametrize(
    "stale",
    [
        make_branch("main", commit="c0", token="t1", sealed=("t0",)),  # another commit id
        make_branch("main", commit="c1", token="t9", sealed=("t0",)),  # another staging token
        make_branch("main", commit="c1", token="t1"),  # sealed tokens missing
        make_branch("main", commit="c1", token="t1", sealed=("t0", "t00")),  # one sealed token more
        make_branch("main", commit="c1", token="t1", sealed=("tX",)),  # another sealed token
    ],
    ids=["commit", "token", "no-sealed", "more-sealed", "other-sealed"],
)
def test_set_branch_with_a_stale_expectation_conflicts(ref_store: RefStore, stale: Branch) -> None:
    current = make_branch("main", commit="c1", token="t1", sealed=("t0",))
    ref_store.create_branch(REPO, current)
    with pytest.raises(errors.Conflict):
        ref_store.set_branch(REPO, make_branch("main", commit="c2", token="t2"), expected=stale)
    assert ref_store.get_branch(REPO, BranchID("main")) == current


def test_set_branch_compares_sealed_tokens_in_order(ref_store: RefStore) -> None:
    current = make_branch("main", sealed=("t1", "t2"))
    ref_store.create_branch(REPO, current)
    with pytest.raises(errors.Conflict):
        ref_store.set_branch(REPO, make_branch("main", commit="c9"), expected=make_branch("main", sealed=("t2", "t1")))
    assert ref_store.get_branch(REPO, BranchID("main")) == current


def test_retired_tokens_are_stored_and_compared(ref_store: RefStore) -> None:
    current = make_branch("main", commit="c1")
    ref_store.create_branch(REPO, current)
    moved = Branch(BranchID("main"), CommitID("c2"), StagingToken("t0"), (), (StagingToken("r1"), StagingToken("r2")))
    ref_store.set_branch(REPO, moved, expected=current)
    assert ref_store.get_branch(REPO, BranchID("main")) == moved
    # An expectation that misses the retired tokens (a writer that read before the move) loses.
    with pytest.raises(errors.Conflict):
        ref_store.set_branch(REPO, make_branch("main", commit="c3"), expected=make_branch("main", commit="c2"))
    cleared = Branch(BranchID("main"), CommitID("c2"), StagingToken("t1"), (StagingToken("t0"),))
    ref_store.set_branch(REPO, cleared, expected=moved)
    assert ref_store.get_branch(REPO, BranchID("main")).retired_tokens == ()


def test_many_retired_tokens_round_trip_and_are_compared_whole(ref_store: RefStore) -> None:
    """A busy branch retires a token per commit: a hundred entries come back in order, and an expectation that
    misses only the newest loses the swap."""
    current = make_branch("main", commit="c1")
    ref_store.create_branch(REPO, current)
    entries = tuple(StagingToken(f"repo-main:{i:04d}#s4|1700000{i:03d}.125") for i in range(120))
    moved = Branch(BranchID("main"), CommitID("c2"), StagingToken("t0"), (), entries)
    ref_store.set_branch(REPO, moved, expected=current)
    assert ref_store.get_branch(REPO, BranchID("main")).retired_tokens == entries
    stale = Branch(BranchID("main"), CommitID("c2"), StagingToken("t0"), (), entries[:-1])
    with pytest.raises(errors.Conflict):
        ref_store.set_branch(REPO, make_branch("main", commit="c3"), expected=stale)
    struck = Branch(BranchID("main"), CommitID("c2"), StagingToken("t0"), (), entries[60:])
    ref_store.set_branch(REPO, struck, expected=moved)
    assert ref_store.get_branch(REPO, BranchID("main")) == struck


def test_set_missing_branch_conflicts(ref_store: RefStore) -> None:
    branch = make_branch("ghost")
    with pytest.raises(errors.Conflict):
        ref_store.set_branch(REPO, make_branch("ghost", commit="c2"), expected=branch)
    with pytest.raises(errors.BranchNotFound):
        ref_store.get_branch(REPO, BranchID("ghost"))


def test_set_deleted_branch_conflicts(ref_store: RefStore) -> None:
    branch = make_branch("gone")
    ref_store.create_branch(REPO, branch)
    ref_store.delete_branch(REPO, BranchID("gone"))
    with pytest.raises(errors.Conflict):
        ref_store.set_branch(REPO, make_branch("gone", commit="c2"), expected=branch)
    with pytest.raises(errors.BranchNotFound):
        ref_store.get_branch(REPO, BranchID("gone"))


def test_racing_compare_and_swaps_have_exactly_one_winner(ref_store: RefStore) -> None:
    start = make_branch("main", commit="c0", token="t0")
    ref_store.create_branch(REPO, start)
    expected = start
    for round_number in range(20):
        candidates = [make_branch("main", commit=f"r{round_number}-w{w}", token=f"t{round_number}") for w in range(2)]
        barrier = threading.Barrier(len(candidates))
        outcomes: dict[int, str] = {}

        def attempt(
            writer: int,
            mine: Branch = expected,
            batch: list[Branch] = candidates,
            barrier: threading.Barrier = barrier,
            outcomes: dict[int, str] = outcomes,
        ) -> None:
            barrier.wait()
            try:
                ref_store.set_branch(REPO, batch[writer], expected=mine)
                outcomes[writer] = "won"
            except errors.Conflict:
                outcomes[writer] = "lost"
            except Exception as e:  # reported through the assertion below
                outcomes[writer] = repr(e)

        threads = [threading.Thread(target=attempt, args=(w,)) for w in range(len(candidates))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

        assert sorted(outcomes.values()) == ["lost", "won"]
        winner = next(w for w, outcome in outcomes.items() if outcome == "won")
        assert ref_store.get_branch(REPO, BranchID("main")) == candidates[winner]
        expected = candidates[winner]


def test_delete_branch(ref_store: RefStore) -> None:
    ref_store.create_branch(REPO, make_branch("dev"))
    ref_store.delete_branch(REPO, BranchID("dev"))
    with pytest.raises(errors.BranchNotFound):
        ref_store.get_branch(REPO, BranchID("dev"))
    with pytest.raises(errors.BranchNotFound):
        ref_store.delete_branch(REPO, BranchID("dev"))
    # A deleted branch id can be created again.
    ref_store.create_branch(REPO, make_branch("dev", commit="c7"))
    assert ref_store.get_branch(REPO, BranchID("dev")).commit_id == "c7"


def test_list_branches_sorted_and_paged(ref_store: RefStore) -> None:
    ids = ["main", "dev", "feature/x", "feature-y", "a", "zeta", "Émile"]
    for branch_id in ids:
        ref_store.create_branch(REPO, make_branch(branch_id, commit=f"c-{branch_id}"))
    ref_store.create_branch(RepositoryID("other"), make_branch("other-branch"))
    expected = sorted(ids)
    listed = ref_store.list_branches(REPO)
    assert [b.id for b in listed] == expected
    assert all(b.commit_id == f"c-{b.id}" for b in listed)
    assert [b.id for b in ref_store.list_branches(REPO, limit=2)] == expected[:2]
    assert [b.id for b in ref_store.list_branches(REPO, after="feature-y", limit=2)] == ["feature/x", "main"]
    assert ref_store.list_branches(REPO, after="Émile") == []
    assert ref_store.list_branches(RepositoryID("empty")) == []


# tags


def test_tag_round_trip_and_duplicate(ref_store: RefStore) -> None:
    tag = Tag(id=TagID("v1.0"), commit_id=CommitID("c1"))
    ref_store.create_tag(REPO, tag)
    assert ref_store.get_tag(REPO, TagID("v1.0")) == tag
    with pytest.raises(errors.TagExists):
        ref_store.create_tag(REPO, Tag(id=TagID("v1.0"), commit_id=CommitID("c2")))
    assert ref_store.get_tag(REPO, TagID("v1.0")) == tag


def test_missing_tag(ref_store: RefStore) -> None:
    with pytest.raises(errors.TagNotFound):
        ref_store.get_tag(REPO, TagID("nope"))
    with pytest.raises(errors.TagNotFound):
        ref_store.delete_tag(REPO, TagID("nope"))


def test_delete_tag(ref_store: RefStore) -> None:
    ref_store.create_tag(REPO, Tag(id=TagID("v1"), commit_id=CommitID("c1")))
    ref_store.create_tag(REPO, Tag(id=TagID("v2"), commit_id=CommitID("c2")))
    ref_store.delete_tag(REPO, TagID("v1"))
    with pytest.raises(errors.TagNotFound):
        ref_store.get_tag(REPO, TagID("v1"))
    assert [t.id for t in ref_store.list_tags(REPO)] == ["v2"]


def test_list_tags_sorted_and_paged(ref_store: RefStore) -> None:
    ids = ["v2", "v10", "v1", "release/2024", "a"]
    for tag_id in ids:
        ref_store.create_tag(REPO, Tag(id=TagID(tag_id), commit_id=CommitID(f"c-{tag_id}")))
    expected = sorted(ids)
    listed = ref_store.list_tags(REPO)
    assert [t.id for t in listed] == expected
    assert all(t.commit_id == f"c-{t.id}" for t in listed)
    assert [t.id for t in ref_store.list_tags(REPO, limit=3)] == expected[:3]
    assert [t.id for t in ref_store.list_tags(REPO, after="v1")] == ["v10", "v2"]
    assert ref_store.list_tags(RepositoryID("empty")) == []


# commits


def test_commit_round_trip(ref_store: RefStore) -> None:
    commit = make_commit(
        "abc123",
        metadata={"key": "value", "unicode": "ñ✓", "empty": ""},
        parents=(CommitID("p2"), CommitID("p1")),
        generation=7,
    )
    ref_store.add_commit(REPO, commit)
    assert ref_store.get_commit(REPO, CommitID("abc123")) == commit


def test_commit_with_empty_metarange_and_no_parents(ref_store: RefStore) -> None:
    commit = make_commit("root", meta_range_id=EMPTY_METARANGE, message="")
    ref_store.add_commit(REPO, commit)
    got = ref_store.get_commit(REPO, CommitID("root"))
    assert got == commit
    assert got.meta_range_id == "" and got.parents == () and got.metadata == {}


def test_get_missing_commit(ref_store: RefStore) -> None:
    with pytest.raises(errors.CommitNotFound):
        ref_store.get_commit(REPO, CommitID("nope"))


def test_add_commit_is_idempotent(ref_store: RefStore) -> None:
    commit = make_commit("c1")
    ref_store.add_commit(REPO, commit)
    ref_store.add_commit(REPO, commit)
    assert ref_store.get_commit(REPO, CommitID("c1")) == commit
    assert ref_store.list_commit_ids(REPO, "", 10) == ["c1"]


def test_list_commit_ids_by_prefix(ref_store: RefStore) -> None:
    ids = ["a1b2", "a1c3", "a1b9", "b000", "a0ff", "a1"]
    for commit_id in ids:
        ref_store.add_commit(REPO, make_commit(commit_id))
    ref_store.add_commit(RepositoryID("other"), make_commit("a1zz"))
    assert ref_store.list_commit_ids(REPO, "a1", 10) == ["a1", "a1b2", "a1b9", "a1c3"]
    assert ref_store.list_commit_ids(REPO, "a1b", 10) == ["a1b2", "a1b9"]
    assert ref_store.list_commit_ids(REPO, "a1", 2) == ["a1", "a1b2"]
    assert ref_store.list_commit_ids(REPO, "", 100) == sorted(ids)
    assert ref_store.list_commit_ids(REPO, "c", 10) == []


def test_iterate_commits_in_id_order(ref_store: RefStore) -> None:
    commits = [make_commit(f"{n:03d}", parents=(CommitID(f"{n - 1:03d}"),) if n else ()) for n in (5, 1, 3, 0, 4, 2)]
    for commit in commits:
        ref_store.add_commit(REPO, commit)
    ref_store.add_commit(RepositoryID("other"), make_commit("999"))
    assert list(ref_store.iterate_commits(REPO)) == sorted(commits, key=lambda c: c.id)
    assert list(ref_store.iterate_commits(RepositoryID("empty"))) == []


def test_delete_commit_removes_only_that_commit(ref_store: RefStore) -> None:
    for commit_id in ("c1", "c2"):
        ref_store.add_commit(REPO, make_commit(commit_id))
    ref_store.add_commit(RepositoryID("other"), make_commit("c1"))
    ref_store.delete_commit(REPO, CommitID("c1"))
    with pytest.raises(errors.CommitNotFound):
        ref_store.get_commit(REPO, CommitID("c1"))
    assert ref_store.list_commit_ids(REPO, "", 10) == ["c2"]
    assert ref_store.get_commit(RepositoryID("other"), CommitID("c1")).id == "c1"
    ref_store.delete_commit(REPO, CommitID("c1"))  # gone already: a no-op


def test_iterate_commits_after_an_id(ref_store: RefStore) -> None:
    for commit_id in ("a", "b", "c", "d"):
        ref_store.add_commit(REPO, make_commit(commit_id))
    assert [c.id for c in ref_store.iterate_commits(REPO, after="b")] == ["c", "d"]
    assert [c.id for c in ref_store.iterate_commits(REPO, after="bb")] == ["c", "d"]
    assert [c.id for c in ref_store.iterate_commits(REPO, after="d")] == []
    assert [c.id for c in ref_store.iterate_commits(REPO, after="")] == ["a", "b", "c", "d"]


def _count_requests(monkeypatch: pytest.MonkeyPatch, calls: Counter[str]) -> None:
    """Counts the DynamoDB requests moto answers (its backend sees a batch as one put per item)."""
    for name in ("batch_write_item", "put_item"):
        original = getattr(DynamoHandler, name)

        def counted(self: DynamoHandler, _name: str = name, _original: Any = original) -> Any:
            calls[_name] += 1
            return _original(self)

        monkeypatch.setattr(DynamoHandler, name, counted)


def test_add_commits_in_batches(ref_store: RefStore, moto: Moto | None, monkeypatch: pytest.MonkeyPatch) -> None:
    commits = [make_commit(f"{n:04d}", metadata={"n": str(n)}, parents=(CommitID(f"{n - 1:04d}"),)) for n in range(60)]
    ref_store.add_commit(REPO, commits[7])  # already there: written again, unchanged
    requests: Counter[str] = Counter()
    _count_requests(monkeypatch, requests)
    ref_store.add_commits(REPO, [*commits, commits[3]])  # a repeat in one call is stored once
    if moto is not None:
        # 60 commits: three BatchWriteItem requests of at most 25 items, no single puts.
        assert requests == {"batch_write_item": 3}
    assert list(ref_store.iterate_commits(REPO)) == commits
    assert ref_store.get_commit(REPO, CommitID("0042")) == commits[42]
    ref_store.add_commits(REPO, [])
    ref_store.add_commits(RepositoryID("other"), commits[:1])
    assert [c.id for c in ref_store.iterate_commits(RepositoryID("other"))] == ["0000"]
