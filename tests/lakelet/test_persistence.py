"""The parts of lakelet/persistence/ on their own: the journal's framing, the data directory's format and lock,
which requests are journaled, pinned randomness, and a snapshot of moto's backends that loads back."""

from __future__ import annotations

import io
import json
import os
import threading
import uuid
from collections import defaultdict
from pathlib import Path
from typing import Any

import boto3
import pytest
from moto import mock_aws

from lakelet.persistence import datadir, determinism, journal, middleware, snapshot
from lakelet.persistence.datadir import DataDirError
from lakelet.persistence.journal import Journal, Record


def _request(n: int, body: bytes = b"") -> Record:
    return Record(journal.REQUEST, 1000.0 + n, seed=n, status=200, environ={"PATH_INFO": f"/{n}"}, body=body)


# ---- journal ------------------------------------------------------------------------------------------------


def test_journal_records_read_back_in_order(tmp_path: Path) -> None:
    path = tmp_path / "journal-1.log"
    written = Journal(path, fsync_interval=0.01)
    for n in range(50):
        written.append(_request(n, os.urandom(n * 37)))
    assert written.records == 50 and written.size == path.stat().st_size
    # Readable at once, before any fsync or close: what a kill -9 would leave.
    assert [r.seed for r in journal.read_records(path)] == list(range(50))
    written.close()
    assert list(journal.read_records(path))[7] == _request(7, list(journal.read_records(path))[7].body)


def test_journal_stops_at_a_torn_or_damaged_record(tmp_path: Path) -> None:
    path = tmp_path / "journal-1.log"
    written = Journal(path, fsync_interval=3600)
    for n in range(3):
        written.append(_request(n, b"x" * 100))
    whole = path.read_bytes()  # as a kill leaves it: no padding of a last fsync
    written.close()
    path.write_bytes(whole[:-10])  # the last record cut short by a kill
    assert [r.seed for r in journal.read_records(path)] == [0, 1]
    damaged = bytearray(whole)
    damaged[len(whole) // 2] ^= 0xFF  # a flipped byte inside the second record
    path.write_bytes(bytes(damaged))
    assert [r.seed for r in journal.read_records(path)] == [0]


def test_journal_appends_after_close_are_refused(tmp_path: Path) -> None:
    written = Journal(tmp_path / "j.log")
    written.close()
    written.close()  # idempotent
    with pytest.raises(RuntimeError):
        written.append(_request(1))


# ---- data directory -----------------------------------------------------------------------------------------


def test_a_new_directory_gets_a_format_file(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b"
    datadir.prepare(target)
    assert json.loads((target / "FORMAT").read_text()) == {"kind": "lakelet-local-data", "format": datadir.FORMAT}
    assert (target / "moto").is_dir()
    datadir.prepare(target)  # and is then accepted as it is


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ({"kind": "lakelet-local-data", "format": datadir.FORMAT + 1}, "newer than this Lakelet reads"),
        ({"kind": "lakelet-local-data", "format": 0}, "cannot read"),
        ({"kind": "something-else", "format": 1}, "not a Lakelet format file"),
        ("not json", "not a Lakelet format file"),
    ],
)
def test_other_formats_are_refused_and_left_alone(tmp_path: Path, content: Any, message: str) -> None:
    text = content if isinstance(content, str) else json.dumps(content)
    (tmp_path / "FORMAT").write_text(text)
    (tmp_path / "moto").mkdir()
    (tmp_path / "moto" / "snapshot-3.bin").write_bytes(b"old data")
    with pytest.raises(DataDirError, match=message) as raised:
        datadir.prepare(tmp_path)
    assert "\n" not in str(raised.value)
    assert (tmp_path / "FORMAT").read_text() == text
    assert (tmp_path / "moto" / "snapshot-3.bin").read_bytes() == b"old data"


