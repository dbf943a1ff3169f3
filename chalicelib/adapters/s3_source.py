"""The import's source lister on S3: ListObjectsV2 page by page (1,000 keys a call), so a task holds one page."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from chalicelib.graveler import errors
from chalicelib.graveler.imports.ports import SourceObject

__all__ = ["S3SourceLister"]

_MISSING = {"NoSuchKey", "404", "NotFound"}


@contextmanager
def _translated(where: str) -> Iterator[None]:
    try:
        yield
    except ClientError as e:
        code = str(e.response.get("Error", {}).get("Code", ""))
        if code in _MISSING:
            raise errors.ObjectNotFound(f"source object {where} not found") from e
        if code == "NoSuchBucket":
            raise errors.NotFound(f"source bucket of {where} not found") from e
        if code in {"AccessDenied", "403"}:
            raise errors.Forbidden(f"the deployment cannot read {where} (S3 {code})") from e
        raise errors.StorageError(f"S3 {code} listing {where}: {e}") from e
    except BotoCoreError as e:
        raise errors.StorageError(f"S3 listing {where}: {e}") from e


def _object(item: dict[str, Any]) -> SourceObject:
    return SourceObject(
        str(item["Key"]),
        int(item.get("Size", 0)),
        str(item.get("ETag", "")).strip('"'),
        int(item["LastModified"].timestamp()),
    )


class S3SourceLister:
    def __init__(self, client: Any, page_size: int = 1000) -> None:
        self._client = client
        self._page_size = page_size

    def pages(self, bucket: str, prefix: str, start_after: str = "") -> Iterator[list[SourceObject]]:
        token: str | None = None
        while True:
            args: dict[str, Any] = {"Bucket": bucket, "Prefix": prefix, "MaxKeys": self._page_size}
            if token:
                args["ContinuationToken"] = token
            elif start_after:
                args["StartAfter"] = start_after
            with _translated(f"s3://{bucket}/{prefix}"):
                answer = self._client.list_objects_v2(**args)
            page = [_object(item) for item in answer.get("Contents", [])]
            if page:
                yield page
            token = answer.get("NextContinuationToken")
            if not answer.get("IsTruncated") or not token:
                return

    def common_prefixes(self, bucket: str, prefix: str, limit: int) -> list[str]:
        found: list[str] = []
        token: str | None = None
        while len(found) < limit:
            args: dict[str, Any] = {"Bucket": bucket, "Prefix": prefix, "Delimiter": "/", "MaxKeys": 1000}
            if token:
                args["ContinuationToken"] = token
            with _translated(f"s3://{bucket}/{prefix}"):
                answer = self._client.list_objects_v2(**args)
            found.extend(str(p["Prefix"]) for p in answer.get("CommonPrefixes", []))
            token = answer.get("NextContinuationToken")
            if not answer.get("IsTruncated") or not token:
                break
        return sorted(found)[:limit]

    def head(self, bucket: str, key: str) -> SourceObject:
        with _translated(f"s3://{bucket}/{key}"):
            answer = self._client.head_object(Bucket=bucket, Key=key)
        return SourceObject(
            key,
            int(answer["ContentLength"]),
            str(answer.get("ETag", "")).strip('"'),
            int(answer["LastModified"].timestamp()),
        )
