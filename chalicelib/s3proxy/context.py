"""What every operation receives: the verified request, who sent it, and the bucket and key it names.

The S3 bucket is a repository and the S3 key is ``<ref>/<path>``: reads accept any ref expression, writes need a
branch. Helpers here turn those conventions into graveler calls and S3 errors, so operations stay short.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from urllib.parse import unquote

from chalicelib import http_headers
from chalicelib.graveler import errors
from chalicelib.graveler.engine import Engine
from chalicelib.graveler.records import Entry

from .errors import S3Error
from .model import Request
from .sigv4 import Identity
from .xmlio import http_date

META_PREFIX = "x-amz-meta-"
MAX_KEY_BYTES = 1024

# (user id, action, resource ARN) -> None, or raises graveler Forbidden. lakeFS's action names and ARNs.
Authorizer = Callable[[str, str, str], None]


def allow_all(user_id: str, action: str, resource: str) -> None:
    """The default authorizer: every authenticated user may do everything. The local and deployed gateways
    check the users' policies instead (S3Gateway.from_services)."""


def repository_arn(repo: str) -> str:
    return f"arn:lakefs:fs:::repository/{repo}"


def object_arn(repo: str, path: str) -> str:
    return f"arn:lakefs:fs:::repository/{repo}/object/{path}"


def split_key(key: str) -> tuple[str, str]:
    """``main/a/b.txt`` -> ("main", "a/b.txt"). Raises InvalidArgument when there is no path after the ref."""
    ref, sep, path = key.partition("/")
    if not sep or not ref or not path:
        raise S3Error("InvalidArgument", f"object keys are <ref>/<path>: {key!r} names no object")
    if len(path.encode()) > MAX_KEY_BYTES:
        raise S3Error("KeyTooLongError")
    return ref, path


def user_metadata(request: Request) -> dict[str, str]:
    # S3 keeps metadata names lower-case; values arrive as sent (RFC 2047 words are not decoded, like S3).
    return {name[len(META_PREFIX) :]: value for name, value in request.headers.items() if name.startswith(META_PREFIX)}


def entry_headers(entry: Entry) -> dict[str, str]:
    """Stored values pass through http_headers: an entry written before writes were validated (a content type
    or metadata value with CR/LF) must neither inject headers nor fail the read."""
    headers = {
        "Content-Type": http_headers.content_type(entry.content_type),
        "ETag": f'"{entry.etag}"' if http_headers.is_safe_value(entry.etag) else '""',
        "Last-Modified": http_date(entry.mtime),
        "Accept-Ranges": "bytes",
    }
    headers.update(http_headers.metadata_headers(META_PREFIX, entry.user_metadata))
    return headers


def parse_copy_source(value: str) -> tuple[str, str, str]:
    """x-amz-copy-source (``[/]repo/ref/path``, URL-encoded) -> (repo, ref, path)."""
    source, _, query = value.partition("?")
    if query:
        raise S3Error("NotImplemented", "copying a version of an object (versionId) is not supported")
    repo, sep, key = unquote(source).lstrip("/").partition("/")
    if not sep or not repo:
        raise S3Error("InvalidArgument", f"x-amz-copy-source {value!r} must be <bucket>/<ref>/<path>")
    ref, path = split_key(key)
    return repo, ref, path


@dataclass
class Context:
    """One verified request on its way through an operation."""

    engine: Engine
    request: Request
    identity: Identity
    body: bytes
    bucket: str
    key: str
    authorize_fn: Authorizer = allow_all
    clock: Callable[[], float] = time.time
    max_response_bytes: int | None = None

    @property
    def user_id(self) -> str:
        return self.identity.user_id

    def authorize(self, action: str, resource: str) -> None:
        self.authorize_fn(self.user_id, action, resource)

    def ref_and_path(self) -> tuple[str, str]:
        return split_key(self.key)

    @contextmanager
    def writing(self) -> Iterator[None]:
        """Around a write: a ref that is not a branch answers NoSuchBranch (reads would accept it)."""
        try:
            yield
        except errors.BranchNotFound as e:
            ref = self.key.partition("/")[0]
            raise S3Error("NoSuchBranch", f"{ref!r} is not a branch of {self.bucket}: writes need a branch") from e
