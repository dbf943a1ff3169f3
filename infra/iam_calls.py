"""What IAM a function needs for the AWS calls it makes: a recorder of every botocore call (the adapters' boto3
clients and PynamoDB's connections alike, and presigned URLs, which act with the signer's permissions), each
turned into the IAM actions and resource ARNs AWS authorizes it with.

The recorder wraps botocore's step that emits ``provide-client-params`` (BaseClient._emit_api_params), which
every API call and every presigned URL of every client goes through, with the operation's own parameters
(Bucket, Key, TableName, stateMachineArn, ...). Calls are attributed to the function named by
``Recorder.as_function`` in the current thread; calls outside any function (the test's own setup, moto's
interpreter) are not recorded.

The operation -> action table follows the Service Authorization Reference: HeadObject is s3:GetObject, a listing
is s3:ListBucket on the bucket (with its s3:prefix), multipart parts are s3:PutObject, CopyObject reads its source,
a DynamoDB transaction needs the item action of each item on its table, an EMR Serverless job run passes its
execution role (iam:PassRole) and tags what it creates. An operation missing from the table is an error, not a
guess: the test then names it.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from botocore.client import BaseClient

ACCOUNT = "123456789012"


@dataclass(frozen=True, slots=True, order=True)
class Needed:
    """One IAM authorization a call needs: the action, on the resource, with these condition keys."""

    action: str
    resource: str
    context: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True, order=True)
class Call:
    """One recorded call: which function made it, the operation, and what it needs."""

    function: str
    operation: str  # "s3.HeadObject"
    needs: tuple[Needed, ...]


class UnmappedOperation(LookupError):
    """An AWS operation the recorder has no IAM mapping for."""


def _s3_object(bucket: str, key: str) -> str:
    return f"arn:aws:s3:::{bucket}/{key}"


def _s3_bucket(bucket: str) -> str:
    return f"arn:aws:s3:::{bucket}"


_S3_OBJECT_ACTIONS = {
    "GetObject": "s3:GetObject",
    "HeadObject": "s3:GetObject",
    "PutObject": "s3:PutObject",
    "DeleteObject": "s3:DeleteObject",
    "CreateMultipartUpload": "s3:PutObject",
    "UploadPart": "s3:PutObject",
    "CompleteMultipartUpload": "s3:PutObject",
    "AbortMultipartUpload": "s3:AbortMultipartUpload",
    "ListParts": "s3:ListMultipartUploadParts",
    "GetObjectTagging": "s3:GetObjectTagging",
    "GetObjectAttributes": "s3:GetObject",
}
_S3_BUCKET_ACTIONS = {
    "HeadBucket": "s3:ListBucket",
    "GetBucketLocation": "s3:GetBucketLocation",
    "ListMultipartUploads": "s3:ListBucketMultipartUploads",
}


def _copy_source(params: dict[str, Any]) -> str:
    source = params["CopySource"]
    if isinstance(source, dict):
        return _s3_object(source["Bucket"], source["Key"])
    bucket, _, key = str(source).lstrip("/").partition("/")
    return _s3_object(bucket, key.split("?versionId=", 1)[0])


def _s3(operation: str, params: dict[str, Any], region: str) -> list[Needed]:
    bucket = params.get("Bucket", "")
    if operation in _S3_OBJECT_ACTIONS:
        return [Needed(_S3_OBJECT_ACTIONS[operation], _s3_object(bucket, params["Key"]))]
    if operation in _S3_BUCKET_ACTIONS:
        return [Needed(_S3_BUCKET_ACTIONS[operation], _s3_bucket(bucket))]
    if operation in ("ListObjectsV2", "ListObjects"):
        return [Needed("s3:ListBucket", _s3_bucket(bucket), (("s3:prefix", params.get("Prefix", "")),))]
    if operation == "DeleteObjects":
        return [Needed("s3:DeleteObject", _s3_object(bucket, o["Key"])) for o in params["Delete"]["Objects"]]
    if operation == "CopyObject":
        return [
            Needed("s3:GetObject", _copy_source(params)),
            Needed("s3:PutObject", _s3_object(bucket, params["Key"])),
        ]
    if operation == "UploadPartCopy":
        return [
            Needed("s3:GetObject", _copy_source(params)),
            Needed("s3:PutObject", _s3_object(bucket, params["Key"])),
        ]
    raise UnmappedOperation(f"s3.{operation}")


def _table(name: str, region: str) -> str:
    if name.startswith("arn:"):
        return name
    return f"arn:aws:dynamodb:{region}:{ACCOUNT}:table/{name}"


_DYNAMODB_ITEM_ACTIONS = {
    "GetItem",
    "PutItem",
    "UpdateItem",
    "DeleteItem",
    "Query",
    "Scan",
    "DescribeTable",
}
_TRANSACT_ITEMS = {
    "Put": "PutItem",
    "Update": "UpdateItem",
    "Delete": "DeleteItem",
    "ConditionCheck": "ConditionCheckItem",
}


def _dynamodb(operation: str, params: dict[str, Any], region: str) -> list[Needed]:
    if operation in _DYNAMODB_ITEM_ACTIONS:
        return [Needed(f"dynamodb:{operation}", _table(params["TableName"], region))]
    if operation == "BatchGetItem":
        return [Needed("dynamodb:BatchGetItem", _table(t, region)) for t in params["RequestItems"]]
    if operation == "BatchWriteItem":
        # The batch action itself, and (as a first deployment would want to be sure of) the item actions it
        # carries: a role granting only BatchWriteItem is not what the code was written against.
        out = []
        for name, requests in params["RequestItems"].items():
            out.append(Needed("dynamodb:BatchWriteItem", _table(name, region)))
            for request in requests:
                out.append(
                    Needed(
                        "dynamodb:PutItem" if "PutRequest" in request else "dynamodb:DeleteItem", _table(name, region)
                    )
                )
        return out
    if operation == "TransactWriteItems":
        # No action of its own: each item needs its item action on its table.
        return [
            Needed(f"dynamodb:{_TRANSACT_ITEMS[kind]}", _table(body["TableName"], region))
            for item in params["TransactItems"]
            for kind, body in item.items()
        ]
    if operation == "TransactGetItems":
        return [Needed("dynamodb:GetItem", _table(i["Get"]["TableName"], region)) for i in params["TransactItems"]]
    raise UnmappedOperation(f"dynamodb.{operation}")


def _kms(default_key: str) -> Callable[[str, dict[str, Any], str], list[Needed]]:
    def needs(operation: str, params: dict[str, Any], region: str) -> list[Needed]:
        if operation not in ("Encrypt", "Decrypt", "GenerateDataKey", "DescribeKey", "ReEncrypt"):
            raise UnmappedOperation(f"kms.{operation}")
        key = str(params.get("KeyId") or default_key)  # Decrypt: the key is the one in the ciphertext
        if not key.startswith("arn:"):
            key = f"arn:aws:kms:{region}:{ACCOUNT}:key/{key}"
        return [Needed(f"kms:{operation}", key)]

    return needs


def _states(operation: str, params: dict[str, Any], region: str) -> list[Needed]:
    if operation == "StartExecution":
        return [Needed("states:StartExecution", params["stateMachineArn"])]
    if operation in ("DescribeExecution", "StopExecution", "GetExecutionHistory"):
        return [Needed(f"states:{operation}", params["executionArn"])]
    raise UnmappedOperation(f"stepfunctions.{operation}")


def _emr_serverless(operation: str, params: dict[str, Any], region: str) -> list[Needed]:
    application = f"arn:aws:emr-serverless:{region}:{ACCOUNT}:/applications/{params.get('applicationId', '')}"
    if operation == "StartJobRun":
        out = [
            Needed("emr-serverless:StartJobRun", application),
            Needed(
                "iam:PassRole",
                params["executionRoleArn"],
                (("iam:PassedToService", "emr-serverless.amazonaws.com"),),
            ),
        ]
        if params.get("tags"):
            out.append(Needed("emr-serverless:TagResource", application + "/jobruns/new-job-run"))
        return out
    if operation in ("GetJobRun", "CancelJobRun"):
        return [Needed(f"emr-serverless:{operation}", f"{application}/jobruns/{params['jobRunId']}")]
    if operation == "GetApplication":
        return [Needed("emr-serverless:GetApplication", application)]
    raise UnmappedOperation(f"emr-serverless.{operation}")


def _lambda(operation: str, params: dict[str, Any], region: str) -> list[Needed]:
    if operation != "Invoke":
        raise UnmappedOperation(f"lambda.{operation}")
    name = str(params["FunctionName"])
    if not name.startswith("arn:"):
        name = f"arn:aws:lambda:{region}:{ACCOUNT}:function:{name}"
    return [Needed("lambda:InvokeFunction", name)]


def _sts(operation: str, params: dict[str, Any], region: str) -> list[Needed]:
    if operation == "GetCallerIdentity":
        return []  # needs no permission
    raise UnmappedOperation(f"sts.{operation}")


def needs_of(service: str, operation: str, params: dict[str, Any], region: str, kms_key: str = "") -> list[Needed]:
    """The IAM authorizations an operation with these parameters needs."""
    mappers: dict[str, Callable[[str, dict[str, Any], str], list[Needed]]] = {
        "s3": _s3,
        "dynamodb": _dynamodb,
        "kms": _kms(kms_key),
        "stepfunctions": _states,
        "emr-serverless": _emr_serverless,
        "lambda": _lambda,
        "sts": _sts,
    }
    mapper = mappers.get(service)
    if mapper is None:
        raise UnmappedOperation(f"{service}.{operation}")
    return mapper(operation, params, region)


@dataclass
class Recorder:
    """Records the calls of every botocore client created while installed, per function (``as_function``)."""

    kms_key: str = ""
    calls: list[Call] = field(default_factory=list)
    unmapped: list[str] = field(default_factory=list)
    _local: threading.local = field(default_factory=threading.local)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @contextlib.contextmanager
    def as_function(self, name: str | None) -> Iterator[None]:
        """Attributes the calls this thread makes meanwhile to the function ``name`` (None: to no function)."""
        previous = getattr(self._local, "function", None)
        self._local.function = name
        try:
            yield
        finally:
            self._local.function = previous

    def current(self) -> str | None:
        """The function this thread's calls are attributed to."""
        return getattr(self._local, "function", None)

    def wrap(self, name: str, handler: Callable[..., Any]) -> Callable[..., Any]:
        """``handler`` with its calls attributed to ``name`` (for handlers another thread calls)."""

        def recorded(*args: Any, **kwargs: Any) -> Any:
            with self.as_function(name):
                return handler(*args, **kwargs)

        return recorded

    def _record(self, params: dict[str, Any], model: Any, context: Any = None, **_: Any) -> None:
        function = getattr(self._local, "function", None)
        if function is None:
            return
        service = model.service_model.service_name
        region = (context or {}).get("client_region") or "us-east-1"
        try:
            needs = needs_of(service, model.name, params, region, self.kms_key)
        except UnmappedOperation as e:
            with self._lock:
                self.unmapped.append(f"{function}: {e}")
            return
        with self._lock:
            self.calls.append(Call(function, f"{service}.{model.name}", tuple(needs)))

    @contextlib.contextmanager
    def installed(self) -> Iterator[Recorder]:
        """Every botocore client (made before or meanwhile) reports its calls here: the hook is the method that
        emits ``provide-client-params``, which every API call and every presigned URL goes through."""
        original = BaseClient._emit_api_params
        recorder = self

        def emit_api_params(client: Any, api_params: dict[str, Any], operation_model: Any, context: Any) -> Any:
            params = original(client, api_params, operation_model, context)
            recorder._record(params, operation_model, {"client_region": client.meta.region_name})
            return params

        BaseClient._emit_api_params = emit_api_params
        try:
            yield self
        finally:
            BaseClient._emit_api_params = original
