"""The process the stack's app runs in: the variables chalicelib.settings reads (pointing every AWS call at the
stack's moto server), setting and restoring them, the checkout's Chalice app, and the stack's KMS key.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
from collections.abc import MutableMapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chalice.app import Chalice
from chalice.config import Config

from lakelet.defaults import (
    DEFAULT_ACCESS_KEY_ID,
    DEFAULT_SECRET_ACCESS_KEY,
    LOCAL_IMPORT_BUCKET,
)

PROJECT_DIR = Path(__file__).resolve().parents[2]


@dataclass(frozen=True, slots=True)
class Credentials:
    """The admin key pair of the local stack (HTTP Basic username and password for the lakeFS API)."""

    access_key_id: str
    secret_access_key: str


def local_environment(
    moto_url: str,
    bucket: str,
    table_prefix: str,
    region: str,
    *,
    metrics: bool = False,
    keys: Credentials | None = None,
    s3_gateway_url: str | None = None,
) -> dict[str, str]:
    """The variables chalicelib.settings reads, pointing every AWS call at the moto server.

    ``s3_gateway_url``: where the S3 gateway will listen, when its port is known before it starts.

    The AWS key pair is the stack's own (``keys``: LocalStack passes the pair it generated,
    lakelet/stack/stack_keys.py, never the admin's lakeFS key): moto's port takes requests signed with it only
    (lakelet/stack/moto_guard.py), and a developer's real AWS credentials never reach a local call.
    """
    from chalicelib.settings import ENV_WEBHOOK_DESTINATIONS, LOCAL_WEBHOOK_DESTINATIONS

    keys = keys if keys is not None else Credentials(DEFAULT_ACCESS_KEY_ID, DEFAULT_SECRET_ACCESS_KEY)
    environment = {
        "LAKELET_AWS_ENDPOINT_URL": moto_url,
        "LAKELET_BUCKET": bucket,
        "LAKELET_TABLE_PREFIX": table_prefix,
        "AWS_REGION": region,
        "AWS_DEFAULT_REGION": region,
        "AWS_ACCESS_KEY_ID": keys.access_key_id,
        "AWS_SECRET_ACCESS_KEY": keys.secret_access_key,
        # Hooks are tried against servers on the developer's machine: loopback is a webhook destination here
        # (a deployment allows public addresses only unless it lists more; docs/hooks.md).
        ENV_WEBHOOK_DESTINATIONS: ",".join(LOCAL_WEBHOOK_DESTINATIONS),
    }
    # Imports may read the stack's own import source bucket, besides whatever the environment allows.
    allowed = os.environ.get("LAKELET_IMPORT_ALLOWED_LOCATIONS", "").strip().strip(",")
    local_source = f"s3://{LOCAL_IMPORT_BUCKET}/"
    if local_source not in allowed.split(","):
        allowed = f"{allowed},{local_source}" if allowed else local_source
    environment["LAKELET_IMPORT_ALLOWED_LOCATIONS"] = allowed
    # The app's EMF line per request (several KB) is for CloudWatch; in a terminal it would bury the request log,
    # so it is printed only when asked for (lakelet up --verbose).
    environment["POWERTOOLS_METRICS_DISABLED"] = "false" if metrics else "true"
    if s3_gateway_url:
        # The Iceberg catalog hands the gateway to engines as the tables' s3.endpoint (docs/iceberg.md).
        environment["LAKELET_ICEBERG_S3_ENDPOINT"] = s3_gateway_url
    return environment


def apply_environ(environ: MutableMapping[str, str], values: dict[str, str]) -> dict[str, str | None]:
    """Sets ``values`` in ``environ`` and returns what to give :func:`restore_environ` to undo it."""
    saved = {name: environ.get(name) for name in values}
    # A session token or profile left over from real AWS work must not ride along with the stack's keys.
    for name in ("AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN", "AWS_PROFILE"):
        saved.setdefault(name, environ.get(name))
        environ.pop(name, None)
    environ.update(values)
    forget_default_session()
    return saved


def forget_default_session() -> None:
    # boto3's default session keeps the credentials it first resolved: clients built after the environment
    # changed would still sign with the old keys, which the stack's moto refuses (lakelet/stack/moto_guard.py).
    import boto3

    from chalicelib.adapters.dynamodb.models import model_set

    boto3.DEFAULT_SESSION = None
    # PynamoDB's models likewise: model_set keeps one set per table names, region and endpoint, and each set's
    # connection keeps the credentials it first resolved. A later stack whose moto got a port an earlier stack of
    # this process had (ports are reused) would find that set and sign with the earlier stack's keys.
    model_set.cache_clear()


def restore_environ(environ: MutableMapping[str, str], saved: dict[str, str | None]) -> None:
    for name, value in saved.items():
        if value is None:
            environ.pop(name, None)
        else:
            environ[name] = value


def chalice_config(project_dir: Path) -> Config:
    """The dev stage of .chalice/config.json (timeout, memory), so local runs under the deployed limits."""
    config_file = project_dir / ".chalice" / "config.json"
    from_disk: dict[str, Any] = json.loads(config_file.read_text()) if config_file.is_file() else {}
    return Config(chalice_stage="dev", config_from_disk=from_disk)


def load_app(project_dir: Path = PROJECT_DIR) -> Chalice:
    """Import ``app.py`` of the Lakelet checkout (it is not an installed module) and return its Chalice app."""
    root = str(project_dir)
    if root not in sys.path:
        sys.path.insert(0, root)
    module = importlib.import_module("app")
    app = getattr(module, "app", None)
    if not isinstance(app, Chalice):
        raise RuntimeError(f"{project_dir / 'app.py'} defines no Chalice app named 'app'")
    return app


LOCAL_KMS_ALIAS = "alias/lakelet-local-secrets"


def local_kms_key(kms: Any) -> str:
    """The id of the key that seals the stack's secrets: the one an earlier run of a persistent stack created
    (found by its alias: the secrets stored with it are sealed under it), else a new one."""
    from chalicelib.adapters.kms import create_local_key

    try:
        return str(kms.describe_key(KeyId=LOCAL_KMS_ALIAS)["KeyMetadata"]["KeyId"])
    except kms.exceptions.NotFoundException:
        pass
    key_id = create_local_key(kms)
    kms.create_alias(AliasName=LOCAL_KMS_ALIAS, TargetKeyId=key_id)
    return key_id


LOCAL_ICEBERG_ROLE = "lakelet-local-iceberg-data"


def local_iceberg_role(iam: Any) -> str:
    """The ARN of the role the Iceberg catalog assumes to vend credentials (infra/ deploys its twin): the one an
    earlier run of a persistent stack created, else a new one. moto enforces no IAM; the guard in front of it
    enforces each session's policy (lakelet/stack/session_keys.py)."""
    try:
        return str(iam.get_role(RoleName=LOCAL_ICEBERG_ROLE)["Role"]["Arn"])
    except iam.exceptions.NoSuchEntityException:
        pass
    trust = {
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Principal": {"AWS": "*"}, "Action": "sts:AssumeRole"}],
    }
    role = iam.create_role(RoleName=LOCAL_ICEBERG_ROLE, AssumeRolePolicyDocument=json.dumps(trust))
    return str(role["Role"]["Arn"])


def local_aws_ids(region: str, moto_url: str) -> dict[str, str]:
    """The settings' AWS ids the stack provisions on its moto: the KMS key of secrets and the Iceberg role."""
    import boto3

    from chalicelib.settings import ENV_ICEBERG_DATA_ROLE_ARN, ENV_KMS_KEY_ID

    kms = boto3.client("kms", region_name=region, endpoint_url=moto_url)
    iam = boto3.client("iam", region_name=region, endpoint_url=moto_url)
    return {ENV_KMS_KEY_ID: local_kms_key(kms), ENV_ICEBERG_DATA_ROLE_ARN: local_iceberg_role(iam)}
