"""If-None-Match: * is create-only when writers overlap (issue 40, item 1): of concurrent create-only writes of one
new path exactly one succeeds and the branch shows its bytes, also while commits seal the branch's token; If-Match
writers expecting one value likewise. The store is slowed down (a sleep in each read and write) so that the
writers' reads and writes interleave as they do against DynamoDB."""

from __future__ import annotations

import contextlib
import dataclasses
import random
import threading
import time
from typing import Any

import pytest

from chalicelib.graveler import errors
from chalicelib.graveler.records import Entry

from .support import put_files

WRITERS = 8
ROUNDS = 20


class SlowStaging:
    """The engine's staging store with a short sleep before each read and write."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def get(self, *args: Any) -> Any:
        time.sleep(random.uniform(0, 0.002))
        return self._inner.get(*args)

    def set_if(self, *args: Any) -> Any:
        time.sleep(random.uniform(0, 0.002))
        return self._inner.set_if(*args)

    def set(self, *args: Any) -> Any:
        time.sleep(random.uniform(0, 0.002))
        return self._inner.set(*args)


def slowed(g: Any) -> Any:
    from chalicelib.graveler.engine import build_engine

    return build_engine(dataclasses.replace(g.ports, staging=SlowStaging(g.ports.staging)))


def race(g: Any, path: str, write: Any) -> list[tuple[bytes, Entry]]:
    """WRITERS threads, started a few milliseconds apart, each writing its own bytes with ``write``; the winners."""
    won: list[tuple[bytes, Entry]] = []
    failed: list[BaseException] = []

    def writer(n: int) -> None:
        time.sleep(n * random.uniform(0.0005, 0.003))
        data = f"writer {n} of {path}".encode()
        try:
            won.append((data, write(path, data)))
        except errors.PreconditionFailed:
            pass
        except BaseException as e:
            failed.append(e)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(WRITERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failed, failed
    return won


def committing(g: Any, stop: threading.Event) -> threading.Thread:
    """A thread that commits the branch over and over (each commit seals its staging token)."""

    def run() -> None:
        while not stop.is_set():
            with contextlib.suppress(errors.NoChanges, errors.TooManyTries, errors.Conflict):
                g.commits.commit("repo", "main", "u", "tick")
            time.sleep(0.003)

    thread = threading.Thread(target=run)
    thread.start()
    return thread


@pytest.mark.parametrize("commits", [False, True], ids=["quiet", "sealing"])
def test_of_concurrent_create_only_uploads_exactly_one_wins(g: Any, repo: Any, commits: bool) -> None:
    g = slowed(g)
    stop = threading.Event()
    committer = committing(g, stop) if commits else None
    winners = []
    try:
        for n in range(ROUNDS):
            path = f"round{n}/_delta_log/00000.json"
            won = race(g, path, lambda p, d: g.objects.upload_object("repo", "main", p, d, if_absent=True))
            winners.append(len(won))
            if len(won) == 1:
                assert bytes(g.objects.read_object("repo", g.objects.stat_object("repo", "main", path))) == won[0][0]
    finally:
        stop.set()
        if committer is not None:
            committer.join()
    assert winners == [1] * ROUNDS


def test_of_concurrent_create_only_copies_and_links_exactly_one_wins(g: Any, repo: Any) -> None:
    g = slowed(g)
    put_files(g, "main", **{f"src{n}": f"source {n}".encode() for n in range(WRITERS)})
    winners = []
    for n in range(ROUNDS // 2):
        path = f"copy{n}"

        def copy(p: str, data: bytes) -> Entry:
            src = f"src{int(data.split()[1])}"
            return g.objects.copy_object("repo", "main", src, "main", p, if_absent=True)

        won = race(g, path, copy)
        winners.append(len(won))
        if len(won) == 1:
            assert g.objects.stat_object("repo", "main", path).physical_address == won[0][1].physical_address
    assert winners == [1] * (ROUNDS // 2)


def test_create_only_over_a_tombstone_succeeds_and_over_an_older_object_fails(g: Any, repo: Any) -> None:
    put_files(g, "main", a=b"committed")
    g.commits.commit("repo", "main", "u", "a")
    with pytest.raises(errors.PreconditionFailed):
        g.objects.upload_object("repo", "main", "a", b"new", if_absent=True)
    g.objects.delete_object("repo", "main", "a")  # a tombstone in the token: the branch shows nothing
    g.objects.upload_object("repo", "main", "a", b"new", if_absent=True)
    assert bytes(g.objects.read_object("repo", g.objects.stat_object("repo", "main", "a"))) == b"new"
    with pytest.raises(errors.PreconditionFailed):
        g.objects.upload_object("repo", "main", "a", b"newer", if_absent=True)


def test_of_concurrent_if_match_uploads_of_one_value_at_most_one_wins(g: Any, repo: Any) -> None:
    g = slowed(g)
    stop = threading.Event()
    committer = committing(g, stop)
    winners = []
    try:
        for n in range(ROUNDS // 2):
            path = f"pointer{n}"
            first = g.objects.upload_object("repo", "main", path, b"v0")
            won = race(g, path, lambda p, d, e=first.etag: g.objects.upload_object("repo", "main", p, d, if_match=e))
            winners.append(len(won))
            if len(won) == 1:
                assert bytes(g.objects.read_object("repo", g.objects.stat_object("repo", "main", path))) == won[0][0]
    finally:
        stop.set()
        committer.join()
    assert all(w <= 1 for w in winners), winners


class RefusesOnce:
    """A staging store whose first conditional write is cancelled though nothing changed (DynamoDB cancels a
    transaction that meets another write of one of its items, such as a commit's swap of the branch record)."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.refused = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def set_if(self, *args: Any) -> Any:
        if not self.refused:
            self.refused += 1
            return False
        return self._inner.set_if(*args)


def test_a_write_cancelled_though_nothing_changed_is_made_again_not_refused(g: Any, repo: Any) -> None:
    from chalicelib.graveler.engine import build_engine

    store = RefusesOnce(g.ports.staging)
    e = build_engine(dataclasses.replace(g.ports, staging=store))
    e.objects.upload_object("repo", "main", "new", b"mine", if_absent=True)
    assert store.refused == 1
    assert bytes(e.objects.read_object("repo", e.objects.stat_object("repo", "main", "new"))) == b"mine"
    with pytest.raises(errors.PreconditionFailed):
        e.objects.upload_object("repo", "main", "new", b"second", if_absent=True)
