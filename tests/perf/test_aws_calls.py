"""AWS calls per API operation, on moto in process, through app.py with the deployed wiring (DynamoDB through
PynamoDB, S3 and KMS through boto3). Every botocore client made while the stack is up gets a ``before-call``
hook that counts the calls, so the counts are what the adapters actually send, whatever library sends them.

Counts, not times, are the measure (issue 23, point 3). Each operation is counted in a warm container: it runs
once on other names first, so that what a container keeps between requests (access keys, repositories,
immutable commits) is in place, as it is for all but the first request a Lambda container serves.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import requests

from chalicelib.graveler.writes import staging_shards
from tests.api.support import Api, body_of
from tests.perf.support import CallCounter, app_on_moto

REGION = "us-east-1"
BUCKET = "calls-bucket"
REPO = "calls"

# The goals (AWS calls per operation, at most).
GOALS = {
    "stat": 2,
    "upload": 4,
    "list 100": 2,
    "create branch": 2,
    "commit of 1 change": 12,
    "presigned upload + link": 6,
}


@pytest.fixture
def api(counter: CallCounter) -> Iterator[Api]:
    with app_on_moto(BUCKET, REPO, "calls") as (api, _services):
        for i in range(100):
            api.upload(REPO, "main", f"seed/{i:03}", b"x")
        api.commit(REPO, "main", "seed")
        yield api


def _ok(response: Any, status: int = 200) -> Any:
    assert response.status_code == status, response.body
    try:
        return body_of(response)
    except ValueError:
        return response.body


def _stat(api: Api, path: str) -> None:
    _ok(api.get(f"/repositories/{REPO}/refs/main/objects/stat", query={"path": path}))


def _list(api: Api) -> None:
    page = _ok(api.get(f"/repositories/{REPO}/refs/main/objects/ls", query={"prefix": "seed/", "amount": 100}))
    assert len(page["results"]) == 100


def _create_branch(api: Api, name: str) -> None:
    _ok(api.post(f"/repositories/{REPO}/branches", json_body={"name": name, "source": "main"}), 201)


def _presigned_upload_and_link(api: Api, path: str) -> None:
    backing = f"/repositories/{REPO}/branches/main/staging/backing"
    location = _ok(api.get(backing, query={"path": path, "presign": "true"}))
    data = b"presigned bytes"
    # The client's PUT goes to S3 itself (moto, intercepted in process), not through the API: not counted.
    put = requests.put(location["presigned_url"], data=data, timeout=10)
    assert put.status_code == 200, put.text
    etag = put.headers["ETag"].strip('"')
    body = {"staging": {"physical_address": location["physical_address"]}, "checksum": etag, "size_bytes": len(data)}
    _ok(api.request("PUT", backing, query={"path": path}, json_body=body))


def _commit_one(api: Api, counter: CallCounter, n: int) -> Counter[str]:
    api.upload(REPO, "main", f"commit/{n}", b"one change")
    return counter.during(lambda: api.commit(REPO, "main", f"change {n}"))


def _measure(api: Api, counter: CallCounter, operation: str) -> Counter[str]:
    """The calls of the operation's second run (the first warms the container)."""
    runs: dict[str, Callable[[int], Counter[str]]] = {
        "stat": lambda n: counter.during(lambda: _stat(api, f"seed/{n:03}")),
        "upload": lambda n: counter.during(lambda: api.upload(REPO, "main", f"up/{n}", b"data")),
        "list 100": lambda n: counter.during(lambda: _list(api)),
        "create branch": lambda n: counter.during(lambda: _create_branch(api, f"b{n}")),
        "commit of 1 change": lambda n: _commit_one(api, counter, n),
        "presigned upload + link": lambda n: counter.during(lambda: _presigned_upload_and_link(api, f"pre/{n}")),
    }
    runs[operation](1)
    return runs[operation](2)


