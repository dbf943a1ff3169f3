"""The two writes of every upload, S3's PutObject and DynamoDB's PutItem, answered from moto's backends without
moto's response classes (issue 43).

Why: an upload through the API or the gateway is one PutObject of its blob and one PutItem of its staged row.
Measured in ``lakelet up`` (thread CPU, one client, a data directory): 1.3-1.5 ms each of an upload's 3.4-3.8 ms,
and in each about half was moto's response layer around a backend call that takes a tenth of it: per request a new
response object parses the URL, the headers and the body again (S3 reads the bucket's ACL and CORS rules, the
lock, ACL, tagging and metadata headers; DynamoDB runs its request parser over the JSON body and a condition
parser with no condition), then serializes, enriches and checksums the answer.

What :func:`answer` does: for a request that lakelet/stack/moto_direct.py hands it (this process's own, already
through the key-pair guard and the journal, so a replay after a restart runs the same request through moto's own
path), and only in the plain form the stack's adapters send, it makes the same backend calls with the same
arguments as moto's handler would, in the same order (first the access key's visit in IAM, from the account and
region moto's setup reads), and answers the same (status, headers, body), which moto_direct turns into the same
response. Anything else returns None before anything has changed, and moto
answers it:

- PutObject: PUT of a key, path-style on an IP address, without a query, and with no header but those botocore
  sends for a put of bytes (no metadata, ACL, tagging, encryption, storage class, lock, condition, content type
  or aws-chunked body), a CRC32 checksum or none; to a bucket without versioning, policy, logging or object lock.
- PutItem: TableName, Item, ReturnValues NONE or ALL_OLD, ReturnConsumedCapacity NONE or TOTAL, nothing else
  (no condition); a table moto knows. moto's validators run first; a refusal by one of them, or by the backend
  before it stores (an item too large, a key of the wrong type), leaves the request to moto, which refuses it.

Also only while moto checks no IAM permissions (``INITIAL_NO_AUTH_ACTION_COUNT``: the stack never sets it) and
records no requests. tests/lakelet/test_moto_fast_writes.py compares answers and moto's stored objects and
items with those of moto's own path, for plain and refused requests, an IAM key, another region and a replay;
tests/lakelet/test_inprocess_answers.py compares the bytes under the journal's pinned random numbers.
"""

from __future__ import annotations

import base64
import binascii
import ipaddress
import json
import math
import os
import string
from typing import Any
from urllib.parse import unquote

from moto import settings
from moto.core.exceptions import JsonRESTError
from moto.core.responses import BaseResponse
from moto.core.utils import extract_region_from_aws_authorization
from moto.dynamodb.models import dynamodb_backends
from moto.dynamodb.responses import (
    validate_put_has_empty_attrs,
    validate_put_has_empty_keys,
    validate_put_has_gsi_keys_set_to_none,
)
from moto.iam.models import get_account_id_from, mark_account_as_visited
from moto.moto_api import recorder
from moto.s3.models import s3_backends
from moto.s3.responses import DEFAULT_REGION_NAME
from moto.s3.utils import metadata_from_headers, parse_region_from_url
from moto.s3bucket_path.utils import bucket_name_from_url, parse_key_name
from moto.utilities.aws_headers import gen_amz_crc32
from moto.utilities.utils import get_partition
from werkzeug.datastructures import EnvironHeaders

from lakelet.persistence import determinism, middleware
from lakelet.stack import moto_speedups

__all__ = ["Caller", "answer", "counted", "counters", "plain_moto", "put_item", "put_object"]

#: Requests answered here ("fast") and left to moto ("moto"), since the process started (tests read it).
counters = {"fast": 0, "moto": 0}
Answer = tuple[int, dict[str, Any], str]

