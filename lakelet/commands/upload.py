"""Uploads of a local tree to a branch path (``lakelet fs upload``, ``lakelet local commit``).

When the server offers Lakelet's batch upload (``version_config.lakelet_features`` names
"upload_batch"), files of up to DIRECT_MAX_BYTES go in batches (POST .../objects/batch: one request stages up to
BATCH_MAX_FILES files, each with its MD5 for the server to check); bigger files go straight to S3 when the server
offers presigned URLs (GET .../staging/backing?presign=true, PUT to the URL, PUT .../staging/backing to link;
write-once URLs where the server names "upload_write_once", which it links without copying the upload),
else through the API (POST .../objects), which is also how small files go to a server without batches (lakeFS).
A file becomes visible on the branch only with its final request (the batch, the link or the single POST), so
interrupting a run stages nothing half-written; running it again skips every file whose object already has the
same checksum (the MD5 ETag) and size.
"""

from __future__ import annotations

import functools
import hashlib
import json
import mimetypes
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import urllib3

from lakelet.commands.api import Api, q
from lakelet.commands.errors import CLIError, from_status
from lakelet.commands.output import out
from lakelet.commands.progress import TransferProgress
from lakelet.commands.transfer import (
    CHUNK,
    PART_SUFFIX,
    RETRY,
    Cancelled,
    Remote,
    Server,
    list_remote,
    md5_file,
    run_parallel,
    server_offers,
)
from lakelet.commands.uri import URI

# Files up to this size go through the API (under the deployed API's ~4.5 MB Lambda payload limit), in batches
# or one request each. Bigger ones go straight to S3 when presigned URLs are offered, so their bytes never pass
# through API Gateway or Lambda.
DIRECT_MAX_BYTES = 4 * 1024 * 1024
# A batch upload: at most this many files and bytes of data (the server's own bounds are 1,000 and 4 MiB). Small
# enough that the progress line moves and parallel batches keep the server busy, big enough that the per-request
# cost (authentication, repository and branch lookups, the staging seal check) is shared by many files.
BATCH_MAX_FILES = 50
BATCH_MAX_BYTES = 4 * 1024 * 1024
BATCHES_PER_WORKER = 4
UPLOAD_BATCH = "upload_batch"
UPLOAD_WRITE_ONCE = "upload_write_once"


class _CountingReader:
    """A file wrapper that reports bytes read (sent) and aborts the request when the transfer is cancelled."""

    def __init__(self, f: BinaryIO, progress: TransferProgress, cancel: threading.Event) -> None:
        self._f, self._progress, self._cancel = f, progress, cancel

    def read(self, size: int = -1) -> bytes:
        if self._cancel.is_set():
            raise Cancelled()
        data = self._f.read(size if size and size > 0 else CHUNK)
        self._progress.advance(len(data))
        return data


@dataclass(frozen=True, slots=True)
class UploadItem:
    local: Path
    path: str
    size: int


def plan_upload(source: Path, uri: URI, recursive: bool, only: set[str] | None = None) -> list[UploadItem]:
    if recursive:
        if not source.is_dir():
            raise CLIError(f"{source} is not a directory", "drop -r to upload one file")
        prefix = uri.path if not uri.path or uri.path.endswith("/") else uri.path + "/"
        items = []
        for root, dirs, files in os.walk(source):
            dirs.sort()
            for name in sorted(files):
                local = Path(root) / name
                if name.endswith(PART_SUFFIX) or not local.is_file():
                    continue
                rel = local.relative_to(source).as_posix()
                if only is not None and rel not in only:
                    continue
                items.append(UploadItem(local, prefix + rel, local.stat().st_size))
        return items
    if not source.exists():
        raise CLIError(f"{source} does not exist", "check the path given to --source")
    if not source.is_file():
        raise CLIError(f"{source} is not a file", "use -r to upload a directory")
    path = uri.path + source.name if (not uri.path or uri.path.endswith("/")) else uri.path
    return [UploadItem(source, path, source.stat().st_size)]


