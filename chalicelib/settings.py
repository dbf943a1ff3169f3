"""The one place that reads os.environ: every knob of a Lakelet deployment, read once into a frozen object.

Explicit arguments win over the environment: ``Settings.from_env(environ)`` takes any mapping, and tests build
``Settings(...)`` directly. Stages set these variables in .chalice/config.json; resource names come from infra/.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

ENV_REGION = "AWS_REGION"
ENV_DEFAULT_REGION = "AWS_DEFAULT_REGION"
ENV_ENDPOINT_URL = "LAKELET_AWS_ENDPOINT_URL"  # set only locally: the moto server
ENV_TABLE_PREFIX = "LAKELET_TABLE_PREFIX"
ENV_BUCKET = "LAKELET_BUCKET"
ENV_PRESIGN_EXPIRY = "LAKELET_PRESIGN_EXPIRY_SECONDS"
ENV_RANGE_MAX_BYTES = "LAKELET_RANGE_MAX_BYTES"
ENV_RANGE_MIN_BYTES = "LAKELET_RANGE_MIN_BYTES"
ENV_RANGE_RAGGEDNESS = "LAKELET_RANGE_RAGGEDNESS"
ENV_PRE_SIGN_SUPPORT = "LAKELET_PRE_SIGN_SUPPORT"


def _flag(value: str) -> bool:
    return value.strip().lower() in {"1", "true", "yes", "on"}


@dataclass(frozen=True, slots=True)
class Settings:
    region: str = "us-east-1"
    endpoint_url: str | None = None
    table_prefix: str = "lakelet-"
    # The bucket repositories are created in by default (reported as default_namespace_prefix by /config).
    bucket: str = "lakelet-data"
    presign_expiry_seconds: int = 900
    # Range boundaries are content-defined (fnv64a(key) % raggedness == 0) within [min, max] bytes.
    # Sized for a Lambda: a range decodes in well under a second and fits easily in 1 GB of memory.
    range_max_bytes: int = 8 * 1024 * 1024
    range_min_bytes: int = 64 * 1024
    range_raggedness: int = 10_000
    pre_sign_support: bool = False

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if environ is None else environ
        defaults = cls()
        return cls(
            region=env.get(ENV_REGION) or env.get(ENV_DEFAULT_REGION) or defaults.region,
            endpoint_url=env.get(ENV_ENDPOINT_URL) or None,
            table_prefix=env.get(ENV_TABLE_PREFIX, defaults.table_prefix),
            bucket=env.get(ENV_BUCKET, defaults.bucket),
            presign_expiry_seconds=int(env.get(ENV_PRESIGN_EXPIRY, defaults.presign_expiry_seconds)),
            range_max_bytes=int(env.get(ENV_RANGE_MAX_BYTES, defaults.range_max_bytes)),
            range_min_bytes=int(env.get(ENV_RANGE_MIN_BYTES, defaults.range_min_bytes)),
            range_raggedness=int(env.get(ENV_RANGE_RAGGEDNESS, defaults.range_raggedness)),
            pre_sign_support=_flag(env.get(ENV_PRE_SIGN_SUPPORT, "false")),
        )