# The environ keys of a plain PutObject as botocore sends it (lean or whole pipeline); any other header leaves it to
# moto. Content-MD5 is metadata to moto (it stores it, it does not check it), as it is here.
_S3_KEYS = frozenset(
    {
        "HTTP_HOST",
        "CONTENT_LENGTH",
        "HTTP_CONTENT_MD5",
        "HTTP_EXPECT",
        "HTTP_X_AMZ_CHECKSUM_CRC32",
        "HTTP_X_AMZ_SDK_CHECKSUM_ALGORITHM",
        "HTTP_X_AMZ_DATE",
        "HTTP_X_AMZ_CONTENT_SHA256",
        "HTTP_X_AMZ_SECURITY_TOKEN",
        "HTTP_AUTHORIZATION",
        "HTTP_ACCEPT_ENCODING",
        "HTTP_USER_AGENT",
        "HTTP_AMZ_SDK_INVOCATION_ID",
        "HTTP_AMZ_SDK_REQUEST",
    }
)
_PUT_ITEM = "DynamoDB_20120810.PutItem"
_PUT_ITEM_MEMBERS = frozenset({"TableName", "Item", "ReturnValues", "ReturnConsumedCapacity"})


def answer(service: str, environ: dict[str, Any]) -> Answer | None:
    """moto's (status, headers, body) for the request, or None (nothing has run) when moto should answer it."""
    if not plain_moto():
        return None
    if service == "s3" and environ.get("REQUEST_METHOD") == "PUT":
        write = _put_object
    elif service == "dynamodb" and environ.get("HTTP_X_AMZ_TARGET") == _PUT_ITEM:
        write = _put_item
    else:
        return None
    plain = environ.get("HTTP_X_MOTO_ACCOUNT_ID") is None and not environ.get("QUERY_STRING")
    return counted(write(environ) if plain else None)


def plain_moto() -> bool:
    """Whether moto runs as the stack runs it: recording no requests, checking no IAM permissions."""
    return not recorder._user_enabled and not math.isfinite(settings.INITIAL_NO_AUTH_ACTION_COUNT)


def counted(found: Answer | None) -> Answer | None:
    counters["moto" if found is None else "fast"] += 1
    return found


_ID_CHARACTERS = string.ascii_letters + string.digits


def request_id() -> str:
    """moto's ``gen_amzn_requestid_long()``: the same 52 characters from the same random numbers (its
    ``get_random_string`` takes each by Random.choice of these 62, which takes the first 6-bit draw below 62),
    without three calls through Random's methods per character."""
    draw = determinism.randbits()
    characters: list[str] = []
    while len(characters) < 52:
        drawn = draw(6)
        if drawn < 62:
            characters.append(_ID_CHARACTERS[drawn])
    return "".join(characters)


class Caller:
    """Who sends the request and where, as moto's BaseResponse.setup_class reads it (no x-moto-account-id header,
    no query): the access key, the account it belongs to, and the region; :meth:`of` reads them from a request."""

    def __init__(self, access_key: str, region: str, url: str = "", authorization: str = "") -> None:
        self.access_key = access_key
        self.account = os.environ.get("MOTO_ACCOUNT_ID") or get_account_id_from(access_key)
        self.region = region
        self.url = url
        self.authorization = authorization

    @classmethod
    def of(cls, environ: dict[str, Any]) -> Caller:
        authorization = str(environ.get("HTTP_AUTHORIZATION", ""))
        match = BaseResponse.access_key_regex.search(authorization)
        url = f"http://{environ.get('HTTP_HOST', '')}{environ.get('RAW_URI', '')}"
        url_region = BaseResponse.region_regex.search(url)
        agent_region = BaseResponse.region_from_useragent_regex.search(str(environ.get("HTTP_USER_AGENT", "")))
        if url_region:
            region = url_region.group(1)
        elif agent_region:
            region = agent_region.group(1)
        elif "AWS4" in authorization:
            region = authorization.split(",")[0].split("/")[2]
        else:
            region = "us-east-1"  # BaseResponse.default_region
        return cls(match.group(1) if match else "AKIAEXAMPLE", region, url, authorization)

    def visit(self, service: str) -> None:
        """What every moto request does first: the access key's last use, in IAM."""
        mark_account_as_visited(
            account_id=self.account, access_key=self.access_key, service=service, region=self.region
        )


# ---- S3 PutObject -------------------------------------------------------------------------------------------


