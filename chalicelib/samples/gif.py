"""A small GIF89a encoder (palette images, LZW-compressed, optionally animated) for the sample dataset's one GIF.

lakeFS's sample images include a GIF next to the PNGs, and tools list and fetch both; generating it keeps the
dataset free of shipped assets, as png.py does for the PNGs.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

Colour = tuple[int, int, int]
_MAX_CODES = 4096  # GIF's LZW codes are at most 12 bits


class _BitWriter:
    """Packs variable-width codes least significant bit first, as GIF's LZW stream wants them."""

    def __init__(self) -> None:
        self.out = bytearray()
        self._bits = 0
        self._count = 0

    def write(self, code: int, width: int) -> None:
        self._bits |= code << self._count
        self._count += width
        while self._count >= 8:
            self.out.append(self._bits & 0xFF)
            self._bits >>= 8
            self._count -= 8

    def finish(self) -> bytes:
        if self._count:
            self.out.append(self._bits & 0xFF)
        return bytes(self.out)


def lzw(indices: bytes, min_code_size: int) -> bytes:
    """The LZW code stream of ``indices`` (palette indices below ``2 ** min_code_size``), without sub-blocks."""
    clear, end = 1 << min_code_size, (1 << min_code_size) + 1
    writer = _BitWriter()
    width = min_code_size + 1
    table: dict[tuple[int, int], int] = {}
    next_code = end + 1
    writer.write(clear, width)
    if not indices:
        writer.write(end, width)
        return writer.finish()
    prefix = indices[0]
    for index in indices[1:]:
        key = (prefix, index)
        known = table.get(key)
        if known is not None:
            prefix = known
            continue
        writer.write(prefix, width)
        prefix = index
        table[key] = next_code
        next_code += 1
        # The decoder adds its entries one code later than this encoder, so it widens one code later too.
        if next_code - 1 == 1 << width and width < 12:
            width += 1
        elif next_code == _MAX_CODES:
            writer.write(clear, width)
            table.clear()
            next_code = end + 1
            width = min_code_size + 1
    writer.write(prefix, width)
    writer.write(end, width)
    return writer.finish()


def _sub_blocks(data: bytes) -> bytes:
    blocks = bytearray()
    for at in range(0, len(data), 255):
        chunk = data[at : at + 255]
        blocks += bytes((len(chunk),)) + chunk
    return bytes(blocks + b"\x00")


def encode(width: int, height: int, palette: Sequence[Colour], frames: Sequence[bytes], delay_cs: int = 10) -> bytes:
    """A GIF of ``frames`` (each ``width * height`` palette indices, row by row), looping forever when there is
    more than one frame, each shown ``delay_cs`` hundredths of a second."""
    if not 0 < width < 65536 or not 0 < height < 65536:
        raise ValueError("a GIF needs a width and height from 1 to 65535")
    if not 2 <= len(palette) <= 256:
        raise ValueError("a GIF palette has 2 to 256 colours")
    if not frames or any(len(frame) != width * height for frame in frames):
        raise ValueError("every frame needs exactly width * height palette indices")
    bits = max(1, (len(palette) - 1).bit_length())
    table = bytearray()
    for colour in [*palette, *[(0, 0, 0)] * ((1 << bits) - len(palette))]:
        table += bytes(c & 0xFF for c in colour)
    out = bytearray(b"GIF89a")
    out += struct.pack("<HHBBB", width, height, 0x80 | ((bits - 1) << 4) | (bits - 1), 0, 0)
    out += table
    if len(frames) > 1:
        # NETSCAPE2.0 application extension: loop count 0, i.e. forever.
        out += b"\x21\xff\x0bNETSCAPE2.0\x03\x01\x00\x00\x00"
    min_code_size = max(2, bits)
    for frame in frames:
        if max(frame) >= len(palette):
            raise ValueError("a frame uses an index outside the palette")
        out += struct.pack("<BBBBHBB", 0x21, 0xF9, 4, 0x04, delay_cs, 0, 0)  # graphic control: keep, delay
        out += struct.pack("<BHHHHB", 0x2C, 0, 0, width, height, 0)  # image descriptor, no local palette
        out += bytes((min_code_size,)) + _sub_blocks(lzw(frame, min_code_size))
    return bytes(out + b"\x3b")
