"""Whether lakelet/stack/moto_speedups.py can answer a DynamoDB query itself, and where in a partition's sorted
range keys its answer lies: pure functions of the query's arguments (moto 5.2.5's names for them, pinned).
"""

from __future__ import annotations

import bisect
from typing import Any

from moto.dynamodb.models.dynamo_type import DynamoType
from moto.dynamodb.models.table import Table

# Comparisons of a range-key condition, as moto's parsers name them.
_EQ = {"=", "EQ"}
_LT = {"<", "LT"}
_LE = {"<=", "LE"}
_GT = {">", "GT"}
_GE = {">=", "GE"}
_BETWEEN = {"BETWEEN"}
_BEGINS_WITH = {"BEGINS_WITH"}
_KNOWN = _EQ | _LT | _LE | _GT | _GE | _BETWEEN | _BEGINS_WITH


def segment(keys: list[str], comparison: str | None, values: list[str]) -> tuple[int, int]:
    """[a, b): the positions in ``keys`` (sorted) whose key meets the range condition; contiguous for each one."""
    n = len(keys)
    if comparison is None:
        return 0, n
    value = values[0]
    if comparison in _EQ:
        return bisect.bisect_left(keys, value), bisect.bisect_right(keys, value)
    if comparison in _LT:
        return 0, bisect.bisect_left(keys, value)
    if comparison in _LE:
        return 0, bisect.bisect_right(keys, value)
    if comparison in _GT:
        return bisect.bisect_right(keys, value), n
    if comparison in _GE:
        return bisect.bisect_left(keys, value), n
    if comparison in _BETWEEN:
        a = bisect.bisect_left(keys, value)
        return a, max(a, bisect.bisect_right(keys, values[1]))
    # begins_with: the keys with the prefix sort together, from the first key >= the prefix.
    a = bisect.bisect_left(keys, value)
    return a, bisect.bisect_left(keys, True, lo=a, key=lambda key: not key.startswith(value))


def fast_plan(
    table: Table,
    hash_key: Any,
    range_comparison: str | None,
    range_objs: list[DynamoType],
    limit: Any,
    exclusive_start_key: Any,
    index_name: str | None,
    hash_key_conditions: list[tuple[str, DynamoType]] | None,
    range_key_conditions: list[tuple[str, str, list[DynamoType]]] | None,
    filter_kwargs: dict[str, Any],
) -> tuple[str | None, list[str], str | None] | None:
    """(comparison, its values, the ExclusiveStartKey's range value) when the fast path answers exactly as moto
    would; None to leave the query to moto."""
    if index_name or filter_kwargs or table.range_key_attr is None:
        return None
    if table.hash_key_type != "S" or table.range_key_type != "S":
        return None
    if not isinstance(hash_key, DynamoType) or hash_key.type != "S" or not isinstance(hash_key.value, str):
        return None
    if hash_key_conditions and (len(hash_key_conditions) != 1 or hash_key_conditions[0][0] != table.hash_key_attr):
        return None
    if range_key_conditions and (len(range_key_conditions) != 1 or range_key_conditions[0][0] != table.range_key_attr):
        return None
    if limit is not None and (type(limit) is not int or limit < 1):
        return None
    comparison: str | None = None
    values: list[str] = []
    if range_comparison:
        comparison = range_comparison.upper()
        if comparison not in _KNOWN:
            return None
        if any(not isinstance(o, DynamoType) or o.type != "S" or not isinstance(o.value, str) for o in range_objs):
            return None
        values = [o.value for o in range_objs]
        if len(values) != (2 if comparison in _BETWEEN else 1):
            return None
    start: str | None = None
    if exclusive_start_key is not None:
        # moto skips items up to the key by comparing hash then range: same hash, string range only.
        if not isinstance(exclusive_start_key, dict):
            return None
        given_hash = exclusive_start_key.get(table.hash_key_attr)
        given_range = exclusive_start_key.get(table.range_key_attr)
        if given_hash != {"S": hash_key.value}:
            return None
        if not isinstance(given_range, dict) or list(given_range) != ["S"] or not isinstance(given_range["S"], str):
            return None
        start = given_range["S"]
    return comparison, values, start
