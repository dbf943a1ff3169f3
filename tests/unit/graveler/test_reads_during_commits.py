"""Reads racing commits and merges on one branch: a read that starts after a write was acknowledged sees it, and
the tokens a move releases are dropped later, never left behind.

A reader reads the branch record and then the staging rows; a commit's swap between the two used to leave it
looking for the committed changes in sealed tokens the commit had just dropped (a 404 or a listing without them).
The stores stall at random (as a loaded machine does), so whole commits run between a reader's calls.
"""

from __future__ import annotations

import contextlib
import random
import threading
import time
from typing import Any

import pytest

from chalicelib.graveler import errors
from chalicelib.graveler.branches import branch_moves
from chalicelib.graveler.records import StagingToken

from .support import rebuilt
from .test_concurrency import Jittery

WRITERS = 3
SECONDS = 3.0


def _listed(g: Any, ref: str) -> set[str]:
    keys: set[str] = set()
    after = ""
    while True:
        page = g.objects.list_objects("repo", ref, after=after, amount=1000)
        keys.update(o.key for o in page.results)
        if not page.has_more:
            return keys
        after = page.next_offset


def _race(g: Any, move: Any, branch: str = "main") -> tuple[int, int, list[str]]:
    """Writers of new keys on ``branch``, ``move`` in a loop, and two readers (stat and listing) of main checking
    every key acknowledged on main before their read began: (moves, reads, misses). Writes to another branch
    reach main through ``move(acked_on_branch, publish)``."""
    acked: list[str] = []
    written: list[str] = []
    lock = threading.Lock()
    stop = threading.Event()
    misses: list[str] = []
    failures: list[BaseException] = []
    counts = {"moves": 0, "reads": 0}

    def guarded(body: Any) -> Any:
        def run(*args: Any) -> None:
            try:
                body(*args)
            except BaseException as e:  # surfaced below
                failures.append(e)
                stop.set()

        return run

    @guarded
    def writer(n: int) -> None:
        i = 0
        while not stop.is_set():
            key = f"w{n}/{i:05d}"
            try:
                g.objects.upload_object("repo", branch, key, b"x")
            except errors.TooManyTries:
                continue  # not acknowledged: written again, as a client does on 429
            with lock:
                (acked if branch == "main" else written).append(key)
            i += 1

    def publish(keys: list[str]) -> None:
        with lock:
            acked.extend(keys)

    @guarded
    def mover() -> None:
        while not stop.is_set():
            try:
                with lock:
                    staged = list(written)
                    written.clear()
                move(staged, publish)
                counts["moves"] += 1
            except errors.NoChanges:
                pass

    @guarded
    def stat_reader() -> None:
        rng = random.Random(3)
        while not stop.is_set():
            with lock:
                known = list(acked)
            if not known:
                continue
            key = rng.choice(known)
            try:
                g.objects.stat_object("repo", "main", key)
            except errors.ObjectNotFound:
                misses.append(f"stat {key}")
            counts["reads"] += 1

    @guarded
    def list_reader() -> None:
        while not stop.is_set():
            with lock:
                known = set(acked)
            missing = known - _listed(g, "main")
            misses.extend(f"listing {key}" for key in sorted(missing))
            counts["reads"] += 1

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(WRITERS)]
    threads += [threading.Thread(target=t) for t in (mover, stat_reader, list_reader)]
    for t in threads:
        t.start()
    time.sleep(SECONDS)
    stop.set()
    for t in threads:
        t.join()
    assert not failures, failures
    return counts["moves"], counts["reads"], misses


@pytest.fixture
def jittery(g: Any, repo: Any) -> Any:
    rng = random.Random(11)
    return rebuilt(g, refs=Jittery(g.ports.refs, rng), staging=Jittery(g.ports.staging, rng))


def test_reads_racing_commits_see_every_acknowledged_write(jittery: Any) -> None:
    g = jittery
    moves, reads, misses = _race(g, lambda staged, publish: g.commits.commit("repo", "main", "c", "during reads"))
    assert moves >= 5 and reads >= 20
    assert misses == []


