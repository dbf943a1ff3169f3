"""The catalog's Avro container reader (chalicelib/iceberg/avro.py): what a purge needs of Iceberg's manifests, and
a 400 (never a 500) for anything else. Files are built here byte by byte, after the Avro specification."""

from __future__ import annotations

import json
import zlib

import pytest

from chalicelib.iceberg.avro import MAX_BLOCK_BYTES, records
from chalicelib.iceberg.errors import BadRequest

SYNC = bytes(range(16))
SCHEMA = {
    "type": "record",
    "name": "manifest_entry",
    "fields": [
        {"name": "status", "type": "int"},
        {"name": "snapshot_id", "type": ["null", "long"]},
        {
            "name": "data_file",
            "type": {
                "type": "record",
                "name": "r2",
                "fields": [
                    {"name": "file_path", "type": "string"},
                    {"name": "content", "type": {"type": "enum", "name": "c", "symbols": ["DATA", "DELETES"]}},
                    {"name": "sizes", "type": ["null", {"type": "array", "items": "long"}]},
                    {"name": "bounds", "type": {"type": "map", "values": "bytes"}},
                    {"name": "key", "type": {"type": "fixed", "name": "k", "size": 2}},
                    {"name": "ratio", "type": "double"},
                    {"name": "flag", "type": "boolean"},
                ],
            },
        },
        {"name": "again", "type": ["null", "r2"]},
    ],
}


def long(value: int) -> bytes:
    zigzag = (value << 1) ^ (value >> 63)
    out = bytearray()
    while True:
        byte = zigzag & 0x7F
        zigzag >>= 7
        if zigzag:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def text(value: str | bytes) -> bytes:
    data = value.encode() if isinstance(value, str) else value
    return long(len(data)) + data


def entry(path: str) -> bytes:
    data_file = (
        text(path)
        + long(1)  # DELETES
        + long(1)
        + long(-2)  # an array block with its byte size
        + long(3)
        + long(10)
        + long(20)
        + long(1)
        + long(5)
        + long(0)
        + long(1)
        + text("k")
        + text(b"\x00\x01")
        + long(0)
        + b"ok"
        + b"\x00\x00\x00\x00\x00\x00\xf8\x3f"
        + b"\x01"
    )
    return long(1) + long(1) + long(42) + data_file + long(0)


def container(blocks: list[list[bytes]], codec: str = "null", schema: object = SCHEMA) -> bytes:
    header = {"avro.schema": json.dumps(schema).encode(), "avro.codec": codec.encode()}
    out = b"Obj\x01" + long(len(header)) + b"".join(text(k) + text(v) for k, v in header.items()) + long(0) + SYNC
    for block in blocks:
        data = b"".join(block)
        if codec == "deflate":
            compressor = zlib.compressobj(wbits=-15)
            data = compressor.compress(data) + compressor.flush()
        out += long(len(block)) + long(len(data)) + data + SYNC
    return out


@pytest.mark.parametrize("codec", ["null", "deflate"])
def test_records_are_decoded_by_the_writers_schema(codec: str) -> None:
    data = container([[entry("s3://r/main/a.parquet"), entry("s3://r/main/b.parquet")], [entry("c")]], codec)
    found = list(records(data, "m.avro"))
    assert [r["data_file"]["file_path"] for r in found] == ["s3://r/main/a.parquet", "s3://r/main/b.parquet", "c"]
    first = found[0]
    assert first["status"] == 1 and first["snapshot_id"] == 42 and first["again"] is None
    assert first["data_file"]["content"] == "DELETES"
    assert first["data_file"]["sizes"] == [10, 20, 5]
    assert first["data_file"]["bounds"] == {"k": b"\x00\x01"}
    assert first["data_file"]["key"] == b"ok" and first["data_file"]["ratio"] == 1.5 and first["data_file"]["flag"]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"PAR1....", "not an Avro"),
        (container([[entry("a")]], "snappy"), "codec 'snappy'"),
        (container([[entry("a")]])[:-20], "truncated"),
        (container([[entry("a")]]).replace(SYNC, b"x" * 16, 2)[:-16] + SYNC, "sync marker"),
        (container([[entry("a")]], schema={"type": "nope"}), "unknown Avro type"),
        (container([[long(2**40)]], schema={"type": "array", "items": "int"}), "block count"),
        (container([[b"\xff" * 11]], schema="long"), "varint"),
    ],
)
def test_anything_else_is_a_bad_request(data: bytes, message: str) -> None:
    with pytest.raises(BadRequest, match=message):
        list(records(data, "m.avro"))


def test_a_schema_nested_too_deeply_is_a_bad_request() -> None:
    schema: object = "int"
    for _ in range(100):
        schema = {"type": "array", "items": schema}
    data = container([[long(1) * 100 + long(7) + long(0) * 100]], schema=schema)
    with pytest.raises(BadRequest):
        list(records(data, "m.avro"))


def test_a_block_that_inflates_past_the_bound_or_claims_too_many_records_is_refused() -> None:
    compressor = zlib.compressobj(wbits=-15)
    bomb = compressor.compress(b"\x00" * (MAX_BLOCK_BYTES + 1)) + compressor.flush()
    data = container([], "deflate") + long(1) + long(len(bomb)) + bomb + SYNC
    with pytest.raises(BadRequest, match="inflates past"):
        list(records(data, "m.avro"))
    truncated = container([], "deflate") + long(1) + long(len(bomb) // 2) + bomb[: len(bomb) // 2] + SYNC
    with pytest.raises(BadRequest, match="does not inflate"):
        list(records(truncated, "m.avro"))
    many = container([[long(0)]], schema="null")
    with pytest.raises(BadRequest, match="claims"):
        list(records(many.replace(long(1) + long(1), long(2**40) + long(1), 1), "m.avro"))
