"""The stack's own DynamoDB calls, and its S3 object reads and writes, skip the parts of botocore's request
pipeline that only a network needs (issue 43).

Why: once moto answers in process (inprocess_aws.py, moto_direct.py), botocore's client side was the largest part of
an upload through the API: a third of the stack's CPU, about half of it for the staged row's PutItem. For a call
that never leaves the process, much of that work has nothing to act on: resolving the endpoint through the rules
engine (the URL is the stack's moto, given to the client), building and preparing an AWSRequest, the signing
pipeline (whose signature the guard does not check for these calls: inprocess_signing.py), the user agent and
retry headers, and the retry handler (moto in process neither throttles nor drops connections).

What stays botocore's own, so the request and the answer are what they are on AWS: the parameter events
(``provide-client-params``, ``before-parameter-build``: the idempotency token of TransactWriteItems), the
validation and serialization of the parameters (the client's serializer), ``before-call``, ``before-send`` (a
handler may answer instead), the answer as botocore converts it, ``before-parse`` (chalicelib's items from the wire:
adapters/dynamodb/wire.py), the client's parser, the modeled fields of errors, ``after-call`` (and
``after-call-error``), and the error class raised (``client.exceptions``), as PynamoDB and boto3 catch it.

S3's PutObject, GetObject and HeadObject (an upload's blob, a read's, a stat's: each was about a third botocore's
client side, 1.7 ms in all) take the same short pipeline, with what S3's calls add: the URL is path-style, the
bucket after the endpoint (what the endpoint rules answer for an endpoint that is an IP address, as the stack's
moto is), botocore's checksum of the body is resolved and applied as in its pipeline (``x-amz-checksum-crc32``),
the answer to GetObject is streamed, and the payload is declared unsigned (``X-Amz-Content-SHA256:
UNSIGNED-PAYLOAD``, as botocore declares it over TLS): nothing checks the signature of these calls.

Only while installed, and only for a client whose endpoint inprocess_aws answers in process and whose credentials
are the stack's key: DynamoDB's calls, and those three of S3 (a bucket by name, path-style or automatic
addressing, no accelerate or dual-stack endpoint); every other call (other S3 operations, other services, other
keys, moto's port) takes botocore's whole pipeline. tests/lakelet/test_inprocess_lean.py checks that the answers
and errors are those of the whole pipeline over moto's port. While a stack serves, a plain PutItem or PutObject
(an upload's two writes) is first offered to lakelet/stack/inprocess_direct.py, which answers it past these steps
too, or leaves it to them.
"""

from __future__ import annotations

import ipaddress
import threading
from collections.abc import Callable
from typing import Any
from urllib.parse import quote, urlsplit

from botocore.awsrequest import AWSPreparedRequest, AWSResponse, prepare_request_dict
from botocore.client import BaseClient
from botocore.endpoint import convert_to_response_dict
from botocore.httpchecksum import apply_request_checksum, resolve_checksum_context
from botocore.utils import get_current_datetime

from lakelet.stack import inprocess_aws
from lakelet.stack.inprocess_signing import unchecked_authorization

__all__ = ["counters", "install", "installed", "uninstall"]

#: Calls made through the short pipeline since the process started (tests read it).
counters = {"lean": 0}

_lock = threading.Lock()
# botocore's own call, taken before any install: what every other call (and one racing an uninstall) goes to.
_BOTOCORE_CALL: Callable[..., Any] = BaseClient._make_api_call
_original: list[Callable[..., Any]] = []
# The stack's access key id, and a number that changes with every install (a client's lane is decided per install).
_key: list[str] = []
_installs = [0]
_LANE = "_lakelet_lean_lane"
#: S3's operations that take the short pipeline (the others take botocore's whole one).
LEAN_S3 = frozenset({"PutObject", "GetObject", "HeadObject"})
# What may answer a call before the pipeline (lakelet/stack/inprocess_direct.py, while installed): the (http
# response, parsed answer), or None.
_direct: list[Callable[..., Any]] = []


