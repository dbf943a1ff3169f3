"""How a staging token's rows spread over shards, and the small key sketch a commit plans its slices from.

Shards. One DynamoDB partition key takes about 1,000 writes/s, so one token as one partition caps a branch's
staging rate there. A token may instead spread its rows over ``n`` shards (partition keys); the shard of a key is
a hash of the key, so a point read is still one call, and a listing merges the shards' key-ordered streams. The
count is part of the token's name (``<token>#s<n>``), fixed when the token is installed: the shard of a key can
never change while the token lives, and any process knows it from the branch record alone, with no extra read.
A name without the mark is one shard stored exactly as before sharding (tokens written before it still read).

Who chooses ``n``: the seal that installs the token (branch_moves.sealed), from the rows the branch staged in the
token it seals (the sketch's estimate): about one shard per ``ROWS_PER_SHARD`` rows, at most ``MAX_SHARDS``. A
branch that staged little keeps one shard, so listing it stays one query; a branch that staged 100,000 rows
between two commits stages the next ones over 10 partition keys (10,000 writes/s on paper).

The sketch. One key in ``SKETCH_ODDS`` (by a hash independent of the shard's) is also written to its shard's
sketch, ordered by that hash: the first ``m`` of it are a uniform sample of the keys (a bottom-m sketch), read in
one bounded query per shard whatever the token holds, and the m-th hash estimates the number of keys. The plan cuts
slices at sampled keys instead of reading every staged row (commit/steps.py).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence

from .records import Key, StagingSample, StagingToken

MAX_SHARDS = 16
ROWS_PER_SHARD = 10_000
# One key in SKETCH_ODDS is written to the sketch too: the sketch adds 1/16 to the write cost, and at
# MAX_SHARDS x 1,000 writes/s each shard's sketch partition takes ~60 writes/s.
SKETCH_ODDS = 16
# How many sketch entries a seal reads to estimate the size of the token it seals (the estimate's error is
# about 1/sqrt of it: ~12%, enough to choose a shard count).
ESTIMATE_SAMPLE = 64

_MARK = "#s"
_SPACE = 1 << 64
_SKETCH_LIMIT = _SPACE // SKETCH_ODDS


def shard_count(token: StagingToken) -> int:
    """The number of shards of the token: 1 for a name without a valid shard mark (every token before sharding)."""
    base, mark, count = token.rpartition(_MARK)
    if not mark or not base or not count.isdigit() or count != str(int(count)):
        return 1
    n = int(count)
    return n if 2 <= n <= MAX_SHARDS else 1


def unsharded(token: StagingToken) -> StagingToken:
    """The token's name without its shard mark: what a request derives and compares (commit/steps.py)."""
    return StagingToken(token.rpartition(_MARK)[0]) if shard_count(token) > 1 else token


def with_shards(token: StagingToken, shards: int) -> StagingToken:
    """The token named to spread over ``shards`` shards (clamped to 1..MAX_SHARDS)."""
    n = max(1, min(MAX_SHARDS, shards))
    base = unsharded(token)
    return base if n == 1 else StagingToken(f"{base}{_MARK}{n}")


def _hashes(key: str) -> tuple[int, int]:
    # Two independent 64-bit hashes: the shard's and the sketch's (one correlated with the other would put every
    # sketched key in the same few shards).
    digest = hashlib.blake2b(key.encode("utf-8", "surrogatepass"), digest_size=16).digest()
    return int.from_bytes(digest[:8], "big"), int.from_bytes(digest[8:], "big")


def shard_of(token: StagingToken, key: str) -> int:
    """The shard that holds ``key`` in the token: 0..shard_count(token)-1, a function of the key alone."""
    n = shard_count(token)
    return 0 if n == 1 else _hashes(key)[0] % n


def sketch_rank(key: str) -> int | None:
    """The key's place in its shard's sketch (smaller first), or None for the keys the sketch leaves out."""
    rank = _hashes(key)[1]
    return rank if rank < _SKETCH_LIMIT else None


def per_shard_sample(token: StagingToken, limit: int) -> int:
    """How many sketch entries ``sample(token, limit)`` reads from each shard."""
    n = shard_count(token)
    return max(1, -(-max(1, limit) // n))


def combine(shards: Sequence[Sequence[tuple[int, Key]]], per_shard: int) -> StagingSample:
    """The sample of a token from each shard's first ``per_shard`` sketch entries (rank, key), in rank order.

    A shard that gave fewer than ``per_shard`` entries gave its whole sketch (one key in SKETCH_ODDS); one that gave
    ``per_shard`` is estimated from its last rank: m uniform hashes below r mean about (m - 1) / (r / 2**64) keys."""
    estimate = 0.0
    keys: set[Key] = set()
    for entries in shards:
        keys.update(key for _, key in entries)
        if len(entries) < per_shard:
            estimate += len(entries) * SKETCH_ODDS
        else:
            estimate += (len(entries) - 1) * _SPACE / max(1, entries[-1][0])
    return StagingSample(tuple(sorted(keys)), int(estimate))


def shards_for(estimated_rows: int) -> int:
    """The shard count for a token after one that held ``estimated_rows`` rows (1 for a small branch)."""
    return max(1, min(MAX_SHARDS, -(-estimated_rows // ROWS_PER_SHARD)))


def sample_union(samples: Iterable[StagingSample]) -> list[str]:
    """The sorted keys of several tokens' samples (the plan samples each sealed token)."""
    return sorted({key for sample in samples for key in sample.keys})


__all__ = [
    "ESTIMATE_SAMPLE",
    "MAX_SHARDS",
    "ROWS_PER_SHARD",
    "SKETCH_ODDS",
    "combine",
    "per_shard_sample",
    "sample_union",
    "shard_count",
    "shard_of",
    "shards_for",
    "sketch_rank",
    "unsharded",
    "with_shards",
]
