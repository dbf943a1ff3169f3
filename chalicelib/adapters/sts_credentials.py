"""The Iceberg catalog's credential vendor on STS: AssumeRole of the role the deployment names
(LAKELET_ICEBERG_DATA_ROLE_ARN), narrowed by an inline session policy to one table's files
(chalicelib/iceberg/credentials.py). Locally, moto's STS mints them and the stack's moto accepts them
(lakelet/stack/moto_guard.py, which also enforces the session policy, as moto does not)."""

from __future__ import annotations

import json
from typing import Any

from chalicelib.graveler import errors
from chalicelib.iceberg.ports import Vended

__all__ = ["StsVendor", "sts_vendor"]


def sts_vendor(role_arn: str, region: str, endpoint_url: str | None) -> StsVendor:
    """The vendor of the deployment's role (LAKELET_ICEBERG_DATA_ROLE_ARN), on boto3's STS client."""
    import boto3

    sts = boto3.client("sts", region_name=region, endpoint_url=endpoint_url)
    return StsVendor(sts, role_arn, region, endpoint_url)


class StsVendor:
    def __init__(
        self, sts: Any, role_arn: str, region: str, endpoint_url: str | None, duration_seconds: int = 3600
    ) -> None:
        self._sts = sts
        self._role_arn = role_arn
        self._region = region
        self._endpoint_url = endpoint_url
        self._duration = duration_seconds

    def vend(self, policy: dict[str, Any], session_name: str) -> Vended:
        try:
            answer = self._sts.assume_role(
                RoleArn=self._role_arn,
                RoleSessionName=session_name[:64],
                Policy=json.dumps(policy, separators=(",", ":")),
                DurationSeconds=self._duration,
            )
        except Exception as e:  # botocore's ClientError and BotoCoreError: the store's side failed
            raise errors.StorageError(f"STS AssumeRole of {self._role_arn} failed: {e}") from e
        minted = answer["Credentials"]
        return Vended(
            str(minted["AccessKeyId"]),
            str(minted["SecretAccessKey"]),
            str(minted["SessionToken"]),
            int(minted["Expiration"].timestamp() * 1000),
        )

    def client_config(self) -> dict[str, str]:
        config = {"client.region": self._region, "s3.region": self._region}
        if self._endpoint_url:
            config |= {"s3.endpoint": self._endpoint_url, "s3.path-style-access": "true"}
        return config
