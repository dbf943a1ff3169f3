"""The knobs of range splitting, shared by the writer and the apply algorithm."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["RangeParams"]


@dataclass(frozen=True, slots=True)
class RangeParams:
    """How ranges are cut. Every writer of one repository must use the same values, or boundaries drift and
    fewer ranges are shared between commits (the data stays correct either way).

    A range closes after a record when its estimated size reaches ``max_range_bytes``, or when
    fnv1a-64(key) % ``raggedness`` == 0 and its estimated size reaches ``min_range_bytes``.
    """

    max_range_bytes: int = 8 * 1024 * 1024
    min_range_bytes: int = 64 * 1024
    raggedness: int = 10_000

    def __post_init__(self) -> None:
        if self.raggedness < 1:
            raise ValueError(f"raggedness must be >= 1, got {self.raggedness}")
        if self.min_range_bytes < 0 or self.max_range_bytes < 1:
            raise ValueError("range sizes must be positive")
        if self.min_range_bytes > self.max_range_bytes:
            raise ValueError(f"min_range_bytes {self.min_range_bytes} > max_range_bytes {self.max_range_bytes}")
