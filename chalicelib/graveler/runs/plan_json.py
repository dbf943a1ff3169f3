"""The JSON form of the frozen records that the steps of a workflow hand each other (plans and their slices).

The workflow state carries them between Lambdas as JSON, so each record needs a ``to_json`` and a ``from_json``.
Written out per record, every plan repeated the same field-by-field shape; here one codec reads the fields'
declared types instead: ``str``, ``int`` and ``bool``, ``X | None``, ``tuple[X, ...]`` and fixed tuples, and any
type with its own ``from_json`` (a nested record). A tuple travels as a JSON list. A field missing from the JSON
takes its default; one without a default is a ``KeyError``, as a hand-written ``data["name"]`` was.
"""

from __future__ import annotations

import types
import typing
from dataclasses import MISSING, fields
from typing import Any, Self

Json = dict[str, Any]


class JsonRecord:
    """Mixed into a frozen dataclass: its ``to_json`` and ``from_json`` follow the fields' declared types."""

    __slots__ = ()

    def to_json(self) -> Json:
        return {f.name: _encode(getattr(self, f.name)) for f in fields(self)}  # type: ignore[arg-type]

    @classmethod
    def from_json(cls, data: Json) -> Self:
        hints = _field_types(cls)
        values: dict[str, Any] = {}
        for field in fields(cls):  # type: ignore[arg-type]
            if field.name in data:
                values[field.name] = _decode(hints[field.name], data[field.name])
            elif field.default is MISSING and field.default_factory is MISSING:
                raise KeyError(field.name)
        return cls(**values)


_FIELD_TYPES: dict[type, dict[str, Any]] = {}


def _field_types(cls: type) -> dict[str, Any]:
    found = _FIELD_TYPES.get(cls)
    if found is None:
        found = _FIELD_TYPES[cls] = typing.get_type_hints(cls)
    return found


def _encode(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_encode(v) for v in value]
    to_json = getattr(value, "to_json", None)
    return to_json() if to_json is not None else value


def _decode(declared: Any, value: Any) -> Any:
    if declared in (str, int, bool):
        return declared(value)
    origin, args = typing.get_origin(declared), typing.get_args(declared)
    if origin in (types.UnionType, typing.Union):
        if value is None:
            return None
        (inner,) = [a for a in args if a is not type(None)]
        return _decode(inner, value)
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_decode(args[0], v) for v in value)
        return tuple(_decode(a, v) for a, v in zip(args, value, strict=True))
    from_json = getattr(declared, "from_json", None)
    if from_json is None:
        raise TypeError(f"no JSON form for a field of type {declared!r}")
    return from_json(value)


__all__ = ["Json", "JsonRecord"]
