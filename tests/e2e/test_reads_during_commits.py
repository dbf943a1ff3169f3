"""Against ``lakelet local``, with two CPU-bound processes beside it: a read that starts after a write was
acknowledged sees it while commits (inline, or as Step Functions workflows) and merges move the branch.

Four writers upload new keys; a mover commits every 0.2 s (or commits a side branch and merges it into main);
four readers (API stat, gateway HEAD, API listing, gateway listing) each check every key acknowledged before
their read began. Before the fix a reader that read the branch record just before a commit's swap looked for the
committed keys in staging rows the commit had already dropped: 404s and listings without them. The loaded
machine stretches the gap between a reader's calls, which is where the race lives.
"""

from __future__ import annotations

import random
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import lakefs
import lakefs_sdk
import pytest
from botocore.exceptions import ClientError
from lakefs.client import Client

from .conftest import LocalProcess
from .s3support import s3_client

pytestmark = pytest.mark.e2e

WRITERS = 4
MOVE_EVERY_SECONDS = 0.2
BURNERS = 2
MAX_SECONDS = 60.0


@dataclass
class Race:
    """What the threads share: keys acknowledged on main (in order), misses, and counts."""

    acked: list[str] = field(default_factory=list)
    pending: list[str] = field(default_factory=list)  # acknowledged on the side branch, not merged yet
    misses: list[str] = field(default_factory=list)
    failures: list[BaseException] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    stop: threading.Event = field(default_factory=threading.Event)

    def count(self, what: str) -> None:
        with self.lock:
            self.counts[what] = self.counts.get(what, 0) + 1

    def known(self) -> list[str]:
        with self.lock:
            return list(self.acked)


@pytest.fixture
def burners() -> Iterator[None]:
    """Two CPU-bound processes for the length of the test (ended by their own ids)."""
    started = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(BURNERS)]
    try:
        yield
    finally:
        for process in started:
            process.kill()
            process.wait()


def _client(local: LocalProcess) -> Client:
    return Client(host=local.endpoint, username=local.access_key_id, password=local.secret_access_key)


def _guarded(race: Race, body: Callable[..., None]) -> Callable[..., None]:
    def run(*args: Any) -> None:
        try:
            body(*args)
        except BaseException as e:  # surfaced by the test
            race.failures.append(e)
            race.stop.set()

    return run


def _writer(local: LocalProcess, repo: str, branch: str, n: int, race: Race) -> None:
    objects = _client(local).sdk_client.objects_api
    i = 0
    while not race.stop.is_set():
        key = f"w{n}/{i:05d}"
        try:
            objects.upload_object(repo, branch, key, content=b"x")
        except lakefs_sdk.ApiException as e:
            if e.status == 429:
                continue  # not acknowledged: written again, as clients do
            raise
        with race.lock:
            (race.acked if branch == "main" else race.pending).append(key)
        i += 1


def _no_changes(e: Exception) -> bool:
    return getattr(e, "status", 0) == 400 and "no changes" in str(getattr(e, "body", "") or e).lower()


def _committer(local: LocalProcess, repo: str, race: Race) -> None:
    commits = _client(local).sdk_client.commits_api
    while not race.stop.is_set():
        time.sleep(MOVE_EVERY_SECONDS)
        try:
            commits.commit(repo, "main", lakefs_sdk.CommitCreation(message="during reads"))
            race.count("moves")
        except lakefs_sdk.ApiException as e:
            if not _no_changes(e):
                raise


def _merger(local: LocalProcess, repo: str, race: Race) -> None:
    sdk = _client(local).sdk_client
    while not race.stop.is_set():
        time.sleep(MOVE_EVERY_SECONDS)
        with race.lock:
            staged, race.pending = race.pending, []
        try:
            sdk.commits_api.commit(repo, "side", lakefs_sdk.CommitCreation(message="on side"))
        except lakefs_sdk.ApiException as e:
            if not _no_changes(e):
                raise
        sdk.refs_api.merge_into_branch(repo, "side", "main", merge=lakefs_sdk.Merge(message="merged"))
        race.count("moves")
        with race.lock:
            race.acked.extend(staged)


def _stat_reader(local: LocalProcess, repo: str, race: Race) -> None:
    objects = _client(local).sdk_client.objects_api
    rng = random.Random(1)
    while not race.stop.is_set():
        known = race.known()
        if not known:
            time.sleep(0.01)
            continue
        key = rng.choice(known)
        try:
            objects.stat_object(repo, "main", key)
        except lakefs_sdk.ApiException as e:
            if e.status != 404:
                raise
            race.misses.append(f"API stat {key}")
        race.count("API stat")


