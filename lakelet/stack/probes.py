"""What the local stack checks and makes around its servers: its ports free before it starts anything, its
buckets, and the API healthy once served (lakelet/stack/local.py)."""

from __future__ import annotations

import socket
import urllib.error
import urllib.request
from collections.abc import Iterable
from typing import Any


def check_ports_free(host: str, ports: Iterable[int]) -> None:
    """Raises OSError naming the first requested port (0: any, not checked) that cannot be bound."""
    # Fail before any work: ThreadedMotoServer binds on its own thread and would wait forever for a port
    # in use, and the API port is bound only after provisioning.
    for requested in ports:
        if requested:
            with socket.socket() as probe:
                probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                try:
                    probe.bind((host, requested))
                except OSError as error:
                    raise OSError(f"{host}:{requested} is not available: {error.strerror}") from error


def ensure_buckets(s3: Any, names: Iterable[str], region: str) -> None:
    """Creates those of the buckets that do not exist yet."""
    existing = {bucket["Name"] for bucket in s3.list_buckets().get("Buckets", [])}
    for name in names:
        if name in existing:
            continue
        # us-east-1 takes no LocationConstraint; every other region requires one.
        if region == "us-east-1":
            s3.create_bucket(Bucket=name)
        else:
            s3.create_bucket(Bucket=name, CreateBucketConfiguration={"LocationConstraint": region})


def check_health(api_url: str) -> None:
    """Raises RuntimeError unless GET <api_url>/healthcheck answers 2xx."""
    url = api_url + "/healthcheck"
    # A proxy from the environment must not see (or swallow) a loopback request.
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(url, timeout=10) as response:
            status = response.status
    except urllib.error.HTTPError as error:
        status = error.code
    if not 200 <= status < 300:
        raise RuntimeError(f"the local API is up but GET {url} answered {status}")
