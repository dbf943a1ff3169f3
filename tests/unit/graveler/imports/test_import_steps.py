"""The import use case over in-memory twins: what lands on the branch, the import branch, re-import, cancel,
crashes around side effects, and the allowed locations."""

from __future__ import annotations

import dataclasses

import pytest

from chalicelib.graveler import errors
from chalicelib.graveler.imports import (
    CANCELED_MESSAGE,
    COMMON_PREFIX,
    COMPLETED,
    FAILED,
    MERGING,
    OBJECT,
    RUNNING,
    ImportCanceled,
    ImportFinished,
    ImportLocation,
    ImportMerged,
    ImportNotAllowed,
    ImportNotFound,
)

from .conftest import SETTING, put_source


def prefix(path: str, destination: str) -> ImportLocation:
    return ImportLocation(COMMON_PREFIX, path, destination)


def listing(g, ref: str = "main") -> dict[str, str]:
    page = g.objects.list_objects("repo", ref, amount=1000)
    return {o.key: o.entry.physical_address for o in page.results if o.entry is not None}


def run(importer, *locations, message="import", branch="main", slices=1):
    request = importer.start("repo", branch, list(locations), "admin", message)
    record = importer.run(request, max_slices=slices)
    return request, record


@pytest.fixture
def sources(g):
    put_source(
        g,
        **{
            "data__a.csv": b"a",
            "data__2024__b.csv": b"bb",
            "data__2024__01__c.csv": b"ccc",
            "data__2025__d.csv": b"dddd",
            "one.bin": b"single",
        },
    )


def test_prefix_and_object_land_zero_copy_through_the_import_branch(g, repo, importer, sources):
    _, record = run(
        importer,
        prefix("s3://source/allowed/data/", "imported/"),
        ImportLocation(OBJECT, "s3://source/allowed/one.bin", "single/one.bin"),
    )
    assert record.state == COMPLETED
    assert listing(g) == {
        "imported/2024/01/c.csv": "s3://source/allowed/data/2024/01/c.csv",
        "imported/2024/b.csv": "s3://source/allowed/data/2024/b.csv",
        "imported/2025/d.csv": "s3://source/allowed/data/2025/d.csv",
        "imported/a.csv": "s3://source/allowed/data/a.csv",
        "single/one.bin": "s3://source/allowed/one.bin",
    }
    entry = g.objects.stat_object("repo", "main", "imported/2024/01/c.csv")
    assert (entry.size, entry.mtime) == (3, 1_700_000_000)
    assert g.objects.read_object("repo", entry) == b"ccc"
    # As lakeFS's import: the branch's new commit has one parent, its old head, and the source-wins strategy in
    # its metadata; it was built on _main_imported (hidden), and the branch moved to that very commit.
    imported = g.branches.get_branch("repo", "_main_imported")
    assert imported.hidden
    landed = g.commits.get_commit("repo", "main")
    assert landed.id == record.commit_id == imported.commit_id
    assert landed.parents == (g.commits.get_commit("repo", "main~1").id,) and len(landed.parents) == 1
    assert landed.metadata[".lakefs.merge.strategy"] == "source-wins"
    assert landed.message == "import" and record.metarange_id == landed.meta_range_id
    assert record.ingested == 5
    # Nothing was copied into the repository's namespace.
    assert not [a for a in g.ports.blocks.blobs if a.startswith("s3://bucket/repo/data/")]


def test_reimport_replaces_the_destination_and_keeps_the_rest(g, repo, importer, sources):
    g.objects.upload_object("repo", "main", "imported/stale.txt", b"old")
    g.objects.upload_object("repo", "main", "elsewhere.txt", b"keep")
    g.commits.commit("repo", "main", "admin", "before")
    run(importer, prefix("s3://source/allowed/data/", "imported/"))
    assert "imported/stale.txt" not in listing(g)
    g.ports.blocks.delete("s3://source/allowed/data/2024/b.csv")
    put_source(g, **{"data__2024__new.csv": b"new", "data__a.csv": b"changed"})
    _, record = run(importer, prefix("s3://source/allowed/data/", "imported/"))
    assert record.state == COMPLETED
    found = listing(g)
    assert "imported/2024/b.csv" not in found and "imported/2024/new.csv" in found
    assert "elsewhere.txt" in found
    assert g.objects.read_object("repo", g.objects.stat_object("repo", "main", "imported/a.csv")) == b"changed"
    assert g.objects.stat_object("repo", "main", "imported/a.csv").size == 7


