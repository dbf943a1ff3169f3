"""Downloads of a branch path to a local tree (``lakelet fs download``, ``lakelet local clone|pull``).

When the server offers presigned URLs, the listing asks for them (``presign=true``, as lakectl does)
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
import hashlib
import os
import re
import threading
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

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
    list_remote,
    md5_file,
    remote_of,
    run_parallel,
    server_offers,
)
from lakelet.commands.uri import URI

NAME_MAX = 255  # bytes in one file name on Linux and macOS file systems
# Code points HFS+ ignores in names, so ".g\u200cit" opens .git there; git's verify_path drops them too.
_HFS_IGNORED = re.compile("[\u200c-\u200f\u202a-\u202e\u206a-\u206f\ufeff]")
# Errors of the local file system about one name (too long, a file where a folder is needed, ...): that object is
# skipped with a line, the others are still written.
_NAME_ERRORS = frozenset(
    {errno.ENAMETOOLONG, errno.ENOTDIR, errno.EISDIR, errno.EEXIST, errno.EINVAL, errno.EILSEQ, errno.ENOTEMPTY}
)


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
        return [DownloadItem(remote_of(stat), target)]
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
