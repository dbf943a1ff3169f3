"""A repository's GC rules: lakeFS's GarbageCollectionRules JSON, stored as ``rules.json`` in its namespace.

The rules live with the data they govern (``<namespace>/_lakefs/retention/gc/rules.json``, through the
BlockStore), so no table is needed, and the job, a human or a script can read them next to the commits.
"""

from __future__ import annotations

import json
from typing import Any

from chalicelib.graveler import errors
from chalicelib.graveler.engine import Engine
from chalicelib.graveler.reads.retention import BranchRetention, RetentionRules
from chalicelib.graveler.records import BranchID
from chalicelib.graveler.storage.namespace_files import NamespaceFiles
from chalicelib.graveler.validation import validate_branch_id

from .layout import rules_address

__all__ = ["delete_rules", "get_rules", "rules_from_json", "rules_to_json", "set_rules"]

# Far beyond any sensible retention (about 2,700 years), small enough that "now - days" stays a plain float.
MAX_RETENTION_DAYS = 1_000_000


class GCRulesNotFound(errors.NotFound):
    """The repository has no garbage collection rules."""


def _days(value: Any, name: str) -> int:
    # bool is an int in Python, and JSON 1.0 is a float: neither is a number of days.
    if isinstance(value, bool) or not isinstance(value, int):
        raise errors.Invalid(f"{name} must be an integer")
    if not 0 <= value <= MAX_RETENTION_DAYS:
        raise errors.Invalid(f"{name} must be between 0 and {MAX_RETENTION_DAYS}")
    return value


def rules_from_json(data: Any) -> RetentionRules:
    """Parses ``{default_retention_days, branches: [{branch_id, retention_days}]}``. Raises Invalid."""
    if not isinstance(data, dict):
        raise errors.Invalid("GC rules must be a JSON object")
    if "default_retention_days" not in data or data["default_retention_days"] is None:
        raise errors.Invalid("field default_retention_days is required")
    default = _days(data["default_retention_days"], "default_retention_days")
    branches = data.get("branches")
    if branches is None:
        raise errors.Invalid("field branches is required")
    if not isinstance(branches, list):
        raise errors.Invalid("field branches must be a list")
    rules: list[BranchRetention] = []
    seen: set[str] = set()
    for index, item in enumerate(branches):
        if not isinstance(item, dict):
            raise errors.Invalid(f"branches[{index}] must be an object")
        branch_id = item.get("branch_id")
        if not isinstance(branch_id, str):
            raise errors.Invalid(f"branches[{index}].branch_id must be a string")
        validate_branch_id(branch_id)
        if branch_id in seen:
            raise errors.Invalid(f"branch {branch_id} has more than one rule")
        seen.add(branch_id)
        rules.append(
            BranchRetention(BranchID(branch_id), _days(item.get("retention_days"), f"branches[{index}].retention_days"))
        )
    return RetentionRules(default, tuple(rules))


def rules_to_json(rules: RetentionRules) -> dict[str, Any]:
    return {
        "default_retention_days": rules.default_retention_days,
        "branches": [{"branch_id": r.branch_id, "retention_days": r.retention_days} for r in rules.branches],
    }


class RulesStore:
    """Reads and writes ``rules.json`` of a storage namespace through its files."""

    def __init__(self, files: NamespaceFiles) -> None:
        self._files = files

    def get(self) -> RetentionRules:
        """The namespace's rules. Raises GCRulesNotFound when unset, StorageError when unreadable."""
        try:
            raw = self._files.get(rules_address(self._files.namespace))
        except errors.ObjectNotFound:
            raise GCRulesNotFound("no garbage collection rules are set for this repository") from None
        try:
            return rules_from_json(json.loads(raw))
        except (ValueError, errors.Invalid) as e:
            raise errors.StorageError(f"unreadable GC rules at {rules_address(self._files.namespace)}: {e}") from e

    def set(self, rules: RetentionRules) -> None:
        # The one file under _lakefs/ that is rewritten in place; S3 overwrites are atomic and read-after-write
        # consistent, so a reader sees the old rules or the new ones, never a mix.
        address = rules_address(self._files.namespace)
        self._files.put(address, json.dumps(rules_to_json(rules), sort_keys=True).encode())

    def delete(self) -> None:
        self._files.delete(rules_address(self._files.namespace))


def _store(engine: Engine, repo_id: str) -> RulesStore:
    return RulesStore(
        engine.repositories.namespace_files(engine.repositories.get_repository(repo_id).storage_namespace)
    )


def get_rules(engine: Engine, repo_id: str) -> RetentionRules:
    return _store(engine, repo_id).get()


def set_rules(engine: Engine, repo_id: str, rules: RetentionRules) -> None:
    _store(engine, repo_id).set(rules)


def delete_rules(engine: Engine, repo_id: str) -> None:
    """Removes the rules; removing unset rules is a no-op, as in lakeFS."""
    _store(engine, repo_id).delete()
