"""An import cuts the ranges it writes with the repository's range format: a repository created before formats
keeps format 1's cuts, a new one gets format 2's."""

from __future__ import annotations

import pytest

from chalicelib.adapters.memory import MemoryBlockStore
from chalicelib.graveler.branches.branch_moves import new_staging_token
from chalicelib.graveler.committed import CommittedManager
from chalicelib.graveler.committed.params import RANGE_FORMAT_1, RANGE_FORMAT_2
from chalicelib.graveler.identity import new_commit
from chalicelib.graveler.imports import COMMON_PREFIX, COMPLETED, ImportLocation
from chalicelib.graveler.records import EMPTY_METARANGE, Branch, BranchID, Repository, RepositoryID
from chalicelib.graveler.usecases.repositories import INITIAL_COMMIT_MESSAGE

from .conftest import put_source

NS = "s3://bucket/repo"
PAD = "p" * 900  # rows of about 2 KB (key and source address): 2,000 of them fit one format-1 range, not one of 2


@pytest.fixture(params=[1, 2], ids=["format 1", "format 2"])
def repo(request, g):
    if request.param == 2:
        return g.repositories.create_repository("repo", NS)
    rid = RepositoryID("repo")
    initial = new_commit("", INITIAL_COMMIT_MESSAGE, EMPTY_METARANGE, 1_700_000_000.0, {}, (), 1)
    g.ports.refs.add_commit(rid, initial)
    g.ports.refs.create_branch(rid, Branch(BranchID("main"), initial.id, new_staging_token("repo", "main")))
    g.ports.refs.create_repository(Repository(rid, NS, BranchID("main"), 1_700_000_000, generation="gen"))
    return g.repositories.get_repository("repo")


def test_import_cuts_with_the_repository_format(g, repo, importer, lister):
    lister.page_size = 500
    put_source(g, **{f"data__{PAD}__k{i:05d}": b"x" for i in range(2000)})
    request = importer.start(
        "repo", "main", [ImportLocation(COMMON_PREFIX, "s3://source/allowed/data/", "in/")], "a", "m"
    )
    record = importer.run(request, max_slices=4)
    assert record.state == COMPLETED and record.ingested == 2000
    metarange = g.commits.get_commit("repo", "main").meta_range_id
    written = [r.id for r in g.ports.committed.ranges(NS, metarange)]
    own, other = (RANGE_FORMAT_1, RANGE_FORMAT_2) if repo.range_format == 1 else (RANGE_FORMAT_2, RANGE_FORMAT_1)
    records = list(g.ports.committed.iterate(NS, metarange))

    def from_scratch(params):
        manager = CommittedManager(MemoryBlockStore(), params)
        return [r.id for r in manager.ranges(NS, manager.write_metarange(NS, records))]

    assert written == from_scratch(own) != from_scratch(other)
    assert len(written) == (1 if repo.range_format == 1 else 2)