@pytest.mark.parametrize("operation", list(GOALS))
def test_aws_calls_per_operation_are_within_the_goal(api: Api, counter: CallCounter, operation: str) -> None:
    calls = _measure(api, counter, operation)
    total = sum(calls.values())
    print(json.dumps({"operation": operation, "total": total, "calls": dict(sorted(calls.items()))}))
    goal = GOALS[operation] + _sketch_writes(operation)
    assert total <= goal, f"{operation}: {total} AWS calls, goal {goal}: {dict(calls)}"


# The key each staging write of a measured (second) run stages.
_STAGED_KEY = {"upload": "up/2", "presigned upload + link": "pre/2"}


def _sketch_writes(operation: str) -> int:
    """One staged key in SKETCH_ODDS is also written to its shard's sketch (one more PutItem): by a hash of the key,
    so whether the measured key is one of them is known here."""
    key = _STAGED_KEY.get(operation)
    return int(key is not None and staging_shards.sketch_rank(key) is not None)


def test_a_commit_reads_no_range_the_previous_commit_wrote(api: Api, counter: CallCounter) -> None:
    """The range a commit rewrites was written by the previous commit in this container: kept from that write (as a
    read would keep it), it is not fetched again. Before: 12 calls, one of them s3.GetObject of that range."""
    _commit_one(api, counter, 1)
    calls = _commit_one(api, counter, 2)
    assert calls["s3.GetObject"] == 0, dict(calls)
    assert sum(calls.values()) == 8, dict(calls)


def test_a_one_change_commit_queries_staging_twice(api: Api, counter: CallCounter) -> None:
    """A one-change commit reads staging twice: the count before the seal (an exact one, so the seal sizes the next
    token without sampling the sealed one's sketch), and one read of the sealed token right after the seal that
    the pre-commit hooks (its action files) and the commit's build (its changes) share (staging_snapshot.py).
    Before: 5 Queries (an emptiness check, the sketch sample, the hooks' read of both tokens, the build's read),
    then 3 (the hooks and the build each read the sealed token)."""
    _commit_one(api, counter, 1)
    calls = _commit_one(api, counter, 2)
    assert calls["dynamodb.Query"] == 2, dict(calls)


def test_a_diff_of_a_branch_and_its_parent_reads_the_branch_once(api: Api, counter: CallCounter) -> None:
    """``main~1..main`` names one branch twice: one read of it serves both sides (one state of it, as one read of
    both would give). Before: 2 calls, the branch's GetItem twice."""
    api.upload(REPO, "main", "diffed", b"one change")
    api.commit(REPO, "main", "the change")
    diff = f"/repositories/{REPO}/refs/main~1/diff/main"
    _ok(api.get(diff, query={"amount": 100}))  # warm
    calls = counter.during(lambda: _ok(api.get(diff, query={"amount": 100})))
    assert calls == {"dynamodb.GetItem": 1}, dict(calls)


def test_a_commit_reads_each_staged_row_out_once(api: Api, counter: CallCounter) -> None:
    """Before its seal a commit counts what is staged (to choose between committing inline and its workflow): the
    store counts the token's rows (a Query with Select=COUNT), so only the build reads them out. Before: the count
    read every row out too, and a commit of n rows decoded 2n."""
    for i in range(60):
        api.upload(REPO, "main", f"many/{i:03}", b"x")
    before = Counter(counter.queried)
    api.commit(REPO, "main", "many")
    assert counter.queried - before == {"rows": 60, "counted": 60}, dict(counter.queried - before)


def test_an_upload_after_another_reads_the_branch_once(api: Api, counter: CallCounter) -> None:
    """A plain upload stages into the token of the branch record the previous upload's re-check read (within
    UPLOAD_BRANCH_TTL_SECONDS; the counting fixture keeps it for the whole test): its one branch read is the
    re-check after the write. Before: 4 calls, the branch's GetItem before the write and after it."""
    api.upload(REPO, "main", "first", b"x")
    calls = counter.during(lambda: api.upload(REPO, "main", "up/2", b"data"))
    sketch = _sketch_writes("upload")
    assert calls == {"dynamodb.GetItem": 1, "dynamodb.PutItem": 1 + sketch, "s3.PutObject": 1}, dict(calls)
