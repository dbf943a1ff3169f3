"""The drop of retired staging tokens, in pieces that fit a deadline.

A commit of a million staged objects leaves a million staged rows to delete once its grace period is over
(branch_moves.RETIRED_GRACE_SECONDS). On one DynamoDB partition that is about 1,000 deletes a second, some 17
minutes: longer than any Lambda may run. So the drop is never part of a commit (it would make that commit, or the
next one, pay for it) and never one call: the sweep (``release_expired`` with a deadline, run by the scheduled
``drop_retired`` function) deletes rows in chunks until its deadline, and what is left of a token stays retired
for the next run, which starts over from the token's first remaining key. Deleted rows are gone from the
listing, so no cursor has to be kept: the next run's listing starts where this one stopped.

Only the port's ``iterate`` and ``delete_many`` are used, so the same code drops a token however the store
spreads its rows (a sharded token lists its shards merged in key order and deletes each key where it lives).
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from itertools import islice

from .ports import StagingStore
from .records import Key, StagingToken

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
    rows = iter(staging.iterate(token))
    with ThreadPoolExecutor(max(1, threads)) as pool:
        pending: list[Future[None]] = []
        while True:
            keys: list[Key] = [staged.key for staged in islice(rows, chunk)]
            if not keys:
                break
            pending.append(pool.submit(staging.delete_many, token, keys))
            if len(pending) >= threads:
                pending.pop(0).result()
            if deadline is not None and clock() >= deadline:
                for future in pending:
                    future.result()
                return False
        for future in pending:
            future.result()
    return True


__all__ = ["DROP_CHUNK", "DROP_THREADS", "drop_within"]
