"""Just enough of Avro's object container files (the Avro 1.11 specification) to read Iceberg's manifest lists and
manifests: a purge deletes the files a table's metadata names, and the manifests name the data files. Records
are decoded by the writer's schema in the file's header; blocks compressed with ``null`` or ``deflate`` (what
Iceberg writes by default, gzip being Avro's deflate) are read, any other codec is a BadRequest naming it.
Nothing here reads storage: it decodes bytes."""

from __future__ import annotations

import json
import struct
import zlib
from collections.abc import Iterator
from typing import Any

from .errors import BadRequest

__all__ = ["records"]

_MAGIC = b"Obj\x01"
_SYNC_SIZE = 16
# How deep a schema, and a value decoded by it, may nest: an Iceberg manifest nests 5 levels (entry, data file,
# partition, a map's key-value record, its value); a schema or a recursive type nested deeper is refused.
MAX_DEPTH = 64
# The most one block may inflate to: writers cut blocks at tens of kilobytes (Avro's default sync interval is 64 KB).
MAX_BLOCK_BYTES = 64 * 1024 * 1024
_PRIMITIVES = frozenset({"null", "boolean", "int", "long", "float", "double", "bytes", "string"})


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.at = 0

    def take(self, size: int) -> bytes:
        if size < 0 or self.at + size > len(self.data):
            raise BadRequest("truncated Avro data")
        chunk = self.data[self.at : self.at + size]
        self.at += size
        return chunk

    def long(self) -> int:
        value, shift = 0, 0
        while True:
            byte = self.take(1)[0]
            value |= (byte & 0x7F) << shift
            if not byte & 0x80:
                return (value >> 1) ^ -(value & 1)
            shift += 7
            if shift > 63:
                raise BadRequest("malformed Avro varint")

    def done(self) -> bool:
        return self.at >= len(self.data)


class _Decoder:
    """Decodes values of one writer's schema; named types are resolved by their full names."""

    def __init__(self) -> None:
        self.named: dict[str, Any] = {}

    def register(self, schema: Any, namespace: str = "", depth: int = 0) -> None:
        """Records every named type of ``schema`` (records, enums, fixed) under its full name."""
        _check_depth(depth)
        if isinstance(schema, list):
            for branch in schema:
                self.register(branch, namespace, depth + 1)
            return
        if not isinstance(schema, dict):
            return
        kind = schema.get("type")
        if kind in ("record", "error", "enum", "fixed"):
            name = str(schema.get("name", ""))
            space = str(schema.get("namespace", namespace))
            full = name if "." in name or not space else f"{space}.{name}"
            self.named[full] = schema
            self.named.setdefault(name, schema)
            namespace = full.rpartition(".")[0]
        if kind in ("record", "error"):
            for field in schema.get("fields") or []:
                self.register(field.get("type") if isinstance(field, dict) else None, namespace, depth + 1)
        elif kind == "array":
            self.register(schema.get("items"), namespace, depth + 1)
        elif kind == "map":
            self.register(schema.get("values"), namespace, depth + 1)
        elif isinstance(kind, (dict, list)):
            self.register(kind, namespace, depth + 1)

    def read(self, schema: Any, reader: _Reader, depth: int = 0) -> Any:
        _check_depth(depth)
        depth += 1
        if isinstance(schema, list):
            index = reader.long()
            if not 0 <= index < len(schema):
                raise BadRequest("Avro union index out of range")
            return self.read(schema[index], reader, depth)
        if isinstance(schema, str):
            if schema in _PRIMITIVES:
                return _primitive(schema, reader)
            if schema not in self.named:
                raise BadRequest(f"unknown Avro type {schema!r}")
            return self.read(self.named[schema], reader, depth)
        if not isinstance(schema, dict):
            raise BadRequest("malformed Avro schema")
        kind = schema.get("type")
        if kind in ("record", "error"):
            return {
                str(f.get("name")): self.read(f.get("type"), reader, depth)
                for f in schema.get("fields") or []
                if isinstance(f, dict)
            }
        if kind == "enum":
            symbols = schema.get("symbols") or []
            index = reader.long()
            return symbols[index] if 0 <= index < len(symbols) else None
        if kind == "fixed":
            return reader.take(int(schema.get("size", 0)))
        if kind == "array":
            return [self.read(schema.get("items"), reader, depth) for _ in _items(reader)]
        if kind == "map":
            return {
                _primitive("string", reader): self.read(schema.get("values"), reader, depth) for _ in _items(reader)
            }
        return self.read(kind, reader, depth)


