"""Parallel uploads and downloads between a local tree and a branch path, resumable and interruptible: what both
directions share (the server's offer, the remote listing, the worker pool that Ctrl-C stops). The directions
themselves are upload.py and download.py.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import urllib3

from lakelet.commands.api import Api, q
from lakelet.commands.uri import URI

CHUNK = 1024 * 1024
PART_SUFFIX = ".lakelet-part"
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
            yield remote_of(item)


def remote_of(stats: dict[str, Any]) -> Remote:
    """The object of one listing row (a presigned URL only when the address is one)."""
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