def _put_object(environ: dict[str, Any]) -> Answer | None:
    if environ.get("CONTENT_TYPE"):
        return None
    if any(key not in _S3_KEYS for key in environ if key.startswith("HTTP_")):
        return None
    host = str(environ.get("HTTP_HOST", ""))
    if not _ip_host(host) or environ.get("HTTP_EXPECT", "100-continue") != "100-continue":
        return None
    sha = str(environ.get("HTTP_X_AMZ_CONTENT_SHA256", "UNSIGNED-PAYLOAD"))
    if sha != "UNSIGNED-PAYLOAD" and (len(sha) != 64 or not all(c in "0123456789abcdef" for c in sha)):
        return None  # a streamed (aws-chunked) body: moto decodes it
    algorithm = str(environ.get("HTTP_X_AMZ_SDK_CHECKSUM_ALGORITHM", ""))
    checksum = environ.get("HTTP_X_AMZ_CHECKSUM_CRC32")
    if algorithm not in ("", "CRC32") or bool(algorithm) != (checksum is not None):
        return None
    raw_path = str(environ.get("RAW_URI", "")).split("?", 1)[0]
    if not raw_path.startswith("/") or "//" in raw_path:  # moto's URL map redirects merged slashes
        return None
    bucket_name = bucket_name_from_url(f"http://{host}{raw_path}")
    key_name = parse_key_name(unquote(raw_path))
    if not bucket_name or not key_name:
        return None
    caller = Caller.of(environ)
    # S3Response.setup_class's region: the URL's, else the signature's (an IP address names none).
    region = parse_region_from_url(caller.url, use_default_region=False)
    region = region or extract_region_from_aws_authorization(caller.authorization) or DEFAULT_REGION_NAME
    body = middleware.read_body(environ)
    return put_object(caller, region, bucket_name, key_name, body, dict(EnvironHeaders(environ)), checksum)


def put_object(
    caller: Caller, region: str, bucket_name: str, key_name: str, body: bytes, headers: dict[str, Any], crc32: Any
) -> Answer | None:
    """moto's answer to a plain PutObject of ``caller`` in ``region`` (the request's headers as moto's handler
    reads them, its CRC32 checksum or None), or None (nothing has run) for a bucket that is not plain: also the
    core of the stack's own PutObject past the WSGI chain (inprocess_direct.py)."""
    backend = s3_backends[caller.account][get_partition(region)]
    bucket = backend.buckets.get(bucket_name)
    if bucket is None or bucket.is_versioned or bucket.policy or bucket.logging or bucket.object_lock_enabled:
        return None
    caller.visit("s3")
    response_headers: dict[str, Any] = {}
    if crc32 is not None:
        response_headers["x-amz-checksum-crc32"] = crc32
    with moto_speedups.s3_put_lock:
        new_key = backend.put_object(
            bucket_name,
            key_name,
            body,
            storage="STANDARD",
            encryption=None,
            kms_key_id=None,
            bucket_key_enabled=None,
            lock_mode=None,
            lock_legal_status=None,
            lock_until=None,
            checksum_value=crc32,
        )
        new_key.set_metadata(metadata_from_headers(headers))
        new_key.set_acl(bucket.acl)
        new_key.website_redirect_location = None
        if crc32 is not None:
            new_key.checksum_algorithm = "CRC32"
        backend.put_object_tagging(new_key, {})
    response_headers.update(new_key.response_dict)
    response_headers.pop("content-length", None)
    response_headers["x-amzn-requestid"] = request_id()  # moto's draw of the id, as its _enrich_response makes it
    return 200, response_headers, ""


def _ip_host(host: str) -> bool:
    name, _, port = host.rpartition(":")
    if not name or not port.isdigit():
        name = host
    try:
        return ipaddress.ip_address(name).version == 4
    except ValueError:
        return False


# ---- DynamoDB PutItem ---------------------------------------------------------------------------------------


def _put_item(environ: dict[str, Any]) -> Answer | None:
    if environ.get("REQUEST_METHOD") != "POST":
        return None
    return put_item(Caller.of(environ), middleware.read_body(environ))


