"""moto's DynamoDB answers that carry items, written to JSON in one pass (installed with
lakelet/stack/moto_speedups.py; moto is pinned, requirements-dev.txt).

Why: a profile of ``lakelet up`` committing 10,000 staged objects put ~89% of the commit in the staging table's
Query pages, and half of moto's CPU per page in two walks over every value of every item: ``DynamoResult``
converts the answer's DynamoTypes to plain dicts (lakelet/stack/moto_items.py, ``fast_dynamo_to_dict``), then the
model-driven JSON serializer walks the result again, member by member, through the output shape.

What :func:`install` changes:

1. moto's handler builds every DynamoDB answer as ``DynamoResult(result)`` (a name looked up in
   ``moto.dynamodb.responses`` at each call): it becomes :class:`FastDynamoResult`, which keeps a dict result as
   it is until the answer is written (``include_consumed_capacity`` adds ConsumedCapacity to that dict in the
   meantime, as it does to moto's). Then, for the operations whose answers carry items (:data:`ITEM_MEMBERS`),
   the items' members are written as JSON text straight from moto's Items and DynamoTypes, with the function
   json.dumps writes strings with, the rest of the answer (Count, ScannedCount, ConsumedCapacity, ...) is
   serialized by moto's own serializer and json.dumps, and both are put together in the output shape's member
   order, the order moto's serializer writes: the same bytes as moto's body (json.dumps with its defaults).
   What moto's serializer makes of those other members is remembered per distinct value (plain JSON values
   only): a GetItem's or PutItem's cost was mostly that walk.
   Anything this is not sure of (a binary value, an empty attribute name, a value of an unexpected Python type,
   an unknown member, a response transformer, pretty-printed responses) leaves the whole answer to moto's path.
2. ``BaseResponse._enrich_response`` puts the request id into an XML body's ``<RequestId>`` with a regular
   expression whose look-behind runs at every position of the body; a body without ``<RequestId>`` (every JSON
   answer) cannot match, so the expression is not run on it. The request id is still drawn and set as before.

:func:`install` and :func:`uninstall` are idempotent.
"""

from __future__ import annotations

import json
import json.encoder
import threading
from collections.abc import Callable
from typing import Any

import moto.dynamodb.responses as moto_responses
from moto import settings
from moto.core.responses import ActionResult, BaseResponse
from moto.core.serialize import BaseJSONSerializer, XFormedAttributePicker
from moto.dynamodb.models.dynamo_type import DynamoType, Item, LimitedSizeDict

_saved: dict[str, Any] = {}
#: Answers written here ("fast") and left to moto's path ("moto"), since the process started (tests read it).
counters = {"fast": 0, "moto": 0}

# Per operation, the answer's members that hold items: "items" a list of AttributeMaps, "item" one AttributeMap,
# "tables" a map of table name -> list of AttributeMaps.
ITEM_MEMBERS: dict[str, dict[str, str]] = {
    "Query": {"Items": "items", "LastEvaluatedKey": "item"},
    "Scan": {"Items": "items", "LastEvaluatedKey": "item"},
    "GetItem": {"Item": "item"},
    "PutItem": {"Attributes": "item"},
    "UpdateItem": {"Attributes": "item"},
    "DeleteItem": {"Attributes": "item"},
    "BatchGetItem": {"Responses": "tables"},
}
_MAPS = (dict, LimitedSizeDict)
# How json.dumps writes a str with its defaults (ensure_ascii): moto's serializer writes its body with them.
_text: Callable[[str], str] = json.encoder.encode_basestring_ascii
# Per kind of value, per attribute name: the text before the value, ``"name": {"S": `` (names repeat from item
# to item). Bounded: emptied when it holds more names than this.
_PREFIXES: dict[str, dict[str, str]] = {"S": {}, "N": {}, "BOOL": {}, "NULL": {}}
_PREFIXES_MAX = 4096


class _Unsure(Exception):
    """Raised inside a walk to leave the answer to moto."""


def value_text(value: Any) -> str:
    """The JSON of one AttributeValue as moto writes it, from a DynamoType or its ``{type: value}`` dict (members
    of either kind); raises _Unsure for what this does not cover."""
    kind: str
    kind_of = type(value)
    if kind_of is DynamoType:
        kind, inner = value.type, value.value
    elif kind_of is dict and len(value) == 1:
        ((kind, inner),) = value.items()
    else:
        raise _Unsure
    inner_type = type(inner)
    if (kind == "S" or kind == "N") and inner_type is str:
        return '{"' + kind + '": ' + _text(inner) + "}"
    if (kind == "BOOL" or kind == "NULL") and inner_type is bool:
        return '{"' + kind + '": ' + ("true}" if inner else "false}")
    if kind == "M" and inner_type in _MAPS:
        return '{"M": ' + map_text(inner) + "}"
    if kind == "L" and inner_type is list:
        return '{"L": [' + ", ".join([value_text(element) for element in inner]) + "]}"
    if (kind == "SS" or kind == "NS") and inner_type is list:
        if any(type(v) is not str for v in inner):
            raise _Unsure
        return '{"' + kind + '": [' + ", ".join([_text(v) for v in inner]) + "]}"
    raise _Unsure  # binary values, unknown kinds, values of unexpected Python types


