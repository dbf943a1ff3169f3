"""A table commit's requirements and updates (the spec's TableRequirement and TableUpdate), applied the way the
spec and Iceberg's TableMetadata.Builder do: requirements are checked against the metadata the table's pointer
names now (CommitFailed when one does not hold), then each update is applied in order to a copy of it. The result
is the next metadata file; nothing here reads or writes storage."""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import Any

from .errors import BadRequest, CommitFailed
from .metadata import (
    PARTITION_FIELD_ID_START,
    SUPPORTED_FORMAT_VERSIONS,
    Json,
    highest_field_id,
)

__all__ = ["apply_updates", "check_requirements"]

# What a requirement reads off the metadata: its field in the request, its field in the metadata.
_ASSERTED = {
    "assert-last-assigned-field-id": ("last-assigned-field-id", "last-column-id"),
    "assert-current-schema-id": ("current-schema-id", "current-schema-id"),
    "assert-last-assigned-partition-id": ("last-assigned-partition-id", "last-partition-id"),
    "assert-default-spec-id": ("default-spec-id", "default-spec-id"),
    "assert-default-sort-order-id": ("default-sort-order-id", "default-sort-order-id"),
}


def check_requirements(metadata: Json | None, requirements: Sequence[Json]) -> None:
    """Raises CommitFailed when a requirement does not hold (``metadata`` None: the table does not exist, which
    only assert-create accepts), BadRequest for an unknown one."""
    for requirement in requirements:
        kind = requirement.get("type")
        if kind == "assert-create":
            if metadata is not None:
                raise CommitFailed("requirement failed: the table already exists")
            continue
        if metadata is None:
            raise CommitFailed(f"requirement failed: {kind} on a table that does not exist")
        if kind == "assert-table-uuid":
            if requirement.get("uuid") != metadata.get("table-uuid"):
                raise CommitFailed("requirement failed: table uuid does not match")
        elif kind == "assert-ref-snapshot-id":
            name = requirement.get("ref")
            if not isinstance(name, str):
                raise BadRequest("assert-ref-snapshot-id needs ref, a string")
            ref = (metadata.get("refs") or {}).get(name)
            expected = requirement.get("snapshot-id")
            if name == "main" and ref is None and metadata.get("current-snapshot-id") not in (None, -1):
                ref = {"snapshot-id": metadata["current-snapshot-id"]}
            actual = None if ref is None else ref.get("snapshot-id")
            if actual != expected:
                raise CommitFailed(
                    f"requirement failed: branch or tag {name} is at snapshot {actual}, not {expected}"
                    if expected is not None
                    else f"requirement failed: branch or tag {name} was created concurrently"
                )
        elif kind in _ASSERTED:
            asked, field = _ASSERTED[kind]
            if requirement.get(asked) != metadata.get(field):
                raise CommitFailed(
                    f"requirement failed: {field} is {metadata.get(field)}, not {requirement.get(asked)}"
                )
        else:
            raise BadRequest(f"unknown requirement type {kind!r}")


