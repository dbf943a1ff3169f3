"""Parallel uploads and downloads between a local tree and a branch path, resumable and interruptible.

Uploads: when the server offers Lakelet's batch upload (``version_config.lakelet_features`` names
"upload_batch"), files of up to DIRECT_MAX_BYTES go in batches (POST .../objects/batch: one request stages up to
BATCH_MAX_FILES files, each with its MD5 for the server to check); bigger files go straight to S3 when the server
offers presigned URLs (GET .../staging/backing?presign=true, PUT to the URL, PUT .../staging/backing to link;
write-once URLs where the server names "upload_write_once", which it links without copying the upload),
else through the API (POST .../objects), which is also how small files go to a server without batches (lakeFS).
A file becomes visible on the branch only with its final request (the batch, the link or the single POST), so
interrupting a run stages nothing half-written; running it again skips every file whose object already has the
same checksum (the MD5 ETag) and size.

Downloads: when the server offers presigned URLs, the listing asks for them (``presign=true``, as lakectl does)
and each file is read straight from S3 with no API request of its own; a URL that fails (expired, or the data
was garbage collected) falls back to a GET through the API, which also serves servers without presigned URLs.
Files are written to ``<name>.lakelet-part`` and renamed when complete; local files that already match are
skipped. An object whose path cannot be a local file is skipped with one line saying why, and the rest goes on
(:func:`local_paths`): a path inside ``.git`` in any spelling git refuses (a ``.git/config`` could make the next
``git status`` run a command), an empty, ``.`` or ``..`` segment, a name over 255 bytes, a name ending in
``.lakelet-part``, a file that is also a folder of other objects; so is a file the local disk refuses to name.
"""

from __future__ import annotations

import errno
import functools
import hashlib
import json
import mimetypes
import os
import re
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, BinaryIO

import urllib3

from lakelet.commands.api import Api, q
from lakelet.commands.errors import CLIError, from_status
from lakelet.commands.output import out
from lakelet.commands.progress import TransferProgress
from lakelet.commands.uri import URI

CHUNK = 1024 * 1024
PART_SUFFIX = ".lakelet-part"
NAME_MAX = 255  # bytes in one file name on Linux and macOS file systems
# Code points HFS+ ignores in names, so ".g\u200cit" opens .git there; git's verify_path drops them too.
_HFS_IGNORED = re.compile("[\u200c-\u200f\u202a-\u202e\u206a-\u206f\ufeff]")
# Errors of the local file system about one name (too long, a file where a folder is needed, ...): that object is
# skipped with a line, the others are still written.
_NAME_ERRORS = frozenset(
    {errno.ENAMETOOLONG, errno.ENOTDIR, errno.EISDIR, errno.EEXIST, errno.EINVAL, errno.EILSEQ, errno.ENOTEMPTY}
)
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
# Small bodies are sent from memory, so a request the server dropped (a busy local server resets connections)
# can be sent again; re-sending an upload is harmless (the last link wins, an orphan is left to GC).
RETRY = urllib3.Retry(
    total=4, connect=4, read=4, status=0, redirect=0, allowed_methods=None, backoff_factor=0.2, raise_on_status=False
)


class Cancelled(Exception):
    """Raised in a worker that noticed the user interrupted the transfer."""


@dataclass(frozen=True, slots=True)
class Remote:
    path: str
    size: int
    checksum: str
    url: str | None = None  # a presigned GET, when the listing was asked for one


@dataclass(frozen=True, slots=True)
class Server:
    """What the server offers a transfer: presigned URLs (storage_config.pre_sign_support) and Lakelet's
    extensions (version_config.lakelet_features; empty for lakeFS)."""

    pre_sign: bool
    features: frozenset[str]


def server_offers(api: Api) -> Server:
    _, config = api.raw("read the server's config", "GET", "/config")
    storage = (config or {}).get("storage_config") or {}
    features = ((config or {}).get("version_config") or {}).get("lakelet_features") or []
    return Server(bool(storage.get("pre_sign_support")), frozenset(f for f in features if isinstance(f, str)))


def md5_file(path: Path) -> str:
    digest = hashlib.md5(usedforsecurity=False)
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(CHUNK), b""):
            digest.update(block)
    return digest.hexdigest()


def list_remote(api: Api, uri: URI, prefix: str, presign: bool = False) -> Iterator[Remote]:
    """Every object under ``prefix`` at ``uri.ref`` (recursive); with ``presign``, each with a presigned GET
    when the server gives one."""
    path = f"/repositories/{q(uri.repository)}/refs/{q(uri.ref)}/objects/ls"
    query = {"prefix": prefix, "user_metadata": False, **({"presign": True} if presign else {})}
    for item in api.raw_pages(f"list {uri}", path, query):
        if item.get("path_type") == "object":
            yield _remote(item)


