"""The metadata a commit's updates change (updates.py), as Iceberg's TableMetadata.Builder keeps it: a copy of
the table's metadata, and which schema, spec and sort order were added last (id -1 names them)."""

from __future__ import annotations

import copy

from .errors import BadRequest
from .metadata import Json

__all__ = ["MetadataBuilder"]


class MetadataBuilder:
    def __init__(self, metadata: Json, now_ms: int) -> None:
        self.m = copy.deepcopy(metadata)
        self.now_ms = now_ms
        self.last_schema: int | None = None
        self.last_spec: int | None = None
        self.last_order: int | None = None

    def entries(self, name: str) -> list[Json]:
        value = self.m.setdefault(name, [])
        assert isinstance(value, list)
        return value

    def ids(self, name: str, key: str) -> list[int]:
        return [int(item[key]) for item in self.entries(name)]

    def pick(self, field: str, wanted: int, last_added: int | None, collection: str, key: str) -> int:
        """The id a set-current/set-default update names: -1 is the last added one; it must exist."""
        if wanted == -1:
            if last_added is None:
                raise BadRequest(f"{field} -1 names the last added one, and none was added")
            wanted = last_added
        if wanted not in self.ids(collection, key):
            raise BadRequest(f"{field} {wanted} does not exist")
        return int(wanted)

    def remove_ref(self, name: str) -> None:
        self.m.setdefault("refs", {}).pop(name, None)
        if name == "main":
            self.m["current-snapshot-id"] = None

    def replace_by_snapshot(self, name: str, item: Json, snapshot_id: int) -> None:
        self.m[name] = [*(s for s in self.entries(name) if s.get("snapshot-id") != snapshot_id), item]

    def drop_by_snapshot(self, name: str, snapshot_id: int) -> None:
        self.m[name] = [s for s in self.entries(name) if s.get("snapshot-id") != snapshot_id]
