"""The HTTP Range header of an object read: one byte range, as lakeFS supports it."""

from __future__ import annotations

import re

from chalicelib.graveler import errors

from .errors import UnsatisfiableRange

_RANGE = re.compile(r"\s*bytes\s*=\s*([0-9]*)\s*-\s*([0-9]*)\s*", re.IGNORECASE)


def parse_range(header: str | None, size: int) -> tuple[int, int] | None:
    """The inclusive byte range [start, end] within an object of ``size`` bytes; None without a header.

    Raises Invalid (400) for a malformed or multi-range header and UnsatisfiableRange (416) for a range that
    starts at or beyond the end of the object (a suffix range of 0 bytes, or any range of an empty object).
    """
    if header is None or not header.strip():
        return None
    match = _RANGE.fullmatch(header)
    if match is None or not (match[1] or match[2]):
        raise errors.Invalid(f"unsupported Range header {header!r}: expected a single bytes=start-end range")
    first, last = match[1], match[2]
    if first:
        start = int(first)
        end = int(last) if last else size - 1
        if last and end < start:
            raise errors.Invalid(f"invalid Range header {header!r}: end before start")
        if start >= size:
            raise UnsatisfiableRange(f"range {header!r} is beyond the object size {size}", size)
        return start, min(end, size - 1)
    suffix = int(last)
    if suffix == 0 or size == 0:
        raise UnsatisfiableRange(f"range {header!r} is not satisfiable for an object of {size} bytes", size)
    return max(0, size - suffix), size - 1
