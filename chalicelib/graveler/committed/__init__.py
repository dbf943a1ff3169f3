"""Committed data, internal to graveler: ranges and metaranges stored as Parquet, content-addressed, with
content-defined boundaries. Nothing outside graveler imports this package (the layering test enforces it); the
API, the gateway and GC reach committed data through the engine's use cases.

Layout: ``arrow`` (pyarrow, imported on first use), ``format`` (the Parquet schemas), ``columns`` (decoded ranges
kept as Arrow arrays, rewritten by slices), ``ids`` (content hashes), ``storage`` and ``cache`` (addresses under
``_lakefs/`` and the LRU of decoded objects), ``fnv`` and ``writer`` (content-defined cutting on the keys' stored
hashes), ``apply`` (base + staged changes, reusing untouched ranges by reference), ``cursor``, ``diff`` and
``compare`` (walks of two or three trees that skip shared ranges), ``merge`` and ``mergetable`` (the three-way merge
and its decision table), ``params`` and ``manager`` (the API the rest of graveler calls).
"""

from .apply import ApplyResult
from .manager import CommittedManager
from .params import RangeParams

__all__ = [
    "ApplyResult",
    "CommittedManager",
    "RangeParams",
    "apply",
    "arrow",
    "compare",
    "merge",
    "mergetable",
    "params",
    "storage",
    "writer",
]
