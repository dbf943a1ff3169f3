"""The catalog's metadata logic, pure: fresh ids on create, requirements, and each update the spec defines."""

from __future__ import annotations

from typing import Any

import pytest

from chalicelib.iceberg import requirements, updates
from chalicelib.iceberg.errors import BadRequest, CommitFailed
from chalicelib.iceberg.metadata import empty_metadata, fresh_schema, new_table_metadata


def apply_updates(metadata: dict[str, Any], raw: list[Any], now_ms: int) -> dict[str, Any]:
    """The updates as a request sends them, parsed and applied (a malformed one fails either way: BadRequest)."""
    return updates.apply_updates(metadata, updates.parse_updates(raw), now_ms)


def check_requirements(metadata: dict[str, Any] | None, raw: list[Any]) -> None:
    requirements.check_requirements(metadata, requirements.parse_requirements(raw))


NESTED = {
    "type": "struct",
    "fields": [
        {"id": 10, "name": "id", "type": "long", "required": True},
        {
            "id": 11,
            "name": "tags",
            "type": {"type": "list", "element-id": 12, "element": "string", "element-required": False},
            "required": False,
        },
        {
            "id": 13,
            "name": "attrs",
            "type": {
                "type": "map",
                "key-id": 14,
                "key": "string",
                "value-id": 15,
                "value": {"type": "struct", "fields": [{"id": 16, "name": "v", "type": "int", "required": False}]},
                "value-required": False,
            },
            "required": False,
        },
    ],
    "identifier-field-ids": [10],
}


def test_fresh_ids_number_a_structs_fields_before_what_nests_in_them() -> None:
    schema, last, ids = fresh_schema(NESTED)
    fields = schema["fields"]
    assert [f["id"] for f in fields] == [1, 2, 3]
    assert fields[1]["type"]["element-id"] == 4
    assert (fields[2]["type"]["key-id"], fields[2]["type"]["value-id"]) == (5, 6)
    assert fields[2]["type"]["value"]["fields"][0]["id"] == 7
    assert last == 7 and schema["identifier-field-ids"] == [1] and schema["schema-id"] == 0
    assert ids == {10: 1, 11: 2, 13: 3, 12: 4, 14: 5, 15: 6, 16: 7}


def test_new_table_metadata_rebinds_spec_and_order() -> None:
    request = {
        "schema": NESTED,
        "partition-spec": {
            "spec-id": 3,
            "fields": [{"source-id": 10, "field-id": 5, "name": "b", "transform": "bucket[4]"}],
        },
        "write-order": {
            "order-id": 7,
            "fields": [{"source-id": 10, "transform": "identity", "direction": "asc", "null-order": "nulls-first"}],
        },
        "properties": {"format-version": "3", "owner": "me"},
    }
    metadata = new_table_metadata(request, "s3://r/main/t", "u-1", 1000)
    assert metadata["format-version"] == 3 and metadata["next-row-id"] == 0
    assert metadata["partition-specs"] == [
        {"spec-id": 0, "fields": [{"source-id": 1, "field-id": 1000, "name": "b", "transform": "bucket[4]"}]}
    ]
    assert metadata["last-partition-id"] == 1000
    assert metadata["sort-orders"][0]["order-id"] == 1 and metadata["sort-orders"][0]["fields"][0]["source-id"] == 1
    assert metadata["properties"] == {"owner": "me"}
    with pytest.raises(BadRequest, match="source column"):
        new_table_metadata(
            {**request, "partition-spec": {"fields": [{"source-id": 99, "name": "x", "transform": "identity"}]}},
            "l",
            "u",
            0,
        )
    v1 = new_table_metadata({"schema": NESTED, "properties": {"format-version": "1"}}, "l", "u", 0)
    assert v1["schema"]["fields"][0]["id"] == 1 and v1["partition-spec"] == []


