"""New table metadata, as the catalog writes it for a create (Iceberg's TableMetadata.newTableMetadata): the
schema's field ids assigned afresh (the client's ids are its own), the partition spec and sort order rebound to
them, and the table's first metadata JSON. Tables are JSON objects here (``Json``): the catalog reads and writes
the spec's metadata file format and keeps every field it does not know as it came."""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping

from chalicelib.graveler.runs.plan_json import Json

from .errors import BadRequest

__all__ = [
    "PARTITION_FIELD_ID_START",
    "Json",
    "empty_metadata",
    "format_version",
    "fresh_schema",
    "highest_field_id",
    "new_table_metadata",
    "rebind_sort_order",
    "rebind_spec",
]

# Partition field ids start at 1000 (the spec), so last-partition-id starts at 999.
PARTITION_FIELD_ID_START = 1000
SUPPORTED_FORMAT_VERSIONS = (1, 2, 3)
DEFAULT_FORMAT_VERSION = 2
# Table properties the catalog reads at create and does not store (Iceberg's reserved properties).
RESERVED_PROPERTIES = ("format-version",)


def _object(value: object, what: str) -> Json:
    if not isinstance(value, dict):
        raise BadRequest(f"{what} must be a JSON object")
    return value


def _fields(struct: Json, what: str) -> list[Json]:
    fields = struct.get("fields")
    if not isinstance(fields, list):
        raise BadRequest(f"{what} needs a list of fields")
    return [_object(f, f"a field of {what}") for f in fields]


def _assign(type_: object, next_id: Callable[[], int], ids: dict[int, int]) -> object:
    """A copy of ``type_`` with every nested field id replaced, Iceberg's order: a struct's own fields first, then
    what nests in each; a list's element and a map's key and value before what nests in them."""
    if isinstance(type_, str):
        return type_
    node = _object(type_, "a type")
    kind = node.get("type")
    if kind == "struct":
        fields = _fields(node, "a struct")
        new_ids = []
        for field in fields:
            new_ids.append(next_id())
            if isinstance(field.get("id"), int):
                ids[field["id"]] = new_ids[-1]
        out = []
        for field, new_id in zip(fields, new_ids, strict=True):
            out.append({**field, "id": new_id, "type": _assign(field.get("type"), next_id, ids)})
        return {**node, "fields": out}
    if kind == "list":
        element_id = next_id()
        if isinstance(node.get("element-id"), int):
            ids[node["element-id"]] = element_id
        return {**node, "element-id": element_id, "element": _assign(node.get("element"), next_id, ids)}
    if kind == "map":
        key_id, value_id = next_id(), next_id()
        for name, new in (("key-id", key_id), ("value-id", value_id)):
            if isinstance(node.get(name), int):
                ids[node[name]] = new
        return {
            **node,
            "key-id": key_id,
            "value-id": value_id,
            "key": _assign(node.get("key"), next_id, ids),
            "value": _assign(node.get("value"), next_id, ids),
        }
    raise BadRequest(f"unknown nested type {kind!r}")


def fresh_schema(schema: object, schema_id: int = 0) -> tuple[Json, int, dict[int, int]]:
    """(the schema with ids 1..n, the highest id, old id -> new id)."""
    node = _object(schema, "schema")
    if node.get("type", "struct") != "struct":
        raise BadRequest("a schema is a struct")
    counter = [0]

    def next_id() -> int:
        counter[0] += 1
        return counter[0]

    ids: dict[int, int] = {}
    assigned = _assign({**node, "type": "struct"}, next_id, ids)
    assert isinstance(assigned, dict)
    identifiers = node.get("identifier-field-ids") or []
    if not isinstance(identifiers, list):
        raise BadRequest("identifier-field-ids must be a list")
    try:
        assigned["identifier-field-ids"] = [ids[i] for i in identifiers]
    except (KeyError, TypeError):
        raise BadRequest("identifier-field-ids names a field the schema lacks") from None
    assigned["schema-id"] = schema_id
    return assigned, counter[0], ids


def highest_field_id(type_: object) -> int:
    """The highest field id anywhere in a schema or nested type (0 for a primitive)."""
    if not isinstance(type_, dict):
        return 0
    found = 0
    for name in ("id", "element-id", "key-id", "value-id"):
        value = type_.get(name)
        if isinstance(value, int):
            found = max(found, value)
    for field in type_.get("fields") or []:
        if isinstance(field, dict):
            found = max(found, highest_field_id(field), highest_field_id(field.get("type")))
    for name in ("element", "key", "value"):
        found = max(found, highest_field_id(type_.get(name)))
    return found


