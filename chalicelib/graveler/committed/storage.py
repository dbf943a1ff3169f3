"""Where ranges and metaranges live: ``<namespace>/_lakefs/<id>`` through the BlockStore, with an LRU of decoded
objects in front. Only this module talks to the BlockStore on behalf of committed/."""

from __future__ import annotations

from collections.abc import Collection

from ..errors import DataMissing, ObjectNotFound, StorageError
from ..ports import BlockStore
from ..records import EMPTY_METARANGE, MetaRangeID, RangeID, RangeInfo
from ..storage.caches import LRUCache
from ..writes.addressing import metadata_address
from . import format as parquet
from .columns import MetaRange, RangeColumns
from .ids import metarange_id, range_id

__all__ = ["CommittedStorage"]


def object_address(namespace: str, object_id: str) -> str:
    return metadata_address(namespace, object_id)


class CommittedStorage:
    """Reads (cached) and writes content-addressed ranges and metaranges of any namespace."""

    def __init__(self, blocks: BlockStore, cache_size: int, cache_bytes: int) -> None:
        self._blocks = blocks
        # Keyed by address, not bare id: the same id in another namespace must still be read from there.
        # Bounded by their memory too: a range's size varies with its keys, and every commit makes new ones, so
        # a bound in entries alone let a busy stack's cache reach hundreds of MB (bench/soak.py).
        self._ranges: LRUCache[str, RangeColumns] = LRUCache(cache_size, cache_bytes, RangeColumns.memory_estimate)
        self._metaranges: LRUCache[str, MetaRange] = LRUCache(cache_size)

    @property
    def cached_range_bytes(self) -> int:
        """The estimated memory of the decoded ranges cached (RangeColumns.memory_estimate)."""
        return self._ranges.weight

    def clear_cache(self) -> None:
        """Forgets every decoded range and metarange: what a new Lambda container starts with."""
        self._ranges.clear()
        self._metaranges.clear()

    def _fetch(self, address: str, what: str) -> bytes:
        try:
            return self._blocks.get(address)
        except ObjectNotFound as e:
            # A commit points at it, and it was written before the commit: missing is lost, never "not yet".
            raise DataMissing(f"{what} missing at {address}") from e

    def range(self, namespace: str, rid: RangeID) -> RangeColumns:
        address = object_address(namespace, rid)

        def load() -> RangeColumns:
            data = self._fetch(address, "range")
            try:
                return parquet.decode_range(data)
            except StorageError:
                raise
            except Exception as e:  # pyarrow raises several unrelated types for a damaged file
                raise StorageError(f"unreadable range at {address}: {e}") from e

        return self._ranges.get_or_load(address, load)

    def metarange(self, namespace: str, mid: MetaRangeID) -> MetaRange:
        if mid == EMPTY_METARANGE:
            return MetaRange.of([])
        address = object_address(namespace, mid)

        def load() -> MetaRange:
            data = self._fetch(address, "metarange")
            try:
                return MetaRange.of(parquet.decode_metarange(data))
            except StorageError:
                raise
            except Exception as e:  # pyarrow raises several unrelated types for a damaged file
                raise StorageError(f"unreadable metarange at {address}: {e}") from e

        return self._metaranges.get_or_load(address, load)

    def write_range(self, namespace: str, columns: RangeColumns, known: Collection[RangeID] = ()) -> RangeID:
        """Stores the range and returns its id. Ids in ``known`` are already stored (same content, same id), so
        their upload is skipped."""
        rid = range_id(columns)
        if rid not in known:
            address = object_address(namespace, rid)
            self._blocks.put(address, parquet.encode_range(columns))
            if _compact(columns):
                # Just written, and the next commit that changes a key in it reads it back: kept, as a read would
                # keep it (content-addressed, never rewritten). Only a range that owns its buffers: a slice of a
                # larger one would hold all of that one's memory under its own small estimate.
                self._ranges.put(address, columns)
        return rid

    def write_metarange(self, namespace: str, ranges: list[RangeInfo]) -> MetaRangeID:
        """Stores the metarange and returns its id; no ranges is EMPTY_METARANGE, which is never stored."""
        if not ranges:
            return EMPTY_METARANGE
        mid = metarange_id(ranges)
        address = object_address(namespace, mid)
        if self._metaranges.get(address) is not None:
            return mid  # read or written before: stored, with these very bytes
        self._blocks.put(address, parquet.encode_metarange(ranges))
        # Just written, and typically read right back (listing the new commit): worth keeping, it is small.
        self._metaranges.put(address, MetaRange.of(list(ranges)))
        return mid


def _compact(columns: RangeColumns) -> bool:
    """The range's buffers are (about) its own bytes: not a slice holding a larger range's buffers."""
    held: int = columns.table.get_total_buffer_size()
    own: int = columns.table.nbytes + 64 * columns.table.num_columns
    return held <= own
