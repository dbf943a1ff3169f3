"""An upload's two writes, the stack's own PutItem and PutObject, from their parameters to moto's backend and
back without the HTTP shapes in between (issue 43).

Why: once an upload's writes are answered from moto's backends (moto_fast_writes.py), most of their CPU went to
carrying them there and back as HTTP: botocore's parameter events, validation and serialization, a signature
nobody checks, the WSGI environ and the layers in front of moto (the key-pair guard, the table-write witness, the
journal's middleware, moto_direct), each reading again what the one before had written. Measured in process
(thread CPU a call, a data directory): PutItem 0.96-1.0 -> 0.66-0.70 ms, PutObject 1.0-1.15 -> 0.72 ms.

What :func:`answer` does, for a call inprocess_lean.py makes (a client of the stack's key, answered in process):
it builds the request the lean pipeline would send (PutItem's body is the JSON botocore's serializer writes,
``json.dumps`` of plain parameters in their order; PutObject's headers are the Content-MD5 given, Expect, and
botocore's default CRC32 checksum) and what the journal would record of it (tests/lakelet/
test_inprocess_direct_puts.py compares the records); then, as the WSGI chain does: the guard lets the stack's own
key through, the journal runs the request under its lock with moto's randomness and clock pinned and records it
before the answer is returned (Persistence.journaled; without a data directory, it runs under the stack's write
lock, middleware.WriteLock, unpinned), moto_fast_writes.py answers it from the backend (anything
it leaves to moto goes through moto's own WSGI path, in the same pinned run and record), and the table-write
witness counts a PutItem once answered. The answer is parsed by botocore's parser (a PutItem's ``{}`` as it
parses it), and ``after-call`` and errors are the lean pipeline's.

Only for plain forms, anything else returning None before anything has run (the lean pipeline then sends it):

- PutItem: TableName, Item, ReturnValues NONE or ALL_OLD, ReturnConsumedCapacity NONE or TOTAL; the item's values
  strings, numbers, booleans, nulls, string and number sets, lists and maps (no binary value: botocore encodes
  it), nested at most 32 deep; the body under 64 KiB;
- PutObject: Bucket, Key, Body (bytes), ContentMD5; a bucket and key botocore writes into the path as they are
  (letters, digits, ``.-_`` and single slashes); a client computing checksums when supported (botocore's default);
- a client whose handlers of the operation's events are only botocore's own that change nothing for it outside
  Lambda (or that it does here: Expect), chalicelib's wire hook, moto's stubber while disabled and PynamoDB's
  while it adds no header; and moto's server app is the stack's guard (a layer put in front of it, such as the
  bench's call counter, sees every request the WSGI way).
"""

from __future__ import annotations

import base64
import json
import logging
import os
import re
import threading
import zlib
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from botocore.awsrequest import AWSPreparedRequest
from botocore.utils import get_current_datetime
from moto.core.botocore_stubber import BotocoreStubber
from pynamodb.connection.base import Connection

from lakelet.persistence import determinism, middleware
from lakelet.stack import direct_answers, inprocess_aws, inprocess_lean, moto_direct, moto_fast_writes
from lakelet.stack.inprocess_signing import unchecked_authorization

__all__ = ["Chain", "answer", "counters", "install", "uninstall"]

log = logging.getLogger(__name__)

#: PutItems and PutObjects answered past the WSGI chain since the process started (tests read it).
counters = {"direct": 0}