def map_text(attributes: Any) -> str:
    """The JSON of an item, or of a map value's members (an AttributeMap, a MapAttributeValue); raises _Unsure.
    moto's serializer puts an empty name's members into the enclosing map itself: its path decides those."""
    if type(attributes) not in _MAPS or "" in attributes:
        raise _Unsure
    parts = []
    for name, value in attributes.items():
        # The usual kinds inline: this runs for every attribute of every item of a page.
        if type(value) is DynamoType and type(name) is str:
            kind = value.type
            names = _PREFIXES.get(kind)
            if names is not None:
                inner = value.value
                inner_type = type(inner)
                if inner_type is str and (kind == "S" or kind == "N"):
                    rest = _text(inner) + "}"
                elif inner_type is bool and (kind == "BOOL" or kind == "NULL"):
                    rest = "true}" if inner else "false}"
                else:
                    raise _Unsure
                prefix = names.get(name)
                if prefix is None:
                    if len(names) >= _PREFIXES_MAX:
                        names.clear()
                    prefix = names[name] = _text(name) + ': {"' + kind + '": '
                parts.append(prefix + rest)
                continue
        if type(name) is not str:
            raise _Unsure
        parts.append(_text(name) + ": " + value_text(value))
    return "{" + ", ".join(parts) + "}"


# Per thread, the items' JSON text written by the request's Query walk (lakelet/stack/moto_speedups.py) for its
# answer: id of the item's attributes -> (those attributes, their text).
_written_by_query = threading.local()


def item_text(attributes: Any) -> str | None:
    """An item's JSON text (:func:`map_text`), or None for what this leaves to moto."""
    try:
        return map_text(attributes)
    except _Unsure:
        return None


def text_size(item: Item, known: str | None = None) -> int | None:
    """The length of the item's JSON text (``known``: that text, written earlier by lakelet/stack/moto_item_texts.py),
    kept for this thread's answer; None when this does not cover it. It is at least moto's size of the item
    (``Item.size``): a string's UTF-8 bytes are at most its JSON text's characters (quotes and escapes only add), a
    number is written as its text, a boolean as 4 or 5 characters."""
    attributes = item.attrs
    text = known if known is not None else item_text(attributes)
    if text is None:
        return None
    texts: dict[int, tuple[Any, str]] | None = getattr(_written_by_query, "texts", None)
    if texts is None:
        texts = _written_by_query.texts = {}
    texts[id(attributes)] = (attributes, text)
    return len(text)


def forget() -> None:
    """Drops the texts the thread's last Query walk kept."""
    _written_by_query.texts = None


def _items_text(items: Any) -> str:
    if type(items) is not list:
        raise _Unsure
    texts: dict[int, tuple[Any, str]] | None = getattr(_written_by_query, "texts", None)
    if not texts:
        return "[" + ", ".join([map_text(item) for item in items]) + "]"
    written = []
    for item in items:
        found = texts.get(id(item))
        written.append(found[1] if found is not None and found[0] is item else map_text(item))
    return "[" + ", ".join(written) + "]"


def _item_part(operation: str, result: dict[str, Any]) -> dict[str, str]:
    """The answer's item members as JSON text; raises _Unsure."""
    part: dict[str, str] = {}
    for member, kind in ITEM_MEMBERS[operation].items():
        value = result.get(member)
        if value is None:
            continue
        if kind == "item":
            part[member] = map_text(value)
        elif kind == "items":
            part[member] = _items_text(value)
        else:
            if type(value) is not dict:
                raise _Unsure
            tables = []
            for table, items in value.items():
                if type(table) is not str or not table:
                    raise _Unsure
                tables.append(_text(table) + ": " + _items_text(items))
            part[member] = "{" + ", ".join(tables) + "}"
    return part


