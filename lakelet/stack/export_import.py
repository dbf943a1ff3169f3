"""``lakelet local import DIR``: an export (lakelet/stack/export.py, which describes its layout) written into a new
stack through the AWS APIs it runs on; sealed values are sealed again under the new stack's KMS key.
"""

from __future__ import annotations

import base64
import json
import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from lakelet.stack.export import (
    BATCH_WRITE,
    EXPORT_FORMAT,
    EXPORT_KIND,
    MANIFEST,
    Counts,
    Endpoint,
    ExportError,
    from_json,
    sealed_field,
    sealing_cipher,
)


def read_manifest(source: Path) -> dict[str, Any]:
    path = source / MANIFEST
    try:
        manifest = json.loads(path.read_text())
        kind, number = manifest["kind"], manifest["format"]
    except FileNotFoundError:
        raise ExportError(f"{source} is not a finished Lakelet export (no {MANIFEST}): export again") from None
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise ExportError(f"{path} cannot be read ({error}): it is not a Lakelet export") from None
    if kind != EXPORT_KIND or number != EXPORT_FORMAT:
        raise ExportError(
            f"{path} is a {kind!r} format {number!r}; this Lakelet imports {EXPORT_KIND} format {EXPORT_FORMAT}"
        )
    return dict(manifest)


def _lines(path: Path) -> Iterator[dict[str, Any]]:
    with open(path, encoding="utf-8") as source:
        for number, line in enumerate(source, 1):
            if line.strip():
                try:
                    yield json.loads(line)
                except ValueError:
                    raise ExportError(f"{path} line {number} is not JSON: the export is damaged") from None


def _write_items(dynamodb: Any, table: str, items: list[dict[str, Any]]) -> None:
    requests = [{"PutRequest": {"Item": item}} for item in items]
    for start in range(0, len(requests), BATCH_WRITE):
        pending: dict[str, Any] = {table: requests[start : start + BATCH_WRITE]}
        for _ in range(20):
            answer = dynamodb.batch_write_item(RequestItems=pending)
            pending = answer.get("UnprocessedItems") or {}
            if not pending:
                break
        if pending:
            raise ExportError(
                f"DynamoDB kept refusing writes to {table}: nothing was lost, run the import again "
                "into a new data directory"
            )


def _key_of(item: dict[str, Any]) -> str | None:
    """The key of an auth row (pk, sk), the only rows that hold sealed values; None for other tables' rows."""
    if "pk" not in item or "sk" not in item:
        return None
    return json.dumps([item["pk"], item["sk"]], sort_keys=True)


def import_stack(endpoint: Endpoint, source: Path) -> Counts:
    """Write the export in ``source`` into the (new) stack at ``endpoint``; secrets are sealed under its key."""
    manifest = read_manifest(source)
    counts = Counts()
    dynamodb = endpoint.client("dynamodb")
    existing = {t for page in dynamodb.get_paginator("list_tables").paginate() for t in page["TableNames"]}
    missing = [t for t in manifest["tables"] if endpoint.table_prefix + t not in existing]
    if missing:
        raise ExportError(
            f"this Lakelet has no table for {', '.join(missing)} of the export: import it with a "
            "Lakelet at least as new as the one that exported it"
        )
    cipher = sealing_cipher(endpoint)
    resealed: dict[tuple[str, str], tuple[str, bytes]] = {}
    if (source / "secrets.jsonl").exists():
        for line in _lines(source / "secrets.jsonl"):
            resealed[(line["table"], json.dumps([line["key"]["pk"], line["key"]["sk"]], sort_keys=True))] = (
                line["attribute"],
                base64.b64decode(line["value"]),
            )
    for short in manifest["tables"]:
        table = endpoint.table_prefix + short
        batch: list[dict[str, Any]] = []
        counts.items[short] = 0
        for line in _lines(source / "dynamodb" / f"{short}.jsonl"):
            item = from_json({"M": line})["M"]
            row_key = _key_of(line)
            found = resealed.pop((short, row_key), None) if row_key is not None else None
            if found is not None:
                attribute, plain = found
                sealed = sealed_field(item)
                if sealed is None or sealed.attribute != attribute:
                    raise ExportError(f"{short}: a secret for a row that holds none: the export is damaged")
                item[attribute] = {"S": sealed.seal(cipher, plain)}
                counts.secrets += 1
            elif sealed_field(item) is not None:
                raise ExportError(f"{short}: a sealed row without its secret in secrets.jsonl: the export is damaged")
            batch.append(item)
            counts.items[short] += 1
            if len(batch) == BATCH_WRITE:
                _write_items(dynamodb, table, batch)
                batch = []
        if batch:
            _write_items(dynamodb, table, batch)
    if resealed:
        raise ExportError(f"{len(resealed)} secrets of the export match no row: the export is damaged")
    s3 = endpoint.client("s3")
    buckets = {b["Name"] for b in s3.list_buckets().get("Buckets", [])}
    allowed = _export_buckets(manifest, buckets)
    objects_dir = _objects_dir(source)
    for line in _lines(source / "objects.jsonl"):
        bucket, key = line.get("bucket"), line.get("key")
        if bucket not in allowed or not isinstance(key, str):
            raise ExportError(
                f"objects.jsonl names bucket {bucket!r}, which is not in the export's list of buckets: "
                "the export is damaged"
            )
        if bucket not in buckets:
            if endpoint.region == "us-east-1":
                s3.create_bucket(Bucket=bucket)
            else:
                s3.create_bucket(Bucket=bucket, CreateBucketConfiguration={"LocationConstraint": endpoint.region})
            buckets.add(bucket)
        body = _object_bytes(objects_dir, line.get("file"))
        if len(body) != line["size"]:
            raise ExportError(
                f"{objects_dir / str(line['file'])} ({bucket}/{key}) has {len(body)} bytes, "
                f"the export says {line['size']}: the export is damaged"
            )
        extra: dict[str, Any] = {"Metadata": line.get("metadata") or {}}
        if line.get("content_type"):
            extra["ContentType"] = line["content_type"]
        etag = _put_object(s3, bucket, key, body, line.get("parts"), extra)
        if etag != line["etag"]:
            # The bytes are the same (their size was checked); only a multipart upload whose part sizes could
            # not be found gets another ETag. The commits keep the old one as the object's checksum.
            counts.etags_changed.append(f"{bucket}/{key}")
        counts.objects += 1
        counts.bytes += len(body)
    return counts