def _remote(stats: dict[str, Any]) -> Remote:
    address = str(stats.get("physical_address") or "")
    return Remote(
        stats["path"],
        int(stats.get("size_bytes") or 0),
        str(stats.get("checksum") or "").strip('"'),
        address if address.startswith(("https://", "http://")) else None,
    )


def run_parallel(
    items: list[Any], work: Callable[[Any, threading.Event], None], parallelism: int, cancel: threading.Event
) -> None:
    """Run ``work`` over items on a pool; Ctrl-C stops handing out work, lets in-flight files finish or abort,
    then re-raises KeyboardInterrupt. The first worker error stops the rest and is raised."""
    pool = ThreadPoolExecutor(max_workers=max(1, parallelism), thread_name_prefix="lakelet-transfer")
    futures: set[Future[None]] = set()
    error: BaseException | None = None
    try:
        for item in items:
            futures.add(pool.submit(_guarded, work, item, cancel))
        pending = futures
        while pending:
            # A timed wait keeps the main thread able to take Ctrl-C.
            done, pending = wait(pending, timeout=0.2, return_when=FIRST_COMPLETED)
            for f in done:
                exc = f.exception()
                if exc is not None and not isinstance(exc, Cancelled) and error is None:
                    error = exc
                    cancel.set()
    except KeyboardInterrupt:
        cancel.set()
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    if error is not None:
        raise error


def _guarded(work: Callable[[Any, threading.Event], None], item: Any, cancel: threading.Event) -> None:
    if cancel.is_set():
        raise Cancelled()
    work(item, cancel)


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


# --- upload -------------------------------------------------------------------------------------------------


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


@dataclass(frozen=True, slots=True)
class DownloadItem:
    remote: Remote
    local: Path


def is_dotgit(segment: str) -> bool:
    """Whether a file system may take this path segment for git's own directory, as git's verify_path judges it:
    ".git" in any case, also with HFS+'s ignored code points in it, with NTFS's trailing dots and spaces, or as
    its NTFS short name GIT~1."""
    name = _HFS_IGNORED.sub("", segment).rstrip(". ").lower()
    return name == ".git" or segment.lower() == "git~1"


def unsafe_name(rel: str) -> str | None:
    """Why the object path ``rel`` (relative to the download's root) cannot be written as a local file, or None."""
    segments = rel.split("/")
    if any(segment in ("", ".", "..") for segment in segments) or "\x00" in rel:
        return "not a safe local file name (an empty, . or .. segment)"
    if any(is_dotgit(segment) for segment in segments):
        return "a path inside .git is never written (git runs what some of its files name)"
    if any(len(os.fsencode(segment)) > NAME_MAX for segment in segments):
        return f"a name longer than {NAME_MAX} bytes"
    if segments[-1].endswith(PART_SUFFIX):
        return f"names ending in {PART_SUFFIX} are kept for partial downloads"
    return None


def local_paths(rels: list[str]) -> tuple[list[str], list[tuple[str, str]]]:
    """The object paths (relative to the download's root) that can be local files, in their order, and (path,
    why) for the others. Of an object ``x`` beside objects under ``x/``, the folder wins: ``x`` is skipped."""
    kept, skipped = [], []
    for rel in rels:
        reason = unsafe_name(rel)
        if reason is None:
            kept.append(rel)
        else:
            skipped.append((rel, reason))
    folders = {rel.rsplit("/", 1)[0] for rel in kept if "/" in rel}
    folders |= {folder.rsplit("/", i)[0] for folder in list(folders) for i in range(1, folder.count("/") + 1)}
    clashing = [rel for rel in kept if rel in folders]
    for rel in clashing:
        skipped.append((rel, f"it is also the folder of other objects ({rel}/...)"))
    return [rel for rel in kept if rel not in folders], skipped


