"""Fixtures of the S3 gateway's end-to-end tests, on the session's ``lakelet up`` (tests/e2e/conftest.py, which
offers ``s3`` and ``s3_repo`` to every test of the folder).

Clients are built with nothing but the endpoint the banner prints and the admin key pair, as a user would.
``seed_keys`` stages many keys straight into the stack's DynamoDB (its moto server), sharing one physical
object: a test of listing 2,500 keys through the gateway should not spend a minute writing them one by one
(moto serves ~40 gateway PUTs a second on these machines); the writes themselves are tested elsewhere.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Protocol

import boto3
import lakefs
import pytest
from botocore.client import BaseClient
from botocore.config import Config

from chalicelib.adapters.dynamodb import DynamoRefStore, DynamoStagingStore, TableNames
from chalicelib.graveler.records import BranchID, Entry, Key, RepositoryID, StagedEntry
from lakelet.stack.app_environment import restore_environ
from lakelet.stack.local import LOCAL_BUCKET, LOCAL_REGION, LOCAL_TABLE_PREFIX


class LocalProcess(Protocol):
    """What these fixtures read of conftest.py's running ``lakelet up`` (conftest.py imports this module to offer
    its fixtures to every e2e test, so this module does not import it back)."""

    banner: str
    access_key_id: str
    secret_access_key: str
    aws_access_key_id: str
    aws_secret_access_key: str


_S3_LINE = re.compile(r"^\s*S3 gateway\s+(?P<url>http://\S+)", re.MULTILINE)
_MOTO_LINE = re.compile(r"^\s*AWS stand-in\s+moto at (?P<url>http://\S+)", re.MULTILINE)


def s3_endpoint(local: LocalProcess) -> str:
    found = _S3_LINE.search(local.banner)
    assert found, local.banner
    return found.group("url")


def moto_endpoint(local: LocalProcess) -> str:
    found = _MOTO_LINE.search(local.banner)
    assert found, local.banner
    return found.group("url")


def s3_client(
    local: LocalProcess, secret: str | None = None, key: str | None = None, config: Config | None = None
) -> BaseClient:
    """boto3 with only the endpoint and the key pair: no region, no addressing or signature settings."""
    return boto3.client(
        "s3",
        endpoint_url=s3_endpoint(local),
        aws_access_key_id=key or local.access_key_id,
        aws_secret_access_key=secret or local.secret_access_key,
        config=config,
    )


def moto_s3(local: LocalProcess) -> BaseClient:
    """The stack's underlying S3 (moto), for looking at physical objects and for baseline measurements."""
    return boto3.client(
        "s3",
        endpoint_url=moto_endpoint(local),
        region_name=LOCAL_REGION,
        aws_access_key_id=local.aws_access_key_id,
        aws_secret_access_key=local.aws_secret_access_key,
    )


def seed_keys(local: LocalProcess, repo: str, branch: str, keys: list[str], data: bytes = b"seed") -> None:
    """Stages ``keys`` on the branch, all pointing at one physical object written under the namespace."""
    address_key = f"{repo}/data/seed/{uuid.uuid4().hex}"
    moto_s3(local).put_object(Bucket=LOCAL_BUCKET, Key=address_key, Body=data)
    entry = Entry(f"s3://{LOCAL_BUCKET}/{address_key}", len(data), hashlib.md5(data).hexdigest(), int(time.time()))
    names = TableNames.from_prefix(LOCAL_TABLE_PREFIX)
    moto = moto_endpoint(local)
    with stack_aws_keys(local):
        refs = DynamoRefStore(names, LOCAL_REGION, moto)
        token = refs.get_branch(RepositoryID(repo), BranchID(branch)).staging_token
        DynamoStagingStore(names, LOCAL_REGION, moto).set_many(token, (StagedEntry(Key(k), entry) for k in keys))


@contextlib.contextmanager
def stack_aws_keys(local: LocalProcess) -> Iterator[None]:
    """PynamoDB signs with the environment's key pair: the stack's moto trusts only the stack's own."""
    saved = {name: os.environ.get(name) for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")}
    assert local.aws_access_key_id, "a stack with a data directory (its state file names moto's key pair)"
    os.environ["AWS_ACCESS_KEY_ID"], os.environ["AWS_SECRET_ACCESS_KEY"] = (
        local.aws_access_key_id,
        local.aws_secret_access_key,
    )
    try:
        yield
    finally:
        restore_environ(os.environ, saved)


@pytest.fixture(scope="session")
def s3(local_stack: LocalProcess) -> BaseClient:
    return s3_client(local_stack)


@pytest.fixture
def s3_repo(new_repo: Callable[[], lakefs.Repository]) -> str:
    """A fresh repository (made with the lakeFS client), named as the S3 bucket to use."""
    return str(new_repo().id)
