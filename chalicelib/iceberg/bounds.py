"""Bounds on what the catalog takes and keeps.

**Size of a table's metadata.** A load answers the whole metadata in one response, and deployed every response
of the API is one AWS Lambda result of at most 6 MB (6,291,556 bytes as measured, lakelet/stack/aws_limits.py),
in which API Gateway's binary media types (``*/*``, app.py) make the body travel base64-encoded: 4 bytes for every
3 of the JSON, which chalice writes compact and ASCII-only. A table whose metadata outgrows that could no longer be
loaded at all (API Gateway answers 502), so a commit, create or register that would give a table more than
MAX_METADATA_BYTES of metadata JSON is refused (BadRequest naming the limit), as are namespace properties past the
same size, on every stack: the local one without
``--aws-limits`` too, so that what works locally works deployed. RESPONSE_RESERVE_BYTES is kept for what the answer
carries beside the metadata: its headers, the metadata location and table config, and a longer ref in the
rendered location than the branch's (a commit ID).

**Depth.** How deep the JSON the catalog takes may nest: a request body, and a metadata file it reads (one an
engine wrote and a client registers). Iceberg's types nest (a struct's field is a struct, a list's element a
map ...), and the catalog walks them recursively (field ids, copies): a body nested past the interpreter's stack
would answer 500 (RecursionError). Each level of nested type is three levels of JSON (a type, its ``fields``
list, a field), so MAX_JSON_DEPTH = 200 leaves a schema 64 levels of nested types below a request's own few: far
beyond real schemas (a handful of levels; Iceberg's Java parser, Jackson, allows 1,000 JSON levels, pyiceberg has
no limit of its own), and well within what every walk of the catalog can recurse. Deeper JSON is a BadRequest."""

from __future__ import annotations

import json
from typing import Any

from .errors import BadRequest

__all__ = [
    "LAMBDA_RESPONSE_BYTES",
    "MAX_JSON_DEPTH",
    "MAX_METADATA_BYTES",
    "check_depth",
    "check_loadable",
    "check_namespace_loadable",
    "loads",
    "metadata_bytes",
]

MAX_JSON_DEPTH = 200
LAMBDA_RESPONSE_BYTES = 6 * 1024 * 1024 + 100
RESPONSE_RESERVE_BYTES = 16 * 1024
MAX_METADATA_BYTES = (LAMBDA_RESPONSE_BYTES - RESPONSE_RESERVE_BYTES) // 4 * 3


def metadata_bytes(metadata: object) -> int:
    """The size of the metadata in a load's answer: JSON as chalice writes it (compact, ASCII-only)."""
    return len(json.dumps(metadata, separators=(",", ":")).encode())


def check_loadable(metadata: object, table: object) -> None:
    """BadRequest when a load of this metadata could not be answered deployed (see above)."""
    size = metadata_bytes(metadata)
    if size > MAX_METADATA_BYTES:
        raise BadRequest(
            f"table {table}: its metadata would be {size:,} bytes of JSON, over the {MAX_METADATA_BYTES:,} a load can"
            f" answer (one AWS Lambda response of at most {LAMBDA_RESPONSE_BYTES:,} bytes, the body base64-encoded):"
            " remove properties, expire snapshots or lower write.metadata.previous-versions-max"
        )


def check_namespace_loadable(properties: object, namespace: str) -> None:
    """The same for a namespace's properties, which a load of the namespace answers whole."""
    size = metadata_bytes(properties)
    if size > MAX_METADATA_BYTES:
        raise BadRequest(
            f"namespace {namespace}: its properties would be {size:,} bytes of JSON, over the {MAX_METADATA_BYTES:,}"
            f" a load can answer (one AWS Lambda response of at most {LAMBDA_RESPONSE_BYTES:,} bytes, the body"
            " base64-encoded)"
        )


def check_depth(value: object, what: str) -> None:
    """BadRequest when ``value`` nests objects and arrays more than MAX_JSON_DEPTH levels deep (walked without
    recursion)."""
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        children: Any = node.values() if isinstance(node, dict) else node if isinstance(node, list) else None
        if children is None:
            continue
        if depth > MAX_JSON_DEPTH:
            raise BadRequest(f"{what} nests more than {MAX_JSON_DEPTH} levels of JSON objects and arrays")
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))


def loads(data: bytes | str, what: str) -> Any:
    """JSON within MAX_JSON_DEPTH: BadRequest for anything else (not JSON, or nested deeper)."""
    try:
        value = json.loads(data)
    except RecursionError:
        raise BadRequest(f"{what} nests more than {MAX_JSON_DEPTH} levels of JSON objects and arrays") from None
    except ValueError:
        raise BadRequest(f"{what} is not JSON") from None
    check_depth(value, what)
    return value
