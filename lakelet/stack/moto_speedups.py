"""An opt-in speedup of moto's DynamoDB queries, for the embedded stack at scale.

Why: moto's ``Table.query`` (moto 5.2.5, pinned) answers every page by collecting and sorting *all* items of the
table, then sorting the queried partition and walking it from its start to the ExclusiveStartKey. One page costs
time proportional to the table's size, so reading a partition of N items in pages of 1,000 costs O(N^2 / 1,000):
hours for the million staged changes of a large commit. Then moto serializes each answer through its generic,
model-driven serializer, which looks up all ten members of every AttributeValue through its alias providers:
about 1.5 s for a page of 1,000 staged entries, more than everything else in the request together.

What :func:`install` patches (and :func:`uninstall` gives back; both are idempotent):

1. ``Table.query``, for the shape the stores use (base table, no index, string hash and range keys, hash key
   equality, at most one range-key condition among = < <= > >= BETWEEN begins_with, no legacy QueryFilter):
   it reads the partition ``table.items[hash_key]`` (moto keeps ``items[hash][range] -> Item`` for tables with
   a range key) through a sorted list of its range keys, cached per partition, and bisects to the range
   condition and to the ExclusiveStartKey. From there it does exactly what moto's loop does (the Limit and
   1 MB checks, LastEvaluatedKey, ScannedCount, reverse order, FilterExpression, projection), so the answer is
   the same. Every other shape goes to moto's own query.
2. ``Table.put_item`` and ``Table.delete_item``, to keep those lists right: every change of a table's set of
   keys goes through them (batch writes, transactions, updates and PartiQL all call them). A new key goes to a
   small set of additions merged into the sorted list at the next query, a deleted key to a set of dead keys
   that the walk skips (swept out when it grows). A query also checks that the list, the additions and the
   dead keys add up to the partition's size, and sorts again if not. A table that moto deep-copies (a
   transaction's rollback copy) starts with an empty cache.
3. How moto turns DynamoDB answers into JSON (lakelet/stack/moto_items.py): the conversion of its items to plain
   values and the serialization of attribute values, which walk every value of every item of a page; for the
   answers that carry items (Query pages, GetItem, ...), one pass from moto's Items to the JSON text
   (lakelet/stack/moto_answers.py), each item's text written once, at its put (lakelet/stack/moto_item_texts.py).
4. Fidelity fixes the stack needs: S3's ``PutObject`` serialized by a lock (moto checks a conditional put,
   ``If-None-Match: *``, then stores the object, so two concurrent requests could both pass the check); a GetItem
   that inserts no empty partition over one a concurrent put has just filled (lakelet/stack/moto_reads.py).

One assumption, from moto: an item is at most ~405 KB (``LimitedSizeDict``), so once a page holds less than
``1 MB - _MAX_ITEM_SIZE`` no item can stop it on size, and the walk need not look past the matching keys.
"""

from __future__ import annotations

import bisect
import threading
from collections.abc import Callable
from typing import Any

from moto.dynamodb.models.dynamo_type import DynamoType, Item
from moto.dynamodb.models.table import RESULT_SIZE_LIMIT, Table
from moto.s3.responses import S3Response

from lakelet.stack import moto_answers, moto_dispatch, moto_item_texts, moto_items, moto_reads
from lakelet.stack.moto_query_plan import fast_plan, segment

_CACHE_ATTRIBUTE = "_lakelet_sorted_ranges"
_MODULES = (moto_dispatch, moto_items, moto_answers, moto_item_texts, moto_reads)
# Above what moto lets an item grow to (LimitedSizeDict refuses more than 405,000 bytes).
_MAX_ITEM_SIZE = 410_000
# Fewer additions than this are inserted one by one; more are merged with a sort of the whole list.
_INSORT_MAX = 64
# The dead keys are swept out of the sorted list once they are this many and at least half of it.
_SWEEP_MIN = 1024


_lock = threading.Lock()
_state: dict[str, Any] = {}
# What the patched query did, since the process started: answered itself ("fast"), left the query to moto
# ("moto"), sorted a partition's keys ("sorted"), of which because a change had gone past the hooks ("resorted").
counters = {"fast": 0, "moto": 0, "sorted": 0, "resorted": 0}
_generation = [0]  # bumped by every install: a cache of an earlier install may have missed writes since


