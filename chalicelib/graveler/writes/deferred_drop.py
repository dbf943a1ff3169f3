"""The drop of retired staging tokens, in pieces that fit a deadline.

A commit of a million staged objects leaves a million staged rows to delete once its grace period is over
(branch_moves.RETIRED_GRACE_SECONDS). On one DynamoDB partition that is about 1,000 deletes a second, some 17
minutes: longer than any Lambda may run. So the drop is never part of a commit (it would make that commit, or the
next one, pay for it) and never one call: the sweep (``release_expired`` with a deadline, run by the scheduled
``drop_retired`` function) deletes rows in chunks until its deadline, and what is left of a token stays retired
for the next run, which starts over from the token's first remaining key. Deleted rows are gone from the
listing, so no cursor has to be kept: the next run's listing starts where this one stopped.

A sharded token (staging_shards.py) is dropped shard by shard: each shard's rows listed (``iterate_shard``) and
deleted by key in chunks, then ``drop_shard`` for what is left of it (its part of the key sketch, a sixteenth as many
entries as rows).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from itertools import islice

from ..ports import StagingStore
from ..records import Key, StagedEntry, StagingToken
from .staging_shards import shard_count

# Keys deleted per delete_many call (a DynamoDB adapter sends them 25 a request), and calls in flight at once: one
# thread's round trips alone would stay under what a partition (or a sharded token's partitions) can take.
DROP_CHUNK = 500
DROP_THREADS = 8

Clock = Callable[[], float]


def drop_within(
    staging: StagingStore,
    token: StagingToken,
    deadline: float | None,
    clock: Clock,
    chunk: int = DROP_CHUNK,
    threads: int = DROP_THREADS,
) -> bool:
    """Deletes the token's staged rows until ``deadline`` (by ``clock``; None: until none is left); True when
    none is left. Idempotent: a failed or cut drop leaves rows that the next call deletes. Raises what the
    store raises (StorageError)."""
    with ThreadPoolExecutor(max(1, threads - 1)) as pool:
        for shard in range(shard_count(token)):
            rows = iter(staging.iterate_shard(token, shard))
            while True:
                # One round: up to ``threads`` chunks at once, the first in this thread (its calls are this
                # function's own: a recorder or tracer attributing calls per thread sees the drop).
                chunks = [keys for keys in (_keys(rows, chunk) for _ in range(max(1, threads))) if keys]
                if chunks:
                    others = [pool.submit(staging.delete_many, token, keys) for keys in chunks[1:]]
                    staging.delete_many(token, chunks[0])
                    for future in others:
                        future.result()
                if len(chunks) < max(1, threads):
                    # The shard's rows are gone: its sketch (a sixteenth as many entries) goes with drop_shard.
                    staging.drop_shard(token, shard)
                    break
                if deadline is not None and clock() >= deadline:
                    return False
            if deadline is not None and clock() >= deadline and shard + 1 < shard_count(token):
                return False
    return True


def _keys(rows: Iterator[StagedEntry], chunk: int) -> list[Key]:
    return [staged.key for staged in islice(rows, chunk)]


__all__ = [
    "DROP_CHUNK",
    "DROP_THREADS",
    "Clock",
    "drop_within",
]
