"""The run of an event's hooks: matching, order, records and outputs, the 412 of a failed pre-hook, time limits."""

import json

import pytest
import yaml

from chalicelib.adapters.memory import MemoryBlockStore
from chalicelib.graveler.actions import (
    COMPLETED,
    FAILED,
    EventType,
    HookAborted,
    HookEvent,
    HookOutcome,
    HookRunner,
    InvalidActionFile,
    RunStore,
)

NS = "s3://bucket/repo1"


class Recorder:
    """An invoker that answers from a table by hook id and remembers what it got."""

    def __init__(self, answers=None):
        self.answers = answers or {}
        self.calls = []

    def invoke(self, hook, payload, timeout_seconds):
        self.calls.append((hook.id, json.loads(payload), timeout_seconds))
        ok = self.answers.get(hook.id, True)
        return HookOutcome(ok, f"answer of {hook.id}", "" if ok else "webhook request failed (status code: 400)")


def action(name, event, hooks, branches=None):
    on = {event: {"branches": branches} if branches else None}
    return yaml.safe_dump(
        {
            "name": name,
            "on": on,
            "hooks": [
                {"id": h, "type": "webhook", "properties": {"url": "http://127.0.0.1:9/x", "timeout": "10s"}}
                for h in hooks
            ],
        }
    ).encode()


def runner(files, invoker, **kwargs):
    store = RunStore(MemoryBlockStore())
    r = HookRunner({"webhook": invoker}, store, lambda repo, ref: files, yaml.safe_load, lambda repo: NS, **kwargs)
    return r, store


def commit_event(event_type=EventType.PRE_COMMIT, branch="main", **kw):
    return HookEvent(
        event_type,
        "repo1",
        branch,
        branch_id=branch,
        source_ref=branch,
        commit_message="msg",
        committer="alice",
        commit_metadata={"k": "v"},
        **kw,
    )


def test_no_matching_action_records_nothing():
    r, store = runner([("_lakefs_actions/a.yaml", action("a", "pre-merge", ["h1"]))], Recorder())
    assert r.run(commit_event()) is None
    assert store.list(NS).results == []


def test_passing_run_is_recorded_with_outputs():
    inv = Recorder()
    files = [
        ("_lakefs_actions/a.yaml", action("A", "pre-commit", ["h1", "h2"])),
        ("_lakefs_actions/b.yaml", action("B", "pre-commit", ["h3"], branches=["dev-*"])),
    ]
    r, store = runner(files, inv)
    run = r.run(commit_event())
    assert run.status == COMPLETED
    assert [c[0] for c in inv.calls] == ["h1", "h2"]
    assert [(h.hook_run_id, h.action, h.hook_id) for h in run.hooks] == [
        ("0000_0000", "A", "h1"),
        ("0000_0001", "A", "h2"),
    ]
    assert store.get(NS, run.run_id) == run
    assert store.output(NS, run.run_id, "0000_0001") == b"answer of h2"
    payload = inv.calls[0][1]
    assert payload["event_type"] == "pre-commit" and payload["action_name"] == "A" and payload["hook_id"] == "h1"
    assert payload["commit_metadata"] == {"k": "v"} and "commit_id" not in payload


def test_failed_pre_hook_aborts_with_lakefs_message_and_stops_its_action():
    inv = Recorder({"h1": False})
    files = [
        ("_lakefs_actions/a.yaml", action("A", "pre-commit", ["h1", "h2"])),
        ("_lakefs_actions/b.yaml", action("B", "pre-commit", ["h3"])),
    ]
    r, store = runner(files, inv)
    with pytest.raises(HookAborted) as info:
        r.run(commit_event())
    message = str(info.value)
    run_id = info.value.run_id
    assert message.startswith(f"pre-commit hook aborted, run id '{run_id}': 1 error occurred:\n")
    assert (
        "\t* hook run id '0000_0000' failed on action 'A' hook 'h1': webhook request failed (status code: 400)"
        in message
    )
    assert "answer of h1" in message
    assert [c[0] for c in inv.calls] == ["h1", "h3"]  # h2 skipped, B still ran
    run = store.get(NS, run_id)
    assert run.status == FAILED
    assert [(h.hook_id, h.status) for h in run.hooks] == [("h1", FAILED), ("h3", COMPLETED)]


def test_failed_post_hook_is_recorded_not_raised():
    inv = Recorder({"h1": False})
    r, store = runner([("_lakefs_actions/a.yaml", action("A", "post-commit", ["h1"]))], inv)
    run = r.run_post(commit_event(EventType.POST_COMMIT, commit_id="c1"))
    assert run.status == FAILED
    assert store.list(NS, commit_id="c1").results == [run]


