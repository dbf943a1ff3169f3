"""Each of a commit's updates and requirements as its typed record: read once from the request (the spec's field
names into the record's fields; a field of the wrong shape is BadRequest, an unknown action or type too), then
applied or checked by its one method."""

from __future__ import annotations

from typing import Any

import pytest

from chalicelib.iceberg import definition_updates as d
from chalicelib.iceberg import requirements as r
from chalicelib.iceberg import snapshot_updates as s
from chalicelib.iceberg import updates
from chalicelib.iceberg.builder import MetadataBuilder
from chalicelib.iceberg.errors import BadRequest, CommitFailed
from chalicelib.iceberg.metadata import new_table_metadata

SCHEMA = {"type": "struct", "fields": [{"id": 1, "name": "id", "type": "long", "required": True}]}
SNAPSHOT = {"snapshot-id": 7, "sequence-number": 1, "timestamp-ms": 9000, "manifest-list": "m.avro"}
STATS = {"snapshot-id": 7, "statistics-path": "s.puffin", "file-size-in-bytes": 1}
PARTITION_STATS = {"snapshot-id": 7, "statistics-path": "p.parquet", "file-size-in-bytes": 1}
KEY = {"key-id": "k1", "encrypted-key-metadata": "AA=="}

# Every action the catalog applies: as a request sends it, and the record it is read into.
UPDATES: list[tuple[dict[str, Any], updates.TableUpdate]] = [
    ({"action": "assign-uuid", "uuid": "u-2"}, d.AssignUuid("u-2")),
    ({"action": "upgrade-format-version", "format-version": 3}, d.UpgradeFormatVersion(3)),
    ({"action": "add-schema", "schema": SCHEMA, "last-column-id": 4}, d.AddSchema(SCHEMA, 4)),
    ({"action": "set-current-schema", "schema-id": -1}, d.SetCurrentSchema(-1)),
    ({"action": "add-spec", "spec": {"fields": []}}, d.AddSpec({"fields": []})),
    ({"action": "set-default-spec", "spec-id": 0}, d.SetDefaultSpec(0)),
    ({"action": "add-sort-order", "sort-order": {"fields": []}}, d.AddSortOrder({"fields": []})),
    ({"action": "set-default-sort-order", "sort-order-id": 0}, d.SetDefaultSortOrder(0)),
    ({"action": "remove-partition-specs", "spec-ids": [3]}, d.RemovePartitionSpecs((3,))),
    ({"action": "remove-schemas", "schema-ids": [3]}, d.RemoveSchemas((3,))),
    ({"action": "set-location", "location": "s3://r/main/x/"}, d.SetLocation("s3://r/main/x/")),
    ({"action": "set-properties", "updates": {"a": "1"}}, d.SetProperties({"a": "1"})),
    ({"action": "remove-properties", "removals": ["a"]}, d.RemoveProperties(("a",))),
    ({"action": "add-encryption-key", "encryption-key": KEY}, d.AddEncryptionKey(KEY)),
    ({"action": "remove-encryption-key", "key-id": "k1"}, d.RemoveEncryptionKey("k1")),
    ({"action": "add-snapshot", "snapshot": SNAPSHOT}, s.AddSnapshot(SNAPSHOT)),
    (
        {"action": "set-snapshot-ref", "ref-name": "main", "type": "branch", "snapshot-id": 7},
        s.SetSnapshotRef("main", 7, "branch"),
    ),
    (
        {"action": "set-snapshot-ref", "ref-name": "t", "type": "tag", "snapshot-id": 7, "max-ref-age-ms": 5},
        s.SetSnapshotRef("t", 7, "tag", max_ref_age_ms=5),
    ),
    ({"action": "remove-snapshots", "snapshot-ids": [7]}, s.RemoveSnapshots((7,))),
    ({"action": "remove-snapshot-ref", "ref-name": "main"}, s.RemoveSnapshotRef("main")),
    ({"action": "set-statistics", "statistics": STATS}, s.SetStatistics(STATS)),
    ({"action": "remove-statistics", "snapshot-id": 7}, s.RemoveStatistics(7)),
    (
        {"action": "set-partition-statistics", "partition-statistics": PARTITION_STATS},
        s.SetPartitionStatistics(PARTITION_STATS),
    ),
    ({"action": "remove-partition-statistics", "snapshot-id": 7}, s.RemovePartitionStatistics(7)),
]


