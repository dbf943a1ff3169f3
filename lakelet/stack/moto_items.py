"""How moto turns DynamoDB answers into JSON, at a cost per value that does not dominate a Query page (installed
with lakelet/stack/moto_speedups.py; moto is pinned, requirements-dev.txt). Every value of every item of a page
goes through both steps, so a page of 1,000 staged rows paid for them once per attribute, per map member and per
list element.

1. Conversion: moto's DynamoDB handler passes every answer through ``moto.dynamodb.models.utilities.
   dynamo_to_dict``, which calls itself per value and starts each call with a function-level ``from ... import
   DynamoType``. An import statement is cheap in a plain interpreter, but the journaled stack wraps
   ``builtins.__import__`` (lakelet/persistence/determinism.py, so that a module moto imports inside a journaled
   request does not draw on its pinned randomness): every import then goes through a Python function and the
   import machinery's slow path. A profile of ``lakelet up`` committing 10,000 staged objects put about a third
   of the CPU of its Query pages in those imports. :func:`fast_dynamo_to_dict` gives the same answer as moto's:
   plain dicts and lists are walked, strings, numbers, booleans and None returned as they are, an item's
   attribute map (moto's LimitedSizeDict, a dict with nothing more to it) walked as a dict, and a DynamoType of
   any kind but binary expanded to ``{type: value}``; everything else (binary values, datetimes, objects with
   ``to_json``, other subclasses of dict or list) goes to moto's own function, whose recursive calls come back
   here.
2. Serialization: moto's model-driven JSON serializer looks up every member of every AttributeValue through its
   alias providers. The serializer's structure method, for DynamoDB AttributeValues, and its map method, for
   DynamoDB AttributeMaps (an item), copy values of the usual kinds (S, N, BOOL, NULL, SS, NS, M, L) as moto's
   serializer would emit them; an answer holding anything else (binary) goes to moto's serializer as before.

:func:`install` and :func:`uninstall` are idempotent.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import moto.dynamodb.models.utilities as moto_utilities
import moto.dynamodb.responses as moto_responses
from moto.core.serialize import BaseJSONSerializer
from moto.dynamodb.models.dynamo_type import DynamoType, LimitedSizeDict

_saved: dict[str, Any] = {}
_BINARY = frozenset({"B", "BS"})
_PLAIN = (str, int, float, bool, type(None))
#: Values handed to moto's own function (tests read it).
counters = {"moto": 0}


def fast_dynamo_to_dict(obj: Any) -> Any:
    kind = type(obj)
    if kind is dict or kind is LimitedSizeDict:  # an item's attributes are a LimitedSizeDict
        return {name: fast_dynamo_to_dict(value) for name, value in obj.items()}
    if kind is list:
        return [fast_dynamo_to_dict(value) for value in obj]
    if kind in _PLAIN:
        return obj
    if kind is DynamoType and obj.type not in _BINARY:
        return {obj.type: fast_dynamo_to_dict(obj.value)}
    counters["moto"] += 1
    original: Callable[[Any], Any] = _saved["dynamo_to_dict"]
    return original(obj)


def _attribute_value(value: Any) -> Any:
    """What moto's JSON serializer makes of a DynamoDB AttributeValue ({"S": ...}, {"M": {...}}, ...): a copy;
    None for what this does not cover (binary values, anything unusual), which moto then serializes itself."""
    if type(value) is not dict or len(value) != 1:
        return None
    ((kind, inner),) = value.items()
    if kind == "S" or kind == "N":
        return {kind: inner} if type(inner) is str else None
    if kind == "BOOL" or kind == "NULL":
        return {kind: inner} if type(inner) is bool else None
    if kind == "SS" or kind == "NS":
        if type(inner) is not list or any(type(v) is not str for v in inner):
            return None
        return {kind: list(inner)}
    if kind == "M":
        if type(inner) is not dict:
            return None
        members = {}
        for name, member in inner.items():
            members[name] = done = _attribute_value(member)
            if done is None:
                return None
        return {kind: members}
    if kind == "L":
        if type(inner) is not list:
            return None
        elements = []
        for element in inner:
            done = _attribute_value(element)
            if done is None:
                return None
            elements.append(done)
        return {kind: elements}
    return None


def _serialize_type_structure(self: BaseJSONSerializer, serialized: Any, value: Any, shape: Any, key: str) -> None:
    if key and shape.name == "AttributeValue" and self.operation_model.service_model.service_name == "dynamodb":
        done = _attribute_value(value)
        if done is not None:
            serialized[self.get_serialized_name(shape, key)] = done
            return
    original: Callable[..., None] = _saved["serialize_structure"]
    original(self, serialized, value, shape, key)


def _serialize_type_map(self: BaseJSONSerializer, serialized: Any, value: Any, shape: Any, key: str) -> None:
    if shape.name == "AttributeMap" and self.operation_model.service_model.service_name == "dynamodb":
        members = {}
        value_shape = shape.value
        for name, member in value.items():
            done = _attribute_value(member) if name else None
            if done is None:
                break
            members[self.get_serialized_name(value_shape, name)] = done
        else:
            serialized[self.get_serialized_name(shape, key)] = members
            return
    original: Callable[..., None] = _saved["serialize_map"]
    original(self, serialized, value, shape, key)


def install() -> None:
    if _saved:
        return
    _saved["dynamo_to_dict"] = moto_utilities.dynamo_to_dict
    _saved["serialize_structure"] = BaseJSONSerializer._serialize_type_structure
    _saved["serialize_map"] = BaseJSONSerializer._serialize_type_map
    moto_utilities.dynamo_to_dict = fast_dynamo_to_dict
    moto_responses.dynamo_to_dict = fast_dynamo_to_dict  # type: ignore[attr-defined]
    BaseJSONSerializer._serialize_type_structure = _serialize_type_structure  # type: ignore[method-assign]
    BaseJSONSerializer._serialize_type_map = _serialize_type_map  # type: ignore[method-assign]


def uninstall() -> None:
    if not _saved:
        return
    moto_utilities.dynamo_to_dict = _saved["dynamo_to_dict"]
    moto_responses.dynamo_to_dict = _saved["dynamo_to_dict"]  # type: ignore[attr-defined]
    BaseJSONSerializer._serialize_type_structure = _saved["serialize_structure"]  # type: ignore[method-assign]
    BaseJSONSerializer._serialize_type_map = _saved["serialize_map"]  # type: ignore[method-assign]
    _saved.clear()


def installed() -> bool:
    return bool(_saved)
