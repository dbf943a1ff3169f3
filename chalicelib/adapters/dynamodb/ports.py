"""The port of the DynamoDB adapters: reading a partition without a Query, where the process holds the table."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

__all__ = ["PartitionReader"]


class PartitionReader(Protocol):
    """Reads one partition of a table (string hash and sort keys) in sort-key order, without a Query: what a
    process that holds the table itself can do (the embedded stack, over its moto: lakelet/stack/moto_partitions.py).

    ``read`` answers the items whose sort key is >= ``from_key`` and, when ``after`` is given, > ``after``, at most
    ``limit`` of them, each as ``decode`` makes it of DynamoDB's JSON of the item (what a strongly consistent
    Query's page holds), and whether more may follow. One call's items are one consistent view of the partition,
    as one page of a Query is. None: the table cannot be read this way now (a missing table, another key schema);
    the caller queries. ``decode`` must be pure and its rows immutable: the reader may keep a row and answer it
    again, for the same ``decode``, while its item is unchanged."""

    def expect(self, table: str, decode: Callable[[dict[str, Any]], Any]) -> None:
        """The items of ``table`` will be read with ``decode``: the reader may decode each as it is written, so a
        read answers rows made ahead of it."""

    def count(self, table: str, partition: str) -> int | None:
        """How many items the partition holds now; None: the caller queries."""

    def read[Row](
        self,
        table: str,
        partition: str,
        from_key: str,
        after: str | None,
        limit: int,
        decode: Callable[[dict[str, Any]], Row],
    ) -> tuple[list[Row], bool] | None: ...
