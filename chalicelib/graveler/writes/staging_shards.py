"""How a staging token's rows spread over shards, and the small key sketch a commit plans its slices from.

Shards. One DynamoDB partition key takes about 1,000 writes/s, so one token as one partition caps a branch's
staging rate there. A token may instead spread its rows over ``n`` shards (partition keys); the shard of a key is
a hash of the key, so a point read is still one call, and a listing merges the shards' key-ordered streams. The
count is part of the token's name (``<token>#s<n>``), fixed when the token is installed: the shard of a key can
never change while the token lives, and any process knows it from the branch record alone, with no extra read.
A name without the mark is one shard stored exactly as before sharding (tokens written before it still read).

Who chooses ``n``: the seal that installs the token (branch_moves.sealed), from the token it seals (``choose_shards``):
its rows (the sketch's estimate), about one shard per ``ROWS_PER_SHARD`` rows, and its staging rate when its age is
known, one shard per ``WRITES_PER_SHARD`` writes/s; at most ``MAX_SHARDS``. A branch that staged little keeps one
shard, so listing it stays one query; a branch that staged 100,000 rows between two commits, or 5,000 rows/s, stages
the next ones over 10 partition keys (10,000 writes/s on paper).

The sketch. One key in ``SKETCH_ODDS`` (by a hash independent of the shard's) is also written to its shard's
sketch, ordered by that hash: the first ``m`` of it are a uniform sample of the keys (a bottom-m sketch), read in
one bounded query per shard whatever the token holds, and the m-th hash estimates the number of keys. The plan cuts
slices at sampled keys instead of reading every staged row (commit/steps.py).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence

from ..records import Key, StagingSample, StagingToken

MAX_SHARDS = 16
ROWS_PER_SHARD = 10_000
# The staging rate a seal plans each shard of the next token for: half of a partition's ~1,000 writes/s.
WRITES_PER_SHARD = 500
# The rate counts only for a token of at least this many rows: a small branch keeps one shard however fast it
# commits (a branch saturating one shard at ~1,000 writes/s fills this in 2.5 s).
RATE_MIN_ROWS = ROWS_PER_SHARD // 4
# A token that held at least this many rows per shard keeps its shard count in the next token (a busy branch).
KEEP_ROWS_PER_SHARD = 1_000
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


def choose_shards(estimated_rows: int, current: int, age_seconds: float | None) -> int:
    """The shard count for the token a seal installs, from the token it seals: its rows, its shard count, and how
    long it staged (None when unknown).

    - by size: ``shards_for(rows)``;
    - by rate, when the age is known: enough shards to take the sealed token's rate at half a partition's writes
      each, so a branch whose commits come too often for a token to grow big still spreads (a saturated shard
      shows as ~1,000 rows/s: the next token gets twice the shards, and so on up to MAX_SHARDS);
    - a branch still busy (at least KEEP_ROWS_PER_SHARD rows per shard) never shrinks; a quiet one goes back to
      what its size asks for, one shard for a small branch."""
    wanted = shards_for(estimated_rows)
    if age_seconds is not None and estimated_rows >= RATE_MIN_ROWS:
        # A second at least: a burst of a few thousand rows inside one second is no sustained rate.
        wanted = max(wanted, int(-(-estimated_rows // (max(1.0, age_seconds) * WRITES_PER_SHARD))))
    if estimated_rows >= current * KEEP_ROWS_PER_SHARD:
        wanted = max(wanted, current)
    return max(1, min(MAX_SHARDS, wanted))


def one_shard_for(rows_at_most: int | None) -> bool:
    """Whether a token known to hold at most ``rows_at_most`` rows (None: unknown) is followed by a one-shard token
    whatever ``choose_shards`` is told of its shards and age (one shard by size, no rate, nothing kept): a seal
    that knows such a count needs no sample."""
    bound = min(RATE_MIN_ROWS, KEEP_ROWS_PER_SHARD, ROWS_PER_SHARD + 1)
    return rows_at_most is not None and rows_at_most < bound


def sample_union(samples: Iterable[StagingSample]) -> list[str]:
    """The sorted keys of several tokens' samples (the plan samples each sealed token)."""
    return sorted({key for sample in samples for key in sample.keys})


__all__ = [
    "ESTIMATE_SAMPLE",
    "MAX_SHARDS",
    "ROWS_PER_SHARD",
    "SKETCH_ODDS",
    "choose_shards",
    "combine",
    "one_shard_for",
    "per_shard_sample",
    "sample_union",
    "shard_count",
    "shard_of",
    "shards_for",
    "sketch_rank",
    "unsharded",
    "with_shards",
]
