"""Guarantee 7: a commit that landed says so.

The last step of a commit (and of a merge) drops the staging tokens earlier moves retired once their grace period
passed (the tokens it releases itself stay readable for readers of the older branch record). If that drop fails
after the branch moved, the commit still answers 201: the tokens stay listed as retired, and the next move of the
branch (or the daily sweep) drops them again (drops are idempotent). Seen before: 503, then a client retry got
400 "no changes".
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable

import pytest

from chalicelib import wiring
from chalicelib.graveler import branch_moves, errors
from chalicelib.graveler.branch_moves import retired_tokens
from chalicelib.graveler.records import Key, StagingToken
from tests.api.support import Api, assert_error

from .write_support import REPO, api, credentials, repo, services

__all__ = ["api", "credentials", "repo", "services"]  # fixtures


class FlakyDrop:
    """Makes the staging store's drops fail (as a throttled DynamoDB would) while ``failing`` is set: the drop of
    a whole token, and the deletion by key a small commit drops its token with."""

    def __init__(self, services: wiring.Services, monkeypatch: pytest.MonkeyPatch) -> None:
        self.staging = services.graveler.staging
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
    return retired_tokens(services.graveler.get_branch(REPO, "main"))


def past_the_grace(monkeypatch: pytest.MonkeyPatch) -> None:
    """Moves the clock of retired tokens past their grace period: the next move drops them."""
    real = time.time
    monkeypatch.setattr(branch_moves.time, "time", lambda: real() + branch_moves.RETIRED_GRACE_SECONDS + 1)


def test_a_commit_whose_drop_fails_answers_201_and_a_later_move_drops_the_token(
    api: Api, repo: str, services: wiring.Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    api.upload(REPO, "main", "a.txt", b"one")
    api.commit(REPO, "main", "one")
    [token] = retired(services)  # kept for readers of the record from before the commit, dropped later
    past_the_grace(monkeypatch)
    api.upload(REPO, "main", "b.txt", b"two")
    flaky = FlakyDrop(services, monkeypatch)
    committed = api.post(f"/repositories/{REPO}/branches/main/commits", json_body={"message": "two"})
    assert committed.status_code == 201, committed.body
    assert flaky.failed == [token], "the drop was attempted"
    branch = services.graveler.get_branch(REPO, "main")
    assert branch.commit_id == json.loads(committed.body)["id"]
    assert token in retired(services) and flaky.holds(token)  # left for later, and said so

    # The retired rows are not visible again: nothing uncommitted, each object listed once, and a retry of the
    # commit is "no changes", not a second commit of the same data.
    assert json.loads(api.get(f"/repositories/{REPO}/branches/main/diff").body)["results"] == []
    assert paths(api) == ["a.txt", "b.txt"]
    assert_error(api.post(f"/repositories/{REPO}/branches/main/commits", json_body={"message": "again"}), 400)

    flaky.failing = False
    api.upload(REPO, "main", "c.txt", b"three")
    api.commit(REPO, "main", "three")
    assert not flaky.holds(token)  # the next move dropped it
    assert token not in retired(services)
    assert paths(api) == ["a.txt", "b.txt", "c.txt"]


def test_a_merge_whose_drop_fails_still_answers_200(
    api: Api, repo: str, services: wiring.Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    api.upload(REPO, "main", "same.txt", b"same")
    api.commit(REPO, "main", "base")
    api.post(f"/repositories/{REPO}/branches", json_body={"name": "dev", "source": "main"})
    api.upload(REPO, "dev", "d.txt", b"dev")
    api.commit(REPO, "dev", "on dev")
    # Staged but unchanged (same content again): not dirty, so the merge seals it and retires it after the move.
    api.upload(REPO, "main", "same.txt", b"same")
    past_the_grace(monkeypatch)  # the token the base commit retired is due: the merge drops it
    flaky = FlakyDrop(services, monkeypatch)
    merged = api.post(f"/repositories/{REPO}/refs/dev/merge/main", json_body={})
    assert merged.status_code == 200, merged.body
    assert flaky.failed and all(flaky.holds(token) for token in flaky.failed)  # left for later
    assert paths(api, "main") == ["d.txt", "same.txt"]
    assert json.loads(api.get(f"/repositories/{REPO}/branches/main/diff").body)["results"] == []
    flaky.failing = False
    api.upload(REPO, "main", "m.txt", b"main")
    api.commit(REPO, "main", "after the merge")
    assert all(not flaky.holds(token) for token in flaky.failed)
    assert not set(flaky.failed) & set(retired(services))
