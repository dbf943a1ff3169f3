"""Writers racing commits on one branch: every acknowledged write (single or batch upload) ends up committed or
still staged."""

import contextlib
import random
import threading
import time

import pytest

from chalicelib.graveler import errors
from chalicelib.graveler.writes.batch_upload import NewObject

from .support import rebuilt

WRITERS = 4
WRITES_EACH = 120


class Jittery:
    """Wraps a store and sleeps around each call, so threads interleave at every step. One call in ten stalls
    for a few milliseconds, as a slow request does: long enough for a whole commit to run inside it."""

    def __init__(self, inner, rng):
        self._inner = inner
        self._rng = rng

    def __getattr__(self, name):
        target = getattr(self._inner, name)
        if not callable(target):
            return target

        def call(*args, **kwargs):
            time.sleep(self._rng.random() * (0.008 if self._rng.random() < 0.1 else 0.0005))
            result = target(*args, **kwargs)
            time.sleep(self._rng.random() * 0.0005)
            return result

        return call


@pytest.mark.parametrize("batched", [False, True], ids=["single uploads", "batch uploads"])
def test_writes_racing_commits_are_never_lost(g, repo, batched):
    rng = random.Random(7)
    g = rebuilt(g, refs=Jittery(g.ports.refs, rng), staging=Jittery(g.ports.staging, rng))
    acknowledged: dict[str, bytes] = {}
    lock = threading.Lock()
    done = threading.Event()
    commits: list[str] = []
    failures: list[BaseException] = []

    retries = []

    def put(writes):
        # As a client does on 429: TooManyTries means "not acknowledged, try again".
        while True:
            try:
                if batched:
                    g.objects.upload_objects("repo", "main", [NewObject(key, data) for key, data in writes])
                else:
                    for key, data in writes:
                        g.objects.upload_object("repo", "main", key, data)
                break
            except errors.TooManyTries:
                retries.append(writes)
        with lock:
            acknowledged.update(writes)

    def writer(n):
        try:
            for i in range(WRITES_EACH):
                writes = [(f"w{n}/{i:03d}", f"{n}-{i}".encode())]
                if i % 10 == 9:  # overwrite an earlier key too: the newest acknowledged value must win
                    writes.append((f"w{n}/{i - 5:03d}", f"over-{n}-{i}".encode()))
                put(writes)
        except BaseException as e:  # surfaced below
            failures.append(e)

    def committer():
        while not done.is_set():
            try:
                commits.append(g.commits.commit("repo", "main", "c", f"commit {len(commits)}").id)
            except errors.NoChanges:
                pass
            except BaseException as e:
                failures.append(e)
                return

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(WRITERS)]
    committers = [threading.Thread(target=committer) for _ in range(2)]
    for t in threads + committers:
        t.start()
    for t in threads:
        t.join()
    done.set()
    for t in committers:
        t.join()
    assert not failures, failures
    assert len(commits) >= 2  # commits really ran during the writes

    # Everything acknowledged is visible on the branch (committed or staged), with its newest value.
    listed = {}
    after = ""
    while True:
        page = g.objects.list_objects("repo", "main", after=after, amount=1000)
        for obj in page.results:
            listed[obj.key] = g.objects.read_object("repo", obj.entry)
        if not page.has_more:
            break
        after = page.next_offset
    assert listed == acknowledged

    # After a final commit nothing is left uncommitted and the committed tree holds every write exactly once.
    with contextlib.suppress(errors.NoChanges):
        g.commits.commit("repo", "main", "c", "final")
    assert g.history.diff_uncommitted("repo", "main").results == []
    committed = g.objects.list_objects("repo", "main@", amount=1000).results
    assert sorted(o.key for o in committed) == sorted(acknowledged)
    # History is linear: each commit's first parent is the previous head.
    log = g.history.log("repo", "main", amount=1000).results
    assert len({c.id for c in log}) == len(log)
    assert all(c.generation == log[-1].generation + len(log) - 1 - i for i, c in enumerate(log))
