"""Whether garbage collection deleted an object's data: what lets every read mode answer 410 Gone.

A presigned read hands out a URL without touching the data, and a HEAD reads none either, so neither would notice
that GC swept the object (the client would get S3's own 404 from the URL). Checking the data on every read would
cost an S3 HEAD per read; instead the check is confined to the objects GC can have deleted at all:

- GC only deletes under ``<namespace>/data/``, and only objects last modified before its run's cutoff (the
  prepare time minus the minimum age). A data address is ``data/<partition>/<id>``, the partition an hourly
  countdown of when the address was made, which is before its data landed (addressing.py).
- Before the sweep deletes anything, the GC job (emr/lakelet_gc/sweep.py) records the run under
  ``<namespace>/_lakefs/retention/gc/sweeps/partition=<P>/run_id=<id>.json``, where P is the partition of the
  cutoff plus an hour (a margin for clocks). The newest cutoff has the smallest P, so the first key of one LIST
  of ``sweeps/`` is the horizon: an address in a partition sorting before it is younger than every cutoff and
  cannot have been collected. No record (a namespace GC never swept): nothing can have been.
- Only an address at or past the horizon costs a check: an S3 HEAD of the address itself, exact whatever deleted
  the data.

The horizon is cached per namespace for ``ttl_seconds``; the job waits longer than that between writing the
record and deleting, so no container can still be trusting an older horizon when data starts to disappear.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable

from ..ports import BlockStore
from ..storage.caches import TTLCache
from ..writes.addressing import metadata_address

__all__ = ["CollectedCheck"]

DEFAULT_TTL_SECONDS = 5.0
SWEEPS_DIRECTORY = "retention/gc/sweeps"
# partition=<11 hex digits>/run_id=<id>.json, the layout emr/lakelet_gc/sweep.py writes.
_RECORD = re.compile(r"partition=(?P<partition>[0-9a-f]{11})/")
_PARTITION = re.compile(r"[0-9a-f]{11}")


def sweeps_prefix(namespace: str) -> str:
    return metadata_address(namespace, SWEEPS_DIRECTORY) + "/"


class CollectedCheck:
    """Answers whether an address's data was collected, cheaply for the addresses GC cannot have touched."""

    def __init__(
        self,
        blocks: BlockStore,
        clock: Callable[[], float] = time.monotonic,
        ttl_seconds: float = DEFAULT_TTL_SECONDS,
    ) -> None:
        self._blocks = blocks
        self._horizons: TTLCache[str, str | None] = TTLCache(ttl_seconds, clock)

    def horizon(self, namespace: str) -> str | None:
        """The smallest partition any sweep of the namespace recorded (None: never swept), cached."""
        return self._horizons.lookup(namespace, lambda: self._read_horizon(namespace))

    def _read_horizon(self, namespace: str) -> str | None:
        prefix = sweeps_prefix(namespace)
        first = next(iter(self._blocks.list_blobs(prefix)), None)
        if first is None:
            return None
        match = _RECORD.match(first[0][len(prefix) :])
        # A record of another shape: be safe and check every data address.
        return match["partition"] if match else "0" * 11

    def may_be_collected(self, namespace: str, address: str) -> bool:
        """Whether GC can have deleted the address, from its layout and the sweep records alone."""
        data = namespace.rstrip("/") + "/data/"
        if not address.startswith(data):
            return False  # GC never deletes outside data/
        horizon = self.horizon(namespace.rstrip("/"))
        if horizon is None:
            return False
        partition = address[len(data) :].partition("/")[0]
        if not _PARTITION.fullmatch(partition):
            return True  # not a partitioned address: only the data itself can tell
        return partition >= horizon

    def is_collected(self, namespace: str, address: str) -> bool:
        return self.may_be_collected(namespace, address) and not self._blocks.exists(address)
