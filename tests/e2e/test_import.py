"""Zero-copy import on the embedded stack, driven by the official ``lakefs`` client's ImportManager: a prefix
with nested folders and an object, read back in every mode (through the API, presigned, through the S3 gateway)
with the source's size, ETag and mtime; a large one through the import workflow, canceled in the middle; and a
location that is not allowed."""

from __future__ import annotations

import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import boto3
import lakefs
import pytest
from lakefs.client import Client
from lakefs.exceptions import ForbiddenException, ImportManagerException

from .conftest import LocalProcess
from .s3support import moto_endpoint, s3_endpoint

SOURCE_BUCKET = "import-source"
ALLOWED = f"s3://{SOURCE_BUCKET}/allowed/"
# Imports above this many objects run as the import workflow (the local stack's moto runs it).
INLINE_THRESHOLD = 50


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory):
    from .conftest import launch_local

    local = launch_local(
        tmp_path_factory.mktemp("import-stack"),
        env={
            "LAKELET_IMPORT_ALLOWED_LOCATIONS": ALLOWED,
            "LAKELET_IMPORT_INLINE_THRESHOLD": str(INLINE_THRESHOLD),
        },
    )
    try:
        yield local
    finally:
        assert local.stop() == 0, local.stderr_tail()


@pytest.fixture(scope="module")
def moto_s3(stack: LocalProcess):
    s3 = boto3.client(
        "s3",
        endpoint_url=moto_endpoint(stack),
        region_name="us-east-1",
        aws_access_key_id=stack.aws_access_key_id,
        aws_secret_access_key=stack.aws_secret_access_key,
    )
    s3.create_bucket(Bucket=SOURCE_BUCKET)
    return s3


@pytest.fixture(scope="module")
def client(stack: LocalProcess) -> Client:
    return Client(host=stack.endpoint, username=stack.access_key_id, password=stack.secret_access_key)


@pytest.fixture
def repo(client: Client) -> lakefs.Repository:
    name = f"imp-{uuid.uuid4().hex[:10]}"
    prefix = client.storage_config.default_namespace_prefix.rstrip("/")
    return lakefs.Repository(name, client=client).create(storage_namespace=f"{prefix}/{name}")


def seed(s3, prefix: str, files: dict[str, bytes]) -> None:
    for key, data in files.items():
        s3.put_object(Bucket=SOURCE_BUCKET, Key=prefix + key, Body=data)


def test_import_manager_imports_a_prefix_and_an_object_readable_in_every_mode(
    stack: LocalProcess, client: Client, repo: lakefs.Repository, moto_s3
) -> None:
    run = uuid.uuid4().hex[:8]
    seed(
        moto_s3,
        f"allowed/{run}/",
        {
            "top.csv": b"top",
            "y=2024/m=01/part-0.csv": b"january",
            "y=2024/m=02/part-0.csv": b"february",
            "single.json": b"{}",
        },
    )
    manager = repo.branch("main").import_data(commit_message="imported", metadata={"source": "e2e"})
    manager.prefix(f"{ALLOWED}{run}/y=2024/", "tables/y=2024/").object(f"{ALLOWED}{run}/single.json", "meta.json")
    status = manager.run(poll_interval=timedelta(seconds=0.2))
    assert status.completed and status.error is None and status.ingested_objects == 3
    assert status.commit.message == "imported" and status.commit.metadata["source"] == "e2e"
    assert repo.branch("main").get_commit().id == status.commit.id
    # As lakeFS's: one commit on the branch, its one parent the old head (built on _main_imported first).
    imported = repo.branch("_main_imported").get_commit()
    assert imported.id == status.commit.id and len(status.commit.parents) == 1
    listed = [o.path for o in repo.branch("main").objects()]
    assert listed == ["meta.json", "tables/y=2024/m=01/part-0.csv", "tables/y=2024/m=02/part-0.csv"]
    obj = repo.branch("main").object("tables/y=2024/m=02/part-0.csv")
    head = moto_s3.head_object(Bucket=SOURCE_BUCKET, Key=f"allowed/{run}/y=2024/m=02/part-0.csv")
    stat = obj.stat()
    assert stat.physical_address == f"{ALLOWED}{run}/y=2024/m=02/part-0.csv"
    assert stat.size_bytes == 8 and stat.checksum == head["ETag"].strip('"')
    assert stat.mtime == int(head["LastModified"].timestamp())
    with obj.reader(pre_sign=False) as f:
        assert f.read() == b"february"
    with obj.reader(pre_sign=True) as f:
        f.seek(3)
        assert f.read() == b"ruary"
    gateway = boto3.client(
        "s3",
        endpoint_url=s3_endpoint(stack),
        aws_access_key_id=stack.access_key_id,
        aws_secret_access_key=stack.secret_access_key,
        region_name="us-east-1",
    )
    got = gateway.get_object(Bucket=repo.id, Key="main/tables/y=2024/m=01/part-0.csv")
    assert got["Body"].read() == b"january"
    # Nothing was copied: the repository's namespace holds no data objects.
    bucket, _, root = repo.properties.storage_namespace.removeprefix("s3://").partition("/")
    copied = moto_s3.list_objects_v2(Bucket=bucket, Prefix=f"{root}/data/").get("KeyCount", 0)
    assert copied == 0