class _Partition:
    """The range keys of one partition: ``keys`` sorted (live and dead ones), ``added`` not yet in ``keys``,
    ``dead`` in ``keys`` but deleted. Live keys = (keys - dead) | added. ``probes``: for live keys, the DynamoType
    moto keys the partition's dict with, found there by identity before DynamoType's ``__eq__`` (two calls of
    its ``cast_value``) is asked. A probe is only ever used to look up, by equality: one that is not (or no
    longer) moto's own object still finds the item, a little slower."""

    __slots__ = ("added", "dead", "keys", "probes")

    def __init__(self, keys: list[str], probes: dict[str, DynamoType]) -> None:
        self.keys = keys
        self.probes = probes
        self.added: set[str] = set()
        self.dead: set[str] = set()


class _Cache:
    """Per table: hash key value -> _Partition. A deep copy of the table gets an empty cache."""

    def __init__(self, generation: int) -> None:
        self.generation = generation
        self.lock = threading.RLock()
        self.partitions: dict[str, _Partition] = {}

    def __deepcopy__(self, memo: dict[int, Any]) -> _Cache:
        return _Cache(self.generation)


def cache_of(table: Table) -> _Cache:
    found: _Cache | None = table.__dict__.get(_CACHE_ATTRIBUTE)
    if found is None or found.generation != _generation[0]:
        with _lock:
            found = table.__dict__.get(_CACHE_ATTRIBUTE)
            if found is None or found.generation != _generation[0]:
                found = _Cache(_generation[0])
                table.__dict__[_CACHE_ATTRIBUTE] = found
    return found


def sorted_keys(cache: _Cache, hash_value: str, partition: dict[DynamoType, Item]) -> _Partition:
    """The partition's sorted key list, brought up to date (called with cache.lock held)."""
    entry = cache.partitions.get(hash_value)
    if entry is not None and len(entry.keys) - len(entry.dead) + len(entry.added) != len(partition):
        entry = None  # a change went past the hooks: start over
        counters["resorted"] += 1
    if entry is None:
        counters["sorted"] += 1
        probes = {key.value: key for key in partition}
        entry = _Partition(sorted(probes), probes)
        cache.partitions[hash_value] = entry
        return entry
    if entry.added:
        if len(entry.added) <= _INSORT_MAX:
            for key in entry.added:
                bisect.insort(entry.keys, key)
        else:
            entry.keys.extend(entry.added)
            entry.keys.sort()
        entry.added.clear()
    if len(entry.dead) >= _SWEEP_MIN and 2 * len(entry.dead) >= len(entry.keys):
        dead = entry.dead
        entry.keys = [key for key in entry.keys if key not in dead]
        dead.clear()
    return entry


# ---- the write hooks ----------------------------------------------------------------------------------------


def _put_item(self: Table, item_attrs: dict[str, Any], *args: Any, **kwargs: Any) -> Item:
    item = _put_item_keeping_keys(self, item_attrs, *args, **kwargs)
    moto_item_texts.remember(self, item)
    return item


def _put_item_keeping_keys(self: Table, item_attrs: dict[str, Any], *args: Any, **kwargs: Any) -> Item:
    original: Callable[..., Item] = _state["put_item"]
    if self.range_key_attr is None:
        return original(self, item_attrs, *args, **kwargs)
    cache = cache_of(self)
    # Under the lock, so that no query snapshots the partition between moto's write and the bookkeeping.
    with cache.lock:
        if not cache.partitions:
            return original(self, item_attrs, *args, **kwargs)
        try:
            hash_value = DynamoType(item_attrs[self.hash_key_attr])
            range_value = DynamoType(item_attrs[self.range_key_attr])
        except (KeyError, IndexError, TypeError, AttributeError):
            return original(self, item_attrs, *args, **kwargs)  # moto reports what is wrong with it
        entry = cache.partitions.get(hash_value.value) if hash_value.type == "S" else None
        if entry is None:
            return original(self, item_attrs, *args, **kwargs)
        partition = self.items.get(hash_value)
        existed = partition is not None and range_value in partition
        item = original(self, item_attrs, *args, **kwargs)
        if not existed:
            key = range_value.value
            entry.probes[key] = item.range_key if isinstance(item.range_key, DynamoType) else range_value
            if key in entry.dead:
                entry.dead.discard(key)
            else:
                entry.added.add(key)
        return item