class _Builder:
    """The metadata being changed, and what "the last added" schema, spec and sort order are (id -1 names them)."""

    def __init__(self, metadata: Json, now_ms: int) -> None:
        self.m = copy.deepcopy(metadata)
        self.now_ms = now_ms
        self.last_schema: int | None = None
        self.last_spec: int | None = None
        self.last_order: int | None = None

    def _list(self, name: str) -> list[Json]:
        value = self.m.setdefault(name, [])
        assert isinstance(value, list)
        return value

    def _ids(self, name: str, key: str) -> list[int]:
        return [int(item[key]) for item in self._list(name)]

    def assign_uuid(self, u: Json) -> None:
        self.m["table-uuid"] = _required(u, "uuid", str)

    def upgrade_format_version(self, u: Json) -> None:
        version = _required(u, "format-version", int)
        if version not in SUPPORTED_FORMAT_VERSIONS:
            raise BadRequest(f"format-version {version} is not supported")
        if version < self.m["format-version"]:
            raise BadRequest(f"cannot downgrade format-version from {self.m['format-version']} to {version}")
        if version >= 3 and "next-row-id" not in self.m:
            self.m["next-row-id"] = 0
        self.m["format-version"] = version

    def add_schema(self, u: Json) -> None:
        schema = copy.deepcopy(_required(u, "schema", dict))
        schema.pop("schema-id", None)
        for existing in self._list("schemas"):
            if {k: v for k, v in existing.items() if k != "schema-id"} == schema:
                self.last_schema = int(existing["schema-id"])
                return
        new_id = max(self._ids("schemas", "schema-id"), default=-1) + 1
        self._list("schemas").append({**schema, "schema-id": new_id})
        last = u.get("last-column-id")
        self.m["last-column-id"] = max(
            int(self.m.get("last-column-id") or 0), highest_field_id(schema), last if isinstance(last, int) else 0
        )
        self.last_schema = new_id

    def set_current_schema(self, u: Json) -> None:
        self.m["current-schema-id"] = self._pick(u, "schema-id", self.last_schema, "schemas", "schema-id")

    def add_spec(self, u: Json) -> None:
        spec = copy.deepcopy(_required(u, "spec", dict))
        spec.pop("spec-id", None)
        last = int(self.m.get("last-partition-id") or PARTITION_FIELD_ID_START - 1)
        fields = spec.get("fields") or []
        if not isinstance(fields, list) or not all(isinstance(f, dict) for f in fields):
            raise BadRequest("add-spec needs spec.fields, a list of objects")
        for field in fields:
            if not isinstance(field.get("field-id"), int):
                last += 1
                field["field-id"] = last
            last = max(last, field["field-id"])
        for existing in self._list("partition-specs"):
            if existing.get("fields") == spec.get("fields", []):
                self.last_spec = int(existing["spec-id"])
                return
        new_id = max(self._ids("partition-specs", "spec-id"), default=-1) + 1
        self._list("partition-specs").append({"spec-id": new_id, "fields": spec.get("fields", [])})
        self.m["last-partition-id"] = last
        self.last_spec = new_id

    def set_default_spec(self, u: Json) -> None:
        self.m["default-spec-id"] = self._pick(u, "spec-id", self.last_spec, "partition-specs", "spec-id")

    def add_sort_order(self, u: Json) -> None:
        order = copy.deepcopy(_required(u, "sort-order", dict))
        fields = order.get("fields") or []
        for existing in self._list("sort-orders"):
            if existing.get("fields") == fields:
                self.last_order = int(existing["order-id"])
                return
        new_id = 0 if not fields else max([0, *self._ids("sort-orders", "order-id")]) + 1
        self._list("sort-orders").append({"order-id": new_id, "fields": fields})
        self.last_order = new_id

    def set_default_sort_order(self, u: Json) -> None:
        self.m["default-sort-order-id"] = self._pick(u, "sort-order-id", self.last_order, "sort-orders", "order-id")

    def add_snapshot(self, u: Json) -> None:
        snapshot = copy.deepcopy(_required(u, "snapshot", dict))
        snapshot_id = _required(snapshot, "snapshot-id", int)
        if snapshot_id in self._ids("snapshots", "snapshot-id"):
            raise BadRequest(f"snapshot {snapshot_id} already exists")
        sequence = snapshot.get("sequence-number")
        if self.m["format-version"] >= 2 and isinstance(sequence, int):
            if sequence <= int(self.m.get("last-sequence-number") or 0) and snapshot.get("parent-snapshot-id"):
                raise CommitFailed(f"snapshot sequence number {sequence} is not above the table's")
            self.m["last-sequence-number"] = sequence
        if self.m["format-version"] >= 3:
            added = snapshot.get("added-rows")
            if isinstance(added, int):
                snapshot.setdefault("first-row-id", self.m.get("next-row-id", 0))
                self.m["next-row-id"] = int(self.m.get("next-row-id", 0)) + added
        self._list("snapshots").append(snapshot)
        if isinstance(snapshot.get("timestamp-ms"), int):
            self.now_ms = max(self.now_ms, snapshot["timestamp-ms"])

    def set_snapshot_ref(self, u: Json) -> None:
        name = _required(u, "ref-name", str)
        snapshot_id = _required(u, "snapshot-id", int)
        if snapshot_id not in self._ids("snapshots", "snapshot-id"):
            raise BadRequest(f"cannot set {name} to unknown snapshot {snapshot_id}")
        kind = u.get("type", "branch")
        if kind not in ("branch", "tag"):
            raise BadRequest(f"unknown ref type {kind!r}")
        ref: Json = {"snapshot-id": snapshot_id, "type": kind}
        for option in ("max-ref-age-ms", "max-snapshot-age-ms", "min-snapshots-to-keep"):
            if u.get(option) is not None:
                ref[option] = u[option]
        self.m.setdefault("refs", {})[name] = ref
        if name == "main":
            self.m["current-snapshot-id"] = snapshot_id
            self._list("snapshot-log").append({"timestamp-ms": self.now_ms, "snapshot-id": snapshot_id})

    def remove_snapshots(self, u: Json) -> None:
        removed = set(_items(u, "snapshot-ids", int))
        self.m["snapshots"] = [s for s in self._list("snapshots") if s.get("snapshot-id") not in removed]
        refs = self.m.setdefault("refs", {})
        for name in [n for n, r in refs.items() if r.get("snapshot-id") in removed]:
            self._remove_ref(name)
        self.m["snapshot-log"] = [e for e in self._list("snapshot-log") if e.get("snapshot-id") not in removed]
        for name in ("statistics", "partition-statistics"):
            self.m[name] = [s for s in self._list(name) if s.get("snapshot-id") not in removed]

    def remove_snapshot_ref(self, u: Json) -> None:
        self._remove_ref(_required(u, "ref-name", str))

    def _remove_ref(self, name: str) -> None:
        self.m.setdefault("refs", {}).pop(name, None)
        if name == "main":
            self.m["current-snapshot-id"] = None

    def set_location(self, u: Json) -> None:
        self.m["location"] = _required(u, "location", str).rstrip("/")

    def set_properties(self, u: Json) -> None:
        updates = _required(u, "updates", dict)
        if not all(isinstance(v, str) for v in updates.values()):
            raise BadRequest("property values must be strings")
        self.m.setdefault("properties", {}).update(updates)

    def remove_properties(self, u: Json) -> None:
        for name in _items(u, "removals", str):
            self.m.setdefault("properties", {}).pop(name, None)

    def set_statistics(self, u: Json) -> None:
        self._replace_by_snapshot("statistics", _required(u, "statistics", dict))

    def remove_statistics(self, u: Json) -> None:
        self._drop_by_snapshot("statistics", _required(u, "snapshot-id", int))

    def set_partition_statistics(self, u: Json) -> None:
        self._replace_by_snapshot("partition-statistics", _required(u, "partition-statistics", dict))

    def remove_partition_statistics(self, u: Json) -> None:
        self._drop_by_snapshot("partition-statistics", _required(u, "snapshot-id", int))

    def remove_partition_specs(self, u: Json) -> None:
        ids = set(_items(u, "spec-ids", int))
        if self.m.get("default-spec-id") in ids:
            raise BadRequest("cannot remove the default partition spec")
        self.m["partition-specs"] = [s for s in self._list("partition-specs") if s.get("spec-id") not in ids]

    def remove_schemas(self, u: Json) -> None:
        ids = set(_items(u, "schema-ids", int))
        if self.m.get("current-schema-id") in ids:
            raise BadRequest("cannot remove the current schema")
        self.m["schemas"] = [s for s in self._list("schemas") if s.get("schema-id") not in ids]

    def add_encryption_key(self, u: Json) -> None:
        key = _required(u, "encryption-key", dict)
        keys = [k for k in self._list("encryption-keys") if k.get("key-id") != key.get("key-id")]
        self.m["encryption-keys"] = [*keys, key]

    def remove_encryption_key(self, u: Json) -> None:
        key_id = _required(u, "key-id", str)
        self.m["encryption-keys"] = [k for k in self._list("encryption-keys") if k.get("key-id") != key_id]

    def _replace_by_snapshot(self, name: str, item: Json) -> None:
        snapshot_id = _required(item, "snapshot-id", int)
        self.m[name] = [*(s for s in self._list(name) if s.get("snapshot-id") != snapshot_id), item]

    def _drop_by_snapshot(self, name: str, snapshot_id: int) -> None:
        self.m[name] = [s for s in self._list(name) if s.get("snapshot-id") != snapshot_id]

    def _pick(self, u: Json, field: str, last_added: int | None, collection: str, key: str) -> int:
        wanted = _required(u, field, int)
        if wanted == -1:
            if last_added is None:
                raise BadRequest(f"{field} -1 names the last added one, and none was added")
            wanted = last_added
        if wanted not in self._ids(collection, key):
            raise BadRequest(f"{field} {wanted} does not exist")
        return int(wanted)