def test_reimport_of_an_unchanged_source_changes_no_entry(g, repo, importer, sources):
    run(importer, prefix("s3://source/allowed/data/", "imported/"))
    first = g.commits.get_commit("repo", "main")
    run(importer, prefix("s3://source/allowed/data/", "imported/"))
    assert g.commits.get_commit("repo", "main").meta_range_id == first.meta_range_id


def test_many_slices_build_the_same_metarange_as_one(g, repo, importer, lister, sources):
    lister.page_size = 1
    for i in range(40):
        put_source(g, **{f"data__p{i % 7}__k{i:03d}": bytes([i])})
    _, one = run(importer, prefix("s3://source/allowed/data/", "x/"), slices=1)
    _, many = run(importer, prefix("s3://source/allowed/data/", "y/"), slices=8)
    rows_x = {k[2:]: v for k, v in listing(g).items() if k.startswith("x/")}
    rows_y = {k[2:]: v for k, v in listing(g).items() if k.startswith("y/")}
    assert rows_x == rows_y and len(rows_x) == 44
    assert many.ingested == one.ingested == 44


def test_a_location_outside_the_allowed_ones_is_403_naming_the_setting_and_writes_nothing(
    g, repo, importer, sources, records
):
    before = set(g.ports.blocks.blobs)
    with pytest.raises(ImportNotAllowed) as caught:
        importer.start("repo", "main", [prefix("s3://source/other/", "x/")], "admin", "m")
    assert SETTING in str(caught.value) and isinstance(caught.value, errors.Forbidden)
    # A path that only starts like an allowed one as a string is still outside it.
    with pytest.raises(ImportNotAllowed):
        importer.start("repo", "main", [prefix("s3://source/allowed-not/", "x/")], "admin", "m")
    assert set(g.ports.blocks.blobs) == before and records.records == {}
    with pytest.raises(errors.BranchNotFound):
        g.branches.get_branch("repo", "_main_imported")


def test_bad_locations_are_invalid(importer):
    with pytest.raises(errors.Invalid):
        importer.start("repo", "main", [], "admin", "m")
    with pytest.raises(errors.Invalid):
        importer.start("repo", "main", [ImportLocation("bucket", "s3://source/allowed/x", "x")], "admin", "m")
    with pytest.raises(errors.Invalid):
        importer.start(
            "repo",
            "main",
            [prefix("s3://source/allowed/a/", "d/"), prefix("s3://source/allowed/b/", "d/sub/")],
            "admin",
            "m",
        )


def test_cancel_in_the_middle_stops_before_the_branch_moves(g, repo, importer, lister, records, sources):
    for i in range(30):
        put_source(g, **{f"data__bulk__{i:03d}": b"x"})
    head = g.branches.get_branch("repo", "main").commit_id
    request = importer.start("repo", "main", [prefix("s3://source/allowed/data/", "imported/")], "admin", "m")
    pages = []

    def cancel_on_third_page() -> None:
        pages.append(1)
        if len(pages) == 3:
            importer.cancel("repo", "main", request.import_id)

    lister.before_page = cancel_on_third_page
    record = importer.run(request)
    assert record.state == FAILED and record.error == CANCELED_MESSAGE
    assert g.branches.get_branch("repo", "main").commit_id == head
    status = importer.status("repo", "main", request.import_id)
    assert status.commit is None and 0 < status.ingested < 35
    with pytest.raises(ImportFinished):
        importer.cancel("repo", "main", request.import_id)
    with pytest.raises(ImportCanceled):
        importer.steps.plan(request)