def test_a_directory_of_other_files_is_refused(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(DataDirError, match="not a Lakelet data directory"):
        datadir.prepare(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


def test_one_stack_per_directory(tmp_path: Path) -> None:
    datadir.prepare(tmp_path)
    first = datadir.DirectoryLock(tmp_path)
    first.acquire()
    with pytest.raises(DataDirError, match=f"in use by another lakelet up \\(pid {os.getpid()}\\)"):
        datadir.DirectoryLock(tmp_path).acquire()
    first.release()
    second = datadir.DirectoryLock(tmp_path)
    second.acquire()
    second.release()


# ---- which requests are journaled ---------------------------------------------------------------------------

_SIGNED_S3 = "AWS4-HMAC-SHA256 Credential=AKID/20261124/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=x"
_SIGNED_LAMBDA = _SIGNED_S3.replace("/s3/", "/lambda/")


@pytest.mark.parametrize(
    ("environ", "journaled"),
    [
        ({"REQUEST_METHOD": "GET", "PATH_INFO": "/bucket/key"}, False),
        ({"REQUEST_METHOD": "HEAD", "PATH_INFO": "/bucket/key"}, False),
        ({"REQUEST_METHOD": "PUT", "PATH_INFO": "/bucket/key"}, True),
        ({"REQUEST_METHOD": "DELETE", "PATH_INFO": "/bucket/key"}, True),
        ({"REQUEST_METHOD": "POST", "PATH_INFO": "/bucket", "QUERY_STRING": "delete"}, True),
        ({"REQUEST_METHOD": "POST", "PATH_INFO": "/", "HTTP_X_AMZ_TARGET": "DynamoDB_20120810.PutItem"}, True),
        (
            {"REQUEST_METHOD": "POST", "PATH_INFO": "/", "HTTP_X_AMZ_TARGET": "DynamoDB_20120810.TransactWriteItems"},
            True,
        ),
        ({"REQUEST_METHOD": "POST", "PATH_INFO": "/", "HTTP_X_AMZ_TARGET": "DynamoDB_20120810.Query"}, False),
        ({"REQUEST_METHOD": "POST", "PATH_INFO": "/", "HTTP_X_AMZ_TARGET": "TrentService.Decrypt"}, False),
        ({"REQUEST_METHOD": "POST", "PATH_INFO": "/", "HTTP_X_AMZ_TARGET": "TrentService.CreateKey"}, True),
        ({"REQUEST_METHOD": "POST", "PATH_INFO": "/", "HTTP_X_AMZ_TARGET": "AWSStepFunctions.StartExecution"}, True),
        (
            {"REQUEST_METHOD": "POST", "PATH_INFO": "/", "HTTP_X_AMZ_TARGET": "AWSStepFunctions.DescribeExecution"},
            False,
        ),
        (
            {"REQUEST_METHOD": "POST", "PATH_INFO": "/", "HTTP_X_AMZ_TARGET": "AWSStepFunctions.StartSyncExecution"},
            False,
        ),
        ({"REQUEST_METHOD": "POST", "PATH_INFO": "/moto-api/config"}, False),
        # A Lambda invoke runs the app's handler, whose own writes are journaled one by one.
        (
            {
                "REQUEST_METHOD": "POST",
                "PATH_INFO": "/2015-03-31/functions/commit-step/invocations",
                "HTTP_AUTHORIZATION": _SIGNED_LAMBDA,
            },
            False,
        ),
        # ... but an S3 object whose key looks like an invoke path is an S3 write.
        (
            {
                "REQUEST_METHOD": "PUT",
                "PATH_INFO": "/2015-03-31/functions/x/invocations",
                "HTTP_AUTHORIZATION": _SIGNED_S3,
            },
            True,
        ),
        (
            {
                "REQUEST_METHOD": "PUT",
                "PATH_INFO": "/2015-03-31/functions/x/invocations",
                "QUERY_STRING": "X-Amz-Credential=AKID%2F20261124%2Fus-east-1%2Fs3%2Faws4_request",
            },
            True,
        ),
    ],
)
def test_which_requests_are_journaled(environ: dict[str, str], journaled: bool) -> None:
    assert middleware.may_change_state(environ) is journaled


def test_query_protocol_actions_are_read_from_the_body() -> None:
    environ = {"REQUEST_METHOD": "POST", "PATH_INFO": "/", "CONTENT_TYPE": "application/x-www-form-urlencoded"}
    assert middleware.may_change_state(environ)
    assert not middleware.changes_state(environ, b"Action=GetCallerIdentity&Version=2011-06-15")
    assert middleware.changes_state(environ, b"Action=CreateRole&RoleName=x")


def test_bodies_are_read_whole_and_left_readable() -> None:
    environ: dict[str, Any] = {"CONTENT_LENGTH": "5", "wsgi.input": io.BytesIO(b"hello, and more")}
    assert middleware.read_body(environ) == b"hello"
    assert environ["wsgi.input"].read() == b"hello" and environ["CONTENT_LENGTH"] == "5"
    chunked: dict[str, Any] = {"HTTP_TRANSFER_ENCODING": "chunked", "wsgi.input": io.BytesIO(b"de-chunked bytes")}
    assert middleware.read_body(chunked) == b"de-chunked bytes"
    assert "HTTP_TRANSFER_ENCODING" not in chunked and chunked["CONTENT_LENGTH"] == "16"


# ---- pinned randomness and clock ----------------------------------------------------------------------------


def test_pinned_requests_draw_the_same_numbers_and_see_the_same_time() -> None:
    from moto.core.utils import utcnow
    from moto.moto_api._internal import mock_random

    determinism.install()
    try:

        def draw() -> tuple[Any, ...]:
            with determinism.pinned(42, 1_700_000_000.5):
                return mock_random.get_random_hex(), uuid.uuid4(), os.urandom(8), mock_random.uuid4(), utcnow()

        first, second = draw(), draw()
        assert first == second
        assert first[-1].timestamp() == pytest.approx(1_700_000_000.5)  # naive UTC, as moto's
        other_thread: list[bytes] = []
        with determinism.pinned(42, 0.0):
            worker = threading.Thread(target=lambda: other_thread.append(os.urandom(8)))
            worker.start()
            worker.join()
        assert other_thread[0] != first[2]  # only the pinned thread is pinned
        assert draw()[0] == first[0] and mock_random.get_random_hex() != first[0]
    finally:
        determinism.uninstall()
    assert not determinism.installed()
    assert utcnow().year >= 2026


# ---- snapshots ----------------------------------------------------------------------------------------------


class _Holder:
    """What moto's models hold that pickle refuses: locks, lambdas as defaultdict factories."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.rlock = threading.RLock()
        self.groups: defaultdict[str, dict[str, int]] = defaultdict(lambda: {})  # noqa: PIE807 - moto's own shape, which pickle refuses
        self.groups["a"]["b"] = 1


def test_snapshot_reducers_rebuild_what_pickle_cannot_take() -> None:
    buffer = io.BytesIO()
    snapshot._Pickler(buffer).dump(_Holder())
    import pickle

    loaded = pickle.loads(buffer.getvalue())
    assert loaded.groups == {"a": {"b": 1}} and loaded.groups["new"] == {}
    with loaded.lock, loaded.rlock, loaded.rlock:
        pass


@mock_aws
def test_a_snapshot_of_moto_loads_back(tmp_path: Path) -> None:
    s3 = boto3.client("s3", region_name="us-east-1")
    s3.create_bucket(Bucket="kept")
    s3.put_object(Bucket="kept", Key="k", Body=b"bytes \x00\xff")
    kms = boto3.client("kms", region_name="us-east-1")
    key_id = kms.create_key()["KeyMetadata"]["KeyId"]
    sealed = kms.encrypt(KeyId=key_id, Plaintext=b"secret")["CiphertextBlob"]
    table = boto3.client("dynamodb", region_name="us-east-1")
    table.create_table(
        TableName="t",
        KeySchema=[{"AttributeName": "p", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "p", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    table.put_item(TableName="t", Item={"p": {"S": "x"}, "v": {"N": "7"}})
    path = tmp_path / "snapshot-1.bin"
    with open(path, "wb") as out:
        snapshot.write(out)
    s3.delete_object(Bucket="kept", Key="k")
    snapshot.load(path)
    assert s3.get_object(Bucket="kept", Key="k")["Body"].read() == b"bytes \x00\xff"
    assert kms.decrypt(KeyId=key_id, CiphertextBlob=sealed)["Plaintext"] == b"secret"
    assert table.get_item(TableName="t", Key={"p": {"S": "x"}})["Item"]["v"] == {"N": "7"}
    # Written by another moto: refused in one line, not loaded.
    data = path.read_bytes()
    header, rest = data.split(b"\n", 1)
    path.write_bytes(json.dumps({**json.loads(header), "moto": "0.0.1"}).encode() + b"\n" + rest)
    with pytest.raises(DataDirError, match=r"written with moto 0\.0\.1"):
        snapshot.load(path)


def test_journal_padding_before_fsync_is_skipped(tmp_path: Path) -> None:
    path = tmp_path / "journal-1.log"
    written = Journal(path, fsync_interval=3600)
    for n in range(20):
        written.append(_request(n, b"y" * (n * 97)))
        if n % 3 == 0:
            written.sync()  # pads to a page boundary, so the next record starts a fresh page
            assert written.size % journal.PAGE == 0 == path.stat().st_size % journal.PAGE
    written.close()
    assert [r.seed for r in journal.read_records(path)] == list(range(20))
    with open(path, "ab") as out:
        out.write(bytes(5))  # zeros at the end, as a crash in the middle of padding leaves
    assert len(list(journal.read_records(path))) == 20


def test_imports_pass_through_the_unpinning_wrapper_only_while_a_thread_is_pinned() -> None:
    """A replaced ``__import__`` slows every import statement of the process: it is in place only while pinned,
    and an import made inside a pinned request still draws nothing from the request's numbers."""
    import builtins

    original = builtins.__import__
    determinism.install()
    try:
        assert builtins.__import__ is original
        with determinism.pinned(7, 0.0):
            before = os.urandom(8)
            assert builtins.__import__ is not original
            # Another thread pins and leaves meanwhile: the wrapper stays until the last pinned thread leaves.
            worker = threading.Thread(target=_pin_and_leave)
            worker.start()
            worker.join()
            assert builtins.__import__ is not original
        assert builtins.__import__ is original
        with determinism.pinned(7, 0.0):
            import json.tool  # noqa: F401 - an import inside the pinned block: not drawn from its numbers

            assert os.urandom(8) == before
        assert builtins.__import__ is original
    finally:
        determinism.uninstall()
    assert builtins.__import__ is original


def _pin_and_leave() -> None:
    with determinism.pinned(8, 0.0):
        pass