def upload(
    api: Api,
    uri: URI,
    source: Path,
    recursive: bool,
    parallelism: int,
    presign: bool | None,
    content_type: str | None = None,
    existing: dict[str, Remote] | None = None,
    only: set[str] | None = None,
) -> TransferProgress:
    """Upload a file or a tree under a branch path (with ``only``: those relative paths of the tree); returns
    the finished progress (counts) for a summary. ``presign``: True sends every file through a presigned URL,
    False none, None (the default) the files too big for the API when the server offers them."""
    api.use_pool()
    items = plan_upload(source, uri, recursive, only)
    if existing is None:
        prefix = (uri.path if recursive else items[0].path) if items else uri.path
        existing = {r.path: r for r in list_remote(api, uri, prefix)} if items else {}
    server = server_offers(api) if items else Server(False, frozenset())
    batched = presign is not True and UPLOAD_BATCH in server.features
    through_s3 = presign if presign is not None else server.pre_sign

    with TransferProgress("upload", len(items), sum(i.size for i in items)) as progress:

        def up_to_date(item: UploadItem) -> bool:
            known = existing.get(item.path)
            if known is not None and known.size == item.size and known.checksum == md5_file(item.local):
                progress.file_done(skipped=True, size=item.size)
                return True
            return False

        def one(item: UploadItem, cancel: threading.Event) -> None:
            if up_to_date(item):
                return
            progress.start_file(item.path)
            if through_s3 and (presign or item.size > DIRECT_MAX_BYTES):
                _upload_presigned(
                    api,
                    uri,
                    item,
                    _content_type(item, content_type),
                    progress,
                    cancel,
                    UPLOAD_WRITE_ONCE in server.features,
                )
            else:
                _upload_direct(api, uri, item, _content_type(item, content_type), progress, cancel)
            progress.file_done()

        def batch(group: list[UploadItem], cancel: threading.Event) -> None:
            todo = [item for item in group if not up_to_date(item)]
            if not todo:
                return
            progress.start_file(todo[0].path + (f" (+{len(todo) - 1})" if len(todo) > 1 else ""))
            _upload_batch(api, uri, todo, content_type, progress, cancel)
            for _ in todo:
                progress.file_done()

        small = [i for i in items if batched and i.size <= DIRECT_MAX_BYTES]
        jobs = [functools.partial(batch, group) for group in batches(small, parallelism)]
        jobs += [functools.partial(one, item) for item in items if not (batched and item.size <= DIRECT_MAX_BYTES)]
        run_parallel(jobs, lambda job, cancel: job(cancel), parallelism, threading.Event())
    out().info(progress.summary())
    return progress


