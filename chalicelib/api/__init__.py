"""HTTP glue for the lakeFS API v1: one Chalice blueprint per resource, request parsing, serializers, the
authenticating route decorator and the single table from graveler errors to HTTP statuses."""

from __future__ import annotations

from chalice import Blueprint

from . import (
    actions,
    auth,
    branches,
    commits,
    config,
    diff,
    dumps,
    imports,
    installation,
    metadata,
    metadata_files,
    objects,
    openapi,
    physical_addresses,
    presigned_multipart,
    protection,
    pulls,
    repositories,
    setup,
    symlinks,
    tags,
    unsupported,
    web,
)
from .endpoint import URL_PREFIX

__all__ = ["BLUEPRINTS", "URL_PREFIX", "diff_merge", "endpoint", "gc", "iceberg_endpoint", "iceberg_routes"]

BLUEPRINTS: tuple[Blueprint, ...] = (
    setup.bp,
    config.bp,
    repositories.bp,
    branches.bp,
    commits.bp,
    objects.bp,
    diff.bp,
    tags.bp,
    auth.bp,
    physical_addresses.bp,
    imports.bp,
    metadata.bp,
    web.bp,
    protection.bp,
    actions.bp,
    unsupported.bp,
    installation.bp,
    metadata_files.bp,
    presigned_multipart.bp,
    openapi.bp,
    pulls.bp,
    dumps.bp,
    symlinks.bp,
)
