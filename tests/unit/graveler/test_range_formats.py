"""Range formats: a repository records the format it was created with, and every writer of its ranges (commit,
merge, cherry-pick, import) cuts with that format's params, so the ids of a repository created before formats
existed never change. Counted in ranges and compared to a from-scratch write with each format's params."""

from __future__ import annotations

import pytest

from chalicelib.adapters.memory import MemoryBlockStore
from chalicelib.graveler import errors
from chalicelib.graveler.branches.branch_moves import new_staging_token
from chalicelib.graveler.commit.plan import SliceSpec
from chalicelib.graveler.committed import CommittedManager
from chalicelib.graveler.committed.params import RANGE_FORMAT_1, RANGE_FORMAT_2
from chalicelib.graveler.identity import new_commit
from chalicelib.graveler.imports.plan import ImportPlan, ImportSlice
from chalicelib.graveler.merge.plan import MergeFixed
from chalicelib.graveler.records import (
    EMPTY_METARANGE,
    Branch,
    BranchID,
    Entry,
    Repository,
    RepositoryID,
)
from chalicelib.graveler.usecases.repositories import INITIAL_COMMIT_MESSAGE

NS = "s3://bucket/formats"
# Long keys (about 2 KB a row with the address) make the formats cut differently on a few thousand rows: format 1
# (max 8 MiB, a hash hit about every 10,000 keys) keeps 3,000 of them in one range, format 2 (max 2.25 MiB) cannot.
PAD = "p" * 900


def key(n: int) -> str:
    return f"data/{n % 7}/{PAD}/obj-{n:05d}"


def entry(n: int, version: int = 0) -> Entry:
    return Entry(
        physical_address=f"{NS}/data/{PAD}/{n:05d}-v{version}",
        size=100 + n + version,
        etag=f"{n:08x}{version:04x}",
        mtime=1_700_000_000 + n,
        content_type="application/octet-stream",
        user_metadata={},
    )


def created_before_formats(g, repo_id: str = "old") -> Repository:
    """The records a release before range formats stored: the initial commit, the default branch, and a
    repository record without a format."""
    rid = RepositoryID(repo_id)
    initial = new_commit("", INITIAL_COMMIT_MESSAGE, EMPTY_METARANGE, 1_700_000_000.0, {}, (), 1)
    g.ports.refs.add_commit(rid, initial)
    g.ports.refs.create_branch(rid, Branch(BranchID("main"), initial.id, new_staging_token(repo_id, "main")))
    g.ports.refs.create_repository(Repository(rid, NS, BranchID("main"), 1_700_000_000, generation="gen"))
    return g.repositories.get_repository(repo_id)


def link(g, repo: str, branch: str, numbers, version: int = 0) -> None:
    for n in numbers:
        g.objects.link_object(repo, branch, key(n), entry(n, version))


def range_ids(g, ref_commit) -> list[str]:
    return [info.id for info in g.ports.committed.ranges(NS, ref_commit.meta_range_id)]


def from_scratch(g, ref_commit, params) -> list[str]:
    """The range ids of the same records written from scratch with ``params``."""
    records = list(g.ports.committed.iterate(NS, ref_commit.meta_range_id))
    manager = CommittedManager(MemoryBlockStore(), params)
    metarange = manager.write_metarange(NS, records)
    return [info.id for info in manager.ranges(NS, metarange)]


def test_a_new_repository_records_the_current_format(g):
    created = g.repositories.create_repository("new", "s3://bucket/new")
    assert created.range_format == 2
    assert g.repositories.get_repository("new").range_format == 2
    assert g.ports.refs.get_repository(RepositoryID("new")).range_format == 2


def test_a_record_without_a_format_reads_as_format_1(g):
    assert created_before_formats(g).range_format == 1


def test_a_repository_of_an_unknown_format_is_a_clear_503_not_a_500(g):
    """A record from a newer release (after a rollback): writing it with other cuts would change its ids."""
    rid = RepositoryID("newer")
    initial = new_commit("", INITIAL_COMMIT_MESSAGE, EMPTY_METARANGE, 1_700_000_000.0, {}, (), 1)
    g.ports.refs.add_commit(rid, initial)
    g.ports.refs.create_branch(rid, Branch(BranchID("main"), initial.id, new_staging_token("newer", "main")))
    g.ports.refs.create_repository(Repository(rid, NS, BranchID("main"), 1_700_000_000, range_format=3))
    link(g, "newer", "main", range(3))
    with pytest.raises(errors.StorageError, match="unknown range format 3"):
        g.commits.commit("newer", "main", "me", "m")
    assert g.branches.get_branch("newer", "main").sealed_tokens == ()  # refused before the seal
    with pytest.raises(errors.StorageError, match="unknown range format 3"):
        CommittedManager(MemoryBlockStore()).for_format(3)


