"""The catalog outside the data path, against ``lakelet up --aws-limits``: engines given only the catalog's
credential (no S3 endpoint, no keys, no AWS variables) write and read a table's files in the store itself, with
the credentials the catalog vends (moto's STS locally, the guard in front of moto enforcing each session policy).
Files larger than the gateway's Lambda could carry (8 MB and more) go straight to the store; a table merged from a
branch stays readable after the branch is deleted (docs/iceberg.md, "Data files")."""

from __future__ import annotations

import os
from collections.abc import Iterator

import boto3
import lakefs
import pyarrow as pa
import pytest
from botocore.exceptions import ClientError
from pyiceberg.catalog.rest import RestCatalog

from tests.e2e.conftest import LocalProcess

pytestmark = pytest.mark.e2e

ROWS = 9_000
ROW_BYTES = 1_024  # random bytes: a data file of about 9 MB that no compression shrinks


@pytest.fixture(autouse=True)
def no_aws_variables(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in list(os.environ):
        if name.startswith("AWS_"):
            monkeypatch.delenv(name)
    yield


def catalog_only(stack: LocalProcess) -> RestCatalog:
    return RestCatalog(
        "lakelet",
        uri=stack.endpoint + "/iceberg/api",
        credential=f"{stack.access_key_id}:{stack.secret_access_key}",
        **{"oauth2-server-uri": stack.endpoint + "/iceberg/api/v1/oauth/tokens"},
    )


def big_rows(first: int, count: int = ROWS) -> pa.Table:
    return pa.table(
        {
            "id": pa.array(range(first, first + count), pa.int64()),
            "blob": pa.array([os.urandom(ROW_BYTES) for _ in range(count)], pa.binary()),
        }
    )


def test_engines_with_only_the_catalog_credential_write_and_read_large_files(
    stack: LocalProcess, repo: lakefs.Repository
) -> None:
    catalog = catalog_only(stack)
    r = repo.id
    catalog.create_namespace((r, "main", "big"))
    table = catalog.create_table((r, "main", "big", "blobs"), big_rows(0, 1).schema)
    namespace = repo.properties.storage_namespace
    assert table.location().startswith(namespace + "/data/")
    table.append(big_rows(0))
    files = list(table.scan().plan_files())
    assert len(files) == 1 and files[0].file.file_size_in_bytes > 8 * 1024 * 1024
    assert files[0].file.file_path.startswith(table.location() + "/data/")
    read = catalog.load_table((r, "main", "big", "blobs")).scan().to_arrow()
    assert read.num_rows == ROWS and sorted(read["id"].to_pylist()) == list(range(ROWS))
    # Linked at the commit: the data file is an object of main under the table's path, at the same address.
    linked = [o for o in repo.branch("main").objects(prefix="iceberg/big/") if o.path.endswith(".parquet")]
    assert [o.physical_address for o in linked] == [files[0].file.file_path]
    assert linked[0].size_bytes == files[0].file.file_size_in_bytes


def test_a_merged_table_stays_readable_after_its_branch_is_deleted(
    stack: LocalProcess, repo: lakefs.Repository
) -> None:
    catalog = catalog_only(stack)
    r = repo.id
    catalog.create_namespace((r, "main", "m"))
    catalog.create_table((r, "main", "m", "t"), big_rows(0, 1).schema).append(big_rows(0, 10))
    main = repo.branch("main")
    main.commit(message="t on main")
    dev = repo.branch("dev").create(source_reference="main")
    catalog.load_table((r, "dev", "m", "t")).append(big_rows(100, 20))
    dev.commit(message="t on dev")
    dev.merge_into(main)
    dev.delete()
    read = catalog.load_table((r, "main", "m", "t")).scan().to_arrow()
    assert sorted(read["id"].to_pylist()) == [*range(10), *range(100, 120)]


def test_vended_credentials_reach_only_the_tables_own_files(stack: LocalProcess, repo: lakefs.Repository) -> None:
    """What the catalog vends for one table cannot read beside it: the guard in front of moto enforces the
    session policy, as S3 would."""
    catalog = catalog_only(stack)
    r = repo.id
    catalog.create_namespace((r, "main", "s"))
    table = catalog.create_table((r, "main", "s", "t"), big_rows(0, 1).schema)
    config = table.io.properties
    s3 = boto3.client(
        "s3",
        endpoint_url=config["s3.endpoint"],
        region_name=config["s3.region"],
        aws_access_key_id=config["s3.access-key-id"],
        aws_secret_access_key=config["s3.secret-access-key"],
        aws_session_token=config["s3.session-token"],
    )
    bucket, _, root = table.location().removeprefix("s3://").partition("/")
    s3.put_object(Bucket=bucket, Key=f"{root}/data/own.bin", Body=b"ok")
    assert s3.get_object(Bucket=bucket, Key=f"{root}/data/own.bin")["Body"].read() == b"ok"
    with pytest.raises(ClientError) as refused:
        s3.put_object(Bucket=bucket, Key=f"{root}-other/data/x.bin", Body=b"no")
    assert refused.value.response["Error"]["Code"] == "AccessDenied"
    with pytest.raises(ClientError):
        s3.list_objects_v2(Bucket=bucket, Prefix="")
