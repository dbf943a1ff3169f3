"""Delta Lake's commit protocol through the S3 gateway (issue 40, item 1): two delta-rs writers append to one table
at once with S3 conditional put (``aws_conditional_put: etag``: each commit file ``_delta_log/<version>.json`` is
written with If-None-Match: *, and a writer that loses a version retries on the next). No commit is lost: the
table's log has a version per append, and the table holds every row appended."""

from __future__ import annotations

import threading
from typing import Any

import lakefs
import pytest

from .conftest import LocalProcess
from .s3support import s3_endpoint

deltalake = pytest.importorskip("deltalake")
pa = pytest.importorskip("pyarrow")

pytestmark = pytest.mark.e2e

WRITERS = 2
APPENDS = 12


def storage_options(local: LocalProcess) -> dict[str, str]:
    return {
        "AWS_ENDPOINT_URL": s3_endpoint(local),
        "AWS_ACCESS_KEY_ID": local.access_key_id,
        "AWS_SECRET_ACCESS_KEY": local.secret_access_key,
        "AWS_REGION": "us-east-1",
        "AWS_ALLOW_HTTP": "true",
        "aws_conditional_put": "etag",
    }


def test_two_delta_rs_writers_appending_at_once_lose_no_commit(
    local_stack: LocalProcess, repo: lakefs.Repository
) -> None:
    uri = f"s3://{repo.id}/main/tables/events"
    options = storage_options(local_stack)
    deltalake.write_deltalake(
        uri, pa.table({"writer": pa.array([-1], pa.int64()), "n": pa.array([-1], pa.int64())}), storage_options=options
    )
    failed: list[BaseException] = []

    def writer(w: int) -> None:
        try:
            for n in range(APPENDS):
                rows = pa.table({"writer": pa.array([w], pa.int64()), "n": pa.array([n], pa.int64())})
                deltalake.write_deltalake(uri, rows, mode="append", storage_options=options)
        except BaseException as e:
            failed.append(e)

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(WRITERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failed, failed

    table = deltalake.DeltaTable(uri, storage_options=options)
    # A version per commit: the creation, then every append of every writer, none written over another.
    assert table.version() == WRITERS * APPENDS
    history: list[dict[str, Any]] = table.history()
    assert sorted(entry["version"] for entry in history) == list(range(WRITERS * APPENDS + 1))
    rows = table.to_pyarrow_table().to_pylist()
    assert len(rows) == 1 + WRITERS * APPENDS
    assert sorted((r["writer"], r["n"]) for r in rows if r["writer"] >= 0) == sorted(
        (w, n) for w in range(WRITERS) for n in range(APPENDS)
    )
