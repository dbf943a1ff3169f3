"""What the local stack's API and S3 gateway answer while its data directory refuses writes.

When the journal cannot be written (a full disk), moto answers every later write 503 until the stack restarts
(store.py). The app turns that 503 into its generic "storage temporarily unavailable, retry later", right for a
throttled AWS store but wrong here: retrying never helps. So the stack puts these two shims in front of the app and
the gateway: a 503 answered while writes are refused carries the store's own message (free space, then restart)
and no ``Retry-After``. Every other answer passes through unchanged.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Protocol
from xml.sax.saxutils import escape as xml_escape

if TYPE_CHECKING:
    from chalice.app import Chalice


class _Refusing(Protocol):
    """What this module reads of a store (store.Persistence): its reason for refusing writes. Named by its shape,
    not imported: store.py calls this module when it closes."""

    @property
    def refusal(self) -> str | None: ...


_MESSAGE = re.compile(rb"<Message>.*?</Message>", re.DOTALL)
_MARK = "_lakelet_refusals_installed"
# One stack runs per process (its app and services are process-wide): the Persistence whose refusal is shown.
_current: _Refusing | None = None


def refusal() -> str | None:
    """The running stack's reason for refusing writes, or None."""
    return _current.refusal if _current is not None else None


def explain_in(app: Chalice, persistence: _Refusing) -> None:
    """Make ``app``'s 503s say the refusal of ``persistence`` while there is one (the middleware is added once
    per app: app.py's app is one object for every stack a process starts)."""
    global _current
    _current = persistence
    if not getattr(app, _MARK, False):
        app.register_middleware(_lakefs_middleware, "http")
        setattr(app, _MARK, True)


def forget(persistence: _Refusing) -> None:
    """Called when ``persistence`` closes: a later stack of the process answers as usual."""
    global _current
    if _current is persistence:
        _current = None


def _lakefs_middleware(event: Any, get_response: Any) -> Any:
    response = get_response(event)
    reason = refusal()
    if reason is None or response.status_code != 503:
        return response
    from chalice import Response

    headers = {k: v for k, v in response.headers.items() if k.lower() not in ("retry-after", "content-type")}
    return Response(
        json.dumps({"message": reason}), status_code=503, headers={**headers, "Content-Type": "application/json"}
    )


class ExplainingGateway:
    """An S3 gateway whose 503s say the refusal, as :func:`explain_in` does for the API."""

    def __init__(self, gateway: Any) -> None:
        self._gateway = gateway

    def __getattr__(self, name: str) -> Any:
        return getattr(self._gateway, name)

    def handle(self, request: Any) -> Any:
        return _explain(self._gateway.handle(request))

    def refuse_before_body(self, request: Any) -> Any:
        refused = self._gateway.refuse_before_body(request)
        return _explain(refused) if refused is not None else None


def _explain(response: Any) -> Any:
    reason = refusal()
    if reason is None or response.status != 503:
        return response
    message = b"<Message>" + xml_escape(reason).encode() + b"</Message>"
    body = _MESSAGE.sub(lambda _: message, response.body, count=1) if response.body else response.body
    headers = {k: v for k, v in response.headers.items() if k.lower() != "retry-after"}
    return replace(response, headers=headers, body=body)
