"""Without a data directory the stack still answers moto's state-changing requests one at a time
(lakelet/persistence/middleware.py ``WriteLock``), as the journal's lock does with one: a TransactWriteItems that
moto cancels puts back copies of its tables taken at its start, which dropped an item put meanwhile (in a running
stack: tests/lakelet/test_table_writes.py).
"""

from __future__ import annotations

import io
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

from lakelet.persistence.middleware import WriteLock


def _put() -> dict[str, Any]:
    return {
        "REQUEST_METHOD": "POST",
        "PATH_INFO": "/",
        "HTTP_X_AMZ_TARGET": "DynamoDB_20120810.PutItem",
        "CONTENT_TYPE": "application/x-amz-json-1.0",
        "CONTENT_LENGTH": "2",
        "wsgi.input": io.BytesIO(b"{}"),
    }


def _get() -> dict[str, Any]:
    return {"REQUEST_METHOD": "GET", "PATH_INFO": "/bucket/key", "wsgi.input": io.BytesIO(b"")}


class _Overlaps:
    """moto's stand-in: each request sleeps a little; records how many writes and reads ran at once."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.writes = 0
        self.reads = 0
        self.most_writes = 0
        self.read_beside_write = False

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        write = environ["REQUEST_METHOD"] == "POST"
        with self.lock:
            if write:
                self.writes += 1
                self.most_writes = max(self.most_writes, self.writes)
            else:
                self.reads += 1
            self.read_beside_write |= self.writes > 0 and self.reads > 0
        time.sleep(0.02)
        with self.lock:
            if write:
                self.writes -= 1
            else:
                self.reads -= 1
        start_response("200 OK", [])
        return [b"{}"]


def test_writes_run_one_at_a_time_and_reads_beside_them() -> None:
    app = _Overlaps()
    layer = WriteLock().wrap(app)

    def send(environ: dict[str, Any]) -> None:
        assert list(layer(environ, lambda *_: None)) == [b"{}"]

    writes = [_put() for _ in range(6)]
    reads = [_get() for _ in range(6)]
    threads = [threading.Thread(target=send, args=(environ,)) for environ in writes + reads]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert app.most_writes == 1
    assert app.read_beside_write
