"""A reader of Avro object container files, enough for Iceberg's manifest lists and manifests: the catalog reads
them at a table commit to find the files a snapshot adds (files.py). Pure Python, no dependency: the Lambda
package carries no Avro library.

What it reads: the container (magic, header, blocks with their sync marker), the ``null`` and ``deflate`` codecs,
and the binary encoding of every schema type (primitives, records, enums, arrays, maps, unions, fixed, named
types referenced by name). Records become dicts by field name. Anything else is a ValueError.
"""

from __future__ import annotations

import json
import struct
import zlib
from collections.abc import Iterator
from typing import Any

__all__ = ["read_container"]

_MAGIC = b"Obj\x01"
_SYNC_BYTES = 16


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.at = 0

    def take(self, n: int) -> bytes:
        if n < 0 or self.at + n > len(self.data):
            raise ValueError("truncated Avro data")
        chunk = self.data[self.at : self.at + n]
        self.at += n
        return chunk

    def long(self) -> int:
        shift, value = 0, 0
        while True:
            byte = self.take(1)[0]
            value |= (byte & 0x7F) << shift
            if not byte & 0x80:
                return (value >> 1) ^ -(value & 1)
            shift += 7
            if shift > 70:
                raise ValueError("malformed Avro varint")

    def blob(self) -> bytes:
        return self.take(self.long())

    @property
    def done(self) -> bool:
        return self.at >= len(self.data)


def _register(schema: Any, names: dict[str, Any], namespace: str = "") -> None:
    """Records every named type of ``schema`` under its short and full names."""
    if isinstance(schema, list):
        for branch in schema:
            _register(branch, names, namespace)
        return
    if not isinstance(schema, dict):
        return
    kind = schema.get("type")
    if kind in ("record", "error", "enum", "fixed"):
        name = str(schema["name"])
        space = str(schema.get("namespace", namespace))
        full = name if "." in name or not space else f"{space}.{name}"
        names[name.rsplit(".", 1)[-1]] = names[full] = schema
        namespace = full.rpartition(".")[0]
        for field in schema.get("fields", []) if kind != "enum" else []:
            _register(field["type"], names, namespace)
    elif kind == "array":
        _register(schema["items"], names, namespace)
    elif kind == "map":
        _register(schema["values"], names, namespace)
    elif isinstance(kind, (dict, list)):
        _register(kind, names, namespace)


def _decode(schema: Any, reader: _Reader, names: dict[str, Any]) -> Any:
    if isinstance(schema, list):
        return _decode(schema[reader.long()], reader, names)
    kind = schema.get("type") if isinstance(schema, dict) else schema
    if isinstance(kind, (dict, list)):
        return _decode(kind, reader, names)
    match kind:
        case "null":
            return None
        case "boolean":
            return reader.take(1) != b"\x00"
        case "int" | "long":
            return reader.long()
        case "float":
            return struct.unpack("<f", reader.take(4))[0]
        case "double":
            return struct.unpack("<d", reader.take(8))[0]
        case "bytes":
            return reader.blob()
        case "string":
            return reader.blob().decode()
        case "record" | "error":
            return {f["name"]: _decode(f["type"], reader, names) for f in schema["fields"]}
        case "enum":
            return schema["symbols"][reader.long()]
        case "fixed":
            return reader.take(int(schema["size"]))
        case "array":
            return [item for _ in _blocks(reader) for item in [_decode(schema["items"], reader, names)]]
        case "map":
            return {reader.blob().decode(): _decode(schema["values"], reader, names) for _ in _blocks(reader)}
    if isinstance(kind, str) and kind in names:
        return _decode(names[kind], reader, names)
    raise ValueError(f"unsupported Avro type {kind!r}")


def _blocks(reader: _Reader) -> Iterator[None]:
    """Yields once per item of an array or map (blocks of items, a negative count followed by a byte size)."""
    while True:
        count = reader.long()
        if count == 0:
            return
        if count < 0:
            count = -count
            reader.long()
        for _ in range(count):
            yield


def read_container(data: bytes) -> tuple[dict[str, bytes], list[Any]]:
    """(the header's metadata, the records) of an Avro object container file."""
    reader = _Reader(data)
    if reader.take(4) != _MAGIC:
        raise ValueError("not an Avro object container file")
    header = {reader.blob().decode(): reader.blob() for _ in _blocks(reader)}
    sync = reader.take(_SYNC_BYTES)
    schema = json.loads(header["avro.schema"])
    codec = header.get("avro.codec", b"null").decode()
    if codec not in ("null", "deflate"):
        raise ValueError(f"unsupported Avro codec {codec!r}")
    names: dict[str, Any] = {}
    _register(schema, names)
    records: list[Any] = []
    while not reader.done:
        count = reader.long()
        block = reader.blob()
        if codec == "deflate":
            block = zlib.decompress(block, -15)
        items = _Reader(block)
        records.extend(_decode(schema, items, names) for _ in range(count))
        if reader.take(_SYNC_BYTES) != sync:
            raise ValueError("corrupt Avro container: sync marker mismatch")
    return header, records
