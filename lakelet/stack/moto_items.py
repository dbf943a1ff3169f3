"""moto's conversion of DynamoDB answers to plain values, without an import per value (installed with
lakelet/stack/moto_speedups.py).

Why: moto's DynamoDB handler passes every answer through ``moto.dynamodb.models.utilities.dynamo_to_dict`` (moto
is pinned, requirements-dev.txt), which calls itself once per attribute, per map member and per list element, and
starts each call with a function-level ``from ... import DynamoType``. An import statement is cheap in a plain
interpreter, but the journaled stack wraps ``builtins.__import__`` (lakelet/persistence/determinism.py, so that a
module moto imports inside a journaled request does not draw on its pinned randomness): every import then goes
through a Python function and the import machinery's slow path. A profile of ``lakelet up`` committing 10,000
staged objects put about a third of the CPU of its Query pages in those imports.

:func:`fast_dynamo_to_dict` gives the same answer as moto's: plain dicts and lists are walked, strings, numbers,
booleans and None returned as they are, an item's attribute map (moto's LimitedSizeDict, a dict with nothing more
to it) walked as a dict, and a DynamoType of any kind but binary expanded to ``{type: value}``; everything else
(binary values, datetimes, objects with ``to_json``, other subclasses of dict or list) goes to moto's own function,
whose recursive calls come back here. :func:`install` and :func:`uninstall` are idempotent.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import moto.dynamodb.models.utilities as moto_utilities
import moto.dynamodb.responses as moto_responses
from moto.dynamodb.models.dynamo_type import DynamoType, LimitedSizeDict

_saved: list[Callable[[Any], Any]] = []
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
    return _saved[0](obj)


def install() -> None:
    if _saved:
        return
    _saved.append(moto_utilities.dynamo_to_dict)
    moto_utilities.dynamo_to_dict = fast_dynamo_to_dict
    moto_responses.dynamo_to_dict = fast_dynamo_to_dict  # type: ignore[attr-defined]


def uninstall() -> None:
    if not _saved:
        return
    original = _saved.pop()
    moto_utilities.dynamo_to_dict = original  # type: ignore[assignment]
    moto_responses.dynamo_to_dict = original  # type: ignore[attr-defined,assignment]


def installed() -> bool:
    return bool(_saved)