def table() -> dict[str, Any]:
    return new_table_metadata({"schema": SCHEMA}, "s3://r/main/t", "u-1", 1000)


@pytest.mark.parametrize(("raw", "record"), UPDATES, ids=lambda v: v.get("action") if isinstance(v, dict) else "")
def test_each_update_is_read_into_its_record(raw: dict[str, Any], record: updates.TableUpdate) -> None:
    assert updates.parse_update(raw) == record
    assert record.action == raw["action"]


def test_every_action_the_catalog_applies_has_a_case() -> None:
    assert {raw["action"] for raw, _ in UPDATES} == set(updates._PARSERS)


@pytest.mark.parametrize(("raw", "record"), UPDATES, ids=lambda v: v.get("action") if isinstance(v, dict) else "")
def test_each_update_without_its_fields_is_a_bad_request(raw: dict[str, Any], record: updates.TableUpdate) -> None:
    if isinstance(record, d.AddSchema | d.AddSpec | d.AddSortOrder) or len(raw) == 1:
        wrong: dict[str, Any] = {"action": raw["action"], **{k: 12 for k in raw if k != "action"}}
    else:
        wrong = {"action": raw["action"]}
    with pytest.raises(BadRequest, match=raw["action"]):
        updates.parse_update(wrong)


def test_unknown_or_malformed_updates_are_bad_requests() -> None:
    for bad, why in [
        ({"action": "no-such-action"}, "unknown update action 'no-such-action'"),
        ({}, "unknown update action None"),
        ("set-location", "must be a list of objects"),
        ({"action": "set-properties", "updates": {"a": 1}}, "property values must be strings"),
        ({"action": "set-snapshot-ref", "ref-name": "x", "type": "leaf", "snapshot-id": 1}, "unknown ref type"),
        ({"action": "set-default-spec", "spec-id": True}, "set-default-spec needs spec-id"),
        ({"action": "add-spec", "spec": {"fields": [3]}}, "spec.fields"),
        ({"action": "add-snapshot", "snapshot": {}}, "snapshot-id"),
        ({"action": "remove-snapshots", "snapshot-ids": ["1"]}, "a list of int"),
    ]:
        with pytest.raises(BadRequest, match=why):
            updates.parse_update(bad)
    with pytest.raises(BadRequest, match="updates must be a list"):
        updates.parse_updates({"action": "set-location"})
    assert updates.parse_updates(None) == []


def applied(*raw: dict[str, Any], metadata: dict[str, Any] | None = None) -> dict[str, Any]:
    return updates.apply_updates(metadata or table(), updates.parse_updates(list(raw)), 2000)


