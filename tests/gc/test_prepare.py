"""The prepare step on the in-memory ports: which commits and staged addresses it writes, and how."""

from __future__ import annotations

import json

import pytest

from chalicelib import wiring
from chalicelib.gc import job_files, layout, prepare
from chalicelib.gc.rules import GCRulesNotFound, RulesStore
from chalicelib.graveler import errors
from chalicelib.graveler.reads.retention import BranchRetention, RetentionRules
from chalicelib.graveler.records import Branch, BranchID, RepositoryID, StagingToken

DAY = 86_400
NOW = 1_800_000_000.0
NS = "s3://test-bucket/repo"  # the bucket of the memory fixture


@pytest.fixture
def g(memory: wiring.Services):  # type: ignore[no-untyped-def]
    engine = memory.engine
    engine.repositories.create_repository("repo", NS)
    RulesStore(engine.repositories.namespace_files(NS)).set(RetentionRules(3, (BranchRetention(BranchID("main"), 10),)))
    return engine


def test_prepare_writes_active_commits_staged_addresses_and_a_manifest(g, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    g.objects.upload_object("repo", "main", "a", b"1")
    old = g.commits.commit("repo", "main", "u", "old", date=int(NOW - 30 * DAY))
    g.objects.upload_object("repo", "main", "a", b"2")
    recent = g.commits.commit("repo", "main", "u", "recent", date=int(NOW - 20 * DAY))
    g.branches.create_branch("repo", "dev", "main")
    staged_main = g.objects.upload_object("repo", "main", "s", b"s")
    staged_dev = g.objects.upload_object("repo", "dev", "d", b"d")
    g.objects.upload_object("repo", "dev", "gone", b"x")
    g.objects.delete_object("repo", "dev", "gone")  # a tombstone now: its address is no longer staged
    clock_calls: list[float] = []

    def clock() -> float:
        clock_calls.append(NOW)
        return NOW

    run = prepare.prepare(g, "repo", run_id="run-1", clock=clock)

    assert (run.run_id, run.repository, run.storage_namespace, run.prepared_at) == ("run-1", "repo", NS, NOW)
    # main (10 days): its head, 20 days old, is kept; dev (default 3 days) points at the same head.
    rows = job_files.read_commits_csv(g.ports.blocks.get(run.commits_location))
    assert [(cid, mid) for cid, mid, _ in rows] == [(recent.id, recent.meta_range_id)]
    assert old.id not in {cid for cid, _, _ in rows} and run.active_commits == 1
    assert run.staged_locations == (layout.staged_location(NS, "run-1") + "part-00000.parquet",)
    staged = job_files.read_addresses_parquet(g.ports.blocks.get(run.staged_locations[0]))
    assert staged == sorted([staged_main.physical_address, staged_dev.physical_address])
    manifest = json.loads(g.ports.blocks.get(layout.prepare_manifest_address(NS, "run-1")))
    assert manifest == {
        "format_version": 1,
        "run_id": "run-1",
        "repository": "repo",
        "storage_namespace": NS,
        "prepared_at": NOW,
        "rules": {"default_retention_days": 3, "branches": [{"branch_id": "main", "retention_days": 10}]},
        "active_commits": 1,
        "commits_location": run.commits_location,
        "staged_addresses": 2,
        "staged_locations": list(run.staged_locations),
        "addresses_location": run.addresses_location,
    }
    assert len(clock_calls) == 1


def test_addresses_in_sealed_tokens_count_as_staged(g) -> None:  # type: ignore[no-untyped-def]
    # A commit in flight: its sealed token still holds entries the commit has not stored yet.
    entry = g.objects.upload_object("repo", "main", "a", b"1")
    rid = RepositoryID("repo")
    branch = g.ports.refs.get_branch(rid, BranchID("main"))
    sealed = Branch(branch.id, branch.commit_id, StagingToken("fresh-token"), (branch.staging_token,))
    g.ports.refs.set_branch(rid, sealed, expected=branch)
    newer = g.objects.upload_object("repo", "main", "b", b"2")

    run = prepare.prepare(g, "repo", clock=lambda: NOW)

    staged = job_files.read_addresses_parquet(g.ports.blocks.get(run.staged_locations[0]))
    assert staged == sorted([entry.physical_address, newer.physical_address])


def test_many_staged_addresses_are_split_into_parts(g, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(prepare, "STAGED_PART_ROWS", 2)
    written = {g.objects.upload_object("repo", "main", f"k{i}", b"x").physical_address for i in range(5)}
    run = prepare.prepare(g, "repo", clock=lambda: NOW)
    assert len(run.staged_locations) == 3 and run.staged_addresses == 5
    found = [
        a for location in run.staged_locations for a in job_files.read_addresses_parquet(g.ports.blocks.get(location))
    ]
    assert sorted(found) == sorted(written)


def test_no_staged_addresses_writes_no_part(g) -> None:  # type: ignore[no-untyped-def]
    run = prepare.prepare(g, "repo", clock=lambda: NOW)
    assert run.staged_locations == () and run.staged_addresses == 0


def test_prepare_needs_rules_a_repository_and_a_valid_run_id(g) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(errors.RepositoryNotFound):
        prepare.prepare(g, "nope")
    with pytest.raises(errors.Invalid):
        prepare.prepare(g, "repo", run_id="../../escape")
    RulesStore(g.repositories.namespace_files(NS)).delete()
    with pytest.raises(GCRulesNotFound):
        prepare.prepare(g, "repo")


def test_unreadable_rules_are_a_storage_error(g) -> None:  # type: ignore[no-untyped-def]
    g.ports.blocks.put(layout.rules_address(NS), b"{not json")
    with pytest.raises(errors.StorageError):
        prepare.prepare(g, "repo")


def test_run_ids_sort_by_time() -> None:
    first, second = prepare.new_run_id(NOW), prepare.new_run_id(NOW + 1)
    assert first < second and first.startswith("20270115T080000Z-")
    assert layout.RUN_ID.fullmatch(first)
