"""Objects through the official lakeFS client: uploads round-trip byte for byte, ranges, metadata, deletes."""

from __future__ import annotations

import hashlib
import io
import random

import lakefs
import lakefs_sdk
import pytest
from lakefs.client import Client
from lakefs.exceptions import ObjectExistsException, ObjectNotFoundException

pytestmark = pytest.mark.e2e

BLOB = random.Random(20240601).randbytes(1024 * 1024 + 7)  # ~1 MB, odd size, every byte value
TEXT = "Lakelet e2e — ünïcödé text\nsecond line\n" * 500


def test_binary_and_text_uploads_round_trip(repo: lakefs.Repository) -> None:
    main = repo.branch("main")
    # The client streams these as Transfer-Encoding: chunked bodies: the local server must de-chunk them.
    main.object("data/blob.bin").upload(BLOB, mode="wb")
    main.object("docs/readme.txt").upload(TEXT, mode="w", content_type="text/plain; charset=utf-8")

    with main.object("data/blob.bin").reader(mode="rb") as reader:
        assert reader.read() == BLOB
    with main.object("docs/readme.txt").reader(mode="r") as reader:
        assert reader.read() == TEXT

    stat = main.object("data/blob.bin").stat()
    assert stat.size_bytes == len(BLOB)
    assert stat.checksum == hashlib.md5(BLOB).hexdigest()
    assert stat.content_type == "application/octet-stream"
    text_stat = main.object("docs/readme.txt").stat()
    assert text_stat.size_bytes == len(TEXT.encode("utf-8"))
    assert text_stat.content_type == "text/plain; charset=utf-8"


def test_writer_context_uploads_on_close(repo: lakefs.Repository) -> None:
    main = repo.branch("main")
    with main.object("stream/parts.bin").writer(mode="wb") as writer:
        for i in range(64):
            writer.write(bytes([i]) * 4096)
    expected = b"".join(bytes([i]) * 4096 for i in range(64))
    with main.object("stream/parts.bin").reader() as reader:
        assert reader.read() == expected


def test_empty_object(repo: lakefs.Repository) -> None:
    main = repo.branch("main")
    main.object("empty").upload(b"", mode="wb")
    assert main.object("empty").stat().size_bytes == 0
    with main.object("empty").reader() as reader:
        assert reader.read() == b""


def test_ranged_reads(repo: lakefs.Repository) -> None:
    obj = repo.branch("main").object("data/blob.bin")
    obj.upload(BLOB, mode="wb")
    with obj.reader(mode="rb") as reader:
        assert reader.read(10) == BLOB[:10]
        reader.seek(500_000)
        assert reader.read(1234) == BLOB[500_000:501_234]
        reader.seek(-5, io.SEEK_END)
        assert reader.read() == BLOB[-5:]
        # At the end the client asks for an unsatisfiable range: the server must answer 416, read gives b"".
        assert reader.read() == b""
        assert reader.read(3) == b""


def test_user_metadata_and_content_type(repo: lakefs.Repository) -> None:
    obj = repo.branch("main").object("tables/events.csv")
    obj.upload("id,kind\n1,click\n", content_type="text/csv", metadata={"owner": "alice", "source": "e2e"})
    stat = obj.stat()
    assert stat.metadata == {"owner": "alice", "source": "e2e"}
    assert stat.content_type == "text/csv"
    # A fresh upload replaces the metadata with its own.
    obj.upload("id,kind\n", content_type="text/csv", metadata={"owner": "bob"})
    assert repo.branch("main").object("tables/events.csv").stat().metadata == {"owner": "bob"}


def test_exclusive_create(repo: lakefs.Repository, client: Client) -> None:
    main = repo.branch("main")
    main.object("once.txt").upload("first", mode="x")
    with pytest.raises(ObjectExistsException):
        main.object("once.txt").upload("second", mode="x")
    # The client checks with HEAD first; the server's own If-None-Match: * check must hold too (412).
    with pytest.raises(lakefs_sdk.exceptions.ApiException) as error:
        client.sdk_client.objects_api.upload_object(repo.id, "main", "once.txt", if_none_match="*", content=b"third")
    assert error.value.status == 412
    with main.object("once.txt").reader(mode="r") as reader:
        assert reader.read() == "first"


def test_multipart_form_upload_through_the_sdk(repo: lakefs.Repository, client: Client) -> None:
    payload = bytes(range(256)) * 100
    stats = client.sdk_client.objects_api.upload_object(repo.id, "main", "form/upload.bin", content=payload)
    assert stats.size_bytes == len(payload)
    with repo.branch("main").object("form/upload.bin").reader() as reader:
        assert reader.read() == payload


def test_delete_objects(repo: lakefs.Repository) -> None:
    main = repo.branch("main")
    for name in ("a", "b", "c", "d"):
        main.object(f"del/{name}").upload(name)
    main.commit(message="four objects")

    main.object("del/a").delete()
    main.delete_objects(["del/b", "del/c"])
    assert not main.object("del/a").exists()
    assert not main.object("del/b").exists()
    assert main.object("del/d").exists()
    with pytest.raises(ObjectNotFoundException):
        main.object("del/c").reader().read()
    assert [o.path for o in main.objects(prefix="del/")] == ["del/d"]
    # The committed version is still there until the deletion is committed.
    assert repo.ref("main@").object("del/a").exists()

    main.commit(message="three deletions")
    assert [o.path for o in repo.ref("main").objects(prefix="del/")] == ["del/d"]
    assert [o.path for o in repo.ref("main~1").objects(prefix="del/")] == ["del/a", "del/b", "del/c", "del/d"]


def test_deleting_a_missing_object_is_not_an_error(repo: lakefs.Repository) -> None:
    repo.branch("main").object("never/was").delete()
    assert list(repo.branch("main").uncommitted()) == []