def snapshot(snapshot_id: int, sequence: int, parent: int | None = None, **extra: Any) -> dict[str, Any]:
    return {
        "action": "add-snapshot",
        "snapshot": {
            "snapshot-id": snapshot_id,
            "parent-snapshot-id": parent,
            "sequence-number": sequence,
            "timestamp-ms": 5000 + sequence,
            "manifest-list": f"s3://r/main/t/metadata/snap-{snapshot_id}.avro",
            "summary": {"operation": "append"},
            **extra,
        },
    }


def main_ref(snapshot_id: int) -> dict[str, Any]:
    return {"action": "set-snapshot-ref", "ref-name": "main", "type": "branch", "snapshot-id": snapshot_id}


def base() -> dict[str, Any]:
    return new_table_metadata({"schema": NESTED}, "s3://r/main/t", "u-1", 1000)


def test_snapshots_refs_and_their_requirements() -> None:
    metadata = apply_updates(base(), [snapshot(1, 1), main_ref(1)], 2000)
    assert metadata["current-snapshot-id"] == 1 and metadata["last-sequence-number"] == 1
    assert metadata["snapshot-log"] == [{"timestamp-ms": 5001, "snapshot-id": 1}]
    assert metadata["last-updated-ms"] == 5001
    check_requirements(metadata, [{"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": 1}])
    with pytest.raises(CommitFailed):
        check_requirements(metadata, [{"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": None}])
    with pytest.raises(CommitFailed):
        apply_updates(metadata, [snapshot(2, 1, parent=1)], 3000)  # a sequence number not above the table's
    tagged = apply_updates(
        metadata,
        [
            snapshot(2, 2, parent=1),
            main_ref(2),
            {"action": "set-snapshot-ref", "ref-name": "t1", "type": "tag", "snapshot-id": 1},
        ],
        3000,
    )
    assert tagged["refs"]["t1"] == {"snapshot-id": 1, "type": "tag"}
    expired = apply_updates(tagged, [{"action": "remove-snapshots", "snapshot-ids": [1]}], 4000)
    assert [s["snapshot-id"] for s in expired["snapshots"]] == [2] and "t1" not in expired["refs"]
    unref = apply_updates(expired, [{"action": "remove-snapshot-ref", "ref-name": "main"}], 4000)
    assert unref["current-snapshot-id"] is None
    with pytest.raises(BadRequest, match="already exists"):
        apply_updates(tagged, [snapshot(2, 3)], 0)


def test_schemas_specs_and_orders_added_reused_and_selected() -> None:
    schema = {
        "type": "struct",
        "fields": [*NESTED["fields"], {"id": 20, "name": "n", "type": "int", "required": False}],
    }
    metadata = apply_updates(
        base(),
        [
            {"action": "add-schema", "schema": schema, "last-column-id": 20},
            {"action": "set-current-schema", "schema-id": -1},
            {"action": "add-spec", "spec": {"fields": [{"source-id": 20, "name": "n", "transform": "identity"}]}},
            {"action": "set-default-spec", "spec-id": -1},
            {
                "action": "add-sort-order",
                "sort-order": {
                    "order-id": 9,
                    "fields": [
                        {"source-id": 20, "transform": "identity", "direction": "desc", "null-order": "nulls-last"}
                    ],
                },
            },
            {"action": "set-default-sort-order", "sort-order-id": -1},
        ],
        2000,
    )
    assert metadata["current-schema-id"] == 1 and metadata["last-column-id"] == 20
    assert metadata["default-spec-id"] == 1 and metadata["partition-specs"][1]["fields"][0]["field-id"] == 1000
    assert metadata["last-partition-id"] == 1000
    assert metadata["default-sort-order-id"] == 1
    again = apply_updates(
        metadata, [{"action": "add-schema", "schema": schema}, {"action": "set-current-schema", "schema-id": -1}], 0
    )
    assert len(again["schemas"]) == 2 and again["current-schema-id"] == 1  # the same schema is reused
    check_requirements(
        again,
        [
            {"type": "assert-current-schema-id", "current-schema-id": 1},
            {"type": "assert-default-spec-id", "default-spec-id": 1},
        ],
    )
    with pytest.raises(BadRequest, match="current schema"):
        apply_updates(again, [{"action": "remove-schemas", "schema-ids": [1]}], 0)
    trimmed = apply_updates(
        again,
        [{"action": "remove-schemas", "schema-ids": [0]}, {"action": "remove-partition-specs", "spec-ids": [0]}],
        0,
    )
    assert [s["schema-id"] for s in trimmed["schemas"]] == [1] and len(trimmed["partition-specs"]) == 1
    with pytest.raises(BadRequest, match="last added"):
        apply_updates(base(), [{"action": "set-current-schema", "schema-id": -1}], 0)