def test_reads_racing_merges_into_the_branch_see_every_acknowledged_write(jittery: Any) -> None:
    """Writers stage on another branch; its commits are merged into main while readers read main (a merge
    seals main's staging token and releases the sealed one as a commit does)."""
    g = jittery
    g.branches.create_branch("repo", "side", "main")
    n = [0]

    def merge(staged: list[str], publish: Any) -> None:
        n[0] += 1
        with contextlib.suppress(errors.NoChanges):
            g.commits.commit("repo", "side", "c", f"side {n[0]}")
        # Everything staged on side before its commit is on main once the merge answered.
        g.merges.merge("repo", "side", "main", "m", f"merge {n[0]}")
        publish(staged)

    moves, reads, misses = _race(g, merge, branch="side")
    assert moves >= 3 and reads >= 10
    assert misses == []


def _rows(g: Any, token: StagingToken) -> int:
    return sum(1 for _ in g.ports.staging.iterate(token))


def test_released_tokens_stay_readable_then_the_sweep_drops_them_not_a_later_commit(
    g: Any, repo: Any, monkeypatch: Any
) -> None:
    from chalicelib.gc.schedule import release_retired

    g.objects.upload_object("repo", "main", "a", b"1")
    first = g.branches.get_branch("repo", "main").staging_token
    g.commits.commit("repo", "main", "c", "first")
    entries = g.branches.get_branch("repo", "main").retired_tokens
    assert [branch_moves.retired_token(e)[0] for e in entries] == [first]
    assert _rows(g, first) == 1  # still readable by a reader holding the record from before the swap

    # Past the grace period, the next commit leaves it alone (it pays for no drop); the sweep drops it and
    # strikes it from the record.
    real = time.time
    monkeypatch.setattr(branch_moves.time, "time", lambda: real() + branch_moves.RETIRED_GRACE_SECONDS + 1)
    g.objects.upload_object("repo", "main", "b", b"2")
    second = g.branches.get_branch("repo", "main").staging_token
    g.commits.commit("repo", "main", "c", "second")
    assert _rows(g, first) == 1
    assert release_retired(g) == 1  # the second commit's token is within its grace
    assert _rows(g, first) == 0
    left = [branch_moves.retired_token(e)[0] for e in g.branches.get_branch("repo", "main").retired_tokens]
    assert left == [second]


def test_a_branch_no_move_touches_again_is_swept(g: Any, repo: Any, monkeypatch: Any) -> None:
    from chalicelib.gc.schedule import release_retired

    g.objects.upload_object("repo", "main", "a", b"1")
    token = g.branches.get_branch("repo", "main").staging_token
    g.commits.commit("repo", "main", "c", "only")
    assert release_retired(g) == 1 and _rows(g, token) == 1  # not yet expired: kept
    real = time.time
    monkeypatch.setattr(branch_moves.time, "time", lambda: real() + branch_moves.RETIRED_GRACE_SECONDS + 1)
    assert release_retired(g) == 0
    assert _rows(g, token) == 0 and g.branches.get_branch("repo", "main").retired_tokens == ()


def test_a_seal_never_drops_retired_tokens(g: Any, repo: Any, monkeypatch: Any) -> None:
    """The drop runs after a move's swap, never inside a later seal's compare-and-swap loop."""
    g.objects.upload_object("repo", "main", "a", b"1")
    g.commits.commit("repo", "main", "c", "first")
    real = time.time
    monkeypatch.setattr(branch_moves.time, "time", lambda: real() + branch_moves.RETIRED_GRACE_SECONDS + 1)
    drops: list[str] = []
    real_drop = g.ports.staging.drop
    branch = g.branches.get_branch("repo", "main")

    def counting_drop(token: StagingToken) -> None:
        drops.append(token)
        real_drop(token)

    monkeypatch.setattr(g.ports.staging, "drop", counting_drop)
    branch_moves.seal(g.ports.refs, g.ports.staging, repo.id, branch.id)
    assert drops == []
