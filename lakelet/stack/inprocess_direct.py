"""The stack's own PutItem (an upload's staged row) from its parameters to moto's backend and back, without the
HTTP shapes in between (issue 43).

Why: once an upload's PutItem is answered from moto's backend (moto_fast_writes.py), most of its CPU went to
carrying it there and back as HTTP: botocore's validation, serialization and parsing, a signature nobody checks,
the WSGI environ and the layers in front of moto (the key-pair guard, the table-write witness, the journal's
middleware, moto_direct), each reading again what the one before had written. Measured in ``lakelet up`` (thread
CPU, one client): a PutItem cost about 1 ms, of which moto's backend and the journal take a third.

What :func:`answer` does, for a call inprocess_lean.py makes (a client of the stack's key, answered in process):
the body is the JSON botocore's serializer writes for these parameters (``json.dumps`` of them, in their order,
for parameters of the plain form below); the request the journal records is the one the lean pipeline's
environ would record (the same keys and values: tests/lakelet/test_inprocess_direct_puts.py compares them);
then, as the WSGI chain does: the guard lets the stack's own key through, the journal runs the request under its
lock with moto's randomness and clock pinned and records it before the answer is returned, moto_fast_writes.py
answers it from the backend (anything it leaves to moto goes through moto's own WSGI path, in the same pinned run
and the same record), and the table-write witness counts it once answered. An answer of ``{}`` is parsed as
botocore parses it; any other answer (the old item, consumed capacity, an error) through botocore's parser.

Only for the plain form: TableName, Item, ReturnValues NONE or ALL_OLD, ReturnConsumedCapacity NONE or TOTAL;
the item's values strings, numbers, booleans, nulls, string and number sets, lists and maps (no binary value:
botocore encodes it), nested at most 32 deep, the body under 64 KiB; a client whose event handlers are only
botocore's own that change nothing for a PutItem outside Lambda (and chalicelib's wire hook, which reads only
items of reads); moto's server app is the stack's guard (a layer put in front of it, such as the bench's call
counter, sees every request the WSGI way). Anything else returns None and takes the lean pipeline, before
anything has run.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from botocore.awsrequest import AWSPreparedRequest, AWSResponse
from botocore.utils import get_current_datetime
from moto.core.botocore_stubber import BotocoreStubber
from pynamodb.connection.base import Connection

from lakelet.persistence import determinism, middleware
from lakelet.stack import inprocess_aws, inprocess_lean, moto_direct, moto_fast_writes
from lakelet.stack.inprocess_signing import unchecked_authorization

__all__ = ["Chain", "answer", "counters", "install", "uninstall"]

log = logging.getLogger(__name__)

#: PutItems answered past the WSGI chain since the process started (tests read it).
counters = {"direct": 0}

_PUT_ITEM_TARGET = "DynamoDB_20120810.PutItem"
_JSON_TYPE = "application/x-amz-json-1.0"
_MEMBERS = frozenset({"TableName", "Item", "ReturnValues", "ReturnConsumedCapacity"})
_MAX_BODY = 64 * 1024  # JSON longer than the item's DynamoDB size: a smaller body is never too large an item
_DEPTH = 32
_SCALARS: dict[str, type] = {"S": str, "N": str, "BOOL": bool, "NULL": bool}
_SETS = frozenset({"SS", "NS"})
# botocore's own handlers of a PutItem's events (by module and name), each a no-op for it outside Lambda; and
# chalicelib's before-parse hook, which reads only the items of reads (adapters/dynamodb/wire.py).
_QUIET_HANDLERS = frozenset(
    {
        ("botocore.handlers", "add_recursion_detection_header"),
        ("botocore.handlers", "inject_api_version_header_if_needed"),
        ("botocore.handlers", "generate_idempotent_uuid"),
        ("botocore.handlers", "_handle_request_validation_mode_member"),
        ("botocore.retries.standard", "RetryQuotaChecker.release_retry_quota"),
        ("chalicelib.adapters.dynamodb.wire", "lift_items"),
    }
)
_EVENTS = ("provide-client-params", "before-parameter-build", "before-call", "before-send", "before-parse")
_QUIET = "_lakelet_direct_quiet"


@dataclass(frozen=True)
class Chain:
    """What the WSGI chain in front of moto is made of (lakelet/stack/local.py builds it)."""

    server: Any  # the stack's moto server: its ``app`` is read per call
    guard: Any  # what ``server.app`` is while nothing is put in front of it
    table_writes: Any  # lakelet/stack/table_writes.py's layer
    moto: middleware.WsgiApp  # moto's app, under the journal
    journaled: Callable[[dict[str, Any], bytes, Callable[[int, float], middleware.Answer]], middleware.Answer] | None


_chain: list[Chain] = []
_lock = threading.Lock()


def install(chain: Chain) -> None:
    with _lock:
        _chain[:] = [chain]
    inprocess_lean.answer_first(answer)


def uninstall() -> None:
    inprocess_lean.answer_first(None)
    with _lock:
        _chain.clear()


def answer(client: Any, url: str, frozen: Any, operation_model: Any, params: dict[str, Any]) -> Any:
    """(http response, parsed answer) of a PutItem answered past the WSGI chain, or None (nothing has run)."""
    chain = _chain[0] if _chain else None
    if chain is None or operation_model.name != "PutItem" or chain.server.app is not chain.guard:
        return None
    if not moto_fast_writes.plain_moto() or not _plain(params) or not _quiet(client):
        return None
    body = json.dumps(params).encode("utf-8")  # what botocore's JSON serializer writes for these parameters
    if len(body) >= _MAX_BODY:
        return None
    counters["direct"] += 1
    region = client.meta.region_name
    headers = _headers(frozen, region, body)
    run = _runner(chain, moto_fast_writes.Caller(frozen.access_key, region), url, headers, body)
    touched = chain.table_writes.named_in(body)
    try:
        if chain.journaled is not None:
            found = chain.journaled(_recorded(url, chain.server, headers, body), body, run)
        else:
            found = run(0, 0.0)
    except Exception:  # answered as the WSGI way answers it
        log.exception("moto failed on POST %s", url)
        found = inprocess_aws.FAILED
    finally:
        chain.table_writes.count(touched)
    http = inprocess_aws.response(url, "POST", found)
    if http.status_code == 200 and http.content == b"{}":
        return http, {"ResponseMetadata": _metadata(http)}
    return http, inprocess_lean.parsed(client, "dynamodb", operation_model, http)


def _runner(
    chain: Chain, caller: Any, url: str, headers: dict[str, str], body: bytes
) -> Callable[[int, float], middleware.Answer]:
    """moto's answer under the journal's pinning: moto_fast_writes's, else moto's own WSGI path's."""

    def run(seed: int, when: float) -> middleware.Answer:
        with determinism.pinned(seed, when) if chain.journaled else nullcontext():
            found = moto_fast_writes.counted(moto_fast_writes.put_item(caller, body))
        if found is not None:
            answer = moto_direct.plain_answer(*found)
            if answer is None:  # a PutItem's answer has four fixed headers, none with a line break
                raise AssertionError(f"moto_fast_writes answered headers Flask would not send as given: {found[1]}")
            return answer
        environ = inprocess_aws.environ_of(AWSPreparedRequest("POST", url, headers, body, False), chain.server)
        if chain.journaled:
            return middleware.run(chain.moto, environ, seed, when)
        return inprocess_aws.call(chain.moto, environ)

    return run


