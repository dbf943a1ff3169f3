"""Request parsing at the edge: query parameters and JSON bodies. Every failure is an Invalid (HTTP 400).

Routes never touch raw request data: a bad int, a bad boolean, a body that is not a JSON object, a missing or
mistyped field all stop here with a message naming the parameter.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from chalicelib.graveler import errors
from chalicelib.graveler.reads.listing import DEFAULT_AMOUNT, MAX_AMOUNT

_TRUE = {"true", "1", "yes"}
_FALSE = {"false", "0", "no"}
# Python's int() also takes "1_000", " 5" and non-ASCII digits; HTTP parameters should not.
_INTEGER = re.compile(r"-?[0-9]{1,18}")
# No lakeFS request body nests deeper than a policy (object > list > object > list): 32 leaves room and
# refuses the 100,000-deep bodies that used to exhaust the parser's recursion (a 500).
MAX_JSON_DEPTH = 32
# Commit, merge and repository metadata: at most 64 KiB of keys and values (UTF-8). lakeFS sets no figure;
# DynamoDB refuses items over 400 KB, which used to surface as a 503 "retry later".
MAX_METADATA_BYTES = 64 * 1024


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _check_tree(data: Any) -> None:
    """Raises Invalid for nesting deeper than MAX_JSON_DEPTH or a string (key or value) that is not Unicode
    text (a lone surrogate from an escape like "\\ud800", which no store, header or log can encode)."""
    stack: list[tuple[Any, int]] = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, str):
            _check_text(value)
            continue
        if not isinstance(value, (dict, list)):
            continue
        if depth > MAX_JSON_DEPTH:
            raise errors.Invalid(f"request body nests deeper than {MAX_JSON_DEPTH} levels")
        if isinstance(value, dict):
            for key, item in value.items():
                _check_text(key)
                stack.append((item, depth + 1))
        else:
            stack.extend((item, depth + 1) for item in value)


def _check_text(value: str) -> None:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise errors.Invalid("request body holds a string that is not valid Unicode (a lone surrogate)") from None


def load_json(raw: bytes | str | None) -> Any:
    """The JSON value of a request body. Raises Invalid (400) for anything a route could choke on later:
    malformed JSON, NaN or Infinity, nesting deeper than MAX_JSON_DEPTH, lone surrogates."""
    if not raw:
        raise errors.Invalid("a JSON request body is required")
    try:
        data = json.loads(raw, parse_constant=_no_constant)
    except RecursionError:
        raise errors.Invalid(f"request body nests deeper than {MAX_JSON_DEPTH} levels") from None
    except (ValueError, UnicodeDecodeError):
        raise errors.Invalid("request body is not valid JSON") from None
    _check_tree(data)
    return data


class Query:
    """The query string of one request. A repeated parameter counts by its last value, as in Chalice."""

    def __init__(self, params: Mapping[str, str] | None) -> None:
        self._params: Mapping[str, str] = params or {}

    def string(self, name: str, default: str = "") -> str:
        value = self._params.get(name)
        return default if value is None else value

    def required_string(self, name: str) -> str:
        value = self._params.get(name)
        if not value:
            raise errors.Invalid(f"query parameter {name} is required")
        return value

    def integer(self, name: str, default: int | None = None) -> int | None:
        value = self._params.get(name)
        if value is None or value == "":
            return default
        if not _INTEGER.fullmatch(value):
            raise errors.Invalid(f"query parameter {name} must be an integer, got {value!r}")
        return int(value)

    def boolean(self, name: str, default: bool = False) -> bool:
        """Case-insensitive: the official Python client sends "True"/"False"."""
        value = self._params.get(name)
        if value is None or value == "":
            return default
        lowered = value.strip().lower()
        if lowered in _TRUE:
            return True
        if lowered in _FALSE:
            return False
        raise errors.Invalid(f"query parameter {name} must be true or false, got {value!r}")

    def amount(self) -> int:
        """Page size as lakeFS takes it (swagger's PaginationAmount, minimum -1, maximum 1000, which its request
        validator enforces with a 400 before the handler; the handler then serves the default, 100, for -1 and 0)."""
        amount = self.integer("amount", DEFAULT_AMOUNT)
        assert amount is not None
        if amount < -1:
            raise errors.Invalid('parameter "amount" in query has an error: number must be at least -1')
        if amount > MAX_AMOUNT:
            raise errors.Invalid(f'parameter "amount" in query has an error: number must be at most {MAX_AMOUNT}')
        return amount if amount > 0 else DEFAULT_AMOUNT


class JsonBody:
    """A request body that must be a JSON object; typed accessors for its fields. ``null`` counts as absent."""

    def __init__(self, data: Mapping[str, Any]) -> None:
        self._data = data

    @classmethod
    def parse(cls, raw: bytes | str) -> JsonBody:
        data = load_json(raw)
        if not isinstance(data, dict):
            raise errors.Invalid("request body must be a JSON object")
        return cls(data)

    def data(self) -> dict[str, Any]:
        """The whole object, for parsers of their own shapes (GC rules)."""
        return dict(self._data)

    def raw(self, name: str) -> Any:
        """A field as parsed, unchecked (``None`` when absent)."""
        return self._data.get(name)

    def _get(self, name: str, required: bool) -> Any:
        value = self._data.get(name)
        if value is None and required:
            raise errors.Invalid(f"field {name} is required")
        return value

    def string(self, name: str, default: str | None = None, required: bool = False) -> str | None:
        value = self._get(name, required)
        if value is None:
            return default
        if not isinstance(value, str):
            raise errors.Invalid(f"field {name} must be a string")
        return value

    def required_string(self, name: str) -> str:
        value = self.string(name, required=True)
        assert value is not None
        return value

    def boolean(self, name: str, default: bool = False) -> bool:
        value = self._get(name, False)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise errors.Invalid(f"field {name} must be a boolean")
        return value

    def integer(self, name: str, minimum: int | None = None, maximum: int | None = None) -> int | None:
        value = self._get(name, False)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            raise errors.Invalid(f"field {name} must be an integer")
        if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
            raise errors.Invalid(f"field {name} must be between {minimum} and {maximum}")
        return value

    def str_map(self, name: str) -> dict[str, str]:
        value = self._get(name, False)
        if value is None:
            return {}
        if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
            raise errors.Invalid(f"field {name} must be an object of string values")
        size = sum(len(k.encode()) + len(v.encode()) for k, v in value.items())
        if size > MAX_METADATA_BYTES:
            raise errors.Invalid(f"field {name} holds {size} bytes, more than the {MAX_METADATA_BYTES} allowed")
        return dict(value)

    def str_list(self, name: str) -> list[str]:
        value = self._get(name, True)
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise errors.Invalid(f"field {name} must be a list of strings")
        return list(value)

    def nested(self, name: str) -> JsonBody | None:
        value = self._get(name, False)
        if value is None:
            return None
        if not isinstance(value, dict):
            raise errors.Invalid(f"field {name} must be an object")
        return JsonBody(value)
