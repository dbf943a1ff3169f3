"""``lakelet local export DIR``: a data directory in a form no moto version owns (its import: export_import.py).

A data directory holds pickles of moto's backends (lakelet/persistence/snapshot.py), which only the moto version
that wrote them can read. An export holds what the app stored through AWS's own APIs, in AWS's own wire formats,
so any later Lakelet reads it back through the same APIs:

    DIR/EXPORT.json             {"kind": "lakelet-export", "format": 1, "written_by": {"lakelet", "moto"}, ...}
    DIR/dynamodb/<table>.jsonl  every item of each of the app's tables (repositories, branches, tags, commits,
                                staging, auth), one per line in DynamoDB JSON (Scan's answer; binary as base64);
                                <table> is the name without the stack's prefix
    DIR/objects.jsonl           one line per S3 object: bucket, key, file, size, ETag, content type, user
                                metadata, and the part sizes of a multipart upload (so its ETag comes back equal)
    DIR/objects/<n>             the objects' bytes (plain files named by a number)
    DIR/secrets.jsonl           the values sealed with the stack's KMS key, in clear: KMS keys cannot leave KMS,
                                so an import seals them again under the new stack's key

Repositories, refs, commits, metaranges and ranges (objects under each namespace's _lakefs/), staged entries,
objects, users, groups, policies, credentials, GC rules and branch protection all live in those tables and
buckets. Step Functions executions do not cross: a workflow that was running when the stack stopped is already
failed on restart (lakelet/persistence/workflows.py), and finished ones leave their results in the tables.
The export is as private as the data directory (0700 / 0600): it holds every secret in clear.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import secrets as random_secrets
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

EXPORT_KIND = "lakelet-export"
EXPORT_FORMAT = 1
MANIFEST = "EXPORT.json"
BATCH_WRITE = 25  # DynamoDB's BatchWriteItem limit
_CREDENTIAL_PK = "cred#"  # the auth table's rows (chalicelib/adapters/dynamodb/auth.py)
_SERVER_KEY_PK = "serverkey#"


class ExportError(Exception):
    """An export or import that cannot be done; the message is one line that says why and what to do."""


@dataclass(frozen=True, slots=True)
class Endpoint:
    """Where a stack's AWS stand-in answers, with the key pair its guard takes (lakelet/stack/moto_guard.py)."""

    moto_url: str
    access_key_id: str
    secret_access_key: str
    region: str
    table_prefix: str

    def client(self, service: str) -> Any:
        import boto3
        from botocore.config import Config

        return boto3.client(
            service,
            endpoint_url=self.moto_url,
            region_name=self.region,
            aws_access_key_id=self.access_key_id,
            aws_secret_access_key=self.secret_access_key,
            config=Config(retries={"max_attempts": 5, "mode": "standard"}, s3={"addressing_style": "path"}),
        )


@dataclass(slots=True)
class Counts:
    items: dict[str, int] = field(default_factory=dict)
    objects: int = 0
    bytes: int = 0
    secrets: int = 0
    etags_changed: list[str] = field(default_factory=list)

    def summary(self) -> str:
        tables = ", ".join(f"{n} {t}" for t, n in sorted(self.items.items()))
        return (
            f"{sum(self.items.values())} items ({tables}), {self.objects} objects ({self.bytes} bytes), "
            f"{self.secrets} sealed secrets"
            + (
                f"; {len(self.etags_changed)} multipart objects have a new S3 ETag (same bytes): "
                f"{', '.join(self.etags_changed[:3])}"
                if self.etags_changed
                else ""
            )
        )


# -- DynamoDB JSON on disk: Scan's answer, with binary values as base64 (as DynamoDB's own exports write them) --


def _to_json(value: dict[str, Any]) -> dict[str, Any]:
    ((kind, inner),) = value.items()
    if kind == "B":
        return {"B": base64.b64encode(inner).decode("ascii")}
    if kind == "BS":
        return {"BS": [base64.b64encode(b).decode("ascii") for b in inner]}
    if kind == "M":
        return {"M": {k: _to_json(v) for k, v in inner.items()}}
    if kind == "L":
        return {"L": [_to_json(v) for v in inner]}
    return {kind: inner}


def from_json(value: dict[str, Any]) -> dict[str, Any]:
    ((kind, inner),) = value.items()
    if kind == "B":
        return {"B": base64.b64decode(inner)}
    if kind == "BS":
        return {"BS": [base64.b64decode(b) for b in inner]}
    if kind == "M":
        return {"M": {k: from_json(v) for k, v in inner.items()}}
    if kind == "L":
        return {"L": [from_json(v) for v in inner]}
    return {kind: inner}


