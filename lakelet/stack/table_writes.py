"""Which of the stack's DynamoDB tables may have been written, told to the engine's ref cache (issue 43).

Why: every read of a branch (a stat, a get, a listing, a log, a diff by branch name) and every staged write's
re-check against a concurrent seal read the branch record with a strongly consistent GetItem: a third of a log of
100 commits, a fifth of an upload. lakeFS reads its own store for it too, but a local call is a function call
there and a botocore request into moto here. Deployed, each Lambda container is one writer among many and must
ask DynamoDB. The embedded stack is different: every write of its tables, whoever sends it (the API, the gateway,
the workflows' tasks, another process over moto's port), is a request through the one WSGI chain in front of
moto in this process. So a counter per table, moved after each request that may have written it, tells whether a
branch read before is still what a consistent read would return (chalicelib/graveler/storage/cached_refs.py).

:class:`TableWrites` is that layer, under the key-pair guard (a refused request changes nothing) and over the
journal. A request counts for a watched table once it has been answered (its change visible), and conservatively:

- reads do not count: what the journal knows changes nothing (lakelet/persistence/middleware.py), GET and HEAD;
- S3 requests do not count (they cannot write a table);
- a DynamoDB request counts for each watched table whose name is in its body (every write names its tables:
  TableName, RequestItems, TransactItems, a PartiQL statement), and for every one when the body holds a JSON
  escape (a name spelled with one would not be found);
- anything else that may change state counts for every watched table, moto's own ``/moto-api`` included.

A table's :class:`Witness` gives the counter as a mark; the mark is unchanged while no write of the table has been
answered since. A write in flight has not counted yet: a read may be ordered before it, as it may on DynamoDB.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import Any

from lakelet.persistence import middleware

__all__ = ["TableWrites", "Witness"]


class Witness:
    """One table's count of answered writes (chalicelib's ChangeWitness)."""

    def __init__(self) -> None:
        self._writes = 0

    def mark(self) -> object:
        return self._writes

    def unchanged_since(self, mark: object) -> bool:
        return self._writes == mark

    def _count(self) -> None:
        self._writes += 1  # under TableWrites' lock


class TableWrites:
    """The WSGI layer (see the module's docstring); ``witness(table)`` for each table of ``tables``."""

    def __init__(self, app: middleware.WsgiApp, tables: Iterable[str]) -> None:
        self._app = app
        self._lock = threading.Lock()
        self._witnesses = {table: Witness() for table in tables}
        self._names = [(table.encode(), witness) for table, witness in self._witnesses.items()]
        self._every = list(self._witnesses.values())

    @classmethod
    def of_refs(cls, app: middleware.WsgiApp, table_prefix: str) -> TableWrites:
        """The layer watching the branch and tag tables of the stack's table prefix."""
        from chalicelib.adapters.dynamodb.names import TableNames

        names = TableNames.from_prefix(table_prefix)
        return cls(app, (names.branches, names.tags))

    def witness(self, table: str) -> Witness:
        return self._witnesses[table]

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        touched = self._touched(environ)
        if not touched:
            return self._app(environ, start_response)
        try:
            # The answer read whole, so the change is in moto's state, before counting it.
            return middleware.whole(self._app(environ, start_response))
        finally:
            self.count(touched)

    def named_in(self, body: bytes) -> list[Witness]:
        """The witnesses a DynamoDB request with this body counts for (see the module's docstring)."""
        if b"\\u" in body:
            return self._every
        return [witness for name, witness in self._names if name in body]

    def count(self, touched: list[Witness]) -> None:
        """Counts an answered request for ``touched``: this layer's, and a write of the stack's own that reached
        moto past the WSGI chain (lakelet/stack/inprocess_direct.py)."""
        if touched:
            with self._lock:
                for witness in touched:
                    witness._count()

    def _touched(self, environ: dict[str, Any]) -> list[Witness]:
        if environ.get("PATH_INFO", "").startswith("/moto-api"):
            return self._every if environ.get("REQUEST_METHOD") not in ("GET", "HEAD") else []
        if not middleware.may_change_state(environ):
            return []
        service = middleware.signing_service(environ)
        if service == "s3":
            return []
        body = middleware.read_body(environ)
        if not middleware.changes_state(environ, body):
            return []
        return self.named_in(body) if service == "dynamodb" else self._every