def _headers(frozen: Any, region: str, body: bytes) -> dict[str, str]:
    """The headers the lean pipeline sends (inprocess_lean._send), in its order."""
    now = get_current_datetime().strftime("%Y%m%dT%H%M%SZ")
    headers = {"X-Amz-Target": _PUT_ITEM_TARGET, "Content-Type": _JSON_TYPE, "X-Amz-Date": now}
    if frozen.token:
        headers["X-Amz-Security-Token"] = frozen.token
    headers["Authorization"] = unchecked_authorization(f"{frozen.access_key}/{now[:8]}/{region}/dynamodb/aws4_request")
    return headers


def _recorded(url: str, server: Any, headers: dict[str, str], body: bytes) -> dict[str, Any]:
    """What the journal records of the request the lean pipeline would send (middleware.recordable of
    inprocess_aws's environ), built directly."""
    address = server.server_address
    recorded: dict[str, Any] = {
        "SERVER_SOFTWARE": server._server_version,
        "REQUEST_METHOD": "POST",
        "SCRIPT_NAME": "",
        "PATH_INFO": "/",
        "QUERY_STRING": "",
        "REQUEST_URI": "/",
        "RAW_URI": "/",
        "REMOTE_ADDR": "127.0.0.1",
        "SERVER_NAME": address[0],
        "SERVER_PORT": str(address[1]),
        "SERVER_PROTOCOL": "HTTP/1.1",
        "HTTP_HOST": urlsplit(url).netloc,
    }
    for name, value in headers.items():
        key = name.upper().replace("-", "_")
        recorded[key if key == "CONTENT_TYPE" else f"HTTP_{key}"] = value
    recorded["HTTP_ACCEPT_ENCODING"] = "identity"
    recorded["CONTENT_LENGTH"] = str(len(body))
    recorded[inprocess_aws.PRESERVED_NAMES] = {}
    return recorded


