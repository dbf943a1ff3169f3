"""A tiny PNG encoder (8-bit RGB, no interlacing) so the sample images are generated, not shipped as assets."""

from __future__ import annotations

import struct
import zlib
from collections.abc import Callable

Pixel = tuple[int, int, int]
_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_RGB = 2  # PNG colour type: truecolour without alpha
_NO_FILTER = b"\x00"


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def encode(width: int, height: int, pixel: Callable[[int, int], Pixel]) -> bytes:
    """The PNG of a ``width`` x ``height`` image whose colour at (x, y) is ``pixel(x, y)``; same input, same bytes."""
    if width <= 0 or height <= 0:
        raise ValueError("a PNG needs a positive width and height")
    rows = bytearray()
    for y in range(height):
        rows += _NO_FILTER
        for x in range(width):
            r, g, b = pixel(x, y)
            rows += bytes((r & 0xFF, g & 0xFF, b & 0xFF))
    header = struct.pack(">IIBBBBB", width, height, 8, _RGB, 0, 0, 0)
    return _SIGNATURE + _chunk(b"IHDR", header) + _chunk(b"IDAT", zlib.compress(bytes(rows), 9)) + _chunk(b"IEND", b"")
