"""Where object data goes: ``<namespace>/data/<partition>/<id>``, partitions sorting newest first.

A partition is an hour; its name counts down as time goes on, so a lexicographic listing of ``data/`` meets the
newest objects first (GC and humans care about recent data). IDs are random: an address is never reused.
"""

from __future__ import annotations

import uuid

__all__ = [
    "metadata_address",
    "new_data_address",
]

_HOURS_CEILING = 1 << 40  # ~125 million years of hours: the countdown never goes negative


def partition_of(now: float) -> str:
    return f"{_HOURS_CEILING - int(now // 3600):011x}"


def new_data_address(namespace: str, now: float) -> str:
    return f"{namespace.rstrip('/')}/data/{partition_of(now)}/{uuid.uuid4().hex}"


def metadata_address(namespace: str, name: str) -> str:
    """A file of Lakelet's own under <namespace>/_lakefs/ (ranges, metaranges, markers); GC never touches these."""
    return f"{namespace.rstrip('/')}/_lakefs/{name}"