def _metadata(http: AWSResponse) -> dict[str, Any]:
    """ResponseMetadata as botocore's parser and the lean pipeline make it."""
    headers = http.headers
    return {
        "RequestId": headers.get("x-amzn-requestid", ""),
        "HTTPStatusCode": http.status_code,
        "HTTPHeaders": {name.lower(): value for name, value in headers.items()},
        "RetryAttempts": 0,
    }


def _plain(params: dict[str, Any]) -> bool:
    """Whether the parameters are of the plain form (see the module's docstring), which botocore's validation
    accepts and its serializer writes as ``json.dumps`` writes them."""
    if not _MEMBERS.issuperset(params):
        return False
    name, item = params.get("TableName"), params.get("Item")
    if type(name) is not str or not 0 < len(name) <= 1024 or type(item) is not dict or not item:
        return False
    if params.get("ReturnValues", "NONE") not in ("NONE", "ALL_OLD"):
        return False
    return params.get("ReturnConsumedCapacity", "NONE") in ("NONE", "TOTAL") and _members(item, 0)


def _members(values: dict[str, Any], depth: int) -> bool:
    return all(type(key) is str and _value(value, depth) for key, value in values.items())


def _value(value: Any, depth: int) -> bool:
    if type(value) is not dict or len(value) != 1:
        return False
    ((kind, inner),) = value.items()
    scalar = _SCALARS.get(kind)
    if scalar is not None:
        return type(inner) is scalar
    if kind in _SETS:
        return type(inner) is list and all(type(one) is str for one in inner)
    if depth >= _DEPTH:
        return False
    if kind == "L":
        return type(inner) is list and all(_value(one, depth + 1) for one in inner)
    return kind == "M" and type(inner) is dict and _members(inner, depth + 1)


def _quiet(client: Any) -> bool:
    """Whether the client's handlers of a PutItem's events are only those that change nothing for it (see the
    module's docstring), outside Lambda: botocore's own, chalicelib's wire hook, moto's stubber while no
    ``mock_aws`` enables it and PynamoDB's while its connection adds no header. Kept per client until a handler is
    registered or unregistered (botocore starts a new lookup cache then)."""
    if "AWS_LAMBDA_FUNCTION_NAME" in os.environ and os.environ.get("_X_AMZN_TRACE_ID"):
        return False  # botocore's recursion detection adds a header
    emitter = getattr(client.meta.events, "_emitter", None)
    cache = getattr(emitter, "_lookup_cache", None)
    if emitter is None or cache is None:
        return False
    seen = client.__dict__.get(_QUIET)
    if seen is None or seen[0] is not cache:
        conditions: list[Callable[[], bool]] | None = []
        for event in _EVENTS:
            for handler in emitter._handlers.prefix_search(f"{event}.dynamodb.PutItem"):
                conditions = _quiet_while(handler, conditions)
        seen = client.__dict__[_QUIET] = (cache, conditions)
    return seen[1] is not None and all(condition() for condition in seen[1])


def _quiet_while(handler: Any, conditions: list[Callable[[], bool]] | None) -> list[Callable[[], bool]] | None:
    """``conditions`` with what keeps ``handler`` from changing a PutItem, or None when it may."""
    if conditions is None:
        return None
    if isinstance(handler, BotocoreStubber):
        return [*conditions, lambda: not handler.enabled]
    if getattr(handler, "__func__", None) is Connection._before_send:
        connection = handler.__self__
        return [*conditions, lambda: connection._extra_headers is None]
    name = (getattr(handler, "__module__", None), getattr(handler, "__qualname__", None))
    return conditions if name in _QUIET_HANDLERS else None
