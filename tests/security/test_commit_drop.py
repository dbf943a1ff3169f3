"""Guarantee 7: a commit that landed says so, and never pays for a drop.

A commit (or a merge) retires the staging tokens it committed: they stay readable for readers of the older branch
record, and the scheduled sweep (drop_retired, chalicelib/gc/schedule.py) drops them once their grace is over. No
commit drops anything itself, so a drop that fails (a throttled DynamoDB) or runs long leaves the tokens listed for
the next sweep and costs the next commit nothing. Seen before: the drop ran at the end of the next commit, which
then answered 503 (a client retry got 400 "no changes"), or took minutes after a large commit.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable

import pytest

from chalicelib import wiring
from chalicelib.gc.schedule import release_retired
from chalicelib.graveler import errors
from chalicelib.graveler.branches import branch_moves
from chalicelib.graveler.branches.branch_moves import retired_tokens
from chalicelib.graveler.records import Key, StagingToken
from tests.api.support import Api

from .write_support import REPO, api, credentials, repo, services

__all__ = ["api", "credentials", "repo", "services"]  # fixtures


class FlakyDrop:
    """Makes the staging store's drops fail (as a throttled DynamoDB would) while ``failing`` is set: the drop of
    a whole token, and the deletion by key a small commit drops its token with."""

    def __init__(self, services: wiring.Services, monkeypatch: pytest.MonkeyPatch) -> None:
        self.staging = services.engine.ports.staging
        self.real: Callable[[StagingToken], None] = self.staging.drop
        self.real_many: Callable[[StagingToken, Iterable[Key]], None] = self.staging.delete_many
        self.failing = True
        self.failed: list[StagingToken] = []
        monkeypatch.setattr(self.staging, "drop", self.drop)
        monkeypatch.setattr(self.staging, "delete_many", self.delete_many)

    def drop(self, token: StagingToken) -> None:
        if self.failing:
            self.failed.append(token)
            raise errors.StorageError("ProvisionedThroughputExceededException")
        self.real(token)

    def delete_many(self, token: StagingToken, keys: Iterable[Key]) -> None:
        if self.failing:
            self.failed.append(token)
            raise errors.StorageError("ProvisionedThroughputExceededException")
        self.real_many(token, keys)

    def holds(self, token: StagingToken) -> bool:
        return next(iter(self.staging.iterate(token)), None) is not None


def paths(api: Api, ref: str = "main") -> list[str]:
    listing = json.loads(api.get(f"/repositories/{REPO}/refs/{ref}/objects/ls").body)["results"]
    return [item["path"] for item in listing]


def retired(services: wiring.Services) -> list[StagingToken]:
    return retired_tokens(services.engine.branches.get_branch(REPO, "main"))


def past_the_grace(monkeypatch: pytest.MonkeyPatch) -> None:
    """Moves the clock of retired tokens past their grace period: the next move drops them."""
    real = time.time
    monkeypatch.setattr(branch_moves.time, "time", lambda: real() + branch_moves.RETIRED_GRACE_SECONDS + 1)


class CountingStaging:
    """Counts the calls made to the staging store (each listing counts once), for comparing two commits' cost."""

    METHODS = ("get", "set", "set_if", "get_many", "set_many", "delete", "iterate", "drop", "delete_many")

    def __init__(self, services: wiring.Services, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls: list[str] = []
        staging = services.engine.ports.staging
        for name in self.METHODS:
            monkeypatch.setattr(staging, name, self._counted(name, getattr(staging, name)))

    def _counted(self, name: str, method: Callable[..., object]) -> Callable[..., object]:
        def call(*args: object, **kwargs: object) -> object:
            self.calls.append(name)
            return method(*args, **kwargs)

        return call

    def during(self, action: Callable[[], object]) -> list[str]:
        start = len(self.calls)
        action()
        return sorted(self.calls[start:])


def test_a_failed_drop_leaves_the_next_commit_its_cost_and_the_sweep_drops_the_tokens_later(
    api: Api, repo: str, services: wiring.Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    api.upload(REPO, "main", "a.txt", b"one")
    api.commit(REPO, "main", "one")
    [first] = retired(services)  # kept for readers of the record from before the commit, dropped later
    api.upload(REPO, "main", "b.txt", b"two")
    counting = CountingStaging(services, monkeypatch)
    # The cost of a commit with nothing due, in staging calls.
    baseline = counting.during(lambda: api.commit(REPO, "main", "two"))
    assert "drop" not in baseline and "delete_many" not in baseline

    past_the_grace(monkeypatch)  # both retired tokens are due now
    flaky = FlakyDrop(services, monkeypatch)
    assert release_retired(services.engine, 60.0) == 2  # the sweep's drops fail: both stay listed
    assert flaky.failed and flaky.holds(first) and first in retired(services)

    api.upload(REPO, "main", "c.txt", b"three")
    failed_before = len(flaky.failed)
    committed = counting.during(lambda: api.commit(REPO, "main", "three"))
    assert committed == baseline  # the next commit pays nothing for the drop that failed
    assert len(flaky.failed) == failed_before  # and attempts none
    # The retired rows are not visible again: nothing uncommitted, each object listed once.
    assert json.loads(api.get(f"/repositories/{REPO}/branches/main/diff").body)["results"] == []
    assert paths(api) == ["a.txt", "b.txt", "c.txt"]

    flaky.failing = False
    assert release_retired(services.engine, 60.0) == 1  # the third commit's token is within its grace
    assert not flaky.holds(first) and first not in retired(services)
    assert paths(api) == ["a.txt", "b.txt", "c.txt"]


def test_a_sweep_out_of_time_leaves_the_rest_of_a_token_for_the_next_run(
    api: Api, repo: str, services: wiring.Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    from chalicelib.graveler.writes import deferred_drop

    for n in range(5):
        api.upload(REPO, "main", f"f{n}.txt", b"x")
    api.commit(REPO, "main", "five")
    [token] = retired(services)
    past_the_grace(monkeypatch)
    engine = services.engine
    ticks = iter(range(1000))  # a clock that passes the deadline after the first chunk
    staging = engine.ports.staging
    assert not deferred_drop.drop_within(staging, token, 0, lambda: next(ticks), chunk=2, threads=1)
    assert sum(1 for _ in staging.iterate(token)) == 3  # one chunk of two gone, the token still listed
    assert token in retired(services)
    assert release_retired(engine, 60.0) == 0  # the next run finishes it and strikes it
    assert sum(1 for _ in staging.iterate(token)) == 0 and retired(services) == []
    assert paths(api) == [f"f{n}.txt" for n in range(5)]


def test_a_merge_drops_nothing_and_answers_200_while_drops_fail(
    api: Api, repo: str, services: wiring.Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    api.upload(REPO, "main", "same.txt", b"same")
    api.commit(REPO, "main", "base")
    api.post(f"/repositories/{REPO}/branches", json_body={"name": "dev", "source": "main"})
    api.upload(REPO, "dev", "d.txt", b"dev")
    api.commit(REPO, "dev", "on dev")
    # Staged but unchanged (same content again): not dirty, so the merge seals it and retires it after the move.
    api.upload(REPO, "main", "same.txt", b"same")
    past_the_grace(monkeypatch)  # the token the base commit retired is due
    flaky = FlakyDrop(services, monkeypatch)
    merged = api.post(f"/repositories/{REPO}/refs/dev/merge/main", json_body={})
    assert merged.status_code == 200, merged.body
    assert flaky.failed == []  # the merge attempted no drop
    assert paths(api, "main") == ["d.txt", "same.txt"]
    assert json.loads(api.get(f"/repositories/{REPO}/branches/main/diff").body)["results"] == []
    flaky.failing = False
    [base, merged_token] = retired(services)  # the base commit's (due) and the merge's (within its grace)
    assert release_retired(services.engine, 60.0) == 1
    assert retired(services) == [merged_token] and not flaky.holds(base)
