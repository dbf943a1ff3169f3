"""A table commit's updates (the spec's TableUpdate), applied the way the spec and Iceberg's
TableMetadata.Builder do: each is read once from the request into its frozen record (``parse_updates``:
BadRequest for an unknown action or a field of the wrong shape), then applied in order, each by its one
``apply``, to a copy of the metadata the table's pointer names now (definition_updates.py, snapshot_updates.py).
The result is the next metadata file; nothing here reads or writes storage. The requirements checked before are
requirements.py's."""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence

from .builder import MetadataBuilder
from .definition_updates import (
    AddEncryptionKey,
    AddSchema,
    AddSortOrder,
    AddSpec,
    AssignUuid,
    RemoveEncryptionKey,
    RemovePartitionSpecs,
    RemoveProperties,
    RemoveSchemas,
    SetCurrentSchema,
    SetDefaultSortOrder,
    SetDefaultSpec,
    SetLocation,
    SetProperties,
    UpgradeFormatVersion,
)
from .errors import BadRequest
from .metadata import Json
from .snapshot_updates import (
    AddSnapshot,
    RemovePartitionStatistics,
    RemoveSnapshotRef,
    RemoveSnapshots,
    RemoveStatistics,
    SetPartitionStatistics,
    SetSnapshotRef,
    SetStatistics,
)

__all__ = ["TableUpdate", "apply_updates", "parse_update", "parse_updates"]

TableUpdate = (
    AssignUuid
    | UpgradeFormatVersion
    | AddSchema
    | SetCurrentSchema
    | AddSpec
    | SetDefaultSpec
    | AddSortOrder
    | SetDefaultSortOrder
    | AddSnapshot
    | SetSnapshotRef
    | RemoveSnapshots
    | RemoveSnapshotRef
    | SetLocation
    | SetProperties
    | RemoveProperties
    | SetStatistics
    | RemoveStatistics
    | SetPartitionStatistics
    | RemovePartitionStatistics
    | RemovePartitionSpecs
    | RemoveSchemas
    | AddEncryptionKey
    | RemoveEncryptionKey
)

# Each action's parser, by the name the spec gives it.
_PARSERS: dict[str, Callable[[Json], TableUpdate]] = {
    cls.action: cls.parse
    for cls in (
        AssignUuid,
        UpgradeFormatVersion,
        AddSchema,
        SetCurrentSchema,
        AddSpec,
        SetDefaultSpec,
        AddSortOrder,
        SetDefaultSortOrder,
        AddSnapshot,
        SetSnapshotRef,
        RemoveSnapshots,
        RemoveSnapshotRef,
        SetLocation,
        SetProperties,
        RemoveProperties,
        SetStatistics,
        RemoveStatistics,
        SetPartitionStatistics,
        RemovePartitionStatistics,
        RemovePartitionSpecs,
        RemoveSchemas,
        AddEncryptionKey,
        RemoveEncryptionKey,
    )
}


def parse_update(update: object) -> TableUpdate:
    if not isinstance(update, dict):
        raise BadRequest("updates must be a list of objects")
    parse = _PARSERS.get(str(update.get("action")))
    if parse is None:
        raise BadRequest(f"unknown update action {update.get('action')!r}")
    return parse(update)


def parse_updates(value: object) -> list[TableUpdate]:
    """A request's ``updates`` (None or missing: none)."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise BadRequest("updates must be a list of objects")
    return [parse_update(u) for u in value]


def apply_updates(metadata: Json, updates: Sequence[TableUpdate], now_ms: int) -> Json:
    """A new metadata with the updates applied in order; BadRequest for an update that does not apply to it."""
    builder = MetadataBuilder(metadata, now_ms)
    for update in updates:
        try:
            update.apply(builder)
        except (AttributeError, KeyError, TypeError, ValueError, AssertionError) as e:
            # The table's metadata (a registered file may hold anything) is not of the spec's shape.
            raise BadRequest(f"{update.action} does not apply to the table's metadata: {e!r}") from None
    builder.m["last-updated-ms"] = builder.now_ms
    if builder.m["format-version"] == 1 and builder.m.get("schemas"):
        current = [s for s in builder.m["schemas"] if s.get("schema-id") == builder.m.get("current-schema-id")]
        if current:
            builder.m["schema"] = copy.deepcopy(current[0])
    return builder.m