def test_a_location_that_is_not_allowed_is_403_and_writes_nothing(
    client: Client, repo: lakefs.Repository, moto_s3
) -> None:
    seed(moto_s3, "private/", {"secret.txt": b"secret"})
    head = repo.branch("main").get_commit().id
    manager = repo.branch("main").import_data(commit_message="nope")
    manager.prefix(f"s3://{SOURCE_BUCKET}/private/", "stolen/")
    with pytest.raises(ForbiddenException) as caught:
        manager.start()
    assert "LAKELET_IMPORT_ALLOWED_LOCATIONS" in str(caught.value)
    assert repo.branch("main").get_commit().id == head
    assert list(repo.branch("main").objects()) == []


def test_a_large_import_runs_as_the_workflow_and_a_cancel_stops_it(
    stack: LocalProcess, client: Client, repo: lakefs.Repository, moto_s3
) -> None:
    run = uuid.uuid4().hex[:8]
    files = {f"d{i % 20:02d}/part-{i:05d}": b"x" for i in range(1500)}
    with ThreadPoolExecutor(8) as pool:
        chunks = [dict(list(files.items())[i::8]) for i in range(8)]
        list(pool.map(lambda chunk: seed(moto_s3, f"allowed/{run}/", chunk), chunks))
    head = repo.branch("main").get_commit().id
    # A first import of the same source, not canceled, goes all the way through the workflow.
    done = repo.branch("main").import_data(commit_message="whole").prefix(f"{ALLOWED}{run}/", "all/")
    status = done.run(poll_interval=timedelta(seconds=0.5))
    assert status.completed and status.ingested_objects == 1500
    assert sum(1 for _ in repo.branch("main").objects(prefix="all/")) == 1500
    head = repo.branch("main").get_commit().id
    manager = repo.branch("main").import_data(commit_message="canceled").prefix(f"{ALLOWED}{run}/", "again/")
    manager.start()
    manager.cancel()
    with pytest.raises(ImportManagerException, match="import canceled"):
        manager.wait(poll_interval=timedelta(seconds=0.2))
    sfn = boto3.client(
        "stepfunctions",
        endpoint_url=moto_endpoint(stack),
        region_name="us-east-1",
        aws_access_key_id=stack.aws_access_key_id,
        aws_secret_access_key=stack.aws_secret_access_key,
    )
    arn = next(
        m["stateMachineArn"] for m in sfn.list_state_machines()["stateMachines"] if m["name"].endswith("-import")
    )
    execution = f"{arn.replace(':stateMachine:', ':execution:')}:import-{manager.import_id}"
    deadline = time.monotonic() + 60
    while sfn.describe_execution(executionArn=execution)["status"] == "RUNNING":
        assert time.monotonic() < deadline
        time.sleep(0.2)
    assert sfn.describe_execution(executionArn=execution)["status"] == "FAILED"
    assert repo.branch("main").get_commit().id == head
    assert list(repo.branch("main").objects(prefix="again/")) == []