def _delete_item(self: Table, hash_key: DynamoType, range_key: DynamoType | None) -> Item | None:
    original: Callable[..., Item | None] = _state["delete_item"]
    cache = cache_of(self)
    with cache.lock:
        item = original(self, hash_key, range_key)
        if item is None or not isinstance(hash_key, DynamoType) or hash_key.type != "S":
            return item
        if not range_key:
            cache.partitions.pop(hash_key.value, None)  # moto popped the whole partition
            return item
        entry = cache.partitions.get(hash_key.value)
        if entry is not None:
            key = range_key.value
            entry.probes.pop(key, None)
            if key in entry.added:
                entry.added.discard(key)
            else:
                entry.dead.add(key)
        return item


# ---- the query ----------------------------------------------------------------------------------------------


def _query(
    self: Table,
    hash_key: DynamoType | None,
    range_comparison: str | None,
    range_objs: list[DynamoType],
    limit: int,
    exclusive_start_key: dict[str, Any],
    scan_index_forward: bool,
    projection_expressions: list[list[str]] | None,
    index_name: str | None = None,
    consistent_read: bool = False,
    filter_expression: Any = None,
    hash_key_conditions: list[tuple[str, DynamoType]] | None = None,
    range_key_conditions: list[tuple[str, str, list[DynamoType]]] | None = None,
    **filter_kwargs: Any,
) -> tuple[list[Item], int, dict[str, Any] | None]:
    plan = fast_plan(
        self,
        hash_key,
        range_comparison,
        range_objs,
        limit,
        exclusive_start_key,
        index_name,
        hash_key_conditions,
        range_key_conditions,
        filter_kwargs,
    )
    if plan is None:
        counters["moto"] += 1
        original: Callable[..., tuple[list[Item], int, dict[str, Any] | None]] = _state["query"]
        return original(
            self,
            hash_key,
            range_comparison,
            range_objs,
            limit,
            exclusive_start_key,
            scan_index_forward,
            projection_expressions,
            index_name,
            consistent_read,
            filter_expression,
            hash_key_conditions=hash_key_conditions,
            range_key_conditions=range_key_conditions,
            **filter_kwargs,
        )
    counters["fast"] += 1
    comparison, values, start = plan
    assert isinstance(hash_key, DynamoType)
    cache = cache_of(self)
    results: list[Item] = []
    last_evaluated_key: dict[str, Any] | None = None
    with cache.lock:
        partition = self.items.get(hash_key)  # .get: the defaultdict must not grow a partition
        if partition:
            entry = sorted_keys(cache, hash_key.value, partition)
            keys, probes = entry.keys, entry.probes
            a, b = segment(keys, comparison, values)
            # Positions in walking order: the matching ones after the start key, then the rest (the "tail"),
            # which moto walks too: they match nothing but can still end the page (Limit reached, or 1 MB).
            if scan_index_forward is False:
                if start is not None:
                    b = min(b, bisect.bisect_left(keys, start))  # moto skips keys >= the start key
                matching: range = range(b - 1, a - 1, -1)
                tail: range = range(min(a, b) - 1, -1, -1)
            else:
                if start is not None:
                    a = max(a, bisect.bisect_right(keys, start))  # moto skips keys <= the start key
                matching = range(a, b)
                tail = range(max(a, b), len(keys))
            # Items before the matching ones add nothing and cannot end an empty page (an item is < 1 MB).
            # result_size: moto's size of the page so far, or, until ``exact``, an upper bound of it: the length
            # of the items' JSON text, written here for the answer (moto_answers.text_size). While the bound
            # stays under 1 MB so does the size, and the decisions are moto's; past it, the exact sizes decide.
            moto_answers.forget()
            result_size = 0
            exact = False
            ended = False
            for position in matching:
                item = partition.get(probes.get(keys[position]) or DynamoType({"S": keys[position]}))
                if item is None:
                    continue  # a dead key
                if len(results) == limit:
                    ended = True
                    break
                size = None if exact else moto_answers.text_size(item, moto_item_texts.known(self, item))
                if size is None or result_size + size > RESULT_SIZE_LIMIT:
                    if not exact:
                        exact, result_size = True, sum(_item_size(result) for result in results)
                    size = _item_size(item)
                    if result_size + size > RESULT_SIZE_LIMIT:
                        ended = True
                        break
                results.append(item)
                result_size += size
            if ended:
                last_evaluated_key = self._get_last_evaluated_key(results[-1], None)
            elif results and (limit == len(results) or result_size + _MAX_ITEM_SIZE > RESULT_SIZE_LIMIT):
                for position in tail:
                    item = partition.get(probes.get(keys[position]) or DynamoType({"S": keys[position]}))
                    if item is None:
                        continue
                    if len(results) != limit:
                        if not exact:
                            exact, result_size = True, sum(_item_size(result) for result in results)
                        if result_size + _item_size(item) <= RESULT_SIZE_LIMIT:
                            continue
                    last_evaluated_key = self._get_last_evaluated_key(results[-1], None)
                    break
    scanned_count = len(results)
    # moto deep-copies the page here. Nothing writes to the copy (a projection builds new items, the filter and
    # the response only read), so the answer is the same without it, and the copy was a fifth of a page's cost.
    if filter_expression is not None:
        results = [item for item in results if filter_expression.expr(item)]
    if projection_expressions:
        results = [r.project(projection_expressions) for r in results]
    return results, scanned_count, last_evaluated_key


