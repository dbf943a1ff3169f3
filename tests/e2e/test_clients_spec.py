"""lakefs-spec (fsspec) on the embedded stack: lakefs:// URIs read and written by fsspec, pandas and pyarrow."""

from __future__ import annotations

import uuid

import fsspec
import lakefs
import pandas as pd
import pytest
from lakefs.client import Client
from lakefs_spec import LakeFSFileSystem

from .conftest import LocalProcess

pytestmark = pytest.mark.e2e


@pytest.fixture
def storage_options(local_stack: LocalProcess) -> dict[str, str]:
    return {
        "host": local_stack.endpoint,
        "username": local_stack.access_key_id,
        "password": local_stack.secret_access_key,
    }


@pytest.fixture
def fs(storage_options: dict[str, str]) -> LakeFSFileSystem:
    LakeFSFileSystem.clear_instance_cache()
    return LakeFSFileSystem(**storage_options)


@pytest.fixture
def repo_name(client: Client) -> str:
    name = f"spec-{uuid.uuid4().hex[:10]}"
    namespace = client.storage_config.default_namespace_prefix.rstrip("/") + "/" + name
    lakefs.Repository(name, client=client).create(storage_namespace=namespace)
    return name


def test_write_read_list_and_delete(fs: LakeFSFileSystem, repo_name: str) -> None:
    base = f"lakefs://{repo_name}/main"
    fs.pipe(f"{base}/raw/a.bin", b"\x00\x01binary")
    fs.write_text(f"{base}/raw/b.txt", "text ✓")
    assert fs.cat(f"{base}/raw/a.bin") == b"\x00\x01binary"
    assert fs.read_text(f"{base}/raw/b.txt") == "text ✓"
    assert sorted(fs.ls(f"{base}/raw/", detail=False)) == [f"{repo_name}/main/raw/a.bin", f"{repo_name}/main/raw/b.txt"]
    assert fs.info(f"{base}/raw/a.bin")["size"] == 8
    assert fs.exists(f"{base}/raw/a.bin") and not fs.exists(f"{base}/raw/nope")
    with fs.open(f"{base}/raw/a.bin", "rb") as handle:
        handle.seek(2)
        assert handle.read(3) == b"bin"
    fs.rm(f"{base}/raw/b.txt")
    assert not fs.exists(f"{base}/raw/b.txt")


def test_pandas_reads_and_writes_csv_through_lakefs_uris(
    repo_name: str, storage_options: dict[str, str], client: Client
) -> None:
    LakeFSFileSystem.clear_instance_cache()
    frame = pd.DataFrame({"city": ["Lyon", "Oslo", "Quito"], "population": [522_000, 709_000, 2_800_000]})
    uri = f"lakefs://{repo_name}/main/cities/cities.csv"
    frame.to_csv(uri, index=False, storage_options=storage_options)
    lakefs.Repository(repo_name, client=client).branch("main").commit(message="cities")
    assert pd.read_csv(uri, storage_options=storage_options).equals(frame)
    # The committed version, by ref expression.
    assert pd.read_csv(f"lakefs://{repo_name}/main~0/cities/cities.csv", storage_options=storage_options).equals(frame)
    with fsspec.open(uri, "rt", **storage_options) as handle:
        assert handle.readline().strip() == "city,population"


def test_parquet_through_pyarrow(repo_name: str, storage_options: dict[str, str]) -> None:
    LakeFSFileSystem.clear_instance_cache()
    frame = pd.DataFrame({"k": list(range(100)), "v": [f"row {i}" for i in range(100)]})
    uri = f"lakefs://{repo_name}/main/tables/t.parquet"
    frame.to_parquet(uri, storage_options=storage_options)
    assert pd.read_parquet(uri, storage_options=storage_options).equals(frame)
