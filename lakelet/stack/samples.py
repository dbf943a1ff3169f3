"""The first repository of a new local stack: ``quickstart``, with the sample dataset and its README.

As lakeFS's quickstart does, ``lakelet up --sample-data`` (``make run`` passes it) creates a repository a
newcomer can browse, query and collect at once. It goes through the lakeFS API like any client would
(``POST /repositories`` with ``sample_data``, the field behind the clients' ``include_samples``), so the dataset
is the one of chalicelib/samples/. It also gets GC rules, so the ``lakelet gc run quickstart`` the banner prints
works as pasted.

Once per stack state: a record in the stack's own bucket (``_lakelet/samples-created.json`` in moto's S3) says
it was done, so a user who deletes ``quickstart`` does not get it back on the next start. The record lives with
the rest of the state: a persistent data directory keeps both, an ephemeral stack starts without either.
"""

from __future__ import annotations

import base64
import json
import sys
import time
import urllib.error
import urllib.request
from typing import Any, Protocol

from lakelet.stack.app_environment import Credentials

QUICKSTART = "quickstart"
MARKER_KEY = "_lakelet/samples-created.json"
# Long enough that nothing a newcomer just wrote is collected, short enough to show GC at work on old versions.
QUICKSTART_RETENTION_DAYS = 7


class _Stack(Protocol):
    """What the samples read of the running stack (local.LocalStack, which calls ensure_quickstart once it is up):
    named by its shape, not imported, since the stack imports this module."""

    credentials: Credentials
    region: str
    bucket: str

    @property
    def api_url(self) -> str: ...

    @property
    def moto_url(self) -> str: ...

    @property
    def default_namespace_prefix(self) -> str: ...


class _ApiError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"{status}: {message}")
        self.status = status


def _call(stack: _Stack, method: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
    keys = stack.credentials
    token = base64.b64encode(f"{keys.access_key_id}:{keys.secret_access_key}".encode()).decode()
    headers = {"Authorization": f"Basic {token}", "Accept": "application/json"}
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    request = urllib.request.Request(stack.api_url + path, data=data, method=method, headers=headers)
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback: never through a proxy
    try:
        with opener.open(request, timeout=60) as response:
            raw = response.read()
    except urllib.error.HTTPError as error:
        try:
            message = str(json.loads(error.read()).get("message", ""))
        except ValueError:
            message = ""
        raise _ApiError(error.code, message or str(error.reason)) from None
    return dict(json.loads(raw)) if raw.strip() else {}


def _marker_exists(s3: Any, bucket: str) -> bool:
    try:
        s3.head_object(Bucket=bucket, Key=MARKER_KEY)
    except s3.exceptions.ClientError as error:
        if error.response.get("Error", {}).get("Code") in ("404", "NoSuchKey", "NotFound"):
            return False
        raise
    return True


def ensure_quickstart(stack: _Stack) -> str | None:
    """Creates ``quickstart`` unless this stack's state says it was created once; returns its name when it
    exists after the call and was created by this mechanism, else None."""
    import boto3

    s3 = boto3.client("s3", region_name=stack.region, endpoint_url=stack.moto_url)
    if _marker_exists(s3, stack.bucket):
        try:
            _call(stack, "GET", f"/repositories/{QUICKSTART}")
        except _ApiError:
            return None  # created once and deleted since: the user's choice stands
        return QUICKSTART
    repository = {
        "name": QUICKSTART,
        "storage_namespace": f"{stack.default_namespace_prefix}/{QUICKSTART}",
        "default_branch": "main",
    }
    created = True
    try:
        _call(stack, "POST", "/repositories", {**repository, "sample_data": True})
    except _ApiError as error:
        if error.status == 409:
            created = False  # already there (an older state): keep it, rules and all, as it is
        elif error.status == 400:
            # A server without the sample dataset: an empty quickstart is still a place to start.
            print(f"lakelet up: no sample data ({error}); creating an empty {QUICKSTART}", file=sys.stderr)
            _call(stack, "POST", "/repositories", repository)
        else:
            raise
    if created:
        _call(
            stack,
            "PUT",
            f"/repositories/{QUICKSTART}/settings/gc_rules",
            {"default_retention_days": QUICKSTART_RETENTION_DAYS, "branches": []},
        )
    record = {"repository": QUICKSTART, "created_at": time.time()}
    s3.put_object(Bucket=stack.bucket, Key=MARKER_KEY, Body=json.dumps(record).encode(), ContentType="application/json")
    return QUICKSTART
