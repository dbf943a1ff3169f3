"""The official ``lakefs`` client, unchanged, against the embedded stack in both presign modes.

"presign": the stack as it starts by default (GET /config says pre_sign_support true): uploads go
GET staging/backing -> PUT to the presigned S3 URL -> PUT staging/backing, reads follow a 302 to S3.
"direct": a second stack started with LAKELET_PRE_SIGN_SUPPORT=false: bytes go through the API.
The same tests run in both; each checks the mode really was the one it meant.
"""

from __future__ import annotations

import hashlib
import io
import random
import re
import uuid
from collections.abc import Iterator
from pathlib import Path

import lakefs
import pytest
from lakefs.client import Client
from lakefs.exceptions import ObjectExistsException

from .conftest import LocalProcess, launch_local

pytestmark = pytest.mark.e2e

BLOB = random.Random(7).randbytes(300_001)
SIGNED_ADDRESS = re.compile(r".+\.[0-9]{10,12}\.[0-9a-f]{32}$")


@pytest.fixture(scope="module")
def direct_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalProcess]:
    local = launch_local(tmp_path_factory.mktemp("lakelet-direct"), env={"LAKELET_PRE_SIGN_SUPPORT": "false"})
    try:
        yield local
    finally:
        assert local.stop() == 0, local.stderr_tail()


@pytest.fixture(params=["presign", "direct"])
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def mode_client(mode: str, request: pytest.FixtureRequest) -> Client:
    stack: LocalProcess = request.getfixturevalue("local_stack" if mode == "presign" else "direct_stack")
    client = Client(host=stack.endpoint, username=stack.access_key_id, password=stack.secret_access_key)
    assert client.storage_config.pre_sign_support is (mode == "presign")
    return client


@pytest.fixture
def repo(mode_client: Client) -> lakefs.Repository:
    name = f"clients-{uuid.uuid4().hex[:10]}"
    namespace = mode_client.storage_config.default_namespace_prefix.rstrip("/") + "/" + name
    return lakefs.Repository(name, client=mode_client).create(storage_namespace=namespace)


def test_upload_download_range_and_stat(repo: lakefs.Repository, mode: str) -> None:
    main = repo.branch("main")
    obj = main.object("data/blob.bin")
    obj.upload(BLOB, mode="wb", content_type="application/x-test", metadata={"owner": "e2e"})
    with obj.reader(mode="rb") as reader:
        assert reader.read() == BLOB
    with obj.reader(mode="rb") as reader:
        reader.seek(123_456)
        assert reader.read(1000) == BLOB[123_456:124_456]
        reader.seek(-3, io.SEEK_END)
        assert reader.read() == BLOB[-3:]
        assert reader.read() == b""
    stat = obj.stat()
    assert stat.size_bytes == len(BLOB) and stat.content_type == "application/x-test"
    assert stat.metadata == {"owner": "e2e"}
    # Both end on a plain address: a presigned upload is copied at link time to one no URL can write.
    assert not SIGNED_ADDRESS.match(stat.physical_address)
    if mode == "presign":
        assert stat.checksum == hashlib.md5(BLOB).hexdigest()  # S3's ETag, passed on by the client
    presigned = obj.stat(pre_sign=True)
    assert presigned.physical_address.startswith("http://127.0.0.1:")
    assert presigned.physical_address_expiry is not None and presigned.physical_address_expiry > 0


def test_text_empty_and_exclusive_writes(repo: lakefs.Repository) -> None:
    main = repo.branch("main")
    main.object("notes/readme.md").upload("# héllo\n", mode="w")
    with main.object("notes/readme.md").reader(mode="r") as reader:
        assert reader.read() == "# héllo\n"
    main.object("empty").upload(b"", mode="wb")
    assert main.object("empty").stat().size_bytes == 0
    with main.object("empty").reader() as reader:
        assert reader.read() == b""
    main.object("once").upload("first", mode="x")
    with pytest.raises(ObjectExistsException):
        main.object("once").upload("second", mode="x")
    with main.object("once").reader(mode="r") as reader:
        assert reader.read() == "first"


def test_list_commit_branch_merge_and_tags(repo: lakefs.Repository) -> None:
    main = repo.branch("main")
    for n in range(5):
        main.object(f"table/part-{n}.csv").upload(f"id\n{n}\n")
    main.object("README").upload("top")
    assert [o.path for o in main.objects(prefix="table/")] == [f"table/part-{n}.csv" for n in range(5)]
    assert [o.path for o in main.objects(delimiter="/")] == ["README", "table/"]
    first = main.commit(message="five parts", metadata={"run": "1"})
    assert first.get_commit().metadata == {"run": "1"}

    feature = repo.branch("feature").create(main)
    feature.object("table/part-5.csv").upload("id\n5\n")
    feature.object("table/part-0.csv").delete()
    feature_head = feature.commit(message="add 5, drop 0").get_commit().id
    assert not main.object("table/part-5.csv").exists()
    merged = feature.merge_into(main)
    assert main.object("table/part-5.csv").exists() and not main.object("table/part-0.csv").exists()
    merge_commit = main.get_commit()
    assert merge_commit.id == merged
    assert merge_commit.parents == [first.get_commit().id, feature_head]

    tag = repo.tag("v1").create(first.get_commit().id)
    with repo.tag("v1").object("table/part-0.csv").reader(mode="r") as reader:
        assert reader.read() == "id\n0\n"
    assert tag.get_commit().id == first.get_commit().id
    assert [t.id for t in repo.tags()] == ["v1"]


def test_copy_is_shallow(repo: lakefs.Repository) -> None:
    main = repo.branch("main")
    source = main.object("src.bin")
    source.upload(BLOB[:1000], mode="wb")
    copied = source.copy("main", "dst.bin")
    with copied.reader() as reader:
        assert reader.read() == BLOB[:1000]
    assert copied.stat().physical_address == source.stat().physical_address


def test_csv_round_trip_with_pandas_through_the_client(repo: lakefs.Repository, tmp_path: Path) -> None:
    import pandas as pd

    frame = pd.DataFrame({"id": [1, 2, 3], "name": ["a", "b", "c"]})
    with repo.branch("main").object("frames/f.csv").writer(mode="w", content_type="text/csv") as writer:
        frame.to_csv(writer, index=False)
    with repo.branch("main").object("frames/f.csv").reader(mode="r") as reader:
        assert pd.read_csv(reader).equals(frame)