def _steps_to_the_merge(importer, request):
    planned = importer.steps.plan(request, 1)
    built = [importer.steps.build_slice(item) for item in planned.slices]
    return importer.steps.commit(request, planned, built)


def test_a_cancel_while_the_merge_runs_is_refused_and_the_import_completes(g, repo, importer, sources, monkeypatch):
    """The race of issue 24: the cancel arrives after the merge step began, before the branch moves (in the
    pre-merge hooks of the one merge entry, no sleeps). lakeFS refuses to cancel a completed import (409): so does
    this, and the status says completed, never "canceled" with the merge landed."""
    request = importer.start("repo", "main", [prefix("s3://source/allowed/data/", "imported/")], "admin", "m")
    committed = _steps_to_the_merge(importer, request)
    real_pre_hooks = g.ports.hooks.run
    refused: list[Exception] = []

    def cancel_then_merge(*args, **kwargs):
        if not refused:  # the pre-merge hooks (the post-merge ones run through here too)
            with pytest.raises(ImportFinished, match="completing") as caught:
                importer.cancel("repo", "main", request.import_id)
            refused.append(caught.value)
        return real_pre_hooks(*args, **kwargs)

    # The importer's engine is built over g's parts: the same hook runner.
    monkeypatch.setattr(g.ports.hooks, "run", cancel_then_merge)
    merged = importer.steps.merge(request, committed)
    assert len(refused) == 1
    status = importer.status("repo", "main", request.import_id)
    assert status.record.state == COMPLETED and status.record.error == ""
    assert (
        status.commit is not None
        and status.commit.id == merged.commit_id == g.branches.get_branch("repo", "main").commit_id
    )
    assert "imported/a.csv" in listing(g)
    with pytest.raises(ImportFinished, match="completed"):
        importer.cancel("repo", "main", request.import_id)


def test_a_cancel_just_before_the_merge_wins_and_nothing_lands(g, repo, importer, records, sources):
    """The cancel comes between the merge step's check of the cancel mark and its claim of the merge: the claim
    loses, the branch never moves, the status says canceled."""
    head = g.branches.get_branch("repo", "main").commit_id
    request = importer.start("repo", "main", [prefix("s3://source/allowed/data/", "imported/")], "admin", "m")
    committed = _steps_to_the_merge(importer, request)
    real_decide = records.decide

    def cancel_then_decide(namespace, import_id, outcome):
        if outcome == MERGING:
            importer.cancel("repo", "main", request.import_id)
        return real_decide(namespace, import_id, outcome)

    records.decide = cancel_then_decide
    with pytest.raises(ImportCanceled):
        importer.steps.merge(request, committed)
    records.decide = real_decide
    assert g.branches.get_branch("repo", "main").commit_id == head
    record = importer.status("repo", "main", request.import_id).record
    assert record.state == FAILED and record.error == CANCELED_MESSAGE
    # A retry of the merge step (the workflow's) still refuses.
    with pytest.raises(ImportCanceled):
        importer.steps.merge(request, committed)
    assert g.branches.get_branch("repo", "main").commit_id == head


def test_steps_crashing_before_and_after_their_side_effect_converge_without_duplicates(g, repo, importer, sources):
    request = importer.start("repo", "main", [prefix("s3://source/allowed/data/", "imported/")], "admin", "m")
    steps = importer.steps
    plan = steps.plan(request, 4)
    assert steps.plan(request, 4) == plan  # a retry of the plan
    built = [steps.build_slice(item) for item in plan.slices]
    assert [steps.build_slice(item) for item in plan.slices] == built
    committed = steps.commit(request, plan, built)
    # The commit step crashed after moving the import branch: its retry finds its own commit there.
    assert steps.commit(request, plan, built) == committed
    merged = steps.merge(request, committed)
    # The landing crashed after moving the branch, before the record: the retry finds the commit, lands nothing.
    record = importer.records.get(repo.storage_namespace, request.import_id)
    importer.records.save(repo.storage_namespace, dataclasses.replace(record, state=RUNNING, commit_id=""))
    assert steps.merge(request, committed) == merged
    log = g.history.log("repo", "main", amount=100).results
    assert [c.id for c in log].count(merged.commit_id) == 1
    assert [len(c.parents) for c in log] == [1, 0]
    assert importer.status("repo", "main", request.import_id).record.state == COMPLETED


