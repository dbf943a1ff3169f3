"""The sample dataset: lakeFS's layout (what lakefs-spec's suite lists and sizes), determinism, and every file
decodable by a reader written here, independently of the writers (png.py, gif.py)."""

from __future__ import annotations

import io
import random
import re
import struct
import zlib

import pyarrow.parquet as pq
import pytest

from chalicelib.samples import SAMPLE_COMMIT_MESSAGE, gif, sample_objects
from chalicelib.samples.pictures import DEPTH_MAPS, deepest_lakes
from chalicelib.samples.table import COLUMNS, ROWS, lake_rows

KIB, MIB = 1024, 1024 * 1024


@pytest.fixture(scope="module")
def by_path() -> dict[str, bytes]:
    return {o.path: o.data for o in sample_objects("quickstart")}


def test_layout_is_lakefs_quickstart_layout() -> None:
    objects = sample_objects("quickstart")
    paths = [o.path for o in objects]
    assert paths == sorted(paths) and SAMPLE_COMMIT_MESSAGE == "Add sample data"
    assert {p for p in paths if "/" not in p} == {"README.md", "lakes.parquet"}
    assert [p for p in paths if p.startswith("data/")] == ["data/lakes.source.md"]
    images = [p for p in paths if p.startswith("images/")]
    assert len(images) == 29 and len(paths) == 32
    assert [p for p in images if "/" in p.removeprefix("images/")] == []  # walk("images/") finds no sub-folders
    assert sum(p.endswith(".png") for p in images) == 28 and sum(p.endswith(".gif") for p in images) == 1
    sizes = {o.path: len(o.data) for o in objects}
    assert sizes["lakes.parquet"] >= 512 * KIB
    assert sum(sizes.values()) > MIB
    types = {o.path: o.content_type for o in objects}
    assert {types[p] for p in images if p.endswith(".png")} == {"image/png"}
    assert types["images/ripples.gif"] == "image/gif"
    assert types["README.md"] == types["data/lakes.source.md"] == "text/markdown"


def test_dataset_is_deterministic_and_only_the_readme_names_the_repository() -> None:
    first, second = sample_objects("quickstart"), sample_objects("other")
    assert [(o.path, o.data) for o in first if o.path != "README.md"] == [
        (o.path, o.data) for o in second if o.path != "README.md"
    ]
    readmes = [o.data for o in (*first, *second) if o.path == "README.md"]
    assert b'lakefs.repository("quickstart")' in readmes[0] and b'lakefs.repository("other")' in readmes[1]


def test_table_has_every_row_and_column(by_path: dict[str, bytes]) -> None:
    table = pq.read_table(io.BytesIO(by_path["lakes.parquet"]))
    assert table.column_names == list(COLUMNS) and table.num_rows == ROWS
    rows = table.to_pylist()
    assert rows == list(lake_rows())
    assert [r["lake_id"] for r in rows] == list(range(1, ROWS + 1))
    assert all(-90 <= r["latitude"] <= 90 and -180 <= r["longitude"] <= 180 and r["area_km2"] > 0 for r in rows)
    assert len({r["country"] for r in rows}) == 14 and len({r["kind"] for r in rows}) == 4


def test_readme_is_a_quickstart_with_a_table_and_code(by_path: dict[str, bytes]) -> None:
    text = by_path["README.md"].decode()
    assert text.startswith("# Quickstart: quickstart\n")
    table = re.findall(r"^\| `([^`]+)` \|", text, re.MULTILINE)
    assert table == ["lakes.parquet", "data/lakes.source.md", "images/", "README.md"]
    assert "| --- | --- |" in text and text.count("```python\n") == 1
    assert f"{ROWS:,} lakes" in text and "29 pictures" in text
    source = by_path["data/lakes.source.md"].decode()
    assert all(f"`{column}`" in source for column in COLUMNS)


