"""Policy statement conditions, as lakeFS's pkg/auth/condition.go has them (AWS IAM's shape):
``{"IpAddress": {"SourceIp": ["203.0.113.0/24", "198.51.100.25"]}}``.

Operators: ``IpAddress`` / ``NotIpAddress`` (the field's value is an IP inside / outside any of the listed
addresses or CIDR blocks) and ``StringLike`` / ``StringNotLike`` (``*`` and ``?`` wildcards). Every operator of a
statement must hold, and every field of an operator (AND); within a field any value may match (OR). A field the
request does not carry fails the condition. A statement whose conditions do not hold is skipped, for allow and
deny alike; one that cannot be evaluated (a malformed client address) denies the whole request, as in lakeFS.

The request's fields (``SourceIp``: the client address the deployment sees) are set once per request by the
API's route decorator and the S3 gateway (``request_fields``), and read wherever a permission is decided.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from chalicelib.graveler import errors

from .wildcards import matches

__all__ = [
    "OPERATORS",
    "SOURCE_IP",
    "Condition",
    "ConditionError",
    "conditions_json",
    "evaluate",
    "parse_conditions",
    "request_fields",
    "with_request_fields",
]

SOURCE_IP = "SourceIp"
OPERATORS = ("IpAddress", "NotIpAddress", "StringLike", "StringNotLike")
_NEGATED = {"NotIpAddress", "StringNotLike"}

_fields: ContextVar[Mapping[str, str] | None] = ContextVar("lakelet_condition_fields", default=None)


class ConditionError(Exception):
    """A condition that cannot be evaluated against the request (its client address does not parse)."""


@dataclass(frozen=True, slots=True)
class Condition:
    """One operator on one field: ``values`` are addresses/CIDRs or wildcard patterns."""

    operator: str
    field: str
    values: tuple[str, ...]


def _network(value: str) -> ipaddress.IPv4Network | ipaddress.IPv6Network | None:
    try:
        return ipaddress.ip_network(value.strip(), strict=False)
    except ValueError:
        return None


def parse_conditions(raw: object, where: str) -> tuple[Condition, ...]:
    """The conditions of a statement from its JSON (``{operator: {field: [values]}}``). Raises Invalid."""
    if raw is None:
        return ()
    if not isinstance(raw, dict):
        raise errors.Invalid(f"{where}.condition must be an object of operators")
    parsed: list[Condition] = []
    for operator, fields in sorted(raw.items()):
        if operator not in OPERATORS:
            raise errors.Invalid(
                f"{where}.condition: unsupported operator {operator!r} (one of {', '.join(OPERATORS)})"
            )
        if not isinstance(fields, dict):
            raise errors.Invalid(f"{where}.condition.{operator} must be an object of fields")
        for field, given in sorted(fields.items()):
            if not field:
                raise errors.Invalid(f"{where}.condition.{operator}: missing field name")
            values = [given] if isinstance(given, str) else given
            if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
                raise errors.Invalid(f"{where}.condition.{operator}.{field} must be a list of strings")
            if "Ip" in operator:
                for value in values:
                    if _network(value) is None:
                        raise errors.Invalid(f"invalid IP/CIDR format in {operator} for {field!r}: {value}")
            parsed.append(Condition(operator, field, tuple(values)))
    return tuple(parsed)


def conditions_json(conditions: tuple[Condition, ...]) -> dict[str, dict[str, list[str]]]:
    shaped: dict[str, dict[str, list[str]]] = {}
    for condition in conditions:
        shaped.setdefault(condition.operator, {})[condition.field] = list(condition.values)
    return shaped


def _matches(condition: Condition, value: str) -> bool:
    if "Ip" in condition.operator:
        try:
            address = ipaddress.ip_address(value.strip())
        except ValueError:
            raise ConditionError(f"invalid IP format in field {condition.field}: {value!r}") from None
        networks = [_network(v) for v in condition.values]
        return any(n is not None and address.version == n.version and address in n for n in networks)
    return any(matches(pattern, value) for pattern in condition.values)


def evaluate(conditions: tuple[Condition, ...], fields: Mapping[str, str] | None) -> bool:
    """Whether every condition holds for the request's ``fields``. Raises ConditionError when one cannot be
    evaluated (no request fields at all, or a malformed address)."""
    if not conditions:
        return True
    if fields is None:
        raise ConditionError("no request context to evaluate conditions against")
    for condition in conditions:
        value = fields.get(condition.field)
        if not value:
            return False
        if _matches(condition, value) == (condition.operator in _NEGATED):
            return False
    return True


def request_fields() -> Mapping[str, str] | None:
    """The current request's condition fields, or None outside a request."""
    return _fields.get()


@contextmanager
def with_request_fields(source_ip: str | None) -> Iterator[None]:
    """Sets the current request's fields (``SourceIp``) while handling it."""
    token = _fields.set({SOURCE_IP: source_ip} if source_ip else {})
    try:
        yield
    finally:
        _fields.reset(token)
