"""Each stored DynamoDB item's JSON text, written when moto stores the item and reused by the Query pages that
carry it (installed with lakelet/stack/moto_speedups.py; issue 43).

Why: committing 10,000 staged objects in ``lakelet up`` read them in about 20 us an item, and writing each item's
JSON text for the page (moto_answers.map_text) was about 5 us of it, paid again at every read. An item is written
once and read by every commit, listing and diff of its staging area: here its text is written at the put (a few
us of an upload's milliseconds) and a Query page takes it as it is.

When a remembered text is used: only while the item's attributes are the same dict object and its table's
in-place generation is the one the text was written under.

- A put makes a new Item (moto's ``Table.put_item``; PartiQL and transactions call it too), and moto's deep
  copies (a transaction's rollback copy) make new Items without the text.
- moto changes a stored item in place only in ``DynamoDBBackend.update_item`` (UpdateItem, and a transaction's
  Update, which calls it). :func:`install` wraps it: when it returns or raises, the table gets a generation
  never used before, so every text written under an earlier one is ignored. A text is written under the
  generation read before the text is made, so one made while an update was changing the item is never used.
- Texts written before an :func:`uninstall` are ignored after the next :func:`install` (updates in between were
  not seen).
- A snapshot stores no text (lakelet/persistence/snapshot.py): a table loaded from one has its items' texts
  written again at their next put, and meanwhile the page writes them as before.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

from moto.dynamodb.models import DynamoDBBackend
from moto.dynamodb.models.dynamo_type import Item
from moto.dynamodb.models.table import Table

from lakelet.stack import moto_answers

_TEXT = "_lakelet_text"
_GENERATION = "_lakelet_in_place_generation"
# Generations handed out; next() on it is atomic, so two updates never give their table the same one.
_generations = itertools.count(1)
_saved: list[Callable[..., Any]] = []
# Bumped by every install: texts written under an earlier install may have missed updates made while uninstalled.
_epoch = [0]


class KnownText:
    """An item's JSON text, the attributes it was written from, and the table's generation then."""

    __slots__ = ("attributes", "epoch", "generation", "text")

    def __init__(self, generation: int, attributes: Any, text: str) -> None:
        self.epoch = _epoch[0]
        self.generation = generation
        self.attributes = attributes
        self.text = text


def remember(table: Table, item: Item) -> None:
    """Writes the text of an item ``table`` has just stored (nothing for an item moto_answers leaves to moto)."""
    generation = table.__dict__.get(_GENERATION, 0)
    attributes = item.attrs
    text = moto_answers.item_text(attributes)
    if text is not None:
        item.__dict__[_TEXT] = KnownText(generation, attributes, text)


def known(table: Table, item: Item) -> str | None:
    """The item's text written at its put, while still valid; else None."""
    found: KnownText | None = item.__dict__.get(_TEXT)
    if (
        found is None
        or found.attributes is not item.attrs
        or found.generation != table.__dict__.get(_GENERATION, 0)
        or found.epoch != _epoch[0]
    ):
        return None
    return found.text


def _update_item(backend: DynamoDBBackend, table_name: str, *args: Any, **kwargs: Any) -> Any:
    try:
        return _saved[0](backend, table_name, *args, **kwargs)
    finally:
        table = backend.tables.get(table_name)
        if table is not None:
            table.__dict__[_GENERATION] = next(_generations)


def install() -> None:
    """Idempotent (called with moto_speedups' lock held)."""
    if not _saved:
        _epoch[0] += 1
        _saved.append(DynamoDBBackend.update_item)
        DynamoDBBackend.update_item = _update_item  # type: ignore[method-assign,assignment]


def uninstall() -> None:
    """Idempotent; texts left on items are ignored after a later install."""
    if _saved:
        DynamoDBBackend.update_item = _saved.pop()  # type: ignore[method-assign]