_PUT_ITEM_TARGET = "DynamoDB_20120810.PutItem"
_JSON_TYPE = "application/x-amz-json-1.0"
_MEMBERS = frozenset({"TableName", "Item", "ReturnValues", "ReturnConsumedCapacity"})
_MAX_BODY = 64 * 1024  # JSON longer than the item's DynamoDB size: a smaller body is never too large an item
_DEPTH = 32
_SCALARS: dict[str, type] = {"S": str, "N": str, "BOOL": bool, "NULL": bool}
_SETS = frozenset({"SS", "NS"})
# botocore's own handlers of the two calls' events (by module and name), each a no-op for them outside Lambda; and
# chalicelib's before-parse hook, which reads only the items of reads (adapters/dynamodb/wire.py).
_QUIET_HANDLERS = frozenset(
    {
        ("botocore.handlers", "add_recursion_detection_header"),
        ("botocore.handlers", "inject_api_version_header_if_needed"),
        ("botocore.handlers", "generate_idempotent_uuid"),
        ("botocore.handlers", "_handle_request_validation_mode_member"),
        ("botocore.retries.standard", "RetryQuotaChecker.release_retry_quota"),
        ("chalicelib.adapters.dynamodb.wire", "lift_items"),
        # S3's: no metadata or customer key to check; the body read from a file-like object (the same bytes); a
        # bucket name that passes its check (the direct way takes only plain names); the redirector's and the
        # endpoint's notes in the context; Expect (sent here as it adds it); S3 Express's signing cache (none
        # without S3 Express's endpoint); and its answer's checks, which run as they do in the lean pipeline.
        ("botocore.handlers", "validate_ascii_metadata"),
        ("botocore.handlers", "sse_md5"),
        ("botocore.handlers", "convert_body_to_file_like_object"),
        ("botocore.handlers", "validate_bucket_name"),
        ("botocore.handlers", "remove_bucket_from_url_paths_from_model"),
        ("botocore.utils", "S3RegionRedirectorv2.annotate_request_context"),
        ("botocore.client", "ClientCreator._inject_s3_input_parameters"),
        ("botocore.handlers", "add_expect_header"),
        ("botocore.utils", "S3ExpressIdentityResolver.apply_signing_cache_key"),
        ("botocore.handlers", "_handle_200_error"),
        ("botocore.handlers", "handle_expires_header"),
    }
)
_SERVICES = {"PutItem": "dynamodb", "PutObject": "s3"}
_OBJECT_MEMBERS = frozenset({"Bucket", "Key", "Body", "ContentMD5"})
# Names whose path botocore writes as they are (nothing to percent-encode) and moto reads as they are.
_BUCKET = re.compile(r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]")
_KEY = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]*(/[A-Za-z0-9_-][A-Za-z0-9._-]*)*")
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
    unjournaled: Callable[[Callable[[], middleware.Answer]], middleware.Answer]  # the write lock, without a journal


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
    """(http response, parsed answer) of a PutItem or PutObject answered past the WSGI chain, or None (nothing
    has run)."""
    chain = _chain[0] if _chain else None
    name = operation_model.name
    if chain is None or name not in _SERVICES or chain.server.app is not chain.guard:
        return None
    if not moto_fast_writes.plain_moto() or not _quiet(client, name):
        return None
    request = _prepared(client, name, frozen, params)
    if request is None:
        return None
    counters["direct"] += 1
    address = f"{url.rstrip('/')}{request.path}"
    touched = chain.table_writes.named_in(request.body) if request.service == "dynamodb" else []
    run = _runner(chain, moto_fast_writes.Caller(frozen.access_key, client.meta.region_name), address, request)
    try:
        if chain.journaled is None:  # no data directory: nothing journaled or pinned, one write at a time all the same
            found = chain.unjournaled(lambda: run(0, 0.0))
        else:
            found = chain.journaled(_recorded(url, chain.server, request), request.body, run)
    except Exception:  # answered as the WSGI way answers it
        log.exception("moto failed on %s %s", request.method, address)
        found = inprocess_aws.FAILED
    finally:
        chain.table_writes.count(touched)
    unique = len({name.lower() for name, _ in found[1]}) == len(found[1])
    http = inprocess_aws.response(address, request.method, found, unique=unique)
    quick = direct_answers.parsed(request.service, operation_model, http)
    if quick is None:
        return http, inprocess_lean.parsed(client, request.service, operation_model, http)
    return http, quick


@dataclass(frozen=True)
class _Request:
    """A call as the lean pipeline would send it: its service, method, path, headers (in its order) and body."""

    service: str
    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    fast: Callable[[moto_fast_writes.Caller], moto_fast_writes.Answer | None]  # moto_fast_writes's answer


def _runner(chain: Chain, caller: Any, url: str, request: _Request) -> Callable[[int, float], middleware.Answer]:
    """moto's answer under the journal's pinning: moto_fast_writes's, else moto's own WSGI path's."""

    def run(seed: int, when: float) -> middleware.Answer:
        with determinism.pinned(seed, when) if chain.journaled else nullcontext():
            found = moto_fast_writes.counted(request.fast(caller))
        if found is not None:
            answer = moto_direct.plain_answer(*found)
            if answer is None:  # these answers' headers are moto's fixed few, none with a line break
                raise AssertionError(f"moto_fast_writes answered headers Flask would not send as given: {found[1]}")
            return answer
        sent = AWSPreparedRequest(request.method, url, request.headers, request.body, False)
        environ = inprocess_aws.environ_of(sent, chain.server)
        if chain.journaled:
            return middleware.run(chain.moto, environ, seed, when)
        return inprocess_aws.call(chain.moto, environ)

    return run


def _put_item(region: str, frozen: Any, params: dict[str, Any]) -> _Request | None:
    if not _plain(params):
        return None
    body = json.dumps(params).encode("utf-8")  # what botocore's JSON serializer writes for these parameters
    if len(body) >= _MAX_BODY:
        return None
    headers = _signed({"X-Amz-Target": _PUT_ITEM_TARGET, "Content-Type": _JSON_TYPE}, frozen, region, "dynamodb")
    return _Request("dynamodb", "POST", "/", headers, body, lambda caller: moto_fast_writes.put_item(caller, body))