def test_each_definition_update_applies_to_the_metadata() -> None:
    schema2 = {**SCHEMA, "fields": [*SCHEMA["fields"], {"id": 2, "name": "v", "type": "string", "required": False}]}
    spec = {"fields": [{"source-id": 1, "name": "b", "transform": "bucket[2]"}]}
    order = {"fields": [{"source-id": 1, "transform": "identity", "direction": "asc", "null-order": "nulls-first"}]}
    m = applied(
        {"action": "assign-uuid", "uuid": "u-2"},
        {"action": "upgrade-format-version", "format-version": 3},
        {"action": "add-schema", "schema": schema2},
        {"action": "set-current-schema", "schema-id": -1},
        {"action": "add-spec", "spec": spec},
        {"action": "set-default-spec", "spec-id": -1},
        {"action": "add-sort-order", "sort-order": order},
        {"action": "set-default-sort-order", "sort-order-id": -1},
        {"action": "set-location", "location": "s3://r/main/x/"},
        {"action": "set-properties", "updates": {"a": "1", "b": "2"}},
        {"action": "remove-properties", "removals": ["b"]},
        {"action": "add-encryption-key", "encryption-key": KEY},
    )
    assert m["table-uuid"] == "u-2" and m["format-version"] == 3 and m["next-row-id"] == 0
    assert m["current-schema-id"] == 1 and m["last-column-id"] == 2
    assert m["default-spec-id"] == 1 and m["partition-specs"][1]["fields"][0]["field-id"] == 1000
    assert m["default-sort-order-id"] == 1 and m["sort-orders"][1]["fields"] == order["fields"]
    assert m["location"] == "s3://r/main/x" and m["properties"] == {"a": "1"}
    assert m["encryption-keys"] == [KEY] and m["last-updated-ms"] == 2000
    trimmed = applied(
        {"action": "remove-schemas", "schema-ids": [0]},
        {"action": "remove-partition-specs", "spec-ids": [0]},
        {"action": "remove-encryption-key", "key-id": "k1"},
        metadata=m,
    )
    assert [x["schema-id"] for x in trimmed["schemas"]] == [1]
    assert [x["spec-id"] for x in trimmed["partition-specs"]] == [1] and trimmed["encryption-keys"] == []
    # The records are the request's: applying one does not change it, nor the metadata it was given.
    assert SCHEMA["fields"] == [{"id": 1, "name": "id", "type": "long", "required": True}]
    assert "schema-id" not in SCHEMA and len(m["schemas"]) == 2
    for bad, why in [
        ({"action": "upgrade-format-version", "format-version": 2}, "cannot downgrade"),
        ({"action": "remove-schemas", "schema-ids": [1]}, "current schema"),
        ({"action": "remove-partition-specs", "spec-ids": [1]}, "default partition spec"),
        ({"action": "set-default-sort-order", "sort-order-id": 9}, "does not exist"),
    ]:
        with pytest.raises(BadRequest, match=why):
            applied(bad, metadata=m)


def test_each_snapshot_update_applies_to_the_metadata() -> None:
    m = applied(
        {"action": "add-snapshot", "snapshot": SNAPSHOT},
        {"action": "set-snapshot-ref", "ref-name": "main", "type": "branch", "snapshot-id": 7},
        {"action": "set-snapshot-ref", "ref-name": "t", "type": "tag", "snapshot-id": 7, "max-ref-age-ms": 5},
        {"action": "set-statistics", "statistics": STATS},
        {"action": "set-partition-statistics", "partition-statistics": PARTITION_STATS},
    )
    assert m["current-snapshot-id"] == 7 and m["last-sequence-number"] == 1 and m["last-updated-ms"] == 9000
    assert m["refs"] == {
        "main": {"snapshot-id": 7, "type": "branch"},
        "t": {"snapshot-id": 7, "type": "tag", "max-ref-age-ms": 5},
    }
    assert m["snapshot-log"] == [{"timestamp-ms": 9000, "snapshot-id": 7}]
    assert m["statistics"] == [STATS] and m["partition-statistics"] == [PARTITION_STATS]
    cleared = applied(
        {"action": "remove-statistics", "snapshot-id": 7},
        {"action": "remove-partition-statistics", "snapshot-id": 7},
        {"action": "remove-snapshot-ref", "ref-name": "t"},
        metadata=m,
    )
    assert cleared["statistics"] == [] and cleared["partition-statistics"] == [] and set(cleared["refs"]) == {"main"}
    expired = applied({"action": "remove-snapshots", "snapshot-ids": [7]}, metadata=m)
    assert expired["snapshots"] == [] and expired["refs"] == {} and expired["current-snapshot-id"] is None
    assert expired["snapshot-log"] == [] and expired["statistics"] == []
    with pytest.raises(BadRequest, match="already exists"):
        applied({"action": "add-snapshot", "snapshot": SNAPSHOT}, metadata=m)
    with pytest.raises(BadRequest, match="unknown snapshot"):
        applied({"action": "set-snapshot-ref", "ref-name": "main", "snapshot-id": 8}, metadata=m)


def test_an_update_that_meets_malformed_metadata_is_a_bad_request() -> None:
    broken = {**table(), "schemas": [{"no-id": True}]}
    with pytest.raises(BadRequest, match="set-current-schema does not apply to the table's metadata"):
        applied({"action": "set-current-schema", "schema-id": 0}, metadata=broken)


