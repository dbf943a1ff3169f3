"""The lakeFS JSON shapes of auth: users, access keys, groups, policies, login tokens; and parsing policies.

Secrets appear in exactly one shape (CredentialsWithSecret), answered once when a key is created.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from chalicelib.auth.conditions import conditions_json, parse_conditions
from chalicelib.auth.records import Credential, Effect, Group, Policy, Statement, User
from chalicelib.auth.tokens import Token
from chalicelib.graveler import errors
from chalicelib.graveler.records import Page

from .params import load_json
from .serializers import pagination

_EFFECTS = {effect.value: effect for effect in Effect}
# lakeFS decodes a Policy into Go's int64 (swagger: integer, int64): anything else is its 400 before the handler runs.
_INT64 = range(-(2**63), 2**63)


def listing[T](page: Page[T], item: Callable[[T], dict[str, Any]]) -> dict[str, Any]:
    return {"pagination": pagination(page), "results": [item(r) for r in page.results]}


def created_user(record: User) -> dict[str, Any]:
    """createUser's answer: lakeFS answers the record it was given, with no friendly name and no email (a stored
    user, read back, has both: serializers.user)."""
    return {"id": record.id, "creation_date": record.creation_date}


def credentials(record: Credential) -> dict[str, Any]:
    return {"access_key_id": record.access_key_id, "creation_date": record.creation_date}


def group(record: Group) -> dict[str, Any]:
    out: dict[str, Any] = {"id": record.id, "name": record.id, "creation_date": record.creation_date}
    if record.description:
        out["description"] = record.description
    return out


def statement(record: Statement) -> dict[str, Any]:
    shaped: dict[str, Any] = {
        "effect": record.effect.value,
        "resource": record.resource,
        "action": list(record.actions),
    }
    if record.conditions:
        shaped["condition"] = conditions_json(record.conditions)
    return shaped


def policy(record: Policy) -> dict[str, Any]:
    return {
        "id": record.id,
        "creation_date": record.creation_date,
        "statement": [statement(s) for s in record.statements],
    }


def token(record: Token) -> dict[str, Any]:
    return {"token": record.value, "token_expiration": record.expires}


def parse_policy(raw: bytes | str | None) -> tuple[str, list[Statement]]:
    """(id, statements) of a lakeFS Policy body. Raises Invalid naming what is wrong."""
    data = load_json(raw)
    if not isinstance(data, dict):
        raise errors.Invalid("request body must be a JSON object")
    policy_id = data.get("id")
    if not isinstance(policy_id, str) or not policy_id:
        raise errors.Invalid("field id is required")
    _check_creation_date(data.get("creation_date"))
    items = data.get("statement")
    if not isinstance(items, list) or not items:
        raise errors.Invalid("field statement must be a non-empty list")
    return policy_id, [_statement(item, n) for n, item in enumerate(items)]


def _check_creation_date(value: Any) -> None:
    """lakeFS ignores a policy's creation_date (it stamps its own), but only once it decoded as an int64: a string,
    a fraction (1.5, and 1.0 too: Go's decoder refuses it into an integer), a boolean or an out-of-range number is
    a 400 there. lakectl and the SDKs send none, or the integer they read back."""
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value not in _INT64:
        raise errors.Invalid("field creation_date must be an integer (Unix epoch seconds)")


def _statement(item: Any, n: int) -> Statement:
    where = f"statement[{n}]"
    if not isinstance(item, dict):
        raise errors.Invalid(f"{where} must be an object")
    given = item.get("effect")
    # Any JSON value may arrive here: a list or an object is no key of the table (and unhashable).
    effect = _EFFECTS.get(given) if isinstance(given, str) else None
    if effect is None:
        raise errors.Invalid(f"{where}.effect must be allow or deny")
    resource = item.get("resource")
    if not isinstance(resource, str) or not resource:
        raise errors.Invalid(f"{where}.resource must be a non-empty string")
    actions = item.get("action")
    if not isinstance(actions, list) or not actions or not all(isinstance(a, str) for a in actions):
        raise errors.Invalid(f"{where}.action must be a non-empty list of strings")
    return Statement(effect, tuple(actions), resource, parse_conditions(item.get("condition"), where))


def page_of[T](items: Sequence[T], key: Callable[[T], str], prefix: str, after: str, amount: int) -> Page[T]:
    """One page of records already in key order, as the Directory pages its own listings."""
    selected = [item for item in items if key(item) > after and key(item).startswith(prefix)]
    has_more = len(selected) > amount
    results = selected[:amount]
    return Page(results, has_more, key(results[-1]) if has_more else "")