def put_item(caller: Caller, raw: bytes) -> Answer | None:
    """moto's answer to a PutItem of ``caller`` with this JSON body, or None (nothing has run) when the request is
    not of the plain form: also the core of the stack's own PutItem past the WSGI chain (inprocess_direct.py)."""
    try:
        body = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    if not isinstance(body, dict) or not _PUT_ITEM_MEMBERS.issuperset(body):
        return None
    name, item = body.get("TableName"), _item(body.get("Item"))
    return_values = body.get("ReturnValues", "NONE")
    capacity = body.get("ReturnConsumedCapacity", "NONE")
    if not isinstance(name, str) or not item:
        return None
    if return_values not in ("NONE", "ALL_OLD") or capacity not in ("NONE", "TOTAL"):
        return None
    backend = dynamodb_backends[caller.account][caller.region]
    table = backend.tables.get(name)
    if table is None:
        return None
    try:
        validate_put_has_empty_keys(item, table)
        validate_put_has_empty_attrs(item, table)
        validate_put_has_gsi_keys_set_to_none(item, table)
        existing = backend.get_item(name, item) if return_values == "ALL_OLD" else None
        result: dict[str, Any] = {"Attributes": existing.to_json()["Attributes"]} if existing else {}
        if capacity == "TOTAL":
            result["ConsumedCapacity"] = {"TableName": name, "CapacityUnits": 1.0}
        text = json.dumps(result, default=_base64)  # binary values as moto's serializer writes them
        caller.visit("dynamodb")  # moto's first step; the same again (same pinned time) if the put is refused
        backend.put_item(name, item, None, None, {}, {}, True, None)
    except (JsonRESTError, TypeError):  # refused before anything was stored: moto answers it, its own way
        return None
    headers = {"Content-Type": "application/x-amz-json-1.0", "server": "amazon.com"}
    headers["x-amzn-requestid"] = request_id()
    gen_amz_crc32(text, headers)
    return 200, headers, text


# The forms whose wire value is the parsed value, with its JSON type.
_SCALARS: dict[str, type] = {"S": str, "N": str, "BOOL": bool, "NULL": bool, "SS": list, "NS": list}


# DynamoDB's limit on the nesting of lists and maps: a deeper item is left to moto, which answers it its own way.
_DEPTH = 32


def _item(wire: Any, depth: int = 0) -> dict[str, Any] | None:
    """The item as moto's request parser hands it to the handler (binary values decoded from base64), or None
    when a value is not one of DynamoDB's plain forms or nests deeper than DynamoDB allows."""
    if not isinstance(wire, dict):
        return None
    item = {}
    for name, value in wire.items():
        parsed = _value(value, depth)
        if parsed is None:
            return None
        item[name] = parsed
    return item


def _value(value: Any, depth: int) -> dict[str, Any] | None:
    if not isinstance(value, dict) or len(value) != 1:
        return None
    ((kind, inner),) = value.items()
    try:
        if kind in _SCALARS:
            return value if isinstance(inner, _SCALARS[kind]) and _strings(kind, inner) else None
        if kind == "B" and isinstance(inner, str):
            return {"B": base64.b64decode(inner, validate=True)}
        if kind == "BS" and isinstance(inner, list):
            return {"BS": [base64.b64decode(one, validate=True) for one in inner]}
    except (binascii.Error, TypeError, ValueError):
        return None
    if depth >= _DEPTH:
        return None
    if kind == "L" and isinstance(inner, list):
        values = [_value(one, depth + 1) for one in inner]
        return None if any(one is None for one in values) else {"L": values}
    if kind == "M":
        members = _item(inner, depth + 1)
        return None if members is None else {"M": members}
    return None


def _strings(kind: str, inner: Any) -> bool:
    return kind not in ("SS", "NS") or all(isinstance(one, str) for one in inner)


def _base64(value: Any) -> str:
    if isinstance(value, bytes):
        return base64.b64encode(value).decode()
    raise TypeError(f"{type(value).__name__} in an item")