def answer_first(direct: Callable[..., Any] | None) -> None:
    """Asks ``direct`` first for every call of the pipeline (None: no longer)."""
    with _lock:
        _direct[:] = [direct] if direct is not None else []


def install(access_key_id: str) -> None:
    with _lock:
        _key[:] = [access_key_id]
        _installs[0] += 1
        if not _original:
            _original.append(BaseClient._make_api_call)
            BaseClient._make_api_call = _make_api_call


def uninstall() -> None:
    with _lock:
        _key.clear()
        _installs[0] += 1
        if _original:
            BaseClient._make_api_call = _original.pop()


def installed() -> bool:
    return bool(_original)


def _make_api_call(client: BaseClient, operation_name: str, api_params: dict[str, Any]) -> Any:
    lane = client.__dict__.get(_LANE)
    if lane is None or lane[0] != _installs[0]:
        lane = client.__dict__[_LANE] = (_installs[0], *_in_process(client))
    if lane[1] is None or (lane[2] and not _lean_s3(operation_name, api_params)):
        return _BOTOCORE_CALL(client, operation_name, api_params)
    credentials = client._request_signer._credentials
    frozen = credentials.get_frozen_credentials() if credentials is not None else None
    if frozen is None or not _key or frozen.access_key != _key[0]:
        return _BOTOCORE_CALL(client, operation_name, api_params)
    return _lean_call(client, lane[1], lane[2], frozen, operation_name, api_params)


def _in_process(client: BaseClient) -> tuple[str | None, bool]:
    """The URL a client's calls are sent to when inprocess_aws answers them and the client is DynamoDB's or S3's
    with path-style URLs (else None), and whether it is S3's."""
    url: str | None = client.meta.endpoint_url
    service = client.meta.service_model.service_name
    if service not in ("dynamodb", "s3") or not url or not inprocess_aws.answers(url):
        return None, False
    if service == "s3" and not _path_style(client, url):
        return None, False
    return url.rstrip("/") + "/", service == "s3"


def _path_style(client: BaseClient, url: str) -> bool:
    """Whether botocore's endpoint rules put the bucket in the path for this client: path-style addressing, or
    automatic addressing of an endpoint that is an IP address; and no accelerate or dual-stack endpoint."""
    options = client.meta.config.s3 or {}
    if options.get("use_accelerate_endpoint") or options.get("use_dualstack_endpoint"):
        return False
    style = options.get("addressing_style") or "auto"
    if style == "path":
        return True
    if style != "auto":
        return False
    try:
        ipaddress.ip_address(urlsplit(url).hostname or "")
    except ValueError:
        return False
    return True


def _lean_s3(operation_name: str, api_params: dict[str, Any]) -> bool:
    bucket = api_params.get("Bucket")
    return operation_name in LEAN_S3 and isinstance(bucket, str) and bool(bucket) and not bucket.startswith("arn:")


def _lean_call(client: Any, url: str, s3: bool, frozen: Any, operation_name: str, api_params: dict[str, Any]) -> Any:
    counters["lean"] += 1
    operation_model = client._service_model.operation_model(operation_name)
    service_id = client._service_model.service_id.hyphenize()
    events = client.meta.events
    context: dict[str, Any] = {
        "client_region": client.meta.region_name,
        "client_config": client.meta.config,
        "has_streaming_input": operation_model.has_streaming_input,
        "auth_type": operation_model.resolved_auth_type,
        "unsigned_payload": operation_model.unsigned_payload,
        "auth_options": client._service_model.metadata.get("auth"),
    }
    direct = _direct[0](client, url, frozen, operation_model, api_params) if _direct else None
    if direct is not None:
        http, parsed_answer = direct
    else:
        http, parsed_answer = _pipeline(client, url, s3, frozen, operation_model, context, api_params)
    events.emit(
        f"after-call.{service_id}.{operation_name}",
        http_response=http,
        parsed=parsed_answer,
        model=operation_model,
        context=context,
    )
    if http.status_code >= 300:
        code = context.get("error_code_override") or parsed_answer.get("Error", {}).get("Code")
        raise client.exceptions.from_code(code)(parsed_answer, operation_name)
    return parsed_answer


