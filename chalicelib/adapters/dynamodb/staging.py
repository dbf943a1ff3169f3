"""StagingStore on DynamoDB: one item per (staging token, key) in the staging table.

A token is one partition, so a query returns its changes in key order and pages lazily. All reads are
strongly consistent: a commit seals a token and then reads it, and must see every write acknowledged before.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from itertools import batched

from pynamodb.exceptions import DoesNotExist
from pynamodb.expressions.condition import Condition

from chalicelib.graveler import errors
from chalicelib.graveler.records import Entry, Key, StagedEntry, StagingToken

from .models import StagedRow, key_attribute_names, model_set
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


class DynamoStagingStore:
    """The StagingStore port on the staging table.

    ``iterate`` fetches ``first_page_size`` items with its first query and ``page_size`` with each later one.
    """

    def __init__(
        self,
        names: TableNames,
        region: str,
        endpoint_url: str | None = None,
        *,
        page_size: int = DEFAULT_PAGE_SIZE,
        first_page_size: int = DEFAULT_FIRST_PAGE_SIZE,
    ) -> None:
        self._model = model_set(names, region, endpoint_url).staging
        self._page_size = page_size
        self._first_page_size = min(first_page_size, page_size)

    def get(self, token: StagingToken, key: Key) -> StagedEntry | None:
        with storage_errors():
            try:
                row = self._model.get(token, key, consistent_read=True)
            except DoesNotExist:
                return None
        return _staged(row)

    def set(self, token: StagingToken, staged: StagedEntry) -> StagedEntry | None:
        # PutItem's ReturnValues=ALL_OLD hands back the row it replaced in the same call (Model.save cannot ask
        # for it): a refused write puts it back (graveler/staging.py).
        row = self._row(token, staged)
        args, kwargs = row._get_save_args()
        kwargs["return_values"] = "ALL_OLD"
        with storage_errors():
            answer = row._get_connection().put_item(*args, **kwargs)
        old = answer.get("Attributes")
        return _staged(self._model.from_raw_data(old)) if old else None

    def set_if(self, token: StagingToken, staged: StagedEntry, expected: StagedEntry | None) -> bool:
        # One PutItem conditioned on the row as the caller read it: DynamoDB evaluates the condition and the write
        # as one, so of two writers expecting the same row only the first one's condition holds.
        model = self._model
        condition: Condition
        if expected is None:
            condition = model.key.does_not_exist()
        elif expected.value is None:
            condition = model.key.exists() & (model.tombstone == True)  # noqa: E712 (a condition, not a test)
        else:
            entry = expected.value
            condition = (
                model.key.exists()
                & (model.tombstone == False)  # noqa: E712
                & (model.physical_address == entry.physical_address)
                & (model.etag == entry.etag)
                & (model.size == entry.size)
                & (model.mtime == entry.mtime)
            )
        try:
            with storage_errors(on_condition_failed=lambda: errors.PreconditionFailed("staged row changed")):
                self._row(token, staged).save(condition=condition)
        except errors.PreconditionFailed:
            return False
        return True

    def get_many(self, token: StagingToken, keys: Iterable[Key]) -> dict[Key, StagedEntry]:
        wanted = list(dict.fromkeys(keys))
        with storage_errors():
            rows = self._model.batch_get([(token, key) for key in wanted], consistent_read=True)
            return {Key(row.key): _staged(row) for row in rows}

    def set_many(self, token: StagingToken, entries: Iterable[StagedEntry]) -> None:
        """Stages many changes with batch writes (25 items a request); a later change of a key wins.

        Not atomic: after a failure some of the changes may be staged, as with repeated ``set``.
        """
        # A batch must not name one key twice, so collapse repeats first (the last one wins, as with set).
        latest = {staged.key: staged for staged in entries}
        with storage_errors(), self._model.batch_write() as batch:
            for staged in latest.values():
                batch.save(self._row(token, staged))

    def delete(self, token: StagingToken, key: Key) -> None:
        with storage_errors():
            self._model(staging_token=token, key=key).delete()

    def iterate(self, token: StagingToken, from_key: str = "", first_page: int | None = None) -> Iterator[StagedEntry]:
        # A key attribute is never "", so every key is >= "" and the condition can be left out.
        condition = self._model.key >= from_key if from_key else None
        with storage_errors():
            rows = self._model.query(
                token,
                range_key_condition=condition,
                consistent_read=True,
                page_size=min(first_page or self._first_page_size, self._page_size),
            )
        for n, row in enumerate(translated(rows)):
            if n == 0:
                # The first page is in: the queries that follow (if the caller goes on) fetch full pages.
                rows.page_iter.page_size = self._page_size
            yield _staged(row)

    def drop(self, token: StagingToken) -> None:
        """Deletes the token's items: keys read page by page, deleted by DROP_WORKERS threads at once (one batch
        of 25 is a round trip, so a million items one batch after another would take many minutes)."""
        keys = key_attribute_names(self._model)
        with storage_errors():
            rows = self._model.query(token, attributes_to_get=keys, consistent_read=True, page_size=self._page_size)
            with ThreadPoolExecutor(DROP_WORKERS) as pool:
                pending: set[Future[None]] = set()
                for chunk in batched(translated(rows), DROP_CHUNK):
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
                batch.delete(self._model(staging_token=token, key=key))

    def _delete(self, rows: tuple[StagedRow, ...]) -> None:
        with self._model.batch_write() as batch:
            for row in rows:
                batch.delete(row)

    def _row(self, token: StagingToken, staged: StagedEntry) -> StagedRow:
        entry = staged.value
        if entry is None:
            return self._model(staging_token=token, key=staged.key, tombstone=True)
        return self._model(
            staging_token=token,
            key=staged.key,
            tombstone=False,
            physical_address=entry.physical_address,
            size=entry.size,
            etag=entry.etag,
            mtime=entry.mtime,
            content_type=entry.content_type,
            user_metadata=dict(entry.user_metadata),
        )


def _staged(row: StagedRow) -> StagedEntry:
    key = Key(row.key)
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
    return StagedEntry(key=key, value=entry)
