"""The Iceberg REST catalog's namespace and table routes (the spec's Catalog API), each parse, one catalog call,
serialize. Namespaces arrive as path parameters with their levels joined by the unit separator (0x1F)."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from chalice import Response

from chalicelib.iceberg import Loaded, Namespace, TableName, bounds, page_size
from chalicelib.iceberg.errors import BadRequest

from .endpoint import json_response, no_content, raw_body, services
from .iceberg_endpoint import bp, caller, catalog, catalog_route
from .iceberg_endpoint import vendor as iceberg_vendor

__all__ = ["bp"]

NAMESPACES = "/namespaces"
NAMESPACE = NAMESPACES + "/{namespace}"
TABLES = NAMESPACE + "/tables"
TABLE = TABLES + "/{table}"


def _body() -> dict[str, Any]:
    body = bounds.loads(raw_body(bp.current_request) or b"{}", "the request body")
    if not isinstance(body, dict):
        raise BadRequest("the request body must be a JSON object")
    return body


def _query(name: str) -> str | None:
    params: dict[str, str] = dict(bp.current_request.query_params or {})
    return params.get(name)


def _page(key: str, items: list[Any], token: str | None) -> Response:
    return json_response({key: items, "next-page-token": token})


def _gateway_config() -> dict[str, str]:
    """What engines need to reach the files of a table without a root: the S3 gateway, path-style
    (LAKELET_ICEBERG_S3_ENDPOINT); nothing when the deployment does not say where it is (clients then configure
    s3.endpoint themselves)."""
    endpoint = services().settings.iceberg_s3_endpoint
    return {"s3.endpoint": endpoint, "s3.path-style-access": "true"} if endpoint else {}


def _access(name: TableName, root: str | None) -> tuple[dict[str, str], list[Any]]:
    """(table config, storage-credentials): for a table whose files are in the store, credentials for its root
    (read-only unless the caller may commit to it), vended whether or not the client's
    X-Iceberg-Access-Delegation asked (it cannot reach the files otherwise); for another, the gateway."""
    vendor = iceberg_vendor()
    if root is None or vendor is None:
        return _gateway_config(), []
    from chalicelib.iceberg.credentials import storage_credentials  # tables in the store only: not at cold start

    encoded = quote("\x1f".join(name.namespace.parts), safe="")
    refresh = f"v1/namespaces/{encoded}/tables/{quote(name.name, safe='')}/credentials"
    return storage_credentials(vendor, root, catalog().tables.may_write(caller(), name), refresh)


def _table_result(loaded: Loaded, only_referenced: bool = False) -> Response:
    metadata = loaded.rendered(only_referenced)
    config, credentials = _access(loaded.table, loaded.root)
    body = {"metadata-location": loaded.metadata_location(), "metadata": metadata, "config": config}
    return json_response(body | ({"storage-credentials": credentials} if credentials else {}))


@catalog_route(NAMESPACES, ["GET"])
def list_namespaces() -> Response:
    parent = _query("parent")
    page = catalog().namespaces.list(
        caller(), Namespace.parse(parent) if parent else None, _query("pageToken"), page_size(_query("pageSize"))
    )
    return _page("namespaces", page.namespaces, page.next_token)


@catalog_route(NAMESPACES, ["POST"])
def create_namespace() -> Response:
    body = _body()
    namespace = Namespace.of(body.get("namespace"))
    properties = catalog().namespaces.create(caller(), namespace, body.get("properties"))
    return json_response({"namespace": namespace.parts, "properties": properties})


@catalog_route(NAMESPACE, ["GET"])
def load_namespace(namespace: str) -> Response:
    parsed = Namespace.parse(namespace)
    return json_response({"namespace": parsed.parts, "properties": catalog().namespaces.load(caller(), parsed)})


@catalog_route(NAMESPACE, ["HEAD"])
def namespace_exists(namespace: str) -> Response:
    catalog().namespaces.load(caller(), Namespace.parse(namespace))
    return no_content()


@catalog_route(NAMESPACE, ["DELETE"])
def drop_namespace(namespace: str) -> Response:
    catalog().namespaces.drop(caller(), Namespace.parse(namespace))
    return no_content()


@catalog_route(NAMESPACE + "/properties", ["POST"])
def update_namespace_properties(namespace: str) -> Response:
    body = _body()
    result = catalog().namespaces.update_properties(
        caller(), Namespace.parse(namespace), body.get("removals"), body.get("updates")
    )
    return json_response({"updated": result.updated, "removed": result.removed, "missing": result.missing})


@catalog_route(TABLES, ["GET"])
def list_tables(namespace: str) -> Response:
    page = catalog().tables.list(
        caller(), Namespace.parse(namespace), _query("pageToken"), page_size(_query("pageSize"))
    )
    return _page("identifiers", page.identifiers, page.next_token)


@catalog_route(TABLES, ["POST"])
def create_table(namespace: str) -> Response:
    body = _body()
    metadata, location, root = catalog().tables.create(caller(), Namespace.parse(namespace), body)
    config, credentials = _access(TableName.of(Namespace.parse(namespace), body.get("name")), root)
    result: dict[str, Any] = {"metadata": metadata, "config": config}
    if credentials:
        result["storage-credentials"] = credentials
    if location is not None:
        result["metadata-location"] = location
    return json_response(result)


@catalog_route(NAMESPACE + "/register", ["POST"])
def register_table(namespace: str) -> Response:
    return _table_result(catalog().tables.register(caller(), Namespace.parse(namespace), _body()))


@catalog_route(TABLE, ["GET"])
def load_table(namespace: str, table: str) -> Response:
    snapshots = _query("snapshots") or "all"
    if snapshots not in ("all", "refs"):
        raise BadRequest(f"snapshots must be all or refs, not {snapshots!r}")
    loaded = catalog().tables.load(caller(), TableName.of(Namespace.parse(namespace), table))
    return _table_result(loaded, only_referenced=snapshots == "refs")


@catalog_route(TABLE + "/credentials", ["GET"])
def load_credentials(namespace: str, table: str) -> Response:
    """The spec's loadCredentials: fresh credentials for the table's files (engines ask before theirs expire)."""
    loaded = catalog().tables.load(caller(), TableName.of(Namespace.parse(namespace), table))
    return json_response({"storage-credentials": _access(loaded.table, loaded.root)[1]})


@catalog_route(TABLE, ["HEAD"])
def table_exists(namespace: str, table: str) -> Response:
    catalog().tables.exists(caller(), TableName.of(Namespace.parse(namespace), table))
    return no_content()


@catalog_route(TABLE, ["POST"])
def commit_table(namespace: str, table: str) -> Response:
    name = TableName.of(Namespace.parse(namespace), table)
    prepared = catalog().tables.commit(caller(), name, _body())
    return json_response({"metadata-location": prepared.metadata_location, "metadata": prepared.metadata})


@catalog_route(TABLE, ["DELETE"])
def drop_table(namespace: str, table: str) -> Response:
    purge = (_query("purgeRequested") or "false").lower() == "true"
    catalog().tables.drop(caller(), TableName.of(Namespace.parse(namespace), table), purge)
    return no_content()


@catalog_route(TABLE + "/metrics", ["POST"])
def report_metrics(namespace: str, table: str) -> Response:
    """Accepted and not kept (the spec lets a catalog ignore reports); the table must be one the caller reads."""
    catalog().tables.exists(caller(), TableName.of(Namespace.parse(namespace), table))
    return no_content()


@catalog_route("/tables/rename", ["POST"])
def rename_table() -> Response:
    catalog().tables.rename(caller(), _body())
    return no_content()


@catalog_route("/transactions/commit", ["POST"])
def commit_transaction() -> Response:
    catalog().tables.transaction(caller(), _body())
    return no_content()
