"""The updates of a table's snapshots, branches and tags, and statistics (the spec's TableUpdate actions for
them): one frozen record each, read once from the request (``parse``) and applied by its one ``apply`` to the
metadata being built (builder.py)."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import ClassVar

from .builder import MetadataBuilder
from .errors import BadRequest, CommitFailed
from .metadata import Json
from .shapes import items, optional_int, required

__all__ = [
    "AddSnapshot",
    "RemovePartitionStatistics",
    "RemoveSnapshotRef",
    "RemoveSnapshots",
    "RemoveStatistics",
    "SetPartitionStatistics",
    "SetSnapshotRef",
    "SetStatistics",
]

REF_TYPES = ("branch", "tag")
# A ref's retention options, kept on it as given.
_REF_OPTIONS = ("max-ref-age-ms", "max-snapshot-age-ms", "min-snapshots-to-keep")


@dataclass(frozen=True, slots=True)
class AddSnapshot:
    """Its sequence number must be above the table's (format 2 on); format 3 numbers its rows."""

    snapshot: Json
    action: ClassVar[str] = "add-snapshot"

    @classmethod
    def parse(cls, u: Json) -> AddSnapshot:
        snapshot = required(u, "snapshot", dict)
        required(snapshot, "snapshot-id", int)
        return cls(snapshot)

    @property
    def snapshot_id(self) -> int:
        return int(self.snapshot["snapshot-id"])

    def apply(self, b: MetadataBuilder) -> None:
        snapshot = copy.deepcopy(self.snapshot)
        if self.snapshot_id in b.ids("snapshots", "snapshot-id"):
            raise BadRequest(f"snapshot {self.snapshot_id} already exists")
        sequence = snapshot.get("sequence-number")
        if b.m["format-version"] >= 2 and isinstance(sequence, int):
            if sequence <= int(b.m.get("last-sequence-number") or 0) and snapshot.get("parent-snapshot-id"):
                raise CommitFailed(f"snapshot sequence number {sequence} is not above the table's")
            b.m["last-sequence-number"] = sequence
        if b.m["format-version"] >= 3:
            added = snapshot.get("added-rows")
            if isinstance(added, int):
                snapshot.setdefault("first-row-id", b.m.get("next-row-id", 0))
                b.m["next-row-id"] = int(b.m.get("next-row-id", 0)) + added
        b.entries("snapshots").append(snapshot)
        if isinstance(snapshot.get("timestamp-ms"), int):
            b.now_ms = max(b.now_ms, snapshot["timestamp-ms"])


@dataclass(frozen=True, slots=True)
class SetSnapshotRef:
    """Moving main moves the table's current snapshot (and logs it)."""

    ref_name: str
    snapshot_id: int
    type: str = "branch"
    max_ref_age_ms: int | None = None
    max_snapshot_age_ms: int | None = None
    min_snapshots_to_keep: int | None = None
    action: ClassVar[str] = "set-snapshot-ref"

    @classmethod
    def parse(cls, u: Json) -> SetSnapshotRef:
        name, snapshot_id = required(u, "ref-name", str), required(u, "snapshot-id", int)
        kind = u.get("type", "branch")
        if kind not in REF_TYPES:
            raise BadRequest(f"unknown ref type {kind!r}")
        return cls(name, snapshot_id, kind, *(optional_int(u, option) for option in _REF_OPTIONS))

    def apply(self, b: MetadataBuilder) -> None:
        if self.snapshot_id not in b.ids("snapshots", "snapshot-id"):
            raise BadRequest(f"cannot set {self.ref_name} to unknown snapshot {self.snapshot_id}")
        ref: Json = {"snapshot-id": self.snapshot_id, "type": self.type}
        options = (self.max_ref_age_ms, self.max_snapshot_age_ms, self.min_snapshots_to_keep)
        ref.update({name: value for name, value in zip(_REF_OPTIONS, options, strict=True) if value is not None})
        b.m.setdefault("refs", {})[self.ref_name] = ref
        if self.ref_name == "main":
            b.m["current-snapshot-id"] = self.snapshot_id
            b.entries("snapshot-log").append({"timestamp-ms": b.now_ms, "snapshot-id": self.snapshot_id})


@dataclass(frozen=True, slots=True)
class RemoveSnapshots:
    """With them go the refs at them, their log entries and their statistics."""

    snapshot_ids: tuple[int, ...]
    action: ClassVar[str] = "remove-snapshots"

    @classmethod
    def parse(cls, u: Json) -> RemoveSnapshots:
        return cls(tuple(items(u, "snapshot-ids", int)))

    def apply(self, b: MetadataBuilder) -> None:
        removed = set(self.snapshot_ids)
        b.m["snapshots"] = [s for s in b.entries("snapshots") if s.get("snapshot-id") not in removed]
        refs = b.m.setdefault("refs", {})
        for name in [n for n, r in refs.items() if r.get("snapshot-id") in removed]:
            b.remove_ref(name)
        b.m["snapshot-log"] = [e for e in b.entries("snapshot-log") if e.get("snapshot-id") not in removed]
        for name in ("statistics", "partition-statistics"):
            b.m[name] = [s for s in b.entries(name) if s.get("snapshot-id") not in removed]


@dataclass(frozen=True, slots=True)
class RemoveSnapshotRef:
    ref_name: str
    action: ClassVar[str] = "remove-snapshot-ref"

    @classmethod
    def parse(cls, u: Json) -> RemoveSnapshotRef:
        return cls(required(u, "ref-name", str))

    def apply(self, b: MetadataBuilder) -> None:
        b.remove_ref(self.ref_name)


@dataclass(frozen=True, slots=True)
class SetStatistics:
    """Replaces the statistics file of its snapshot."""

    statistics: Json
    action: ClassVar[str] = "set-statistics"

    @classmethod
    def parse(cls, u: Json) -> SetStatistics:
        statistics = required(u, "statistics", dict)
        required(statistics, "snapshot-id", int)
        return cls(statistics)

    def apply(self, b: MetadataBuilder) -> None:
        b.replace_by_snapshot("statistics", copy.deepcopy(self.statistics), int(self.statistics["snapshot-id"]))


@dataclass(frozen=True, slots=True)
class RemoveStatistics:
    snapshot_id: int
    action: ClassVar[str] = "remove-statistics"

    @classmethod
    def parse(cls, u: Json) -> RemoveStatistics:
        return cls(required(u, "snapshot-id", int))

    def apply(self, b: MetadataBuilder) -> None:
        b.drop_by_snapshot("statistics", self.snapshot_id)


@dataclass(frozen=True, slots=True)
class SetPartitionStatistics:
    partition_statistics: Json
    action: ClassVar[str] = "set-partition-statistics"

    @classmethod
    def parse(cls, u: Json) -> SetPartitionStatistics:
        statistics = required(u, "partition-statistics", dict)
        required(statistics, "snapshot-id", int)
        return cls(statistics)

    def apply(self, b: MetadataBuilder) -> None:
        statistics = copy.deepcopy(self.partition_statistics)
        b.replace_by_snapshot("partition-statistics", statistics, int(statistics["snapshot-id"]))


@dataclass(frozen=True, slots=True)
class RemovePartitionStatistics:
    snapshot_id: int
    action: ClassVar[str] = "remove-partition-statistics"

    @classmethod
    def parse(cls, u: Json) -> RemovePartitionStatistics:
        return cls(required(u, "snapshot-id", int))

    def apply(self, b: MetadataBuilder) -> None:
        b.drop_by_snapshot("partition-statistics", self.snapshot_id)