def _put_object(region: str, frozen: Any, params: dict[str, Any], checksums: str) -> _Request | None:
    """A put of bytes to a plain key (its path is the key itself), as the lean pipeline sends it with botocore's
    checksum by default (CRC32) and the Expect header it adds for a body to read."""
    body, md5 = params.get("Body"), params.get("ContentMD5")
    if not _OBJECT_MEMBERS.issuperset(params) or type(body) is not bytes or not (md5 is None or type(md5) is str):
        return None
    bucket, key = params.get("Bucket"), params.get("Key")
    if type(bucket) is not str or type(key) is not str or not _BUCKET.fullmatch(bucket) or not _KEY.fullmatch(key):
        return None
    if checksums != "when_supported":
        return None
    crc32 = base64.b64encode(zlib.crc32(body).to_bytes(4, "big")).decode()
    headers = {"Content-MD5": md5} if md5 is not None else {}
    headers.update({"Expect": "100-continue", "X-Amz-Checksum-Crc32": crc32, "X-Amz-Sdk-Checksum-Algorithm": "CRC32"})
    # What moto's handler takes as the object's metadata from these headers, as it reads (and spells) them.
    meta = {"Content-Md5": md5} if md5 is not None else {}
    meta["X-Amz-Content-Sha256"] = "UNSIGNED-PAYLOAD"

    def fast(caller: moto_fast_writes.Caller) -> moto_fast_writes.Answer | None:
        return moto_fast_writes.put_object(caller, region, bucket, key, body, meta, crc32)

    return _Request("s3", "PUT", f"/{bucket}/{key}", _signed(headers, frozen, region, "s3"), body, fast)


def _prepared(client: Any, operation: str, frozen: Any, params: dict[str, Any]) -> _Request | None:
    region = client.meta.region_name
    if operation == "PutItem":
        return _put_item(region, frozen, params)
    return _put_object(region, frozen, params, client.meta.config.request_checksum_calculation)


def _signed(headers: dict[str, str], frozen: Any, region: str, service: str) -> dict[str, str]:
    """``headers`` and what the lean pipeline's _send adds, in its order."""
    now = get_current_datetime().strftime("%Y%m%dT%H%M%SZ")
    headers["X-Amz-Date"] = now
    if frozen.token:
        headers["X-Amz-Security-Token"] = frozen.token
    if service == "s3":
        headers["X-Amz-Content-SHA256"] = "UNSIGNED-PAYLOAD"
    headers["Authorization"] = unchecked_authorization(f"{frozen.access_key}/{now[:8]}/{region}/{service}/aws4_request")
    return headers


def _recorded(url: str, server: Any, request: _Request) -> dict[str, Any]:
    """What the journal records of the request the lean pipeline would send (middleware.recordable of
    inprocess_aws's environ), built directly."""
    address = server.server_address
    recorded: dict[str, Any] = {
        "SERVER_SOFTWARE": server._server_version,
        "REQUEST_METHOD": request.method,
        "SCRIPT_NAME": "",
        "PATH_INFO": request.path,
        "QUERY_STRING": "",
        "REQUEST_URI": request.path,
        "RAW_URI": request.path,
        "REMOTE_ADDR": "127.0.0.1",
        "SERVER_NAME": address[0],
        "SERVER_PORT": str(address[1]),
        "SERVER_PROTOCOL": "HTTP/1.1",
        "HTTP_HOST": urlsplit(url).netloc,
    }
    for name, value in request.headers.items():
        key = name.upper().replace("-", "_")
        recorded[key if key == "CONTENT_TYPE" else f"HTTP_{key}"] = value
    recorded["HTTP_ACCEPT_ENCODING"] = "identity"
    recorded["CONTENT_LENGTH"] = str(len(request.body))
    recorded[inprocess_aws.PRESERVED_NAMES] = {}
    return recorded


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


def _quiet(client: Any, operation: str) -> bool:
    """Whether the client's handlers of the operation's events are only those that change nothing for it (see the
    module's docstring), outside Lambda: botocore's own, chalicelib's wire hook, moto's stubber while no
    ``mock_aws`` enables it and PynamoDB's while its connection adds no header. Kept per client until a handler is
    registered or unregistered (botocore starts a new lookup cache then)."""
    if "AWS_LAMBDA_FUNCTION_NAME" in os.environ and os.environ.get("_X_AMZN_TRACE_ID"):
        return False  # botocore's recursion detection adds a header
    emitter = getattr(client.meta.events, "_emitter", None)
    cache = getattr(emitter, "_lookup_cache", None)
    if emitter is None or cache is None:
        return False
    seen = client.__dict__.get(_QUIET + operation)
    if seen is None or seen[0] is not cache:
        conditions: list[Callable[[], bool]] | None = []
        for event in _EVENTS:
            for handler in emitter._handlers.prefix_search(f"{event}.{_SERVICES[operation]}.{operation}"):
                conditions = _quiet_while(handler, conditions)
        seen = client.__dict__[_QUIET + operation] = (cache, conditions)
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
