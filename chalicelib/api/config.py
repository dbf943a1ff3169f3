"""Server configuration the clients read first: GET /config, /config/storage, /config/version.

The official Python client reads ``storage_config.pre_sign_support`` to decide whether to read and write
objects through presigned S3 URLs, and ``blockstore_type`` to know the namespace scheme.
"""

from __future__ import annotations

from typing import Any

from chalice import Blueprint, Response

from chalicelib.settings import Settings

from .endpoint import json_response, route, services

bp = Blueprint(__name__)

# Kept in step with pyproject.toml; the Lambda bundle carries no package metadata to read it from.
LAKELET_VERSION = "0.1.0"
# The lakeFS release whose API (api/swagger.yml, as the pinned lakefs-sdk was generated from it) the served
# operations follow. Clients gate features on this version (lakefs-spec needs >= 1.3.1), so it is what
# version_config.version says; tests/conformance checks it equals the pinned lakefs-sdk's version.
LAKEFS_API_VERSION = "1.88.0"
S3_NAMESPACE_REGEX = "^s3://"
# Lakelet's extensions a client can rely on being served, named in version_config.lakelet_features so that a
# client (the lakelet CLI) uses one only where it exists and falls back to lakeFS's operations elsewhere:
# "upload_batch" is POST .../branches/{branch}/objects/batch (api/batch_body.py); "upload_write_once" is
# GET .../staging/backing?presign=true&write_once=true, whose URL must be sent with If-None-Match: * and whose
# link copies nothing (api/physical_addresses.py).
LAKELET_FEATURES = ("upload_batch", "upload_write_once")


def storage_config(settings: Settings) -> dict[str, Any]:
    return {
        "blockstore_type": "s3",
        "blockstore_namespace_example": f"s3://{settings.bucket}/example-repository",
        "blockstore_namespace_ValidityRegex": S3_NAMESPACE_REGEX,
        # As lakeFS reports it, without a trailing "/": clients build f"{prefix}/{name}".
        "default_namespace_prefix": f"s3://{settings.bucket}",
        "pre_sign_support": settings.pre_sign_support,
        "pre_sign_support_ui": False,
        # Zero-copy import (api/imports.py): served, from the locations the deployment allows.
        "import_support": True,
        "import_validity_regex": S3_NAMESPACE_REGEX,
        # Served with presigning (api/presigned_multipart.py): lakectl and the SDKs upload big files this way.
        "pre_sign_multipart_upload": settings.pre_sign_support,
    }


def version_config() -> dict[str, Any]:
    """lakeFS's VersionConfig, plus ``lakelet_version`` (Lakelet's own) and ``lakelet_features`` (the extensions a
    client may use; see LAKELET_FEATURES), which the SDK's model ignores. ``version_context`` is lakeFS's own
    word for the open-source server ("lakeFS"), whose API this is: lakectl warns on every command that the server
    is lakeFS Enterprise when it reads anything else."""
    return {
        "version": LAKEFS_API_VERSION,
        "version_context": "lakeFS",
        "upgrade_recommended": False,
        "lakelet_version": LAKELET_VERSION,
        "lakelet_features": list(LAKELET_FEATURES),
    }


@route(bp, "/config", ["GET"])
def get_config() -> Response:
    return json_response(
        {
            "version_config": version_config(),
            "storage_config": storage_config(services().settings),
            # lakeFS lists its blockstores here only when it has several; Lakelet has one (storage_id "").
            "storage_config_list": [],
            # No custom object viewers are configured, and lakeFS OSS declares no capabilities.
            "ui_config": {},
            "capabilities_config": {},
        }
    )


@route(bp, "/config/storage", ["GET"])
def get_storage_config() -> Response:
    return json_response(storage_config(services().settings))


@route(bp, "/config/version", ["GET"])
def get_version_config() -> Response:
    return json_response(version_config())
