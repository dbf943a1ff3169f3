"""The staging table's partitions read straight from this process's moto, without a Query (issue 43).

Why: a commit, a listing of uncommitted changes and a diff against staging read every staged row of a token. Over
the AWS API each row was written into a Query page's JSON by moto, framed, parsed back and lifted out of the page:
about 18 us a row of a 10,000-object commit's 30. The embedded stack holds the table in its own memory, so the
rows can be taken from it, as the Query would have answered them, for 3 to 4 us.

What stays as on AWS: writes (they still go through the API, the journal and the table-writes witness), every
other read, and the decoding of a row (chalicelib/adapters/dynamodb/rows.py gets the same DynamoDB JSON of the
item). Deployed there is no reader and every page is a Query. The StagingStore contract suite
(tests/contract) runs the store with this reader over moto too, beside the Query one.

What a read does: under the lock moto_speedups' hooks write a table's sorted keys under (so no put or delete lands
half-way), it walks the partition's sorted keys from the start key, up to the limit, and gives each item as the
caller's decoder makes it of DynamoDB's JSON: parsed from the text written at its put (lakelet/stack/moto_item_texts.py:
one string, where the item's attributes are a few dozen objects spread over memory), else written from its
attributes. The row decoded from an item's text is kept beside the text, and answered again (to the same decoder)
while the text is valid: a staged row is written once and read by every commit, listing and diff of its token, and
parsing and decoding it was about 10 of a read's 12 us a row (10,000 rows, each read again: 12.5 -> ~3 us a row).

It answers None (the store then queries) when it is not sure to answer what a Query would: the speedups not
installed, no such table in this account and region, another key schema, a value other than a string, number,
boolean or null (a binary value, a set, a list, a map).
"""

from __future__ import annotations

import bisect
import os
from collections.abc import Callable
from typing import Any

import orjson
from moto.dynamodb.models import dynamodb_backends
from moto.dynamodb.models.dynamo_type import DynamoType

from lakelet.stack import moto_item_texts, moto_speedups


class MotoPartitions:
    """A PartitionReader (chalicelib/adapters/dynamodb/ports.py) over this process's moto, for the tables of
    ``region`` in the account moto gives ``access_key_id`` (as moto's own handler finds it)."""

    def __init__(self, region: str, access_key_id: str) -> None:
        self._region = region
        self._access_key_id = access_key_id
        self._account: str | None = None
        #: Called with the table's name for each page answered (the bench counts each as the Query it stands for).
        self.on_page: Callable[[str], None] | None = None

    def expect(self, table: str, decode: Callable[[dict[str, Any]], Any]) -> None:
        moto_item_texts.decode_at_put(table, decode)

    def count(self, table: str, partition: str) -> int | None:
        found = self._table(table)
        if found is None:
            return None
        with moto_speedups.cache_of(found).lock:
            held = len(_items(found, partition))
        if self.on_page is not None:
            self.on_page(table)
        return held

    def read[Row](
        self,
        table: str,
        partition: str,
        from_key: str,
        after: str | None,
        limit: int,
        decode: Callable[[dict[str, Any]], Row],
    ) -> tuple[list[Row], bool] | None:
        found = self._table(table) if limit >= 1 else None
        if found is None:
            return None
        cache = moto_speedups.cache_of(found)
        with cache.lock:
            page = _walk(found, cache, partition, from_key, after, limit, decode)
        if page is None:
            return None
        if self.on_page is not None:
            self.on_page(table)
        return page

    def _table(self, name: str) -> Any:
        """moto's table of that name, when the speedups are installed and its keys are strings; else None."""
        if not moto_speedups.installed():
            return None
        found = dynamodb_backends[self._account_id()][self._region].tables.get(name)
        if found is None or found.range_key_attr is None or found.hash_key_type != "S" or found.range_key_type != "S":
            return None
        return found

    def _account_id(self) -> str:
        if self._account is None:
            from moto.iam.models import get_account_id_from

            self._account = os.environ.get("MOTO_ACCOUNT_ID") or get_account_id_from(self._access_key_id)
        return self._account


def _items(table: Any, partition: str) -> Any:
    """The partition's items by sort key (empty when it has none; .get: moto's defaultdict must not grow one)."""
    return table.items.get(DynamoType({"S": partition})) or {}


def _walk[Row](
    table: Any,
    cache: Any,
    partition: str,
    from_key: str,
    after: str | None,
    limit: int,
    decode: Callable[[dict[str, Any]], Row],
) -> tuple[list[Row], bool] | None:
    """The page (called with the table's cache lock held); None at an item with an attribute this does not write."""
    items = _items(table, partition)
    if not items:
        return [], False
    entry = moto_speedups.sorted_keys(cache, partition, items)
    keys, probes = entry.keys, entry.probes
    position = bisect.bisect_left(keys, from_key)
    if after is not None:
        position = max(position, bisect.bisect_right(keys, after))
    page: list[Row] = []
    while position < len(keys):
        if len(page) == limit:
            return page, True
        key = keys[position]
        position += 1
        item = items.get(probes.get(key) or DynamoType({"S": key}))
        if item is None:
            continue  # a dead key
        known = moto_item_texts.valid(table, item)
        if known is None:
            written = moto_item_texts.plain_json(item.attrs)
            if written is None:
                return None  # the read is left to a Query
            page.append(decode(written))
            continue
        decoded = known.decoded
        if decoded is None or decoded[0] is not decode:
            decoded = known.decoded = (decode, decode(orjson.loads(known.text)))
        page.append(decoded[1])
    return page, False
