"""moto's DynamoDB GetItem without growing the table: a fidelity fix the embedded stack needs (installed with
lakelet/stack/moto_speedups.py; moto is pinned, requirements-dev.txt).

Why: moto keeps a table with a range key as ``items[hash][range] -> Item``, ``items`` a ``defaultdict(dict)``, and
``Table.get_item`` reads ``self.items[hash_key][range_key]``: a read of a partition the table does not hold yet
inserts an empty one. That insertion is not atomic: the dict calls ``DynamoType.__hash__``, which is Python code,
so another thread may run between the lookup that found no partition and the insertion. A put into that very
partition meanwhile (the first rows written to a staging token a commit has just installed, while a reader looks
for a key there) created the partition and stored its item; the read then put its empty partition over it, and the
item was gone though its put was answered: an acknowledged upload missing from every later listing, stat and
commit (tests/lakelet/test_moto_reads.py replays that interleaving). Writes are serialized with each other (the
journal's lock, moto_speedups' per-table lock for puts and deletes), reads are not, and should not need to be.

:func:`install` makes ``get_item`` answer None, touching nothing, for a key whose partition the table does not
hold: what moto answers, without the insertion. A partition, once there, stays (a delete pops the item, not the
partition), so every other read can be moto's own. :func:`install` and :func:`uninstall` are idempotent.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from moto.dynamodb.models.dynamo_type import DynamoType, Item
from moto.dynamodb.models.table import Table

_saved: list[Callable[..., Any]] = []


def _get_item(self: Table, hash_key: DynamoType, range_key: DynamoType | None = None, *args: Any, **kwargs: Any) -> Any:
    if range_key and self.has_range_key and hash_key not in self.items:
        return None  # moto's KeyError answer, without inserting an empty partition ("in" never inserts)
    item: Item | None = _saved[0](self, hash_key, range_key, *args, **kwargs)
    return item


def install() -> None:
    """Idempotent (called with moto_speedups' lock held)."""
    if not _saved:
        _saved.append(Table.get_item)
        Table.get_item = _get_item  # type: ignore[method-assign]


def uninstall() -> None:
    """Idempotent."""
    if _saved:
        Table.get_item = _saved.pop()  # type: ignore[method-assign]
