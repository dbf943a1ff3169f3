"""lakelet/stack/gc_policy.py: what survives a full collection is frozen (later full collections do not walk it),
a cycle that dies after that waits for a compaction, compactions run only when the process is idle, and the stack
installs the policy while it runs."""

from __future__ import annotations

import gc
import time
import weakref
from collections.abc import Callable, Iterator

import pytest

from lakelet.stack import gc_policy
from lakelet.stack.app_environment import Credentials
from lakelet.stack.gc_policy import GcPolicy
from lakelet.stack.local import LocalStack


class Cycle:
    def __init__(self) -> None:
        self.me = self


def eventually(condition: Callable[[], bool], within: float = 10.0) -> bool:
    deadline = time.monotonic() + within
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


@pytest.fixture
def policy() -> Iterator[GcPolicy]:
    running = GcPolicy(idle_window=0.02, compact_every=3600)
    running.start()
    try:
        yield running
    finally:
        running.stop()


def full_collection_frozen(policy: GcPolicy) -> None:
    freezes = policy.freezes
    gc.collect()
    assert eventually(lambda: policy.freezes > freezes)


def test_what_survives_a_full_collection_is_frozen(policy: GcPolicy) -> None:
    kept = [[n] for n in range(20_000)]
    full_collection_frozen(policy)
    assert gc.get_freeze_count() >= 20_000
    # The next full collection walks generation 2: none of them is there.
    assert not any(o is kept[0] for o in gc.get_objects(generation=2))


def test_stop_unfreezes_everything() -> None:
    policy = GcPolicy(idle_window=0.02, compact_every=3600)
    policy.start()
    full_collection_frozen(policy)
    policy.stop()
    assert gc.get_freeze_count() == 0
    assert policy._on_collection not in gc.callbacks


def test_a_cycle_that_dies_frozen_is_collected_by_a_compaction(policy: GcPolicy) -> None:
    cycle = Cycle()
    alive = weakref.ref(cycle)
    full_collection_frozen(policy)
    del cycle
    gc.collect()
    assert alive() is not None  # frozen: collections do not see it
    policy.compact()
    assert alive() is None
    assert policy.freezes == 0 and policy.compactions == 1


def test_compactions_wait_for_an_idle_process() -> None:
    busy = [True]
    started = time.monotonic()

    def cpu() -> float:  # busy: a whole core's worth of CPU time, idle: none
        return time.monotonic() - started if busy[0] else 0.0

    policy = GcPolicy(idle_window=0.02, compact_every=0, cpu=cpu)
    policy.start()
    try:
        full_collection_frozen(policy)
        time.sleep(0.3)
        assert policy.compactions == 0
        busy[0] = False
        assert eventually(lambda: policy.compactions == 1)
        time.sleep(0.3)
        assert policy.compactions == 1  # nothing frozen since: no walk of everything again
    finally:
        policy.stop()


def test_a_process_never_idle_compacts_at_the_latest_bound() -> None:
    started = time.monotonic()
    policy = GcPolicy(idle_window=0.02, compact_every=0, compact_at_latest=0.5, cpu=lambda: time.monotonic() - started)
    policy.start()
    try:
        full_collection_frozen(policy)
        assert eventually(lambda: policy.compactions >= 1)
    finally:
        policy.stop()


@pytest.mark.e2e
def test_the_stack_runs_the_policy_while_it_runs() -> None:
    assert gc_policy.installed() is None
    with LocalStack(api_port=0, credentials=Credentials("AKIAGCPOLICYTESTKEY1", "gc/policy+secret")):
        running = gc_policy.installed()
        assert running is not None
        full_collection_frozen(running)
        assert gc.get_freeze_count() > 0
    assert gc_policy.installed() is None
    assert gc.get_freeze_count() == 0
