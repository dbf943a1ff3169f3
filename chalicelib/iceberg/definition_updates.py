"""The updates of a table's definition (the spec's TableUpdate actions for its uuid, format version, schemas,
partition specs, sort orders, location, properties and encryption keys): one frozen record each, read once from
the request (``parse``: BadRequest for a field of the wrong shape) and applied by its one ``apply`` to the
metadata being built (builder.py: BadRequest when it does not apply to that metadata)."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import ClassVar

from .builder import MetadataBuilder
from .errors import BadRequest
from .metadata import PARTITION_FIELD_ID_START, SUPPORTED_FORMAT_VERSIONS, Json, highest_field_id
from .shapes import items, required

__all__ = [
    "AddEncryptionKey",
    "AddSchema",
    "AddSortOrder",
    "AddSpec",
    "AssignUuid",
    "RemoveEncryptionKey",
    "RemovePartitionSpecs",
    "RemoveProperties",
    "RemoveSchemas",
    "SetCurrentSchema",
    "SetDefaultSortOrder",
    "SetDefaultSpec",
    "SetLocation",
    "SetProperties",
    "UpgradeFormatVersion",
]


@dataclass(frozen=True, slots=True)
class AssignUuid:
    uuid: str
    action: ClassVar[str] = "assign-uuid"

    @classmethod
    def parse(cls, u: Json) -> AssignUuid:
        return cls(required(u, "uuid", str))

    def apply(self, b: MetadataBuilder) -> None:
        b.m["table-uuid"] = self.uuid


@dataclass(frozen=True, slots=True)
class UpgradeFormatVersion:
    format_version: int
    action: ClassVar[str] = "upgrade-format-version"

    @classmethod
    def parse(cls, u: Json) -> UpgradeFormatVersion:
        return cls(required(u, "format-version", int))

    def apply(self, b: MetadataBuilder) -> None:
        version = self.format_version
        if version not in SUPPORTED_FORMAT_VERSIONS:
            raise BadRequest(f"format-version {version} is not supported")
        if version < b.m["format-version"]:
            raise BadRequest(f"cannot downgrade format-version from {b.m['format-version']} to {version}")
        if version >= 3 and "next-row-id" not in b.m:
            b.m["next-row-id"] = 0
        b.m["format-version"] = version


@dataclass(frozen=True, slots=True)
class AddSchema:
    """An equal schema already there is reused (its id becomes the last added)."""

    schema: Json
    last_column_id: int | None = None
    action: ClassVar[str] = "add-schema"

    @classmethod
    def parse(cls, u: Json) -> AddSchema:
        last = u.get("last-column-id")  # deprecated by the spec, and optional: a client's own count
        return cls(required(u, "schema", dict), last if isinstance(last, int) else None)

    def apply(self, b: MetadataBuilder) -> None:
        schema = copy.deepcopy(self.schema)
        schema.pop("schema-id", None)
        for existing in b.entries("schemas"):
            if {k: v for k, v in existing.items() if k != "schema-id"} == schema:
                b.last_schema = int(existing["schema-id"])
                return
        new_id = max(b.ids("schemas", "schema-id"), default=-1) + 1
        b.entries("schemas").append({**schema, "schema-id": new_id})
        b.m["last-column-id"] = max(
            int(b.m.get("last-column-id") or 0), highest_field_id(schema), self.last_column_id or 0
        )
        b.last_schema = new_id


@dataclass(frozen=True, slots=True)
class SetCurrentSchema:
    schema_id: int
    action: ClassVar[str] = "set-current-schema"

    @classmethod
    def parse(cls, u: Json) -> SetCurrentSchema:
        return cls(required(u, "schema-id", int))

    def apply(self, b: MetadataBuilder) -> None:
        b.m["current-schema-id"] = b.pick("schema-id", self.schema_id, b.last_schema, "schemas", "schema-id")


@dataclass(frozen=True, slots=True)
class AddSpec:
    """Fields without a field-id get the next partition field ids; an equal spec already there is reused."""

    spec: Json
    action: ClassVar[str] = "add-spec"

    @classmethod
    def parse(cls, u: Json) -> AddSpec:
        spec = required(u, "spec", dict)
        fields = spec.get("fields") or []
        if not isinstance(fields, list) or not all(isinstance(f, dict) for f in fields):
            raise BadRequest("add-spec needs spec.fields, a list of objects")
        return cls(spec)

    def apply(self, b: MetadataBuilder) -> None:
        spec = copy.deepcopy(self.spec)
        spec.pop("spec-id", None)
        last = int(b.m.get("last-partition-id") or PARTITION_FIELD_ID_START - 1)
        for field in spec.get("fields") or []:
            if not isinstance(field.get("field-id"), int):
                last += 1
                field["field-id"] = last
            last = max(last, field["field-id"])
        for existing in b.entries("partition-specs"):
            if existing.get("fields") == spec.get("fields", []):
                b.last_spec = int(existing["spec-id"])
                return
        new_id = max(b.ids("partition-specs", "spec-id"), default=-1) + 1
        b.entries("partition-specs").append({"spec-id": new_id, "fields": spec.get("fields", [])})
        b.m["last-partition-id"] = last
        b.last_spec = new_id


@dataclass(frozen=True, slots=True)
class SetDefaultSpec:
    spec_id: int
    action: ClassVar[str] = "set-default-spec"

    @classmethod
    def parse(cls, u: Json) -> SetDefaultSpec:
        return cls(required(u, "spec-id", int))

    def apply(self, b: MetadataBuilder) -> None:
        b.m["default-spec-id"] = b.pick("spec-id", self.spec_id, b.last_spec, "partition-specs", "spec-id")


@dataclass(frozen=True, slots=True)
class AddSortOrder:
    """The unsorted order (no fields) is order 0; an equal order already there is reused."""

    sort_order: Json
    action: ClassVar[str] = "add-sort-order"

    @classmethod
    def parse(cls, u: Json) -> AddSortOrder:
        return cls(required(u, "sort-order", dict))

    def apply(self, b: MetadataBuilder) -> None:
        fields = copy.deepcopy(self.sort_order.get("fields") or [])
        for existing in b.entries("sort-orders"):
            if existing.get("fields") == fields:
                b.last_order = int(existing["order-id"])
                return
        new_id = 0 if not fields else max([0, *b.ids("sort-orders", "order-id")]) + 1
        b.entries("sort-orders").append({"order-id": new_id, "fields": fields})
        b.last_order = new_id


@dataclass(frozen=True, slots=True)
class SetDefaultSortOrder:
    sort_order_id: int
    action: ClassVar[str] = "set-default-sort-order"

    @classmethod
    def parse(cls, u: Json) -> SetDefaultSortOrder:
        return cls(required(u, "sort-order-id", int))

    def apply(self, b: MetadataBuilder) -> None:
        order = b.pick("sort-order-id", self.sort_order_id, b.last_order, "sort-orders", "order-id")
        b.m["default-sort-order-id"] = order


@dataclass(frozen=True, slots=True)
class RemovePartitionSpecs:
    spec_ids: tuple[int, ...]
    action: ClassVar[str] = "remove-partition-specs"

    @classmethod
    def parse(cls, u: Json) -> RemovePartitionSpecs:
        return cls(tuple(items(u, "spec-ids", int)))

    def apply(self, b: MetadataBuilder) -> None:
        if b.m.get("default-spec-id") in self.spec_ids:
            raise BadRequest("cannot remove the default partition spec")
        b.m["partition-specs"] = [s for s in b.entries("partition-specs") if s.get("spec-id") not in self.spec_ids]


@dataclass(frozen=True, slots=True)
class RemoveSchemas:
    schema_ids: tuple[int, ...]
    action: ClassVar[str] = "remove-schemas"

    @classmethod
    def parse(cls, u: Json) -> RemoveSchemas:
        return cls(tuple(items(u, "schema-ids", int)))

    def apply(self, b: MetadataBuilder) -> None:
        if b.m.get("current-schema-id") in self.schema_ids:
            raise BadRequest("cannot remove the current schema")
        b.m["schemas"] = [s for s in b.entries("schemas") if s.get("schema-id") not in self.schema_ids]


@dataclass(frozen=True, slots=True)
class SetLocation:
    location: str
    action: ClassVar[str] = "set-location"

    @classmethod
    def parse(cls, u: Json) -> SetLocation:
        return cls(required(u, "location", str))

    def apply(self, b: MetadataBuilder) -> None:
        b.m["location"] = self.location.rstrip("/")


@dataclass(frozen=True, slots=True)
class SetProperties:
    updates: dict[str, str]
    action: ClassVar[str] = "set-properties"

    @classmethod
    def parse(cls, u: Json) -> SetProperties:
        updates = required(u, "updates", dict)
        if not all(isinstance(v, str) for v in updates.values()):
            raise BadRequest("property values must be strings")
        return cls(dict(updates))

    def apply(self, b: MetadataBuilder) -> None:
        b.m.setdefault("properties", {}).update(self.updates)


@dataclass(frozen=True, slots=True)
class RemoveProperties:
    removals: tuple[str, ...]
    action: ClassVar[str] = "remove-properties"

    @classmethod
    def parse(cls, u: Json) -> RemoveProperties:
        return cls(tuple(items(u, "removals", str)))

    def apply(self, b: MetadataBuilder) -> None:
        for name in self.removals:
            b.m.setdefault("properties", {}).pop(name, None)


@dataclass(frozen=True, slots=True)
class AddEncryptionKey:
    """A key of the same key-id is replaced."""

    encryption_key: Json
    action: ClassVar[str] = "add-encryption-key"

    @classmethod
    def parse(cls, u: Json) -> AddEncryptionKey:
        return cls(required(u, "encryption-key", dict))

    def apply(self, b: MetadataBuilder) -> None:
        key = copy.deepcopy(self.encryption_key)
        keys = [k for k in b.entries("encryption-keys") if k.get("key-id") != key.get("key-id")]
        b.m["encryption-keys"] = [*keys, key]


@dataclass(frozen=True, slots=True)
class RemoveEncryptionKey:
    key_id: str
    action: ClassVar[str] = "remove-encryption-key"

    @classmethod
    def parse(cls, u: Json) -> RemoveEncryptionKey:
        return cls(required(u, "key-id", str))

    def apply(self, b: MetadataBuilder) -> None:
        b.m["encryption-keys"] = [k for k in b.entries("encryption-keys") if k.get("key-id") != self.key_id]
