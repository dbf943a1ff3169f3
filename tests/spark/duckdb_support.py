"""DuckDB attached to Lakelet's Iceberg REST catalog, configured as docs/iceberg.md tells a user to.

DuckDB fetches its extensions from its own extension server on first use, which neither this machine nor CI can
reach: the iceberg extension and the two it needs (httpfs for HTTP and S3, avro for manifests) come from PyPI
packages pinned in requirements-dev.txt, built for exactly the DuckDB pinned there, and are loaded from their files.
Autoinstall stays off, so an extension missing from that list fails with DuckDB's own error instead of a download.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

EXTENSIONS = ("httpfs", "avro", "iceberg")


def extension_file(name: str) -> Path:
    """The ``.duckdb_extension`` file that the ``duckdb-extension-<name>`` package ships for this DuckDB."""
    import duckdb

    package = importlib.import_module(f"duckdb_extension_{name}")
    path = Path(str(package.__file__)).parent / "extensions" / f"v{duckdb.__version__}" / f"{name}.duckdb_extension"
    if not path.is_file():
        raise AssertionError(
            f"{path} missing: duckdb-extension-{name} must be the version of duckdb (requirements-dev)"
        )
    return path


def connect() -> Any:
    """An in-memory DuckDB with the httpfs, avro and iceberg extensions loaded from the files of their PyPI packages
    (nothing is installed into DuckDB's extension directory)."""
    import duckdb

    connection = duckdb.connect(config={"autoinstall_known_extensions": "false"})
    for name in EXTENSIONS:
        connection.load_extension(str(extension_file(name)))
    return connection


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def attach_catalog(
    connection: Any,
    alias: str,
    api_endpoint: str,
    s3_endpoint: str,
    key: str,
    secret: str,
    delegation: str = "vended_credentials",
) -> None:
    """ATTACH Lakelet's catalog (``<api>/iceberg/api``) as ``alias``, signing in with the lakeFS key pair through its
    OAuth2 token endpoint (DuckDB sends it as HTTP Basic). Tables whose files are in the store come with vended
    credentials (DuckDB's default ``ACCESS_DELEGATION_MODE``); tables written through the S3 gateway by earlier
    versions need ``delegation='none'``, which reads them with the S3 secret made here (the gateway, the same
    pair). ``SUPPORT_NESTED_NAMESPACES``: browsing (``SHOW ALL TABLES``) walks repositories, refs and the namespaces
    below them; looking a table up by name needs no listing."""
    uri = f"{api_endpoint}/iceberg/api"
    host = s3_endpoint.split("://", 1)[-1]
    connection.execute(
        f"CREATE OR REPLACE SECRET {alias}_s3 (TYPE s3, KEY_ID {_literal(key)}, SECRET {_literal(secret)}, "
        f"ENDPOINT {_literal(host)}, URL_STYLE 'path', USE_SSL {str(s3_endpoint.startswith('https')).lower()}, "
        "REGION 'us-east-1')"
    )
    connection.execute(
        f"CREATE OR REPLACE SECRET {alias}_auth (TYPE iceberg, CLIENT_ID {_literal(key)}, "
        f"CLIENT_SECRET {_literal(secret)}, OAUTH2_SERVER_URI {_literal(uri + '/v1/oauth/tokens')})"
    )
    connection.execute(
        f"ATTACH '' AS {alias} (TYPE iceberg, ENDPOINT {_literal(uri)}, SECRET {alias}_auth, "
        f"ACCESS_DELEGATION_MODE {_literal(delegation)}, SUPPORT_NESTED_NAMESPACES true)"
    )