def _item_size(item: Item) -> int:
    """``item.size()``, moto's size of an item (the 1 MB check of a page), without moto's copy of every map
    member (its DynamoType.size wraps each in a new DynamoType) for the usual kinds of values. A string's size is
    its UTF-8 length: its length when it is ASCII (``str.isascii`` reads a flag), without encoding it."""
    total = 0
    for name, value in item.attrs.items():
        total += len(name) if name.isascii() else len(name.encode())
        kind = value.type
        inner = value.value
        if kind == "S" and type(inner) is str:
            total += len(inner) if inner.isascii() else len(inner.encode())
        elif kind == "N" and type(inner) is str:
            total += len(inner)
        elif (kind == "BOOL" or kind == "NULL") and type(inner) is bool:
            total += 1
        else:
            total += _value_size(value)
    return total


def _value_size(value: DynamoType) -> int:
    kind, inner = value.type, value.value
    if kind == "S" and type(inner) is str:
        return len(inner.encode())
    if kind == "N":
        return len(str(inner))
    if kind == "M" and all(type(member) is DynamoType for member in inner.values()):
        return sum(len(name.encode()) + _value_size(member) for name, member in inner.items())
    if kind == "L" and all(type(element) is DynamoType for element in inner):
        return sum(_value_size(element) for element in inner)
    return int(value.size())


# ---- S3's PutObject ----------------------------------------------------------------------------------------

s3_put_lock = threading.Lock()  # conditional puts are checked and stored under it (point 4 above)


def _s3_put_object(self: S3Response, *args: Any, **kwargs: Any) -> Any:
    original: Callable[..., Any] = _state["s3_put_object"]
    with s3_put_lock:
        return original(self, *args, **kwargs)


# ---- switching it on and off --------------------------------------------------------------------------------


def _patches() -> list[tuple[Any, str, str, Callable[..., Any]]]:
    """(owner, method, key in _state, replacement) of each method install patches here."""
    return [
        (Table, "query", "query", _query),
        (Table, "put_item", "put_item", _put_item),
        (Table, "delete_item", "delete_item", _delete_item),
        (S3Response, "put_object", "s3_put_object", _s3_put_object),
    ]


def install() -> None:
    """Patches moto's DynamoDB Table (query, put_item, delete_item, get_item) in this process. Idempotent."""
    with _lock:
        if _state:
            return
        _generation[0] += 1
        for owner, name, key, replacement in _patches():
            _state[key] = getattr(owner, name)
            setattr(owner, name, replacement)
        for module in _MODULES:
            module.install()


def uninstall() -> None:
    """Gives moto its own methods back. Idempotent; caches left on tables are ignored by a later install."""
    with _lock:
        if not _state:
            return
        for owner, name, key, _ in _patches():
            setattr(owner, name, _state.pop(key))
        for module in _MODULES:
            module.uninstall()


def installed() -> bool:
    return bool(_state)
