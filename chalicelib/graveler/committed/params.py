"""The knobs of range splitting, shared by the writer and the apply algorithm, and the range formats.

A range format names one set of knobs. A repository records the format it was created with and every writer of
its ranges cuts with that format's knobs, so a new default never changes the cuts, hence the range, metarange
and commit ids, of a repository that already exists.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import StorageError

__all__ = ["CURRENT_RANGE_FORMAT", "RANGE_FORMAT_1", "RANGE_FORMAT_2", "RangeParams", "params_for_format"]

_KiB = 1024
_MiB = 1024 * _KiB


@dataclass(frozen=True, slots=True)
class RangeParams:
    """How ranges are cut. Every writer of one repository must use the same values, or boundaries drift and
    fewer ranges are shared between commits (the data stays correct either way).

    A range closes after a record when its estimated size reaches ``max_range_bytes``, or when
    fnv1a-64(key) % ``raggedness`` == 0 and its estimated size reaches ``min_range_bytes``.
    """

    max_range_bytes: int
    min_range_bytes: int
    raggedness: int

    def __post_init__(self) -> None:
        if self.raggedness < 1:
            raise ValueError(f"raggedness must be >= 1, got {self.raggedness}")
        if self.min_range_bytes < 0 or self.max_range_bytes < 1:
            raise ValueError("range sizes must be positive")
        if self.min_range_bytes > self.max_range_bytes:
            raise ValueError(f"min_range_bytes {self.min_range_bytes} > max_range_bytes {self.max_range_bytes}")


# Repositories created before formats existed: fixed forever, their ids depend on it. Sizes after the minimum are
# about exponential (11,000 rows on average, up to 8 MiB), and a change is more likely to land in a large range.
RANGE_FORMAT_1 = RangeParams(max_range_bytes=8 * _MiB, min_range_bytes=64 * _KiB, raggedness=10_000)
# New repositories: a large minimum, a small raggedness and a tight maximum bound what one change rewrites (at
# most ~13,000 rows of the fixture, 96% of cuts still content-defined) while keeping about as many ranges as
# format 1 (docs/performance.md, "Ranges and their rewrite cost"). LAKELET_RANGE_* settings override these.
RANGE_FORMAT_2 = RangeParams(max_range_bytes=2 * _MiB + 256 * _KiB, min_range_bytes=1536 * _KiB, raggedness=1_500)
CURRENT_RANGE_FORMAT = 2


def params_for_format(range_format: int, current: RangeParams) -> RangeParams:
    """The knobs of ``range_format``: format 1's are fixed; the current format's are ``current`` (the deployment's
    settings). Raises StorageError (503) for a format this code does not know: a repository created by a newer
    release, after a rollback, whose ranges this one would cut differently."""
    if range_format == CURRENT_RANGE_FORMAT:
        return current
    if range_format == 1:
        return RANGE_FORMAT_1
    raise StorageError(f"unknown range format {range_format}: the repository was created by a newer release")
