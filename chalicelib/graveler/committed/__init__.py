"""Committed data: ranges and metaranges stored as Parquet, content-addressed, with content-defined boundaries.

Layout: ``format`` (the Parquet schemas), ``columns`` (decoded ranges kept as Arrow arrays, rewritten by slices),
``ids`` (content hashes), ``storage`` and ``cache`` (addresses under ``_lakefs/`` and the LRU of decoded
objects), ``fnv`` and ``writer`` (content-defined cutting on the keys' stored hashes), ``apply`` (base + staged changes, reusing untouched
ranges by reference), ``params`` and ``manager`` (the API the service calls).
"""

from .apply import ApplyResult
from .manager import CommittedManager
from .params import RangeParams

__all__ = ["ApplyResult", "CommittedManager", "RangeParams"]
