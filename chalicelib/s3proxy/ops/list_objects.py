"""ListObjects v1 and v2 (GET /{repo}[?list-type=2]): keys are ``<ref>/<path>``.

A prefix with a ref (``main/data/``) lists that ref's objects under ``data/``; a prefix without one (``""``,
``ma``) lists the branches whose names start with it, as common prefixes ``<branch>/`` (as lakeFS does), so
``aws s3 ls s3://repo/`` shows the branches. A ref that does not exist answers NoSuchKey naming it; an invalid
ref expression answers InvalidArgument. Markers, start-after and continuation tokens are keys; a
continuation token is the last key returned, base64url-encoded so it is opaque and XML-safe.
"""

from __future__ import annotations

import base64
import binascii
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from urllib.parse import quote

from chalicelib.graveler import errors
from chalicelib.graveler.records import Branch, ListedObject

from ..context import Context, repository_arn
from ..errors import S3Error
from ..model import Response
from ..xmlio import element, iso8601
from .common import owner, xml_response

__all__ = ["list_objects"]

MAX_KEYS = 1000


def encode_token(key: str) -> str:
    return base64.urlsafe_b64encode(key.encode()).decode().rstrip("=")


def decode_token(token: str) -> str:
    try:
        return base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise S3Error("InvalidArgument", "The continuation token provided is incorrect") from None


def _max_keys(text: str) -> int:
    if not text:
        return MAX_KEYS
    if not text.isdigit():
        raise S3Error("InvalidArgument", "max-keys must be a non-negative integer")
    return min(int(text), MAX_KEYS)


def _all_branches(ctx: Context, prefix: str) -> list[Branch]:
    branches: list[Branch] = []
    after = ""
    while True:
        page = ctx.engine.branches.list_branches(ctx.bucket, prefix=prefix, after=after, amount=1000)
        branches.extend(page.results)
        if not page.has_more:
            return branches
        after = page.next_offset


def _list_branches(ctx: Context, prefix: str, marker: str, max_keys: int) -> tuple[list[str], bool]:
    ctx.authorize("fs:ListBranches", repository_arn(ctx.bucket))
    # In key order ("main-2/" sorts before "main/"), which is not branch-id order.
    keys = sorted(branch.id + "/" for branch in _all_branches(ctx, prefix))
    keys = [key for key in keys if key > marker]
    return keys[:max_keys], len(keys) > max_keys


def _list_ref(
    ctx: Context, prefix: str, delimiter: str, marker: str, max_keys: int
) -> tuple[str, Sequence[ListedObject], bool]:
    ctx.authorize("fs:ListObjects", repository_arn(ctx.bucket))
    ref, _, path_prefix = prefix.partition("/")
    ref_prefix = ref + "/"
    if not marker or marker < ref_prefix:
        after = ""
    elif marker.startswith(ref_prefix):
        after = marker[len(ref_prefix) :]
    else:
        return ref, [], False  # the marker is past every key of this ref
    if max_keys == 0:
        return ref, [], False
    try:
        page = ctx.engine.objects.list_objects(ctx.bucket, ref, path_prefix, delimiter, after, max_keys)
    except errors.RepositoryNotFound:
        raise
    except errors.NotFound as error:
        # lakeFS answers an empty listing here, which `aws s3 ls s3://repo/mian/` shows as nothing at all (exit
        # 1): say which ref is missing instead, with the code a GET of a key under it answers.
        raise S3Error(
            "NoSuchKey", f"{error} in repository {ctx.bucket} (a listing of s3://{ctx.bucket}/ shows its branches)"
        ) from None
    return ref, page.results, page.has_more


def list_objects(ctx: Context) -> Response:
    request = ctx.request
    list_type = request.param("list-type", "1")
    if list_type not in ("1", "2"):
        raise S3Error("InvalidArgument", f"unknown list-type {list_type!r}")
    v2 = list_type == "2"
    encoding = request.param("encoding-type")
    if encoding not in ("", "url"):
        raise S3Error("InvalidArgument", "encoding-type must be url")
    enc = (lambda text: quote(text, safe="/")) if encoding else (lambda text: text)
    prefix, delimiter = request.param("prefix"), request.param("delimiter")
    max_keys = _max_keys(request.param("max-keys"))
    token = request.param("continuation-token") if v2 else ""
    marker = decode_token(token) if token else request.param("start-after" if v2 else "marker")
    ctx.engine.repositories.get_repository(ctx.bucket)

    contents: list[ET.Element] = []
    common: list[str] = []
    last_key = ""
    if "/" not in prefix:
        common, truncated = _list_branches(ctx, prefix, marker, max_keys)
        last_key = common[-1] if common else ""
    else:
        ref, results, truncated = _list_ref(ctx, prefix, delimiter, marker, max_keys)
        for item in results:
            key = f"{ref}/{item.key}"
            last_key = key
            if item.entry is None:
                common.append(key)
                continue
            fields = [
                element("Key", enc(key)),
                element("LastModified", iso8601(item.entry.mtime)),
                element("ETag", f'"{item.entry.etag}"'),
                element("Size", item.entry.size),
                element("StorageClass", "STANDARD"),
            ]
            if not v2 or request.param("fetch-owner") == "true":
                fields.append(owner(ctx.user_id))
            contents.append(element("Contents", children=fields))

    head = [element("Name", ctx.bucket), element("Prefix", enc(prefix))]
    if v2:
        if request.has_param("start-after"):
            head.append(element("StartAfter", enc(request.param("start-after"))))
        if token:
            head.append(element("ContinuationToken", token))
        if truncated:
            head.append(element("NextContinuationToken", encode_token(last_key)))
        head.append(element("KeyCount", len(contents) + len(common)))
    else:
        head.append(element("Marker", enc(request.param("marker"))))
        if truncated:
            head.append(element("NextMarker", enc(last_key)))
    head.append(element("MaxKeys", max_keys))
    if delimiter:
        head.append(element("Delimiter", enc(delimiter)))
    head.append(element("IsTruncated", "true" if truncated else "false"))
    if encoding:
        head.append(element("EncodingType", "url"))
    prefixes = [element("CommonPrefixes", children=[element("Prefix", enc(p))]) for p in common]
    return xml_response("ListBucketResult", [*head, *contents, *prefixes])
