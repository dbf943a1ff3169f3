"""Branch protection rules, in lakeFS's shapes: GET|PUT /repositories/{repository}/settings/branch_protection (the
whole list, with an ETag and If-Match) and the older per-rule routes the sdk still has under InternalApi
(GET|POST|DELETE /repositories/{repository}/branch_protection, GET .../branch_protection/set_allowed).

The check itself lives in the engine (chalicelib/graveler/branches/protection.py), so the API, the S3 gateway and the
workflows all enforce it; these routes only read and write the rules.
"""

from __future__ import annotations

from typing import Any

from chalice import Blueprint, Response

from chalicelib.graveler import errors
from chalicelib.graveler.branches.protection import BranchProtection

from . import names
from .endpoint import json_response, no_content, route, services
from .params import JsonBody, load_json

bp = Blueprint(__name__)

SETTINGS = "/repositories/{repository}/settings/branch_protection"
RULES = "/repositories/{repository}/branch_protection"
# A per-rule change reads the rules, edits them and writes them back if nobody changed them meanwhile.
EDIT_TRIES = 5


def _protection() -> BranchProtection:
    protection = services().engine.ports.protection
    if protection is None:
        raise errors.StorageError("no branch protection store is configured")
    return protection


def _rule_list(raw: bytes | str | None) -> list[str]:
    """The patterns of a JSON array of BranchProtectionRule objects. Parsed by the one JSON loader of the API,
    so NaN, lone surrogates and deep nesting are refused here as on every other route (a pattern no store
    can encode used to be accepted)."""
    data: Any = load_json(raw)
    if not isinstance(data, list):
        raise errors.Invalid("request body must be a JSON array of branch protection rules")
    patterns: list[str] = []
    for rule in data:
        pattern = rule.get("pattern") if isinstance(rule, dict) else None
        if not isinstance(pattern, str) or not pattern:
            raise errors.Invalid("every branch protection rule needs a non-empty string pattern")
        patterns.append(pattern)
    return patterns


def _rules_body(patterns: tuple[str, ...]) -> list[dict[str, str]]:
    return [{"pattern": pattern} for pattern in patterns]


@route(bp, SETTINGS, ["GET"])
def get_branch_protection_rules(repository: str) -> Response:
    repo = services().engine.repositories.get_repository(names.repository(repository))
    rules = _protection().get_rules(repo)
    return json_response(_rules_body(rules.patterns), headers={"ETag": f'"{rules.etag}"'})


@route(bp, SETTINGS, ["PUT"])
def set_branch_protection_rules(repository: str) -> Response:
    request = bp.current_request
    patterns = _rule_list(request.raw_body)
    repo = services().engine.repositories.get_repository(names.repository(repository))
    _protection().set_rules(repo, patterns, request.headers.get("if-match"))
    return no_content()


@route(bp, RULES, ["GET"])
def internal_get_branch_protection_rules(repository: str) -> Response:
    repo = services().engine.repositories.get_repository(names.repository(repository))
    return json_response(_rules_body(_protection().get_rules(repo).patterns))


@route(bp, RULES, ["POST"])
def internal_create_branch_protection_rule(repository: str) -> Response:
    pattern = JsonBody.parse(bp.current_request.raw_body).required_string("pattern")
    _edit(repository, lambda patterns: _added(patterns, pattern))
    return no_content()


@route(bp, RULES, ["DELETE"])
def internal_delete_branch_protection_rule(repository: str) -> Response:
    pattern = JsonBody.parse(bp.current_request.raw_body).required_string("pattern")
    _edit(repository, lambda patterns: _removed(patterns, pattern))
    return no_content()


@route(bp, RULES + "/set_allowed", ["GET"])
def create_branch_protection_rule_preflight(repository: str) -> Response:
    """Whether the caller may change the rules: the route's permission check is the answer (204 or 403)."""
    services().engine.repositories.get_repository(names.repository(repository))
    return no_content()


def _added(patterns: tuple[str, ...], pattern: str) -> tuple[str, ...]:
    if pattern in patterns:
        raise errors.AlreadyExists("branch protection rule already exists")
    return (*patterns, pattern)


def _removed(patterns: tuple[str, ...], pattern: str) -> tuple[str, ...]:
    if pattern not in patterns:
        raise errors.NotFound("branch protection rule not found")
    return tuple(p for p in patterns if p != pattern)


def _edit(repository: str, change: Any) -> None:
    """Applies ``change`` to the rules with a compare-and-swap on their ETag, retried when they moved."""
    repo = services().engine.repositories.get_repository(names.repository(repository))
    protection = _protection()
    for _ in range(EDIT_TRIES):
        current = protection.get_rules(repo)
        try:
            protection.set_rules(repo, change(current.patterns), current.etag)
            return
        except errors.PreconditionFailed:
            continue
    raise errors.TooManyTries("branch protection rules kept changing")
