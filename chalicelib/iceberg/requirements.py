"""A table commit's requirements (the spec's TableRequirement), one frozen record per type, each read once from
the request (``parse_requirements``: BadRequest for an unknown type or a field of the wrong shape) and each with
its one check against the metadata the table's pointer names now (CommitFailed when it does not hold; ``None``:
the table does not exist, which only assert-create accepts)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import ClassVar

from .errors import BadRequest, CommitFailed
from .metadata import Json
from .shapes import optional_int, required

__all__ = [
    "AssertCreate",
    "AssertCurrentSchemaId",
    "AssertDefaultSortOrderId",
    "AssertDefaultSpecId",
    "AssertLastAssignedFieldId",
    "AssertLastAssignedPartitionId",
    "AssertRefSnapshotId",
    "AssertTableUuid",
    "TableRequirement",
    "check_requirements",
    "parse_requirement",
    "parse_requirements",
]


def _existing(metadata: Json | None, kind: str) -> Json:
    if metadata is None:
        raise CommitFailed(f"requirement failed: {kind} on a table that does not exist")
    return metadata


def _same(metadata: Json | None, kind: str, field: str, expected: int | None) -> None:
    actual = _existing(metadata, kind).get(field)
    if expected != actual:
        raise CommitFailed(f"requirement failed: {field} is {actual}, not {expected}")


@dataclass(frozen=True, slots=True)
class AssertCreate:
    """The table must not exist (a create, staged or not)."""

    kind: ClassVar[str] = "assert-create"

    @classmethod
    def parse(cls, _: Json) -> AssertCreate:
        return cls()

    def check(self, metadata: Json | None) -> None:
        if metadata is not None:
            raise CommitFailed("requirement failed: the table already exists")


@dataclass(frozen=True, slots=True)
class AssertTableUuid:
    uuid: str
    kind: ClassVar[str] = "assert-table-uuid"

    @classmethod
    def parse(cls, r: Json) -> AssertTableUuid:
        return cls(required(r, "uuid", str))

    def check(self, metadata: Json | None) -> None:
        if self.uuid != _existing(metadata, self.kind).get("table-uuid"):
            raise CommitFailed("requirement failed: table uuid does not match")


@dataclass(frozen=True, slots=True)
class AssertRefSnapshotId:
    """The branch or tag ``ref`` is at ``snapshot_id``; None: it does not exist yet (it is being created)."""

    ref: str
    snapshot_id: int | None
    kind: ClassVar[str] = "assert-ref-snapshot-id"

    @classmethod
    def parse(cls, r: Json) -> AssertRefSnapshotId:
        name = r.get("ref")
        if not isinstance(name, str):
            raise BadRequest("assert-ref-snapshot-id needs ref, a string")
        return cls(name, optional_int(r, "snapshot-id"))

    def check(self, metadata: Json | None) -> None:
        metadata = _existing(metadata, self.kind)
        ref = (metadata.get("refs") or {}).get(self.ref)
        if self.ref == "main" and ref is None and metadata.get("current-snapshot-id") not in (None, -1):
            # A format-1 table's current snapshot is its main branch, named in no refs.
            ref = {"snapshot-id": metadata["current-snapshot-id"]}
        actual = None if ref is None else ref.get("snapshot-id")
        if actual != self.snapshot_id:
            raise CommitFailed(
                f"requirement failed: branch or tag {self.ref} is at snapshot {actual}, not {self.snapshot_id}"
                if self.snapshot_id is not None
                else f"requirement failed: branch or tag {self.ref} was created concurrently"
            )


@dataclass(frozen=True, slots=True)
class AssertLastAssignedFieldId:
    last_assigned_field_id: int | None
    kind: ClassVar[str] = "assert-last-assigned-field-id"

    @classmethod
    def parse(cls, r: Json) -> AssertLastAssignedFieldId:
        return cls(optional_int(r, "last-assigned-field-id"))

    def check(self, metadata: Json | None) -> None:
        _same(metadata, self.kind, "last-column-id", self.last_assigned_field_id)


@dataclass(frozen=True, slots=True)
class AssertCurrentSchemaId:
    current_schema_id: int | None
    kind: ClassVar[str] = "assert-current-schema-id"

    @classmethod
    def parse(cls, r: Json) -> AssertCurrentSchemaId:
        return cls(optional_int(r, "current-schema-id"))

    def check(self, metadata: Json | None) -> None:
        _same(metadata, self.kind, "current-schema-id", self.current_schema_id)


@dataclass(frozen=True, slots=True)
class AssertLastAssignedPartitionId:
    last_assigned_partition_id: int | None
    kind: ClassVar[str] = "assert-last-assigned-partition-id"

    @classmethod
    def parse(cls, r: Json) -> AssertLastAssignedPartitionId:
        return cls(optional_int(r, "last-assigned-partition-id"))

    def check(self, metadata: Json | None) -> None:
        _same(metadata, self.kind, "last-partition-id", self.last_assigned_partition_id)


@dataclass(frozen=True, slots=True)
class AssertDefaultSpecId:
    default_spec_id: int | None
    kind: ClassVar[str] = "assert-default-spec-id"

    @classmethod
    def parse(cls, r: Json) -> AssertDefaultSpecId:
        return cls(optional_int(r, "default-spec-id"))

    def check(self, metadata: Json | None) -> None:
        _same(metadata, self.kind, "default-spec-id", self.default_spec_id)


@dataclass(frozen=True, slots=True)
class AssertDefaultSortOrderId:
    default_sort_order_id: int | None
    kind: ClassVar[str] = "assert-default-sort-order-id"

    @classmethod
    def parse(cls, r: Json) -> AssertDefaultSortOrderId:
        return cls(optional_int(r, "default-sort-order-id"))

    def check(self, metadata: Json | None) -> None:
        _same(metadata, self.kind, "default-sort-order-id", self.default_sort_order_id)


TableRequirement = (
    AssertCreate
    | AssertTableUuid
    | AssertRefSnapshotId
    | AssertLastAssignedFieldId
    | AssertCurrentSchemaId
    | AssertLastAssignedPartitionId
    | AssertDefaultSpecId
    | AssertDefaultSortOrderId
)

# Each requirement type's parser, by the name the spec gives it.
_PARSERS: dict[str, Callable[[Json], TableRequirement]] = {
    cls.kind: cls.parse
    for cls in (
        AssertCreate,
        AssertTableUuid,
        AssertRefSnapshotId,
        AssertLastAssignedFieldId,
        AssertCurrentSchemaId,
        AssertLastAssignedPartitionId,
        AssertDefaultSpecId,
        AssertDefaultSortOrderId,
    )
}


def parse_requirement(requirement: object) -> TableRequirement:
    if not isinstance(requirement, dict):
        raise BadRequest("requirements must be a list of objects")
    kind = requirement.get("type")
    parse = _PARSERS.get(kind) if isinstance(kind, str) else None
    if parse is None:
        raise BadRequest(f"unknown requirement type {kind!r}")
    return parse(requirement)


def parse_requirements(value: object) -> list[TableRequirement]:
    """A request's ``requirements`` (None or missing: none)."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise BadRequest("requirements must be a list of objects")
    return [parse_requirement(r) for r in value]


def check_requirements(metadata: Json | None, requirements: Sequence[TableRequirement]) -> None:
    """CommitFailed at the first requirement that does not hold, in the request's order."""
    for requirement in requirements:
        requirement.check(metadata)