def batches(items: list[UploadItem], parallelism: int) -> list[list[UploadItem]]:
    """Consecutive groups of at most BATCH_MAX_FILES files and BATCH_MAX_BYTES, small enough to give each of the
    ``parallelism`` workers BATCHES_PER_WORKER of them (so the last batches do not leave workers idle, the
    progress line moves, and Ctrl-C stops within a few batches): 1,000 files and 10 workers make batches of 25,
    20 files make 20 batches of 1."""
    per_batch = max(1, min(BATCH_MAX_FILES, -(-len(items) // (max(1, parallelism) * BATCHES_PER_WORKER))))
    groups: list[list[UploadItem]] = []
    size = 0
    for item in items:
        if not groups or len(groups[-1]) >= per_batch or size + item.size > BATCH_MAX_BYTES:
            groups.append([])
            size = 0
        groups[-1].append(item)
        size += item.size
    return groups


def _content_type(item: UploadItem, forced: str | None) -> str:
    return (
        forced
        or mimetypes.guess_type(item.path)[0]
        or mimetypes.guess_type(item.local.name)[0]
        or "application/octet-stream"
    )


def _objects_path(uri: URI) -> str:
    return f"/repositories/{q(uri.repository)}/branches/{q(uri.ref)}"


def _upload_presigned(
    api: Api,
    uri: URI,
    item: UploadItem,
    ctype: str,
    progress: TransferProgress,
    cancel: threading.Event,
    write_once: bool = False,
) -> None:
    """GET an address and its URL, PUT the file there, link it. ``write_once`` (Lakelet): the URL is signed for
    If-None-Match: *, so it can only create the object, and the server links the upload without copying it."""
    base = _objects_path(uri) + "/staging/backing"
    _, location = api.raw(
        f"get an upload address for {item.path}",
        "GET",
        base,
        {"path": item.path, "presign": True, **({"write_once": True} if write_once else {})},
    )
    url = location.get("presigned_url")
    if not url:
        raise CLIError("the server gave no presigned upload URL", "run again with --no-pre-sign")
    headers = {"Content-Length": str(item.size), **({"If-None-Match": "*"} if write_once else {})}
    response = _send(api, "PUT", url, item, headers, progress, cancel)
    if response.status not in (200, 201):
        raise from_status(f"upload of {item.path} to storage", response.status, response.data, response.reason or "")
    if cancel.is_set():
        # Uploaded but not linked: nothing is staged, and GC removes the unreferenced bytes.
        raise Cancelled()
    etag = (response.headers.get("ETag") or "").strip('"')
    api.raw(
        f"link {item.path}",
        "PUT",
        base,
        {"path": item.path},
        {
            "staging": {"physical_address": location["physical_address"]},
            "checksum": etag,
            "size_bytes": item.size,
            "content_type": ctype,
        },
    )


def _upload_direct(
    api: Api, uri: URI, item: UploadItem, ctype: str, progress: TransferProgress, cancel: threading.Event
) -> None:
    url = api.url(_objects_path(uri) + "/objects", {"path": item.path})
    response = _send(
        api,
        "POST",
        url,
        item,
        {**api.auth_headers, "Content-Type": ctype, "Content-Length": str(item.size), "Accept": "application/json"},
        progress,
        cancel,
    )
    if response.status not in (200, 201):
        raise from_status(f"upload of {item.path}", response.status, response.data, response.reason or "")


def _upload_batch(
    api: Api,
    uri: URI,
    items: list[UploadItem],
    content_type: str | None,
    progress: TransferProgress,
    cancel: threading.Event,
) -> None:
    """One POST .../objects/batch (chalicelib/api/batch_body.py): a manifest line, then the files' bytes."""
    datas = [item.local.read_bytes() for item in items]
    manifest = {
        "objects": [
            {
                "path": item.path,
                "size_bytes": len(data),
                "content_type": _content_type(item, content_type),
                "checksum": hashlib.md5(data, usedforsecurity=False).hexdigest(),
            }
            for item, data in zip(items, datas, strict=True)
        ]
    }
    body = json.dumps(manifest, separators=(",", ":")).encode() + b"\n" + b"".join(datas)
    if cancel.is_set():
        raise Cancelled()
    url = api.url(_objects_path(uri) + "/objects/batch")
    headers = {**api.auth_headers, "Content-Type": "application/octet-stream", "Accept": "application/json"}
    what = f"upload of {items[0].path}" + (f" and {len(items) - 1} more file(s)" if len(items) > 1 else "")
    try:
        response = api.http.request("POST", url, body=body, headers=headers, redirect=False, retries=RETRY)
    except urllib3.exceptions.HTTPError as e:
        raise CLIError(f"{what} failed ({type(e).__name__})", "run the command again to resume") from None
    if response.status != 201:
        raise from_status(what, response.status, response.data, response.reason or "")
    progress.advance(sum(len(data) for data in datas))


def _send(
    api: Api,
    method: str,
    url: str,
    item: UploadItem,
    headers: dict[str, str],
    progress: TransferProgress,
    cancel: threading.Event,
) -> Any:
    """Send a file as the request body: from memory (retried) when small, streamed with progress when big."""
    try:
        if item.size <= DIRECT_MAX_BYTES:
            data = item.local.read_bytes()
            response = api.http.request(method, url, body=data, headers=headers, redirect=False, retries=RETRY)
            progress.advance(len(data))
            return response
        with open(item.local, "rb") as f:
            return api.http.request(
                method,
                url,
                body=_CountingReader(f, progress, cancel),  # type: ignore[arg-type]
                headers=headers,
                redirect=False,
                chunked=False,
                retries=False,
            )
    except Cancelled:
        raise
    except (urllib3.exceptions.HTTPError, OSError) as e:  # urllib3 wraps a read error of the body, too
        if cancel.is_set():
            raise Cancelled() from None
        raise CLIError(
            f"upload of {item.path} failed ({type(e).__name__})", "run the command again to resume"
        ) from None


# --- download -----------------------------------------------------------------------------------------------
