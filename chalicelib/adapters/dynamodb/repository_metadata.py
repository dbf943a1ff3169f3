"""RepositoryMetadataStore on DynamoDB: a map attribute ``repository_metadata`` on the repository's own item.

The ref store ignores the attribute (its model does not declare it) and deletes it with the item. Each
write is one UpdateItem on the map's keys, conditioned on the item existing with the expected creation
date, so it never creates a partial repository item and never touches a later repository of the same name.
The map is created first, by itself, when missing: DynamoDB cannot set a key inside a map that is not there.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pynamodb.expressions.condition import Condition
from pynamodb.expressions.operand import Path, Value

from chalicelib.graveler import errors

from .models import model_set
from .tables import TableNames
from .translate import storage_errors

__all__ = ["DynamoRepositoryMetadataStore"]

_MAP = "repository_metadata"


class DynamoRepositoryMetadataStore:
    """The RepositoryMetadataStore port on the repositories table."""

    def __init__(self, names: TableNames, region: str, endpoint_url: str | None = None) -> None:
        self._table = model_set(names, region, endpoint_url).repositories._get_connection()

    def get(self, repo_id: str, creation_date: int) -> dict[str, str]:
        with storage_errors():
            answer = self._table.get_item(repo_id, consistent_read=True, attributes_to_get=[_MAP, "creation_date"])
        item: dict[str, Any] = answer.get("Item") or {}
        if not item or int(item["creation_date"]["N"]) != creation_date:
            raise errors.RepositoryNotFound(repo_id)
        return {key: value["S"] for key, value in item.get(_MAP, {}).get("M", {}).items()}

    def set(self, repo_id: str, creation_date: int, values: Mapping[str, str]) -> None:
        self._ensure_map(repo_id, creation_date)
        actions = [Path([_MAP, key]).set(Value({"S": value})) for key, value in values.items()]
        self._update(repo_id, creation_date, actions)

    def delete(self, repo_id: str, creation_date: int, keys: Sequence[str]) -> None:
        self._ensure_map(repo_id, creation_date)
        if keys:
            self._update(repo_id, creation_date, [Path([_MAP, key]).remove() for key in sorted(set(keys))])

    def _ensure_map(self, repo_id: str, creation_date: int) -> None:
        condition = _same_repository(creation_date) & Path(_MAP).does_not_exist()
        try:
            with storage_errors(on_condition_failed=lambda: errors.Conflict("map exists or repository gone")):
                self._table.update_item(repo_id, actions=[Path(_MAP).set(Value({"M": {}}))], condition=condition)
        except errors.Conflict:
            pass  # already there, or the repository is gone: the update that follows tells which

    def _update(self, repo_id: str, creation_date: int, actions: list[Any]) -> None:
        condition = _same_repository(creation_date) & Path(_MAP).exists()
        with storage_errors(on_condition_failed=lambda: errors.RepositoryNotFound(repo_id)):
            self._table.update_item(repo_id, actions=actions, condition=condition)


def _same_repository(creation_date: int) -> Condition:
    exists: Condition = Path("repository_id").exists()
    same_generation: Condition = Path("creation_date") == Value({"N": str(creation_date)})
    both: Condition = exists & same_generation
    return both