def _head_reader(local: LocalProcess, repo: str, race: Race) -> None:
    s3 = s3_client(local)
    rng = random.Random(2)
    while not race.stop.is_set():
        known = race.known()
        if not known:
            time.sleep(0.01)
            continue
        key = rng.choice(known)
        try:
            s3.head_object(Bucket=repo, Key=f"main/{key}")
        except ClientError as e:
            if e.response["Error"]["Code"] not in ("404", "NoSuchKey"):
                raise
            race.misses.append(f"gateway HEAD {key}")
        race.count("gateway HEAD")


def _api_lister(local: LocalProcess, repo: str, race: Race) -> None:
    objects = _client(local).sdk_client.objects_api
    while not race.stop.is_set():
        known = race.known()
        listed: set[str] = set()
        after = ""
        while True:
            page = objects.list_objects(repo, "main", prefix="w", after=after, amount=1000)
            listed.update(o.path for o in page.results)
            if not page.pagination.has_more:
                break
            after = page.pagination.next_offset
        race.misses.extend(f"API listing {key}" for key in known if key not in listed)
        race.count("API listing")


def _gateway_lister(local: LocalProcess, repo: str, race: Race) -> None:
    s3 = s3_client(local)
    while not race.stop.is_set():
        known = race.known()
        listed: set[str] = set()
        for page in s3.get_paginator("list_objects_v2").paginate(Bucket=repo, Prefix="main/w"):
            listed.update(o["Key"].removeprefix("main/") for o in page.get("Contents", []))
        race.misses.extend(f"gateway listing {key}" for key in known if key not in listed)
        race.count("gateway listing")


def run_race(local: LocalProcess, repo: str, seconds: float, moves: int, merges: bool = False) -> Race:
    """Runs the race for ``seconds``, and on a machine too loaded for ``moves`` moves by then, on until they
    happened (at most MAX_SECONDS): the misses show only while moves run."""
    race = Race()
    branch = "side" if merges else "main"
    threads = [
        threading.Thread(target=_guarded(race, _writer), args=(local, repo, branch, n, race)) for n in range(WRITERS)
    ]
    mover = _merger if merges else _committer
    threads += [
        threading.Thread(target=_guarded(race, target), args=(local, repo, race))
        for target in (mover, _stat_reader, _head_reader, _api_lister, _gateway_lister)
    ]
    for t in threads:
        t.start()
    started = time.monotonic()
    while not race.stop.wait(0.5):
        elapsed = time.monotonic() - started
        if elapsed >= MAX_SECONDS or (elapsed >= seconds and race.counts.get("moves", 0) >= moves):
            break
    race.stop.set()
    for t in threads:
        t.join(60)
    assert not race.failures, race.failures
    return race


def _check(race: Race, moves: int) -> None:
    print(f"{len(race.acked)} keys acknowledged on main; {race.counts}")
    assert race.misses == [], f"{len(race.misses)} misses, first: {race.misses[:5]}; counts {race.counts}"
    assert race.counts.get("moves", 0) >= moves, race.counts
    for reader in ("API stat", "gateway HEAD", "API listing", "gateway listing"):
        assert race.counts.get(reader, 0) >= 3, race.counts


def test_reads_during_inline_commits_see_every_acknowledged_write(
    local_stack: LocalProcess, repo: lakefs.Repository, burners: None
) -> None:
    race = run_race(local_stack, repo.id, 20.0, moves=5)
    _check(race, moves=5)


def test_reads_during_merges_into_the_branch_see_every_acknowledged_write(
    local_stack: LocalProcess, repo: lakefs.Repository, burners: None
) -> None:
    repo.branch("side").create("main")
    race = run_race(local_stack, repo.id, 10.0, moves=3, merges=True)
    _check(race, moves=3)


def test_reads_during_workflow_commits_see_every_acknowledged_write(
    launch: Callable[..., LocalProcess], burners: None
) -> None:
    """Every commit runs as the commit workflow (Step Functions, moto's interpreter), threshold 0."""
    local = launch(env={"LAKELET_COMMIT_WORKFLOW_THRESHOLD": "0"})
    client = _client(local)
    prefix = client.storage_config.default_namespace_prefix
    repo = lakefs.Repository("workflow-reads", client=client).create(
        storage_namespace=prefix.rstrip("/") + "/workflow-reads"
    )
    race = run_race(local, repo.id, 10.0, moves=2)
    _check(race, moves=2)
    assert local.stop() == 0
