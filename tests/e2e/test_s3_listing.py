"""Listings through the gateway of ``lakelet up``: 2,500 keys paged with v1 and v2, with and without a
delimiter, over committed and staged data, and the branches of a repository as common prefixes."""

from __future__ import annotations

import uuid

import lakefs
import pytest
from botocore.client import BaseClient
from lakefs.client import Client

from .conftest import LocalProcess
from .s3support import seed_keys

pytestmark = pytest.mark.e2e

# 2,500 keys: 50 directories of 50 files; all but the last 25 committed, those 25 staged on top.
KEYS = [f"dir{d:02d}/file{f:02d}.csv" for d in range(50) for f in range(50)]


@pytest.fixture(scope="module")
def big_repo(local_stack: LocalProcess, client: Client) -> str:
    """Built once for the module: staging 2,500 keys and committing them takes a few seconds on moto."""
    name = f"s3-listing-{uuid.uuid4().hex[:8]}"
    prefix = client.storage_config.default_namespace_prefix.rstrip("/")
    repo = lakefs.Repository(name, client=client).create(storage_namespace=f"{prefix}/{name}")
    seed_keys(local_stack, name, "main", KEYS[:-25])
    repo.branch("main").commit(message="most of the keys")
    seed_keys(local_stack, name, "main", KEYS[-25:])
    return name


def test_v2_pages_over_2500_keys(s3: BaseClient, big_repo: str) -> None:
    keys: list[str] = []
    pages = 0
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=big_repo, Prefix="main/"):
        pages += 1
        assert page["KeyCount"] == len(page["Contents"]) <= 1000
        keys += [o["Key"] for o in page["Contents"]]
    assert pages == 3
    assert keys == [f"main/{k}" for k in KEYS]


def test_v1_pages_over_2500_keys(s3: BaseClient, big_repo: str) -> None:
    keys: list[str] = []
    for page in s3.get_paginator("list_objects").paginate(
        Bucket=big_repo, Prefix="main/", PaginationConfig={"PageSize": 700}
    ):
        keys += [o["Key"] for o in page["Contents"]]
    assert keys == [f"main/{k}" for k in KEYS]


def test_delimiter_listings(s3: BaseClient, big_repo: str) -> None:
    prefixes: list[str] = []
    for page in s3.get_paginator("list_objects_v2").paginate(
        Bucket=big_repo, Prefix="main/", Delimiter="/", PaginationConfig={"PageSize": 15}
    ):
        assert "Contents" not in page
        prefixes += [p["Prefix"] for p in page["CommonPrefixes"]]
    assert prefixes == [f"main/dir{d:02d}/" for d in range(50)]
    inside = s3.list_objects_v2(Bucket=big_repo, Prefix="main/dir07/", Delimiter="/")
    assert [o["Key"] for o in inside["Contents"]] == [f"main/dir07/file{f:02d}.csv" for f in range(50)]
    v1 = s3.list_objects(Bucket=big_repo, Prefix="main/dir4", Delimiter="/")
    assert [p["Prefix"] for p in v1["CommonPrefixes"]] == [f"main/dir{d}/" for d in range(40, 50)]


def test_committed_view_and_branches(s3: BaseClient, big_repo: str, client: Client) -> None:
    assert s3.list_objects_v2(Bucket=big_repo, Prefix="main@/dir49/")["KeyCount"] == 25  # committed only
    assert s3.list_objects_v2(Bucket=big_repo, Prefix="main/dir49/")["KeyCount"] == 50
    repo = lakefs.Repository(big_repo, client=client)
    repo.branch("feature-x").create(source_reference="main")  # from main's head commit
    listed = s3.list_objects_v2(Bucket=big_repo, Delimiter="/")
    assert [p["Prefix"] for p in listed["CommonPrefixes"]] == ["feature-x/", "main/"]
    assert s3.list_objects_v2(Bucket=big_repo, Prefix="feature-x/dir49/")["KeyCount"] == 25