def test_status_answers_only_for_its_own_branch(g, repo, importer, sources):
    g.branches.create_branch("repo", "dev", "main")
    request, _ = run(importer, prefix("s3://source/allowed/data/", "imported/"))
    assert importer.status("repo", "main", request.import_id).commit is not None
    with pytest.raises(ImportNotFound):
        importer.status("repo", "dev", request.import_id)
    with pytest.raises(ImportNotFound):
        importer.status("repo", "main", "../../etc")


def test_a_missing_object_source_fails_the_import_and_says_why(g, repo, importer):
    _, record = run(importer, ImportLocation(OBJECT, "s3://source/allowed/missing", "m"))
    assert record.state == FAILED and "missing" in record.error


def test_a_large_merge_goes_through_the_merge_workflow_and_is_followed_not_repeated(g, repo, lister, records, sources):
    import dataclasses

    from chalicelib.adapters.memory import MemoryWorkflowRunner
    from chalicelib.graveler.engine import build_engine
    from chalicelib.graveler.imports import ImportParts
    from chalicelib.graveler.merge import MergeRequest
    from chalicelib.graveler.runs.workflow_runner import Workflows

    runner = MemoryWorkflowRunner()  # executions stay RUNNING until ended
    workflows = Workflows(merge=runner, merge_threshold=0, wait_seconds=0)
    g = build_engine(
        dataclasses.replace(g.ports, workflows=workflows),
        ImportParts(lister, records, ("s3://source/allowed/",), SETTING),
    )
    importer = g.imports
    request = importer.start("repo", "main", [prefix("s3://source/allowed/data/", "imported/")], "admin", "m")
    steps = importer.steps
    plan = steps.plan(request)
    committed = steps.commit(request, plan, [steps.build_slice(item) for item in plan.slices])
    # A commit lands on the branch meanwhile: the import commit no longer sits on its head, so it is merged.
    g.objects.upload_object("repo", "main", "meanwhile.txt", b"m")
    g.commits.commit("repo", "main", "admin", "meanwhile")
    with pytest.raises(errors.StillRunning) as first:
        steps.merge(request, committed)
    namespace = repo.storage_namespace
    assert importer.records.get(namespace, request.import_id).merge_task == first.value.task_id
    with pytest.raises(errors.StillRunning) as again:
        steps.merge(request, committed)  # a retry follows the same task: no second merge starts
    assert again.value.task_id == first.value.task_id and len(runner._executions) == 1
    # The merge workflow does its work and ends; the next retry completes the import with its commit.
    execution = runner.describe(first.value.task_id)
    merge = MergeRequest.from_json(execution.input["request"])
    result = g.merges.steps.run(merge, max_slices=1)
    runner.end(first.value.task_id, "SUCCEEDED", output={"finish": {"status": "committed", "commit_id": result.id}})
    assert steps.merge(request, committed) == ImportMerged(result.id)
    status = importer.status("repo", "main", request.import_id)
    assert status.record.state == COMPLETED and status.commit.id == g.branches.get_branch("repo", "main").commit_id
    assert len(status.commit.parents) == 1  # squashed, as lakeFS's import: one parent


def test_an_import_lands_with_one_parent_even_when_the_branch_moved_meanwhile(g, repo, importer, sources):
    """lakeFS's import commits onto the branch's current head with that head as its only parent, the imported
    prefixes replacing what was there: so does Lakelet's, also when a commit landed while it was built."""
    g.objects.upload_object("repo", "main", "imported/stale.txt", b"old")
    g.commits.commit("repo", "main", "admin", "before")
    request = importer.start("repo", "main", [prefix("s3://source/allowed/data/", "imported/")], "admin", "m")
    steps = importer.steps
    plan = steps.plan(request)
    committed = steps.commit(request, plan, [steps.build_slice(item) for item in plan.slices])
    g.objects.upload_object("repo", "main", "meanwhile.txt", b"m")
    moved = g.commits.commit("repo", "main", "admin", "meanwhile")
    merged = steps.merge(request, committed)
    head = g.commits.get_commit("repo", "main")
    assert head.id == merged.commit_id != committed.commit_id
    assert head.parents == (moved.id,)
    assert head.metadata[".lakefs.merge.strategy"] == "source-wins"
    found = listing(g)
    assert "meanwhile.txt" in found and "imported/a.csv" in found and "imported/stale.txt" not in found


