"""The answers of the stack's own PutItem and PutObject past the WSGI chain (inprocess_direct.py) as botocore's
parsers read them, for the answers where that is plain: botocore's shape-driven parser walks every member of the
output shape for an answer whose parse is the JSON itself (a PutItem's consumed capacity and old item without
binary values, as adapters/dynamodb/wire.py reads items) or its headers as given (a PutObject's ETag and
checksum). Any other answer returns None, and botocore's parser reads it. tests/lakelet/test_inprocess_direct_puts.py
compares the answers with the lean pipeline's."""

from __future__ import annotations

import json
from typing import Any

from botocore.awsrequest import AWSResponse

from chalicelib.adapters.dynamodb.wire import BINARY_MARKERS

__all__ = ["parsed"]

_ANSWER_MEMBERS = frozenset({"Attributes", "ConsumedCapacity"})
_CAPACITY_MEMBERS = frozenset({"TableName", "CapacityUnits"})


def parsed(service: str, operation_model: Any, http: AWSResponse) -> dict[str, Any] | None:
    """The parsed answer of a 200 answer of one of the two, or None when botocore's parser should read it."""
    if http.status_code != 200:
        return None
    answer = _json_answer(http.content) if service == "dynamodb" else _header_answer(operation_model, http)
    if answer is not None:
        answer["ResponseMetadata"] = _metadata(http)
    return answer


def _json_answer(body: bytes) -> dict[str, Any] | None:
    """A PutItem's answer as botocore's parser reads it, for answers where that is the JSON itself (as
    adapters/dynamodb/wire.py reads items): the old item without binary values, the table's consumed capacity."""
    if any(marker in body for marker in BINARY_MARKERS):
        return None
    try:
        answer = json.loads(body)
    except ValueError:
        return None
    if type(answer) is not dict or not _ANSWER_MEMBERS.issuperset(answer):
        return None
    capacity = answer.get("ConsumedCapacity", {"CapacityUnits": 1.0})
    if type(capacity) is not dict or not _CAPACITY_MEMBERS.issuperset(capacity):
        return None
    if type(capacity.get("CapacityUnits")) is not float or type(answer.get("Attributes", {})) is not dict:
        return None
    return answer


def _header_answer(operation_model: Any, http: AWSResponse) -> dict[str, Any] | None:
    """An answer of headers alone (PutObject's) as botocore's parser reads it, when every modeled header it holds
    is a plain string."""
    if http.content:
        return None
    members = _header_members(operation_model.output_shape)
    if members is None:
        return None
    answer = {}
    for name, value in http.headers.items():
        member = members.get(name.lower())
        if member is not None:
            if not member[1]:
                return None
            answer[member[0]] = value
    return answer


_HEADER_MEMBERS: dict[Any, dict[str, tuple[str, bool]] | None] = {}


def _header_members(shape: Any) -> dict[str, tuple[str, bool]] | None:
    """The output shape's members by header name, each with whether it is a plain string; None when a member is
    read from anywhere else."""
    if shape not in _HEADER_MEMBERS:
        members: dict[str, tuple[str, bool]] | None = {}
        for name, member in shape.members.items():
            if members is None or member.serialization.get("location") != "header":
                members = None
                continue
            plain = member.type_name == "string" and not member.serialization.get("jsonvalue")
            members[member.serialization["name"].lower()] = (name, plain)
        _HEADER_MEMBERS[shape] = members
    return _HEADER_MEMBERS[shape]


def _metadata(http: AWSResponse) -> dict[str, Any]:
    """ResponseMetadata as botocore's JSON and REST-XML parsers and the lean pipeline make it."""
    headers = http.headers
    metadata: dict[str, Any] = {}
    if "x-amzn-requestid" in headers:
        metadata["RequestId"] = headers["x-amzn-requestid"]
    elif "x-amz-request-id" in headers:
        metadata["RequestId"] = headers["x-amz-request-id"]
        metadata["HostId"] = headers.get("x-amz-id-2", "")
    metadata["HTTPStatusCode"] = http.status_code
    metadata["HTTPHeaders"] = {name.lower(): value for name, value in headers.items()}
    metadata["RetryAttempts"] = 0
    return metadata
