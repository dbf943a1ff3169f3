"""Reading the fields of a commit's requirements and updates (JSON objects of the request) into typed values:
a field of the wrong JSON type is the spec's BadRequestException, named after the update or requirement."""

from __future__ import annotations

from typing import Any

from .errors import BadRequest
from .metadata import Json

__all__ = ["items", "optional_int", "required"]


def _is(value: object, kind: type) -> bool:
    # JSON's true and false are not ids: bool is an int to Python.
    return isinstance(value, kind) and not (kind is int and isinstance(value, bool))


def required(obj: Json, field: str, kind: type) -> Any:
    """``obj[field]``, a ``kind``; BadRequest when it is missing or of another type."""
    value = obj.get(field)
    if not _is(value, kind):
        raise BadRequest(f"{obj.get('action') or obj.get('type') or 'the update'} needs {field} ({kind.__name__})")
    return value


def items(obj: Json, field: str, kind: type) -> list[Any]:
    """A list field whose every item is a ``kind`` (ids, property names)."""
    value: list[Any] = required(obj, field, list)
    if not all(_is(v, kind) for v in value):
        raise BadRequest(f"{obj.get('action')} needs {field}, a list of {kind.__name__}")
    return value


def optional_int(obj: Json, field: str) -> int | None:
    """An int field the spec lets a client leave out (or send as null); BadRequest for another type."""
    value = obj.get(field)
    if value is None:
        return None
    return int(required(obj, field, int))