def rebind_spec(spec: object, ids: Mapping[int, int], spec_id: int = 0) -> tuple[Json, int]:
    """The partition spec with its source ids mapped to the fresh schema and field ids from 1000; (spec, last
    partition id)."""
    node = _object(spec if spec is not None else {"fields": []}, "partition-spec")
    out, last = [], PARTITION_FIELD_ID_START - 1
    for field in _fields(node, "partition-spec"):
        source = field.get("source-id")
        if not isinstance(source, int) or source not in ids:
            raise BadRequest(f"partition field {field.get('name')!r} names a source column the schema lacks")
        last += 1
        out.append({**field, "source-id": ids[source], "field-id": last})
    return {"spec-id": spec_id, "fields": out}, last


def rebind_sort_order(order: object, ids: Mapping[int, int]) -> Json:
    """The sort order with its source ids mapped to the fresh schema: order id 1, or 0 when unsorted."""
    node = _object(order if order is not None else {"fields": []}, "write-order")
    out = []
    for field in _fields(node, "write-order"):
        source = field.get("source-id")
        if not isinstance(source, int) or source not in ids:
            raise BadRequest("a sort field names a source column the schema lacks")
        out.append({**field, "source-id": ids[source]})
    return {"order-id": 1 if out else 0, "fields": out}


def format_version(properties: Mapping[str, str]) -> int:
    raw = properties.get("format-version", str(DEFAULT_FORMAT_VERSION))
    try:
        version = int(raw)
    except ValueError:
        raise BadRequest(f"format-version {raw!r} is not a number") from None
    if version not in SUPPORTED_FORMAT_VERSIONS:
        raise BadRequest(f"format-version {version} is not supported (1, 2 or 3)")
    return version


def _no_history() -> Json:
    """The fields of a table that has no snapshot, statistics or earlier metadata yet."""
    return {
        "current-snapshot-id": None,
        "refs": {},
        "snapshots": [],
        "snapshot-log": [],
        "metadata-log": [],
        "statistics": [],
        "partition-statistics": [],
    }


def new_table_metadata(request: Json, location: str, table_uuid: str, now_ms: int) -> Json:
    """The first metadata of a table from a CreateTableRequest's schema, partition-spec, write-order and
    properties."""
    properties = request.get("properties") or {}
    if not isinstance(properties, dict) or not all(isinstance(v, str) for v in properties.values()):
        raise BadRequest("properties must map strings to strings")
    version = format_version(properties)
    schema, last_column_id, ids = fresh_schema(request.get("schema"))
    spec, last_partition_id = rebind_spec(request.get("partition-spec"), ids)
    order = rebind_sort_order(request.get("write-order"), ids)
    metadata: Json = {
        "format-version": version,
        "table-uuid": table_uuid,
        "location": location,
        "last-sequence-number": 0,
        "last-updated-ms": now_ms,
        "last-column-id": last_column_id,
        "current-schema-id": 0,
        "schemas": [schema],
        "default-spec-id": 0,
        "partition-specs": [spec],
        "last-partition-id": last_partition_id,
        "default-sort-order-id": order["order-id"],
        "sort-orders": [order],
        "properties": {k: v for k, v in properties.items() if k not in RESERVED_PROPERTIES},
        **_no_history(),
    }
    if version == 1:
        metadata["schema"] = copy.deepcopy(schema)
        metadata["partition-spec"] = copy.deepcopy(spec["fields"])
    if version >= 3:
        metadata["next-row-id"] = 0
    return metadata


def empty_metadata(table_uuid: str, location: str, now_ms: int) -> Json:
    """What a staged create's updates start from (assign-uuid, upgrade-format-version, add-schema, ...)."""
    return {
        "format-version": 1,
        "table-uuid": table_uuid,
        "location": location,
        "last-sequence-number": 0,
        "last-updated-ms": now_ms,
        "last-column-id": 0,
        "current-schema-id": -1,
        "schemas": [],
        "default-spec-id": -1,
        "partition-specs": [],
        "last-partition-id": PARTITION_FIELD_ID_START - 1,
        "default-sort-order-id": -1,
        "sort-orders": [],
        "properties": {},
        **_no_history(),
    }
