"""64-bit FNV-1a, the hash lakeFS uses to place range boundaries, one key at a time or many at once.

Pure Python spends ~100 ns per byte in the one-at-a-time loop, which made hashing the largest cost of writing
ranges. ``fnv1a_64_many`` runs the same recurrence on many keys of equal length together: each key gets a
128-bit lane of one big integer, so one big-int XOR, multiply and mask advance every key by one byte at C
speed. The upper 64 bits of a lane absorb the multiply's carry (the prime has 41 bits) before the mask
clears them, so lanes never disturb each other.
"""

from __future__ import annotations

import sys
from array import array
from collections.abc import Sequence

FNV64_OFFSET = 0xCBF29CE484222325
FNV64_PRIME = 0x100000001B3
_MASK64 = (1 << 64) - 1
_LANE = 16  # bytes per lane: 8 for the value, 8 of headroom for the carry
# Measured: below ~32 lanes building them costs more than it saves; past a few hundred the big integers
# outgrow the CPU caches and each lane gets slower again.
_MIN_LANES = 32
_MAX_LANES = 256


def fnv1a_64(data: bytes) -> int:
    value = FNV64_OFFSET
    for byte in data:
        value = ((value ^ byte) * FNV64_PRIME) & _MASK64
    return value


def fnv1a_64_many(items: Sequence[bytes]) -> list[int]:
    """``[fnv1a_64(item) for item in items]``, several times faster when many items share a length."""
    result = [0] * len(items)
    by_length: dict[int, list[int]] = {}
    for index, item in enumerate(items):
        by_length.setdefault(len(item), []).append(index)
    for length, indexes in by_length.items():
        if len(indexes) < _MIN_LANES or length == 0:
            for index in indexes:
                result[index] = fnv1a_64(items[index])
            continue
        for first in range(0, len(indexes), _MAX_LANES):
            chunk = indexes[first : first + _MAX_LANES]
            for index, value in zip(chunk, _same_length(length, [items[i] for i in chunk]), strict=True):
                result[index] = value
    return result


def _same_length(length: int, items: list[bytes]) -> list[int]:
    lanes = len(items)
    joined = b"".join(items)
    mask = _in_every_lane(_MASK64, lanes)
    state = _in_every_lane(FNV64_OFFSET, lanes)
    column = bytearray(_LANE * lanes)
    for position in range(length):
        # Byte ``position`` of every item, each at the bottom of its lane.
        column[0::_LANE] = joined[position::length]
        state = ((state ^ int.from_bytes(column, "little")) * FNV64_PRIME) & mask
    words = array("Q", state.to_bytes(_LANE * lanes, "little"))
    if sys.byteorder != "little":
        words.byteswap()
    return list(words[0 :: _LANE // 8])


def _in_every_lane(value: int, lanes: int) -> int:
    return int.from_bytes((value.to_bytes(8, "little") + b"\x00" * (_LANE - 8)) * lanes, "little")