def _private_file(path: Path) -> Any:
    return os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w", encoding="utf-8")


def _lakelet_version() -> str:
    try:
        return version("lakelet")
    except PackageNotFoundError:
        return "unknown"


# -- the sealed values -----------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Sealed:
    """One sealed attribute of an auth row, and how to open and close it with the app's own cipher helpers."""

    attribute: str
    unseal: Callable[[Any, str], bytes]
    seal: Callable[[Any, bytes], str]


def sealed_field(item: dict[str, Any]) -> Sealed | None:
    from chalicelib.auth import keys, secrets

    pk = str(item.get("pk", {}).get("S", ""))
    if pk.startswith(_CREDENTIAL_PK) and "encrypted_secret" in item:
        key_id = pk[len(_CREDENTIAL_PK) :]
        return Sealed(
            "encrypted_secret",
            lambda cipher, stored: secrets.unseal(cipher, key_id, stored).encode("utf-8"),
            lambda cipher, plain: secrets.seal(cipher, key_id, plain.decode("utf-8")),
        )
    if pk.startswith(_SERVER_KEY_PK) and "sealed_key" in item:
        # The context ServerKeys seals its keys under (chalicelib/auth/keys.py).
        context = {"purpose": keys._CONTEXT_PURPOSE, "name": pk[len(_SERVER_KEY_PK) :]}
        return Sealed(
            "sealed_key",
            lambda cipher, stored: keys._unseal(cipher, stored, context),
            lambda cipher, plain: keys._seal(cipher, plain, context),
        )
    return None


def sealing_cipher(endpoint: Endpoint) -> Any:
    from chalicelib.adapters.kms import KmsCipher
    from lakelet.stack.app_environment import LOCAL_KMS_ALIAS

    kms = endpoint.client("kms")
    try:
        key_id = kms.describe_key(KeyId=LOCAL_KMS_ALIAS)["KeyMetadata"]["KeyId"]
    except kms.exceptions.NotFoundException:
        raise ExportError(f"the stack has no KMS key {LOCAL_KMS_ALIAS}: it is not a Lakelet stack") from None
    return KmsCipher(kms, key_id)


@contextmanager
def stopped_stack_aws(data_dir: Path, region: str, table_prefix: str) -> Iterator[Endpoint]:
    """The AWS stand-in of a stopped stack's data directory, and nothing else: no provisioning, no admin key
    written, so reading it for an export changes nothing in it. Signed with a key pair made for the occasion."""
    from lakelet.defaults import LOCAL_HOST
    from lakelet.persistence import Persistence
    from lakelet.persistence.datadir import read_format
    from lakelet.persistence.middleware import WrappedMotoServer, WsgiApp
    from lakelet.stack.moto_guard import MotoGuard

    if not data_dir.is_dir() or read_format(data_dir) is None:
        raise ExportError(f"{data_dir} holds no Lakelet data: name the stack's directory with --data-dir")
    keys = ("AKIAEXPORT" + random_secrets.token_hex(5).upper(), random_secrets.token_urlsafe(30))
    persistence = Persistence(data_dir)
    persistence.open()
    try:

        def guarded(app: WsgiApp) -> WsgiApp:
            return MotoGuard(persistence.wrap(app), *keys)

        server = WrappedMotoServer(guarded, LOCAL_HOST, 0)
        server.start()
        try:
            _, port = server.get_host_and_port()
            yield Endpoint(f"http://{LOCAL_HOST}:{port}", keys[0], keys[1], region, table_prefix)
        finally:
            server.stop()
            inner = getattr(server, "_server", None)
            if inner is not None:
                inner.server_close()
    finally:
        persistence.close()


# -- export ----------------------------------------------------------------------------------------------------


def _scan(dynamodb: Any, table: str) -> Iterator[dict[str, Any]]:
    start: dict[str, Any] | None = None
    while True:
        page = dynamodb.scan(TableName=table, ConsistentRead=True, **({"ExclusiveStartKey": start} if start else {}))
        yield from page.get("Items", [])
        start = page.get("LastEvaluatedKey")
        if not start:
            return


_MIB = 1024 * 1024


def _multipart_etag(body: bytes, parts: list[int]) -> str:
    digests, offset = b"", 0
    for size in parts:
        digests += hashlib.md5(body[offset : offset + size]).digest()
        offset += size
    return f'"{hashlib.md5(digests).hexdigest()}-{len(parts)}"'


