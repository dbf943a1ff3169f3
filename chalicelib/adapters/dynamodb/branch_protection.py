"""BranchProtectionStore on DynamoDB: two attributes on the repository's own item, ``branch_protection`` (the
patterns as a JSON list) and ``branch_protection_etag``.

The ref store ignores both (its model does not declare them) and deletes them with the item. A write is one
UpdateItem conditioned on the item existing with the expected creation date, so it never creates a partial
repository item nor touches a later repository of the same name, and, for If-Match, on the stored ETag: the
compare-and-swap that makes concurrent rule edits safe.
"""

from __future__ import annotations

import json
from typing import Any

from pynamodb.expressions.condition import Condition
from pynamodb.expressions.operand import Path, Value

from chalicelib.graveler import errors
from chalicelib.graveler.records import ProtectionRules

from .models import model_set
from .tables import TableNames
from .translate import storage_errors

__all__ = ["DynamoBranchProtectionStore"]

_RULES = "branch_protection"
_ETAG = "branch_protection_etag"


class DynamoBranchProtectionStore:
    """The BranchProtectionStore port on the repositories table."""

    def __init__(self, names: TableNames, region: str, endpoint_url: str | None = None) -> None:
        self._table = model_set(names, region, endpoint_url).repositories._get_connection()

    def get(self, repo_id: str, creation_date: int) -> ProtectionRules:
        with storage_errors():
            answer = self._table.get_item(
                repo_id, consistent_read=True, attributes_to_get=[_RULES, _ETAG, "creation_date"]
            )
        item: dict[str, Any] = answer.get("Item") or {}
        if not item or int(item["creation_date"]["N"]) != creation_date:
            raise errors.RepositoryNotFound(repo_id)
        if _RULES not in item:
            return ProtectionRules((), "")
        patterns = json.loads(item[_RULES]["S"])
        return ProtectionRules(tuple(str(p) for p in patterns), str(item.get(_ETAG, {}).get("S", "")))

    def set(self, repo_id: str, creation_date: int, rules: ProtectionRules, expected_etag: str | None) -> None:
        exists: Condition = Path("repository_id").exists()
        same_generation: Condition = Path("creation_date") == Value({"N": str(creation_date)})
        condition: Condition = exists & same_generation
        if expected_etag == "":
            condition = condition & Path(_ETAG).does_not_exist()
        elif expected_etag is not None:
            condition = condition & (Path(_ETAG) == Value({"S": expected_etag}))
        actions = [
            Path(_RULES).set(Value({"S": json.dumps(list(rules.patterns))})),
            Path(_ETAG).set(Value({"S": rules.etag})),
        ]
        try:
            with storage_errors(on_condition_failed=lambda: errors.PreconditionFailed("condition failed")):
                self._table.update_item(repo_id, actions=actions, condition=condition)
            return
        except errors.PreconditionFailed:
            pass
        # Say which condition failed: the repository (404) or the ETag (412).
        self.get(repo_id, creation_date)
        raise errors.PreconditionFailed("branch protection rules changed since the given ETag")
