"""64-bit FNV-1a, the hash lakeFS uses to place range boundaries: one key at a time, or a whole Arrow column.

``fnv1a_64_arrow`` runs the recurrence over a column of keys with vectorised Arrow compute, one byte position
at a time for every key at once (unsigned multiplication wraps modulo 2**64, which is exactly FNV's arithmetic).
Ranges store the result with their rows, so this only runs on new keys and on ranges of the first format.
"""

from __future__ import annotations

from collections.abc import Sequence

from .arrow import pa, pc

FNV64_OFFSET = 0xCBF29CE484222325
FNV64_PRIME = 0x100000001B3
_MASK64 = (1 << 64) - 1
# Below this many keys, the fixed cost of each compute call outweighs the Python loop.
_VECTOR_MIN = 64


def fnv1a_64(data: bytes) -> int:
    value = FNV64_OFFSET
    for byte in data:
        value = ((value ^ byte) * FNV64_PRIME) & _MASK64
    return value


def fnv1a_64_many(items: Sequence[bytes]) -> list[int]:
    """``[fnv1a_64(item) for item in items]``."""
    if len(items) < _VECTOR_MIN:
        return [fnv1a_64(item) for item in items]
    return fnv1a_64_arrow(pa.array(items, pa.binary())).to_pylist()  # type: ignore[no-any-return]


def value_offsets(values: pa.Array) -> pa.Int32Array:
    """The ``len(values) + 1`` offsets of a string or binary array into its data buffer (slices included)."""
    return pa.Array.from_buffers(pa.int32(), len(values) + 1, [None, values.buffers()[1]], offset=values.offset)


def fnv1a_64_arrow(keys: pa.Array) -> pa.UInt64Array:
    """fnv1a-64 of the UTF-8 (or raw bytes) of every value of a string or binary array without nulls."""
    keys = keys.cast(pa.binary()) if keys.type != pa.binary() else keys
    count = len(keys)
    state = pa.repeat(pa.scalar(FNV64_OFFSET, pa.uint64()), count)
    if count == 0:
        return state
    offsets = value_offsets(keys)
    starts = offsets.slice(0, count)
    lengths = pc.subtract(offsets.slice(1, count), starts)
    data = keys.buffers()[2]
    raw = pa.Array.from_buffers(pa.uint8(), 0 if data is None else data.size, [None, data])
    longest = pc.max(lengths).as_py()
    shortest = pc.min(lengths).as_py()
    prime = pa.scalar(FNV64_PRIME, pa.uint64())
    for position in range(longest):
        indexes = pc.add(starts, position)
        if position >= shortest:
            # Keys already fully hashed keep their state; their index is clamped to stay inside the buffer.
            active = pc.greater(lengths, position)
            indexes = pc.if_else(active, indexes, 0)
        byte = pc.take(raw, indexes).cast(pa.uint64())
        advanced = pc.multiply(pc.bit_wise_xor(state, byte), prime)
        state = advanced if position < shortest else pc.if_else(active, advanced, state)
    return state
