"""pyiceberg's RestCatalog against ``lakelet up`` in a subprocess: the catalog at /iceberg/api, data and manifest
files through the S3 gateway on the branch (docs/iceberg.md)."""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Iterator

import lakefs
import pytest
from lakefs.client import Client
from pyiceberg.catalog.rest import RestCatalog

from tests.e2e.conftest import LocalProcess, launch_local

_GATEWAY_LINE = re.compile(r"S3 gateway\s+(?P<url>http://\S+)")


@pytest.fixture(scope="session")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalProcess]:
    local = launch_local(tmp_path_factory.mktemp("iceberg-stack"))
    try:
        yield local
    finally:
        local.stop()


def gateway_url(local: LocalProcess) -> str:
    found = _GATEWAY_LINE.search(local.banner)
    assert found, local.banner
    return found.group("url")


@pytest.fixture(scope="session")
def lakefs_client(stack: LocalProcess) -> Client:
    return Client(host=stack.endpoint, username=stack.access_key_id, password=stack.secret_access_key)


@pytest.fixture
def repo(lakefs_client: Client) -> lakefs.Repository:
    name = f"ice-{uuid.uuid4().hex[:10]}"
    prefix = lakefs_client.storage_config.default_namespace_prefix
    return lakefs.Repository(name, client=lakefs_client).create(storage_namespace=f"{prefix}/{name}")


@pytest.fixture
def make_catalog(stack: LocalProcess) -> Callable[..., RestCatalog]:
    """A RestCatalog as docs/iceberg.md configures one: the key pair as the OAuth2 credential, and the same pair
    for the S3 gateway that data files go through."""

    def make(**extra: str) -> RestCatalog:
        return RestCatalog(
            "lakelet",
            **{
                "uri": stack.endpoint + "/iceberg/api",
                "credential": f"{stack.access_key_id}:{stack.secret_access_key}",
                "oauth2-server-uri": stack.endpoint + "/iceberg/api/v1/oauth/tokens",
                "s3.endpoint": gateway_url(stack),
                "s3.access-key-id": stack.access_key_id,
                "s3.secret-access-key": stack.secret_access_key,
                "s3.region": "us-east-1",
                **extra,
            },
        )

    return make