def _required(update: Json, field: str, kind: type) -> Any:
    value = update.get(field)
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise BadRequest(f"{update.get('action') or 'the update'} needs {field} ({kind.__name__})")
    return value


def _items(update: Json, field: str, kind: type) -> list[Any]:
    """A list field whose every item is a ``kind`` (ids, property names)."""
    value: list[Any] = _required(update, field, list)
    if not all(isinstance(v, kind) and not isinstance(v, bool) for v in value):
        raise BadRequest(f"{update.get('action')} needs {field}, a list of {kind.__name__}")
    return value


_ACTIONS: dict[str, Callable[[_Builder, Json], None]] = {
    name.replace("_", "-"): getattr(_Builder, name)
    for name in (
        "assign_uuid",
        "upgrade_format_version",
        "add_schema",
        "set_current_schema",
        "add_spec",
        "set_default_spec",
        "add_sort_order",
        "set_default_sort_order",
        "add_snapshot",
        "set_snapshot_ref",
        "remove_snapshots",
        "remove_snapshot_ref",
        "set_location",
        "set_properties",
        "remove_properties",
        "set_statistics",
        "remove_statistics",
        "set_partition_statistics",
        "remove_partition_statistics",
        "remove_partition_specs",
        "remove_schemas",
        "add_encryption_key",
        "remove_encryption_key",
    )
}


def apply_updates(metadata: Json, updates: Sequence[object], now_ms: int) -> Json:
    """A new metadata with the updates applied in order; BadRequest for an unknown or malformed update."""
    builder = _Builder(metadata, now_ms)
    for update in updates:
        if not isinstance(update, dict):
            raise BadRequest("an update must be a JSON object")
        action = _ACTIONS.get(str(update.get("action")))
        if action is None:
            raise BadRequest(f"unknown update action {update.get('action')!r}")
        try:
            action(builder, update)
        except (AttributeError, KeyError, TypeError, ValueError, AssertionError) as e:
            # The update or the table's metadata (a registered file may hold anything) is not of the spec's shape.
            raise BadRequest(f"{update.get('action')} does not apply to the table's metadata: {e!r}") from None
    builder.m["last-updated-ms"] = builder.now_ms
    if builder.m["format-version"] == 1 and builder.m.get("schemas"):
        current = [s for s in builder.m["schemas"] if s.get("schema-id") == builder.m.get("current-schema-id")]
        if current:
            builder.m["schema"] = copy.deepcopy(current[0])
    return builder.m
