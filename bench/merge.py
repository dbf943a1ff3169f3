"""Merge two branches that differ in 1,000 objects on a 100,000-object repository, on the embedded local stack.

Usage: .venv/bin/python bench/merge.py [OBJECTS] [DIFFERENCES]   (defaults 100,000 and 1,000)

Setup (timed separately from the merges):
- OBJECTS entries are staged on main straight into the DynamoDB staging table with
  ``DynamoStagingStore.set_many`` (batch writes of 25), in process with the stack's own services, and committed
  by the service 2,000 at a time in key order (see build_base for why). Uploading 100,000 objects through the
  API would take far longer on moto and test nothing a merge does: their addresses point under the
  repository's data/ with no bytes behind them (a merge never reads object data).
- The differing objects are real: uploaded, deleted and committed through the official lakeFS client.

Scenarios, each a true three-way merge (both branches moved since their merge base) where the two branches
differ in DIFFERENCES objects, 90% of the differences on the source branch and 10% on the destination:
- spread: the changes fall all over the key space, so every range of the repository is touched;
- clustered: the changes fall under one prefix each, so few ranges are touched and the rest are reused.
For each: the time of a merge preview (dry run), of the merge itself, and of listing the three-dot diff, all
through the HTTP API. Prints times and ratios measured in one run.
"""

from __future__ import annotations

import logging
import random
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import lakefs
from lakefs.client import Client

from chalicelib import wiring
from chalicelib.graveler.records import BranchID, Entry, Key, RepositoryID, StagedEntry
from lakelet.stack.local import LocalStack

THREADS = 8
PARTS = 100
CHUNK = 2_000


def key_of(i: int) -> str:
    return f"data/part={i % PARTS:02d}/file-{i:07d}.parquet"


def timed(what: Callable[[], Any]) -> tuple[float, Any]:
    started = time.perf_counter()
    result = what()
    return time.perf_counter() - started, result


def build_base(repo_id: str, count: int, namespace: str) -> int:
    """OBJECTS entries on main: staged with batch writes into the staging table, committed chunk by chunk.

    In key order, CHUNK keys a commit: moto answers a DynamoDB query in time proportional to the table's size,
    so one commit of 100,000 staged entries (100 query pages to read them, 100 more to drop them) would take
    hours there, while each chunk's token is dropped before the next one is staged. Returns the commits made.
    """
    engine = wiring.get_services().engine
    set_many = engine.ports.staging.set_many  # DynamoStagingStore's batch write
    keys = sorted(range(count), key=key_of)
    commits = 0
    for start in range(0, count, CHUNK):
        token = engine.ports.refs.get_branch(RepositoryID(repo_id), BranchID("main")).staging_token
        set_many(
            token,
            [
                StagedEntry(
                    Key(key_of(i)),
                    Entry(
                        f"{namespace}/data/bench/{i:07d}",
                        1024 + i % 100,
                        f"{i:032x}",
                        1_700_000_000,
                        "application/octet-stream",
                    ),
                )
                for i in keys[start : start + CHUNK]
            ],
        )
        engine.commits.commit(repo_id, "main", "bench", f"objects {start} to {min(count, start + CHUNK) - 1}")
        commits += 1
    return commits


def in_parallel(work: Callable[[Any], None], items: list[Any]) -> None:
    with ThreadPoolExecutor(THREADS) as pool:
        list(pool.map(work, items))


def edit(branch: lakefs.Branch, changed: list[str], added: list[str], deleted: list[str], tag: str) -> None:
    in_parallel(lambda k: branch.object(k).upload(data=f"{tag} {k}\n".encode()), changed + added)
    in_parallel(lambda k: branch.object(k).delete(), deleted)
    branch.commit(message=f"{tag}: {len(changed)} changed, {len(added)} added, {len(deleted)} deleted")


def preview(client: Client, repo_id: str, source: str, dest: str) -> dict[str, Any]:
    api = client.sdk_client.refs_api.api_client
    response = api.call_api(
        f"/repositories/{repo_id}/refs/{source}/merge/{dest}",
        "POST",
        {},
        [("dry_run", "true")],
        {"Content-Type": "application/json", "Accept": "application/json"},
        body={},
        auth_settings=["basic_auth"],
        response_types_map={"200": "object"},
    )
    return response.data  # type: ignore[no-any-return]


