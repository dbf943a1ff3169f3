"""CopyObject: shallow within a repository (the physical object is shared), a server-side copy across
repositories (into the destination's namespace), metadata directives and copy-source conditions."""

from __future__ import annotations

import pytest
from botocore.client import BaseClient
from botocore.exceptions import ClientError

from chalicelib.adapters.memory import MemoryBlockStore
from chalicelib.graveler.records import Repository

from .conftest import Harness


def code(error: pytest.ExceptionInfo[ClientError]) -> str:
    return str(error.value.response["Error"]["Code"])


@pytest.fixture
def source(s3: BaseClient, repo: Repository) -> str:
    s3.put_object(
        Bucket="repo",
        Key="main/src/data.bin",
        Body=b"payload" * 100,
        ContentType="application/x-src",
        Metadata={"origin": "test"},
    )
    return "repo/main/src/data.bin"


def test_copy_within_a_branch_shares_the_physical_object(s3: BaseClient, harness: Harness, source: str) -> None:
    blocks = harness.services.engine.ports.blocks
    assert isinstance(blocks, MemoryBlockStore)
    before = len(blocks.blobs)
    result = s3.copy_object(Bucket="repo", Key="main/dst/copy.bin", CopySource=source)
    assert result["CopyObjectResult"]["ETag"] == s3.head_object(Bucket="repo", Key="main/src/data.bin")["ETag"]
    engine = harness.services.engine
    src = engine.objects.stat_object("repo", "main", "src/data.bin")
    dst = engine.objects.stat_object("repo", "main", "dst/copy.bin")
    assert dst.physical_address == src.physical_address
    assert (dst.content_type, dst.user_metadata) == ("application/x-src", {"origin": "test"})
    assert len(blocks.blobs) == before  # no byte was written
    assert s3.get_object(Bucket="repo", Key="main/dst/copy.bin")["Body"].read() == b"payload" * 100


def test_copy_across_branches_and_from_a_commit(s3: BaseClient, harness: Harness, source: str) -> None:
    engine = harness.services.engine
    commit = engine.commits.commit("repo", "main", "alice", "c")
    engine.branches.create_branch("repo", "dev", "main")
    s3.copy_object(Bucket="repo", Key="dev/from-main.bin", CopySource=source)
    s3.copy_object(
        Bucket="repo", Key="dev/from-commit.bin", CopySource={"Bucket": "repo", "Key": f"{commit.id}/src/data.bin"}
    )
    address = engine.objects.stat_object("repo", "main", "src/data.bin").physical_address
    assert engine.objects.stat_object("repo", "dev", "from-main.bin").physical_address == address
    assert engine.objects.stat_object("repo", "dev", "from-commit.bin").physical_address == address
    assert "from-main.bin" not in [o.key for o in engine.objects.list_objects("repo", "main").results]


def test_copy_across_repositories_copies_into_the_destination_namespace(
    s3: BaseClient, harness: Harness, source: str
) -> None:
    other = harness.repo("other")
    s3.copy_object(Bucket="other", Key="main/imported.bin", CopySource=source)
    engine = harness.services.engine
    src = engine.objects.stat_object("repo", "main", "src/data.bin")
    dst = engine.objects.stat_object("other", "main", "imported.bin")
    assert dst.physical_address != src.physical_address
    assert dst.physical_address.startswith(other.storage_namespace + "/data/")
    assert (dst.etag, dst.size, dst.user_metadata) == (src.etag, src.size, src.user_metadata)
    # The destination does not depend on the source's data: losing it (GC of "repo") leaves the copy readable.
    engine.ports.blocks.delete(src.physical_address)
    assert s3.get_object(Bucket="other", Key="main/imported.bin")["Body"].read() == b"payload" * 100


def test_metadata_directive_replace(s3: BaseClient, harness: Harness, source: str) -> None:
    s3.copy_object(
        Bucket="repo",
        Key="main/src/data.bin",
        CopySource=source,
        MetadataDirective="REPLACE",
        ContentType="text/plain",
        Metadata={"new": "yes"},
    )
    head = s3.head_object(Bucket="repo", Key="main/src/data.bin")
    assert (head["ContentType"], head["Metadata"]) == ("text/plain", {"new": "yes"})
    with pytest.raises(ClientError) as error:
        s3.copy_object(Bucket="repo", Key="main/src/data.bin", CopySource=source)
    assert code(error) == "InvalidRequest"  # onto itself without changing anything


def test_copy_source_conditions(s3: BaseClient, source: str) -> None:
    etag = s3.head_object(Bucket="repo", Key="main/src/data.bin")["ETag"]
    s3.copy_object(Bucket="repo", Key="main/c1", CopySource=source, CopySourceIfMatch=etag)
    for kwargs in ({"CopySourceIfMatch": '"nope"'}, {"CopySourceIfNoneMatch": etag}):
        with pytest.raises(ClientError) as error:
            s3.copy_object(Bucket="repo", Key="main/c2", CopySource=source, **kwargs)
        assert code(error) == "PreconditionFailed"
    with pytest.raises(ClientError):
        s3.head_object(Bucket="repo", Key="main/c2")


def test_copy_errors(s3: BaseClient, harness: Harness, source: str) -> None:
    for copy_source, expected in [("repo/main/missing", "NoSuchKey"), ("nothing/main/x", "NoSuchBucket")]:
        with pytest.raises(ClientError) as error:
            s3.copy_object(Bucket="repo", Key="main/x", CopySource=copy_source)
        assert code(error) == expected
    harness.services.engine.branches.create_tag("repo", "v1", "main")
    with pytest.raises(ClientError) as error:
        s3.copy_object(Bucket="repo", Key="v1/x", CopySource=source)
    assert code(error) == "NoSuchBranch"
    with pytest.raises(ClientError) as error:
        s3.copy_object(Bucket="repo", Key="main/x", CopySource=source + "?versionId=abc")
    assert code(error) == "NotImplemented"


def test_copy_of_collected_data_across_repositories(s3: BaseClient, harness: Harness, source: str) -> None:
    harness.repo("other")
    engine = harness.services.engine
    engine.ports.blocks.delete(engine.objects.stat_object("repo", "main", "src/data.bin").physical_address)
    with pytest.raises(ClientError) as error:
        s3.copy_object(Bucket="other", Key="main/x", CopySource=source)
    assert code(error) == "NoSuchVersion"