def test_bad_action_file_refuses_a_pre_event_and_not_a_post_event():
    files = [("_lakefs_actions/bad.yaml", b"name: x\non: {pre-commit: }\nhooks: [{id: ab, type: lua}]")]
    r, _ = runner(files, Recorder())
    with pytest.raises(InvalidActionFile, match="Lua"):
        r.run(commit_event())
    assert r.run_post(commit_event(EventType.POST_COMMIT)) is None


def test_timeouts_are_capped_by_hook_and_run_limits():
    class Clock:
        t = 0.0

        def __call__(self):
            return self.t

    clock = Clock()

    class Slow(Recorder):
        def invoke(self, hook, payload, timeout_seconds):
            clock.t += timeout_seconds
            return super().invoke(hook, payload, timeout_seconds)

    inv = Slow()
    files = [
        ("_lakefs_actions/a.yaml", action("A", "pre-commit", ["h1"])),
        ("_lakefs_actions/b.yaml", action("B", "pre-commit", ["h2"])),
        ("_lakefs_actions/c.yaml", action("C", "pre-commit", ["h3"])),
    ]
    r, _ = runner(files, inv, max_hook_seconds=8, max_run_seconds=12, monotonic=clock, clock=clock)
    with pytest.raises(HookAborted, match="time limit of 12s was spent"):
        r.run(commit_event())
    assert [c[2] for c in inv.calls] == [8, 4]  # own 10s capped to 8, then what the run has left


def test_idempotency_key_runs_once():
    inv = Recorder()
    r, _ = runner([("_lakefs_actions/a.yaml", action("A", "post-merge", ["h1"]))], inv)
    event = commit_event(EventType.POST_MERGE, commit_id="c9", idempotency_key="req-1/post-merge")
    first = r.run_post(event)
    again = r.run_post(event)
    assert again == first and len(inv.calls) == 1


def test_an_event_that_matches_nothing_reads_no_earlier_claim():
    """Most repositories have no actions: their post-events (which carry a key) must cost no store read."""
    blocks = MemoryBlockStore()
    reads = []
    get = blocks.get
    blocks.get = lambda address, *a: reads.append(address) or get(address, *a)
    r = HookRunner({"webhook": Recorder()}, RunStore(blocks), lambda repo, ref: [], yaml.safe_load, lambda repo: NS)
    assert r.run_post(commit_event(EventType.POST_COMMIT, commit_id="c9", idempotency_key="req-1/post-commit")) is None
    assert reads == []


def test_a_branch_the_caller_read_is_handed_to_the_files_lookup():
    seen = []

    def files(repo, ref, branch=None):
        seen.append((ref, branch))
        return []

    r = HookRunner({"webhook": Recorder()}, RunStore(MemoryBlockStore()), files, yaml.safe_load, lambda repo: NS)
    r.run(commit_event(), branch="the record")
    r.run(commit_event())
    assert seen == [("main", "the record"), ("main", None)]


def test_listing_newest_first_with_filters_and_pages():
    inv = Recorder()
    files = [("_lakefs_actions/a.yaml", action("A", "post-commit", ["h1"]))]
    t = iter(range(1000, 2000))
    r, store = runner(files, inv, clock=lambda: float(next(t)))
    runs = [
        r.run(commit_event(EventType.POST_COMMIT, branch=b, commit_id=f"c{i}"))
        for i, b in enumerate(["main", "dev", "main"])
    ]
    assert [x.run_id for x in store.list(NS).results] == [runs[2].run_id, runs[1].run_id, runs[0].run_id]
    assert [x.commit_id for x in store.list(NS, branch="main").results] == ["c2", "c0"]
    assert [x.commit_id for x in store.list(NS, commit_id="c1").results] == ["c1"]
    page = store.list(NS, amount=2)
    assert page.has_more and len(page.results) == 2
    rest = store.list(NS, after=page.next_offset)
    assert [x.run_id for x in rest.results] == [runs[0].run_id] and not rest.has_more


def test_a_post_event_writes_its_commit_onto_the_pre_run_even_when_no_action_matches_it():
    r, store = runner([("_lakefs_actions/a.yaml", action("guard", "pre-commit", ["check"]))], Recorder())
    pre = r.run(commit_event())
    assert pre is not None and pre.commit_id == ""
    post = commit_event(EventType.POST_COMMIT, commit_id="c1", pre_run_id=pre.run_id)
    assert r.run_post(post) is None  # nothing runs on post-commit
    assert store.get(NS, pre.run_id).commit_id == "c1"
    assert [x.run_id for x in store.list(NS, commit_id="c1").results] == [pre.run_id]
    assert [x.run_id for x in store.list(NS, branch="main").results] == [pre.run_id]
    r.run_post(post)  # a retried step writes nothing new
    assert [x.run_id for x in store.list(NS, commit_id="c1").results] == [pre.run_id]
    # A pre-run that is not there (or none) is left alone, and the post-event still runs.
    assert r.run_post(commit_event(EventType.POST_COMMIT, commit_id="c2", pre_run_id="missing")) is None
    assert store.list(NS, commit_id="c2").results == []