def scenario(
    client: Client,
    repo: lakefs.Repository,
    name: str,
    source_keys: list[str],
    dest_keys: list[str],
    new_keys: list[str],
) -> dict[str, float]:
    """source_keys: changed (2/3) and deleted (1/3) on the source, with new_keys added; dest_keys changed on main."""
    main = repo.branch("main")
    source = repo.branch(f"src-{name}").create(source_reference="main")
    cut = len(source_keys) * 2 // 3
    setup, _ = timed(
        lambda: (
            edit(source, source_keys[:cut], new_keys, source_keys[cut:], name),
            edit(main, dest_keys, [], [], f"{name}-main"),
        )
    )
    t_preview, shown = timed(lambda: preview(client, repo.id, source.id, "main"))
    t_diff, diff = timed(lambda: sum(1 for _ in main.diff(source)))
    t_merge, reference = timed(lambda: source.merge_into(main))
    assert shown["summary"]["conflict"] == 0, shown["summary"]
    assert diff == len(source_keys) + len(new_keys), (diff, len(source_keys), len(new_keys))
    changed = source_keys[0]
    with main.object(changed).reader(mode="r") as reader:
        assert reader.read() == f"{name} {changed}\n"
    assert not main.object(source_keys[-1]).exists()
    assert repo.commit(reference).get_commit().parents[1] == source.get_commit().id
    return {"setup": setup, "preview": t_preview, "diff": t_diff, "merge": t_merge}


def main(objects: int, differences: int) -> None:
    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # one line per request drowns the results
    rng = random.Random(7)
    on_source = differences * 9 // 10
    on_dest = differences - on_source
    with LocalStack(api_port=0) as stack:
        client = Client(
            host=stack.endpoint, username=stack.credentials.access_key_id, password=stack.credentials.secret_access_key
        )
        namespace = f"{stack.default_namespace_prefix}/bench-merge"
        repo = lakefs.Repository("bench-merge", client=client).create(storage_namespace=namespace, exist_ok=False)

        t_base, base_commits = timed(lambda: build_base(repo.id, objects, namespace))
        engine = wiring.get_services().engine
        head = engine.commits.get_commit(repo.id, "main")
        ranges = len(engine.ports.committed.ranges(namespace, head.meta_range_id))

        every = list(range(objects))
        rng.shuffle(every)
        spread_source = [key_of(i) for i in every[: on_source * 5 // 6]]
        spread_new = [f"data/part={i % PARTS:02d}/new-{i:07d}.parquet" for i in range(on_source - len(spread_source))]
        spread_dest = [key_of(i) for i in every[len(spread_source) : len(spread_source) + on_dest]]
        # Clustered: consecutive keys of one part (the keys of a part sort together), another part for main.
        # Keys the spread scenario touched are left out: one it deleted cannot be deleted again.
        touched = set(spread_source) | set(spread_dest)
        part_a = sorted(k for k in (key_of(i) for i in range(objects) if i % PARTS == 17) if k not in touched)
        part_b = sorted(k for k in (key_of(i) for i in range(objects) if i % PARTS == 61) if k not in touched)
        clustered_source = part_a[: on_source * 5 // 6]
        clustered_new = [f"data/part=17/new-{i:07d}.parquet" for i in range(on_source - len(clustered_source))]
        clustered_dest = part_b[:on_dest]

        results = {
            "spread": scenario(client, repo, "spread", spread_source, spread_dest, spread_new),
            "clustered": scenario(client, repo, "clustered", clustered_source, clustered_dest, clustered_new),
        }

    print(f"objects in the repository:        {objects} in {ranges} ranges")
    print(f"objects the branches differ in:   {differences} ({on_source} on the source, {on_dest} on main)")
    print(f"base: set_many + {base_commits} commits:     {t_base:8.2f} s")
    for name, r in results.items():
        print(f"[{name}] edits + 2 commits (API):  {r['setup']:8.2f} s")
        print(f"[{name}] merge preview (dry run):   {r['preview']:8.2f} s")
        print(f"[{name}] three-dot diff, all pages: {r['diff']:8.2f} s")
        print(f"[{name}] MERGE:                     {r['merge']:8.2f} s")
    print(f"ratio merge spread / its two commits:      {results['spread']['merge'] / results['spread']['setup']:8.3f}")
    print(
        f"ratio merge clustered / merge spread:      {results['clustered']['merge'] / results['spread']['merge']:8.3f}"
    )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 100_000, int(sys.argv[2]) if len(sys.argv) > 2 else 1_000)