def _pipeline(
    client: Any, url: str, s3: bool, frozen: Any, operation_model: Any, context: dict[str, Any], api_params: Any
) -> tuple[AWSResponse, dict[str, Any]]:
    """botocore's steps of a call that the lean pipeline keeps (see the module's docstring)."""
    operation_name = operation_model.name
    service_id = client._service_model.service_id.hyphenize()
    events = client.meta.events
    api_params = client._emit_api_params(api_params=api_params, operation_model=operation_model, context=context)
    request_dict = client._serializer.serialize_to_request(api_params, operation_model)
    if s3:
        # The path-style URL the endpoint rules give (botocore takes the bucket out of the operation's path).
        prepare_request_dict(request_dict, url + quote(api_params["Bucket"], safe=""), context=context)
        resolve_checksum_context(request_dict, operation_model, api_params)
    else:
        request_dict.update(url=url, context=context)
    _, answered = events.emit_until_response(
        f"before-call.{service_id}.{operation_name}",
        model=operation_model,
        params=request_dict,
        request_signer=client._request_signer,
        context=context,
    )
    if answered is not None:
        return answered  # type: ignore[no-any-return]
    if s3:
        apply_request_checksum(request_dict)
    try:
        return _send(client, service_id, operation_model, request_dict, frozen)
    except Exception as error:
        events.emit(f"after-call-error.{service_id}.{operation_name}", exception=error, context=context)
        raise


def _send(
    client: Any, service_id: str, operation_model: Any, request_dict: dict[str, Any], frozen: Any
) -> tuple[AWSResponse, dict[str, Any]]:
    """The request as the signer would leave it (a date, the key's scope, a signature nobody checks), answered in
    process; then the answer as botocore's endpoint parses it."""
    headers = dict(request_dict["headers"])
    now = get_current_datetime().strftime("%Y%m%dT%H%M%SZ")
    region = client.meta.region_name
    headers["X-Amz-Date"] = now
    if frozen.token:
        headers["X-Amz-Security-Token"] = frozen.token
    service = operation_model.service_model.signing_name
    if service == "s3":
        headers["X-Amz-Content-SHA256"] = "UNSIGNED-PAYLOAD"
    headers["Authorization"] = unchecked_authorization(f"{frozen.access_key}/{now[:8]}/{region}/{service}/aws4_request")
    body = request_dict["body"]
    request = AWSPreparedRequest(
        request_dict["method"],
        request_dict["url"],
        headers,
        body.encode() if isinstance(body, str) else body,
        operation_model.has_streaming_output,
    )
    sent = client.meta.events.emit(f"before-send.{service_id}.{operation_model.name}", request=request)
    http = next((response for _, response in sent if response is not None), None)
    if http is None:
        http = inprocess_aws.answer(request)
    return http, parsed(client, service_id, operation_model, http)


def parsed(client: Any, service_id: str, operation_model: Any, http: AWSResponse) -> dict[str, Any]:
    """The answer as botocore's endpoint parses it (``before-parse`` first)."""
    name = operation_model.name
    response_dict = convert_to_response_dict(http, operation_model)
    customized: dict[str, Any] = {}
    client.meta.events.emit(
        f"before-parse.{service_id}.{name}",
        operation_model=operation_model,
        response_dict=response_dict,
        customized_response_dict=customized,
    )
    endpoint = client._endpoint
    parser = endpoint._response_parser_factory.create_parser(operation_model.service_model.resolved_protocol)
    answer: dict[str, Any] = parser.parse(response_dict, operation_model.output_shape)
    answer.update(customized)
    if http.status_code >= 300:
        endpoint._add_modeled_error_fields(response_dict, answer, operation_model, parser)
    if "ResponseMetadata" in answer:
        answer["ResponseMetadata"]["RetryAttempts"] = 0
    return answer
