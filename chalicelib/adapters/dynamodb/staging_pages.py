"""One staging partition's rows in key order, read page by page: by Query, or, where the process holds the table
(a PartitionReader: the embedded stack), straight from it. Rows are decoded from DynamoDB's JSON (rows.py) without
PynamoDB's model layer, either way."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from chalicelib.graveler.records import StagedEntry

from .ports import PartitionReader
from .rows import staged_item
from .translate import storage_errors

__all__ = ["partition_rows"]


def partition_rows(
    model: Any, reader: PartitionReader | None, partition: str, from_key: str, first: int, page_size: int
) -> Iterator[StagedEntry]:
    """The rows of ``partition`` (of the staging table ``model``) with key >= ``from_key``, fetched lazily: ``first``
    rows at first (most readers stop early), then ``page_size`` at a time."""
    limit = first
    after: str | None = None
    while reader is not None:
        page = reader.read(model.Meta.table_name, partition, from_key, after, limit, staged_item)
        if page is None:
            break  # the Query below goes on after the last key read
        rows, more = page
        yield from rows
        if not more or not rows:
            return
        after, limit = str(rows[-1].key), page_size
    # A key attribute is never "", so every key is >= "" and the condition can be left out.
    condition = model.key >= from_key if from_key else None
    connection = model._get_connection()
    start: dict[str, object] | None = (
        None if after is None else {"staging_token": {"S": partition}, "key": {"S": after}}
    )
    while True:
        with storage_errors():
            answer = connection.query(
                partition, range_key_condition=condition, consistent_read=True, limit=limit, exclusive_start_key=start
            )
        for item in answer.get("Items", ()):
            yield staged_item(item)
        start = answer.get("LastEvaluatedKey")
        if not start:
            return
        limit = page_size  # the first page is in: the queries that follow fetch full pages
