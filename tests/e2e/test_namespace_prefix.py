"""Namespaces built as lakefs-spec's fixtures and user scripts build them, through the ``lakefs`` client on the
local stack: ``f"{default_namespace_prefix}/{name}"``, and the ``//`` a prefix ending in ``/`` gives."""

from __future__ import annotations

import re
import uuid

import boto3
import lakefs
import pytest
from lakefs.client import Client
from lakefs.exceptions import BadRequestException

from .conftest import LocalProcess

pytestmark = pytest.mark.e2e


def test_prefix_slash_name_makes_a_repository_whose_data_is_under_that_key(
    client: Client, local_stack: LocalProcess
) -> None:
    prefix = client.storage_config.default_namespace_prefix
    assert prefix.startswith("s3://") and not prefix.endswith("/")
    # The banner says what GET /config says.
    assert re.search(rf"Namespace prefix +{re.escape(prefix)} ", local_stack.banner), local_stack.banner
    assert f'storage_namespace="{prefix}/example"' in local_stack.banner
    name = f"ns-{uuid.uuid4().hex[:10]}"
    repo = lakefs.Repository(name, client=client).create(storage_namespace=f"{prefix}/{name}")
    assert repo.properties.storage_namespace == f"{prefix}/{name}"
    repo.branch("main").object("a.txt").upload(b"hello")
    repo.branch("main").commit(message="one")
    address = repo.branch("main").object("a.txt").stat().physical_address
    bucket = prefix.removeprefix("s3://")
    assert address.startswith(f"s3://{bucket}/{name}/data/")
    # The marker and the data are at the clean key, on the moto server the stack runs.
    moto = re.search(r"moto at (http://\S+)", local_stack.banner)
    assert moto, local_stack.banner
    s3 = boto3.client(
        "s3",
        endpoint_url=moto.group(1),
        region_name="us-east-1",
        aws_access_key_id=local_stack.aws_access_key_id,
        aws_secret_access_key=local_stack.aws_secret_access_key,
    )
    assert s3.head_object(Bucket=bucket, Key=f"{name}/_lakefs/dummy")["ContentLength"] > 0


def test_a_prefix_with_a_trailing_slash_still_gives_one_namespace(client: Client) -> None:
    """What clients did against the old prefix (``s3://bucket/`` + ``/name``): accepted as lakeFS accepts it,
    and the same namespace as the clean spelling, so the second repository is refused."""
    prefix = client.storage_config.default_namespace_prefix.rstrip("/") + "/"
    name = f"ns-{uuid.uuid4().hex[:10]}"
    repo = lakefs.Repository(name, client=client).create(storage_namespace=f"{prefix}/{name}")
    assert repo.properties.storage_namespace == f"{prefix}{name}"
    with pytest.raises(BadRequestException, match="already in use"):
        lakefs.Repository(f"{name}-2", client=client).create(storage_namespace=f"{prefix}{name}")
