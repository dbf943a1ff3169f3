"""Each stored DynamoDB item's JSON text, written when moto stores the item and reused by the Query pages that
carry it (installed with lakelet/stack/moto_speedups.py; issue 43).

Why: committing 10,000 staged objects in ``lakelet up`` read them in about 20 us an item, and writing each item's
JSON text for the page (moto_answers.map_text) was about 5 us of it, paid again at every read. An item is written
once and read by every commit, listing and diff of its staging area: here its text is written at the put (a few
us of an upload's milliseconds) and a Query page takes it as it is. For a table whose reader said how its rows are
decoded (moto_partitions.MotoPartitions.expect: the staging table), the row is decoded at the put too, and the
reader answers it as it is: decoding 10,000 rows at the commit's first read was 10 to 20 us a row (most of it
allocations and the collections they set off), the read is 3 us a row with the rows made at their puts.

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

import orjson
from moto.dynamodb.models import DynamoDBBackend
from moto.dynamodb.models.dynamo_type import DynamoType, Item
from moto.dynamodb.models.table import Table

from lakelet.stack import moto_answers

_TEXT = "_lakelet_text"
_GENERATION = "_lakelet_in_place_generation"
# Generations handed out; next() on it is atomic, so two updates never give their table the same one.
_generations = itertools.count(1)
_saved: list[Callable[..., Any]] = []
_PLAIN_KINDS = {"S": str, "N": str, "BOOL": bool, "NULL": bool}
# Table name -> the decoder its reads use (decode_at_put).
_decoders: dict[str, Callable[[Any], Any]] = {}
# Bumped by every install: texts written under an earlier install may have missed updates made while uninstalled.
_epoch = [0]


class KnownText:
    """An item's JSON text, the attributes it was written from, and the table's generation then; and the row a
    reader's decoder last made of the text (moto_partitions.py), with that decoder."""

    __slots__ = ("attributes", "decoded", "epoch", "generation", "text")

    def __init__(self, generation: int, attributes: Any, text: str) -> None:
        self.epoch = _epoch[0]
        self.generation = generation
        self.attributes = attributes
        self.text = text
        self.decoded: tuple[Callable[[Any], Any], Any] | None = None


def decode_at_put(table_name: str, decode: Callable[[Any], Any]) -> None:
    """From now on the items put into tables named ``table_name`` are also decoded by ``decode`` (from their text's
    JSON) at their put, and the row kept beside the text for the reads that decode with it."""
    _decoders[table_name] = decode


def remember(table: Table, item: Item) -> None:
    """Writes the text of an item ``table`` has just stored (nothing for an item moto_answers leaves to moto), and
    its row when its table's items are decoded at their put."""
    generation = table.__dict__.get(_GENERATION, 0)
    attributes = item.attrs
    text = moto_answers.item_text(attributes)
    if text is None:
        return
    known = item.__dict__[_TEXT] = KnownText(generation, attributes, text)
    decode = _decoders.get(table.name)
    if decode is not None:
        # From the attributes' own values where they are plain: the row then shares moto's strings (about 600
        # bytes a staged row from the text, 320 from the values, beside the 2,850 moto holds).
        written = plain_json(attributes)
        try:
            known.decoded = (decode, decode(written if written is not None else orjson.loads(text)))
        except Exception:  # noqa: BLE001 - a row the decoder refuses is refused at its read, as the Query's would be
            return


def plain_json(attributes: Any) -> dict[str, Any] | None:
    """DynamoDB's JSON of an item whose attributes are all strings, numbers, booleans or nulls, made of their
    values (no copy); None for any other item."""
    written: dict[str, Any] = {}
    for name, value in attributes.items():
        if type(value) is not DynamoType or _PLAIN_KINDS.get(value.type) is not type(value.value):
            return None
        written[name] = {value.type: value.value}
    return written


def known(table: Table, item: Item) -> str | None:
    """The item's text written at its put, while still valid; else None."""
    found = valid(table, item)
    return None if found is None else found.text


def valid(table: Table, item: Item) -> KnownText | None:
    """What was written at the item's put, while still valid; else None."""
    found: KnownText | None = item.__dict__.get(_TEXT)
    if (
        found is None
        or found.attributes is not item.attrs
        or found.generation != table.__dict__.get(_GENERATION, 0)
        or found.epoch != _epoch[0]
    ):
        return None
    return found


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