def _part_sizes(s3: Any, bucket: str, key: str, etag: str, body: bytes) -> list[int] | None:
    """The part sizes of a multipart upload (its ETag ends in -N), so the import can give it the same ETag:
    what HEAD ?partNumber= says (AWS), else the uniform part size that gives this ETag (moto answers no part
    sizes): a whole number of MiB, as uploaders use, or the size split evenly. None when neither matches."""
    plain = etag.strip('"')
    if "-" not in plain:
        return None
    count = int(plain.rsplit("-", 1)[1])
    try:
        told = [int(s3.head_object(Bucket=bucket, Key=key, PartNumber=n)["ContentLength"]) for n in range(1, count + 1)]
    except Exception:  # noqa: BLE001 - an S3 without part lookups: fall back to the search below
        told = []
    if told and all(told) and sum(told) == len(body) and _multipart_etag(body, told) == etag:
        return told
    total = len(body)
    candidates = {-(-total // count)} | {m * _MIB for m in range(1, total // _MIB + 2)}
    for size in sorted(candidates):
        if size <= 0 or -(-total // size) != count:
            continue
        parts = [size] * (count - 1) + [total - size * (count - 1)]
        if parts[-1] > 0 and _multipart_etag(body, parts) == etag:
            return parts
    return None


def export_stack(endpoint: Endpoint, target: Path) -> Counts:
    """Write everything the stack at ``endpoint`` holds into the new or empty directory ``target``."""
    if target.exists() and any(target.iterdir()):
        raise ExportError(f"{target} is not empty: export into a new directory")
    target.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(target, 0o700)
    (target / "dynamodb").mkdir(mode=0o700)
    (target / "objects").mkdir(mode=0o700)
    counts = Counts()
    dynamodb = endpoint.client("dynamodb")
    cipher = sealing_cipher(endpoint)
    tables = [
        t
        for page in dynamodb.get_paginator("list_tables").paginate()
        for t in page["TableNames"]
        if t.startswith(endpoint.table_prefix)
    ]
    with _private_file(target / "secrets.jsonl") as secrets_out:
        for table in sorted(tables):
            short = table[len(endpoint.table_prefix) :]
            counts.items[short] = 0
            with _private_file(target / "dynamodb" / f"{short}.jsonl") as out:
                for item in _scan(dynamodb, table):
                    sealed = sealed_field(item)
                    if sealed is not None:
                        plain = sealed.unseal(cipher, str(item[sealed.attribute]["S"]))
                        secrets_out.write(
                            json.dumps(
                                {
                                    "table": short,
                                    "key": {"pk": item["pk"], "sk": item["sk"]},
                                    "attribute": sealed.attribute,
                                    "value": base64.b64encode(plain).decode("ascii"),
                                }
                            )
                            + "\n"
                        )
                        counts.secrets += 1
                    out.write(json.dumps(_to_json({"M": item})["M"], sort_keys=True) + "\n")
                    counts.items[short] += 1
    s3 = endpoint.client("s3")
    buckets = sorted(b["Name"] for b in s3.list_buckets().get("Buckets", []))
    with _private_file(target / "objects.jsonl") as out:
        for bucket in buckets:
            for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket):
                for listed in page.get("Contents", []):
                    key = listed["Key"]
                    answer = s3.get_object(Bucket=bucket, Key=key)
                    body = answer["Body"].read()
                    name = str(counts.objects)
                    path = target / "objects" / name
                    with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as data:
                        data.write(body)
                    etag = str(answer["ETag"])
                    out.write(
                        json.dumps(
                            {
                                "bucket": bucket,
                                "key": key,
                                "file": name,
                                "size": len(body),
                                "etag": etag,
                                "content_type": answer.get("ContentType") or "",
                                "metadata": answer.get("Metadata") or {},
                                "parts": _part_sizes(s3, bucket, key, etag, body),
                            }
                        )
                        + "\n"
                    )
                    counts.objects += 1
                    counts.bytes += len(body)
    from moto import __version__ as moto_version

    manifest = {
        "kind": EXPORT_KIND,
        "format": EXPORT_FORMAT,
        "written_by": {"lakelet": _lakelet_version(), "moto": moto_version},
        "region": endpoint.region,
        "tables": sorted(counts.items),
        "buckets": sorted(buckets),
        "counts": {"items": counts.items, "objects": counts.objects, "bytes": counts.bytes, "secrets": counts.secrets},
    }
    # Last: a directory without its manifest is an export that did not finish, and import refuses it.
    with _private_file(target / MANIFEST) as out:
        json.dump(manifest, out, indent=2, sort_keys=True)
    return counts


# -- import ----------------------------------------------------------------------------------------------------
