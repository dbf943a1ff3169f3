"""StagingStore on DynamoDB: one item per (staging token, key) in the staging table.

A token of one shard is one partition (its name), so a query returns its changes in key order and pages lazily; a
token of n shards (graveler/writes/staging_shards.py) is n partitions "<token>#<shard>", each a key-ordered query, and a
listing merges them. One key in 16 also has a sketch item in "<token>#k<shard>" (sort key: its sketch rank in hex,
then the key), which a commit plan samples in one bounded query per shard. Reads of changes are strongly
consistent: a commit seals a token and then reads it, and must see every write acknowledged before.
"""

from __future__ import annotations

import heapq
import itertools
import uuid
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from itertools import batched

from pynamodb.exceptions import TransactWriteError
from pynamodb.transactions import TransactWrite

from chalicelib.graveler import errors
from chalicelib.graveler.records import (
    BranchKey,
    Entry,
    Key,
    StagedEntry,
    StagedExpectation,
    StagingSample,
    StagingToken,
)
from chalicelib.graveler.writes.preconditions import check_atomic_changes
from chalicelib.graveler.writes.staging_shards import combine, per_shard_sample, shard_count, shard_of, sketch_rank

from .models import StagedRow, key_attribute_names, model_set
from .ports import PartitionReader
from .rows import KEY_ONLY, attributes, staged_item
from .staging_conditions import lost_race, row_condition
from .staging_pages import partition_rows
from .tables import TableNames
from .translate import storage_errors, translated

# One query page (DynamoDB also stops a page at 1 MB): bounds the memory an iteration holds at a time.
DEFAULT_PAGE_SIZE = 1000
# The first page of an iteration is smaller: most readers (a listing of 100, a lookup of one prefix) stop
# early, and a full page costs read capacity and latency (~1 s on moto) that they would throw away.
DEFAULT_FIRST_PAGE_SIZE = 100
# Dropping a token: how many threads delete at once, each a chunk of keys at a time (batches of 25).
DROP_WORKERS = 8
DROP_CHUNK = 250
# DynamoDB's limit on a sort key (bytes): a key too long to carry its 16-digit sketch rank stays out of the sketch.
_SORT_KEY_BYTES = 1024
_RANK_DIGITS = 16