@pytest.mark.parametrize("old", [True, False], ids=["format 1", "format 2"])
def test_commit_cuts_with_the_repository_format(g, old):
    repo = created_before_formats(g) if old else g.repositories.create_repository("old", NS)
    link(g, "old", "main", range(3000))
    head = g.commits.commit("old", "main", "me", "all", date=1_700_000_100)
    own, other = (RANGE_FORMAT_1, RANGE_FORMAT_2) if old else (RANGE_FORMAT_2, RANGE_FORMAT_1)
    assert repo.range_format == (1 if old else 2)
    assert range_ids(g, head) == from_scratch(g, head, own)
    assert range_ids(g, head) != from_scratch(g, head, other)
    assert len(range_ids(g, head)) == (1 if old else 3)
    # A second commit rewrites what it touches with the same format, never re-cutting the rest.
    link(g, "old", "main", range(0, 3000, 500), version=1)
    second = g.commits.commit("old", "main", "me", "some", date=1_700_000_200)
    assert range_ids(g, second) == from_scratch(g, second, own)


def test_commit_ids_of_a_format_1_repository_are_the_ones_before_formats(g):
    created_before_formats(g)
    link(g, "old", "main", range(3000))
    head = g.commits.commit("old", "main", "me", "all", date=1_700_000_100)
    link(g, "old", "main", range(0, 3000, 37), version=1)
    second = g.commits.commit("old", "main", "me", "some", date=1_700_000_200)
    # Computed with the release before range formats, on the same records.
    assert (head.id, second.id) == (GOLDEN_FORMAT_1_FIRST, GOLDEN_FORMAT_1_SECOND)


def test_commit_ids_of_a_format_2_repository_never_change(g):
    g.repositories.create_repository("new", NS)
    link(g, "new", "main", range(3000))
    head = g.commits.commit("new", "main", "me", "all", date=1_700_000_100)
    link(g, "new", "main", range(0, 3000, 37), version=1)
    second = g.commits.commit("new", "main", "me", "some", date=1_700_000_200)
    assert [head.meta_range_id, second.meta_range_id] == GOLDEN_FORMAT_2_METARANGES


@pytest.mark.parametrize("old", [True, False], ids=["format 1", "format 2"])
def test_merge_and_cherry_pick_cut_with_the_repository_format(g, old):
    if old:
        created_before_formats(g)
    else:
        g.repositories.create_repository("old", NS)
    own = RANGE_FORMAT_1 if old else RANGE_FORMAT_2
    link(g, "old", "main", range(0, 3000, 2))
    g.commits.commit("old", "main", "me", "evens", date=1_700_000_100)
    g.branches.create_branch("old", "side", "main")
    link(g, "old", "side", range(1, 3000, 2))
    g.commits.commit("old", "side", "me", "odds", date=1_700_000_200)
    link(g, "old", "main", range(0, 3000, 10), version=1)
    g.commits.commit("old", "main", "me", "tens", date=1_700_000_300)
    merged = g.merges.merge("old", "side", "main", "me", "merge")
    assert range_ids(g, merged) == from_scratch(g, merged, own)
    assert len(range_ids(g, merged)) == (1 if old else 3)

    g.branches.create_branch("old", "pick", "side")
    link(g, "old", "side", range(1, 3000, 3), version=2)
    change = g.commits.commit("old", "side", "me", "threes", date=1_700_000_400)
    picked = g.rewrites.cherry_pick("old", "pick", change.id, "me")
    assert range_ids(g, picked) == from_scratch(g, picked, own)


# The first two computed with the release before range formats (a repository record without a format); the
# format-2 metaranges when the format was introduced.
GOLDEN_FORMAT_1_FIRST = "0a97cb9eb7547872071c9c935648eff112710079f06fc029a4684f005e655036"
GOLDEN_FORMAT_1_SECOND = "6725110432940909b7f84c4d3d79553b5fec9c3125b3638df7c6fb21d16a8974"
GOLDEN_FORMAT_2_METARANGES = [
    "feae5719d7c81f29e1c75942bffa0bf8e0a9449fbc46dec438126e77bbd49015",
    "b7b64820141714fc96fc9182e2d8f429a7ae4efd8f562d1cd83df9f7a7ce2749",
]


def test_plans_of_executions_started_before_formats_read_as_format_1():
    slice_json = {"namespace": NS, "base_metarange": "mr", "tokens": [], "lo": "", "hi": None}
    assert SliceSpec.from_json(slice_json).range_format == 1
    assert SliceSpec.from_json({**slice_json, "range_format": 2}).range_format == 2
    assert SliceSpec(NS, "mr", (), "", None, 2).to_json()["range_format"] == 2
    fixed = {"namespace": NS, "dest_commit": "c", "dest_generation": 1, "source_generation": 1, "tokens": []}
    assert MergeFixed.from_json(fixed).range_format == 1
    assert MergeFixed.from_json({**fixed, "range_format": 2}).range_format == 2
    task = {
        "request": {"import_id": "i", "locations": []},
        "namespace": NS,
        "base_metarange": "",
        "bounds": {"lo": "", "hi": None, "part": "00000"},
    }
    assert ImportSlice.from_task(task).range_format == 1
    assert ImportSlice.from_task({**task, "range_format": 2}).range_format == 2
    plan = ImportPlan("c", 1, NS, "", "s3://bucket/m.json", 1, (), 2)
    assert ImportPlan.from_json(plan.to_json()).range_format == 2
    old = {k: v for k, v in plan.to_json().items() if k != "range_format"}
    assert ImportPlan.from_json(old).range_format == 1