def plan_download(api: Api, uri: URI, dest: Path, recursive: bool, presign: bool = False) -> list[DownloadItem]:
    if not recursive:
        _, stat = api.raw(
            f"stat {uri}",
            "GET",
            f"/repositories/{q(uri.repository)}/refs/{q(uri.ref)}/objects/stat",
            {"path": uri.path, "user_metadata": False, **({"presign": True} if presign else {})},
        )
        name = PurePosixPath(uri.path).name
        if dest.is_dir():
            reason = unsafe_name(name)
            if reason is not None:
                raise CLIError(f"refusing to write {dest / name}: {reason}", "name another local file as the target")
        target = dest / name if dest.is_dir() else dest
        return [DownloadItem(_remote(stat), target)]
    prefix = uri.path if not uri.path or uri.path.endswith("/") else uri.path + "/"
    root = dest.resolve()
    remotes = {remote.path[len(prefix) :]: remote for remote in list_remote(api, uri, prefix, presign)}
    kept, skipped = local_paths(list(remotes))
    for rel, reason in skipped:
        out().info(f"skipping {remotes[rel].path}: {reason}")
    return [DownloadItem(remotes[rel], root.joinpath(*rel.split("/"))) for rel in kept]


def download(
    api: Api, uri: URI, dest: Path, recursive: bool, parallelism: int, presign: bool | None
) -> TransferProgress:
    """``presign``: True reads every file through a presigned URL, False none (through the API), None (the
    default) every file when the server offers them."""
    api.use_pool()
    through_s3 = presign if presign is not None else server_offers(api).pre_sign
    items = plan_download(api, uri, dest, recursive, through_s3)
    cancel = threading.Event()
    unwritten: list[str] = []
    with TransferProgress("download", len(items), sum(i.remote.size for i in items)) as progress:

        def work(item: DownloadItem, cancel: threading.Event) -> None:
            local = item.local
            try:
                if (
                    local.is_file()
                    and local.stat().st_size == item.remote.size
                    and md5_file(local) == item.remote.checksum
                ):
                    progress.file_done(skipped=True, size=item.remote.size)
                    return
                progress.start_file(item.remote.path)
                fetch_object(api, uri, item.remote, local, through_s3, progress, cancel)
            except OSError as error:
                if error.errno not in _NAME_ERRORS:
                    raise
                unwritten.append(item.remote.path)
                out().info(f"skipping {item.remote.path}: the local file system refuses {local} ({error.strerror})")
                return
            progress.file_done()

        run_parallel(items, work, parallelism, cancel)
    out().info(progress.summary())
    if unwritten:
        out().info(f"download: {len(unwritten)} object(s) not written, each named above")
    return progress


def fetch_object(
    api: Api,
    uri: URI,
    remote: Remote,
    local: Path,
    presign: bool,
    progress: TransferProgress | None,
    cancel: threading.Event,
) -> None:
    """GET one object into ``local`` through a temporary file renamed when complete: from its presigned URL when
    it has one, else (or when that URL fails) through the API, following its redirect."""
    response = None
    try:
        if remote.url is not None:
            response = api.http.request("GET", remote.url, redirect=False, preload_content=False, retries=RETRY)
            if response.status != 200:
                # Expired, or the data is gone: the API says why (410 for collected data), or reads it anew.
                response.release_conn()
                response = None
        if response is None:
            url = api.url(
                f"/repositories/{q(uri.repository)}/refs/{q(uri.ref)}/objects",
                {"path": remote.path, "presign": presign},
            )
            response = api.http.request(
                "GET", url, headers=api.auth_headers, redirect=False, preload_content=False, retries=RETRY
            )
            if response.status in (301, 302, 303, 307):
                location = response.headers["Location"]
                response.release_conn()
                response = api.http.request("GET", location, redirect=False, preload_content=False, retries=RETRY)
        if response.status != 200:
            raise from_status(f"download of {remote.path}", response.status, response.read(), response.reason or "")
        _save(response, local, progress, cancel)
    except urllib3.exceptions.HTTPError as e:
        raise CLIError(
            f"download of {remote.path} failed ({type(e).__name__})", "run the command again to resume"
        ) from None
    finally:
        if response is not None:
            response.release_conn()


def _save(response: Any, local: Path, progress: TransferProgress | None, cancel: threading.Event) -> None:
    local.parent.mkdir(parents=True, exist_ok=True)
    part = local.with_name(local.name + PART_SUFFIX)
    if len(os.fsencode(part.name)) > NAME_MAX:
        # A name that fits but not with the suffix: a short one of its own, which no object's can equal (names
        # ending in the suffix are never downloaded).
        digest = hashlib.md5(os.fsencode(local.name), usedforsecurity=False).hexdigest()
        part = local.with_name(f".{digest}{PART_SUFFIX}")
    try:
        with open(part, "wb") as f:
            for block in response.stream(CHUNK):
                if cancel.is_set():
                    raise Cancelled()
                f.write(block)
                if progress is not None:
                    progress.advance(len(block))
        os.replace(part, local)
    except BaseException:
        part.unlink(missing_ok=True)
        raise