class DynamoStagingStore:
    """The StagingStore port on the staging table.

    ``iterate`` fetches ``first_page_size`` items with its first query and ``page_size`` with each later one (a
    token of n shards: about 1/n of the first page from each shard, whose first queries go out in parallel).
    """

    def __init__(
        self,
        names: TableNames,
        region: str,
        endpoint_url: str | None = None,
        *,
        page_size: int = DEFAULT_PAGE_SIZE,
        first_page_size: int = DEFAULT_FIRST_PAGE_SIZE,
        partitions: PartitionReader | None = None,
    ) -> None:
        models = model_set(names, region, endpoint_url)
        self._model = models.staging
        # Where the process holds the table (the embedded stack), partitions are read without a Query.
        self._partitions = partitions
        self._table: str = self._model.Meta.table_name
        if partitions is not None:
            partitions.expect(self._table, staged_item)
        self._branches = models.branches
        self._page_size = page_size
        self._first_page_size = min(first_page_size, page_size)

    def get(self, token: StagingToken, key: Key) -> StagedEntry | None:
        # One GetItem, the row decoded from DynamoDB's JSON (rows.py) without PynamoDB's model layer.
        with storage_errors():
            answer = self._model._get_connection().get_item(
                _partition(token, shard_of(token, key)), key, consistent_read=True
            )
        item = answer.get("Item")
        return staged_item(item) if item else None

    def set(self, token: StagingToken, staged: StagedEntry) -> StagedEntry | None:
        self._sketch(token, staged.key)
        # PutItem's ReturnValues=ALL_OLD hands back the row it replaced in the same call (Model.save cannot ask
        # for it): a refused write puts it back (graveler/writes/staging.py). Attributes as the model writes them.
        partition, written = _partition(token, shard_of(token, staged.key)), attributes(staged.value)
        with storage_errors():
            answer = self._model._get_connection().put_item(
                partition, range_key=staged.key, attributes=written, return_values="ALL_OLD"
            )
        old = answer.get("Attributes")
        return _staged_raw(self._model, old) if old else None

    def set_if(
        self,
        token: StagingToken,
        staged: StagedEntry,
        expected: StagedExpectation,
        current_of: BranchKey | None = None,
    ) -> bool:
        if current_of is not None:
            return self.set_if_all(token, [(staged, expected)], current_of)
        self._sketch(token, staged.key)
        # One PutItem conditioned on the row as the caller read it: DynamoDB evaluates the condition and the write
        # as one, so of two writers expecting the same row only the first one's condition holds.
        try:
            with storage_errors(on_condition_failed=lambda: errors.PreconditionFailed("staged row changed")):
                self._row(token, staged).save(condition=row_condition(self._model, expected))
        except errors.PreconditionFailed:
            return False
        return True

    def set_if_all(
        self,
        token: StagingToken,
        changes: Sequence[tuple[StagedEntry, StagedExpectation]],
        current_of: BranchKey | None = None,
    ) -> bool:
        """One TransactWriteItems of a conditional put per row (the rows may sit in different shards' partitions:
        a transaction spans partitions and tables), and with ``current_of`` a ConditionCheck of the branch's item
        in the branches table (its staging_token is ``token``): a seal's swap of that item and this write are
        serialized by DynamoDB, one of them is cancelled. The sketch items go first in a batch, outside it: they
        count against neither of the transaction's limits (100 items, 4 MB), and one without its row is
        harmless."""
        check_atomic_changes(changes)
        sketches = [row for row in (self._sketch_row(token, staged.key) for staged, _ in changes) if row is not None]
        if sketches:
            with storage_errors(), self._model.batch_write() as batch:
                for row in sketches:
                    batch.save(row)
        with storage_errors():
            try:
                # The request token makes the SDK's own retries of this call idempotent: a retry after a reply
                # lost in transit answers success, not the ConditionalCheckFailed of rows already ours (which the
                # caller would take for a lost race and answer by deleting the data the rows name).
                with TransactWrite(
                    connection=self._model._get_connection().connection, client_request_token=uuid.uuid4().hex
                ) as transaction:
                    for staged, expected in changes:
                        transaction.save(self._row(token, staged), condition=row_condition(self._model, expected))
                    if current_of is not None:
                        branches = self._branches
                        transaction.condition_check(
                            branches,
                            current_of.repo_id,
                            current_of.branch_id,
                            condition=branches.staging_token == token,
                        )
            except TransactWriteError as e:
                if lost_race(e):
                    return False
                raise
        return True

    def get_many(self, token: StagingToken, keys: Iterable[Key]) -> dict[Key, StagedEntry]:
        wanted = list(dict.fromkeys(keys))
        with storage_errors():
            rows = self._model.batch_get(
                [(_partition(token, shard_of(token, key)), key) for key in wanted], consistent_read=True
            )
            return {Key(row.key): _staged(row) for row in rows}

    def set_many(self, token: StagingToken, entries: Iterable[StagedEntry]) -> None:
        """Stages many changes with batch writes (25 items a request, sketch items among them); a later change of
        a key wins. Not atomic: after a failure some of the changes may be staged, as with repeated ``set``."""
        # A batch must not name one key twice, so collapse repeats first (the last one wins, as with set).
        latest = {staged.key: staged for staged in entries}
        with storage_errors(), self._model.batch_write() as batch:
            for staged in latest.values():
                sketched = self._sketch_row(token, staged.key)
                if sketched is not None:
                    batch.save(sketched)
                batch.save(self._row(token, staged))

    def delete(self, token: StagingToken, key: Key) -> None:
        # The key's sketch item stays (one more call for a sample that may name a deleted key; drop removes it).
        with storage_errors():
            self._model(staging_token=_partition(token, shard_of(token, key)), key=key).delete()

    def iterate(self, token: StagingToken, from_key: str = "", first_page: int | None = None) -> Iterator[StagedEntry]:
        n = shard_count(token)
        if n == 1:
            yield from self._query(_partition(token, 0), from_key, first_page)
            return
        first = -(-(first_page or self._first_page_size) // n) + 1  # each shard holds about 1/n of the keys
        streams = [self._query(_partition(token, shard), from_key, first) for shard in range(n)]
        # heapq.merge would fetch the shards' first pages one after another: fetch them at once.
        with ThreadPoolExecutor(min(n, DROP_WORKERS)) as pool:
            heads = list(pool.map(lambda stream: list(itertools.islice(stream, 1)), streams))
        primed = [itertools.chain(head, stream) for head, stream in zip(heads, streams, strict=True)]
        # Each key lives in one shard only, so the merge needs no tie-break.
        yield from heapq.merge(*primed, key=lambda staged: staged.key)

    def iterate_shard(
        self, token: StagingToken, shard: int, from_key: str = "", first_page: int | None = None
    ) -> Iterator[StagedEntry]:
        return self._query(_partition(token, _checked(token, shard)), from_key, first_page)

    def _query(self, partition: str, from_key: str, first_page: int | None) -> Iterator[StagedEntry]:
        first = min(first_page or self._first_page_size, self._page_size)
        return partition_rows(self._model, self._partitions, partition, from_key, first, self._page_size)

    def count(self, token: StagingToken, up_to: int) -> int:
        """Query pages with Select=COUNT, shard by shard, until ``up_to`` rows are counted: DynamoDB reads (and
        bills) the items as a Query does, but answers only their number, so nothing is sent or decoded per row.
        A partition reader (the embedded stack) counts a shard at once."""
        connection = self._model._get_connection()
        counted = 0
        for shard in range(shard_count(token)):
            start: dict[str, object] | None = None
            held = None if self._partitions is None else self._partitions.count(self._table, _partition(token, shard))
            if held is not None:
                counted += held
                continue
            while counted < up_to:
                with storage_errors():
                    page = connection.query(
                        _partition(token, shard),
                        consistent_read=True,
                        limit=up_to - counted,
                        exclusive_start_key=start,
                        select="COUNT",
                    )
                counted += int(page.get("Count", 0))
                start = page.get("LastEvaluatedKey")
                if not start:
                    break
        return min(counted, up_to)

    def drop(self, token: StagingToken) -> None:
        """Deletes the token's items, every shard's and every sketch's (see ``drop_shard``), the shards' chunks
        interleaved so that the deletes spread over all of the token's partitions at once."""
        self._drop([*range(shard_count(token))], token)

    def drop_shard(self, token: StagingToken, shard: int) -> None:
        """Deletes one shard's items and its sketch: keys read page by page, deleted by DROP_WORKERS threads at once
        (one batch of 25 is a round trip, so a million items one batch after another would take many minutes)."""
        self._drop([_checked(token, shard)], token)

    def _drop(self, shards: list[int], token: StagingToken) -> None:
        keys = key_attribute_names(self._model)
        partitions = [p for shard in shards for p in (_partition(token, shard), _sketch_partition(token, shard))]
        with storage_errors():
            chunked = [
                batched(
                    translated(
                        self._model.query(p, attributes_to_get=keys, consistent_read=True, page_size=self._page_size)
                    ),
                    DROP_CHUNK,
                )
                for p in partitions
            ]
            with ThreadPoolExecutor(DROP_WORKERS) as pool:
                pending: set[Future[None]] = set()
                for chunk in _round_robin(chunked):
                    pending.add(pool.submit(self._delete, chunk))
                    if len(pending) >= 2 * DROP_WORKERS:  # keys held in memory stay bounded
                        done, pending = wait(pending, return_when=FIRST_COMPLETED)
                        for finished in done:
                            finished.result()
                for finished in pending:
                    finished.result()

    def delete_many(self, token: StagingToken, keys: Iterable[Key]) -> None:
        # PynamoDB's batch writer sends 25 deletes a request; deleting a missing item is not an error.
        with storage_errors(), self._model.batch_write() as batch:
            for key in dict.fromkeys(keys):  # a batch must not name one key twice
                batch.delete(self._model(staging_token=_partition(token, shard_of(token, key)), key=key))
                sketched = self._sketch_row(token, key)
                if sketched is not None:
                    batch.delete(sketched)

    def sample(self, token: StagingToken, limit: int) -> StagingSample:
        per_shard = per_shard_sample(token, limit)
        n = shard_count(token)

        def first(shard: int) -> list[tuple[int, Key]]:
            if self._partitions is not None:
                # Decoded as staged rows, as the reader decoded them at their put: a sketch item's key is its row's.
                held = self._partitions.read(
                    self._table, _sketch_partition(token, shard), "", None, per_shard, staged_item
                )
                if held is not None:
                    return [_sketched(str(row.key)) for row in held[0]]
            # Eventually consistent (half the read cost): a sample needs no write acknowledged a moment ago.
            with storage_errors():
                rows = self._model.query(
                    _sketch_partition(token, shard), limit=per_shard, page_size=per_shard, attributes_to_get=["key"]
                )
                return [_sketched(row.key) for row in translated(rows)]

        if n == 1:
            return combine([first(0)], per_shard)
        with ThreadPoolExecutor(min(n, DROP_WORKERS)) as pool:
            return combine(list(pool.map(first, range(n))), per_shard)

    def _delete(self, rows: tuple[StagedRow, ...]) -> None:
        with self._model.batch_write() as batch:
            for row in rows:
                batch.delete(row)

    def _sketch(self, token: StagingToken, key: Key) -> None:
        """Writes the key's sketch item, if it has one, before its row: a sketch item without a row is harmless."""
        sketched = _sketch_key(token, key)
        if sketched is not None:
            with storage_errors():
                self._model._get_connection().put_item(sketched[0], range_key=sketched[1], attributes=KEY_ONLY)

    def _sketch_row(self, token: StagingToken, key: Key) -> StagedRow | None:
        return None if (sketched := _sketch_key(token, key)) is None else self._model(*sketched)

    def _row(self, token: StagingToken, staged: StagedEntry) -> StagedRow:
        entry = staged.value
        partition = _partition(token, shard_of(token, staged.key))
        if entry is None:
            return self._model(staging_token=partition, key=staged.key, tombstone=True)
        return self._model(
            staging_token=partition,
            key=staged.key,
            tombstone=False,
            physical_address=entry.physical_address,
            size=entry.size,
            etag=entry.etag,
            mtime=entry.mtime,
            content_type=entry.content_type,
            user_metadata=dict(entry.user_metadata),
        )


def _partition(token: StagingToken, shard: int) -> str:
    """The partition key of a shard: the token itself for a token of one shard (as every token before sharding)."""
    return token if shard_count(token) == 1 else f"{token}#{shard}"


def _sketch_partition(token: StagingToken, shard: int) -> str:
    return f"{token}#k{shard}"


def _sketch_key(token: StagingToken, key: Key) -> tuple[str, str] | None:
    """The partition and sort key of the key's sketch item, if it has one."""
    if (rank := sketch_rank(key)) is None or len(key.encode("utf-8", "surrogatepass")) + _RANK_DIGITS > _SORT_KEY_BYTES:
        return None
    return _sketch_partition(token, shard_of(token, key)), f"{rank:0{_RANK_DIGITS}x}{key}"


def _checked(token: StagingToken, shard: int) -> int:
    if not 0 <= shard < shard_count(token):
        raise errors.Invalid(f"staging token {token} has no shard {shard}")
    return shard


def _sketched(sort_key: str) -> tuple[int, Key]:
    return int(sort_key[:_RANK_DIGITS], 16), Key(sort_key[_RANK_DIGITS:])


def _round_robin[T](streams: Sequence[Iterator[T]]) -> Iterator[T]:
    """One item of each stream in turn until all are spent."""
    live = list(streams)
    while live:
        for stream in list(live):
            item = next(stream, None)
            if item is None:
                live.remove(stream)
            else:
                yield item


def _staged_raw(model: type[StagedRow], raw: dict[str, object]) -> StagedEntry:
    return staged_item(raw)  # type: ignore[arg-type]


def _staged(row: StagedRow) -> StagedEntry:
    """The row as a staged change. A row damaged by hand (a field of the wrong type) is a StorageError naming it,
    never an unhandled error; fields a row from an older release lacks take their defaults."""
    key = Key(row.key)
    try:
        if row.tombstone:
            return StagedEntry(key=key, value=None)
        entry = Entry(
            physical_address=row.physical_address or "",
            size=int(row.size or 0),
            etag=row.etag or "",
            mtime=int(row.mtime or 0),
            content_type=row.content_type if row.content_type is not None else "application/octet-stream",
            user_metadata={str(k): str(v) for k, v in (row.user_metadata or {}).items()},
        )
    except (AttributeError, TypeError, ValueError) as e:
        raise errors.StorageError(f"the staged row of {key!r} is damaged: {e}") from e
    return StagedEntry(key=key, value=entry)
