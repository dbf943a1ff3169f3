"""How deep the JSON the catalog takes may nest: a request body, and a metadata file it reads (one an engine wrote
and a client registers). Iceberg's types nest (a struct's field is a struct, a list's element a map ...), and the
catalog walks them recursively (field ids, copies): a body nested past the interpreter's stack would answer 500
(RecursionError). Each level of nested type is three levels of JSON (a type, its ``fields`` list, a field), so
MAX_JSON_DEPTH = 200 leaves a schema 64 levels of nested types below a request's own few: far beyond real
schemas (a handful of levels; Iceberg's Java parser, Jackson, allows 1,000 JSON levels, pyiceberg has no limit of
its own), and well within what every walk of the catalog can recurse. Deeper JSON is a BadRequest."""

from __future__ import annotations

import json
from typing import Any

from .errors import BadRequest

__all__ = ["MAX_JSON_DEPTH", "check_depth", "loads"]

MAX_JSON_DEPTH = 200


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