def test_launch_runs_small_imports_inline_and_starts_the_workflow_above_the_threshold(
    g, repo, lister, records, clock, sources
):
    import dataclasses

    from chalicelib.adapters.memory import MemoryWorkflowRunner
    from chalicelib.graveler.engine import build_engine
    from chalicelib.graveler.imports import EXECUTION_PREFIX, ImportParts
    from chalicelib.graveler.runs.workflow_runner import Workflows

    runner = MemoryWorkflowRunner()
    # The engine's one runner decision, with the import workflow: above 3 objects, in up to 7 slices.
    workflows = Workflows(imports=runner, import_threshold=3, import_max_slices=7)
    parts = dataclasses.replace(g.ports, workflows=workflows)
    importer = build_engine(parts, ImportParts(lister, records, ("s3://source/allowed/",), SETTING)).imports
    small = importer.start("repo", "main", [prefix("s3://source/allowed/data/2024/", "small/")], "a", "m")
    importer.launch(small)
    assert importer.status("repo", "main", small.import_id).record.state == COMPLETED
    assert runner.describe(EXECUTION_PREFIX + small.import_id) is None
    large = importer.start("repo", "main", [prefix("s3://source/allowed/data/", "large/")], "a", "m")
    importer.launch(large)
    execution = runner.describe(EXECUTION_PREFIX + large.import_id)
    assert execution is not None and execution.input == {"request": large.to_json(), "max_slices": 7}
    assert importer.status("repo", "main", large.import_id).record.state == RUNNING


def test_an_import_runs_the_pre_and_post_commit_hooks_as_lakefs_and_a_refusal_fails_it(g, repo, importer, sources):
    """lakeFS's import runs pre-commit hooks before its commit lands and post-commit hooks after (the pre-commit
    run then carries the commit's id); a refusing pre-commit hook fails the import and leaves the branch."""
    import json

    import yaml

    from chalicelib.graveler.actions import HookOutcome

    answers = {"ok": True}
    seen: list[str] = []

    class Invoker:
        def invoke(self, hook, payload, timeout_seconds):
            seen.append(json.loads(payload)["event_type"])
            return HookOutcome(answers["ok"], "judged")

    assert g.ports.hooks is not None
    g.ports.hooks.invokers = {"webhook": Invoker()}
    action = {
        "name": "guard",
        "on": {"pre-commit": None, "post-commit": None},
        "hooks": [{"id": "judge", "type": "webhook", "properties": {"url": "http://127.0.0.1:9/"}}],
    }
    g.objects.upload_object("repo", "main", "_lakefs_actions/guard.yaml", yaml.safe_dump(action).encode())
    g.commits.commit("repo", "main", "admin", "actions")
    seen.clear()
    _, record = run(importer, prefix("s3://source/allowed/data/", "imported/"))
    assert record.state == COMPLETED and seen == ["pre-commit", "post-commit"]
    runs = g.ports.hooks.store.list(repo.storage_namespace, commit_id=record.commit_id).results
    assert sorted(r.event_type for r in runs) == ["post-commit", "pre-commit"]
    answers["ok"] = False
    before = g.branches.get_branch("repo", "main").commit_id
    _, refused = run(importer, prefix("s3://source/allowed/data/", "again/"))
    assert refused.state == FAILED and "pre-commit hook aborted" in refused.error
    assert g.branches.get_branch("repo", "main").commit_id == before
    assert tuple(g.branches.get_branch("repo", "main").sealed_tokens) == ()  # nothing sealed for a refused import