# S3's rules for a bucket name (3-63 of lower-case letters, digits, dots and hyphens, a letter or digit at
# each end): what the export's own list is checked against before any bucket is created from it.
_BUCKET_NAME = re.compile(r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]")


# What export_stack names an object's file: its number. Anything else (a path, '..', a hidden name) is refused.
_OBJECT_FILE = re.compile(r"[0-9]{1,12}")


def _export_buckets(manifest: dict[str, Any], existing: set[str]) -> frozenset[str]:
    """The buckets an import may write to: those the manifest lists, each a valid S3 bucket name (an export
    from before the list existed may write only to the buckets the new stack created itself)."""
    listed = manifest.get("buckets")
    if listed is None:
        return frozenset(existing)
    if not isinstance(listed, list) or not all(isinstance(b, str) and _BUCKET_NAME.fullmatch(b) for b in listed):
        raise ExportError(f"{MANIFEST} lists buckets that are not S3 bucket names: the export is damaged")
    return frozenset(listed)


def _objects_dir(source: Path) -> Path:
    """``source/objects``, a real directory of the export (not a link to somewhere else)."""
    directory = source / "objects"
    if directory.is_symlink() or (directory.exists() and not directory.is_dir()):
        raise ExportError(f"{directory} is not a plain directory: the export is damaged")
    return directory


def _object_bytes(objects_dir: Path, name: object) -> bytes:
    """The bytes of one object file: a plain name (a number, as export_stack writes it) inside ``objects/``,
    a regular file and not a link, so that an edited objects.jsonl cannot read files outside the export."""
    if not isinstance(name, str) or not _OBJECT_FILE.fullmatch(name):
        raise ExportError(
            f"objects.jsonl names the file {name!r}, which is not a file of objects/: the export is damaged"
        )
    try:
        fd = os.open(objects_dir / name, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
    except OSError as error:
        raise ExportError(
            f"{objects_dir / name} cannot be read as a plain file ({error.strerror}): the export is damaged"
        ) from None
    with os.fdopen(fd, "rb") as data:
        if not stat.S_ISREG(os.fstat(data.fileno()).st_mode):
            raise ExportError(f"{objects_dir / name} is not a plain file: the export is damaged")
        return data.read()


def _put_object(s3: Any, bucket: str, key: str, body: bytes, parts: list[int] | None, extra: dict[str, Any]) -> str:
    if not parts:
        return str(s3.put_object(Bucket=bucket, Key=key, Body=body, **extra)["ETag"])
    # The same part sizes give the same multipart ETag, which the commits' entries recorded as the checksum.
    upload = s3.create_multipart_upload(Bucket=bucket, Key=key, **extra)["UploadId"]
    done, offset = [], 0
    for number, size in enumerate(parts, 1):
        answer = s3.upload_part(
            Bucket=bucket, Key=key, UploadId=upload, PartNumber=number, Body=body[offset : offset + size]
        )
        done.append({"PartNumber": number, "ETag": answer["ETag"]})
        offset += size
    return str(
        s3.complete_multipart_upload(Bucket=bucket, Key=key, UploadId=upload, MultipartUpload={"Parts": done})["ETag"]
    )