def test_properties_location_statistics_and_format() -> None:
    metadata = apply_updates(
        base(),
        [
            {"action": "set-properties", "updates": {"a": "1", "b": "2"}},
            {"action": "remove-properties", "removals": ["b", "never"]},
            {"action": "set-location", "location": "s3://r/main/elsewhere/"},
            {"action": "upgrade-format-version", "format-version": 3},
            snapshot(1, 1, **{"added-rows": 5}),
            {
                "action": "set-statistics",
                "statistics": {
                    "snapshot-id": 1,
                    "statistics-path": "s",
                    "file-size-in-bytes": 1,
                    "file-footer-size-in-bytes": 1,
                    "blob-metadata": [],
                },
            },
        ],
        0,
    )
    assert metadata["properties"] == {"a": "1"} and metadata["location"] == "s3://r/main/elsewhere"
    assert metadata["format-version"] == 3 and metadata["next-row-id"] == 5
    assert metadata["snapshots"][0]["first-row-id"] == 0
    assert [s["snapshot-id"] for s in metadata["statistics"]] == [1]
    cleared = apply_updates(metadata, [{"action": "remove-statistics", "snapshot-id": 1}], 0)
    assert cleared["statistics"] == []
    for bad in (
        {"action": "set-properties", "updates": {"a": 1}},
        {"action": "upgrade-format-version", "format-version": 4},
        {"action": "set-snapshot-ref", "ref-name": "x", "type": "leaf", "snapshot-id": 1},
        {"action": "add-snapshot"},
        {"action": "set-default-spec", "spec-id": True},
    ):
        with pytest.raises(BadRequest):
            apply_updates(metadata, [bad], 0)


def test_a_staged_create_builds_from_empty_metadata() -> None:
    schema, _, _ = fresh_schema(NESTED)
    created = apply_updates(
        empty_metadata("u-0", "s3://r/main/t", 0),
        [
            {"action": "assign-uuid", "uuid": "u-9"},
            {"action": "upgrade-format-version", "format-version": 2},
            {"action": "add-schema", "schema": schema},
            {"action": "set-current-schema", "schema-id": -1},
            {"action": "add-spec", "spec": {"spec-id": 0, "fields": []}},
            {"action": "set-default-spec", "spec-id": -1},
            {"action": "add-sort-order", "sort-order": {"order-id": 0, "fields": []}},
            {"action": "set-default-sort-order", "sort-order-id": -1},
        ],
        0,
    )
    assert created["table-uuid"] == "u-9" and created["current-schema-id"] == 0 and created["last-column-id"] == 7
    assert created["default-spec-id"] == 0 and created["default-sort-order-id"] == 0
    check_requirements(None, [{"type": "assert-create"}])
    with pytest.raises(CommitFailed):
        check_requirements(created, [{"type": "assert-create"}])
    with pytest.raises(CommitFailed):
        check_requirements(None, [{"type": "assert-table-uuid", "uuid": "u-9"}])
    with pytest.raises(BadRequest, match="unknown requirement"):
        check_requirements(created, [{"type": "assert-nothing"}])