def answer(context: Any, result: dict[str, Any]) -> tuple[int, dict[str, Any], str] | None:
    """moto's (status, headers, body) for an answer with items, or None to leave it to moto."""
    operation_model = context.operation_model
    operation = str(operation_model.name)
    serializer_class = context.serializer_class
    if (
        operation not in ITEM_MEMBERS
        or settings.PRETTIFY_RESPONSES
        or not issubclass(serializer_class, BaseJSONSerializer)
        or serializer_class._serialized_result_to_response is not BaseJSONSerializer._serialized_result_to_response
        or serializer_class._serialize_body is not BaseJSONSerializer._serialize_body
    ):
        return None  # the body is not json.dumps of the serialized result with its defaults
    transformers = getattr(context.response, "RESPONSE_KEY_PATH_TO_TRANSFORMER", None)
    shape = operation_model.output_shape
    if transformers or shape is None:
        return None
    members = shape.members
    if any(name not in members or members[name].serialization.get("name", name) != name for name in result):
        return None  # a member the shape does not know, or one written under another name: moto's path
    try:
        part = _item_part(operation, result)
    except _Unsure:
        return None
    convert: Callable[[Any], Any] = moto_responses.dynamo_to_dict  # type: ignore[attr-defined]
    rest = convert({name: value for name, value in result.items() if name not in part})
    status, content_type, written = _written(context, operation, rest)
    # json.dumps of the serialized result, its members in the shape's order (the order moto's serializer writes
    # them in), the item members' text written above in place of theirs.
    body = []
    for name in members:
        if name in part:
            body.append(_text(name) + ": " + part[name])
        elif name in written:
            body.append(_text(name) + ": " + written[name])
    if len(body) != len(part) + len(written):
        return None  # the serializer wrote a member this did not expect
    return status, {"Content-Type": content_type}, "{" + ", ".join(body) + "}"


# (operation, the JSON of the answer's members other than the items) -> what moto's serializer makes of them:
# the status, the Content-Type and each member's JSON. A small answer's cost was mostly that walk (the
# serializer looks every member of ConsumedCapacity up through its alias providers), for a few distinct values.
_memo: dict[tuple[str, str], tuple[int, str, dict[str, str]]] = {}
_MEMO_MAX = 4096
_MEMO_KEY_MAX = 1024
_PLAIN = (str, int, float, bool, type(None))


def _plain(value: Any) -> bool:
    """Whether the value is made of plain JSON values only, so that its JSON text says all moto's serializer
    reads of it (a str subclass, an Enum, a tuple or a Decimal could be written differently)."""
    kind = type(value)
    if kind is dict:
        return all(type(k) is str and _plain(v) for k, v in value.items())
    if kind is list:
        return all(_plain(v) for v in value)
    return kind in _PLAIN


def _written(context: Any, operation: str, rest: dict[str, Any]) -> tuple[int, str, dict[str, str]]:
    key = (operation, json.dumps(rest)) if _plain(rest) else None
    if key is not None:
        found = _memo.get(key)
        if found is not None:
            return found
    operation_model = context.operation_model
    serializer = context.serializer_class(
        operation_model=operation_model,
        pretty_print=False,
        value_picker=XFormedAttributePicker(response_transformers={}),
    )
    response = serializer._create_default_response()
    written: dict[str, Any] = {}
    serializer._serialize(written, rest, operation_model.output_shape, "")
    done = (
        response["status_code"],
        serializer._get_protocol_specific_content_type(),
        {name: json.dumps(value) for name, value in written.items()},
    )
    if key is not None and len(key[1]) <= _MEMO_KEY_MAX:
        if len(_memo) >= _MEMO_MAX:
            _memo.clear()
        _memo[key] = done
    return done


class FastDynamoResult(moto_responses.DynamoResult):
    """moto's DynamoResult, its conversion left until the answer is written (see the module's docstring)."""

    def __init__(self, result: object) -> None:
        if type(result) is dict:
            ActionResult.__init__(self, result)  # ``.result`` is this dict, for include_consumed_capacity
            self._raw: dict[str, Any] | None = result
        else:
            self._raw = None
            super().__init__(result)

    def execute_result(self, context: Any) -> Any:
        raw = self._raw
        self._raw = None
        try:
            done = answer(context, raw) if raw is not None else None
        finally:
            forget()  # the texts of this thread's Query walk serve this answer only
        if done is not None:
            counters["fast"] += 1
            return done
        if raw is not None:
            super().__init__(raw)  # moto's conversion, then moto's serializer
        counters["moto"] += 1
        return super().execute_result(context)


def _enrich_response(headers: dict[str, str], body: Any) -> tuple[dict[str, str], Any]:
    original: Callable[[dict[str, str], Any], tuple[dict[str, str], Any]] = _saved["enrich"].__func__
    if type(body) is str and "<RequestId>" not in body:
        headers, _ = original(headers, "")  # the status and the request id, as moto sets them
        return headers, body
    return original(headers, body)


def install() -> None:
    if _saved:
        return
    _saved["result"] = moto_responses.DynamoResult
    _saved["enrich"] = BaseResponse.__dict__["_enrich_response"]
    moto_responses.DynamoResult = FastDynamoResult  # type: ignore[misc]
    BaseResponse._enrich_response = staticmethod(_enrich_response)  # type: ignore[method-assign]


def uninstall() -> None:
    if not _saved:
        return
    moto_responses.DynamoResult = _saved.pop("result")  # type: ignore[misc]
    BaseResponse._enrich_response = _saved.pop("enrich")  # type: ignore[method-assign]


def installed() -> bool:
    return bool(_saved)