def _check_depth(depth: int) -> None:
    if depth > MAX_DEPTH:
        raise BadRequest(f"an Avro schema or value nested more than {MAX_DEPTH} levels deep")


def _items(reader: _Reader) -> Iterator[None]:
    """One step per item of an array or a map, over its blocks: each block is a count (negative: followed by the
    block's size in bytes) and that many items, and a count of zero ends them. The caller reads each item."""
    while True:
        count = reader.long()
        if count == 0:
            return
        if count < 0:
            count = -count
            reader.long()
        if count > len(reader.data) - reader.at:
            raise BadRequest("malformed Avro block count")  # every item takes at least one byte but null's
        for _ in range(count):
            yield None


def _primitive(kind: str, reader: _Reader) -> Any:
    if kind == "null":
        return None
    if kind == "boolean":
        return reader.take(1) != b"\x00"
    if kind in ("int", "long"):
        return reader.long()
    if kind == "float":
        return struct.unpack("<f", reader.take(4))[0]
    if kind == "double":
        return struct.unpack("<d", reader.take(8))[0]
    data = reader.take(reader.long())
    return data.decode("utf-8", "replace") if kind == "string" else data


def _inflate(block: bytes, what: str) -> bytes:
    """A deflate block, at most MAX_BLOCK_BYTES once inflated (a small file must not inflate to gigabytes)."""
    inflater = zlib.decompressobj(-15)
    try:
        data = inflater.decompress(block, MAX_BLOCK_BYTES)
    except zlib.error:
        raise BadRequest(f"{what}: a block does not inflate") from None
    if not inflater.eof:
        if len(data) >= MAX_BLOCK_BYTES:
            raise BadRequest(f"{what}: a block inflates past {MAX_BLOCK_BYTES:,} bytes")
        raise BadRequest(f"{what}: a block does not inflate (truncated)")
    return data


def records(data: bytes, what: str) -> Iterator[dict[str, Any]]:
    """The records of an Avro object container file (``what`` names it in errors): BadRequest for anything that
    is not one, or one compressed with a codec other than null or deflate."""
    try:
        yield from _records(data, what)
    except RecursionError:
        raise BadRequest(f"{what}: its Avro schema or data nests too deeply") from None


def _records(data: bytes, what: str) -> Iterator[dict[str, Any]]:
    reader = _Reader(data)
    if reader.take(len(_MAGIC)) != _MAGIC:
        raise BadRequest(f"{what} is not an Avro object container file")
    header = _Decoder().read({"type": "map", "values": "bytes"}, reader)
    sync = reader.take(_SYNC_SIZE)
    codec = bytes(header.get("avro.codec", b"null")).decode("utf-8", "replace")
    if codec not in ("null", "deflate"):
        raise BadRequest(f"{what} is compressed with Avro codec {codec!r}: only null and deflate are read")
    try:
        schema = json.loads(bytes(header.get("avro.schema", b"")))
    except ValueError:
        raise BadRequest(f"{what} has no readable Avro schema") from None
    decoder = _Decoder()
    decoder.register(schema)
    while not reader.done():
        count, size = reader.long(), reader.long()
        block = reader.take(size)
        if codec == "deflate":
            block = _inflate(block, what)
        if reader.take(_SYNC_SIZE) != sync:
            raise BadRequest(f"{what}: a block's sync marker does not match the header's")
        if not 0 <= count <= len(block):
            raise BadRequest(f"{what}: a block claims {count} records in {len(block)} bytes")
        items = _Reader(block)
        for _ in range(count):
            value = decoder.read(schema, items)
            if isinstance(value, dict):
                yield value