def test_the_builder_names_the_last_added_ones() -> None:
    builder = MetadataBuilder(table(), 0)
    d.AddSchema(table()["schemas"][0]).apply(builder)  # equal to schema 0: reused
    assert builder.last_schema == 0 and len(builder.m["schemas"]) == 1
    with pytest.raises(BadRequest, match="none was added"):
        d.SetDefaultSpec(-1).apply(builder)


# Every requirement type: as a request sends it, its record, and metadata it holds for and fails for.
REQUIREMENTS: list[tuple[dict[str, Any], r.TableRequirement, dict[str, Any]]] = [
    ({"type": "assert-table-uuid", "uuid": "u-1"}, r.AssertTableUuid("u-1"), {"table-uuid": "u-9"}),
    (
        {"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": None},
        r.AssertRefSnapshotId("main", None),
        {"current-snapshot-id": 3},
    ),
    (
        {"type": "assert-ref-snapshot-id", "ref": "t", "snapshot-id": 7},
        r.AssertRefSnapshotId("t", 7),
        {"refs": {"t": {"snapshot-id": 8, "type": "tag"}}},
    ),
    (
        {"type": "assert-last-assigned-field-id", "last-assigned-field-id": 1},
        r.AssertLastAssignedFieldId(1),
        {"last-column-id": 2},
    ),
    (
        {"type": "assert-current-schema-id", "current-schema-id": 0},
        r.AssertCurrentSchemaId(0),
        {"current-schema-id": 1},
    ),
    (
        {"type": "assert-last-assigned-partition-id", "last-assigned-partition-id": 999},
        r.AssertLastAssignedPartitionId(999),
        {"last-partition-id": 1000},
    ),
    ({"type": "assert-default-spec-id", "default-spec-id": 0}, r.AssertDefaultSpecId(0), {"default-spec-id": 1}),
    (
        {"type": "assert-default-sort-order-id", "default-sort-order-id": 0},
        r.AssertDefaultSortOrderId(0),
        {"default-sort-order-id": 1},
    ),
]


@pytest.mark.parametrize(
    ("raw", "record", "other"), REQUIREMENTS, ids=lambda v: v.get("type", "") if isinstance(v, dict) else ""
)
def test_each_requirement_is_read_and_checked(
    raw: dict[str, Any], record: r.TableRequirement, other: dict[str, Any]
) -> None:
    assert r.parse_requirement(raw) == record
    metadata = {**table(), "refs": {"t": {"snapshot-id": 7, "type": "tag"}}}
    record.check(metadata)
    with pytest.raises(CommitFailed, match="requirement failed"):
        record.check({**metadata, **other})
    with pytest.raises(CommitFailed, match="does not exist"):
        record.check(None)


def test_every_requirement_type_has_a_case() -> None:
    assert {raw["type"] for raw, _, _ in REQUIREMENTS} | {"assert-create"} == set(r._PARSERS)


def test_assert_create_holds_only_for_a_table_that_does_not_exist() -> None:
    assert r.parse_requirements([{"type": "assert-create"}]) == [r.AssertCreate()]
    r.AssertCreate().check(None)
    with pytest.raises(CommitFailed, match="already exists"):
        r.AssertCreate().check(table())


def test_unknown_or_malformed_requirements_are_bad_requests() -> None:
    for bad, why in [
        ({"type": "assert-nothing"}, "unknown requirement type 'assert-nothing'"),
        ({}, "unknown requirement type None"),
        (["assert-create"], "must be a list of objects"),
        ({"type": "assert-ref-snapshot-id", "snapshot-id": 1}, "needs ref"),
        ({"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": "1"}, "snapshot-id"),
        ({"type": "assert-table-uuid"}, "assert-table-uuid needs uuid"),
        ({"type": "assert-current-schema-id", "current-schema-id": "0"}, "current-schema-id"),
    ]:
        with pytest.raises(BadRequest, match=why):
            r.parse_requirements([bad])
    assert r.parse_requirements(None) == []


def test_requirements_are_checked_in_order() -> None:
    first = [r.AssertTableUuid("u-9"), r.AssertCreate()]
    with pytest.raises(CommitFailed, match="uuid"):
        r.check_requirements(table(), first)
