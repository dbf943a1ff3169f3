"""The prepare step: the active commits and every staged address of a repository, written for the GC job.

Order matters for safety. ``prepared_at`` is taken first: the job never collects an object written after it.
Staging is read next, then the branch heads, then the commits:

- a commit that seals a token after its entries were read still has them protected (they are in the staged
  list); a commit that sealed it before is a head by the time heads are read;
- a branch moves only after its commit is stored, so every head read is among the commits read after;
- a commit made after the heads were read builds on a head that is kept, plus staged entries that were read
  or that were written after ``prepared_at``.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from chalicelib.graveler import errors
from chalicelib.graveler.engine import Engine
from chalicelib.graveler.reads.retention import RetentionRules, active_commits
from chalicelib.graveler.storage import namespaces
from chalicelib.graveler.storage.namespace_files import NamespaceFiles

from . import job_files, layout
from .rules import RulesStore, rules_to_json

__all__ = ["PreparedRun", "UncommittedRun", "prepare", "prepare_uncommitted"]

# Rows per staged-address file: a part stays a few MB, and the job reads the parts in parallel.
STAGED_PART_ROWS = 250_000


@dataclass(frozen=True, slots=True)
class PreparedRun:
    """What prepare wrote: where the job finds its inputs, and how much there is."""

    run_id: str
    repository: str
    storage_namespace: str
    prepared_at: float
    commits_location: str
    addresses_location: str
    staged_locations: tuple[str, ...]
    active_commits: int
    staged_addresses: int


def new_run_id(now: float) -> str:
    """Sorts by time (UTC), unique by a random suffix: ``20250102T030405Z-1a2b3c4d``."""
    stamp = datetime.fromtimestamp(now, tz=UTC).strftime("%Y%m%dT%H%M%SZ")
    return f"{stamp}-{uuid.uuid4().hex[:8]}"


def prepare(
    engine: Engine,
    repo_id: str,
    *,
    run_id: str | None = None,
    clock: Callable[[], float] = time.time,
) -> PreparedRun:
    """Computes the active commits by the repository's rules and writes the job's inputs under
    ``<namespace>/_lakefs/retention/gc/``. Raises RepositoryNotFound, GCRulesNotFound, CommitNotFound (an
    incomplete commit graph), StorageError."""
    prepared_at = clock()
    repo = engine.repositories.get_repository(repo_id)
    refuse_shared_namespace(engine, repo.id, repo.storage_namespace)
    files = engine.repositories.namespace_files(repo.storage_namespace)
    rules = RulesStore(files).get()
    run = layout.validate_run_id(run_id) if run_id else new_run_id(prepared_at)
    ns = repo.storage_namespace

    staged = sorted(engine.collection.staged_addresses(repo))
    heads = engine.collection.branch_heads(repo)
    commits = engine.collection.all_commits(repo)
    active = active_commits(commits, heads, rules, prepared_at)
    kept = sorted((commits[cid] for cid in active), key=lambda c: c.id)

    commits_location = layout.commits_address(ns, run)
    files.put(commits_location, job_files.commits_csv(kept))
    staged_locations = _write_staged(files, ns, run, staged)

    prepared = PreparedRun(
        run_id=run,
        repository=repo.id,
        storage_namespace=ns,
        prepared_at=prepared_at,
        commits_location=commits_location,
        addresses_location=layout.addresses_location(ns, run),
        staged_locations=staged_locations,
        active_commits=len(kept),
        staged_addresses=len(staged),
    )
    # Written last: the job starts from this manifest, so a prepare that failed midway is never used.
    files.put(layout.prepare_manifest_address(ns, run), manifest_json(prepared, rules))
    return prepared


@dataclass(frozen=True, slots=True)
class UncommittedRun:
    """What prepare_uncommitted wrote: the staged addresses of one run, as Parquet parts under ``location``."""

    run_id: str
    location: str
    staged_addresses: int


def refuse_shared_namespace(engine: Engine, repo_id: str, namespace: str) -> None:
    """Raises NamespaceInUse (400) when another repository's namespace is this one, lies inside it or holds it:
    the sweep deletes what this repository's commits do not reference, which includes the other's data (a bare
    restore target on a live repository's namespace, as lakeFS allows, or a repository made before the checks)."""
    others = ((str(r.id), r.storage_namespace) for r in engine.collection.iterate_repositories())
    try:
        namespaces.refuse_live_overlap(namespace, others, skip=repo_id)
    except errors.NamespaceInUse as e:
        raise errors.NamespaceInUse(
            f"garbage collection of {repo_id} refused: {e}; it would delete the other repository's data"
        ) from None


def prepare_uncommitted(engine: Engine, repo_id: str, *, clock: Callable[[], float] = time.time) -> UncommittedRun:
    """lakeFS's prepareGarbageCollectionUncommitted over Lakelet's staging: every address staged on any branch,
    written in one go as the same ``staged/run_id=<id>/`` parts a full prepare writes (the job's own input),
    at least one part even when nothing is staged, so the location always reads as a table. Needs no rules.
    Raises RepositoryNotFound, StorageError."""
    repo = engine.repositories.get_repository(repo_id)
    files = engine.repositories.namespace_files(repo.storage_namespace)
    run = new_run_id(clock())
    staged = sorted(engine.collection.staged_addresses(repo))
    _write_staged(files, repo.storage_namespace, run, staged, at_least_one=True)
    return UncommittedRun(run, layout.staged_location(repo.storage_namespace, run), len(staged))


def _write_staged(
    files: NamespaceFiles, ns: str, run: str, staged: list[str], *, at_least_one: bool = False
) -> tuple[str, ...]:
    locations: list[str] = []
    starts = range(0, max(len(staged), 1 if at_least_one else 0), STAGED_PART_ROWS)
    for index, start in enumerate(starts):
        location = layout.staged_location(ns, run) + layout.part_name(index)
        files.put(location, job_files.addresses_parquet(staged[start : start + STAGED_PART_ROWS]))
        locations.append(location)
    return tuple(locations)


def manifest_json(prepared: PreparedRun, rules: RetentionRules) -> bytes:
    return json.dumps(
        {
            "format_version": layout.FORMAT_VERSION,
            "run_id": prepared.run_id,
            "repository": prepared.repository,
            "storage_namespace": prepared.storage_namespace,
            "prepared_at": prepared.prepared_at,
            "rules": rules_to_json(rules),
            "active_commits": prepared.active_commits,
            "commits_location": prepared.commits_location,
            "staged_addresses": prepared.staged_addresses,
            "staged_locations": list(prepared.staged_locations),
            "addresses_location": prepared.addresses_location,
        },
        indent=2,
        sort_keys=True,
    ).encode()