def _decode_png(data: bytes) -> tuple[int, int, list[bytes]]:
    """Width, height and RGB pixels of an 8-bit RGB PNG without filters, checking every chunk's CRC."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    chunks: dict[bytes, bytes] = {}
    at = 8
    while at < len(data):
        (length,) = struct.unpack(">I", data[at : at + 4])
        kind, body = data[at + 4 : at + 8], data[at + 8 : at + 8 + length]
        assert struct.unpack(">I", data[at + 8 + length : at + 12 + length])[0] == zlib.crc32(kind + body)
        chunks[kind] = chunks.get(kind, b"") + body
        at += 12 + length
    width, height, depth, colour = struct.unpack(">IIBB", chunks[b"IHDR"][:10])
    assert (depth, colour) == (8, 2) and b"IEND" in chunks
    raw = zlib.decompress(chunks[b"IDAT"])
    stride = 1 + 3 * width
    assert len(raw) == height * stride
    rows = [raw[y * stride + 1 : (y + 1) * stride] for y in range(height)]
    return width, height, [row[x : x + 3] for row in rows for x in range(0, len(row), 3)]


def test_every_png_decodes_to_a_real_picture(by_path: dict[str, bytes]) -> None:
    pngs = {p: d for p, d in by_path.items() if p.endswith(".png")}
    assert len(pngs) == 28
    for path, data in pngs.items():
        width, height, pixels = _decode_png(data)
        assert width >= 64 and height >= 64 and len(set(pixels)) > 16, path
    # Different pictures, not one picture 28 times.
    assert len({_decode_png(d)[2][len(_decode_png(d)[2]) // 2 :: 97].__repr__() for d in pngs.values()}) == 28


def test_depth_maps_are_the_deepest_lakes_of_the_table(by_path: dict[str, bytes]) -> None:
    rows = lake_rows()
    deepest = deepest_lakes(rows)
    assert len(deepest) == DEPTH_MAPS
    threshold = min(r["max_depth_m"] for r in deepest)
    assert sum(r["max_depth_m"] > threshold for r in rows) == DEPTH_MAPS - 1
    assert {p for p in by_path if p.startswith("images/depth-")} == {
        f"images/depth-lake-{r['lake_id']}.png" for r in deepest
    }


def _gif_frames(data: bytes) -> tuple[int, int, list[tuple[int, int, int]], list[bytes]]:
    """Width, height, palette and the frames' palette indices of a GIF without local palettes."""
    assert data[:6] == b"GIF89a" and data[-1:] == b"\x3b"
    width, height, flags = struct.unpack("<HHB", data[6:11])
    assert flags & 0x80
    size = 2 << (flags & 7)
    palette = [tuple(data[13 + 3 * i : 16 + 3 * i]) for i in range(size)]
    at, frames = 13 + 3 * size, []
    while data[at] != 0x3B:
        if data[at] == 0x21:  # extension: skip its sub-blocks
            at += 2
            while data[at]:
                at += data[at] + 1
            at += 1
            continue
        assert data[at] == 0x2C
        assert struct.unpack("<HHHHB", data[at + 1 : at + 10]) == (0, 0, width, height, 0)
        min_code_size, at = data[at + 10], at + 11
        stream = bytearray()
        while data[at]:
            stream += data[at + 1 : at + 1 + data[at]]
            at += data[at] + 1
        at += 1
        frames.append(_lzw_decode(bytes(stream), min_code_size))
    return width, height, palette, frames


def _lzw_decode(stream: bytes, min_code_size: int) -> bytes:
    """GIF's LZW, decoded as the GIF89a specification's appendix describes it."""
    clear, end = 1 << min_code_size, (1 << min_code_size) + 1
    bits = int.from_bytes(stream, "little")
    at, total = 0, len(stream) * 8
    out = bytearray()
    table: list[bytes] = []
    width, previous = min_code_size + 1, b""
    while at + width <= total:
        code = (bits >> at) & ((1 << width) - 1)
        at += width
        if code == clear:
            table = [bytes((i,)) for i in range(clear)] + [b"", b""]
            width, previous = min_code_size + 1, b""
            continue
        if code == end:
            return bytes(out)
        if code < len(table):
            entry = table[code]
        else:
            assert code == len(table) and previous, "a code the encoder could not have made"
            entry = previous + previous[:1]
        if previous and len(table) < 4096:
            table.append(previous + entry[:1])
            if len(table) == 1 << width and width < 12:
                width += 1
        out += entry
        previous = entry
    raise AssertionError("no end code")


def test_the_gif_is_an_animation_a_reader_decodes(by_path: dict[str, bytes]) -> None:
    width, height, palette, frames = _gif_frames(by_path["images/ripples.gif"])
    assert (width, height) == (80, 80) and len(palette) == 32 and len(frames) == 10
    assert all(len(frame) == width * height and max(frame) < 32 for frame in frames)
    assert len(set(frames)) == len(frames)  # the rings move
    assert b"NETSCAPE2.0" in by_path["images/ripples.gif"]  # loops


@pytest.mark.parametrize("length", [0, 1, 2, 300, 70_000])
def test_lzw_round_trips_through_an_independent_decoder(length: int) -> None:
    # 70,000 random indices fill the 4,096-code table many times over: clear codes and every code width occur.
    rng = random.Random(length)
    for colours in (2, 4, 16, 256):
        indices = bytes(rng.randrange(colours) for _ in range(length))
        min_code_size = max(2, (colours - 1).bit_length())
        assert _lzw_decode(gif.lzw(indices, min_code_size), min_code_size) == indices


def test_gif_encoder_refuses_frames_that_do_not_fit() -> None:
    palette = [(0, 0, 0), (255, 255, 255)]
    with pytest.raises(ValueError, match="width \\* height"):
        gif.encode(2, 2, palette, [b"\x00\x01\x00"])
    with pytest.raises(ValueError, match="outside the palette"):
        gif.encode(1, 1, palette, [b"\x02"])
    with pytest.raises(ValueError, match="palette"):
        gif.encode(1, 1, [(0, 0, 0)], [b"\x00"])
    one = _gif_frames(gif.encode(2, 1, palette, [b"\x01\x00"]))
    assert one[3] == [b"\x01\x00"] and b"NETSCAPE2.0" not in gif.encode(2, 1, palette, [b"\x01\x00"])
