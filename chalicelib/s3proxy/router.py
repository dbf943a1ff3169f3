"""Which operation a request is: by method, by whether it names a bucket and a key, and by its sub-resources.

Path style only: ``/{repo}`` is a bucket, ``/{repo}/{ref}/{path}`` an object. Sub-resources Lakelet does not
have (ACLs, tagging, versioning, policies...) are answered with NotImplemented, naming what was asked.
"""

from __future__ import annotations

from collections.abc import Callable

from .context import Context
from .errors import S3Error
from .model import Request, Response
from .ops.abort_multipart_upload import abort_multipart_upload
from .ops.bucket_location import bucket_location
from .ops.complete_multipart_upload import complete_multipart_upload
from .ops.copy_object import copy_object
from .ops.create_multipart_upload import create_multipart_upload
from .ops.delete_object import delete_object
from .ops.delete_objects import delete_objects
from .ops.get_object import get_object
from .ops.head_bucket import head_bucket
from .ops.list_buckets import list_buckets
from .ops.list_multipart_uploads import list_multipart_uploads
from .ops.list_objects import list_objects
from .ops.list_parts import list_parts
from .ops.put_object import put_object
from .ops.upload_part import upload_part
from .ops.upload_part_copy import upload_part_copy

Operation = Callable[[Context], Response]

UNSUPPORTED_SUBRESOURCES = {
    "acl": "ACLs",
    "tagging": "tagging",
    "versioning": "versioning",
    "versions": "object versions",
    "policy": "bucket policies",
    "policyStatus": "bucket policies",
    "cors": "CORS configuration",
    "lifecycle": "lifecycle rules",
    "website": "website hosting",
    "logging": "access logging",
    "notification": "event notifications",
    "replication": "replication",
    "encryption": "bucket encryption settings",
    "object-lock": "object lock",
    "retention": "object lock",
    "legal-hold": "object lock",
    "ownershipControls": "ownership controls",
    "publicAccessBlock": "public access blocks",
    "accelerate": "transfer acceleration",
    "requestPayment": "requester pays",
    "analytics": "analytics",
    "inventory": "inventory",
    "metrics": "metrics configuration",
    "intelligent-tiering": "intelligent tiering",
    "torrent": "torrents",
    "attributes": "GetObjectAttributes",
    "restore": "restoring archived objects",
    "select": "S3 Select",
    "renameObject": "renaming",
}


def split_path(request: Request) -> tuple[str, str]:
    """(bucket, key) of a path-style request; either may be empty."""
    bucket, _, key = request.path.lstrip("/").partition("/")
    return bucket, key


def _not_allowed(request: Request) -> S3Error:
    return S3Error("MethodNotAllowed", f"{request.method} is not allowed here")


def route(request: Request) -> Operation:
    """The operation for this request. Raises S3Error (NotImplemented, MethodNotAllowed)."""
    for name, what in UNSUPPORTED_SUBRESOURCES.items():
        if request.has_param(name):
            raise S3Error("NotImplemented", f"{what} (?{name}) is not supported by the Lakelet S3 gateway")
    bucket, key = split_path(request)
    method = request.method
    if not bucket:
        if method == "GET":
            return list_buckets
        raise _not_allowed(request)
    if not key:
        if method == "HEAD":
            return head_bucket
        if method == "GET":
            if request.has_param("uploads"):
                return list_multipart_uploads
            if request.has_param("location"):
                return bucket_location
            return list_objects
        if method == "POST" and request.has_param("delete"):
            return delete_objects
        if method in ("PUT", "DELETE"):
            raise S3Error(
                "NotImplemented",
                "creating and deleting buckets is not supported: manage repositories through the lakeFS API",
            )
        raise _not_allowed(request)
    copying = bool(request.header("x-amz-copy-source"))
    if method in ("GET", "HEAD"):
        return list_parts if method == "GET" and request.has_param("uploadId") else get_object
    if method == "PUT":
        if request.has_param("uploadId") or request.has_param("partNumber"):
            return upload_part_copy if copying else upload_part
        return copy_object if copying else put_object
    if method == "POST":
        if request.has_param("uploads"):
            return create_multipart_upload
        if request.has_param("uploadId"):
            return complete_multipart_upload
        raise S3Error("NotImplemented", "browser form uploads (POST Object) are not supported")
    if method == "DELETE":
        return abort_multipart_upload if request.has_param("uploadId") else delete_object
    raise _not_allowed(request)
